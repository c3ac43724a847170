"""The serena format: plain markdown, metadata in body sections (seed 004 §4.1).

This is what `.serena/memories/` holds and what most real stores look like:
no frontmatter, the memory's prose, and optionally three sections the tool
manages::

    ## Citations          a table: File | Line | Snippet | Verified (found by header name)
    ## Links              bullets: bare ids or [link:TYPE](ID)
    ## Metadata           bullets: - **Confidence**: 0.92, **Last Verified**, **Tags**, ...

Citations may also be written inline as `[cite:TYPE](TARGET)`. Links are read
from everywhere in the body (see markdown.extract_links). The content of a
memory is its body without the three managed sections.

Edits are spliced: a changed citation rewrites its own row, a new one appends a
row (creating the section before `## Links`/`## Related`/`## Metadata`, or at
the end), a changed metadata value rewrites its own bullet. Every other byte of
the file stays as it was. The writing lives in serena_write.py, which a read
never imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from memory_enhancement.core.citations import (
    make_citation,
    parse_citation,
    parse_line_spec,
)
from memory_enhancement.core.errors import InvalidInputError, MemoryToolError
from memory_enhancement.core.ids import parse_citation_id
from memory_enhancement.core.model import Citation, Link, LinkKind, Memory, MemoryMeta
from memory_enhancement.core.timestamps import maybe_timestamp
from memory_enhancement.store.formats import markdown as md
from memory_enhancement.store.formats.base import (
    Document,
    added_links,
    as_lines,
    closed_text,
    content_of,
    keep_final_newline,
)
from memory_enhancement.store.formats.links import extract_links
from memory_enhancement.store.formats.serena_doc import (
    CITATIONS,
    MANAGED,
    META_BULLET,
    META_WRITE,
    METADATA,
    CitationEntry,
    SerenaDocument,
    Table,
)

_COLUMNS = {
    "file": "file", "path": "file", "source": "file", "location": "file", "citation": "file",
    "line": "line", "lines": "line", "line(s)": "line",
    "snippet": "snippet", "code": "snippet", "text": "snippet",
    "verified": "verified", "last verified": "verified", "verified at": "verified",
    "commit": "commit",
}  # fmt: skip

_META_LABELS = {
    "created": "created_at", "created at": "created_at",
    "updated": "updated_at", "updated at": "updated_at", "last updated": "updated_at",
    "tags": "tags", "source": "source",
    "expires": "expires_at", "expires at": "expires_at", "expiry": "expires_at",
    "confidence": "confidence", "last verified": "last_verified", "links": "links",
    "id": "citation_id", "citation id": "citation_id",
}  # fmt: skip
_INLINE_CITE = re.compile(
    r"\[cite:(?P<type>[A-Za-z_-]*)\]\((?P<target>[^()\s]+(?:\([^()\s]*\))?)\)"
)


class SerenaFormat:
    """Plain markdown with managed `## Citations`, `## Links` and `## Metadata` sections."""

    name = "serena"

    def detect(self, text: str) -> bool:
        return True  # the fallback: any markdown file is a serena memory

    def parse(self, path: str, text: str, *, links: bool = True) -> SerenaDocument:
        lines = as_lines(text)
        mask = md.fence_mask(lines)
        heads = list(md.headings(lines, mask))
        sections = md.find_sections(lines, mask, heads)
        doc = SerenaDocument(Memory(path, ""), text, lines=lines, sections=sections)
        managed = [s for s in (doc.section(k) for k in MANAGED) if s is not None]
        inside: set[int] = set()
        for section in managed:
            inside.update(range(section.start, section.end))
        content = "".join(_outside(lines, managed))
        _parse_table(doc, mask)
        _parse_inline_citations(doc, mask, inside)
        doc.entries.sort(key=lambda e: (e.line, e.span or (0, 0)))
        meta, meta_links = _parse_metadata(doc)
        found_links: tuple[Link, ...] | None = None
        if links:
            found_links = (*extract_links(text, mask=mask, heads=heads), *meta_links)
        citations = tuple(e.citation for e in doc.entries)
        doc.citation_lines = [e.line + 1 for e in doc.entries]
        doc.memory = Memory(
            path, content_of(content), replace(meta, citations=citations), found_links, self.name
        )
        return doc

    def render(self, doc: Document | None, memory: Memory) -> str:
        """New text for memory; refused (InvalidInputError, nothing written) when it would
        not read back as the memory meant: see `_check`."""
        from memory_enhancement.store.formats import serena_write as write  # writes only

        if doc is None:
            _refuse_reserved_headings(memory.path, memory.content)
            text = write.render_new(memory)
            self._check(memory, text, None)
            return text
        assert isinstance(doc, SerenaDocument)
        original = doc
        new_links = added_links(doc.memory, memory)
        if closed_text(doc.text) != doc.text:  # edited as if it ended with a newline
            doc = self.parse(doc.memory.path, closed_text(doc.text), links=False)
        text = doc.text
        if content_of(memory.content) != doc.memory.content:
            _refuse_reserved_headings(memory.path, memory.content)
            before, text = doc, write.splice_content(doc, memory.content) or ""
            doc = self.parse(doc.memory.path, text, links=False)
            if doc.memory.content != content_of(memory.content):  # e.g. a fence left open
                text = write.replace_content(before, memory.content)
                doc = self.parse(doc.memory.path, text, links=False)
        if tuple(memory.meta.citations) != tuple(e.citation for e in doc.entries):
            text = write.edit_citations(doc, list(memory.meta.citations))
            doc = self.parse(doc.memory.path, text, links=False)
        if new_links:
            text = write.append_links(doc, new_links)
            doc = self.parse(doc.memory.path, text, links=False)
        text = keep_final_newline(original.text, write.edit_metadata(doc, memory.meta))
        if text != original.text:
            self._check(memory, text, original)
        return text

    def _check(self, memory: Memory, text: str, before: SerenaDocument | None) -> None:
        """Refuse a write that would not read back as what was meant.

        The serena format has no escape for everything (a table cell is one line,
        a tag cannot start with `#`, a section behind an unclosed code fence is
        code), so the result is parsed again and compared, in the forms the format
        can hold: citations by reference.
        """
        from memory_enhancement.store.formats import serena_write as write

        again = self.parse(memory.path, text, links=False).memory
        content = content_of(memory.content)
        problems = []
        # Content is compared when it is what changed: an inline `[cite:...]` citation
        # is part of the content, and editing it edits the content on purpose.
        rewritten = before is None or content != before.memory.content
        if rewritten and again.content not in (content, write.close_fence(content)):
            problems.append("its content would change")
        meant = [_comparable(c) for c in memory.meta.citations]
        found = [_comparable(c) for c in again.meta.citations]
        if found != meant:
            refs = ", ".join(c.ref for c in again.meta.citations) or "none"
            problems.append(f"its citations would read back as: {refs}")
        for name in META_WRITE:
            wanted, got = _meta_form(name, memory.meta), _meta_form(name, again.meta)
            if wanted != got:
                problems.append(f"its {name} would read back as {got!r}, not {wanted!r}")
        if not problems:
            return
        hint = _hint(before) if before is not None else ""
        raise InvalidInputError(
            f"{memory.path}: cannot write this in the serena format: {'; '.join(problems)}"
            f"{hint}; the file was left unchanged"
        )


def _refuse_reserved_headings(path: str, content: str) -> None:
    """Content may not hold a section the format reserves for the tool's own data:
    read back, it would be taken for that data and vanish from the content."""
    lines = as_lines(content_of(content))
    for section in md.find_sections(lines):
        if section.key in MANAGED:
            raise InvalidInputError(
                f"content of {path!r} has its own '## {section.title}' section "
                f"(line {section.start + 1}): in a serena memory that heading holds the "
                f"tool's {section.key}, so the section would be lost; rename the heading "
                "(e.g. '## Notes on " + section.title.lower() + "') or keep this memory "
                "in the frontmatter format"
            )


def _comparable(citation: Citation) -> str:
    """What of a citation every place it can be written keeps: its reference (an inline
    `[cite:...]` or a table without a Snippet column holds no snippet)."""
    return citation.ref


def _meta_form(name: str, meta: MemoryMeta) -> str:
    """A metadata field as its bullet writes it ("" when the field is not written)."""
    from memory_enhancement.store.formats import serena_write as write

    bullet = write.meta_bullet(name, meta)
    return bullet.partition("**: ")[2].strip()


def _hint(doc: SerenaDocument) -> str:
    """Why an edit of this file could go astray, when the file itself says so."""
    for key in MANAGED:
        section = doc.section(key)
        if section is None:
            continue
        fence = md.open_fence(doc.lines[section.start : section.end])
        if fence:
            return (
                f" (its '## {section.title}' section, line {section.start + 1}, has a code "
                f"fence {fence!r} that is never closed, so what is added there reads as code)"
            )
    if md.open_fence(doc.lines):
        return " (the file ends inside a code fence that is never closed)"
    return ""


# -- parsing ------------------------------------------------------------------


def _parse_table(doc: SerenaDocument, mask: list[bool]) -> None:
    section = doc.section(CITATIONS)
    if section is None:
        return
    lines = doc.lines
    for i in range(section.start + 1, section.end - 1):
        if mask[i] or not lines[i].lstrip().startswith("|"):
            continue
        if not md.is_separator_row(md.split_row(lines[i + 1])):
            continue
        columns = tuple(_COLUMNS.get(md.section_key(c)) or f"x:{c}" for c in md.split_row(lines[i]))
        end = i + 2
        while end < section.end and lines[end].lstrip().startswith("|"):
            end += 1
        doc.table = Table(i, end, columns)
        if "file" not in columns:
            doc.problems.append(f"{doc.memory.path}: citations table has no File column")
            return
        for row in range(i + 2, end):
            entry = _row_citation(doc, columns, row)
            if entry is not None:
                doc.entries.append(entry)
        return


def _row_citation(doc: SerenaDocument, columns: tuple[str, ...], row: int) -> CitationEntry | None:
    raw = md.split_row(doc.lines[row])
    cells = [md.cell_text(c) for c in raw]
    values = {key: cells[n] for n, key in enumerate(columns) if n < len(cells)}
    extra = tuple(
        (key[2:], raw[n]) for n, key in enumerate(columns) if key.startswith("x:") and n < len(raw)
    )
    target = values.get("file", "").strip()
    if not target:
        return None
    try:
        line, end_line = parse_line_spec(target, values.get("line", ""))
        citation = make_citation(
            target,
            line,
            end_line,
            snippet=values.get("snippet") or None,
            verified=values.get("verified") or None,
            commit=values.get("commit") or None,
        )
    except MemoryToolError as exc:
        doc.problems.append(f"{doc.memory.path}:{row + 1}: {exc}")
        return None
    if extra:
        citation = replace(citation, extra=extra)
    return CitationEntry(citation, row)


def _outside(lines: list[str], sections: list[md.Section]) -> Iterator[str]:
    """The lines outside the given sections, in order (sections may overlap)."""
    at = 0
    for start, end in sorted((s.start, s.end) for s in sections):
        if start > at:
            yield from lines[at:start]
        at = max(at, end)
    yield from lines[at:]


def _parse_inline_citations(doc: SerenaDocument, mask: list[bool], managed: set[int]) -> None:
    if "[cite:" not in doc.text:
        return  # most memories: no line to look at
    for i, line in enumerate(doc.lines):
        if mask[i] or i in managed or "[cite:" not in line:
            continue
        for match in _INLINE_CITE.finditer(line):
            if line.count("`", 0, match.start()) % 2:
                continue  # inside a code span
            try:
                citation = parse_citation(match["target"])
            except MemoryToolError as exc:
                doc.problems.append(f"{doc.memory.path}:{i + 1}: {exc}")
                continue
            entry = CitationEntry(citation, i, match.span(), match["type"] or "file")
            doc.entries.append(entry)


def _parse_metadata(doc: SerenaDocument) -> tuple[MemoryMeta, list[Link]]:
    section = doc.section(METADATA)
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    links: list[Link] = []
    if section is None:
        return MemoryMeta(), links
    for i in range(section.start + 1, section.end):
        match = META_BULLET.match(doc.lines[i].rstrip("\r\n"))
        if not match:
            continue
        label = match["label"].strip().rstrip(":").strip()
        field_name = _META_LABELS.get(label.lower())
        raw = match["value"]
        try:
            value = _meta_value(field_name, raw)
        except (MemoryToolError, ValueError):
            field_name, value = None, raw
            doc.problems.append(f"{doc.memory.path}:{i + 1}: unreadable {label!r} value {raw!r}")
        if field_name == "links":
            links.extend(Link(t, "link", LinkKind.BARE, i + 1) for t in value)
        elif field_name and field_name not in values:
            values[field_name] = value
            doc.meta_lines[field_name] = i
        else:
            extra.setdefault(label, raw)
    return MemoryMeta(**values, extra=extra), links


def _meta_value(field_name: str | None, raw: str) -> Any:
    if field_name in ("tags", "links"):
        items = (item.strip().strip("`").lstrip("#").strip() for item in raw.split(","))
        return tuple(item for item in items if item)
    if field_name in ("created_at", "updated_at", "expires_at", "last_verified"):
        return maybe_timestamp(raw.strip("`"), field=field_name)
    if field_name == "confidence":
        number = raw.strip().rstrip("%")
        value = float(number) / (100 if raw.strip().endswith("%") else 1)
        if not 0 <= value <= 1:
            raise ValueError(raw)
        return value
    if field_name == "citation_id":
        return parse_citation_id(raw.strip("`"))
    return raw
