"""`verify` and `verify-all`: are these memories' citations still true?

Exit codes: 0 when every memory is valid, 1 when any is not (with --strict,
moved citations fail too), 2 on usage errors. What the commands print as text (and as
GitHub annotations) is verify_render.py; their JSON is here.
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
    fail,
    store_options,
    terminal_notice,
    warn,
)
from memory_enhancement.cli.verify_render import (
    not_settled,
    print_fixes,
    print_github,
    print_result,
    summary,
    worth_showing,
)

F = TypeVar("F", bound=Callable[..., Any])


def verify_options(func: F) -> F:
    options = [
        click.option("--json", "as_json", is_flag=True, help="Print JSON (same as --format json)."),
        click.option(
            "--fix",
            is_flag=True,
            help="Rewrite moved citations and mentions in place; capture missing snippets.",
        ),
        click.option(
            "--dry-run",
            is_flag=True,
            help="With --fix or --write: print the diff instead of writing.",
        ),
        click.option("--strict", is_flag=True, help="Moved citations fail too."),
        click.option(
            "--mentions/--no-mentions",
            "include_mentions",
            default=True,
            show_default=True,
            help="Also verify the code the prose names (`path:line`, files, folders), "
            "from git history.",
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
    if not 0 < timeout <= 3600:  # NaN too; past an hour the socket layer overflows
        fail(f"invalid --url-timeout {timeout}: give seconds, more than 0 and at most 3600")
    return VerifyOptions(fix, dry_run, mentions, urls, timeout, write, recheck, terminal_notice())


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
    """Verify the citations of one MEMORY (a path, a citation ID or a unique name) against
    the code, just in time.

    Prose mentions (`src/app.py:42` in the text) are verified too, from git history. Exits 1
    when a citation or mention is stale, missing, out of range or invalid (moved too, with
    --strict), or when the memory's frontmatter does not parse (its prose is verified).

    \b
    Examples:
      memory-enhancement verify decisions/api-version
      memory-enhancement verify mem:a7Bc3x --fix --dry-run
    """
    options = _options(fix, dry_run, include_mentions, write, check_urls, url_timeout)
    run = app().service().verify(memory, options)
    warn(f"{path}: {why}" for path, _, why in run.headers)
    result = run.results[0]
    if as_json:
        emit_json(_verifications(run)[0])
    else:
        print_result(result, verbose=True, fixing=fix)
    print_fixes(run, quiet=as_json, fixing=fix, dry_run=dry_run)
    if not run.ok(strict=strict):
        raise SystemExit(EXIT_PROBLEMS)


@click.command("verify-all", context_settings=CONTEXT)
@click.argument("category", required=False)
@click.option(
    "--changed-since",
    metavar="REF",
    help="Only memories citing or mentioning files changed since the git REF, and those "
    "edited since.",
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
    """Verify every memory that has citations or prose mentions (optionally under CATEGORY).

    Exits 1 when a citation or mention fails (see `verify`), a memory file cannot be read,
    or a memory's frontmatter does not parse (its prose mentions are verified all the same);
    exits 2 when CATEGORY is no category of the store.

    \b
    Examples:
      memory-enhancement verify-all
      memory-enhancement verify-all --changed-since origin/main --format github
      memory-enhancement verify-all --fix --dry-run
    """
    if as_json and fmt == "github":  # as `health` and `graph` say
        fail("give either --json or --format github, not both")
    options = _options(fix, dry_run, include_mentions, write, check_urls, url_timeout, recheck)
    run = app().service().verify_all(category, changed_since=changed_since, options=options)
    warn(run.skipped)
    warn(f"{path}: {why}" for path, _, why in run.headers)
    warn(run.unwritten)
    fmt = "json" if as_json else fmt
    if fmt == "json":
        _emit_results(run)
    elif fmt == "github":
        print_github(run, strict)
    else:
        for result in not_settled(run.results):
            if worth_showing(result):
                print_result(result, verbose=False, fixing=fix)
    print_fixes(run, quiet=fmt == "json", fixing=fix, dry_run=dry_run)
    if fmt != "json":
        click.echo(summary(run, changed_since))
    if not run.ok(strict=strict):
        raise SystemExit(EXIT_PROBLEMS)


def _verifications(run: Any) -> list[dict[str, Any]]:
    from memory_enhancement.service.serialize import run_verifications

    return run_verifications(run)


def _unverified(path: str | None, key: str, reason: str) -> dict[str, Any]:
    """A memory file listed without results, as a result's shape holds it, and why."""
    return {"memory_id": path, "valid": False, "confidence": None, "holding": None,
            "stale_citations": [],
            "citations": [], key: reason}  # fmt: skip


def _emit_results(run: Any) -> None:
    """verify-all's JSON list, one memory per line; a fixed memory carries its fix, one
    whose frontmatter does not parse says why (`"header_error"`), and each unreadable
    memory file is listed with the reason (`"unreadable"`)."""
    from memory_enhancement.service.serialize import verifications_json

    unreadable = [_unverified(path or None, "unreadable", why) for path, _, why in run.unreadable]
    if run.headers:  # a memory with nothing to verify is not among the results: said apart
        listed = {result.path for result in run.results}
        unreadable += [
            _unverified(path, "header_error", why)
            for path, _, why in run.headers
            if path not in listed
        ]
    if len(run.results) <= 50 or run.fixes or run.headers:
        emit_json(_verifications(run) + unreadable)
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


COMMANDS = [verify, verify_all]
