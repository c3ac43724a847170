"""`verify` and `verify-all`: are these memories' citations still true?

Exit codes: 0 when every memory is valid, 1 when any is not (with --strict,
moved citations fail too), 2 on usage errors.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from memory_enhancement.cli.app import (
    CONTEXT,
    EXIT_PROBLEMS,
    app,
    emit_json,
    plural,
    store_options,
    warn,
)

F = TypeVar("F", bound=Callable[..., Any])

_MARK = {
    "valid": "ok",
    "moved": "moved",
    "stale": "STALE",
    "missing": "MISSING",
    "out_of_range": "OUT OF RANGE",
    "skipped": "skipped",
    "invalid": "INVALID",
}


def verify_options(func: F) -> F:
    options = [
        click.option("--json", "as_json", is_flag=True, help="Print JSON (same as --format json)."),
        click.option(
            "--fix",
            is_flag=True,
            help="Rewrite moved citations in place; capture missing snippets.",
        ),
        click.option(
            "--dry-run", is_flag=True, help="With --fix: print the diff instead of writing."
        ),
        click.option("--strict", is_flag=True, help="Moved citations fail too."),
        click.option(
            "--include-mentions", is_flag=True, help="Also check path:line mentions in the prose."
        ),
        click.option(
            "--write",
            is_flag=True,
            help="Record confidence and Last Verified in each memory file (travels with git).",
        ),
        click.option(
            "--check-urls", is_flag=True, help="Fetch URL citations (HEAD/GET, short timeout)."
        ),
        click.option(
            "--url-timeout", type=float, default=5.0, show_default=True, help="Seconds per URL."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _options(
    fix: bool, dry_run: bool, mentions: bool, write: bool, urls: bool, timeout: float
) -> Any:
    from memory_enhancement.core.verdicts import VerifyOptions

    if dry_run and not (fix or write):
        raise click.UsageError("--dry-run only applies with --fix or --write")
    return VerifyOptions(fix, dry_run, mentions, urls, timeout, write)


@click.command(context_settings=CONTEXT)
@click.argument("memory")
@verify_options
@store_options
def verify(
    memory: str,
    as_json: bool,
    fix: bool,
    dry_run: bool,
    strict: bool,
    include_mentions: bool,
    write: bool,
    check_urls: bool,
    url_timeout: float,
) -> None:
    """Verify the citations of one MEMORY against the code, just in time."""
    options = _options(fix, dry_run, include_mentions, write, check_urls, url_timeout)
    run = app().service().verify(memory, options)
    result = run.results[0]
    if as_json:
        emit_json(_with_fixes(run)[0])
    else:
        print_result(result, verbose=True)
    _print_fixes(run, quiet=as_json)
    if not run.ok(strict=strict):
        raise SystemExit(EXIT_PROBLEMS)


@click.command("verify-all", context_settings=CONTEXT)
@click.argument("category", required=False)
@click.option(
    "--changed-since", metavar="REF", help="Only memories citing files changed since the git REF."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="github: GitHub Actions annotations on the memory files.",
)
@verify_options
@store_options
def verify_all(
    category: str | None,
    changed_since: str | None,
    fmt: str,
    as_json: bool,
    fix: bool,
    dry_run: bool,
    strict: bool,
    include_mentions: bool,
    write: bool,
    check_urls: bool,
    url_timeout: float,
) -> None:
    """Verify every memory that has citations (optionally under CATEGORY)."""
    options = _options(fix, dry_run, include_mentions, write, check_urls, url_timeout)
    run = app().service().verify_all(category, changed_since=changed_since, options=options)
    warn(run.skipped)
    fmt = "json" if as_json else fmt
    if fmt == "json":
        _emit_results(run)
    elif fmt == "github":
        _print_github(run, strict)
    else:
        for result in run.results:
            if _worth_showing(result):
                print_result(result, verbose=False)
    _print_fixes(run, quiet=fmt == "json")
    if fmt != "json":
        click.echo(_summary(run))
    if not run.ok(strict=strict):
        raise SystemExit(EXIT_PROBLEMS)


def _worth_showing(result: Any) -> bool:
    """verify-all text lists only memories with something to look at."""
    moved = any(c.status.value == "moved" for c in result.checks)
    return not result.valid or moved or any(m.status.failing for m in result.mentions)


def print_result(result: Any, *, verbose: bool) -> None:
    confidence = "-" if result.confidence is None else f"{result.confidence:.0%}"
    state = "valid" if result.valid else "INVALID"
    click.echo(f"{state:<8} {result.path}  (confidence {confidence})")
    for check in result.checks:
        if verbose or check.status.value != "valid":
            click.echo(_check_line(check))
    for check in result.mentions:
        if verbose or check.status.failing:
            click.echo(_check_line(check, prefix="mention "))


def _check_line(check: Any, prefix: str = "") -> str:
    ref = check.citation.ref
    if check.status.value == "moved" and check.current_path:
        where = check.current_path
        if check.current_line:
            where += f":{check.current_line}"
        ref = f"{ref} -> {where}"
    reason = f"  {check.reason}" if check.reason else ""
    unanchored = "" if check.anchored else "  (no snippet)"
    return f"  {prefix}{_MARK[check.status.value]:<12} {ref}{reason}{unanchored}"


def _print_github(run: Any, strict: bool) -> None:
    """GitHub Actions annotations, each on the line of the memory file holding the citation."""
    for result in run.results:
        for n, check in enumerate(result.checks):
            status = check.status.value
            if not (check.status.failing or (strict and status == "moved")):
                continue
            line = result.lines[n] if n < len(result.lines) and result.lines[n] else 1
            message = f"{status} citation {check.citation.ref}: {check.reason}"
            title = f"memory {result.path}"
            click.echo(
                f"::warning file={_escape(result.file, True)},line={line},"
                f"title={_escape(title, True)}::{_escape(message)}"
            )


def _escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _with_fixes(run: Any) -> list[dict[str, Any]]:
    """The JSON of each result; a fixed memory carries its fix (the diff, and whether it
    was written)."""
    from memory_enhancement.service.serialize import verification_dict

    fixes = {fix.path: fix for fix in run.fixes}
    out = []
    for result in run.results:
        data = verification_dict(result)
        fix = fixes.get(result.path)
        if fix is not None:
            data["fix"] = {"diff": fix.diff, "written": fix.written}
        out.append(data)
    return out


def _emit_results(run: Any) -> None:
    """verify-all's JSON list, one memory per line; a fixed memory carries its fix."""
    from memory_enhancement.service.serialize import verification_json

    if len(run.results) <= 50 or run.fixes:
        emit_json(_with_fixes(run))
        return
    # Streamed a thousand memories at a time: the whole text at 50,000 memories is tens
    # of megabytes, held twice while joined.
    results, write = run.results, sys.stdout.write
    write("[\n")
    for start in range(0, len(results), 1000):
        chunk = ",\n".join(map(verification_json, results[start : start + 1000]))
        write(chunk if start == 0 else ",\n" + chunk)
    write("\n]\n")
    sys.stdout.flush()


def _print_fixes(run: Any, *, quiet: bool) -> None:
    if quiet:
        return
    for fix in run.fixes:
        if not fix.written:
            click.echo(fix.diff, nl=False)
        else:
            click.echo(f"fixed {fix.path}")


def _summary(run: Any) -> str:
    from memory_enhancement.core.verdicts import Verdict

    parts = [f"{run.count(v)} {v.value.replace('_', ' ')}" for v in Verdict]
    shown = [p for p, v in zip(parts, Verdict, strict=True) if run.count(v) or v.value in _ALWAYS]
    head = (
        f"{plural(len(run.results), 'memory', 'memories')}, {plural(run.citations, 'citation')}: "
    )
    tail = f", {plural(len(run.skipped), 'unreadable memory file')}" if run.skipped else ""
    return head + ", ".join(shown) + tail


_ALWAYS = ("valid", "moved", "stale", "missing")

COMMANDS = [verify, verify_all]
