"""The SQLite index of a store: fast reads, citation IDs, kept in step without a watcher.

Files are the truth and the index is a cache of them. Before it answers, the
index compares every file's (mtime, size) with what it recorded and re-reads
only what changed, appeared or vanished (a content hash catches a touch that
changed nothing, and files written within two seconds of the previous sync are
re-hashed, so an edit inside one mtime tick is not missed). `rebuild` starts
from nothing. One connection per call: the MCP server runs tools in threads.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MemoryToolError, NotFoundError
from ..formats.base import Document
from ..ids import ID_LENGTH, citation_id
from ..state import State
from ..storage import Store
from ..timestamps import format_timestamp
from . import schema

_RACY_NS = 2_000_000_000


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


ROW_COLUMNS = (
    "path, title, format, tags, created_at, updated_at, expires_at, source, citation_count, "
    "citation_id, mtime_ns"
)


def row_from(values: tuple[Any, ...]) -> Row:
    path, title, fmt, tags, created, updated, expires, source, count, cid, mtime = values
    tag_list = tuple(tags.split("\x1f")) if tags else ()
    return Row(path, title, fmt, tag_list, created, updated, expires, source, count, cid, mtime)


class Index:
    """The index of one store. `path=None` keeps it in memory for the object's lifetime."""

    def __init__(
        self, store: Store, path: Path | None, state: State, *, id_length: int = ID_LENGTH
    ) -> None:
        self.store = store
        self.path = path
        self.state = state
        self.id_length = id_length
        self._shared: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def connect(self, *, sync: bool = True) -> Iterator[sqlite3.Connection]:
        """A connection to an index that is in step with the files (unless sync=False)."""
        if self.path is None:
            with self._lock:
                if self._shared is None:
                    self._shared = schema.connect(None)
                if sync:
                    self.sync(self._shared)
                yield self._shared
            return
        conn = schema.connect(self.path)
        try:
            if sync:
                self.sync(conn)
            yield conn
        finally:
            conn.close()

    def rebuild(self) -> SyncStats:
        """Forget everything and index the store again from its files."""
        if self.path is None:
            with self._lock:
                if self._shared is not None:
                    self._shared.close()
                self._shared = schema.connect(None)
                return self.sync(self._shared)
        schema._discard(self.path)
        conn = schema.connect(self.path)
        try:
            return self.sync(conn)
        finally:
            conn.close()

    # -- keeping in step --------------------------------------------------------

    def sync(self, conn: sqlite3.Connection) -> SyncStats:
        started = time.perf_counter()
        disk = self.store.scan()
        known = {
            path: (mtime, size, digest)
            for path, mtime, size, digest in conn.execute(
                "SELECT path, mtime_ns, size, hash FROM memories"
            )
        }
        last = conn.execute("SELECT value FROM meta WHERE key = 'synced_at_ns'").fetchone()
        racy_after = int(last[0]) - _RACY_NS if last else None
        todo = [
            path
            for path, (mtime, size) in disk.items()
            if path not in known
            or known[path][:2] != (mtime, size)
            or (racy_after is not None and mtime >= racy_after)
        ]
        gone = [path for path in known if path not in disk]
        if not todo and not gone and last is not None:
            return SyncStats(len(disk), seconds=time.perf_counter() - started)
        now_ns = time.time_ns()
        conn.execute("BEGIN IMMEDIATE")
        try:
            stats = self._apply(conn, todo, gone, known)
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('synced_at_ns', ?)", (str(now_ns),)
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return SyncStats(len(disk), *stats, seconds=time.perf_counter() - started)

    def _apply(
        self,
        conn: sqlite3.Connection,
        todo: list[str],
        gone: list[str],
        known: dict[str, tuple[int, int, str]],
    ) -> tuple[int, int, int, int]:
        conn.executemany("DELETE FROM memories WHERE path = ?", [(p,) for p in gone])
        added: list[tuple[str, Document | None, str | None]] = []
        updated = touched = 0
        for path in sorted(todo):
            try:
                data, stat = self.store.read_bytes(path)
            except NotFoundError:
                continue  # vanished between the scan and the read
            except MemoryToolError as exc:
                _upsert_error(conn, path, str(exc), 0, 0, "")
                continue
            digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            if path in known and known[path][2] == digest:
                conn.execute(
                    "UPDATE memories SET mtime_ns = ?, size = ? WHERE path = ?",
                    (stat.st_mtime_ns, stat.st_size, path),
                )
                touched += 1
                continue
            try:
                doc: Document | None = self.store.parse(path, data, stat).doc
                error = None
            except MemoryToolError as exc:
                doc, error = None, str(exc)
            if path in known:
                updated += 1
            _upsert(conn, path, doc, error, stat.st_mtime_ns, stat.st_size, digest)
            if path not in known:
                added.append((path, doc, error))
        self._assign_ids(conn, added)
        return len(added), updated, len(gone), touched

    # -- citation IDs -----------------------------------------------------------

    def _assign_ids(
        self, conn: sqlite3.Connection, added: list[tuple[str, Document | None, str | None]]
    ) -> None:
        """Give new memories their IDs, oldest first, so collisions resolve the same way."""
        if not added:
            return
        taken = {row[0] for row in conn.execute("SELECT citation_id FROM memories") if row[0]}
        order = sorted(added, key=lambda a: (_created(a[1]), a[0]))
        assigned = []
        with self.state.connect() as state:
            state.execute("BEGIN IMMEDIATE")
            try:
                for path, doc, _ in order:
                    declared = doc.memory.meta.citation_id if doc else None
                    cid = self._choose_id(state, path, declared, taken)
                    taken.add(cid)
                    assigned.append((cid, path))
                state.execute("COMMIT")
            except BaseException:
                state.execute("ROLLBACK")
                raise
        conn.executemany("UPDATE memories SET citation_id = ? WHERE path = ?", assigned)

    def _choose_id(
        self, state: sqlite3.Connection, path: str, declared: str | None, taken: set[str]
    ) -> str:
        if declared and declared not in taken:
            return declared
        known = state.execute("SELECT citation_id FROM ids WHERE identity = ?", (path,)).fetchone()
        if known and known[0] not in taken:
            return str(known[0])
        salt = 0
        while True:
            cid = citation_id(path, salt, self.id_length)
            owner = state.execute(
                "SELECT identity FROM ids WHERE citation_id = ?", (cid,)
            ).fetchone()
            if cid not in taken and (owner is None or owner[0] == path):
                state.execute(
                    "INSERT INTO ids(identity, citation_id) VALUES (?, ?) "
                    "ON CONFLICT(identity) DO UPDATE SET citation_id = excluded.citation_id",
                    (path, cid),
                )
                return cid
            salt += 1

    # -- queries ----------------------------------------------------------------

    def rows(
        self, conn: sqlite3.Connection, category: str | None = None
    ) -> tuple[list[Row], list[str]]:
        """Readable memories (sorted by path) and the reasons unreadable ones were skipped."""
        where, args = _category_filter(category)
        rows = [
            row_from(values)
            for values in conn.execute(
                f"SELECT {ROW_COLUMNS} FROM memories WHERE error IS NULL{where} ORDER BY path", args
            )
        ]
        errors = [
            str(e[0])
            for e in conn.execute(
                f"SELECT error FROM memories WHERE error IS NOT NULL{where} ORDER BY path", args
            )
        ]
        return rows, errors

    def row(self, conn: sqlite3.Connection, path: str) -> Row | None:
        values = conn.execute(
            f"SELECT {ROW_COLUMNS} FROM memories WHERE path = ? AND error IS NULL", (path,)
        ).fetchone()
        return row_from(values) if values else None

    def path_of(self, conn: sqlite3.Connection, bare_id: str) -> str | None:
        found = conn.execute(
            "SELECT path FROM memories WHERE citation_id = ?", (bare_id,)
        ).fetchone()
        return str(found[0]) if found else None

    def citing(self, conn: sqlite3.Connection, files: Iterable[str]) -> list[str]:
        """Memories with a citation to any of these repository files."""
        wanted = sorted(set(files))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                str(row[0])
                for row in conn.execute(
                    "SELECT DISTINCT m.path FROM citations c JOIN memories m ON m.id = c.memory_id "
                    f"WHERE c.target IN ({marks})",
                    chunk,
                )
            )
        return sorted(found)


def _category_filter(category: str | None) -> tuple[str, tuple[str, ...]]:
    if not category:
        return "", ()
    prefix = category.strip("/") + "/"
    # path in [prefix, prefix with its last character bumped): a prefix match on the index.
    return " AND path >= ? AND path < ?", (prefix, prefix[:-1] + "0")


def _created(doc: Document | None) -> str:
    moment = doc.memory.meta.created_at if doc else None
    return format_timestamp(moment) if moment else "~"


def _upsert_error(
    conn: sqlite3.Connection, path: str, error: str, mtime: int, size: int, digest: str
) -> None:
    _upsert(conn, path, None, error, mtime, size, digest)


def _upsert(
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
        "INSERT INTO links(memory_id, ord, target, type, kind, line) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (memory_id, n, link.target, link.type, link.kind.value, link.line)
            for n, link in enumerate(memory.links or ())
        ],
    )
    conn.executemany(
        "INSERT INTO citations(memory_id, ord, target, line, end_line, snippet, verified, is_url) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (memory_id, n, c.target, c.line, c.end_line, c.snippet, c.verified, int(c.is_url))
            for n, c in enumerate(meta.citations)
        ],
    )


def _time(moment: object) -> str | None:
    from datetime import datetime

    return format_timestamp(moment) if isinstance(moment, datetime) else None
