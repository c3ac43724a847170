"""`health`, `reinforce` and `expire`: how much to trust each memory, and keeping it so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memory_enhancement.cli.app import (
    CONTEXT,
    app,
    emit_json,
    exit_if_skipped,
    fail,
    json_option,
    plural,
    store_options,
    terminal_notice,
    warn,
)
from memory_enhancement.core.errors import os_error_text
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.store.atomic import write_output


@click.command(context_settings=CONTEXT)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json", "html"]),
    default="markdown",
    show_default=True,
    help="markdown reads well as a pull-request comment; html is a one-file dashboard.",
)
@click.option("--output", "-o", metavar="FILE", help="Write the report to FILE.")
@click.option("--limit", "-n", type=int, help="Show at most N memories (the summary covers all).")
@click.option(
    "--mentions/--no-mentions",
    default=True,
    show_default=True,
    help="Count the code the prose names (`path:line`, files, folders) as citations, "
    "from git history.",
)
@click.option("--json", "as_json_flag", is_flag=True, help="Print JSON (same as --format json).")
@store_options
def health(
    fmt: str, output: str | None, limit: int | None, mentions: bool, as_json_flag: bool
) -> None:
    """Verify every memory and rank them by urgency: stale and doubtful first.

    A report, not a gate: it exits 0 (use `verify-all` to fail a build), or 1 when a
    memory file could not be read in full (each one is named; one whose frontmatter alone
    does not parse is in the report, its text read as plain markdown).
    """
    import json

    from memory_enhancement.health.render import as_json, as_markdown

    if as_json_flag:
        if fmt not in ("markdown", "json"):
            fail(f"give either --json or --format {fmt}, not both")
        fmt = "json"
    if limit is not None and limit < 1:
        fail(f"invalid --limit {limit}: it must be at least 1")
    report = app().service().health(mentions=mentions, notice=terminal_notice())
    warn(report.skipped)
    if fmt == "json":
        data = as_json(report, limit)
        # Indenting forces Python's slow JSON encoder; a big report is written compact.
        indent = 2 if len(data["memories"]) <= 200 else None
        text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    elif fmt == "html":
        from memory_enhancement.health.html import render

        text = render(report, limit)
    else:
        text = as_markdown(report, limit or 20)
    if output:
        target = app().cwd / Path(output)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            # Whole or not at all: a full disk or a kill midway leaves the last report.
            write_output(target, text.encode("utf-8"))
        except OSError as exc:
            fail(f"cannot write --output {output!r}: {os_error_text(exc)}")
        click.echo(f"wrote {target} ({plural(report.total, 'memory', 'memories')})", err=True)
    else:
        click.echo(text, nl=False)
    exit_if_skipped(report.skipped)


@click.command(context_settings=CONTEXT)
@click.argument("memory")
@click.option("--note", help="What you checked, for the record.")
@json_option
@store_options
def reinforce(memory: str, note: str | None, as_json: bool) -> None:
    """Record that you checked MEMORY (a path, a citation ID or a unique name) against the
    code and it held (raises its confidence)."""
    service = app().service()
    path = service.find(memory)
    citation_id, count = service.reinforce(path, note)
    if as_json:
        emit_json({"path": path, "id": f"mem:{citation_id}", "reinforcements": count})
    else:
        click.echo(
            f"reinforced {path}  [mem:{citation_id}] ({count} confirmation{'s' * (count != 1)})"
        )


@click.command(context_settings=CONTEXT)
@click.option("--after-days", type=float, help="Override the store's expiry.after_days.")
@click.option("--grace-days", type=float, help="Override the store's expiry.grace_days.")
@click.option("--dry-run", is_flag=True, help="Only list what would get an expiry.")
@json_option
@store_options
def expire(
    after_days: float | None, grace_days: float | None, dry_run: bool, as_json: bool
) -> None:
    """Apply the store's expiry policy: memories neither verified, confirmed nor used for
    `after_days` get an expiry `grace_days` away, so they fade unless someone renews them.

    Configure it in the store's .memory-enhancement.yaml:
    `expiry: {after_days: 90, grace_days: 14}`.
    """
    service = app().service()
    policy: Any = service.store.config().get("expiry") or {}
    if not isinstance(policy, dict):
        fail(
            "the store's expiry setting must be a mapping: expiry: {after_days: 90, grace_days: 14}"
        )
    after = after_days if after_days is not None else policy.get("after_days")
    grace = grace_days if grace_days is not None else policy.get("grace_days", 14)
    if after is None:
        fail(
            "no expiry policy: set expiry.after_days in the store's .memory-enhancement.yaml "
            "or pass --after-days"
        )
    try:
        after, grace = float(after), float(grace)
    except (TypeError, ValueError):
        fail(f"invalid expiry policy: after_days={after!r}, grace_days={grace!r}")
    chosen = service.apply_expiry_policy(after_days=after, grace_days=grace, dry_run=dry_run)
    if as_json:
        emit_json(
            {
                "dry_run": dry_run,
                "expiring": [{"path": p, "expires_at": format_timestamp(e)} for p, e in chosen],
            }
        )
        return
    verb = "would expire" if dry_run else "expires"
    for path, moment in chosen:
        click.echo(f"{verb} {path} at {moment:%Y-%m-%d}")
    click.echo(f"{plural(len(chosen), 'memory', 'memories')} inactive for more than {after:g} days")


COMMANDS = [health, reinforce, expire]
