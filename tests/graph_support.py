"""Helpers of the link and graph tests: memories written by hand, links read back.

Memories are written the way a person (or `git pull`) writes them, straight to
disk, in any link style, and dated an hour in the past so the index's "changed
within two seconds of the last sync" re-check does not blur what a test counts.
What a link resolved to is read through the service's public operations: a
one-step traversal gives the resolved edges and the broken links of a memory.
"""

from __future__ import annotations

from pathlib import Path

from index_support import age
from memory_enhancement.service import MemoryService


def write(store: Path, path: str, text: str) -> Path:
    """The memory file for path (`notes/a` -> store/notes/a.md) with exactly this text."""
    file = store / f"{path}.md"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(text.encode("utf-8"))
    age(file)
    return file


def write_all(store: Path, memories: dict[str, str]) -> None:
    for path, text in memories.items():
        write(store, path, text)


def out_links(service: MemoryService, path: str) -> list[tuple[str, str]]:
    """(resolved target, type) of each resolved link out of path, in written order."""
    result = service.graph(path, depth=1)
    return [(e.target, e.type) for e in result.edges]


def broken(service: MemoryService) -> list[tuple[str, int | None, str, str, str | None]]:
    """(memory, line, target as written, status, offered fix) of every broken link."""
    return [(b.source, b.line, b.target, b.status, b.suggestion) for b in service.broken_links()]
