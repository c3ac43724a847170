"""What `verify --fix` changes: moved citations and mentions follow their code, nothing else.

A moved citation gets its new line (and path after a rename) and a fresh
verified stamp; an unanchored one (no snippet) gets its snippet captured, so
the next verification can tell a moved line from a changed one. Stale and
missing citations are left alone: deciding what they should say needs a person
or an agent. A moved prose mention (`src/app.py:10`) has its line numbers (and
its path, after a rename) rewritten where they are written, every other
character of the line kept: `#L` links stay links, a column stays a column.
`--write` (and `--fix`, in files that already record them) also
records the memory's confidence and verification time in the file, so they
travel with git.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from memory_enhancement.core import prose_mentions as prose
from memory_enhancement.core.errors import MemoryToolError
from memory_enhancement.core.file_list import FileList
from memory_enhancement.core.folder_mentions import FOLDER
from memory_enhancement.core.mentions import Mention, as_written, find_mentions, relocated
from memory_enhancement.core.model import Citation, Fix, Memory
from memory_enhancement.core.verdicts import CitationCheck, MemoryVerification, Verdict
from memory_enhancement.store import formats
from memory_enhancement.store.disk import Loaded, Store
from memory_enhancement.store.edits import rewrite
from memory_enhancement.verify.repo import Repository, cited_text

# What a mention's history can say of the code a line number named when it was written.
_DRIFTED = frozenset({Verdict.MOVED, Verdict.STALE, Verdict.MISSING, Verdict.OUT_OF_RANGE})


def fixed_citations(
    checks: Sequence[CitationCheck],
    repo: Repository,
    stamp: str,
    mentions: Sequence[CitationCheck] = (),
) -> tuple[Citation, ...]:
    """The citations after fixing, in the same order as the checks. `mentions`: the
    memory's mention verdicts, from history. A citation without a snippet is a line
    number alone, which the Verifier can only count; where a mention of the same line
    says what became of its code, that decides: moved, the citation follows it (and its
    snippet is captured there); changed or gone, nothing is captured (the line cited now
    is other code)."""
    told = {m.citation.ref: m for m in mentions if m.status in _DRIFTED}
    return tuple(_fixed(check, repo, stamp, told) for check in checks)


def _fixed(
    check: CitationCheck,
    repo: Repository,
    stamp: str,
    told: Mapping[str, CitationCheck] | None = None,
) -> Citation:
    citation = check.citation
    mention = (told or {}).get(citation.ref) if citation.snippet is None else None
    if mention is not None and mention.status is Verdict.MOVED and mention.current_path:
        check = replace(mention, citation=citation)  # where history found the code
    elif mention is not None:
        return citation
    if check.status is Verdict.MOVED and check.current_path:
        line = check.current_line if citation.line is not None else None
        end = check.current_end_line if citation.end_line is not None else None
        moved = replace(citation, target=check.current_path, line=line, end_line=end)
        if mention is not None and line is not None:
            text = cited_text(repo.read(moved.target), line, end)
            moved = replace(moved, snippet=text if text and text.strip() else None)
        return replace(moved, verified=stamp)
    if check.status is Verdict.VALID and citation.snippet is None and citation.line is not None:
        text = cited_text(repo.read(citation.target), citation.line, citation.end_line)
        if text and text.strip():
            return replace(citation, snippet=text, verified=stamp)
    return citation


def apply_fixes(
    store: Store,
    repo: Repository,
    results: Sequence[MemoryVerification],
    states: Mapping[str, tuple[float, datetime]],
    *,
    stamp: str,
    fix: bool,
    write: bool,
    dry_run: bool,
    refused: list[str] | None = None,
    unstamped: Container[str] = (),
    files: Callable[[], FileList] | None = None,
) -> list[Fix]:
    """--fix rewrites moved citations; --write (and --fix, on what it fixes) records the
    confidence and verification time in `states` (per memory path) in the file, but for
    the `unstamped` memories (a Claude Code folder's MEMORY.md: an index, not a memory).
    `files`: the repository's files now, asked for when a renamed file's partial path
    may stay partial (`short_form`).

    A file that cannot be edited in place (its format cannot hold the edit) is left
    unchanged and named in `refused` with why; the other files are still written."""
    fixes = []
    with store.batch():
        for result in results:
            current = tuple(c.citation for c in result.checks)
            wanted = (
                fixed_citations(result.checks, repo, stamp, result.mentions) if fix else current
            )
            mentions = result.mentions if fix else ()
            touched = bool(mention_edits(mentions)) or any(map(_renames_label, mentions))
            stamps = write and result.path not in unstamped
            if wanted == current and not stamps and not touched:
                continue
            try:
                done = _fix_one(
                    store, result, wanted, states.get(result.path), dry_run=dry_run,
                    only_recorded=not stamps, mentions=mentions, files=files,
                )  # fmt: skip
            except MemoryToolError as exc:
                if refused is None:
                    raise
                refused.append(str(exc))
                continue
            if done is not None:
                fixes.append(done)
    return fixes


def _fix_one(
    store: Store,
    result: MemoryVerification,
    wanted: tuple[Citation, ...],
    state: tuple[float, datetime] | None,
    *,
    dry_run: bool,
    only_recorded: bool,
    mentions: Sequence[CitationCheck] = (),
    files: Callable[[], FileList] | None = None,
) -> Fix | None:
    """Rewrite one memory, if the file still says what was verified.

    With only_recorded (plain --fix), confidence and Last Verified are refreshed only
    in files that already record them, so a fix touches nothing else in other files.
    Nothing is reported when nothing the format can record changed (an inline
    `[cite:]` has no room for a snippet or a stamp): a fix would repeat on every run.
    """

    written: dict[str, float] = {}
    spliced: list[MentionEdit] = []

    def change(loaded: Loaded) -> str | None:
        memory = loaded.doc.memory
        if memory.meta.citations != tuple(c.citation for c in result.checks):
            return None  # changed since it was verified; the next run will see it
        meta = replace(memory.meta, citations=wanted)
        recorded = memory.meta.last_verified is not None or memory.meta.confidence is not None
        if state is not None and (recorded or not only_recorded):
            score, moment = state
            meta = replace(meta, last_verified=moment)
            if not _has_own_confidence(memory):
                meta = replace(meta, confidence=score)
                written["confidence"] = score
        edited = replace(memory, meta=meta)
        text = formats.by_name(memory.format).render(loaded.doc, edited)
        before = loaded.decoded.text
        spliced[:] = [
            *mention_edits(mentions, before, files),
            *repeated_mention_edits(before, result.checks, files),
        ]
        return splice_mentions(before, text, spliced) if spliced else text

    done = rewrite(store, result.path, change, name=result.file or result.path, dry_run=dry_run)
    if done is None:
        return None
    changed = sum(1 for c, w in zip(result.checks, wanted, strict=True) if c.citation != w)
    return replace(
        done,
        citations_fixed=changed,
        mentions_fixed=sum(1 for edit in spliced if not edit.again),
        confidence=written.get("confidence"),
    )


@dataclass(frozen=True)
class MentionEdit:
    """Characters of one memory line to replace: `old` at `column` becomes `new`."""

    line: int
    column: int
    old: str
    new: str
    again: bool = False  # another edit of a mention already counted (a label's file)


def mention_edits(
    checks: Sequence[CitationCheck],
    text: str | None = None,
    files: Callable[[], FileList] | None = None,
) -> list[MentionEdit]:
    """The edits that make moved mentions cite where their code is now.

    A rename writes the new path as the mention wrote the old one: a partial path stays
    partial where that still names the file alone (`short_form`, with the repository's
    `files`), else it is written in full (a partial path might name another file now),
    in a file mention (`` `src/app.py` ``) as in any other; a list item (`, 20`
    after `app.py:10`) has no path of its own, so after a rename it is left alone; a
    permalink (a blob URL pinned to a commit) cites that commit forever and is left
    alone too. A `**Line:** 12` label has its path in the `**File:**` label above it:
    with the memory's `text`, a rename rewrites the path there, as it does in
    `src/app.py:12` (and the line, if it moved, where it is). A rename to a backup copy
    (`deduplication.py` -> `deduplication.py.bak`, the code itself gone into a package:
    amitcjmu/Stock-Analysis) is what git says, but no path to send a reader to: left alone.
    """
    edits = []
    for check in checks:
        mention = check.mention
        if check.status is not Verdict.MOVED or mention is None or mention.permalink:
            continue
        if check.current_line is None and mention.start is not None:  # a file mention has none
            continue
        path = check.renamed_to
        if path is not None and path.lower().endswith(BACKUP_SUFFIXES):
            continue
        label = _renames_label(check)
        if path is not None and mention.path_at is None and not label:
            continue
        was = check.citation.target
        new = relocated(
            mention, check.current_line, check.current_end_line,
            _short(mention, path, was, files), was,
        )  # fmt: skip
        if new != mention.text:
            edits.append(MentionEdit(mention.line, mention.column, mention.text, new))
        if label and text is not None and path is not None:
            short = short_form(mention.path, path, was, files()) if files else path
            edits += _file_label_edit(text, mention, short, was, again=new != mention.text)
    return edits


def short_form(written: str, path: str, was: str, files: FileList, folder: bool = False) -> str:
    """A renamed file's new path (`path`) written as the memory wrote the old one (`was`,
    written `written`): a partial path (`Configs/app.release.xcconfig` for
    `Projects/App/Configs/app.release.xcconfig`, the project said by its section) stays
    partial, `Configs/app.prod.xcconfig`, when the file is still under the folders the
    author left out, as many folders deep as written, and the partial path names it alone
    among the repository's files now (a `folder`'s among its folders: `handlers/` renamed
    `routes/`). Else the path in full: the short form would name another file, or another
    folder than the author's."""
    if not written or len(written) >= len(was) or not was.endswith("/" + written):
        return path
    left_out = was[: len(was) - len(written)]
    short = path[len(left_out) :]
    if not path.startswith(left_out) or short.count("/") != written.count("/"):
        return path
    found = files.folder(short) if folder else files.resolve(short)
    return short if found.path == path else path


def _short(
    mention: Mention, path: str | None, was: str, files: Callable[[], FileList] | None
) -> str | None:
    """`short_form` of the path as the mention wrote it, when there is a new path and
    the repository's files to look it up in."""
    if path is None or files is None or mention.path_at is None:
        return path
    a, b = mention.path_at
    return short_form(mention.text[a:b], path, was, files(), mention.form == FOLDER)


# What a copy kept aside is called: `x.py.bak`, `x.py.orig`, `x.py.old`, `x.py~`.
BACKUP_SUFFIXES = (".bak", ".orig", ".old", ".backup", "~")


def _renames_label(check: CitationCheck) -> bool:
    """Whether a check renames the file of a `**Line:**` label (its path is elsewhere)."""
    mention = check.mention
    return (
        check.status is Verdict.MOVED
        and check.renamed_to is not None
        and mention is not None
        and mention.form == prose.LABEL
        and not mention.permalink
    )


def _file_label_edit(
    text: str, mention: Mention, path: str, was: str, *, again: bool
) -> list[MentionEdit]:
    """The edit of the path in the `**File:**` label a `**Line:**` label reads its file
    from (found as the grammar found it, in the lines above), or none when it is not
    there as read."""
    lines = text.split("\n")
    first = max(mention.line - 5, 0)
    above = "".join(line + "\n" for line in lines[first : mention.line - 1])
    found = prose.file_label(above)
    if found is None:
        return []
    up, start, end = found
    number = mention.line - up
    if lines[number - 1].rstrip("\r")[start:end] != mention.path:
        return []
    new = as_written(mention.path, path, was)
    return [MentionEdit(number, start, mention.path, new, again=again)]


def repeated_mention_edits(
    text: str, checks: Sequence[CitationCheck], files: Callable[[], FileList] | None = None
) -> list[MentionEdit]:
    """The edits that make prose repeating a moved citation (`starts at src/app.py:12`
    beside its table row) follow it. Such prose is not verified as a mention of its own
    (the citation speaks for it), so without these the fix leaves the text citing the
    old line, and the next run, now that it differs from the citation, finds it valid
    against the work tree as written."""
    moved = {
        c.citation.ref: c
        for c in checks
        if c.status is Verdict.MOVED and c.current_line is not None and c.current_path
    }
    if not moved:
        return []
    edits = []
    for mention in find_mentions(text):
        check = moved.get(mention.ref_text)
        if check is None or check.current_line is None or mention.permalink:
            continue
        path = check.current_path if check.current_path != check.citation.target else None
        if path is not None and mention.path_at is None:
            continue  # a list item (`, 20`) has no path of its own to rename
        was = check.citation.target
        new = relocated(
            mention, check.current_line, check.current_end_line,
            _short(mention, path, was, files), was,
        )  # fmt: skip
        if new != mention.text:
            edits.append(MentionEdit(mention.line, mention.column, mention.text, new))
    return edits


def splice_mentions(before: str, after: str, edits: Sequence[MentionEdit]) -> str:
    """Apply mention edits, found in `before` (the text they were read from), to `after`
    (the same text, maybe with its citations re-rendered around them).

    Each edited line is looked up in `after` by its text, nearest its old place
    (a rendered citations table or metadata block can shift lines); an edit whose
    characters are no longer where they were is dropped, never guessed. Each edit
    replaces only the characters it changes: a mention's text may hold another's (the
    item `20` of `Lines 10, 20 of `app.py``), and both are rewritten.
    """
    old_lines = before.split("\n")
    new_lines = after.split("\n")
    by_line: dict[int, list[MentionEdit]] = {}
    for edit in edits:
        by_line.setdefault(edit.line, []).append(edit)
    for number, group in by_line.items():
        if not 0 < number <= len(old_lines):
            continue
        original = old_lines[number - 1]
        spans = [
            _changed(edit)
            for edit in group
            if original[edit.column : edit.column + len(edit.old)] == edit.old
        ]
        edited = original
        done: list[tuple[int, int]] = []
        for start, end, new in sorted(spans, reverse=True):
            if any(start <= b and a <= end for a, b in done):
                continue  # edits of the same (or touching) characters: none is guessed
            edited = edited[:start] + new + edited[end:]
            done.append((start, end))
        at = _nearest_same(new_lines, original, number - 1)
        if at is not None:
            new_lines[at] = edited
    return "\n".join(new_lines)


def _changed(edit: MentionEdit) -> tuple[int, int, str]:
    """The span of the line an edit changes (its text less what old and new share at
    either end) and what it becomes."""
    old, new = edit.old, edit.new
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return edit.column + head, edit.column + len(old) - tail, new[head : len(new) - tail]


def _nearest_same(lines: list[str], text: str, guess: int) -> int | None:
    if 0 <= guess < len(lines) and lines[guess] == text:
        return guess
    same = [n for n, line in enumerate(lines) if line == text]
    return min(same, key=lambda n: abs(n - guess)) if same else None


def _has_own_confidence(memory: Memory) -> bool:
    """A file whose author wrote a confidence of their own (`HIGH`) keeps it."""
    return any(key.lower() == "confidence" for key in memory.meta.extra)
