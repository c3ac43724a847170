"""What the index hands back: rows of memories and what a sync did.

Plain values, kept apart from the Index class so that a listing, search or
result type can name them without loading the code that keeps the index in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_enhancement.index.columns import ROW_COLUMNS


@dataclass(frozen=True)
class SyncStats:
    """What a sync did."""

    scanned: int
    added: int = 0
    updated: int = 0
    removed: int = 0
    touched: int = 0  # mtime changed, content did not
    seconds: float = 0.0


@dataclass(frozen=True)
class Row:
    """One memory as the index knows it (what listings and search show)."""

    path: str
    title: str
    format: str
    tags: tuple[str, ...]
    created_at: str | None
    updated_at: str | None
    expires_at: str | None
    source: str | None
    citation_count: int
    citation_id: str
    mtime_ns: int

    def expired(self, now_text: str) -> bool:
        return self.expires_at is not None and self.expires_at <= now_text


def row_from(values: tuple[Any, ...]) -> Row:
    path, title, fmt, tags, created, updated, expires, source, count, cid, mtime = values
    tag_list = tuple(tags.split("\x1f")) if tags else ()
    return Row(path, title, fmt, tag_list, created, updated, expires, source, count, cid, mtime)


__all__ = ["ROW_COLUMNS", "Row", "SyncStats", "row_from"]
