"""`MEMORY.md`, the index of a Claude Code memory folder: its lines read, added, dropped.

Claude Code lists each memory of its folder in `MEMORY.md` as one list item,
`- [Title](file_name.md) — one-line hook`, and loads that file (its first 200 lines,
25 KB) into every session: a memory with no line there is one Claude Code never
opens. Real indexes are one plain list (AnotherSava/agwinterm, AlexSergey/opensa), a
list under one title, or items grouped under headings, by type (`## Feedback`,
`## Projects`, `## Reference`: Aleslammer/deathwatch_foundryvtt, 4444J99's) or by topic
(AnotherSava/bga-assistant), with notes of their own in between.

An edit inserts or drops whole lines and keeps every other byte: the text comes
decoded (`formats.decode`: `\\n` newlines, the file's own style restored on encoding),
and a missing final newline stays missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from memory_enhancement.store.formats import markdown
from memory_enhancement.store.formats.base import as_lines

# An index item: a list item that opens with a link to a file, then maybe a hook.
_ENTRY = re.compile(
    r"^(?P<lead>[ \t]*[-*+][ \t]+)\[(?P<title>(?:\\.|[^\]\\\n])*)\]"
    r"\((?P<target><[^>\n]*>|[^)\s]+)\)(?P<rest>.*)$"
)
_HOOK = re.compile(r"^(?P<separator>[ \t]*(?:\u2014|\u2013|--?|:)[ \t]+)(?P<hook>\S.*)$")
SEPARATOR = " \u2014 "  # the em dash Claude Code writes between a link and its hook
LOADED_LINES = 200  # what Claude Code reads of MEMORY.md at the start of a session
LOADED_BYTES = 25_000


@dataclass(frozen=True)
class Entry:
    """One index item: `lead` is its indent and bullet, `file` its target as a file name."""

    line: int
    lead: str
    title: str
    file: str
    separator: str
    hook: str
    section: int  # the line of the heading above it, -1 above every heading


@dataclass(frozen=True)
class Heading:
    line: int
    level: int
    text: str


@dataclass(frozen=True)
class Index:
    """The index as read: its lines (newlines kept), its items and its headings."""

    lines: tuple[str, ...]
    entries: tuple[Entry, ...]
    headings: tuple[Heading, ...]
    unclosed: int | None = None  # the line of a code fence never closed: the rest is code

    def listing(self, file: str) -> list[Entry]:
        """The items that list this file (`feedback_x.md`)."""
        return [entry for entry in self.entries if entry.file == file]


def read(text: str) -> Index:
    """The items and headings of an index's text; lines inside a code fence are neither
    (fences and headings as every memory's are read: formats/markdown.py)."""
    lines = tuple(as_lines(text))
    mask, unclosed = markdown.fences(lines)
    headings = [Heading(n, level, title) for n, level, title in markdown.headings(lines, mask)]
    starts = {heading.line for heading in headings}
    entries: list[Entry] = []
    section = -1  # the line of the heading above, -1 above every heading
    for n, line in enumerate(lines):
        if n in starts:
            section = n
            continue
        if mask[n] or not (item := _ENTRY.match(line.rstrip("\n"))):
            continue
        hook = _HOOK.match(item["rest"])
        separator, rest = (hook["separator"], hook["hook"]) if hook else ("", item["rest"])
        entries.append(
            Entry(n, item["lead"], item["title"], file_of(item["target"]), separator, rest, section)
        )
    return Index(lines, tuple(entries), tuple(headings), unclosed)


def file_of(target: str) -> str:
    """A link's target as the file it names: `<a b.md>`, `./a%20b.md` and `a b.md` alike."""
    target = target.removeprefix("<").removesuffix(">").split("#", 1)[0]
    return unquote(target).removeprefix("./")


def entry_line(index: Index, near: int, title: str, file: str, hook: str) -> str:
    """The new item for file, in the style of the index item above line `near` (else of its
    last item, else Claude Code's own): the same bullet and indent, the same separator."""
    above = [e for e in index.entries if e.line < near] or list(index.entries)
    style = above[-1] if above else None
    lead = style.lead if style else "- "
    separator = style.separator if style and style.separator else SEPARATOR
    title = " ".join(title.split()).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    target = f"<{file}>" if any(c in file for c in " ()<>") else file
    hook = " ".join(hook.split())
    return f"{lead}[{title}]({target}){separator}{hook}" if hook else f"{lead}[{title}]({target})"


def place(index: Index, kind: str, types: dict[str, str]) -> int:
    """The line a new item of this type goes before (see `_place`), never inside a code
    fence left open: Claude Code would read the item as code."""
    at = _place(index, kind, types)
    return at if index.unclosed is None else min(at, index.unclosed)


def _place(index: Index, kind: str, types: dict[str, str]) -> int:
    """Under the heading that names its type (`## Feedback`, `## Project state`,
    `## References`), the one already holding that type when several do; else under
    the only heading whose items are all of that type (bga-assistant keeps its feedback
    under `## User Preferences`); else after the last item of the index, where Claude
    Code appends. A document title (`# BGA Project Memory`) names nothing."""
    named = re.compile(rf"\b{re.escape(kind)}s?\b", re.IGNORECASE)
    held: dict[int, list[Entry]] = {h.line: [] for h in index.headings}
    for entry in index.entries:
        if entry.section >= 0:
            held[entry.section].append(entry)
    candidates = [
        h for h in index.headings if named.search(h.text) and (h.level > 1 or held[h.line])
    ]
    holding = [h for h in candidates if any(types.get(e.file) == kind for e in held[h.line])]
    chosen: Heading | None = (holding or candidates)[0] if holding or candidates else None
    if chosen is None:
        pure = [
            h
            for h in index.headings
            if (known := [types[e.file] for e in held[h.line] if e.file in types])
            and all(k == kind for k in known)
        ]
        chosen = pure[0] if len(pure) == 1 else None
    if chosen is None:
        return _after(index, index.entries[-1].line) if index.entries else _last(index, 0)
    if held[chosen.line]:
        return _after(index, held[chosen.line][-1].line)
    stop = next((h.line for h in index.headings if h.line > chosen.line), len(index.lines))
    return max(_last(index, chosen.line, stop), chosen.line + 1)


def insert(text: str, at: int, line: str) -> str:
    """text with line inserted before line `at` (at the end: after the last line, whose
    missing final newline stays missing)."""
    lines = list(as_lines(text))
    if at >= len(lines):
        if lines and not lines[-1].endswith("\n"):
            return text + "\n" + line
        return text + line + "\n"
    return "".join([*lines[:at], line + "\n", *lines[at:]])


def drop(text: str, file: str) -> str | None:
    """text without the items that list file, every other byte kept; None if none does."""
    index = read(text)
    gone = {entry.line for entry in index.listing(file)}
    if not gone:
        return None
    kept = [line for n, line in enumerate(index.lines) if n not in gone]
    result = "".join(kept)
    if text.endswith("\n") or not result:
        return result
    return result.removesuffix("\n")  # the last line went: the one before is last now


def beyond_load(text: str, line: int) -> bool:
    """Whether line (0-based) lies past what Claude Code loads of the index."""
    before = "".join(as_lines(text)[: line + 1])
    return line >= LOADED_LINES or len(before.encode("utf-8")) > LOADED_BYTES


def _after(index: Index, line: int) -> int:
    """The line after an item and the lines indented under it (its sub-items)."""
    at = line + 1
    while at < len(index.lines) and index.lines[at][:1] in (" ", "\t") and index.lines[at].strip():
        at += 1
    return at


def _last(index: Index, start: int, stop: int | None = None) -> int:
    """The line after the last non-blank line in [start, stop) (the end by default)."""
    at = len(index.lines) if stop is None else stop
    while at > start and not index.lines[at - 1].strip():
        at -= 1
    return at
