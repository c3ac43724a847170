"""The SQLite index of a store: fast reads, citation IDs, kept in step without a watcher.

Files are the truth and the index is a cache of them. Before it answers, the
index compares every file's (mtime, size) with what it recorded and re-reads
only what changed, appeared or vanished (a content hash catches a touch that
changed nothing, and files whose mtime is within the filesystem's timestamp
resolution of the previous sync's start, or later, are re-hashed, so an edit
inside one mtime tick is not missed; see store/scan.py). `rebuild` starts
from nothing. One connection per call: the MCP server runs tools in threads.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from memory_enhancement.core.errors import MemoryToolError, NotFoundError
from memory_enhancement.core.ids import ID_LENGTH
from memory_enhancement.core.links import LinkStatus, RepoView, Resolution
from memory_enhancement.core.model import Link, LinkKind
from memory_enhancement.index import schema
from memory_enhancement.index.quick import (
    FULL_CHECK_INTERVAL,
    FULL_CHECK_LIMIT,
    changes,
    files_due,
    folders_settled,
)
from memory_enhancement.index.rows import SyncStats
from memory_enhancement.store.disk import Loaded, Store
from memory_enhancement.store.scan import Snapshot
from memory_enhancement.store.state import ConnectionPool, State


class IndexCorruptError(MemoryToolError):
    """The index file turned out to be damaged mid-call; it was removed, the next call rebuilds."""


class Index:
    """The index of one store. `path=None` keeps it in memory for the object's lifetime."""

    def __init__(
        self,
        store: Store,
        path: Path | None,
        state: State,
        *,
        id_length: int = ID_LENGTH,
        full_check_limit: int = FULL_CHECK_LIMIT,
        full_check_interval: float = FULL_CHECK_INTERVAL,
        persistent: bool = False,
        repo: RepoView | None = None,
    ) -> None:
        """`persistent` keeps one connection per thread open between calls (a server):
        opening and closing costs more than a small query, and closing the last
        connection to a WAL database checkpoints it, with an fsync."""
        self.store = store
        self.repo = repo  # the repository's files, for links to them (None: no repository)
        self.path = path
        self.state = state
        self.id_length = id_length
        self.full_check_limit = full_check_limit
        self.full_check_interval = full_check_interval
        self._shared: sqlite3.Connection | None = None
        self._pool = ConnectionPool(lambda: schema.connect(path)) if persistent and path else None
        self._lock = threading.RLock()
        self._scans = threading.local()  # `take_scan`: per thread, as a server syncs in many

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
        conn = self._pool.take() if self._pool else schema.connect(self.path)
        keep = False
        try:
            if sync:
                conn = self._sync_or_rebuild(conn, self.path)
            yield conn
            keep = self._pool is not None
        except sqlite3.DatabaseError as exc:
            if not schema.is_corrupt(exc):
                raise
            conn.close()
            schema._discard(self.path)
            raise IndexCorruptError(
                f"the index {self.path} is corrupt ({exc}); it was removed and will be "
                "rebuilt from the memory files on the next call"
            ) from None
        finally:
            if keep and self._pool is not None:
                self._pool.give(conn)
            else:
                conn.close()

    def _sync_or_rebuild(self, conn: sqlite3.Connection, path: Path) -> sqlite3.Connection:
        """Sync; an index found corrupt on the way is discarded and built again from the files.

        Opening checks only the header and schema version, so damage deeper in
        the file (a torn page, a bad FTS segment) shows up here, as
        SQLITE_CORRUPT, rather than as a crash in the caller.
        """
        try:
            self.sync(conn)
            return conn
        except sqlite3.DatabaseError as exc:
            if not schema.is_corrupt(exc):
                raise
        conn.close()
        schema._discard(path)
        fresh = schema.connect(path)
        try:
            self.sync(fresh)
        except BaseException:
            fresh.close()
            raise
        return fresh

    def rebuild(self) -> SyncStats:
        """Forget everything and index the store again from its files.

        Embedding vectors are kept (they are costly to make and keyed by content), when
        the old file can still be read.
        """
        if self.path is None:
            with self._lock:
                vectors = _saved_vectors(self._shared) if self._shared is not None else []
                if self._shared is not None:
                    self._shared.close()
                self._shared = schema.connect(None)
                stats = self.sync(self._shared)
                _restore_vectors(self._shared, vectors)
                return stats
        vectors = []
        with contextlib.suppress(sqlite3.DatabaseError):
            old = schema.connect(self.path)
            try:
                vectors = _saved_vectors(old)
            finally:
                old.close()
        schema._discard(self.path)
        conn = schema.connect(self.path)
        try:
            stats = self.sync(conn)
            _restore_vectors(conn, vectors)
            return stats
        finally:
            conn.close()

    # -- keeping in step --------------------------------------------------------

    def sync(self, conn: sqlite3.Connection, *, check_files: bool | None = None) -> SyncStats:
        """Bring the index in step with the files; see scan.py for how changes are found.

        Files are stat-ed one by one on every call for stores up to
        `full_check_limit` memories; bigger stores check folders on every call
        and files at least every `full_check_interval` seconds.
        """
        started = time.perf_counter()
        now_ns = time.time_ns()
        self._scans.last = None
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        count = int(meta.get("files", 0))
        if check_files is None:
            check_files = files_due(meta, now_ns, self.full_check_limit, self.full_check_interval)
        # The same test the quick read path (quick.py) answers without loading this module.
        if not check_files and folders_settled(conn, meta, str(self.store.root)):
            return SyncStats(count, seconds=time.perf_counter() - started)
        found = changes(
            conn, meta, str(self.store.root), now_ns, check_files=check_files,
            limit=self.full_check_limit,
        )  # fmt: skip
        todo, gone, disk = found.todo, found.gone, found.disk
        self._scans.last = disk if disk.links is not None else None
        if found.none:
            if found.settle:
                _set_meta(conn, found.settle)
            return SyncStats(len(disk.files), seconds=time.perf_counter() - started)
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read what is indexed now that we hold the write lock: another process
            # or thread may have synced since `known` was read. With the stale view, a
            # memory it had just indexed looked new here and got a second citation ID,
            # so the ID an add had returned changed under the agent (MCP parallel adds).
            # Only the rows of the paths at hand matter, and reading just those keeps a
            # small change cheap in a big store.
            from memory_enhancement.index.apply import apply, known_rows

            known = known_rows(conn, [*todo, *gone])
            stats = apply(conn, todo, gone, known, **self._parts())
            values: dict[str, object] = {
                "synced_at_ns": now_ns,
                "dirs": json.dumps(disk.dirs),
                "files": len(disk.files),
            }
            if check_files:
                values["files_checked_at_ns"] = now_ns
            _set_meta(conn, values)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return SyncStats(len(disk.files), *stats, seconds=time.perf_counter() - started)

    def take_scan(self) -> Snapshot | None:
        """The snapshot of the last sync this thread ran, when it stat-ed every memory file
        itself (`Snapshot.links`), once: a caller right after its own sync (`connect`)
        takes the stats of that call, never an earlier call's."""
        found: Snapshot | None = getattr(self._scans, "last", None)
        self._scans.last = None
        return found

    def refresh(
        self,
        conn: sqlite3.Connection,
        paths: list[str],
        loaded: Mapping[str, Loaded] | None = None,
    ) -> None:
        """Bring just these memories in step (after this process wrote them).

        Cheaper than a sync of the whole store on every write; the next read
        still syncs everything, so nothing written by others is missed. Memories
        the caller already read (with links) are taken as they are, not read again.
        """
        present = [p for p in paths if self.store.exists(p)]
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Read under the write lock, as sync does, so a concurrent writer's rows count.
            from memory_enhancement.index.apply import apply, known_rows

            known = known_rows(conn, paths)
            gone = [p for p in paths if p in known and p not in present]
            apply(conn, present, gone, known, loaded or {}, **self._parts())
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _parts(self) -> dict[str, Any]:
        """What writing a sync's changes needs besides the connection (index/apply.py)."""
        return {"store": self.store, "state": self.state, "repo": self.repo,
                "id_length": self.id_length}  # fmt: skip

    # -- citation IDs and links of single memories ------------------------------

    def citation_id(self, path: str, loaded: Loaded | None = None) -> str:
        """The bare citation ID of an existing memory, indexing just that memory when needed.

        Reading one memory must not parse the whole store; when the caller already
        read the file (`loaded`, with links), the index takes it as it is.
        """
        if loaded is None or loaded.doc.memory.links is None:
            stat = os.stat(self.store.file_for(path))
            current = (stat.st_mtime_ns, stat.st_size)
            ready = None
        else:
            current = (loaded.mtime_ns, loaded.size)
            ready = {path: loaded}
        with self.connect(sync=False) as conn:
            row = conn.execute(
                "SELECT m.citation_id, f.mtime_ns, f.size FROM memories m "
                "JOIN files f ON f.path = m.path WHERE m.path = ?",
                (path,),
            ).fetchone()
            if row is None or row[0] is None or tuple(row[1:]) != current:
                self.refresh(conn, [path], ready)
                row = conn.execute(
                    "SELECT citation_id FROM memories WHERE path = ?", (path,)
                ).fetchone()
        if row is None or row[0] is None:  # pragma: no cover - the file was just read
            raise NotFoundError(f"memory not found: {path!r}")
        return str(row[0])

    def citation_ids(
        self, paths: Iterable[str], loaded: Mapping[str, Loaded] | None = None
    ) -> dict[str, str]:
        """path -> bare citation ID. The index was brought in step by the caller's run,
        so it is not synced again; a memory it does not know yet is indexed on its own."""
        wanted = list(paths)
        with self.connect(sync=False) as conn:
            found = _ids_of(conn, wanted)
            missing = [p for p in wanted if p not in found]
            if missing:
                self.refresh(conn, missing, loaded)
                found.update(_ids_of(conn, missing))
        return found

    def linked(self, path: str, *, sync: bool = True) -> tuple[tuple[Link, Resolution], ...]:
        """Each link of a memory and what it finds now, in the order written: a memory
        (resolved), none or several (dangling, ambiguous, the words of `links`), another
        store's, or a repository file, there or not (checked now, as `links` does). `get`
        shows them so: an agent followed a dangling link shown like one that holds.

        The index is synced first: a link to a memory moved or removed since it was last
        synced dangles now (a `get` that took links from the row of the memory alone showed
        one to a memory renamed by hand as found). `sync=False` (a write, which just indexed
        what it wrote) syncs only when a link finds no memory, which a memory not indexed yet
        may be (an agent's first call, update_memory adding a link to a memory written by
        hand, answered it dangling), or, on an index never synced whole, a candidate names
        nothing (a `get_memory` of rjmurillo/ai-agents' memory-index answered none of its
        188 links, and all of them once anything had listed the store).
        """
        if not sync:
            with self.connect(sync=False) as conn:
                sync = (
                    conn.execute(
                        "SELECT 1 FROM links l JOIN memories m ON m.id = l.memory_id "
                        "WHERE m.path = ? AND (l.status IN ('dangling', 'ambiguous') OR "
                        "l.status IN ('unmatched', 'repository') AND NOT EXISTS "
                        "(SELECT 1 FROM meta WHERE key = 'synced_at_ns')) LIMIT 1",
                        (path,),
                    ).fetchone()
                    is not None
                )
        with self.connect(sync=sync) as conn:
            rows = conn.execute(
                "SELECT l.target, l.type, l.kind, l.line, l.status, l.resolved, l.candidates "
                "FROM links l JOIN memories m ON m.id = l.memory_id "
                "WHERE m.path = ? AND l.status != 'unmatched' ORDER BY l.ord",
                (path,),
            ).fetchall()
        found = []
        for target, kind, how, line, status, resolved, candidates in rows:
            link = Link(target, kind, LinkKind(how), line)
            if LinkStatus(status).to_file:  # files come and go since the memory was written
                resolved = self.repo.find(path, target) if self.repo is not None else None
                status = "repository" if resolved is not None else "missing"
            choices = tuple(candidates.split("\x1f")) if candidates else ()
            found.append((link, Resolution(LinkStatus(status), resolved, choices)))
        return tuple(found)


def _saved_vectors(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    try:
        return conn.execute("SELECT hash, model, chunks, data FROM vectors").fetchall()
    except sqlite3.DatabaseError:
        return []  # damaged: they are made again


def _restore_vectors(conn: sqlite3.Connection, vectors: list[tuple[object, ...]]) -> None:
    """Put back the vectors of texts still in the store."""
    if not vectors:
        return
    present = {row[0] for row in conn.execute("SELECT DISTINCT hash FROM memories")}
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(
            "INSERT OR REPLACE INTO vectors(hash, model, chunks, data) VALUES (?, ?, ?, ?)",
            [row for row in vectors if row[0] in present],
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _set_meta(conn: sqlite3.Connection, values: dict[str, object]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        [(k, str(v)) for k, v in values.items()],
    )


def _ids_of(conn: sqlite3.Connection, paths: list[str]) -> dict[str, str]:
    """Known IDs of these paths: one query per 500 paths, or one scan for a whole store."""
    if len(paths) > 2000:
        wanted = set(paths)
        rows = conn.execute(
            "SELECT path, citation_id FROM memories WHERE citation_id IS NOT NULL"
        ).fetchall()
        return {path: cid for path, cid in rows if path in wanted}
    found: dict[str, str] = {}
    for start in range(0, len(paths), 500):
        chunk = paths[start : start + 500]
        found.update(
            conn.execute(
                "SELECT path, citation_id FROM memories WHERE citation_id IS NOT NULL "
                f"AND path IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
        )
    return found
