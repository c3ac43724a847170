"""Writing one memory's rows: the memory, its tags, links and citations.

Rows are replaced whole for a memory that changed; FTS is kept in step by the
triggers in schema.py, in the same transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ..formats.base import Document
from ..model import Link, LinkKind
from ..timestamps import format_timestamp


def path_key(path: str) -> str:
    """The lookup key of a memory path: its name, case-folded (what links are matched by)."""
    return path.rpartition("/")[2].casefold()


def link_key(link: Link) -> str:
    """The key under which a link is found again when memories of that name come and go."""
    if link.kind is LinkKind.MEM_ID:
        return f"mem:{link.target.removeprefix('mem:')}"
    target = (
        link.target.strip().split(":", 1)[-1] if link.kind is not LinkKind.MARKDOWN else link.target
    )
    name = target.rstrip("/").rpartition("/")[2]
    if name.lower().endswith(".md"):
        name = name[:-3]
    return name.casefold()


def chunks(items: list[Any], size: int = 500) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def upsert_error(
    conn: sqlite3.Connection, path: str, error: str, mtime: int, size: int, digest: str
) -> None:
    upsert(conn, path, None, error, mtime, size, digest)


def upsert(
    conn: sqlite3.Connection,
    path: str,
    doc: Document | None,
    error: str | None,
    mtime: int,
    size: int,
    digest: str,
) -> None:
    memory = doc.memory if doc else None
    meta = memory.meta if memory else None
    values = {
        "path": path,
        "title": memory.title if memory else "",
        "tags": "\x1f".join(meta.tags) if meta else "",
        "content": memory.content if memory else "",
        "format": memory.format if memory else None,
        "created_at": _time(meta.created_at if meta else None),
        "updated_at": _time(meta.updated_at if meta else None),
        "expires_at": _time(meta.expires_at if meta else None),
        "source": meta.source if meta else None,
        "confidence": meta.confidence if meta else None,
        "last_verified": _time(meta.last_verified if meta else None),
        "citation_count": len(meta.citations) if meta else 0,
        "declared_id": meta.citation_id if meta else None,
        "mtime_ns": mtime,
        "size": size,
        "hash": digest,
        "error": error,
        "problems": "\n".join(doc.problems) if doc else "",
    }
    columns = ", ".join(values)
    marks = ", ".join(f":{k}" for k in values)
    updates = ", ".join(f"{k} = excluded.{k}" for k in values if k != "path")
    memory_id = conn.execute(
        f"INSERT INTO memories ({columns}) VALUES ({marks}) "
        f"ON CONFLICT(path) DO UPDATE SET {updates} RETURNING id",
        values,
    ).fetchone()[0]
    for table in ("tags", "links", "citations"):
        conn.execute(f"DELETE FROM {table} WHERE memory_id = ?", (memory_id,))
    if memory is None or meta is None:
        return
    conn.executemany(
        "INSERT INTO tags(memory_id, tag) VALUES (?, ?)", [(memory_id, t) for t in meta.tags]
    )
    conn.executemany(
        "INSERT INTO links(memory_id, ord, target, type, kind, line, key) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (memory_id, n, link.target, link.type, link.kind.value, link.line, link_key(link))
            for n, link in enumerate(memory.links or ())
        ],
    )
    lines = doc.citation_lines if doc else []
    conn.executemany(
        "INSERT INTO citations(memory_id, ord, target, line, end_line, snippet, verified, "
        "commit_sha, extra, file_line, is_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                memory_id,
                n,
                c.target,
                c.line,
                c.end_line,
                c.snippet,
                c.verified,
                c.commit,
                json.dumps(c.extra) if c.extra else None,
                lines[n] if n < len(lines) else None,
                int(c.is_url),
            )
            for n, c in enumerate(meta.citations)
        ],
    )


def _time(moment: object) -> str | None:
    return format_timestamp(moment) if isinstance(moment, datetime) else None
