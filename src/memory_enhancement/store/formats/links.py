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
from functools import lru_cache

from memory_enhancement.core.model import Link, LinkKind
from memory_enhancement.store.formats import link_grammar as g
from memory_enhancement.store.formats.link_syntax import inline_links
from memory_enhancement.store.formats.markdown import fence_mask, headings, section_key


def extract_links(
    text: str,
    *,
    line_offset: int = 0,
    mask: list[bool] | None = None,
    heads: list[tuple[int, int, str]] | None = None,
) -> list[Link]:
    """Every link and link candidate written in a markdown body, in document order.

    `line_offset` turns 0-based body lines into 1-based lines of the whole file
    (after a frontmatter block, say); `mask` (see markdown.fence_mask) and `heads`
    (markdown.headings) are those of these lines when the caller has them already.

    Indexing a store runs this on every line of every memory, so the loop decides
    what a line can be from its first character and sends only the few lines that
    may link to `_line_links` (most lines are blank, prose or plain list items).
    """
    lines = text.split("\n")
    # g.PROSE_REF_EU only where it can be: Spanish, Portuguese, French, Italian and German
    # prose hardly runs a paragraph without a letter such as á, ç, é, ü or ß, and a plain
    # ASCII memory (the shared corpus, in English) is not searched for "ver `x`".
    european = not text.isascii()
    if mask is None or len(mask) < len(lines) - 1:
        mask = fence_mask(lines)
    elif len(mask) < len(lines):
        mask = [*mask, False]  # the empty line after a final newline
    if heads is None:
        heads = list(headings(lines, mask))
    heading_at = {i: (level, title) for i, level, title in heads}
    links: list[Link] = []
    section = ""  # the level-2 section (the managed `## Links` / `## Related`)
    related_level = 0  # the level of the heading that opened related material, 0 if none
    item_match = g.ITEM_ENTRY.match
    for i, line in enumerate(lines):
        if not line or mask[i]:
            continue
        lead = line
        first = line[0]
        if first == " " or first == "\t":
            lead = line.lstrip()
            if not lead:
                continue
            first = lead[0]
        if first == "#" and i in heading_at:
            level, title = heading_at[i]
            if level <= 2:
                section = section_key(title) if level == 2 else ""
            if related_level and level <= related_level:
                related_level = 0
            if not related_level and is_related(title):
                related_level = level
            if "](" in line or "[[" in line or "mem:" in line:  # `#### [概览](memory:x)`
                links.extend(inline_links(line, "link", i + 1 + line_offset))
            if "`" in line:  # `## VS-10 — completo, ver `planning/x``
                links.extend(_prose_refs(line, "link", i + 1 + line_offset, european))
            continue
        # A bullet needs a space after it (`**Bold**` opens no item): no match tried then.
        bullet = first in g.ITEM_STARTS and (first.isdigit() or lead[1:2].isspace())
        entry = item_match(line) if bullet else None
        if not related_level:
            if entry is None and first != "|" and "`" not in line:
                # Prose without code (most lines): link syntax or a `Related:` label, tested
                # here rather than in _may_link (a call per line was a tenth of the scan).
                if "](" not in line and "[[" not in line and "mem:" not in line:
                    colon = line.find(":", 0, 36)
                    if colon < 0 and european:  # `：` is not ASCII
                        colon = line.find("：", 0, 36)
                    if colon <= 0 or not is_related(line[:colon].strip().strip("*_ ")):
                        continue
            elif not _may_link(line, first, entry, european, section):
                continue
        number = i + 1 + line_offset
        in_related = bool(related_level) or section == g.RELATED
        default_type = g.RELATED if section == g.RELATED else "link"
        if section in g.MANAGED_FIELDS:
            if ("](" in line or "[[" in line or "mem:" in line) and not g.ID_FIELD.match(line):
                links.extend(inline_links(line, default_type, number))
            continue
        links.extend(_line_links(line, entry, section, in_related, default_type, number, european))
    return links


def _may_link(
    line: str, first: str, entry: re.Match[str] | None, european: bool, section: str
) -> bool:
    """Cheap test that lets most lines skip the scan (outside related material): link
    syntax, a list item whose entry reads as a name, a table row naming something, or
    a `Related:` label. `first` is the line's first non-blank character, `entry` its
    g.ITEM_ENTRY match, `european` whether the memory is not plain ASCII, `section` the
    level-2 section's key. A line it passes that `_line_links` finds nothing in costs
    a scan for nothing: an item led by a label (`- **Status**: done`) and a table row of
    plain words were a third of the lines scanned in the shared corpus."""
    if "](" in line or "[[" in line or "mem:" in line:
        return True
    if "`" in line and (
        (_may_refer(line) and g.PROSE_REF.search(line))
        or (european and _sees_european(line) and g.PROSE_REF_EU.search(line))
    ):
        return True
    if entry is not None:  # an item whose entry is a name, a `- Related:` or a name list label
        marker = entry.end("marker")
        body = line[marker:]
        if entry.end() > marker and (
            entry["name"] is None  # a `.md` entry (g.MD_ENTRY)
            or _is_lead(entry)
            or section == g.MANAGED_LINKS  # a bare name is a link there (g.BARE_ID)
            or section == g.RELATED
        ):
            return True
        return _labels(body) or ("`" in body and _label_list(body) is not None)
    if first == "|":
        named, names = _cells(line)
        return bool(names) or (named and _labels(line))
    return _labels(line)


def _labels(line: str) -> bool:
    """`Related: ...`, `参照：...`: a line that starts by naming related material."""
    colon = line.find(":", 0, 36)
    if colon < 0:
        colon = line.find("：", 0, 36)
    return colon > 0 and is_related(line[:colon].strip().strip("*_ "))


# The words of g.PROSE_REF_EU, as the word before a ` `` `: one set look-up per code span,
# in the memories that are not plain ASCII.
_SEE = ("ver", "veja", "vide", "véase", "voir", "siehe", "vedi", "zie")
_SEE_WORDS = frozenset((*_SEE, "também", "también", "aussi", "auch", "anche", "ook"))


def _sees_european(line: str) -> bool:
    """Whether a word of g.PROSE_REF_EU stands before one of the line's code spans."""
    at = line.find(" `")
    while at > 0:
        word = line[max(0, at - 8) : at].rpartition(" ")[2].lstrip("(*_>\"'«¿¡").lower()
        if word in _SEE_WORDS:
            return True
        at = line.find(" `", at + 2)
    return False


def _may_refer(line: str) -> bool:
    """Substring tests that rule out g.PROSE_REF for most lines without running it."""
    return (
        "memor" in line
        or "Memor" in line
        or "ee `" in line
        or "参照" in line
        or "に記録" in line
        or "メモ" in line
        or "记忆" in line
        or "記憶" in line
        or "见" in line
        or "見" in line
        or "메모리" in line
        or "참고" in line
        or "참조" in line
    )


@lru_cache(maxsize=4096)
def is_related(title: str) -> bool:
    """Whether a heading (or a `Label:`) introduces related material, in any of the
    languages known: a CJK word anywhere, a Latin-script word whole."""
    if title.isascii():  # NFKC leaves ASCII as it is, and casefold lowers it
        text = title.lower()
        if not g.MAYBE_RELATED_ASCII.search(text):
            return False  # most headings and labels: one search
    else:
        text = unicodedata.normalize("NFKC", title).casefold()
        if not g.MAYBE_RELATED.search(text):
            return False
    if g.RELATED_CJK_ANY.search(text):
        return True
    words = " ".join(g.WORD.findall(text))
    return g.RELATED_WORD_ANY.search(f" {words} ") is not None


def _label_list(body: str) -> re.Match[str] | None:
    """An item's `Label: `a`, `b`` (g.LABEL_LIST), tried only on an item ending in a
    backtick, and compiled on the first: indexing the shared corpus is at its bound
    (issue 12), and most items hold some code but few end so (`rstrip` alone, on each
    item, cost more than the pattern)."""
    if body.endswith("`") or (body[-1:] in " \t\r" and body.rstrip().endswith("`")):
        return _label_list_pattern().match(body)
    return None


@lru_cache(maxsize=1)
def _label_list_pattern() -> re.Pattern[str]:
    return re.compile(g.LABEL_LIST)


def _line_links(
    line: str,
    entry: re.Match[str] | None,
    section: str,
    in_related: bool,
    default_type: str,
    number: int,
    european: bool,
) -> list[Link]:
    """The links and candidates of one line; `entry` is its g.ITEM_ENTRY match, if any;
    `european`, whether the memory is not plain ASCII (g.PROSE_REF_EU)."""
    found: list[Link] = []
    body = line[entry.end("marker") :].strip() if entry is not None else None
    if body is None:
        if line.lstrip().startswith("|"):
            found.extend(_table_links(line, default_type, number))
    elif section in (g.MANAGED_LINKS, g.RELATED):
        bare = g.BARE_ID.match(body)
        if bare:
            return [Link(bare[1], default_type, LinkKind.BARE, number)]
    if "](" in line or "[[" in line or "mem:" in line:
        found.extend(inline_links(line, default_type, number))
    if body is not None:
        # The entry as the scan matched it (its LEAD part), else as the stripped body reads.
        # First: a name that is also a prose reference stays the item's entry (an ITEM).
        lead = entry if entry is not None and entry["name"] else None
        lead = lead or g.LEAD.match(body) or g.MD_ENTRY.match(body)
        if lead and ("rest" not in lead.re.groupindex or _is_lead(lead)):
            found.append(Link(lead["name"], default_type, LinkKind.ITEM, number))
    if "`" in line:
        found.extend(_prose_refs(line, default_type, number, european))
    if body is not None:
        # `- 관련 메모리: `a`(why), `b``: a label opening an item, as on a line of its own
        if in_related or _labels(body):
            names = _names_in(body, wiki_in_code=in_related)
            found.extend(Link(n, default_type, LinkKind.NAMED, number) for n in names)
        elif listed := _label_list(body):
            names = _names_in(listed["names"])
            found.extend(Link(n, default_type, LinkKind.NAMED, number) for n in names)
    elif _labels(line):
        found.extend(Link(n, default_type, LinkKind.NAMED, number) for n in _names_in(line))
    return found if len(found) < 2 else list(_unique(found))


def _prose_refs(line: str, default_type: str, number: int, european: bool) -> list[Link]:
    """The names a sentence (or a heading) holding code sends the reader to (g.PROSE_REF,
    and g.PROSE_REF_EU in a memory not plain ASCII): candidates, in line order."""
    found: list[tuple[int, str]] = []
    if _may_refer(line):
        for match in g.PROSE_REF.finditer(line):
            found.append((match.start(), match["name"] or match["after"] or match["before"]))
    if european and _sees_european(line):
        found.extend((match.start(), match["after"]) for match in g.PROSE_REF_EU.finditer(line))
        found.sort()
    return [
        Link(name, default_type, LinkKind.NAMED, number) for _, name in found if _name_like(name)
    ]


def _table_links(line: str, default_type: str, number: int) -> Iterator[Link]:
    """An index table: each cell that is a single name is a candidate."""
    for text in _cells(line)[1]:
        yield Link(text, default_type, LinkKind.ITEM, number)


def _cells(line: str) -> tuple[bool, list[str]]:
    """Whether a cell of a table row is a single name (g.NAME_CELL), and the names of the
    cells that are candidates: marked up, or not a plain word (`| File | yes |`: a header,
    a value). A cell is the text between two pipes; one with a space inside is no name,
    and most cells are prose, so those are passed over before the pattern is tried."""
    named = False
    names: list[str] = []
    for cell in line.split("|")[1:-1]:
        if " " in cell.strip(" \t"):
            continue
        match = g.NAME_CELL.fullmatch(cell)
        if match is None:
            continue
        named = True
        text = match["name"]
        if (cell.strip().startswith(("`", "**")) or not _a_word(text)) and _name_like(text):
            names.append(text)
    return named, names


def _names_in(text: str, *, wiki_in_code: bool = False) -> Iterator[str]:
    """The names an item of related material mentions: code and bold spans, and
    bare tokens that read as names (`alpha_beta`, `notes/x`, `x.md`), not words.
    Link syntax and URLs are skipped here (they are links of their own). With
    `wiki_in_code` (an item under a related heading), a wiki link set off in backticks
    (``- `[[beta]]` (why)``, as Korean and Japanese stores list related memories) gives
    the name inside it; after a label on a line of prose it stays code."""
    for match in g.NAMES.finditer(text):
        span = match["code"] or match["bold"]
        if span is not None:
            name = span.strip().strip("*`")
            if wiki_in_code and name.startswith("[[") and name.endswith("]]"):
                name = name[2:-2].strip()
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
