"""What the tool learns that is not in any file: IDs handed out, usage, history.

Unlike the index this is not a cache: usage counts and verification history
cannot be rebuilt from the memories. So it lives in its own SQLite file (under
the tool's data folder, one per store), is migrated forward step by step and
never discarded; a database that cannot be opened is moved aside, not deleted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from memory_enhancement.core.errors import MemoryToolError, StoreError
from memory_enhancement.store.state_schema import MIGRATIONS

T = TypeVar("T")
log = logging.getLogger("memory_enhancement.state")


class ConnectionPool:
    """One open connection per thread, reopened when the database file was replaced.

    For long-running processes (the MCP server). A connection is handed back
    after each use; if the file it was opened on is gone or replaced (a
    `reindex` by another process removes and rebuilds it), a new one is opened.
    """

    def __init__(self, opener: Callable[[], sqlite3.Connection]) -> None:
        self._opener = opener
        self._local = threading.local()

    def take(self) -> sqlite3.Connection:
        held: tuple[sqlite3.Connection, str, int | None] | None = getattr(self._local, "held", None)
        self._local.held = None
        if held is not None:
            conn, path, inode = held
            if _inode(path) == inode:
                return conn
            conn.close()
        return self._opener()

    def give(self, conn: sqlite3.Connection) -> None:
        path = _database_file(conn)
        self._local.held = (conn, path, _inode(path))

    def close(self) -> None:
        """Close this thread's connection, if one is held."""
        held = getattr(self._local, "held", None)
        self._local.held = None
        if held is not None:
            held[0].close()


def _database_file(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row else ""


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino if path else None
    except OSError:
        return None


class State:
    """The per-store state database. None as path keeps it in memory (tests, throwaway use)."""

    def __init__(self, path: Path | None, *, persistent: bool = False) -> None:
        self.path = path
        self._memory: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._pool = ConnectionPool(lambda: _open_file(path)) if persistent and path else None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """One connection for every `connect` inside, closed at the end (in this thread).

        For a command that reads and writes the state several times, as a verify-all
        with mentions does (the mention cache, the files that mention nothing, the
        history): each opening costs a millisecond of checks, and each closing of the
        last connection a checkpoint of the write-ahead log, 2 ms. A server's state
        (`persistent`) holds its connections already."""
        if self._pool is not None or self.path is None:
            yield
            return
        path = self.path
        pool = self._pool = ConnectionPool(lambda: _open_file(path))
        try:
            yield
        finally:
            self._pool = None
            pool.close()

    @contextlib.contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection to the state database.

        Opening checks the header and the schema; damage deeper in the file shows
        up as an error while the caller uses the connection. Then the file is
        checked, and a damaged one is moved aside (kept for a person) and reported
        as `StateDamagedError`, which says so and is never mistaken for damage to
        the index (which would then be thrown away for nothing, on every call).
        """
        if self.path is None:
            with self._lock:
                if self._memory is None:
                    self._memory = _open(":memory:")
                yield self._memory
            return
        path = self.path
        conn = self._pool.take() if self._pool is not None else _open_file(path)
        try:
            yield conn
        except sqlite3.DatabaseError as exc:
            damaged = _damaged(conn)
            conn.close()
            if not damaged:
                raise
            aside = _move_aside(path)
            raise StateDamagedError(
                f"the state database {path} is damaged ({exc}); it was moved aside to "
                f"{aside.name} and a new one is started (citation IDs come back from the "
                "memory files and paths; usage and verification history start again)"
            ) from None
        except BaseException:
            conn.close()
            raise
        if self._pool is not None:
            self._pool.give(conn)
        else:
            conn.close()

    def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(connection)`, once more on a fresh database if this one is found damaged.

        For the writes a read makes on its way (citation IDs of new memories, usage):
        the damaged file is moved aside and the command still answers.
        """
        try:
            with self.connect() as db:
                return work(db)
        except StateDamagedError as exc:
            log.warning("%s", exc)
            with self.connect() as db:
                return work(db)


class StateDamagedError(MemoryToolError):
    """The state database turned out to be damaged mid-call; it was moved aside."""


def _damaged(conn: sqlite3.Connection) -> bool:
    """Whether the database behind conn fails SQLite's own check (only asked after an error)."""
    try:
        with contextlib.suppress(sqlite3.Error):
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        rows = conn.execute("PRAGMA quick_check(1)").fetchall()
    except sqlite3.DatabaseError as exc:
        return _is_corrupt(exc)
    return rows != [("ok",)]


def _is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def _move_aside(path: Path) -> Path:
    """Keep a damaged database for a person, under a name no one opens by mistake."""
    aside = path.with_name(f"{path.name}.unreadable-{time.time_ns()}")
    with contextlib.suppress(FileNotFoundError):
        os.replace(path, aside)
    for suffix in ("-wal", "-shm"):  # they belong to the damaged file
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{path}{suffix}", f"{aside}{suffix}")
    return aside


def _open_file(path: Path) -> sqlite3.Connection:
    """Open the state database; a damaged one is moved aside (kept for a person), while a
    busy or locked one is waited for: it is in use, not broken."""
    check_database_path(path, "state database")
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(50):
        try:
            return _open(str(path))
        except sqlite3.DatabaseError as exc:
            if _is_corrupt(exc):
                aside = _move_aside(path)
                log.warning(
                    "the state database %s is damaged (%s); it was moved aside to %s and a "
                    "new one is started",
                    path, exc, aside.name,
                )  # fmt: skip
                return _open(str(path))
            if not isinstance(exc, sqlite3.OperationalError) or attempt == 49:
                raise
            time.sleep(0.02 * (attempt + 1))
    raise AssertionError("unreachable")  # pragma: no cover


def _open(target: str) -> sqlite3.Connection:
    conn = sqlite3.connect(target, timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 30000")
    if target != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # durable at checkpoints; never corrupt
        conn.execute("PRAGMA cache_size = -16000")  # a run's history fits: no spilling mid-write
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version < len(MIGRATIONS):
        _migrate(conn)
    if target != ":memory:":
        _touch_tables(conn)
    return conn


def _touch_tables(conn: sqlite3.Connection) -> None:
    """Read the schema and the first page of every table: a page or two each.

    A file whose header is fine but whose pages are not (garbage after the
    header) then fails here, where `_open_file` moves it aside, rather than in
    the middle of a command. Damage deeper in a big table still shows up later,
    as `StateDamagedError`.
    """
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        conn.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone()


def check_database_path(path: Path, what: str) -> None:
    """A clear error for a database path that names something other than a file."""
    if path.is_dir():
        raise StoreError(f"the {what} {str(path)!r} is a folder; give the path of a file")
    if path.exists() and not path.is_file():
        raise StoreError(f"the {what} {str(path)!r} is not a regular file")


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for step in range(version, len(MIGRATIONS)):
            for statement in MIGRATIONS[step].split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
