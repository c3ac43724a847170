"""Reading an index that needs no sync, in a process that must start in milliseconds.

A read command (`get`, `list`, `related`, `graph`, lexical `search`) on a big store spends most
of its time importing the write path: formats, the sync, the service. When the
index is already in step with the files, none of that runs. This module asks
the same question `Index.sync` asks first (`settled`: could anything have
changed since the last sync, without stat-ing every file?) and, when the answer
is no, reads the rows with nothing but `os` and sqlite3's C module. Anything
unusual (no index yet, another schema, files due for a check, a folder that
moved) is answered with None, and the caller takes the ordinary path.
"""

from __future__ import annotations

# The C module `sqlite3` wraps (the same connect, Connection and errors): sqlite3's
# dbapi2.py imports `datetime` for adapters this path never uses (~2.5 ms, a sixth of
# what a quick read adds to Python's start).
import _sqlite3 as sqlite3
import os
from collections.abc import Mapping

from memory_enhancement.store.freshness import RACY_NS, folders_unchanged, racy_window
from memory_enhancement.store.scan import Snapshot, rescan

# 10: CJK text segmented for FTS, chunked embeddings; 11: path FTS apart; 12: meta 'instance'
# (vector_file.py); 13: meta 'texts_generation' (semantic.py); 17: each memory's `mentions`
# flag read again (core/prose_mentions.py: `x.go` lines 28-76 is a mention now); 18: each
# memory's links read again (store/formats/link_grammar.py reads more forms); 19: each
# memory's `mentions` flag again (`**Line:** 12` labels); 20: links, `mentions` flags and
# segmented text again (`- Related: `x`` items, Korean prose references and `app.py 라인 42`,
# decomposed Hangul composed); 21: links and CJK text again (`## Links` items in any
# script, NFC); 22: names keyed composed (NFC), so links again, and `mentions` flags
# (full-width label colons); 23: `mentions` flags (`app.py at line 42`, `(line ~960)`,
# `app.rs 30번째 줄`); 24: `mentions` flags and links (`app.go` línea 42, `x.ts` Zeile 7,
# `## Verwandte Memories`); 25: names memories declare (`name:`), frontmatter that does not
# parse read as plain text (three columns); 26: links again (a list item that is a label
# and only code names, `- Bridge: `a`, `b``); 27: links and `mentions` flags again (a
# backticked `[[name]]` item and Korean `## 연관 메모리` under related headings; ranges
# written `10〜12`, `第11行~第40行`, `라인 938~라인 982`, a path joined by `，`); 28: `mentions`
# flags again (a backticked path alone, `src/app.py`, is a file mention); 29: `mentions`
# flags again (a name from the root, `/package.json`, is one too); 30: `mentions` flags again
# (a path in bold, `**src/app.py**`, is one too); 31: links again (a markdown link to a
# memory file of the store's folder that is gone dangles, not a missing file); 32: links again
# (one to another project's store in the repository, `frontend/.serena/memories/gone.md`, is a
# missing file again); 33: links again ("see `x`" in European languages: `ver `x``, `siehe
# `x``; frontmatter `dependencies:`, `references:`, `superseded_by:`, `extends:`; no
# dangling `related: [all]`); 34: the words inside camelCase names in a table of their own
# (identifiers.py), every file read again; 35: links again (a markdown link to a folder,
# `[profiler](../tools/profiler/)`, is a repository link, missing when the folder is gone);
# 36: the words names glue to a number (`python` of `python3`) in the names' table, every
# file read again; 37: tags again (another tool's `keywords:` and `topics:` count as tags,
# MemoryMeta.keywords). See schema.py.
SCHEMA_VERSION = 37
FULL_CHECK_LIMIT = 5_000  # memories; above this, files are stat-ed at most every interval
FULL_CHECK_INTERVAL = 5.0  # seconds


def files_due(meta: Mapping[str, str], now_ns: int, limit: int, interval: float) -> bool:
    """Whether a sync must stat every file now: always for stores up to `limit`
    memories, and at least every `interval` seconds for bigger ones."""
    overdue = now_ns - int(meta.get("files_checked_at_ns", 0)) > interval * 1e9
    return int(meta.get("files", 0)) <= limit or overdue


def recorded_dirs(conn: sqlite3.Connection, meta: Mapping[str, str]) -> dict[str, int] | None:
    """The folders and their mtimes as the last sync recorded them (a JSON object in
    meta), read by SQLite's `json_each`: a quick read then does not import `json`
    (with `re`, a quarter of a bare Python start)."""
    if "dirs" not in meta:
        return None
    try:
        rows = conn.execute("SELECT key, value FROM json_each(?)", (meta["dirs"],)).fetchall()
    except sqlite3.OperationalError:  # an SQLite without JSON, or not an object
        import json

        loaded: dict[str, int] = json.loads(meta["dirs"])
        return loaded
    return {str(folder): int(mtime) for folder, mtime in rows}


def folders_settled(conn: sqlite3.Connection, meta: Mapping[str, str], root: str) -> bool:
    """Whether no folder of the store changed since the last sync (one stat each)."""
    if "synced_at_ns" not in meta:
        return False
    dirs = recorded_dirs(conn, meta)
    if dirs is None:
        return False
    window = racy_window(dirs.values()) if dirs else RACY_NS
    return folders_unchanged(root, dirs, int(meta["synced_at_ns"]), window)


class Changes:
    """What a sync found on disk against the index: memories to read again, memories
    gone, whether the folders differ; and, when nothing changed, the stamps (`settle`)
    the sync still writes (a folder changed too recently to trust, a due file check)."""

    __slots__ = ("dirs_changed", "disk", "gone", "settle", "todo")

    def __init__(
        self, disk: Snapshot, todo: list[str], gone: list[str], dirs_changed: bool,
        settle: dict[str, object],
    ) -> None:  # fmt: skip
        self.disk, self.todo, self.gone = disk, todo, gone
        self.dirs_changed, self.settle = dirs_changed, settle

    @property
    def none(self) -> bool:
        return not self.todo and not self.gone and not self.dirs_changed


def changes(
    conn: sqlite3.Connection,
    meta: Mapping[str, str],
    root: str,
    now_ns: int,
    *,
    check_files: bool,
    limit: int,
) -> Changes:
    """Compare the files (all of them with `check_files`, else those in changed folders)
    with what the index recorded; files whose mtime is within the timestamp resolution
    of the last sync's start, or later, count as changed (see store/scan.py)."""
    synced_at = int(meta["synced_at_ns"]) if "synced_at_ns" in meta else None
    recorded = recorded_dirs(conn, meta)
    window = racy_window(recorded.values()) if recorded else RACY_NS
    indexed: dict[str, tuple[int, int]] = {
        path: (mtime, size)
        for path, mtime, size in conn.execute("SELECT path, mtime_ns, size FROM files")
    }
    previous = Snapshot(indexed, recorded) if recorded is not None else None
    disk = rescan(root, previous, check_files=check_files, synced_at_ns=synced_at, window_ns=window)
    racy_after = synced_at - window if synced_at else None
    todo = [
        path
        for path, stamp in disk.files.items()
        if indexed.get(path) != stamp or (racy_after is not None and stamp[0] >= racy_after)
    ]
    gone = [path for path in indexed if path not in disk.files]
    dirs_changed = previous is None or synced_at is None or disk.dirs != previous.dirs
    settle: dict[str, object] = {}
    if racy_after is not None and any(m >= racy_after for m in disk.dirs.values()):
        settle["synced_at_ns"] = now_ns  # let recently changed folders settle
    if check_files and len(indexed) > limit:
        settle["files_checked_at_ns"] = now_ns
    return Changes(disk, todo, gone, dirs_changed, settle)


def open_settled(
    index_file: str,
    root: str,
    now_ns: int,
    *,
    limit: int | None = None,
    interval: float | None = None,
) -> sqlite3.Connection | None:
    """A connection to the index when a sync would find nothing to do and nothing to
    write, else None (no index, another schema, a change, a file check due in a big store).
    `limit` and `interval` default to the index's defaults (a store's own settings
    send its reads down the ordinary path, see cli/fast.py)."""
    limit = FULL_CHECK_LIMIT if limit is None else limit
    interval = FULL_CHECK_INTERVAL if interval is None else interval
    if not os.path.isfile(index_file):
        return None
    conn = sqlite3.connect(index_file, timeout=30, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            conn.close()
            return None
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        if "bulk" in meta:
            conn.close()
            return None
        if not files_due(meta, now_ns, limit, interval):
            settled = folders_settled(conn, meta, root)
        else:  # a small store: every file is stat-ed, as a sync would
            found = changes(conn, meta, root, now_ns, check_files=True, limit=limit)
            settled = found.none and not found.settle
        if not settled:
            conn.close()
            return None
    except sqlite3.Error:
        conn.close()
        return None
    return conn


# -- rows ---------------------------------------------------------------------------------

MEMORY_COLUMNS = (
    "m.id, m.path, m.title, m.tags, m.format, m.created_at, m.updated_at, m.expires_at, "
    "m.source, m.citation_id, f.mtime_ns, f.size, m.error, m.problems, m.content"
)


def memory_row(conn: sqlite3.Connection, path: str) -> tuple[object, ...] | None:
    """The memory's row (MEMORY_COLUMNS: its file's stamp as last read), or None."""
    found: tuple[object, ...] | None = conn.execute(
        f"SELECT {MEMORY_COLUMNS} FROM memories m JOIN files f ON f.path = m.path WHERE m.path = ?",
        (path,),
    ).fetchone()
    return found


def path_of_id(conn: sqlite3.Connection, bare_id: str) -> str | None:
    found = conn.execute("SELECT path FROM memories WHERE citation_id = ?", (bare_id,)).fetchone()
    return str(found[0]) if found else None


def citation_rows(conn: sqlite3.Connection, memory_id: int) -> list[tuple[object, ...]]:
    """(target, line, end_line, snippet, is_url) of a memory's citations, in order."""
    return conn.execute(
        "SELECT target, line, end_line, snippet, is_url FROM citations "
        "WHERE memory_id = ? ORDER BY ord",
        (memory_id,),
    ).fetchall()


def link_rows(conn: sqlite3.Connection, memory_id: int) -> list[tuple[object, ...]]:
    """(target, type, line, status, resolved, candidates) of the links `Index.linked`
    gives (a link to a repository file is checked again there: see QuickReads.get)."""
    return conn.execute(
        "SELECT target, type, line, status, resolved, candidates FROM links "
        "WHERE memory_id = ? AND status != 'unmatched' ORDER BY ord",
        (memory_id,),
    ).fetchall()


def listing_rows(
    conn: sqlite3.Connection, live_at: str, limit: int | None
) -> tuple[list[tuple[object, ...]], bool]:
    """(path, title, tags, citation_id) of live memories by path, the first `limit`; and
    whether any memory could not be read (the ordinary path reports those)."""
    tail = " LIMIT ?" if limit is not None else ""
    rows = conn.execute(
        "SELECT path, title, tags, citation_id FROM memories WHERE error IS NULL "
        f"AND (expires_at IS NULL OR expires_at > ?) ORDER BY path{tail}",
        (live_at, limit) if limit is not None else (live_at,),
    ).fetchall()
    broken = conn.execute("SELECT 1 FROM memories WHERE error IS NOT NULL LIMIT 1").fetchone()
    if broken is None:  # a header that does not parse is reported too (a partial index)
        broken = conn.execute(
            "SELECT 1 FROM memories WHERE header_error IS NOT NULL LIMIT 1"
        ).fetchone()
    return rows, broken is not None


def semantic_possible(conn: sqlite3.Connection) -> bool:
    """Whether `search` in its default mode could be other than lexical: the service
    searches hybrid when the semantic index is current, and notes why not when vectors
    exist but are stale. With no vectors and no record of a finished embedding (meta
    `embedded:MODEL`), it is lexical, silently, whether or not the extra is installed."""
    found = (
        conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone()
        or conn.execute("SELECT 1 FROM meta WHERE key LIKE 'embedded:%' LIMIT 1").fetchone()
    )
    return found is not None
