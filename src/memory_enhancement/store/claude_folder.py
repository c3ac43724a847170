"""Claude Code's memory folders: what makes a folder one, and how its memories are written.

Claude Code keeps its "auto memory" in a folder (`~/.claude/projects/<project>/memory/`,
often committed as `.claude/memory/`): `MEMORY.md`, the index it loads into every
session (claude_index.py), and one file per memory, named after its type
(`feedback_no_fallbacks.md`, `project_x.md`) or by a slug, whose frontmatter declares
`name`, `description` and `type` (user, feedback, project or reference): at the top
in older files, under `metadata:` beside `node_type: memory` in newer ones (both in
AnotherSava/bga-assistant, the second alone in BoykoNeov/physsynth's).

A folder is one when its top holds `MEMORY.md` and that index lists a memory declaring
all three, or when it sits in a `.claude` folder and holds `MEMORY.md`. A new memory
there is written as the folder's own are (their keys in their order, `type` where they
keep it) and listed in `MEMORY.md`; without that line Claude Code never reads it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from memory_enhancement.core.errors import InvalidInputError, MemoryToolError, NotFoundError
from memory_enhancement.core.model import MEMORY_SUFFIX
from memory_enhancement.store import claude_index
from memory_enhancement.store.disk import Store
from memory_enhancement.store.formats.base import Decoded

INDEX = "MEMORY"  # the index's path as a memory of the store (MEMORY.md)
TYPES = ("user", "feedback", "project", "reference")
DEFAULT_TYPE = "project"
_SAMPLE = 400  # listed files read at most to learn the folder's style and types
_HOOK_CHARS = 150  # Claude Code keeps a description to one line of about this
_HEADING = re.compile(r"^#{1,6}[ \t]+(?P<text>.*?)[ \t#]*$")
_MARKS = re.compile(r"^(?:[>*+-]|\d+[.)])[ \t]+")  # a quote's or a list item's mark


@dataclass(frozen=True)
class Style:
    """How a folder's memories declare themselves: the order of `name`, `description` and
    `type` (or `metadata`, when `type` sits under it), the `metadata:` line as written,
    and whether `node_type: memory` goes with it. The default is current Claude Code's."""

    keys: tuple[str, ...] = ("name", "description", "metadata")
    metadata_line: str = "metadata:"
    node_type: bool = True

    def header(self, name: str, description: str, kind: str) -> list[str]:
        """The frontmatter lines that declare a new memory."""
        from memory_enhancement.store.formats.frontmatter_doc import flow

        lines = []
        for key in self.keys:
            if key == "name":
                lines.append(f"name: {flow(name)}\n")
            elif key == "description":
                lines.append(f"description: {flow(description)}\n")
            elif key == "type":
                lines.append(f"type: {kind}\n")
            else:
                lines.append(self.metadata_line + "\n")
                lines += ["  node_type: memory\n"] if self.node_type else []
                lines.append(f"  type: {kind}\n")
        return lines


@dataclass(frozen=True)
class Folder:
    """A Claude Code memory folder as found: its index (the text as read, and read into
    items), the type of each memory the index lists, the style of its memories."""

    decoded: Decoded
    index: claude_index.Index
    types: dict[str, str]
    style: Style
    stamp: tuple[int, int]  # the index's (mtime_ns, size) as read: a write is refused past it


def open_folder(store: Store, *, learn: bool = True) -> Folder | None:
    """The store as a Claude Code memory folder, or None when it is not one (or its
    `MEMORY.md` cannot be read: the store is then written as any other). `learn=False`
    stops at the first memory that tells (a removal needs no style, nor every type)."""
    from memory_enhancement.store import formats

    try:
        data, stat = store.read_bytes(INDEX)
        decoded = formats.decode(INDEX + MEMORY_SUFFIX, data)
    except MemoryToolError:
        return None
    index = claude_index.read(decoded.text)
    types: dict[str, str] = {}
    styles: Counter[Style] = Counter()
    for entry in index.entries[:_SAMPLE]:
        declared = _declared(store, entry.file)
        if declared is not None:
            types[entry.file], style = declared
            styles[style] += 1
            if not learn:
                break
    if not types and ".claude" not in store.root.parts:
        return None
    style = styles.most_common(1)[0][0] if styles else Style()
    return Folder(decoded, index, types, style, (stat.st_mtime_ns, stat.st_size))


def unreadable_index(store: Store) -> str | None:
    """Why the store's `MEMORY.md` cannot be read when there is one (not UTF-8, too large,
    a FIFO): `open_folder` then takes the store for an ordinary one. None when there is
    none, or it reads."""
    from memory_enhancement.store import formats

    try:
        data, stat = store.read_bytes(INDEX)
        formats.decode(INDEX + MEMORY_SUFFIX, data, stat.st_size)
    except NotFoundError:
        return None
    except MemoryToolError as exc:
        return str(exc)
    return None


def _declared(store: Store, file: str) -> tuple[str, Style] | None:
    """The type a listed memory declares and the style it declares it in, if it is one."""
    from memory_enhancement.store.formats.frontmatter_doc import FrontmatterDocument

    if "/" in file or not file.endswith(MEMORY_SUFFIX) or file == INDEX + MEMORY_SUFFIX:
        return None
    try:
        doc = store.read(file[: -len(MEMORY_SUFFIX)], links=False).doc
    except MemoryToolError:
        return None
    if not isinstance(doc, FrontmatterDocument):
        return None
    data = doc.data
    metadata: Any = data.get("metadata")
    nested = metadata.get("type") if isinstance(metadata, dict) else None
    kind = data.get("type", nested)
    if not all(isinstance(v, str) and v for v in (data.get("name"), data.get("description"), kind)):
        return None
    if "type" in data:
        keys = tuple(k for k in data if k in ("name", "description", "type"))
        return str(kind), Style(keys, node_type=False)
    keys = tuple(k for k in data if k in ("name", "description", "metadata"))
    block = doc.blocks.get("metadata")
    line = doc.lines[block.start].rstrip("\r\n") if block else "metadata:"
    return str(kind), Style(keys, line, "node_type" in metadata)


def memory_type(given: str | None, path: str) -> str:
    """The type of a new memory: as given, else the one its file name opens with
    (`feedback_tabs`), else project."""
    if given is not None:
        kind = given.strip().lower()
        if kind not in TYPES:
            raise InvalidInputError(
                f"invalid memory type {given!r}: Claude Code's are {', '.join(TYPES)}"
            )
        return kind
    stem = path.rpartition("/")[2].lower()
    return next((t for t in TYPES if stem.startswith((t + "_", t + "-"))), DEFAULT_TYPE)


def description_of(given: str | None, content: str) -> str:
    """A new memory's description: as given (on one line), else the first line of its
    content's text under any heading, cut at a word near 150 characters."""
    if given is not None:
        text = " ".join(given.split())
        if not text:
            raise InvalidInputError("description cannot be empty")
        return text
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    first = next((line for line in lines if not _HEADING.match(line)), None)
    if first is None:  # headings only
        first = _HEADING.sub(r"\g<text>", lines[0]) if lines else ""
    text = " ".join(_MARKS.sub("", first).split())
    if len(text) > _HOOK_CHARS:
        text = text[:_HOOK_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "\u2026"
    return text


def title_of(name: str, content: str) -> str:
    """The title an index line gives a new memory: the heading its content opens with,
    else its name."""
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    heading = _HEADING.match(first)
    return heading["text"] if heading and heading["text"] else name
