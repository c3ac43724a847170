"""Markdown body structure shared by both file formats.

Sections are found with a small fence-aware line scan, because editing in
place needs exact line spans and must stay cheap enough for listings. Links
are found in links.py, on top of this scan and markdown-it-py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

# The title is taken whole and its closing `#`s stripped after: a lazy title before
# `[ \t#]*$` was tried at every length, each retrying the tail, so a 200 KB line of `# # #`
# took minutes (the same headings come out; compared on random lines).
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*)|[ \t#]*)$")
_FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_SEPARATOR_CELL = re.compile(r":?-{1,}:?")
_CODE_SPAN = re.compile(r"(`+)(.*?)\1", re.S)


@dataclass(frozen=True)
class Section:
    """A level-2 section: its heading line and the lines up to the next heading of level <= 2."""

    title: str
    start: int
    end: int

    @cached_property
    def key(self) -> str:
        """The title as sections are looked up by (asked many times per parse)."""
        return section_key(self.title)


@lru_cache(maxsize=1024)
def section_key(title: str) -> str:
    """A title as sections are looked up by (the same few titles recur across a store)."""
    return " ".join(title.strip().strip("*:").split()).lower()


def fence_mask(lines: Sequence[str]) -> list[bool]:
    """For each line, whether it belongs to a fenced code block (fences included)."""
    return _scan_fences(lines)[0]


def open_fence(lines: list[str]) -> str:
    """The fence a text ends inside of ("" when all are closed).

    CommonMark runs an unclosed fence to the end of the document, so anything
    appended after it would be code, not markdown.
    """
    return _scan_fences(lines)[1]


def fences(lines: Sequence[str]) -> tuple[list[bool], int | None]:
    """`fence_mask` of the lines, and the line that opens the fence they end inside of
    (None when all are closed), in one scan."""
    mask, fence, opened = _scan_fences(lines)
    return mask, opened if fence else None


def _scan_fences(lines: Sequence[str]) -> tuple[list[bool], str, int]:
    mask = [False] * len(lines)
    fence = ""
    opened = -1
    for i, line in enumerate(lines):
        if fence:
            mask[i] = True
            if fence in line:  # a cheap test first: most code lines close nothing
                stripped = line.strip()
                if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                    fence = ""
            continue
        if "```" not in line and "~~~" not in line:
            continue  # no fence can open here (every line is looked at, so keep it cheap)
        match = _FENCE_OPEN.match(line)
        if match and not (match[1][0] == "`" and "`" in line.strip()[len(match[1]) :]):
            fence, opened = match[1], i
            mask[i] = True
    return mask, fence, opened


def headings(
    lines: Sequence[str], mask: list[bool] | None = None
) -> Iterator[tuple[int, int, str]]:
    """Yield (line index, level, title) of every ATX heading outside fences."""
    mask = mask if mask is not None else fence_mask(lines)
    # A heading's `#` is among a line's first four characters (at most three spaces before).
    for i in [i for i, line in enumerate(lines) if "#" in line[:4]]:
        line = lines[i]
        if mask[i] or not line.lstrip(" ").startswith("#"):
            continue
        match = HEADING.match(line.rstrip("\r\n"))
        if match:
            yield i, len(match[1]), (match[2] or "").rstrip(" \t#").strip()


def find_sections(
    lines: list[str],
    mask: list[bool] | None = None,
    heads: list[tuple[int, int, str]] | None = None,
) -> list[Section]:
    """Level-2 sections, each ending where the next level-1 or level-2 heading starts.

    `heads` are the headings of these lines when the caller has them already.
    """
    if heads is None:
        heads = list(headings(lines, mask))
    marks = [(i, level, title) for i, level, title in heads if level <= 2]
    sections = []
    for n, (i, level, title) in enumerate(marks):
        if level != 2:
            continue
        end = marks[n + 1][0] if n + 1 < len(marks) else len(lines)
        sections.append(Section(title, i, end))
    return sections


def first_section(sections: list[Section], *keys: str) -> Section | None:
    for section in sections:
        if section.key in keys:
            return section
    return None


# -- tables -------------------------------------------------------------------


def split_row(line: str) -> list[str]:
    """Split a table row on unescaped pipes; cells keep their `\\|` escapes."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip() for cell in _CELL_SPLIT.split(text)]


def is_separator_row(cells: list[str]) -> bool:
    return bool(cells) and all(_SEPARATOR_CELL.fullmatch(c.replace(" ", "")) for c in cells)


def cell_text(cell: str) -> str:
    """The text of a table cell: pipes unescaped and one code span unwrapped."""
    text = cell.strip().replace("\\|", "|")
    match = _CODE_SPAN.fullmatch(text)
    if match:
        inner = match[2]
        if len(inner) >= 2 and inner.startswith(" ") and inner.endswith(" ") and inner.strip():
            inner = inner[1:-1]
        return inner
    return text


def code_span(text: str) -> str:
    """Wrap text in a code span that survives any backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def escape_cell(text: str) -> str:
    """Make text safe inside a table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")
