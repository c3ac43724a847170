"""Writing the serena format: a new file, and edits spliced into an existing one.

Split from serena.py, which parses (what both share is serena_doc.py): reading a store
never needs this module, so it is imported only when something is written
(`SerenaFormat.render`). Every edit touches only
the lines it must (a changed citation its row, a changed value its bullet); see the
format's description in serena.py.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from memory_enhancement.core.citations import format_lines
from memory_enhancement.core.ids import PREFIX
from memory_enhancement.core.model import Citation, Link, Memory, MemoryMeta
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.store.formats import markdown as md
from memory_enhancement.store.formats.base import LineEdits, as_lines, content_of
from memory_enhancement.store.formats.link_grammar import RELATED
from memory_enhancement.store.formats.serena_doc import (
    CITATIONS,
    LINKS,
    MANAGED,
    META_BULLET,
    META_WRITE,
    METADATA,
    CitationEntry,
    SerenaDocument,
)

_DEFAULT_HEADER = ["File", "Line", "Snippet", "Verified"]


def render_new(memory: Memory) -> str:
    parts = []
    content = close_fence(content_of(memory.content))
    if content:
        parts.append(content + "\n")
    if memory.meta.citations:
        rows = [_render_row(_DEFAULT_KEYS, c) for c in memory.meta.citations]
        parts.append("## Citations\n\n" + "".join(_default_header() + rows))
    if memory.links:
        parts.append("## Links\n\n" + "".join(_link_bullet(link) for link in memory.links))
    bullets = [meta_bullet(name, memory.meta) for name in META_WRITE]
    parts.append("## Metadata\n\n" + "".join(b for b in bullets if b))
    return "\n".join(parts)


_DEFAULT_KEYS = ("file", "line", "snippet", "verified")


def _default_header() -> list[str]:
    dashes = ["-" * len(h) for h in _DEFAULT_HEADER]
    return [
        "| " + " | ".join(_DEFAULT_HEADER) + " |\n",
        "|" + "|".join(f"-{d}-" for d in dashes) + "|\n",
    ]


def _render_row(columns: tuple[str, ...], citation: Citation) -> str:
    has_line = "line" in columns
    extra = dict(citation.extra)
    cells = []
    for key in columns:
        if key == "file":
            cells.append(md.escape_cell(citation.target if has_line else citation.ref))
        elif key == "line":
            cells.append("" if citation.is_url else format_lines(citation))
        elif key == "snippet":
            cells.append(md.code_span(md.escape_cell(citation.snippet)) if citation.snippet else "")
        elif key == "verified":
            cells.append(md.escape_cell(citation.verified or ""))
        elif key == "commit":
            cells.append(md.escape_cell(citation.commit or ""))
        else:
            cells.append(extra.get(key[2:], ""))
    return "| " + " | ".join(cells) + " |\n"


def _link_bullet(link: Link) -> str:
    if link.type != "link":
        return f"- [link:{link.type}]({link.target})\n"
    return f"- {link.target}\n"


def meta_bullet(name: str, meta: MemoryMeta, label: str | None = None, lead: str = "- ") -> str:
    value = getattr(meta, name)
    if value is None or value == ():
        return ""
    if name == "tags":
        text = ", ".join(value)
    elif name == "confidence":
        text = f"{value:.4g}"
    elif name == "citation_id":
        text = f"{PREFIX}{value}"
    elif name in ("created_at", "updated_at", "expires_at", "last_verified"):
        text = format_timestamp(value)
    else:
        text = " ".join(str(value).split())
    return f"{lead}**{label or META_WRITE[name]}**: {text}\n"


def close_fence(content: str) -> str:
    """Content with its last code fence closed, when it ends inside one.

    The managed sections are written after the content; behind an unclosed
    fence they would be read back as code and their values lost.
    """
    fence = md.open_fence(as_lines(content))
    return f"{content}\n{fence}" if fence else content


def splice_content(doc: SerenaDocument, content: str) -> str | None:
    """The file with its content lines edited in place, line by line: the lines that stay
    keep their bytes and places, and so do the managed sections between them (a Citations
    section of the author's own in mid-file stays where it is). None when the file has no
    content to edit yet.

    Lines are deleted one by one (never a range across a managed section); new lines go
    after the content line before them, so they never land inside a managed section.
    """
    inside: set[int] = set()
    for section in (doc.section(k) for k in MANAGED):
        if section is not None:
            inside.update(range(section.start, section.end))
    where = [i for i in range(len(doc.lines)) if i not in inside]
    while where and not doc.lines[where[0]].strip():
        where.pop(0)
    while where and not doc.lines[where[-1]].strip():
        where.pop()
    if not where:
        return None
    old = [doc.lines[i].removesuffix("\n") for i in where]
    new = content_of(content).split("\n")
    edits = LineEdits()
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for k in range(i1, i2):
            edits.delete(where[k], where[k] + 1)
        at = where[i1] if i1 < i2 else (where[i1 - 1] + 1 if i1 else where[0])
        edits.insert(at, [line + "\n" for line in new[j1:j2]])
    return "".join(edits.apply(doc.lines))


def replace_content(doc: SerenaDocument, content: str) -> str:
    """New content goes where the first unmanaged lines were; managed sections stay."""
    managed = sorted(
        (s for s in (doc.section(k) for k in MANAGED) if s is not None), key=lambda s: s.start
    )
    body = close_fence(content_of(content)) if managed else content_of(content)
    new_lines = as_lines(body + "\n") if body else []
    kept = [doc.lines[s.start : s.end] for s in managed]
    out: list[str] = list(new_lines)
    for block in kept:
        block = list(block)
        if block and not block[-1].endswith("\n"):
            block[-1] += "\n"
        if out and out[-1].strip():
            out.append("\n")
        out.extend(block)
    return "".join(out)


def edit_citations(doc: SerenaDocument, wanted: list[Citation]) -> str:
    edits = LineEdits()
    inline: dict[int, list[tuple[tuple[int, int], str]]] = {}
    old = [e.citation for e in doc.entries]
    appended: list[Citation] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, wanted, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1)
        for k in range(paired):
            _rewrite_entry(doc, doc.entries[i1 + k], wanted[j1 + k], edits, inline)
        for k in range(i1 + paired, i2):
            _delete_entry(doc.entries[k], edits, inline)
        extra = wanted[j1 + paired : j2]
        if extra:
            at = i1 + paired
            anchor = doc.entries[at - 1] if at > 0 else None
            following = doc.entries[at] if at < len(doc.entries) else None
            if anchor is not None and anchor.span is None and doc.table:
                edits.insert(anchor.line + 1, [_render_row(doc.table.columns, c) for c in extra])
            elif anchor is None and following is not None and following.span is None and doc.table:
                # New first citations go before the first row, not after the last:
                # appended, they would read back in another order.
                edits.insert(following.line, [_render_row(doc.table.columns, c) for c in extra])
            else:
                appended.extend(extra)
    for line_no, changes in inline.items():
        text = doc.lines[line_no]
        for (start, end), new in sorted(changes, reverse=True):
            text = text[:start] + new + text[end:]
        if text.strip() in ("", "-", "*", "+"):
            edits.delete(line_no, line_no + 1)
        else:
            edits.replace(line_no, line_no + 1, [text])
    if appended:
        _append_rows(doc, appended, edits)
    lines = edits.apply(doc.lines)
    return _drop_empty_citations_section("".join(lines))


def _rewrite_entry(
    doc: SerenaDocument,
    entry: CitationEntry,
    new: Citation,
    edits: LineEdits,
    inline: dict[int, list[tuple[tuple[int, int], str]]],
) -> None:
    if entry.span is None:
        assert doc.table is not None
        edits.replace(entry.line, entry.line + 1, [_render_row(doc.table.columns, new)])
    else:
        inline.setdefault(entry.line, []).append(
            (entry.span, f"[cite:{entry.cite_type}]({new.ref})")
        )


def _delete_entry(
    entry: CitationEntry, edits: LineEdits, inline: dict[int, list[tuple[tuple[int, int], str]]]
) -> None:
    if entry.span is None:
        edits.delete(entry.line, entry.line + 1)
    else:
        inline.setdefault(entry.line, []).append((entry.span, ""))


def _append_rows(doc: SerenaDocument, citations: list[Citation], edits: LineEdits) -> None:
    if doc.table is not None:
        edits.insert(doc.table.end, [_render_row(doc.table.columns, c) for c in citations])
        return
    table = _default_header() + [_render_row(_DEFAULT_KEYS, c) for c in citations]
    section = doc.section(CITATIONS)
    if section is not None:
        _append_to_section(doc.lines, section, table, edits)
        return
    # Laid out so that removing the last citation (which drops the section, see
    # `_drop_empty_citations_section`) gives the file back byte for byte: before a
    # heading, the section and its one trailing blank line; at the end, one blank line
    # before it whatever the file ends with (a removal takes exactly that one back).
    block = ["## Citations\n", "\n", *table]
    anchor = md.first_section(doc.sections, LINKS, RELATED, METADATA)
    if anchor is not None:
        edits.insert(anchor.start, [*block, "\n"])
    else:
        edits.insert(len(doc.lines), _tail_gap(doc.lines, always=True) + block)


def _append_to_section(
    lines: list[str], section: md.Section, block: list[str], edits: LineEdits, tight: bool = False
) -> None:
    """Add block after the last non-blank line of a section, keeping the blank lines after it.

    `tight` (the block is bullets) continues a bullet list without a blank line.
    """
    end = section.end
    while end > section.start + 1 and not lines[end - 1].strip():
        end -= 1
    last = lines[end - 1]
    lead = [] if last.endswith("\n") else ["\n"]
    if not (tight and re.match(r"\s*[-*+]\s", last)):
        lead.append("\n")
    edits.insert(end, lead + block)


def append_links(doc: SerenaDocument, links: list[Link]) -> str:
    """New links become bullets of `## Links` (created before `## Metadata`, else at the end)."""
    edits = LineEdits()
    bullets = [_link_bullet(link) for link in links]
    section = doc.section(LINKS)
    if section is not None:
        _append_to_section(doc.lines, section, bullets, edits, tight=True)
    else:
        block = ["## Links\n", "\n", *bullets]
        anchor = doc.section(METADATA)
        if anchor is not None:
            lead = ["\n"] if anchor.start > 0 and doc.lines[anchor.start - 1].strip() else []
            edits.insert(anchor.start, lead + block + ["\n"])
        else:
            edits.insert(len(doc.lines), _tail_gap(doc.lines) + block)
    return "".join(edits.apply(doc.lines))


def _tail_gap(lines: list[str], *, always: bool = False) -> list[str]:
    """What to add before appending a block at the end: a newline and a blank line
    (`always`: a blank line even after blank lines, so that it alone can be taken back).

    A file that ends inside an unclosed code fence gets the fence closed first,
    or the new section would be read back as code and the edit silently lost.
    """
    if not lines:
        return []
    last = lines[-1]
    gap = [] if last.endswith("\n") else ["\n"]
    fence = md.open_fence(lines)
    if fence:
        gap.append(fence + "\n")
    if always or fence or last.strip() or not last.endswith("\n"):
        gap.append("\n")
    return gap


def _drop_empty_citations_section(text: str) -> str:
    """Without citations left, the citations table goes: the whole section when it held
    nothing else, else the table's header (and the blank line an added table came with),
    so adding and then removing a citation gives the file back as it was."""
    lines = as_lines(text)
    section = md.first_section(md.find_sections(lines), CITATIONS)
    if section is None:
        return text
    body = [line.strip() for line in lines[section.start + 1 : section.end]]
    rows = [line for line in body if line]
    if rows and not all(r.startswith("|") for r in rows):
        return _drop_empty_table(lines, section) or text
    if len(rows) > 2:
        return text
    at_end = section.end == len(lines)
    del lines[section.start : section.end]
    if at_end and lines and lines[-1] == "\n":
        lines.pop()  # the blank line `_append_rows` put before it; the file's own stay
    return "".join(lines)


def _drop_empty_table(lines: list[str], section: md.Section) -> str | None:
    """The text without the section's table when only its header is left (None when
    the section has rows in a table, or no table)."""
    tables = [
        i
        for i in range(section.start + 1, section.end - 1)
        if lines[i].lstrip().startswith("|") and md.is_separator_row(md.split_row(lines[i + 1]))
    ]
    if len(tables) != 1:
        return None
    head = tables[0]
    if head + 2 < section.end and lines[head + 2].lstrip().startswith("|"):
        return None  # it has rows: not ours to drop
    start = head - 1 if head - 1 > section.start and not lines[head - 1].strip() else head
    return "".join(lines[:start] + lines[head + 2 :])


def edit_metadata(doc: SerenaDocument, meta: MemoryMeta) -> str:
    old = doc.memory.meta
    changed = [name for name in META_WRITE if getattr(meta, name) != getattr(old, name)]
    if not changed:
        return doc.text
    edits = LineEdits()
    additions = []
    for name in changed:
        line_no = doc.meta_lines.get(name)
        if line_no is None:
            additions.append(meta_bullet(name, meta))
            continue
        match = META_BULLET.match(doc.lines[line_no].rstrip("\r\n"))
        assert match is not None
        bullet = meta_bullet(name, meta, match["label"].strip(), match["lead"])
        edits.replace(line_no, line_no + 1, [bullet] if bullet else [])
    additions = [a for a in additions if a]
    section = doc.section(METADATA)
    if additions and section is not None:
        _append_to_section(doc.lines, section, additions, edits, tight=True)
    elif additions:
        edits.insert(len(doc.lines), [*_tail_gap(doc.lines), "## Metadata\n", "\n", *additions])
    return "".join(edits.apply(doc.lines))
