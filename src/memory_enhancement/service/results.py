"""What the service's operations return: plain values the front ends render."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_enhancement.core.links import Resolution
from memory_enhancement.core.model import Link, Memory, MemoryMeta
from memory_enhancement.core.timestamps import maybe_timestamp
from memory_enhancement.index.rows import Row


@dataclass(frozen=True)
class WriteResult:
    """What a write did: the memory as now on disk, and anything worth a warning."""

    path: str
    memory: Memory
    changed: bool = True
    warnings: tuple[str, ...] = ()
    citation_id: str = ""
    links_updated: tuple[str, ...] = ()  # memories whose links it rewrote (move, add)
    moved_from: str = ""  # the path a move took it from (it was named by path, ID or name)
    # An edit's memory as it was read, under the same lock: what an answer that says what
    # changed compares against (MCP's write answers give a diff, not the whole memory).
    before: Memory | None = None
    linked: tuple[tuple[Link, Resolution], ...] = ()  # as `Fetched.linked`


@dataclass(frozen=True)
class Removed:
    """What a removal did: the path deleted, the memories whose links it changed
    (`MEMORY.md`, which lists each memory of a Claude Code folder), and the memories whose
    links to it now find no memory (worth saying while the user can still undo it; a name
    that finds another memory once this one is gone still works)."""

    path: str
    links_updated: tuple[str, ...] = ()
    linked_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class Summary:
    """One line of a listing: what the index knows without reading the file."""

    path: str
    title: str
    format: str
    meta: MemoryMeta
    expired: bool
    mtime_ns: int
    citation_id: str = ""
    citation_count: int = 0

    @classmethod
    def of(cls, row: Row, now_text: str) -> Summary:
        meta = MemoryMeta(
            created_at=maybe_timestamp(row.created_at),
            updated_at=maybe_timestamp(row.updated_at),
            tags=row.tags,
            source=row.source,
            expires_at=maybe_timestamp(row.expires_at),
        )
        expired = row.expired(now_text)
        return cls(
            row.path, row.title, row.format, meta, expired, row.mtime_ns, row.citation_id,
            row.citation_count,
        )  # fmt: skip

    @property
    def sort_time(self) -> float:
        moment = self.meta.updated_at or self.meta.created_at
        return moment.timestamp() if moment else self.mtime_ns / 1e9


@dataclass(frozen=True)
class Listing:
    memories: list[Summary]
    skipped: list[str] = field(default_factory=list)
    total: int | None = None  # of a page (limit, offset): how many there are in all


@dataclass(frozen=True)
class Fetched:
    """A memory as `get` shows it. `memory.links` are its links between memories, as
    every other reader takes them; `linked` is each link the index read (to a memory, another
    store or a repository file) with what it finds now, which `get` shows."""

    memory: Memory
    warnings: tuple[str, ...] = ()
    citation_id: str = ""  # bare; ids.format_citation_id() quotes it
    linked: tuple[tuple[Link, Resolution], ...] = ()
