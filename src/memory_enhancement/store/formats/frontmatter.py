"""The frontmatter format: YAML metadata between `---` lines, then content (seed 000).

::

    ---
    created_at: 2026-01-01T00:00:00.000Z
    updated_at: 2026-01-01T00:00:00.000Z
    tags: [architecture, patterns]
    source: mcp
    citations:
      - src/core/memory/types.ts:17
      - path: src/x.py
        line: 42
        snippet: API_VERSION = 'v2'
    ---
    Memory content here.

`expires_at`, `citations` and `links` are written only when set. Values are read
with PyYAML; edits are spliced per top-level key (and per citation item), so
keys the tool does not know keep their bytes, comments and order. After every
splice the new frontmatter is parsed again and compared with what was meant;
if anything else would change, nothing is written. The writing lives in
frontmatter_write.py, which a read never imports.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from memory_enhancement.core.citations import make_citation, parse_citation, parse_line_spec
from memory_enhancement.core.errors import (
    BrokenHeaderError,
    MemoryToolError,
    UnreadableMemoryError,
)
from memory_enhancement.core.ids import parse_citation_id
from memory_enhancement.core.model import Citation, Link, LinkKind, Memory, MemoryMeta
from memory_enhancement.core.timestamps import maybe_timestamp
from memory_enhancement.store.formats import frontmatter_doc as fd
from memory_enhancement.store.formats import yamlload
from memory_enhancement.store.formats.base import (
    Document,
    added_links,
    as_lines,
    closed_text,
    content_of,
    keep_final_newline,
)
from memory_enhancement.store.formats.frontmatter_doc import (
    ALIASES,
    FIELDS,
    ITEM_LINE,
    KEY_LINE,
    TIMES,
    Block,
    FrontmatterDocument,
)
from memory_enhancement.store.formats.links import extract_links

_READ_ONLY_KEYS = ("links", "related")
# Keys other schemas name memories under, read as links of that type (the values stay the
# file's own keys, in `extra`): ddisisto/stremio-shell's memories declare
# `dependencies: [project/overview.md]`, `references: [...]` and `superseded_by: x.md`,
# lane-core/pane's `extends: analysis/polarity/_hub`. Not `supersedes:`, which names what
# a memory replaced: often a memory since removed, which no reader is sent to.
_LINK_KEYS = {
    "dependencies": "depends_on",
    "depends_on": "depends_on",
    "references": "references",
    "superseded_by": "superseded_by",
    "extends": "extends",
}
_EVERY = frozenset({"all", "any", "none", "*"})  # every memory: a link only to one so named
_CITATION_KEYS = {"path", "file", "target", "url", "line", "lines", "end_line", "snippet"}
_CITATION_KEYS |= {"verified", "verified_at", "commit"}


class FrontmatterFormat:
    """Cortex-style memories: YAML frontmatter with the tool's keys, then markdown."""

    name = "frontmatter"

    def detect(self, text: str) -> bool:
        return _closing_line(as_lines(text)) is not None

    def parse(self, path: str, text: str, *, links: bool = True) -> FrontmatterDocument:
        lines = as_lines(text)
        close = _closing_line(lines)
        if close is None:
            raise UnreadableMemoryError(f"{path}: frontmatter has no closing '---' line")
        data = _load_yaml(path, "".join(lines[1:close]))
        doc = FrontmatterDocument(Memory(path, ""), text, lines=lines, close=close, data=data)
        doc.blocks = _scan_blocks(lines, 1, close)
        meta = _read_meta(doc)
        block = doc.blocks.get("citations")
        if block is not None:
            starts = block.items if len(block.items) == doc.item_count else ()
            doc.citation_lines = [
                (starts[n] if starts else block.start) + 1 for n in doc.citation_items
            ]
        body = "".join(lines[close + 1 :])
        found: tuple[Link, ...] | None = None
        if links:
            found = (*_frontmatter_links(doc), *extract_links(body, line_offset=close + 1))
        doc.memory = Memory(path, content_of(body), meta, found, self.name)
        return doc

    def parse_text_only(
        self, path: str, text: str, error: BrokenHeaderError, *, links: bool = True
    ) -> FrontmatterDocument:
        """A file whose frontmatter does not parse (`parse` raised `error`), read for what
        can still be read: the text after the header as its content, its links. The header
        is skipped, not guessed at; `header_error` says why (listings report it). Never
        rendered: every edit parses the file again, and is refused."""
        lines = as_lines(text)
        close = _closing_line(lines)
        body = "".join(lines[close + 1 :]) if close is not None else text
        offset = close + 1 if close is not None else 0
        found = tuple(extract_links(body, line_offset=offset)) if links else None
        why = f"{error} (the rest is read as plain text; the tool edits it once the header parses)"
        doc = FrontmatterDocument(Memory(path, ""), text, [why], lines=lines, header_error=why)
        doc.memory = Memory(path, content_of(body), MemoryMeta(), found, self.name)
        return doc

    def render(self, doc: Document | None, memory: Memory) -> str:
        from memory_enhancement.store.formats import frontmatter_write as write  # writes only

        if doc is None:
            keys = [write.render_key(name, memory.meta) for name in FIELDS]
            links = write.render_links(memory.links or ())
            head = "".join(line for block in [*keys, links] for line in block)
            body = content_of(memory.content)
            return f"---\n{head}---\n{body}\n" if body else f"---\n{head}---\n"
        assert isinstance(doc, FrontmatterDocument)
        original = doc
        new_links = added_links(doc.memory, memory)
        if closed_text(doc.text) != doc.text:  # edited as if it ended with a newline
            doc = self.parse(doc.memory.path, closed_text(doc.text), links=False)
        if doc.aliases:  # times kept under another key keep its format, and its precision
            memory = replace(memory, meta=write.as_aliased(doc, memory.meta))
        lines = write.edit_keys(doc, memory.meta, new_links)
        if content_of(memory.content) != doc.memory.content:
            close = doc.close + len(lines) - len(doc.lines)  # key edits sit above it
            body = write.replace_body("".join(lines[close + 1 :]), content_of(memory.content))
            lines = lines[: close + 1] + as_lines(body)
        text = keep_final_newline(original.text, "".join(lines))
        if text != original.text:
            self._check(original, memory, text)
        return text

    def render_declared(self, memory: Memory, lead: list[str]) -> str:
        """A new file that declares itself as another tool's memories do: its frontmatter
        opens with `lead` (their keys, rendered by the caller), then holds only the tool's
        keys given a value (no `tags: []`, no times: that tool keeps none), and a blank line
        parts it from the content, as Claude Code writes its memory files."""
        from memory_enhancement.store.formats import frontmatter_write as write  # writes only

        meta = memory.meta
        keys = [write.render_key(name, meta) for name in FIELDS if name != "tags" or meta.tags]
        links = write.render_links(memory.links or ())
        head = "".join([*lead, *(line for block in [*keys, links] for line in block)])
        body = content_of(memory.content)
        return f"---\n{head}---\n\n{body}\n" if body else f"---\n{head}---\n"

    def _check(self, doc: FrontmatterDocument, memory: Memory, text: str) -> None:
        """Refuse an edit whose result would not read back as exactly what was meant
        (or not at all: the file is fine, the edit is what cannot be made)."""
        try:
            again: FrontmatterDocument | None = self.parse(doc.memory.path, text, links=False)
        except UnreadableMemoryError:
            again = None
        meant = replace(memory.meta, extra=doc.memory.meta.extra)
        if (
            again is None
            or again.memory.meta != meant
            or again.memory.content != content_of(memory.content)
        ):
            # e.g. `{created_at: ..., tags: [...]}`: one flow mapping, no key on a line
            # of its own to edit.
            hint = " (its keys are not written one per line)" if not doc.blocks else ""
            raise MemoryToolError(
                f"{doc.memory.path}: cannot edit this frontmatter in place without changing "
                f"other keys{hint}; the file was left unchanged"
            )


# -- parsing ------------------------------------------------------------------


def _closing_line(lines: list[str]) -> int | None:
    if not lines or lines[0].rstrip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i
    return None


def _load_yaml(path: str, text: str) -> dict[str, Any]:
    try:
        data = yamlload.load(text, first_line=2)
    except yamlload.YamlLimitError as exc:
        raise UnreadableMemoryError(f"{path}: refused YAML frontmatter: {exc}") from None
    except fd.yaml_module().YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BrokenHeaderError(f"{path}: malformed YAML frontmatter{where}: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BrokenHeaderError(
            f"{path}: YAML frontmatter must be a mapping of keys, not {type(data).__name__}"
        )
    return {str(k): v for k, v in data.items()}


def _scan_blocks(lines: list[str], start: int, stop: int) -> dict[str, Block]:
    marks = []
    for i in range(start, stop):
        match = KEY_LINE.match(lines[i])
        if match:
            marks.append((i, match["key"].strip("\"'")))
    blocks: dict[str, Block] = {}
    for n, (i, key) in enumerate(marks):
        end = marks[n + 1][0] if n + 1 < len(marks) else stop
        while end > i + 1 and (not lines[end - 1].strip() or _comment_after(lines, i, end - 1)):
            end -= 1
        blocks.setdefault(key, Block(key, i, end, _item_starts(lines, i, end)))
    return blocks


def _comment_after(lines: list[str], key: int, at: int) -> bool:
    """Whether line `at` is a comment after the value of the key on line `key`, not part
    of it: an edit of the value keeps it (`tags:`, `  - a`, `  # more to come`).

    A `#` line indented deeper than the value's first line (inside a block scalar of a
    citation's snippet), or below a block or quoted scalar, may be the value's own text.
    """
    line = lines[at]
    if not line.lstrip().startswith("#"):
        return False
    indent = len(line) - len(line.lstrip(" \t"))
    if indent == 0:
        return True
    value = lines[key].split(":", 1)[1].strip() if ":" in lines[key] else ""
    if value.startswith(("|", ">", '"', "'")):
        return False
    first = lines[key + 1]
    return indent <= len(first) - len(first.lstrip(" \t"))


def _item_starts(lines: list[str], start: int, end: int) -> tuple[int, ...]:
    """First lines of a block sequence's items, when the value is a block sequence."""
    head = lines[start]
    after = head.split(":", 1)[1].split("#", 1)[0].strip() if ":" in head else ""
    if after:
        return ()
    starts: list[int] = []
    indent: str | None = None
    for i in range(start + 1, end):
        match = ITEM_LINE.match(lines[i])
        if match and (indent is None or match["indent"] == indent):
            indent = match["indent"]
            starts.append(i)
    return tuple(starts)


def _read_meta(doc: FrontmatterDocument) -> MemoryMeta:
    data = doc.data
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in data.items():
        if key in _READ_ONLY_KEYS or key == "citations":
            continue  # reported as links and citations
        if key not in FIELDS:
            extra[key] = value
            continue
        try:
            values[key] = _field_value(key, value)
        except (MemoryToolError, ValueError, TypeError):
            extra[key] = value
            doc.problems.append(f"{doc.memory.path}: unreadable {key!r} value {value!r}")
    if any(name not in data for name in ALIASES):
        _read_aliases(doc, values, extra)
    values["citations"] = _read_citations(doc, data.get("citations"))
    return MemoryMeta(**values, extra=extra)


def _read_aliases(doc: FrontmatterDocument, values: dict[str, Any], extra: dict[str, Any]) -> None:
    """Times another tool keeps under its own key (ALIASES), when the tool's own is absent:
    read as the memory's, and taken out of `extra` (the writer stamps that key)."""
    for name, keys in ALIASES.items():
        if name in doc.data:
            continue  # the tool's own key: any other stays a key of the file's own
        for key in keys:
            parent, _, child = key.rpartition(".")
            holder = extra.get(parent) if parent else extra
            if not isinstance(holder, dict) or child not in holder:
                continue
            try:
                moment = _field_value(name, holder[child])
            except (MemoryToolError, ValueError, TypeError):
                break  # `updated: last week`: not a time, kept as the file has it
            if moment is not None and fd.alias_line(doc, key) is not None:
                values[name] = moment
                doc.aliases[name] = key
                if parent:
                    extra[parent] = {k: v for k, v in holder.items() if k != child}
                else:
                    del extra[key]
            break


def _field_value(key: str, value: Any) -> Any:
    if key in TIMES:
        return maybe_timestamp(value, field=key)
    if key == "tags":
        if value is None:
            return ()
        if isinstance(value, str):
            value = [t for t in (s.strip() for s in value.split(",")) if t]
        if not isinstance(value, list):
            raise TypeError(key)
        return tuple(str(t) for t in value)
    if key == "confidence":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValueError(key)
        return float(value)
    if key == "citation_id":
        return None if value is None else parse_citation_id(str(value))
    return None if value is None else str(value)


def _read_citations(doc: FrontmatterDocument, value: Any) -> tuple[Citation, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    doc.item_count = len(items)
    citations = []
    for n, item in enumerate(items):
        try:
            citations.append(_citation_from_yaml(item))
            doc.citation_items.append(n)
        except MemoryToolError as exc:
            doc.problems.append(f"{doc.memory.path}: {exc}")
    return tuple(citations)


def _citation_from_yaml(item: Any) -> Citation:
    if isinstance(item, str):
        return parse_citation(item)
    if not isinstance(item, dict):
        return parse_citation(str(item) if item is not None else "")
    target = next((item[k] for k in ("path", "file", "target", "url") if item.get(k)), "")
    line, end_line = item.get("line", item.get("lines")), item.get("end_line")
    if isinstance(line, str) and end_line is None:
        line, end_line = parse_line_spec(str(target), line)
    extra = tuple((str(k), fd.flow(v)) for k, v in item.items() if k not in _CITATION_KEYS)
    return replace(
        make_citation(
            str(target),
            line,
            end_line,
            snippet=fd.text_of(item.get("snippet")),
            verified=fd.text_of(item.get("verified", item.get("verified_at"))),
            commit=fd.text_of(item.get("commit")),
        ),
        extra=extra,
    )


def _frontmatter_links(doc: FrontmatterDocument) -> list[Link]:
    links = []
    for key in (*_READ_ONLY_KEYS, *_LINK_KEYS):
        value = doc.data.get(key)
        if isinstance(value, str) and key in _LINK_KEYS:
            value = [part for part in value.split(",") if part.strip()]  # `superseded_by: a, b`
        if isinstance(value, str | dict):
            value = [value]  # `related: other` names one memory
        if not isinstance(value, list):
            continue
        block = doc.blocks.get(key)
        starts = block.items if block else ()
        for n, item in enumerate(value):
            line = starts[n] + 1 if n < len(starts) else (block.start + 1 if block else None)
            kind = _LINK_KEYS.get(key) or ("related" if key == "related" else "link")
            if isinstance(item, dict):
                target = item.get("target") or item.get("path") or item.get("id")
                kind = str(item.get("type") or kind)
            else:
                target = item
            if isinstance(target, str) and key in _LINK_KEYS:
                target = target.strip().partition("#")[0]  # `x.md#section`: the memory x
            if target:  # `related: [all]` (stremio-shell's index) means every memory
                every = str(target).strip().casefold() in _EVERY
                link_kind = LinkKind.NAMED if every else LinkKind.FRONTMATTER
                links.append(Link(str(target), kind, link_kind, line))
    return links
