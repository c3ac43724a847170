"""The links a markdown body makes to other memories, written the ways people write them.

Real Serena stores rarely use link syntax. They list related memories as
bullets (``- `beta` - why``, `- **beta**: why`, `- beta.md`), under headings
in any language (`## Related Memories`, `## 関連メモリ`, `## Relacionado`), in
index tables, as `mem:beta` references, and only sometimes as `[[beta]]` or
`[text](beta.md)`. What is written is found here; whether a name is a memory is
only known when the store is (core.links resolves it). So this module emits two
strengths of link:

- explicit links (markdown, wiki, typed, `[mem:ID]`, `mem:name`, and bullets of
  the `## Links` / `## Related` sections the tool writes itself): a target that
  matches nothing is a broken link;
- candidates (LinkKind.ITEM: the entry a list item or a table row starts with;
  LinkKind.NAMED: a name in the items of a related-material section): a link
  only when it names a memory (or a file of the repository), else nothing.
  A word in a sentence that merely equals a memory name is never a candidate.

The block structure (fences, headings, list items) comes from a line scan;
only lines with link syntax and code spans go through markdown-it's inline
parser (see markdown.py for why).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import TYPE_CHECKING
from urllib.parse import unquote

from memory_enhancement.core.model import Link, LinkKind, is_url
from memory_enhancement.store.formats import link_grammar as g
from memory_enhancement.store.formats.markdown import (
    HEADING,
    fence_mask,
    section_key,
)

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


def extract_links(text: str, *, line_offset: int = 0, mask: list[bool] | None = None) -> list[Link]:
    """Every link and link candidate written in a markdown body, in document order.

    `line_offset` turns 0-based body lines into 1-based lines of the whole file
    (after a frontmatter block, say); `mask` is the fence mask of these lines when
    the caller has it already (see markdown.fence_mask).
    """
    lines = text.split("\n")
    if mask is None or len(mask) < len(lines) - 1:
        mask = fence_mask(lines)
    elif len(mask) < len(lines):
        mask = [*mask, False]  # the empty line after a final newline
    links: list[Link] = []
    section = ""  # the level-2 section (the managed `## Links` / `## Related`)
    related_level = 0  # the level of the heading that opened related material, 0 if none
    for i, line in enumerate(lines):
        if mask[i]:
            continue
        if line.lstrip(" ").startswith("#"):
            heading = HEADING.match(line.rstrip("\r"))
            if heading:
                level, title = len(heading[1]), heading[2] or ""
                if level <= 2:
                    section = section_key(title) if level == 2 else ""
                if related_level and level <= related_level:
                    related_level = 0
                if not related_level and is_related(title):
                    related_level = level
                continue
        if not (related_level or _may_link(line)):
            continue
        number = i + 1 + line_offset
        in_related = bool(related_level) or section == g.RELATED
        default_type = g.RELATED if section == g.RELATED else "link"
        if section in g.MANAGED_FIELDS:
            if "](" in line or "[[" in line or "mem:" in line:
                links.extend(_inline_links(line, default_type, number))
            continue
        links.extend(_line_links(line, section, in_related, default_type, number))
    return links


def _may_link(line: str) -> bool:
    """Cheap test that lets most lines skip the scan (outside related material): link
    syntax, a list item whose entry reads as a name, a table row, or a `Related:` label."""
    if not line or line.isspace():
        return False
    if "](" in line or "[[" in line or "mem:" in line:
        return True
    if "`" in line and _may_refer(line) and g.PROSE_REF.search(line):
        return True
    start = line.lstrip()[:1]
    if start in g.ITEM_STARTS:
        entry = g.ITEM_ENTRY.match(line)
        if entry is not None:
            return entry.end() > entry.end("marker")  # an item: only one whose entry is a name
    if start == "|":
        return g.NAME_CELL.search(line) is not None and not g.SEPARATOR_ROW.match(line)
    colon = line.find(":", 0, 36)
    if colon < 0:
        colon = line.find("：", 0, 36)
    return colon > 0 and g.MAYBE_RELATED.search(line, 0, colon) is not None


def _may_refer(line: str) -> bool:
    """Substring tests that rule out g.PROSE_REF for most lines without running it."""
    return (
        "memor" in line
        or "Memor" in line
        or "ee `" in line
        or "参照" in line
        or "に記録" in line
        or "メモリ" in line
    )


@lru_cache(maxsize=4096)
def is_related(title: str) -> bool:
    """Whether a heading introduces related material, in any of the languages known."""
    if not g.MAYBE_RELATED.search(title):
        return False  # most headings and `Label:` lines: one search, no normalising
    text = unicodedata.normalize("NFKC", title).casefold()
    if any(word in text for word in g.RELATED_CJK):
        return True
    words = " ".join(re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)*", text))
    return any(f" {word} " in f" {words} " for word in g.RELATED_WORDS)


def _line_links(
    line: str, section: str, in_related: bool, default_type: str, number: int
) -> list[Link]:
    found: list[Link] = []
    item = g.ITEM.match(line)
    body = line[item.end() :].strip() if item else None
    if body is None:
        if line.lstrip().startswith("|"):
            found.extend(_table_links(line, default_type, number))
    elif section in (g.MANAGED_LINKS, g.RELATED):
        bare = g.BARE_ID.match(body)
        if bare:
            return [Link(bare[1], default_type, LinkKind.BARE, number)]
    if "](" in line or "[[" in line or "mem:" in line:
        found.extend(_inline_links(line, default_type, number))
    if "`" in line and _may_refer(line):
        for match in g.PROSE_REF.finditer(line):
            name = match["name"] or match["after"] or match["before"]
            if _name_like(name):
                found.append(Link(name, default_type, LinkKind.NAMED, number))
    if body is not None:
        lead = g.LEAD.match(body) or g.MD_ENTRY.match(body)
        if lead and ("rest" not in lead.re.groupindex or _is_lead(lead)):
            found.append(Link(lead["name"], default_type, LinkKind.ITEM, number))
        if in_related:
            found.extend(Link(n, default_type, LinkKind.NAMED, number) for n in _names_in(body))
    elif _introduces(line):
        found.extend(Link(n, default_type, LinkKind.NAMED, number) for n in _names_in(line))
    return found if len(found) < 2 else list(_unique(found))


def _introduces(line: str) -> bool:
    """`Related: `mem:a`, `b``: a paragraph line that starts by naming related material."""
    colon = line.find(":", 0, 36)
    if colon < 0:
        colon = line.find("：", 0, 36)
        if colon < 0:
            return False
    if not g.MAYBE_RELATED.search(line, 0, colon):
        return False
    return is_related(line[:colon].strip().strip("*_ "))


def _table_links(line: str, default_type: str, number: int) -> Iterator[Link]:
    """An index table: each cell that is a single name is a candidate."""
    if g.SEPARATOR_ROW.match(line):
        return
    for match in g.NAME_CELL.finditer(line):
        text = match["name"]
        marked = match[0].strip().startswith(("`", "**"))
        if (marked or not _a_word(text)) and _name_like(text):
            yield Link(text, default_type, LinkKind.ITEM, number)


def _names_in(text: str) -> Iterator[str]:
    """The names an item of related material mentions: code and bold spans, and
    bare tokens that read as names (`alpha_beta`, `notes/x`, `x.md`), not words.
    Link syntax and URLs are skipped here (they are links of their own)."""
    for match in g.NAMES.finditer(text):
        span = match["code"] or match["bold"]
        if span is not None:
            name = span.strip().strip("*`")
            if g.TOKEN.fullmatch(name) and _name_like(name) and not name.startswith("mem:"):
                yield name
        elif match["token"] is not None:
            token = match["token"].rstrip(".")
            if _name_like(token):
                yield token


def _a_word(text: str) -> bool:
    """A plain word (`File`, `yes`, `Count`): a table header or value, not a name."""
    return text.isalpha()


def _name_like(name: str) -> bool:
    """A memory name or path could be this: not a number, a URL, a version, an e-mail."""
    bare = name.rstrip("/")
    if not bare or len(bare) > 200 or bare.startswith("@") or "@" in bare[1:]:
        return False
    return not (bare[0].isdigit() or bare[0] == "v") or not g.NOT_A_NAME.fullmatch(bare)


def _is_lead(lead: re.Match[str]) -> bool:
    """A list item's entry: marked up evenly; a plain name before `(` is prose
    (`- ops/x (a note)`), a marked or `.md` one is an entry (``- `x` (why)``)."""
    opening, closing = lead["open"] or "", lead["close"] or ""
    mirror = {"**`": "`**", "`**": "**`"}
    if opening != mirror.get(closing, closing) or not _name_like(lead["name"]):
        return False
    name = lead["name"]
    if (
        "`" not in opening + closing
        and name.isalpha()
        and name[:1].isupper()
        and name[1:].islower()
    ):
        return False  # `- Status: done`, `- **Keywords**: ...`: a label, not a name
    marked = bool(opening) or name.lower().endswith(".md")
    return marked or not lead["rest"].strip().startswith(("(", "（"))


def _unique(found: list[Link]) -> Iterator[Link]:
    """Every explicit link; a candidate only when no link of the line names it already."""
    seen: set[str] = set()
    for link in found:
        if not link.kind.candidate:
            seen.add(_plain(link.target))
            yield link
    for link in found:
        if link.kind.candidate and _plain(link.target) not in seen:
            seen.add(_plain(link.target))
            yield link


def _plain(target: str) -> str:
    name = target.strip().removeprefix("mem:").rpartition("/")[2].casefold()
    return name[:-3] if name.endswith(".md") else name


# -- link syntax ----------------------------------------------------------------


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


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
            else:
                yield from _mem_refs(child.content, default_type, number)


def _simple_links(line: str, default_type: str, number: int) -> list[Link] | None:
    """The links of a plain line, found without the parser; None when the parser is needed.

    A line with no code span, escape, entity, autolink, HTML or image, whose every
    `](` opens a `[text](destination)` without nesting or a title, reads the same
    to CommonMark and to this regex. Most lines that hold links are like that
    (`- [title](other.md)`), and skipping the parser there is most of what makes
    indexing fast; any other line goes to markdown-it.
    """
    if g.NEEDS_PARSER.search(line):
        return None
    matches = list(g.SIMPLE_LINK.finditer(line))
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
    """`[text](other.md)`: a memory or a file of the repository; URLs and anchors are neither."""
    if label.startswith(g.TYPED_PREFIX):
        kind = label[len(g.TYPED_PREFIX) :].strip() or "link"
        target = unquote(href.split("#", 1)[0]).strip()
        return Link(target, kind, LinkKind.TYPED, line) if target else None
    if label.startswith("cite:") or is_url(href) or href.startswith(("mailto:", "#")):
        return None
    if re.match(r"^[A-Za-z][\w+.-]*:", href):  # another scheme (file:, vscode:, ...)
        return None
    target = unquote(href.split("#", 1)[0].split("?", 1)[0]).strip()
    if not target.lower().endswith(".md"):
        return None
    return Link(target, default_type, LinkKind.MARKDOWN, line)


def _text_links(text: str, default_type: str, line: int) -> Iterator[Link]:
    found = []
    for match in g.WIKI.finditer(text):
        target = match[1].strip()
        if target:
            found.append((match.start(), Link(target, default_type, LinkKind.WIKI, line)))
    for match in g.MEM_ID.finditer(text):
        found.append((match.start(), Link(f"mem:{match[1]}", default_type, LinkKind.MEM_ID, line)))
    for at, link in _mem_ref_matches(text, default_type, line):
        found.append((at, link))
    for _, link in sorted(found, key=lambda pair: pair[0]):
        yield link


def _mem_refs(text: str, default_type: str, line: int) -> Iterator[Link]:
    """`mem:beta` inside a code span (the Serena convention is to backtick it)."""
    for _, link in _mem_ref_matches(text, default_type, line):
        yield link


def _mem_ref_matches(text: str, default_type: str, line: int) -> Iterator[tuple[int, Link]]:
    """`mem:beta`, `mem:notes/beta.md`: a memory by name or path (or a citation ID)."""
    for match in g.MEM_REF.finditer(text):
        target = match[1].rstrip(".,;:")
        if target:
            yield match.start(), Link(target, default_type, LinkKind.MEM_REF, line)
