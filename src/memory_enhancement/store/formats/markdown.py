"""Markdown body structure shared by both file formats.

Two tools for two jobs. Sections are found with a small fence-aware line scan,
because editing in place needs exact line spans and must stay cheap enough for
listings. Links are found with markdown-it-py, because deciding what is a link
(not inside a code span or a fenced block, escapes, nested brackets) is a real
parser's job; it is only run when links are asked for.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import unquote

from memory_enhancement.core.model import Link, LinkKind, is_url

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

MANAGED_LINKS = "links"
RELATED = "related"

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
_FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})")
# [[target#section|alias]]; a target never starts with ':' (that is a POSIX class, [[:space:]]).
_WIKI = re.compile(r"\[\[(?![\s:])([^\[\]|#\n]+)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
_MEM_ID = re.compile(r"\[mem:([A-Za-z0-9]{4,12})\]")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_SEPARATOR_CELL = re.compile(r":?-{1,}:?")
_CODE_SPAN = re.compile(r"(`+)(.*?)\1", re.S)
_NEEDS_PARSER = re.compile(r"[`\\<&]|!\[")
_SIMPLE_LINK = re.compile(r"\[([^\[\]]*)\]\(([^()\s]+)\)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(.*)$")
_BARE_ID = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_./-]*)(?:\s+[-–—:]\s.*|\s*[-–—])?$")
_TYPED_PREFIX = "link:"


@dataclass(frozen=True)
class Section:
    """A level-2 section: its heading line and the lines up to the next heading of level <= 2."""

    title: str
    start: int
    end: int

    @property
    def key(self) -> str:
        return section_key(self.title)


def section_key(title: str) -> str:
    return " ".join(title.strip().strip("*:").split()).lower()


def fence_mask(lines: list[str]) -> list[bool]:
    """For each line, whether it belongs to a fenced code block (fences included)."""
    return _scan_fences(lines)[0]


def open_fence(lines: list[str]) -> str:
    """The fence a text ends inside of ("" when all are closed).

    CommonMark runs an unclosed fence to the end of the document, so anything
    appended after it would be code, not markdown.
    """
    return _scan_fences(lines)[1]


def _scan_fences(lines: list[str]) -> tuple[list[bool], str]:
    mask = [False] * len(lines)
    fence = ""
    for i, line in enumerate(lines):
        if fence:
            mask[i] = True
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = ""
            continue
        match = _FENCE_OPEN.match(line)
        if match and not (match[1][0] == "`" and "`" in line.strip()[len(match[1]) :]):
            fence = match[1]
            mask[i] = True
    return mask, fence


def headings(lines: list[str], mask: list[bool] | None = None) -> Iterator[tuple[int, int, str]]:
    """Yield (line index, level, title) of every ATX heading outside fences."""
    mask = mask if mask is not None else fence_mask(lines)
    for i, line in enumerate(lines):
        if mask[i] or not line.lstrip(" ").startswith("#"):
            continue
        match = _HEADING.match(line.rstrip("\r\n"))
        if match:
            yield i, len(match[1]), (match[2] or "").strip()


def find_sections(lines: list[str], mask: list[bool] | None = None) -> list[Section]:
    """Level-2 sections, each ending where the next level-1 or level-2 heading starts."""
    marks = [(i, level, title) for i, level, title in headings(lines, mask) if level <= 2]
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


# -- links --------------------------------------------------------------------


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def extract_links(text: str, *, line_offset: int = 0) -> list[Link]:
    """Every memory link written in a markdown body, in document order.

    The block structure (fences, level-2 sections, list items) comes from the
    line scan above; only lines that can hold a link go through markdown-it's
    inline parser, which decides what is a link (not in a code span, escapes,
    nested brackets). Parsing whole documents was five times slower, and it is
    the cost of indexing a store. `line_offset` turns 0-based body lines into
    1-based lines of the whole file (after a frontmatter block, say).
    """
    if "[" not in text and "- " not in text:
        return []
    lines = text.split("\n")
    mask = fence_mask(lines)
    links: list[Link] = []
    section = ""
    for i, line in enumerate(lines):
        if mask[i]:
            continue
        if line.lstrip(" ").startswith("#"):
            heading = _HEADING.match(line.rstrip("\r"))
            if heading and len(heading[1]) <= 2:
                section = section_key(heading[2] or "") if len(heading[1]) == 2 else ""
                continue
        number = i + 1 + line_offset
        default_type = RELATED if section == RELATED else "link"
        if section in (MANAGED_LINKS, RELATED):
            item = _LIST_ITEM.match(line)
            bare = _BARE_ID.match(item[1].strip()) if item else None
            if bare:
                links.append(Link(bare[1], default_type, LinkKind.BARE, number))
                continue
        if "](" in line or "[[" in line or "[mem:" in line:
            links.extend(_inline_links(line, default_type, number))
    return links


def _inline_links(line: str, default_type: str, number: int) -> Iterator[Link]:
    simple = _simple_links(line, default_type, number)
    if simple is not None:
        yield from simple
        return
    tokens = _parser().parseInline(line.strip())
    children = tokens[0].children if tokens and tokens[0].children else []
    href: str | None = None
    label: list[str] = []
    for child in children:
        if child.type == "link_open":
            href = str(child.attrGet("href") or "")
            label = []
        elif child.type == "link_close" and href is not None:
            link = _markdown_link(href, "".join(label), default_type, number)
            if link:
                yield link
            href = None
        elif child.type in ("text", "code_inline"):
            if href is not None:
                label.append(child.content)
            elif child.type == "text":
                yield from _text_links(child.content, default_type, number)


def _simple_links(line: str, default_type: str, number: int) -> list[Link] | None:
    """The links of a plain line, found without the parser; None when the parser is needed.

    A line with no code span, escape, entity, autolink, HTML or image, whose every
    `](` opens a `[text](destination)` without nesting or a title, reads the same
    to CommonMark and to this regex. Most lines that hold links are like that
    (`- [title](other.md)`), and skipping the parser there is most of what makes
    indexing fast; any other line goes to markdown-it.
    """
    if _NEEDS_PARSER.search(line):
        return None
    matches = list(_SIMPLE_LINK.finditer(line))
    if len(matches) != line.count("]("):
        return None
    links: list[Link] = []
    at = 0
    for match in matches:
        links.extend(_text_links(line[at : match.start()], default_type, number))
        link = _markdown_link(match[2], match[1], default_type, number)
        if link:
            links.append(link)
        at = match.end()
    links.extend(_text_links(line[at:], default_type, number))
    return links


def _markdown_link(href: str, label: str, default_type: str, line: int) -> Link | None:
    if label.startswith(_TYPED_PREFIX):
        kind = label[len(_TYPED_PREFIX) :].strip() or "link"
        target = unquote(href.split("#", 1)[0]).strip()
        return Link(target, kind, LinkKind.TYPED, line) if target else None
    if label.startswith("cite:") or is_url(href) or href.startswith(("mailto:", "#")):
        return None
    target = unquote(href.split("#", 1)[0].split("?", 1)[0]).strip()
    if not target.lower().endswith(".md"):
        return None
    return Link(target, default_type, LinkKind.MARKDOWN, line)


def _text_links(text: str, default_type: str, line: int) -> Iterator[Link]:
    found = []
    for match in _WIKI.finditer(text):
        target = match[1].strip()
        if target:
            found.append((match.start(), Link(target, default_type, LinkKind.WIKI, line)))
    for match in _MEM_ID.finditer(text):
        found.append((match.start(), Link(f"mem:{match[1]}", default_type, LinkKind.MEM_ID, line)))
    for _, link in sorted(found, key=lambda pair: pair[0]):
        yield link
