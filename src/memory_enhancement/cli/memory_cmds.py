"""Commands that create, read, change and remove memories."""

from __future__ import annotations

import sys
from typing import Any

import click

from memory_enhancement.cli.app import (
    CONTEXT,
    Group,
    app,
    emit_json,
    exit_if_skipped,
    fail,
    json_option,
    store_options,
    warn,
)
from memory_enhancement.cli.render import print_listing, print_memory


def _read_content(
    content: str | None, file: str | None, *, required: bool
) -> tuple[str | None, str]:
    """Content from --content, --file (or `-`), or piped standard input; and its source."""
    if content is not None and file is not None:
        fail("give either --content or --file, not both")
    if content is not None:
        return content, "cli"
    if file is not None:
        if file == "-":
            return sys.stdin.read(), "stdin"
        try:
            with open(file, encoding="utf-8") as handle:
                return handle.read(), "file"
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"cannot read --file {file!r}: {exc}")
    if required:
        if sys.stdin.isatty():
            fail("no content: give --content TEXT, --file PATH, or pipe it on standard input")
        return sys.stdin.read(), "stdin"
    return None, "cli"


def _write_result(result: Any, as_json: bool, verb: str) -> None:
    from memory_enhancement.service.serialize import memory_dict

    warn(result.warnings)
    if as_json:
        data = memory_dict(result.memory, result.citation_id, result.linked)
        data["changed"] = result.changed
        if result.links_updated:
            data["links_updated"] = list(result.links_updated)
        emit_json(data)
    elif result.changed:
        click.echo(f"{verb} {result.path}  [mem:{result.citation_id}]")
        for path in result.links_updated:
            click.echo(f"  updated links in {path}")
    else:
        click.echo(f"unchanged {result.path}")


@click.command(context_settings=CONTEXT)
@click.argument("path")
@click.option("--content", "-c", help="Content of the memory (markdown).")
@click.option(
    "--file", "-f", "file", metavar="FILE", help="Read the content from FILE ('-' = stdin)."
)
@click.option("--tag", "-t", "tags", multiple=True, help="A tag (repeatable).")
@click.option(
    "--citation",
    "citations",
    multiple=True,
    metavar="REF",
    help="src/x.py:42, a range or a URL (repeatable).",
)
@click.option(
    "--link",
    "links",
    multiple=True,
    metavar="TARGET",
    help="Another memory, or TYPE:TARGET (repeatable).",
)
@click.option(
    "--expires-at", metavar="WHEN", help="ISO 8601 date or time after which the memory is hidden."
)
@click.option(
    "--description",
    "-d",
    metavar="TEXT",
    help="Claude Code memory folder: its one-line description (default: the content's first line).",
)
@click.option(
    "--type",
    "memory_type",
    type=click.Choice(["user", "feedback", "project", "reference"], case_sensitive=False),
    help="Claude Code memory folder: its type (default: the one the name starts with, "
    "feedback_x, else project).",
)
@json_option
@store_options
def add(
    path: str,
    content: str | None,
    file: str | None,
    tags: tuple[str, ...],
    citations: tuple[str, ...],
    links: tuple[str, ...],
    expires_at: str | None,
    description: str | None,
    memory_type: str | None,
    as_json: bool,
) -> None:
    """Create the memory PATH (category/slug; a bare name in a flat store: Serena's, Claude
    Code's). Refuses an existing path.

    The content comes from --content, --file, or standard input when neither is given. Each
    file citation's snippet (the text of the cited lines) is captured from the code now.

    In a Claude Code memory folder (its MEMORY.md lists memories that declare name,
    description and type) the memory declares its name, --description and --type as the
    folder's own do, and gets its line in MEMORY.md, where Claude Code looks.

    \b
    Examples:
      memory-enhancement add decisions/api-version -c "# API version" --citation app/config.py:3
      memory-enhancement add pitfalls/retries -f notes.md --tag http --link decisions/api-version
      git log -1 --format=%B | memory-enhancement add notes/last-commit
      memory-enhancement --dir .claude/memory add feedback_tabs -c "Indent with tabs." -d "Tabs"
    """
    text, source = _read_content(content, file, required=True)
    assert text is not None
    result = app().service(create=True).add(
        path, text, tags=tags, expires_at=expires_at, citations=citations, links=links,
        source=source, description=description, memory_type=memory_type,
    )  # fmt: skip
    _write_result(result, as_json, "added")


@click.command(context_settings=CONTEXT)
@click.argument("path")
@click.option("--include-expired", is_flag=True, help="Return the memory even if it has expired.")
@click.option(
    "--verify", "check", is_flag=True, help="Verify its citations now; show the verdicts."
)
@json_option
@store_options
def get(path: str, include_expired: bool, check: bool, as_json: bool) -> None:
    """Show a memory: content, metadata, citations and links.

    PATH may also be its citation ID (mem:a7Bc3x, or a7Bc3x when no memory is named so)
    or a name only one memory has. Each link says what it finds now, as `links` words it.
    """
    from memory_enhancement.service.serialize import memory_dict, verification_dict

    service = app().service()
    fetched = service.get(service.find(path), include_expired=include_expired)
    warn(fetched.warnings)
    result = service.verify(fetched.memory.path).results[0] if check else None
    if as_json:
        data = memory_dict(fetched.memory, fetched.citation_id, fetched.linked)
        if result is not None:
            data["verification"] = verification_dict(result)
        emit_json(data)
        return
    print_memory(fetched.memory, fetched.citation_id, fetched.linked)
    if result is not None:
        from memory_enhancement.cli.verify_render import print_result

        click.echo("")
        print_result(result, verbose=True, fix_with="verify --fix")


@click.command(context_settings=CONTEXT)
@click.argument("path")
@click.option("--content", "-c", help="New content (replaces the old).")
@click.option(
    "--file", "-f", "file", metavar="FILE", help="Read the new content from FILE ('-' = stdin)."
)
@click.option("--tag", "-t", "tags", multiple=True, help="Tags (replace the old ones; repeatable).")
@click.option("--clear-tags", is_flag=True, help="Remove all tags.")
@click.option(
    "--citation",
    "citations",
    multiple=True,
    metavar="REF",
    help="Citations (replace the old ones; repeatable). To drop or replace one: `citation`.",
)
@click.option("--clear-citations", is_flag=True, help="Remove all citations.")
@click.option(
    "--link",
    "links",
    multiple=True,
    metavar="TARGET",
    help="Add a link to another memory, or TYPE:TARGET (repeatable; existing links stay).",
)
@click.option("--expires-at", metavar="WHEN", help="Set the expiry (ISO 8601).")
@click.option("--no-expires-at", "clear_expiry", is_flag=True, help="Remove the expiry.")
@json_option
@store_options
def update(
    path: str,
    content: str | None,
    file: str | None,
    tags: tuple[str, ...],
    clear_tags: bool,
    citations: tuple[str, ...],
    clear_citations: bool,
    links: tuple[str, ...],
    expires_at: str | None,
    clear_expiry: bool,
    as_json: bool,
) -> None:
    """Change a memory. What is given replaces (links are added); what is omitted is kept.

    --clear-citations with --citation replaces the citations, as --citation alone does.
    PATH may also be its citation ID or a name only one memory has (or declares), as for `get`.
    """
    if tags and clear_tags:
        fail("give either --tag or --clear-tags, not both")
    text, _ = _read_content(content, file, required=False)
    new_citations = list(citations) if citations else ([] if clear_citations else None)
    new_tags = [] if clear_tags else (list(tags) if tags else None)
    result = (
        app()
        .service()
        .update(
            path,
            content=text,
            tags=new_tags,
            expires_at=expires_at,
            clear_expiry=clear_expiry,
            citations=new_citations,
            links=links,
        )
    )
    _write_result(result, as_json, "updated")


@click.command(context_settings=CONTEXT)
@click.argument("path")
@json_option
@store_options
def remove(path: str, as_json: bool) -> None:
    """Delete the memory PATH or citation ID (in a Claude Code memory folder, its line in
    MEMORY.md too). The memories whose links to it then find no memory are named."""
    removed = app().service().remove(path)
    updated = {"links_updated": [*removed.links_updated]} if removed.links_updated else {}
    if as_json:
        emit_json({"path": removed.path, "removed": True, **updated,
                   "linked_from": [*removed.linked_from]})  # fmt: skip
        return
    click.echo(f"removed {removed.path}")
    for source in removed.links_updated:
        click.echo(f"  updated links in {source}")
    if sources := ", ".join(removed.linked_from):
        click.echo(f"  linked to from {sources}: those links now find nothing")


@click.command(context_settings=CONTEXT)
@click.argument("source")
@click.argument("destination")
@click.option(
    "--no-update-links",
    "keep_links",
    is_flag=True,
    help="Do not rewrite links to it in other memories (nor its own relative links).",
)
@json_option
@store_options
def move(source: str, destination: str, keep_links: bool, as_json: bool) -> None:
    """Move a memory to a new path; citations, links and its citation ID go with it.

    Links that would stop finding it (in the memories linking to it, and its own
    relative links) have their target rewritten, nothing else in those files. SOURCE may
    also be its citation ID or a name only one memory has (or declares), as for `get`.
    """
    result = app().service().move(source, destination, update_links=not keep_links)
    warn(result.warnings)
    if as_json:
        emit_json(
            {
                "from": result.moved_from or source,
                "path": result.path,
                "changed": result.changed,
                "links_updated": list(result.links_updated),
            }
        )
    elif result.changed:
        click.echo(f"moved {result.moved_from or source} -> {result.path}")
        for path in result.links_updated:
            click.echo(f"  updated links in {path}")
    else:
        click.echo(f"unchanged {result.path} (same path)")


@click.command("list", context_settings=CONTEXT)
@click.argument("category", required=False)
@click.option("--include-expired", is_flag=True, help="Also list expired memories.")
@click.option(
    "--limit", "-n", type=click.IntRange(min=1), help="At most this many (the first by path)."
)
@click.option("--tag", help="Only memories with this tag (`tags:`, or `keywords:`, `topics:`).")
@json_option
@store_options
def list_cmd(category: str | None, include_expired: bool, limit: int | None, **opts: Any) -> None:
    """List memories, all or under CATEGORY (recursively)."""
    listing = app().service().list_memories(category, include_expired=include_expired,
                                            limit=limit, tag=opts["tag"])  # fmt: skip
    print_listing(listing, opts["as_json"])


@click.command(context_settings=CONTEXT)
@click.option("--limit", "-n", default=10, show_default=True, help="How many to show.")
@click.option("--include-expired", is_flag=True, help="Also consider expired memories.")
@json_option
@store_options
def recent(limit: int, include_expired: bool, as_json: bool) -> None:
    """The most recently updated memories, newest first (undated ones: by their last commit)."""
    listing = app().service().recent(limit, include_expired=include_expired)
    print_listing(listing, as_json)


@click.command(context_settings=CONTEXT)
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@json_option
@store_options
def prune(dry_run: bool, as_json: bool) -> None:
    """Remove expired memories."""
    listing = app().service().prune(dry_run=dry_run)
    warn(listing.skipped)
    paths = [s.path for s in listing.memories]
    if as_json:
        emit_json({"removed": [] if dry_run else paths, "would_remove": paths if dry_run else []})
        exit_if_skipped(listing.skipped)
        return
    verb = "would remove" if dry_run else "removed"
    for path in paths:
        click.echo(f"{verb} {path}")
    done = "would be removed" if dry_run else "removed"
    click.echo(f"{len(paths)} expired memor{'y' if len(paths) == 1 else 'ies'} {done}")
    exit_if_skipped(listing.skipped)


@click.group(cls=Group, context_settings=CONTEXT)
def citation() -> None:
    """Work with the citations of a memory."""


@citation.command("add", context_settings=CONTEXT)
@click.argument("path")
@click.argument("ref")
@click.option("--snippet", help="Text of the cited line(s); captured from the code when omitted.")
@json_option
@store_options
def citation_add(path: str, ref: str, snippet: str | None, as_json: bool) -> None:
    """Add the citation REF (src/x.py:42, src/x.py:17-25, a URL) to memory PATH."""
    result = app().service().add_citation(path, ref, snippet=snippet)
    _write_result(result, as_json, "cited in")


@citation.command("remove", context_settings=CONTEXT)
@click.argument("path")
@click.argument("ref")
@json_option
@store_options
def citation_remove(path: str, ref: str, as_json: bool) -> None:
    """Drop the citation REF (as `get` lists it) from memory PATH; the others stay."""
    result = app().service().remove_citation(path, ref)
    _write_result(result, as_json, f"dropped {ref} from")


@citation.command("replace", context_settings=CONTEXT)
@click.argument("path")
@click.argument("old")
@click.argument("new")
@click.option(
    "--snippet", help="Text of the new cited line(s); captured from the code when omitted."
)
@json_option
@store_options
def citation_replace(path: str, old: str, new: str, snippet: str | None, as_json: bool) -> None:
    """Replace the citation OLD of memory PATH by NEW, in its place; the others stay."""
    result = app().service().replace_citation(path, old, new, snippet=snippet)
    _write_result(result, as_json, f"replaced {old} by {new} in")


COMMANDS = [add, get, update, remove, move, list_cmd, recent, prune, citation]
