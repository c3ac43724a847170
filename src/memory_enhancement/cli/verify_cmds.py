"""`verify` and `verify-all`: are these memories' citations still true?

Exit codes: 0 when every memory is valid, 1 when any is not (with --strict,
moved citations fail too), 2 on usage errors.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from typing import Any, AnyStr, TypeVar

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
    "ambiguous": "AMBIGUOUS",
    "in_submodule": "in submodule",
    "unchecked": "unchecked",
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
            "--mentions/--no-mentions",
            "include_mentions",
            default=True,
            show_default=True,
            help="Also verify `path:line` mentions in the prose, from git history.",
        ),
        click.option("--include-mentions", "legacy_mentions", is_flag=True, hidden=True),
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
    fix: bool,
    dry_run: bool,
    mentions: bool,
    write: bool,
    urls: bool,
    timeout: float,
    recheck: bool = False,
) -> Any:
    from memory_enhancement.core.verdicts import VerifyOptions

    if dry_run and not (fix or write):
        raise click.UsageError("--dry-run only applies with --fix or --write")
    return VerifyOptions(fix, dry_run, mentions, urls, timeout, write, recheck)


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
    legacy_mentions: bool,
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
@click.option(
    "--recheck",
    is_flag=True,
    help="Read and judge every cited file, also those whose citations all held at the "
    "last verify-all and that have not changed since (which are otherwise skipped).",
)
@verify_options
@store_options
def verify_all(
    category: str | None,
    changed_since: str | None,
    fmt: str,
    recheck: bool,
    as_json: bool,
    fix: bool,
    dry_run: bool,
    strict: bool,
    include_mentions: bool,
    legacy_mentions: bool,
    write: bool,
    check_urls: bool,
    url_timeout: float,
) -> None:
    """Verify every memory that has citations (optionally under CATEGORY)."""
    options = _options(fix, dry_run, include_mentions, write, check_urls, url_timeout, recheck)
    run = app().service().verify_all(category, changed_since=changed_since, options=options)
    warn(run.skipped)
    fmt = "json" if as_json else fmt
    if fmt == "json":
        _emit_results(run)
    elif fmt == "github":
        _print_github(run, strict)
    else:
        for result in _not_settled(run.results):
            if _worth_showing(result):
                print_result(result, verbose=False)
    _print_fixes(run, quiet=fmt == "json")
    if fmt != "json":
        click.echo(_summary(run))
    if not run.ok(strict=strict):
        raise SystemExit(EXIT_PROBLEMS)


def _not_settled(results: Any) -> Any:
    """The results worth reading for what failed or moved: of a whole-store run's lazy
    results, a memory whose citations all held on their lines (and has no mention) is
    passed over without being built."""
    settled = getattr(results, "settled", None)
    if settled is None:
        yield from results
        return
    for j in range(len(results)):
        if settled(j) is None:
            yield results[j]


def _worth_showing(result: Any) -> bool:
    """verify-all text lists only memories with something to look at."""
    moved = any(c.status.value == "moved" for c in result.checks)
    return not result.valid or moved or any(m.status.value != "valid" for m in result.mentions)


def print_result(result: Any, *, verbose: bool) -> None:
    """A memory's line (`valid` only when no citation and no mention fails), then its
    citations and mentions (all of them when verbose, else those that are not valid).

    The figure is this run's (how many checked citations hold), not the confidence
    `health` computes and `--write` records: that one says so itself."""
    mentions = list(getattr(result, "mentions", ()) or ())
    checked = [c for c in (*result.checks, *mentions) if c.status.value != "skipped"]
    held = sum(1 for c in checked if c.status.value in ("valid", "moved"))
    n = len(checked)
    what = "citations and mentions" if mentions else "citations" if n != 1 else "citation"
    figure = f"{held} of {n} {what} hold{'s' * (n == 1 and not mentions)}"
    state = "valid" if result.valid else "INVALID"
    click.echo(f"{state:<8} {result.path}  ({figure if n else 'nothing checked'})")
    for check in result.checks:
        if verbose or check.status.value != "valid":
            click.echo(_check_line(check))
    for check in result.mentions:
        if verbose or check.status.value != "valid":
            click.echo(_mention_line(check))


def _check_line(check: Any, prefix: str = "") -> str:
    ref = check.citation.ref
    if check.status.value == "moved" and check.current_path:
        where = check.current_path
        if check.current_line:
            where += f":{check.current_line}"
            end = check.current_end_line
            if end is not None and end != check.current_line:
                where += f"-{end}"
        ref = f"{ref} -> {where}"
    reason = f"  {check.reason}" if check.reason else ""
    unanchored = "" if check.anchored else "  (no snippet)"
    return f"  {prefix}{_MARK[check.status.value]:<12} {ref}{reason}{unanchored}"


def _mention_line(check: Any) -> str:
    """A mention as written, where it is in the memory, and what became of it."""
    mention = check.mention
    mark = "RENAMED" if check.renamed_to else _MARK[check.status.value]
    written = mention.text if mention is not None else check.citation.ref
    if mention is not None and mention.form == "list":
        written = f"{mention.path}:{written}"
    where = f" (line {mention.line})" if mention is not None else ""
    target = ""
    if check.status.value == "moved" and check.current_path:
        end = check.current_end_line
        target = f" -> {check.current_path}:{check.current_line}" + (f"-{end}" if end else "")
    reason = f"  {check.reason}" if check.reason else ""
    return f"  mention {mark:<12} {written}{where}{target}{reason}"


def _print_github(run: Any, strict: bool) -> None:
    """GitHub Actions annotations, each on the line of the memory file holding the citation
    or mention: a warning for what fails, a notice for a mention that moved or that nothing
    could vouch for, an error for a memory file that could not be read."""
    for path, file, reason in run.unreadable:
        title = f"unreadable memory {path}" if path else "unreadable memory file"
        where = f"file={_escape(file, True)}," if file else ""
        click.echo(f"::error {where}title={_escape(title, True)}::{_escape(reason)}")
    for result in _not_settled(run.results):
        title = f"memory {result.path}"
        for n, check in enumerate(result.checks):
            status = check.status.value
            if not (check.status.failing or (strict and status == "moved")):
                continue
            line = result.lines[n] if n < len(result.lines) and result.lines[n] else 1
            message = f"{status} citation {check.citation.ref}: {check.reason}"
            _annotate("warning", result.file, line, title, message)
        for check in result.mentions:
            status = "renamed" if check.renamed_to else check.status.value
            if status == "valid":
                continue
            failing = check.status.failing or (strict and status in ("moved", "renamed"))
            kind = "warning" if failing else "notice"
            mention = check.mention
            written = mention.text if mention is not None else check.citation.ref
            message = f"{status} mention {written}: {check.reason}"
            _annotate(kind, result.file, mention.line if mention else 1, title, message)


def _annotate(kind: str, file: str, line: int, title: str, message: str) -> None:
    click.echo(
        f"::{kind} file={_escape(file, True)},line={line},"
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
    """verify-all's JSON list, one memory per line; a fixed memory carries its fix, and
    each unreadable memory file is listed with the reason (`"unreadable"`)."""
    from memory_enhancement.service.serialize import verifications_json

    unreadable = [
        {
            "memory_id": path or None,
            "valid": False,
            "confidence": None,
            "stale_citations": [],
            "citations": [],
            "unreadable": reason,
        }
        for path, _, reason in run.unreadable
    ]
    if len(run.results) <= 50 or run.fixes:
        emit_json(_with_fixes(run) + unreadable)
        return
    import json

    # Streamed a thousand memories at a time: the whole text at 50,000 memories is tens
    # of megabytes, held twice while joined. Each memory is encoded on its own: one
    # non-ASCII snippet would otherwise make a whole chunk wide text, encoded character
    # by character, where ASCII text is encoded at the speed of a copy.
    encode = json.JSONEncoder(ensure_ascii=False).encode
    tail = ",\n" + ",\n".join(map(encode, unreadable)) if unreadable else ""
    texts = verifications_json(run.results)
    out = sys.stdout
    raw = getattr(out, "buffer", None)
    if raw is None:  # a text-only stream (a test's capture)
        _stream(out.write, texts, ",\n", "[\n", tail + "\n]\n")
        return
    out.flush()
    codec, errors = out.encoding or "utf-8", out.errors or "strict"
    parts = (text.encode(codec, errors) for text in texts)
    _stream(raw.write, parts, b",\n", b"[\n", (tail + "\n]\n").encode(codec, errors))
    raw.flush()


def _stream(
    write: Callable[[AnyStr], object], parts: Iterator[AnyStr], sep: AnyStr, head: AnyStr,
    tail: AnyStr,
) -> None:  # fmt: skip
    """Write head, the parts joined by sep a thousand at a time, and tail."""
    write(head)
    chunk = sep.join(itertools.islice(parts, 1000))
    first = True
    while chunk:
        write(chunk if first else sep + chunk)
        first = False
        chunk = sep.join(itertools.islice(parts, 1000))
    write(tail)


def _print_fixes(run: Any, *, quiet: bool) -> None:
    if quiet:
        return
    for fix in run.fixes:
        if not fix.written:
            click.echo(fix.diff, nl=False)
            continue
        done = []
        fixed = [
            plural(count, what)
            for count, what in ((fix.citations_fixed, "citation"), (fix.mentions_fixed, "mention"))
            if count
        ]
        if fixed:
            done.append(f"fixed {' and '.join(fixed)}")
        if fix.confidence is not None:
            done.append(f"recorded confidence {fix.confidence:.4g}")
        what = " and ".join(done) or "recorded the verification time"
        click.echo(f"{what} in {fix.path}")


def _summary(run: Any) -> str:
    from memory_enhancement.core.verdicts import Verdict

    parts = [f"{run.count(v)} {v.value.replace('_', ' ')}" for v in Verdict]
    shown = [p for p, v in zip(parts, Verdict, strict=True) if run.count(v) or v.value in _ALWAYS]
    head = (
        f"{plural(len(run.results), 'memory', 'memories')}, {plural(run.citations, 'citation')}: "
    )
    text = head + ", ".join(shown)
    if run.mentions:
        said = [
            f"{run.count_mentions(v)} {v.value.replace('_', ' ')}"
            for v in Verdict
            if run.count_mentions(v)
        ]
        text += f"; {plural(run.mentions, 'mention')}: " + ", ".join(said)
    tail = f", {plural(len(run.skipped), 'unreadable memory file')}" if run.skipped else ""
    return text + tail


_ALWAYS = ("valid", "moved", "stale", "missing")

COMMANDS = [verify, verify_all]
