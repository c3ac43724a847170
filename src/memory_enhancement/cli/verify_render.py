"""What `verify` and `verify-all` print for people and for GitHub Actions (not JSON).

A memory's line and the lines of its citations and mentions (also under `get --verify`),
the annotations GitHub shows on the memory files, what `--fix` and `--write` did, and
verify-all's closing count. The commands (verify_cmds.py) parse, call the service and
choose a rendering; the JSON is theirs and the service's (`serialize`). `get --verify`
imports this module alone, not the verify commands.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click

from memory_enhancement.cli.app import plural
from memory_enhancement.core.verdicts import MARKS as _MARK

_UNDECIDED = ("ambiguous", "unchecked", "in_submodule")


def not_settled(results: Any) -> Any:
    """The results worth reading for what failed or moved: of a whole-store run's lazy
    results, a memory whose citations all held on their lines (and has no mention), or
    that has nothing to look at (`quiet`: what `worth_showing` passes over), is passed
    over without being built."""
    settled = getattr(results, "settled", None)
    if settled is None:
        yield from results
        return
    for j in range(len(results)):
        if settled(j) is None and not results.quiet(j):
            yield results[j]


def worth_showing(result: Any) -> bool:
    """verify-all text lists only memories with something to look at."""
    moved = any(c.status.value == "moved" for c in result.checks)
    return not result.valid or moved or any(m.status.value != "valid" for m in result.mentions)


def print_result(
    result: Any, *, verbose: bool, fixing: bool = False, fix_with: str = "--fix"
) -> None:
    """A memory's line (`valid` only when no citation and no mention fails, `moved` when
    none fails but some moved, `unsure` when every one checked was left undecided:
    ambiguous, unchecked, in a submodule), then its citations and mentions (all of them when
    verbose, else those that are not valid).

    The figure is this run's (how many checked citations hold), not the confidence
    `health` computes and `--write` records: that one says so itself. A moved citation
    holds, but its memory is not headed `valid (4 of 4 hold)`: that read as nothing to
    do when `--fix` would rewrite 4 lines; the line says how many moved and, unless
    this run is the `--fix` (`fixing`), what rewrites them (`fix_with`: `get --verify`,
    which has no `--fix`, names `verify --fix`)."""
    mentions = list(getattr(result, "mentions", ()) or ())
    checked = [c for c in (*result.checks, *mentions) if c.status.value != "skipped"]
    held = sum(1 for c in checked if c.status.value in ("valid", "moved"))
    moved = sum(1 for c in checked if c.status.value == "moved")
    n = len(checked)
    what = "citations and mentions" if mentions else "citations" if n != 1 else "citation"
    figure = f"{held} of {n} {what} hold{'s' * (n == 1 and not mentions)}"
    if moved:
        figure += f", {moved} moved" + ("" if fixing else f": {fix_with} rewrites {_it(moved)}")
    # Neither held nor failed: said, so that `valid (0 of 1 ... hold)` does not puzzle.
    undecided = [c.status.value for c in checked if c.status.value in _UNDECIDED]
    for kind in sorted(set(undecided)):
        figure += f", {undecided.count(kind)} {kind.replace('_', ' ')}"
    state = "INVALID" if not result.valid else "moved" if moved else "valid"
    if state == "valid" and n and len(undecided) == n:  # nothing held, nothing failed
        state = "unsure"
    click.echo(f"{state:<8} {result.path}  ({figure if n else 'nothing checked'})")
    for check in result.checks:
        if verbose or check.status.value != "valid":
            click.echo(_check_line(check))
    for check in result.mentions:
        if verbose or check.status.value != "valid":
            click.echo(_mention_line(check))


def _it(count: int) -> str:
    return "it" if count == 1 else "them"


def _check_line(check: Any, prefix: str = "") -> str:
    ref = _cited(check)
    reason = f"  {check.reason}" if check.reason else ""
    unanchored = "" if check.anchored else "  (no snippet)"
    return f"  {prefix}{_MARK[check.status.value]:<12} {ref}{reason}{unanchored}"


def _cited(check: Any) -> str:
    """A citation as written, and for a moved one where its code is now
    (`src/util.py:1 -> src/util.py:2`)."""
    ref = check.citation.ref
    if check.status.value == "moved" and check.current_path:
        where = check.current_path
        if check.current_line:
            where += f":{check.current_line}"
            end = check.current_end_line
            if end is not None and end != check.current_line:
                where += f"-{end}"
        ref = f"{ref} -> {where}"
    return str(ref)


def _mention_line(check: Any) -> str:
    """A mention as written, where it is in the memory, and what became of it."""
    mention = check.mention
    mark = "RENAMED" if _renamed(check) else _MARK[check.status.value]
    written = _written(check)
    where = f" (memory line {mention.line})" if mention is not None else ""
    target = ""
    if check.status.value == "moved" and check.current_path:
        end = check.current_end_line  # a file mention's has no line: the path alone
        line = "" if check.current_line is None else f":{check.current_line}"
        if mention is not None and mention.form == "folder":
            line = "/"  # as the folder was written: `src/tools/` -> `lib/tools/`
        target = f" -> {check.current_path}{line}" + (f"-{end}" if end else "")
    reason = f"  {check.reason}" if check.reason else ""
    return f"  mention {mark:<12} {written}{where}{target}{reason}"


def _renamed(check: Any) -> bool:
    """Whether a mention is told by its file's new name: one that holds (moved), not one
    whose lines are not in the renamed file (stale, `renamed_to` set), which says so."""
    return bool(check.renamed_to) and not check.status.failing


# Forms whose text is words around the path and the numbers (core/prose_mentions.py).
_IN_WORDS = frozenset({"words", "l_number", "cjk_words", "label"})


def _written(check: Any) -> str:
    """A mention as written (`src/app.py:42`, `app.py#L10-L20`, a URL), or as `path:line`
    when its text is words (`` `app.py` lines 10-12 `` would show as `app.py` lines 10-12`,
    a backtick astray), a later item of a list (`, 55`) or a `**Line:** 12` label: the
    memory line it is on is shown beside it."""
    mention = check.mention
    if mention is None:
        return str(check.citation.ref)
    if mention.start is None:  # a file mention: the path; a folder's with its `/`
        return str(mention.ref_text)
    if mention.path_at is None or mention.form in _IN_WORDS:
        return f"{mention.path}:{mention.start}" + (f"-{mention.end}" if mention.end else "")
    return str(mention.text)


def print_github(run: Any, strict: bool) -> None:
    """GitHub Actions annotations, each on the line of the memory file holding the citation
    or mention: a warning for what fails, a notice for a citation or mention that moved
    (naming where its code is now: a CI run is where most users learn of it; a warning
    with --strict) or a mention nothing could vouch for (not a skipped one: an example
    path, another repository's link), an error for a memory file that could not be read.

    GitHub shows the first 10 annotations of each kind a step prints. After a
    `--changed-since` run, those about a file the change touched (or a memory it edited)
    come first, the rot that was there before after them: what a pull request broke is
    never hidden behind what it did not."""
    for path, file, reason in run.unreadable:
        title = f"unreadable memory {path}" if path else "unreadable memory file"
        where = f"file={_escape(file, True)}," if file else ""
        click.echo(f"::error {where}title={_escape(title, True)}::{_escape(reason)}")
    for path, file, reason in run.headers:
        title = _escape(f"frontmatter of memory {path}", True)
        click.echo(f"::error file={_escape(file, True)},title={title}::{_escape(reason)}")
    annotations = _annotations(run.results, strict, run.changed or frozenset())
    if run.changed is not None:
        annotations = iter(sorted(annotations, key=lambda a: not a[0]))  # stable: in order
    for _, kind, file, line, title, message in annotations:
        click.echo(
            f"::{kind} file={_escape(file, True)},line={line},"
            f"title={_escape(title, True)}::{_escape(message)}"
        )


def _annotations(
    results: Any, strict: bool, changed: frozenset[str]
) -> Iterator[tuple[bool, str, str, int, str, str]]:
    """(about the change, kind, memory file, its line, title, message) per annotation, in
    the store's order: a memory's citations, then its mentions."""
    for result in not_settled(results):
        title = f"memory {result.path}"
        edited = result.file in changed
        for n, check in enumerate(result.checks):
            status = check.status.value
            if not (check.status.failing or status == "moved"):
                continue
            kind = "warning" if check.status.failing or strict else "notice"  # as a mention's
            line = result.lines[n] if n < len(result.lines) and result.lines[n] else 1
            message = f"{status} citation {_cited(check)}: {check.reason}"
            if status == "moved" and check.current_path:
                message += "; `verify-all --fix` rewrites it"
            yield edited or _touched(check, changed), kind, result.file, line, title, message
        for check in result.mentions:
            status = "renamed" if _renamed(check) else check.status.value
            if status in ("valid", "skipped"):  # a skipped one says nothing either way
                continue
            failing = check.status.failing or (strict and status in ("moved", "renamed"))
            kind = "warning" if failing else "notice"
            mention = check.mention
            message = f"{status} mention {_written(check)}: {check.reason}"
            line = mention.line if mention else 1
            yield edited or _touched(check, changed), kind, result.file, line, title, message


def _touched(check: Any, changed: frozenset[str]) -> bool:
    """Whether the change touched the file a citation or mention names (or where it is now)."""
    return any(
        name in changed for name in (check.citation.target, check.current_path, check.renamed_to)
    )


def _escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def print_fixes(run: Any, *, quiet: bool, fixing: bool = False, dry_run: bool = False) -> None:
    """What `--fix` did (or, with `--dry-run`, the diff it would write). A `--fix` that
    finds nothing to rewrite says so: its output was otherwise the plain verify's, and
    on a store with nothing moved a dry run read as if the flags had been ignored."""
    if quiet:
        return
    if fixing and not run.fixes and not run.unwritten:
        click.echo(f"--fix{' --dry-run' * dry_run}: nothing to rewrite")
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


def summary(run: Any, changed_since: str | None = None) -> str:
    from memory_enhancement.core.verdicts import Verdict

    if not len(run.results) and not run.skipped and not run.unwritten and not run.headers:
        # Not "0 memories, 0 citations": in a store of uncited memories, a new user read
        # that as the tool finding no memories at all.
        if changed_since:
            what = f"no memory cites or mentions a file changed since {changed_since}"
            return f"{what}: nothing to verify"
        forms = "a citation, or a file, folder or `path:line` its text names"
        return f"no memory cites code ({forms}): nothing to verify"
    parts = [f"{run.count(v)} {v.value.replace('_', ' ')}" for v in Verdict]
    shown = [p for p, v in zip(parts, Verdict, strict=True) if run.count(v) or v.value in _ALWAYS]
    verified = plural(len(run.results), "memory", "memories")
    read = len(getattr(run.results, "batch", ()))  # a whole store's run: every memory read
    if read > len(run.results) and not changed_since:  # the others cite nothing: say so
        verified = f"{len(run.results)} of {plural(read, 'memory', 'memories')} citing code"
    text = f"{verified}, {plural(run.citations, 'citation')}"
    if run.citations or not run.mentions:  # a store citing code in its prose alone (Serena's):
        text += ": " + ", ".join(shown)  # no row of zeros before its mentions' counts
    if run.mentions:
        said = [
            f"{run.count_mentions(v)} {v.value.replace('_', ' ')}"
            for v in Verdict
            if run.count_mentions(v)
        ]
        text += f"; {plural(run.mentions, 'mention')}: " + ", ".join(said)
    tail = f", {plural(len(run.skipped), 'unreadable memory file')}" if run.skipped else ""
    if run.headers:
        unparsed = plural(len(run.headers), "memory", "memories")
        tail += f", {unparsed} whose frontmatter does not parse"
    if run.unwritten:
        tail += f", {plural(len(run.unwritten), 'memory file')} left unchanged"
    return text + tail


_ALWAYS = ("valid", "moved", "stale", "missing")
