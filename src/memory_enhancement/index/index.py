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
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from memory_enhancement.core.errors import MemoryToolError, NotFoundError
from memory_enhancement.core.ids import ID_LENGTH
from memory_enhancement.core.links import RepoView
from memory_enhancement.core.mentions import may_mention
from memory_enhancement.core.model import Link, LinkKind
from memory_enhancement.index import schema
from memory_enhancement.index.idassign import assign_ids
from memory_enhancement.index.linking import resolve_links
from memory_enhancement.index.quick import (
    FULL_CHECK_INTERVAL,
    FULL_CHECK_LIMIT,
    changes,
    files_due,
    folders_settled,
)
from memory_enhancement.index.reading import read_many
from memory_enhancement.index.rows import SyncStats
from memory_enhancement.index.writer import Children, UnindexableError, upsert
from memory_enhancement.store.disk import Loaded, Store
from memory_enhancement.store.formats.base import Document
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
            known = _known(conn, [*todo, *gone])
            stats = self._apply(conn, todo, gone, known)
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
            known = _known(conn, paths)
            gone = [p for p in paths if p in known and p not in present]
            self._apply(conn, present, gone, known, loaded or {})
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _apply(
        self,
        conn: sqlite3.Connection,
        todo: list[str],
        gone: list[str],
        known: dict[str, tuple[int, int, str]],
        loaded: Mapping[str, Loaded] | None = None,
    ) -> tuple[int, int, int, int]:
        gone_ids = [
            row[0]
            for p in gone
            for row in conn.execute("SELECT citation_id FROM memories WHERE path = ?", (p,))
        ]
        conn.executemany("DELETE FROM memories WHERE path = ?", [(p,) for p in gone])
        added: list[tuple[str, Document | None, str | None]] = []
        updated = 0
        same: set[str] = set()
        children = Children()
        # A cold build: the full-text index is built once at the end.
        bulk = len(todo) > 100 and not conn.execute("SELECT 1 FROM memories LIMIT 1").fetchone()
        if bulk:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('bulk', '1')")
        preloaded = {p: r for p, r in (loaded or {}).items() if r.doc.memory.links is not None}
        for path, ready in sorted(preloaded.items()):
            digest = hashlib.blake2b(ready.data, digest_size=16).hexdigest()
            updated += path in known
            _upsert_or_skip(
                conn, path, ready.doc, None, ready.mtime_ns, ready.size, digest,
                fresh=path not in known, children=children, mentions=may_mention(ready.data),
            )  # fmt: skip
            if path not in known:
                added.append((path, ready.doc, None))
        digests = {path: row[2] for path, row in known.items()}
        rest = sorted(p for p in todo if p not in preloaded)
        restamped: list[tuple[int, int, str]] = []  # same bytes, new stamp: one statement
        for outcome in read_many(self.store, rest, digests):
            path = outcome.path
            if outcome.kind == "gone":
                continue
            if outcome.kind == "same":
                same.add(path)
                restamped.append((outcome.mtime, outcome.size, path))
                continue
            updated += path in known
            _upsert_or_skip(
                conn, path, outcome.doc, outcome.error, outcome.mtime, outcome.size,
                outcome.digest, fresh=path not in known, children=children,
                mentions=outcome.mentions,
            )  # fmt: skip
            if path not in known:
                added.append((path, outcome.doc, outcome.error))
        conn.executemany("UPDATE memories SET mtime_ns = ?, size = ? WHERE path = ?", restamped)
        touched = len(restamped)
        children.flush(conn)
        if bulk:
            conn.execute("DELETE FROM meta WHERE key = 'bulk'")
            conn.execute(  # the triggers stood aside (schema.py)
                "UPDATE meta SET value = value + 1 WHERE key = 'texts_generation'"
            )
            conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")
            conn.execute("INSERT INTO memories_path_fts(memories_path_fts) VALUES ('rebuild')")
        assign_ids(conn, self.state, added, self.id_length)
        appeared = [path for path, _, _ in added]
        # A file touched without a change (same bytes, new mtime) keeps its links: only the
        # memories read anew have theirs resolved again (a bulk rewrite of a store would
        # otherwise resolve every link of it).
        reread = [p for p in todo if p not in same] if same else todo
        resolve_links(conn, self.store.name, reread, [*appeared, *gone], gone_ids, self.repo)
        return len(added), updated, len(gone), touched

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
                "SELECT citation_id, mtime_ns, size FROM memories WHERE path = ?", (path,)
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

    def links_of(self, path: str) -> tuple[Link, ...]:
        """A memory's links as the index extracted them (call after citation_id).

        `get` reads the file without extracting links and takes them from the index
        row it just checked is current: same result, no markdown parser to load.
        Only links between memories: candidates that name nothing and links to
        repository files (`links` reports those whose file is missing) are left out.
        On an index never synced whole, a candidate naming a memory not indexed yet
        counts as naming nothing until the next full sync (any listing or search).
        """
        with self.connect(sync=False) as conn:
            rows = conn.execute(
                "SELECT l.target, l.type, l.kind, l.line FROM links l "
                "JOIN memories m ON m.id = l.memory_id "
                "WHERE m.path = ? AND l.status NOT IN ('unmatched', 'repository', 'missing') "
                "ORDER BY l.ord",
                (path,),
            ).fetchall()
        return tuple(Link(target, kind, LinkKind(how), line) for target, kind, how, line in rows)


def _upsert_or_skip(
    conn: sqlite3.Connection,
    path: str,
    doc: Document | None,
    error: str | None,
    mtime: int,
    size: int,
    digest: str,
    *,
    fresh: bool,
    children: Children,
    mentions: bool = False,
) -> None:
    """Index one memory; one the index cannot hold is recorded as unreadable (and so
    reported and skipped by every listing) instead of failing the whole sync."""
    try:
        upsert(
            conn, path, doc, error, mtime, size, digest, fresh=fresh, children=children,
            mentions=mentions,
        )  # fmt: skip
    except UnindexableError as exc:
        upsert(conn, path, None, str(exc), mtime, size, digest, children=children)


def _known(conn: sqlite3.Connection, paths: list[str]) -> dict[str, tuple[int, int, str]]:
    """What the index records (mtime, size, hash) for these paths, where it has them."""
    known: dict[str, tuple[int, int, str]] = {}
    for start in range(0, len(paths), 500):
        chunk = paths[start : start + 500]
        known.update(
            (path, (mtime, size, digest))
            for path, mtime, size, digest in conn.execute(
                "SELECT path, mtime_ns, size, hash FROM memories "
                f"WHERE path IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    return known


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
