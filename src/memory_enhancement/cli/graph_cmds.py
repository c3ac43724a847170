"""`graph`, `related`, `roots`, `orphans` and `links`: the link graph between memories."""

from __future__ import annotations

from typing import Any

import click

from memory_enhancement.cli.app import (
    CONTEXT,
    EXIT_PROBLEMS,
    app,
    emit_json,
    fail,
    json_option,
    plural,
    store_options,
    warn,
)


@click.command(context_settings=CONTEXT)
@click.argument("root")
@click.option("--depth", "-d", default=3, show_default=True, help="How many links away to go.")
@click.option(
    "--direction",
    type=click.Choice(["out", "in", "both"]),
    default="out",
    show_default=True,
    help="Follow links out of memories, into them, or both.",
)
@click.option(
    "--algorithm",
    type=click.Choice(["bfs", "dfs"]),
    default="bfs",
    show_default=True,
    help="The order memories are listed in (the same memories at the same depths either way).",
)
@click.option("--type", "types", multiple=True, help="Only links of this type (repeatable).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "mermaid", "dot"]),
    default="text",
    show_default=True,
    help="mermaid: a block GitHub renders; dot: Graphviz.",
)
@json_option
@store_options
def graph(
    root: str,
    depth: int,
    direction: str,
    algorithm: str,
    types: tuple[str, ...],
    fmt: str,
    as_json: bool,
) -> None:
    """Traverse the link graph from ROOT (a path, a citation ID or a unique name).

    \b
    Examples:
      memory-enhancement graph decisions/api-version --depth 2 --direction both
      memory-enhancement graph mem:a7Bc3x --type depends_on --format mermaid
    """
    from memory_enhancement.graph.render import as_dict, as_dot, as_mermaid, as_text

    if depth < 0:
        fail(f"invalid --depth {depth}: it must be 0 or more")
    if as_json and fmt in ("mermaid", "dot"):
        fail(f"give either --json or --format {fmt}, not both")
    result = (
        app()
        .service()
        .graph(root, depth=depth, direction=direction, algorithm=algorithm, types=types)
    )
    fmt = "json" if as_json else fmt
    if fmt == "json":
        emit_json(as_dict(result))
    else:
        render = {"text": as_text, "mermaid": as_mermaid, "dot": as_dot}[fmt]
        click.echo(render(result), nl=False)


@click.command(context_settings=CONTEXT)
@click.argument("memory")
@json_option
@store_options
def related(memory: str, as_json: bool) -> None:
    """Memories that link to MEMORY (its backlinks), each once however often it links."""
    from memory_enhancement.service.serialize import related_dict

    service = app().service()
    target = service.find(memory)
    data = related_dict(target, service.related(target))
    if as_json:
        emit_json(data)
        return
    click.echo(f"Memories linking to '{target}': {len(data['related'])}")
    for entry in data["related"]:
        kinds = sorted({link["type"] for link in entry["links"] if link["type"] != "link"})
        kind = f" ({', '.join(kinds)})" if kinds else ""
        # Each line once: two links on one line (`[[x]]` and `[x](x.md)`) were `[lines 7, 7]`.
        numbers = list(dict.fromkeys(link["line"] for link in entry["links"]))
        lines = ", ".join(str(number) for number in numbers)
        plural_s = "s" * (len(numbers) > 1)
        click.echo(f"  - {entry['path']}{kind}  [line{plural_s} {lines}]")


def _print_paths(paths: list[str], as_json: bool, one: str, many: str, why: str) -> None:
    if as_json:
        emit_json(paths)
        return
    for path in paths:
        click.echo(path)
    click.echo(f"{plural(len(paths), one, many)} {why}")


@click.command(context_settings=CONTEXT)
@json_option
@store_options
def roots(as_json: bool) -> None:
    """Memories that no other memory links to."""
    _print_paths(app().service().roots(), as_json, "root", "roots", "(no incoming links)")


@click.command(context_settings=CONTEXT)
@json_option
@store_options
def orphans(as_json: bool) -> None:
    """Memories with no links to or from other memories."""
    _print_paths(app().service().orphans(), as_json, "orphan", "orphans", "(no links either way)")


@click.command(context_settings=CONTEXT)
@click.option("--dangling", is_flag=True, help="List dangling and ambiguous links (the default).")
@click.option(
    "--fix", is_flag=True, help="Rewrite the target of each link that has one likely fix."
)
@click.option("--dry-run", is_flag=True, help="With --fix: print the diff instead of writing.")
@json_option
@store_options
def links(dangling: bool, fix: bool, dry_run: bool, as_json: bool) -> None:
    """Broken links: dangling or ambiguous, with the memory file, line and offered fix.

    Links to files of the repository (README.md, docs/guide.md) are not memory
    links: they are listed only when the file is missing ("missing").

    Exits 1 when broken links remain (after --fix, the ones it could not fix).
    """
    del dangling  # the only report there is, accepted for clarity
    if dry_run and not fix:
        raise click.UsageError("--dry-run only applies with --fix")
    service = app().service()
    skipped: list[str] = []
    if fix:
        broken, fixes, skipped = service.fix_links(dry_run=dry_run)
    else:
        broken, fixes = service.broken_links(), []
    warn(skipped)
    # After a written fix, ask again: counting every link that had a replacement as
    # fixed exited 0 while a link the rewrite could not apply was still broken.
    written = any(f.written for f in fixes)
    remaining = service.broken_links() if written else broken
    if as_json:
        emit_json(
            {
                "broken": [_broken_dict(b) for b in broken],
                "fixes": [{"path": f.path, "diff": f.diff, "written": f.written} for f in fixes],
                "skipped": skipped,
                "remaining": len(remaining),
            }
        )
    else:
        for item in broken:
            click.echo(_broken_line(item))
        for change in fixes:
            if change.written:
                click.echo(f"fixed {change.path}")
            else:
                click.echo(change.diff, nl=False)
        offered = sum(1 for b in broken if b.replacement)
        missing = sum(b.status == "missing" for b in broken)
        files = f", {missing} to missing repository files or folders" if missing else ""
        click.echo(
            f"{plural(len(broken), 'broken link')} "
            f"({sum(b.status == 'dangling' for b in broken)} dangling, "
            f"{sum(b.status == 'ambiguous' for b in broken)} ambiguous{files}), "
            f"{offered} with a fix"
            # after a written fix, what is left (the count above is what was found)
            + (f"; {plural(len(remaining), 'broken link')} left" if written else "")
        )
    if remaining:
        raise SystemExit(EXIT_PROBLEMS)


def _broken_dict(item: Any) -> dict[str, Any]:
    return {
        "memory": item.source,
        "file": item.file,
        "line": item.line,
        "target": item.target,
        "kind": item.kind,
        "type": item.type,
        "status": item.status,
        "candidates": list(item.candidates),
        "suggestion": item.suggestion,
        "replacement": item.replacement,
    }


def _broken_line(item: Any) -> str:
    where = f"{item.file}:{item.line}" if item.line else item.file
    text = f"{item.status:<9} {where}  -> {item.target}"
    if item.candidates:
        text += f"  (candidates: {', '.join(item.candidates[:4])})"
    if item.replacement:
        text += f"  fix: {item.replacement}"
    return text


COMMANDS = [graph, related, roots, orphans, links]
