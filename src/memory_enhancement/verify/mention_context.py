"""A bare name that names several files, told apart by the files named around it.

Authors write the bare name when the folder is plain from what stands next to it, and a
repository often has several files of that name (`registry.go`, `run.py`). Audited on real
stores (docs/benchmarks.md, issue 17, "Session 26"), half the `ambiguous` verdicts were of
such a name: Vecto-Pilot's `venue-intelligence.js:57` under `venue-enrichment.js:26` and
`venue-utils.js:16`, both in server/lib/venue/, the folder of one of its two files;
filter_mate's `expression_builder.py:958-968` in the row above `filter_chain_optimizer.py:
237-243` (adapters/backends/postgresql/); Research's `run.py line 136` four lines under
`**File**: src/phase1/stages/ga_optimize/optuna_optimizer.py`.

So the file of a name is chosen by the files named nearest to it in the memory, a few
lines either way: the other mentions where history resolved them, and paths written with
a folder (a `File:` label, a list of files). The nearest of them whose folder is the
folder of exactly one candidate decides; when the nearest that name a candidate's folder
name two, or none do, the name stays ambiguous. A partial folder of several is told by
the folder the list item it is nested in names (`_under_parent_item`), else its section's
heading (`_under_heading`): layout notes name the parent once, in the item or the
heading; else by a file its own line names that one of them sits beside (`_beside`).
Asked only of a memory file holding an ambiguous mention: nothing here runs for the others.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from memory_enhancement.core.file_list import normalize
from memory_enhancement.core.folder_mentions import FOLDER
from memory_enhancement.core.mentions import Mention
from memory_enhancement.store.formats.markdown import headings
from memory_enhancement.verify.mention_history import (
    AMBIGUOUS,
    PAST_END,
    TEXT,
    UNREADABLE,
    HistoryReader,
    Then,
    key,
)
from memory_enhancement.verify.mention_reading import Written

WINDOW = 8  # lines either way
_MOST_COPIES = 8  # files of one name compared as copies, at most
_FOLDERED = re.compile(r"(?<![A-Za-z0-9_.@~+/-])(?:[A-Za-z0-9_.@~+-]+/)+[A-Za-z0-9_.@~+-]+\.\w+")


def settle_all(
    found: list[Written], thens: dict[str, dict[str, Then]], reader: HistoryReader
) -> dict[str, dict[str, Then]]:
    """`thens` (per memory file, per mention) with the ambiguous mentions settled where
    their neighbours tell; the files without one as they were."""
    out = dict(thens)
    for item in found:
        mine = thens.get(item.file)
        if mine and any(t.kind == AMBIGUOUS for t in mine.values()):
            out[item.file] = settle(
                item, mine, reader.at, reader.git.toplevel, reader.history.object_id
            )
    return out


def settle(
    item: Written,
    thens: Mapping[str, Then],
    read: Callable[..., Then],
    root: Path,
    object_id: Callable[[str, str], str | None],
) -> dict[str, Then]:
    """The mentions' Thens with each ambiguous one whose neighbours name the folder of
    one of its files read from that file (`read`: HistoryReader.at, what its lines said
    at the commit; `object_id`: a file's object at a commit)."""
    by_key = {key(m): m for m in item.mentions}
    lines = _memory_lines(root, item.file)
    out = dict(thens)
    for name, then in thens.items():
        mention = by_key.get(name)
        if then.kind != AMBIGUOUS or mention is None or then.commit is None:
            continue
        if mention.form == FOLDER:  # a folder's candidates are folders, not files of one
            chosen = _under_parent_item(mention, then.candidates, lines, item.folder)
            chosen = chosen or _under_heading(mention, then.candidates, lines, item.folder)
            chosen = chosen or _beside(then.candidates, _evidence(mention, item, thens, lines))
            if chosen is not None:
                path, why = chosen
                note = f"{mention.text} read as {path}/, {why}; "
                out[name] = read(then.commit, path, mention, note)
            continue
        chosen = _choose(mention, then.candidates, _evidence(mention, item, thens, lines))
        if chosen is not None:
            path, why = chosen
            note = f"{mention.path} read as {path}, the folder of {why}; "
            out[name] = read(then.commit, path, mention, note)
            continue
        chosen = _named_in_full(mention, then.candidates, item, thens, lines)
        if chosen is not None:
            path, why = chosen
            note = f"{mention.path} read as {path}, which the memory names at {why}; "
            out[name] = read(then.commit, path, mention, note)
            continue
        if _copies(then.candidates, then.commit, object_id, root):
            path = then.candidates[0]
            others = ", ".join(then.candidates[1:])
            note = f"{mention.path} read as {path}, the same file then and now as {others}; "
            out[name] = read(then.commit, path, mention, note)
    return out


def _under_heading(
    mention: Mention, candidates: tuple[str, ...], lines: list[str], folder: str
) -> tuple[str, str] | None:
    """The one candidate folder under the folder named by the nearest heading enclosing
    the mention (`## Core library (`include/cutlass/`)` above `**arch/**`): the one right
    under it (`include/cutlass/arch`), else the one anywhere under it; two leave the
    mention ambiguous. Authors of layout notes name the parent once, in the section's
    heading, and its folders by their names below it (Butterfingrz/cutlass)."""
    found = _section_heading(lines, mention.line, folder)
    if found is None:
        return None
    number, parents = found
    picked = _under(mention, candidates, parents, folder)
    if picked is None:
        return None
    path, parent = picked
    return path, f"under `{parent}/` of its section's heading (line {number})"


def _under_parent_item(
    mention: Mention, candidates: tuple[str, ...], lines: list[str], folder: str
) -> tuple[str, str] | None:
    """The one candidate folder under the folder named by the list item the mention's
    item is nested in (`  - `features/`` under `- `lib/pg_search/``), or by the item
    that one is nested in, the nearest first; as `_under_heading` picks. Layout notes
    list a folder's subfolders as the items under its own (Casecommons/pg_search: three
    of its eight folder mentions were ambiguous, each naming lib/pg_search/'s folder and
    spec/lib/pg_search/'s)."""
    for number, parents in _parent_items(lines, mention.line, folder):
        picked = _under(mention, candidates, parents, folder)
        if picked is not None:
            path, parent = picked
            return path, f"under `{parent}/` of the list item it is nested in (line {number})"
    return None


def _beside(
    candidates: tuple[str, ...], evidence: Iterator[tuple[int, str, str]]
) -> tuple[str, str] | None:
    """The one candidate folder beside a file its own line names (their parent folder holds
    that file): "`Resources/Strings/Base.lproj/Localizable.strings` (English) and
    `ko.lproj/` (Korean)" names Strings/ko.lproj/ of three `ko.lproj/` (2sem/WhoCallMe).
    A file's folder as written may be partial: it is beside a candidate when its first
    folders are the last ones of the candidate's parent, two at least (one, `src/`, tells
    little). The line only: NEXTAltair/LoRAIro's deleted `controllers/`, nested under
    `tests/gui/`, was read as tests/unit/gui/controllers/ from a file three lines on; two
    candidates beside the line's files tell nothing."""
    matched: dict[str, str] = {}
    for far, folder, why in evidence:
        for path in candidates:
            if far == 0 and _holds(posixpath.dirname(path), folder):
                matched.setdefault(path, why)
    if len(matched) != 1:
        return None
    path, why = next(iter(matched.items()))
    return path, f"beside {why}"


def _holds(parent: str, folder: str) -> bool:
    """Whether folder `parent` (from the root) holds `folder` (from the root, or its last
    folders), its folders overlapping two at least when partial."""
    if not parent or not folder:
        return False
    if folder == parent or folder.startswith(parent + "/"):
        return True
    ours, theirs = parent.split("/"), folder.split("/")
    return any(ours[-k:] == theirs[:k] for k in range(2, min(len(ours), len(theirs)) + 1))


def _under(
    mention: Mention, candidates: tuple[str, ...], parents: list[str], folder: str
) -> tuple[str, str] | None:
    """(candidate, parent) of the one candidate right under one of `parents`, else of
    the one anywhere under them; None when there are two or none."""
    own = normalize(mention.path, folder)
    right_under = {(c, p) for c in candidates for p in parents if c == f"{p}/{own}"}
    anywhere = {(c, p) for c in candidates for p in parents if c.startswith(p + "/")}
    picked = right_under or anywhere
    if len({c for c, _ in picked}) != 1:
        return None
    return min(picked)


_ITEM = re.compile(r"( *)(?:[-*+]|\d{1,9}[.)])[ \t]")


def _parent_items(lines: list[str], line: int, folder: str) -> Iterator[tuple[int, list[str]]]:
    """(line, folders) of the list items enclosing memory line `line`'s item that name a
    folder, the nearest first: each item above it less indented than the last one found.
    A line of text at the margin (a paragraph, a heading) ends the list; blank lines and
    the items' indented lines do not. Lines in a fenced block hold no mention, so a
    mention's own line is never in one, and a fence at the margin ends the list too."""
    if not 0 < line <= len(lines):
        return
    own = _ITEM.match(lines[line - 1].expandtabs(4))
    if own is None:
        return
    indent = len(own.group(1))
    for index in range(line - 2, -1, -1):
        if indent == 0:
            return
        text = lines[index].expandtabs(4)
        if not text.strip():
            continue
        item = _ITEM.match(text)
        if item is None:
            if not text.startswith(" "):
                return
            continue
        depth = len(item.group(1))
        if depth >= indent:
            continue
        indent = depth
        named = _folders_in(text, folder)
        if named:
            yield index + 1, named


_PATH = re.compile(r"(?<![A-Za-z0-9_.@~+/-])(?:[A-Za-z0-9_.@~+-]+/)+[A-Za-z0-9_.@~+-]*")


def _section_heading(lines: list[str], line: int, folder: str) -> tuple[int, list[str]] | None:
    """(line, folders) of the nearest heading above memory line `line` that encloses it
    (each one further up of a higher level) and names a folder (read as the memory's
    mentions are, from its `folder`); headings in fenced blocks (a shell comment `# build`)
    are none, by the store's own fence-aware scan."""
    level = 7
    for index, depth, title in reversed(list(headings(lines[: line - 1]))):
        if depth >= level:
            continue
        level = depth
        named = _folders_in(title, folder)
        if named:
            return index + 1, named
    return None


def _folders_in(text: str, folder: str) -> list[str]:
    """The folders a line names, read as the memory's mentions are, from its `folder`."""
    return [p for found in _PATH.findall(text) if (p := normalize(found.rstrip("/"), folder))]


def _copies(
    candidates: tuple[str, ...],
    commit: str,
    object_id: Callable[[str, str], str | None],
    root: Path,
) -> bool:
    """Whether the files of a name are copies of one file: the same object at the commit
    the memory line was written in and the same bytes in the work tree now. Then which
    one the author meant changes nothing: each gives the same verdict. Repositories keep
    such copies (rjmurillo/ai-agents generates src/copilot-cli/ from .claude/: 18 of its
    39 ambiguous mentions were of such a pair)."""
    if len(candidates) < 2 or len(candidates) > _MOST_COPIES:
        return False
    ids = {object_id(commit, path) for path in candidates}
    if len(ids) != 1 or None in ids:
        return False
    if not all((root / path).is_file() for path in candidates):  # no FIFO is read
        return False
    try:
        first = (root / candidates[0]).read_bytes()
        return all((root / path).read_bytes() == first for path in candidates[1:])
    except OSError:
        return False


def _named_in_full(
    mention: Mention,
    candidates: tuple[str, ...],
    item: Written,
    thens: Mapping[str, Then],
    lines: list[str],
) -> tuple[str, str] | None:
    """The one candidate the memory names with its folders anywhere, when the neighbours
    tell nothing: authors write a file's path once (`.claude/skills/github/scripts/pr/
    new_pr.py` in a memory's first lines) and its bare name after (`new_pr.py:282` forty
    lines on; rjmurillo/ai-agents, amitcjmu/Stock-Analysis). A path as written that ends
    several candidates (the mention's own, `issue/close_issue.py`) tells nothing; two
    candidates named leave the name ambiguous. Stricter than the window's folder rule:
    the file itself must be named, not a file of its folder."""
    named: dict[str, str] = {}
    for other in item.mentions:
        then = thens.get(key(other))
        if other is mention or then is None or then.kind not in (TEXT, PAST_END, UNREADABLE):
            continue
        if then.path in candidates:  # resolved by history to one of them
            named.setdefault(then.path, f"`{other.text}` (line {other.line})")
    own = normalize(mention.path, item.folder)
    for number, text in enumerate(lines, 1):
        for found in _FOLDERED.finditer(text):
            path = normalize(found.group(0).lstrip("~"), item.folder)
            if path is None or path == own:
                continue
            ends = [c for c in candidates if c == path or c.endswith("/" + path)]
            if len(ends) == 1:
                named.setdefault(ends[0], f"`{found.group(0)}` (line {number})")
    if len(named) != 1:
        return None
    return next(iter(named.items()))


def _evidence(
    mention: Mention, item: Written, thens: Mapping[str, Then], lines: list[str]
) -> Iterator[tuple[int, str, str]]:
    """(distance in lines, folder, what names it) of the files named around the mention."""
    # A mention history resolved tells the folder of its file; its path as written (often
    # partial: `lib/x.ts` of client/lib/) is not read again as a path of its own.
    taken: dict[int, list[tuple[int, int]]] = {mention.line: [_span(mention)]}
    for other in item.mentions:
        then = thens.get(key(other))
        far = abs(other.line - mention.line)
        if other is mention or then is None or then.path is None or far > WINDOW:
            continue
        if other.form == FOLDER:
            continue
        if then.kind in (TEXT, PAST_END, UNREADABLE):  # resolved by history to one file
            taken.setdefault(other.line, []).append(_span(other))
            yield far, posixpath.dirname(then.path), f"`{other.text}` (line {other.line})"
    for number in range(max(mention.line - WINDOW, 1), mention.line + WINDOW + 1):
        if number > len(lines):
            break
        for found in _FOLDERED.finditer(lines[number - 1]):
            if any(found.start() < b and found.end() > a for a, b in taken.get(number, ())):
                continue  # the mention itself, or a resolved one
            path = normalize(found.group(0).lstrip("~"), item.folder)
            if path is not None and "/" in path:
                where = f"`{found.group(0)}` (line {number})"
                yield abs(number - mention.line), posixpath.dirname(path), where


def _choose(
    mention: Mention, candidates: tuple[str, ...], evidence: Iterator[tuple[int, str, str]]
) -> tuple[str, str] | None:
    """The candidate in the folder the nearest evidence names, when that is one."""
    matched: dict[int, dict[str, str]] = {}
    for far, folder, why in evidence:
        for path in candidates:
            home = posixpath.dirname(path)
            if home == folder or (folder and home.endswith("/" + folder)):
                matched.setdefault(far, {}).setdefault(path, why)
    if not matched:
        return None
    nearest = matched[min(matched)]
    if len(nearest) != 1:
        return None
    return next(iter(nearest.items()))


def _span(mention: Mention) -> tuple[int, int]:
    """The columns of its line a mention's text takes."""
    return mention.column, mention.column + len(mention.text)


def _memory_lines(root: Path, file: str) -> list[str]:
    """The memory file's lines as on disk (what its mentions were read from), split at
    newlines alone as the grammar counts them (`splitlines` splits at U+2028 too)."""
    try:
        return (root / file).read_bytes().decode("utf-8", "replace").split("\n")
    except OSError:
        return []
