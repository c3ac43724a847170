"""Writing the frontmatter format: a new file, and edits spliced per top-level key.

Split from frontmatter.py, which parses (what both share is frontmatter_doc.py): reading
a store never needs this module, so it is imported only when something is written
(`FrontmatterFormat.render`). A changed key
rewrites its own lines, a changed citation its own item; the result is parsed again
there and compared with what was meant before anything is written.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date, datetime
from difflib import SequenceMatcher
from typing import Any

from memory_enhancement.core.errors import MemoryToolError
from memory_enhancement.core.ids import PREFIX
from memory_enhancement.core.model import Citation, Link, MemoryMeta
from memory_enhancement.core.timestamps import as_utc, format_timestamp, parse_timestamp
from memory_enhancement.store.formats import frontmatter_doc as fd
from memory_enhancement.store.formats.base import LineEdits, content_of
from memory_enhancement.store.formats.frontmatter_doc import (
    FIELDS,
    ITEM_LINE,
    KEY_LINE,
    TIMES,
    Block,
    FrontmatterDocument,
)


def edit_keys(doc: FrontmatterDocument, meta: MemoryMeta, new_links: list[Link]) -> list[str]:
    old = doc.memory.meta
    edits = LineEdits()
    for name in FIELDS:
        if getattr(meta, name) == getattr(old, name):
            continue
        if name in doc.aliases:  # `updated: 2026-05-01`: that key, in that format
            at, moment = fd.alias_line(doc, doc.aliases[name]), getattr(meta, name)
            if at is not None and moment is not None:
                line = doc.lines[at]
                new = f"{line.split(':', 1)[0]}: {_time_as_written(_value_text(line), moment)}\n"
                edits.replace(at, at + 1, [_as_written(line, new)])
                continue
        block = doc.blocks.get(name)
        if name == "updated_at" and block is None and meta.updated_at is not None:
            nested = _nested_modified(doc, meta.updated_at)
            if nested is not None:  # Claude Code's file: `modified:` under its `metadata:`
                edits.insert(*nested)
                continue
        if name == "citations" and block and block.items and len(block.items) == doc.item_count:
            _edit_citation_items(doc, block, list(meta.citations), edits)
            continue
        if name == "citations" and not doc.item_valid:  # written whole, it would lose them
            raise MemoryToolError(
                f"{doc.memory.path}: its citations include some the tool cannot read, which "
                "rewriting them would drop; the file was left unchanged"
            )
        new_lines = render_key(name, meta)
        if name == "tags" and block and block.items and meta.tags:
            new_lines = _block_sequence(doc, block, meta.tags)
        else:
            kept = name == "tags" and isinstance(doc.data.get("tags"), str) and meta.tags
            if kept and not any("," in tag for tag in meta.tags):  # `tags: ops, ci`: a string
                new_lines = [f"tags: {fd.flow(', '.join(meta.tags))}\n"]
            if block is not None and block.end - block.start == 1 and len(new_lines) == 1:
                new_lines = [_as_written(doc.lines[block.start], new_lines[0])]
        if block is not None:
            edits.replace(block.start, block.end, new_lines)
        elif new_lines:
            edits.insert(_insert_at(doc, name), new_lines)
    if new_links:  # last: inserts at one line land in the order made, and links come last
        _add_links(doc, new_links, edits)  # (below a `modified:` closing `metadata:`)
    return edits.apply(doc.lines)


def _nested_modified(doc: FrontmatterDocument, moment: datetime) -> tuple[int, list[str]] | None:
    """Where and how a time first goes into a Claude Code memory: as Claude Code stamps one,
    `modified:` last among the keys of its `metadata:` mapping (beside `type`), rather
    than a key of the tool's own. None for any other file."""
    block, metadata = doc.blocks.get("metadata"), doc.data.get("metadata")
    if block is None or not isinstance(metadata, dict) or "modified" in metadata:
        return None
    if "type" not in metadata and "node_type" not in metadata:
        return None
    children = [doc.lines[i] for i in range(block.start + 1, block.end)]
    first = next((line for line in children if line.strip()), None)
    if first is None or not KEY_LINE.match(first.lstrip(" ")):
        return None  # `metadata: {type: project}` on one line: no line of its own to add
    indent = first[: len(first) - len(first.lstrip(" "))]
    end = "\r\n" if first.endswith("\r\n") else "\n"
    return block.end, [f"{indent}modified: {format_timestamp(moment)}{end}"]


# A time as people write one: its date, then maybe a time (`T` or a blank) of minutes,
# seconds or a fraction, then maybe its zone (`Z`, `+02:00`, `+0200`).
_TIME = re.compile(
    r"(?P<q>['\"]?)\d{4}-\d{2}-\d{2}(?:(?P<sep>[T ])\d{2}:\d{2}(?P<sec>:\d{2}(?P<frac>\.\d+)?)?"
    r"[ \t]*(?P<zone>Z|z|[+-]\d{2}:?\d{2})?)?(?P=q)"
)


def as_aliased(doc: FrontmatterDocument, meta: MemoryMeta) -> MemoryMeta:
    """meta with each time a file keeps under another key (`updated: 2026-05-01`) cut to
    what that key's format can hold: what the file reads back, so an update the same day
    leaves a date alone."""
    changes: dict[str, Any] = {}
    for name, key in doc.aliases.items():
        moment, at = getattr(meta, name), fd.alias_line(doc, key)
        if moment is None or at is None or moment == getattr(doc.memory.meta, name):
            continue
        text = _time_as_written(_value_text(doc.lines[at]), moment)
        changes[name] = parse_timestamp(text.strip("'\""), field=key)
    return replace(meta, **changes) if changes else meta


def _value_text(line: str) -> str:
    """The value of a one-line `key: value`, without its comment."""
    value = line.split(":", 1)[1] if ":" in line else ""
    comment = _trailing_comment(line)
    value = value.rstrip("\r\n")
    return value[: len(value) - len(comment)].strip() if comment else value.strip()


def _time_as_written(old: str, moment: datetime) -> str:
    """moment (UTC) in the format of the time `old`: a date stays a date, a time keeps its
    separator, its precision, its zone's style (written as UTC) and its quotes. A value in
    no format known is replaced by the tool's own."""
    found = _TIME.fullmatch(old)
    if found is None:
        return format_timestamp(moment)
    moment = as_utc(moment)
    text = moment.date().isoformat()
    if found["sep"]:
        text += f"{found['sep']}{moment.hour:02d}:{moment.minute:02d}"
        if found["sec"]:
            text += f":{moment.second:02d}"
        if found["frac"]:
            digits = len(found["frac"]) - 1
            text += "." + f"{moment.microsecond:06d}"[:digits].ljust(digits, "0")
        zone = found["zone"]
        if zone:
            text += zone if zone in "Zz" else "+00:00" if ":" in zone else "+0000"
    return f"{found['q']}{text}{found['q']}"


def _as_written(old: str, new: str) -> str:
    """A key's new one-line value, written as its old line was: the key spelled (quoted)
    as it was, the comment after the value kept (`tags: [a]  # topics`), and its line
    ending (a file mixing CRLF and LF lines keeps a CRLF line's `\r`)."""
    key = KEY_LINE.match(old)
    if key is not None:
        new = old[: key.end("key")] + new[new.index(":") :]
    end = "\r\n" if old.endswith("\r\n") else "\n"
    return f"{new.removesuffix(chr(10))}{_trailing_comment(old)}{end}"


def _trailing_comment(line: str) -> str:
    """The comment that ends a one-line `key: value`, with the blanks before it ("" if none):
    a `#` after a blank and outside quotes."""
    text = line.rstrip("\r\n")
    quote, i = "", 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\" and quote == '"':
                i += 1  # an escaped character, whatever it is
            elif char == quote:
                quote = ""
        elif char in "\"'" and (i == 0 or text[i - 1] in " \t[{,:"):
            quote = char
        elif char == "#" and text[i - 1] in " \t":
            return text[len(text[:i].rstrip(" \t")) :]
        i += 1
    return ""


def _block_sequence(doc: FrontmatterDocument, block: Block, values: tuple[str, ...]) -> list[str]:
    """New values for a key written as a block sequence (`tags:` then `  - a` lines), in
    that style: its key line as it was, its items' indentation, and the lines of the
    items that stay (their quotes, their comments, the comment lines after them)."""
    match = ITEM_LINE.match(doc.lines[block.items[0]])
    indent = match["indent"] if match else "  "
    old = doc.memory.meta.tags
    lines = doc.lines[block.start : block.items[0]]
    if len(old) != len(block.items):  # items and values do not pair up: all written anew
        return [lines[0], *(f"{indent}- {fd.flow(value)}\n" for value in values)]
    bounds = [*block.items, block.end]
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, values, autojunk=False).get_opcodes():
        if tag == "equal":
            lines += doc.lines[bounds[i1] : bounds[i2]]
        else:
            lines += [f"{indent}- {fd.flow(value)}\n" for value in values[j1:j2]]
    return lines


def _add_links(doc: FrontmatterDocument, links: list[Link], edits: LineEdits) -> None:
    """Append links to the `links:` key, creating it at the end of the frontmatter."""
    items = [f"  - {fd.flow(_link_item(link))}\n" for link in links]
    block = doc.blocks.get("links")
    if block is None:
        edits.insert(doc.close, ["links:\n", *items])
    elif block.items:
        edits.insert(block.end, items)
    else:
        existing = doc.data.get("links")
        old = existing if isinstance(existing, list) else [] if existing is None else [existing]
        lines = [f"  - {fd.flow(item)}\n" for item in old]
        edits.replace(block.start, block.end, ["links:\n", *lines, *items])


def _link_item(link: Link) -> Any:
    return link.target if link.type == "link" else {"target": link.target, "type": link.type}


def _insert_at(doc: FrontmatterDocument, name: str) -> int:
    """Where a new key goes: after the closest earlier field present, else before the end."""
    position = FIELDS.index(name)
    for earlier in reversed(FIELDS[:position]):
        if earlier in doc.blocks:
            return doc.blocks[earlier].end
    for later in FIELDS[position + 1 :]:
        if later in doc.blocks:
            return doc.blocks[later].start
    return doc.close


def _edit_citation_items(
    doc: FrontmatterDocument, block: Block, wanted: list[Citation], edits: LineEdits
) -> None:
    """Edit the items that changed, each in its lines; an item the tool cannot read
    (`lines: 9, 20-25`) is no citation of the memory's and stays as written."""
    if not wanted and doc.item_valid:  # the whole key goes; item edits would overlap this one
        edits.replace(block.start, block.end, [])
        return
    old = list(doc.memory.meta.citations)
    bounds = [*block.items, block.end]
    spans = [(bounds[n], bounds[n + 1]) for n in doc.citation_items]
    spans.append((block.end, block.end))  # what is added after the last goes below every item
    indent = ITEM_LINE.match(doc.lines[block.items[0]])
    prefix = indent["indent"] if indent else "  "
    items = doc.data.get("citations")
    items = items if isinstance(items, list) else [items]
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, wanted, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:  # one for one (a fix): each as written
            for k in range(i2 - i1):
                start, end = spans[i1 + k]
                written = items[doc.citation_items[i1 + k]]
                lines = _render_like(written, doc.lines[start:end], wanted[j1 + k], prefix)
                edits.replace(start, end, lines)
            continue
        new_lines = [line for c in wanted[j1:j2] for line in _render_item(c, prefix)]
        edits.replace(spans[i1][0], spans[i1][0] if i1 == i2 else spans[i1][1], new_lines)
        for start, end in spans[i1 + 1 : i2]:  # apart: an unreadable item may sit between
            edits.delete(start, end)


def render_key(name: str, meta: MemoryMeta) -> list[str]:
    value = getattr(meta, name)
    if name == "citations":
        if not value:
            return []
        return ["citations:\n", *(line for c in value for line in _render_item(c, "  "))]
    if name == "tags":
        return [f"tags: {fd.flow(list(value))}\n"]
    if value is None:
        return []
    if name in TIMES:
        return [f"{name}: {format_timestamp(value)}\n"]
    if name == "citation_id":
        return [f"{name}: {PREFIX}{value}\n"]
    return [f"{name}: {fd.flow(value)}\n"]


def _render_item(citation: Citation, indent: str) -> list[str]:
    if citation.snippet is None and not (citation.verified or citation.commit or citation.extra):
        return [f"{indent}- {fd.flow(citation.ref)}\n"]
    return _mapping(list(_fields(citation).items()), indent)


def _fields(citation: Citation) -> dict[str, str]:
    """A citation's keys as the tool spells them, in its order, and their values' text."""
    fields = {"path": fd.flow(citation.target)}
    if citation.line is not None and not citation.is_url:
        fields["line"] = str(citation.line)
        if citation.end_line is not None:
            fields["end_line"] = str(citation.end_line)
    for key in ("snippet", "verified", "commit"):
        value = getattr(citation, key)
        if value is not None:
            fields[key] = _scalar_text(value)
    fields.update(citation.extra)
    return fields


def _mapping(fields: list[tuple[str, str]], indent: str) -> list[str]:
    pad = indent + "  "
    rendered = [f"{key}: {text}\n" for key, text in fields]
    return [f"{indent}- {rendered[0]}", *(pad + line for line in rendered[1:])]


_LINES_QUOTE = re.compile(r"""^[ \t]*(?:-[ \t]+)?lines[ \t]*:[ \t]*(?P<quote>["']?)""")


def _render_like(written: Any, lines: list[str], citation: Citation, indent: str) -> list[str]:
    """A changed citation in the keys its item was written with: their spelling (`file:`,
    `lines: "3-4"`, `verified_at:`) and order, the keys it lacked after them. An item
    written as one string (`- src/app.py:3`) is rendered as a new one."""
    if not isinstance(written, dict):
        return _render_item(citation, indent)
    fields = _fields(citation)
    if "lines" in written and "line" not in written and "line" in fields:
        line, end = fields.pop("line"), fields.pop("end_line", None)
        quote = next((m["quote"] for m in map(_LINES_QUOTE.match, lines) if m), "")
        fields["lines"] = f"{quote}{line if end is None else f'{line}-{end}'}{quote}"
    target = next((key for key in ("path", "file", "target", "url") if key in written), "path")
    stamp = "verified_at" if "verified_at" in written and "verified" not in written else "verified"
    names = {"path": target, "verified": stamp}
    spelled = {names.get(field, field): text for field, text in fields.items()}
    order = [key for key in written if key in spelled]
    order += [key for key in spelled if key not in written]
    return _mapping([(key, spelled[key]) for key in order], indent)


def replace_body(body: str, content: str) -> str:
    """The body with its content replaced and the blank lines around it kept.

    The content is the body less its leading and trailing blank lines; those (the blank
    line most files have after the closing `---`, the newline at the end) are layout,
    not content, and stay as they were.
    """
    if not content:
        return ""
    old = content_of(body)
    if not old:
        return content + "\n"
    lines = body.split("\n")
    start = 0
    for line in lines:
        if line.strip():
            break
        start += len(line) + 1
    return body[:start] + content + body[start + len(old) :]


def render_links(links: tuple[Link, ...]) -> list[str]:
    if not links:
        return []
    items = [fd.flow(_link_item(link)) for link in links]
    return ["links:\n", *(f"  - {item}\n" for item in items)]


def _scalar_text(value: str) -> str:
    """A string as a YAML scalar that reads back as the same string.

    Timestamps the tool writes stay unquoted (they read back as datetimes and
    are turned back into the same text); anything else is quoted as needed.
    """
    plain = fd.flow(value)
    if plain.startswith(("'", '"')) and "\n" not in value:
        try:  # any text can get here (`}`, `[1, 2`): only a timestamp stays bare
            loaded = fd.yaml_module().load(value, Loader=fd.yaml_loader())
        except fd.yaml_module().YAMLError:
            return plain
        if isinstance(loaded, datetime | date) and fd.text_of(loaded) == value:
            return value
    return plain
