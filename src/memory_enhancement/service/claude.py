"""Writes into a Claude Code memory folder, so that Claude Code still finds its memories.

A memory added there declares `name`, `description` and `type` as the folder's own do
and gets its line in `MEMORY.md`; a memory removed or pruned loses that line (a move
rewrites it as it rewrites every link to the memory). `MEMORY.md` itself stays the
folder's index: it is read and searched as a memory (many hold notes of their own,
with code mentions worth verifying), but never removed, moved, updated, cited, linked,
graduated, expired, pruned or stamped by `verify --write` (verification.py).
The folder's rules live in store/claude_folder.py and store/claude_index.py; this
module applies them to one write, under the store lock its caller holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memory_enhancement.core.errors import ChangedOnDiskError, InvalidInputError, MemoryToolError
from memory_enhancement.core.model import MEMORY_SUFFIX, Memory
from memory_enhancement.store import claude_folder, claude_index
from memory_enhancement.store.claude_folder import (
    Folder,
    description_of,
    memory_type,
    open_folder,
    title_of,
)
from memory_enhancement.store.disk import Store
from memory_enhancement.store.formats.base import Decoded

INDEX = claude_folder.INDEX  # MEMORY.md's path as a memory
INDEX_FILE = INDEX + MEMORY_SUFFIX


@dataclass(frozen=True)
class Declared:
    """A new memory as the folder writes it: the file's text, the index's new text (None:
    the index already lists that file), and what is worth a warning."""

    text: str
    index_text: str | None
    warnings: tuple[str, ...]


def folder_of(store: Store, *, learn: bool = True) -> Folder | None:
    """The store as a Claude Code memory folder; never a Serena store (psh keeps a
    `MEMORY.md` hub among its Serena memories). `learn=False` reads only what tells."""
    return None if _serena(store) else open_folder(store, learn=learn)


def _serena(store: Store) -> bool:
    serena_folder = store.root.parts[-2:] == (".serena", "memories")
    return serena_folder or store.config().get("format") == "serena"


def index_warning(store: Store) -> str | None:
    """Said when a memory is added to a store that is no Claude Code folder only because
    its `MEMORY.md` cannot be read: Claude Code will not list the memory there."""
    why = None if _serena(store) else claude_folder.unreadable_index(store)
    if why is None:
        return None
    return f"{INDEX_FILE} could not be read ({why}): the memory is not listed in it"


def is_index(folder: Folder | None, path: str) -> bool:
    return folder is not None and path == INDEX


def refuse_index(folder: Folder | None, path: str, verb: str) -> None:
    """Refuse to remove or move `MEMORY.md` as if it were a memory."""
    if is_index(folder, path):
        raise InvalidInputError(
            f"{INDEX_FILE} is the index of this Claude Code memory folder (Claude Code loads "
            f"it into every session); it is not {verb} as a memory"
        )


def refuse_index_edit(store: Store, path: str, verb: str) -> None:
    """Refuse to change `MEMORY.md` as a memory: an update or a citation would append a
    section to the index Claude Code loads into every session."""
    if path == INDEX:
        refuse_index(folder_of(store, learn=False), path, verb)


def refuse_declaration(folder: Folder | None, description: str | None, kind: str | None) -> None:
    """A description or a type is what a Claude Code memory declares; elsewhere there is
    no key for it (a Serena note has none), so it is refused rather than dropped."""
    if folder is None and (description is not None or kind is not None):
        given = "a description" if description is not None else "a type"
        raise InvalidInputError(
            f"{given} is written only into a Claude Code memory folder (one whose MEMORY.md "
            "lists its memories); this store is not one"
        )


def create(
    store: Store,
    memory: Memory,
    description: str | None,
    kind: str | None,
    like: Decoded | None = None,
) -> tuple[bool, tuple[str, ...]]:
    """Write the new memory as the folder declares its own, and its line in the index;
    whether the index changed, and the warnings. The caller holds the store lock. If the
    index cannot be written, the new file goes again: a memory Claude Code cannot see
    is not kept as if it could."""
    folder = open_folder(store)  # read again under the lock
    if folder is None:
        raise MemoryToolError(f"{INDEX_FILE} of this Claude Code memory folder cannot be read")
    declared = declare(folder, memory, description=description, kind=kind)
    store.create(memory.path, (like or Decoded("")).encode(declared.text))
    if declared.index_text is None:
        return False, declared.warnings
    try:
        store.replace(INDEX, folder.decoded.encode(declared.index_text), folder.stamp)
    except BaseException as exc:
        store.delete(memory.path)
        if isinstance(exc, ChangedOnDiskError):
            raise ChangedOnDiskError(
                f"{INDEX_FILE} changed on disk while {memory.path} was being listed in it; "
                "nothing written (try again)"
            ) from None
        raise
    return True, declared.warnings


def declare(
    folder: Folder, memory: Memory, *, description: str | None, kind: str | None
) -> Declared:
    """The new memory's file, declared in the folder's style, and the index listing it."""
    from memory_enhancement.store.formats import parse_text
    from memory_enhancement.store.formats.frontmatter import FrontmatterFormat

    name = memory.path.rpartition("/")[2]
    kind = memory_type(kind, memory.path)
    described = description_of(description, memory.content)
    lead = folder.style.header(name, described, kind)
    # Claude Code keeps no times nor a source: the file's time is its modification time.
    meta = replace(memory.meta, created_at=None, updated_at=None, source=None)
    text = FrontmatterFormat().render_declared(replace(memory, meta=meta), lead)
    parse_text(memory.path, text)  # reads back, or nothing is written
    file = memory.path + MEMORY_SUFFIX
    index = folder.index
    if index.listing(file):
        already = f"{INDEX_FILE} already lists {file}; its line was left as it is"
        return Declared(text, None, (already,))
    at = claude_index.place(index, kind, {**folder.types, file: kind})
    line = claude_index.entry_line(index, at, title_of(name, memory.content), file, described)
    new_index = claude_index.insert(folder.decoded.text, at, line)
    warnings = []
    if claude_index.beyond_load(new_index, at):
        warnings.append(
            f"{file} is listed on line {at + 1} of {INDEX_FILE}, past what Claude Code loads "
            f"into a session (its first {claude_index.LOADED_LINES} lines, "
            f"{claude_index.LOADED_BYTES // 1000} KB): it will not see it until the index is "
            "shortened"
        )
    return Declared(text, new_index, tuple(warnings))


def unlist(store: Store, folder: Folder | None, paths: Sequence[str]) -> bool:
    """Drop the index lines of memories just removed; whether the index changed. The index
    is read again (the caller holds the lock; a prune removed many memories first)."""
    from memory_enhancement.store import formats

    if folder is None:
        return False
    try:
        data, stat = store.read_bytes(INDEX)
        decoded = formats.decode(INDEX_FILE, data)
    except MemoryToolError:
        return False
    text = decoded.text
    for path in paths:
        text = claude_index.drop(text, path + MEMORY_SUFFIX) or text
    if text == decoded.text:
        return False
    try:
        store.replace(INDEX, decoded.encode(text), (stat.st_mtime_ns, stat.st_size))
    except ChangedOnDiskError:
        raise ChangedOnDiskError(
            f"{INDEX_FILE} changed on disk while its lines were being dropped: "
            f"{', '.join(paths)} removed, still listed there"
        ) from None
    return True
