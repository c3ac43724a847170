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
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MemoryToolError
from ..formats.base import Document
from ..ids import ID_LENGTH
from ..model import Citation, Memory, MemoryMeta
from ..scan import RACY_NS, Snapshot, folders_unchanged, rescan
from ..state import ConnectionPool, State
from ..storage import Loaded, Store
from . import schema
from .idassign import assign_ids
from .linking import resolve_links
from .reading import read_many
from .writer import Children, upsert

FULL_CHECK_LIMIT = 5_000  # memories; above this, files are stat-ed at most every interval
FULL_CHECK_INTERVAL = 5.0  # seconds


class IndexCorruptError(MemoryToolError):
    """The index file turned out to be damaged mid-call; it was removed, the next call rebuilds."""


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


# A memory as verification needs it, each citation's line in its file, its citation ID.
Verifiable = tuple[Memory, tuple[int | None, ...], str | None]


def row_from(values: tuple[Any, ...]) -> Row:
    path, title, fmt, tags, created, updated, expires, source, count, cid, mtime = values
    tag_list = tuple(tags.split("\x1f")) if tags else ()
    return Row(path, title, fmt, tag_list, created, updated, expires, source, count, cid, mtime)


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
    ) -> None:
        """`persistent` keeps one connection per thread open between calls (a server):
        opening and closing costs more than a small query, and closing the last
        connection to a WAL database checkpoints it, with an fsync."""
        self.store = store
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

    def sync(self, conn: sqlite3.Connection, *, check_files: bool | None = None) -> SyncStats:
        """Bring the index in step with the files; see scan.py for how changes are found.

        Files are stat-ed one by one on every call for stores up to
        `full_check_limit` memories; bigger stores check folders on every call
        and files at least every `full_check_interval` seconds.
        """
        started = time.perf_counter()
        now_ns = time.time_ns()
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        synced_at = int(meta["synced_at_ns"]) if "synced_at_ns" in meta else None
        checked_at = int(meta.get("files_checked_at_ns", 0))
        count = int(meta.get("files", 0))
        if check_files is None:
            overdue = now_ns - checked_at > self.full_check_interval * 1e9
            check_files = count <= self.full_check_limit or overdue
        if (
            not check_files
            and "dirs" in meta
            and synced_at is not None
            and folders_unchanged(str(self.store.root), json.loads(meta["dirs"]), synced_at)
        ):
            return SyncStats(count, seconds=time.perf_counter() - started)
        indexed: dict[str, tuple[int, int]] = {
            path: (mtime, size)
            for path, mtime, size in conn.execute("SELECT path, mtime_ns, size FROM memories")
        }
        previous = Snapshot(indexed, json.loads(meta["dirs"])) if "dirs" in meta else None
        disk = rescan(
            str(self.store.root), previous, check_files=check_files, synced_at_ns=synced_at
        )
        racy_after = synced_at - RACY_NS if synced_at else None
        todo = [
            path
            for path, stamp in disk.files.items()
            if indexed.get(path) != stamp or (racy_after is not None and stamp[0] >= racy_after)
        ]
        gone = [path for path in indexed if path not in disk.files]
        dirs_changed = previous is None or disk.dirs != previous.dirs
        if not todo and not gone and not dirs_changed and synced_at is not None:
            settle: dict[str, object] = {}
            if racy_after is not None and any(m >= racy_after for m in disk.dirs.values()):
                settle["synced_at_ns"] = now_ns  # let recently changed folders settle
            if check_files and len(indexed) > self.full_check_limit:
                settle["files_checked_at_ns"] = now_ns
            if settle:
                _set_meta(conn, settle)
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
        updated = touched = 0
        children = Children()
        # A cold build: the full-text index is built once at the end.
        bulk = len(todo) > 100 and not conn.execute("SELECT 1 FROM memories LIMIT 1").fetchone()
        if bulk:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('bulk', '1')")
        preloaded = {p: r for p, r in (loaded or {}).items() if r.doc.memory.links is not None}
        for path, ready in sorted(preloaded.items()):
            digest = hashlib.blake2b(ready.data, digest_size=16).hexdigest()
            updated += path in known
            upsert(
                conn, path, ready.doc, None, ready.mtime_ns, ready.size, digest,
                fresh=path not in known, children=children,
            )  # fmt: skip
            if path not in known:
                added.append((path, ready.doc, None))
        digests = {path: row[2] for path, row in known.items()}
        rest = sorted(p for p in todo if p not in preloaded)
        for outcome in read_many(self.store, rest, digests):
            path = outcome.path
            if outcome.kind == "gone":
                continue
            if outcome.kind == "same":
                conn.execute(
                    "UPDATE memories SET mtime_ns = ?, size = ? WHERE path = ?",
                    (outcome.mtime, outcome.size, path),
                )
                touched += 1
                continue
            updated += path in known
            upsert(
                conn, path, outcome.doc, outcome.error, outcome.mtime, outcome.size,
                outcome.digest, fresh=path not in known, children=children,
            )  # fmt: skip
            if path not in known:
                added.append((path, outcome.doc, outcome.error))
        children.flush(conn)
        if bulk:
            conn.execute("DELETE FROM meta WHERE key = 'bulk'")
            conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")
        assign_ids(conn, self.state, added, self.id_length)
        appeared = [path for path, _, _ in added]
        resolve_links(conn, self.store.name, todo, [*appeared, *gone], gone_ids)
        return len(added), updated, len(gone), touched

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

    def verifiable(
        self,
        conn: sqlite3.Connection,
        paths: Iterable[str] | None = None,
        *,
        content: bool = True,
    ) -> tuple[list[Verifiable], list[str]]:
        """Memories with citations, rebuilt from the index (no file is parsed), and the
        reasons unreadable ones among `paths` were skipped.

        Each memory carries its content and citations only, which is what
        verification needs (the content only when asked: only prose mentions need it,
        and it is most of what the index holds); its second element gives each
        citation's line in the file, and the third its citation ID.
        """
        if paths is None:
            return self._verifiable(conn, "", [], content)
        wanted = sorted(set(paths))
        found: list[Verifiable] = []
        skipped: list[str] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            more, errors = self._verifiable(
                conn, f"WHERE m.path IN ({','.join('?' * len(chunk))})", chunk, content
            )
            found.extend(more)
            skipped.extend(errors)
        return found, skipped

    def _verifiable(
        self, conn: sqlite3.Connection, where: str, args: list[str], content: bool
    ) -> tuple[list[Verifiable], list[str]]:
        citations: dict[int, tuple[list[Citation], list[int | None]]] = {}
        for memory_id, target, line, end, snippet, verified, commit, extra, at in conn.execute(
            "SELECT c.memory_id, c.target, c.line, c.end_line, c.snippet, c.verified, "
            "c.commit_sha, c.extra, c.file_line FROM citations c "
            + (f"JOIN memories m ON m.id = c.memory_id {where} " if where else "")
            + "ORDER BY c.memory_id, c.ord",
            args,
        ):
            fields = tuple(tuple(pair) for pair in json.loads(extra)) if extra else ()
            citation = Citation(target, line, end, snippet, verified, commit, fields)
            cited, lines = citations.setdefault(memory_id, ([], []))
            cited.append(citation)
            lines.append(at)
        found, skipped = [], []
        nothing: tuple[list[Citation], list[int | None]] = ([], [])
        text = "m.content" if content else "''"
        for memory_id, path, body, error, cid in conn.execute(
            f"SELECT m.id, m.path, {text}, m.error, m.citation_id FROM memories m {where} "
            "ORDER BY m.path",
            args,
        ):
            if error is not None:
                skipped.append(str(error))
                continue
            cited, lines = citations.get(memory_id, nothing)
            meta = MemoryMeta(citations=tuple(cited))
            found.append((Memory(path, body, meta, None), tuple(lines), cid))
        return found, skipped

    def readable(
        self, conn: sqlite3.Connection, paths: Iterable[str], category: str | None = None
    ) -> list[str]:
        """Those of these paths that are indexed, readable and in the category, sorted."""
        wanted = sorted(set(paths))
        where, extra = _category_filter(category)
        found: list[str] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            found.extend(
                str(row[0])
                for row in conn.execute(
                    "SELECT path FROM memories WHERE error IS NULL "
                    f"AND path IN ({','.join('?' * len(chunk))}){where}",
                    (*chunk, *extra),
                )
            )
        return sorted(found)

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


def _set_meta(conn: sqlite3.Connection, values: dict[str, object]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        [(k, str(v)) for k, v in values.items()],
    )


def _category_filter(category: str | None) -> tuple[str, tuple[str, ...]]:
    if not category:
        return "", ()
    prefix = category.strip("/") + "/"
    # path in [prefix, prefix with its last character bumped): a prefix match on the index.
    return " AND path >= ? AND path < ?", (prefix, prefix[:-1] + "0")
