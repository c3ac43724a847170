"""Plain-text rendering of results for people (JSON lives in serialize.py)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

import click

from memory_enhancement.cli.app import emit_json, exit_if_skipped, warn
from memory_enhancement.cli.fast import link_lines
from memory_enhancement.core.links import Resolution
from memory_enhancement.core.model import Link, Memory
from memory_enhancement.core.timestamps import format_timestamp


def print_memory(
    memory: Memory, citation_id: str = "", linked: Sequence[tuple[Link, Resolution]] = ()
) -> None:
    """What `get` prints (cli/fast.py's render_memory prints the same from index rows): with
    `linked`, every link and what it finds now."""
    meta = memory.meta
    if not memory.content.lstrip().startswith("# "):  # else the body shows its title itself
        click.secho(f"# {memory.title}", bold=True)
    rows = [
        ("id", f"[mem:{citation_id}]" if citation_id else "-"),
        ("path", memory.path),
        ("format", memory.format),
        ("created", format_timestamp(meta.created_at) if meta.created_at else "-"),
        ("updated", format_timestamp(meta.updated_at) if meta.updated_at else "-"),
        ("tags", ", ".join(meta.every_tag) or "-"),  # as the index files it (cli/fast.py)
        ("source", meta.source or "-"),
        ("expires", format_timestamp(meta.expires_at) if meta.expires_at else "-"),
    ]
    for label, value in rows:
        click.echo(f"{label + ':':<10}{value}")
    if meta.citations:
        click.echo(f"citations ({len(meta.citations)}):")
        for citation in meta.citations:
            snippet = f"  `{citation.snippet.splitlines()[0]}`" if citation.snippet else ""
            click.echo(f"  {citation.ref}{snippet}")
    found_now = [
        (link.target, link.type, link.line, found.status.value, found.target,
         "\x1f".join(found.candidates))
        for link, found in linked
    ]  # fmt: skip
    if found_now:
        click.echo("\n".join(link_lines(found_now)))
    elif memory.links:
        click.echo(f"links ({len(memory.links)}):")
        for link in memory.links:
            kind = "" if link.type == "link" else f" ({link.type})"
            click.echo(f"  {link.target}{kind}  [line {link.line}]")
    click.echo("")
    click.echo(memory.content)


def display_width(text: str) -> int:
    """The columns text takes on a terminal: two for each wide (CJK) character, so the
    titles of `代码规范` and `project_overview` start in the same column."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def print_listing(listing: Any, as_json: bool) -> None:
    from memory_enhancement.service.serialize import summary_dict

    warn(listing.skipped)
    if as_json:
        emit_json([summary_dict(s) for s in listing.memories])
    elif not listing.memories:
        click.echo("no memories")
    else:
        width = min(max(display_width(s.path) for s in listing.memories), 60)
        for summary in listing.memories:
            tags = "  " + " ".join(f"#{t}" for t in summary.meta.tags) if summary.meta.tags else ""
            expired = "  (expired)" if summary.expired else ""
            cid = f"[mem:{summary.citation_id}]  " if summary.citation_id else ""
            pad = " " * max(width - display_width(summary.path), 0)
            click.echo(f"{cid}{summary.path}{pad}  {summary.title}{tags}{expired}")
    exit_if_skipped(listing.skipped)
