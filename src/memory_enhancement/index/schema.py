"""The index's SQLite schema, and opening a database that may be missing or broken.

The index is a cache: everything in it is derived from the memory files. So a
missing, corrupt or older-version database is not repaired, it is deleted and
rebuilt from the files. The schema version lives in `PRAGMA user_version`.

An older version whose tables are the same and whose rows only need reading again
(`IN_PLACE`) is brought up to date where it stands instead: a rebuild would also drop
the embeddings, which take minutes to make again.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path

from memory_enhancement.index.quick import SCHEMA_VERSION  # the quick reader checks it too
from memory_enhancement.index.upgrade import IN_PLACE, PARTS, migrate
from memory_enhancement.store.state import check_database_path

DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
-- Which database this is: files kept beside it (vector_file.py) name it, so a rebuilt
-- index, whose counters start again, never reads a file of the one before.
INSERT INTO meta(key, value) VALUES ('instance', lower(hex(randomblob(8))));
-- Moved on by triggers (below) as the memories' texts change. An UPDATE, not an INSERT
-- OR REPLACE: a trigger's conflict clause gives way to that of the statement firing it.
INSERT INTO meta(key, value) VALUES ('texts_generation', 0);

CREATE TABLE memories (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name_key TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '',
    format TEXT,
    created_at TEXT,
    updated_at TEXT,
    expires_at TEXT,
    source TEXT,
    confidence REAL,
    last_verified TEXT,
    citation_count INTEGER NOT NULL DEFAULT 0,
    declared_id TEXT,
    citation_id TEXT UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    hash TEXT NOT NULL,
    error TEXT,
    problems TEXT NOT NULL DEFAULT '',
    -- What FTS indexes when it differs from the text: CJK runs as bigrams (cjk.py);
    -- NULL for the text of most memories, which has no CJK.
    fts_title TEXT,
    fts_tags TEXT,
    fts_path TEXT,
    fts_content TEXT,
    cjk REAL NOT NULL DEFAULT 0,  -- the share of the text that is CJK (hybrid fusion)
    -- 1 when the file's bytes may mention code in prose (`src/app.py:42`): a verification
    -- run reads only those files again for their mentions (verify/mention_reading.py).
    mentions INTEGER NOT NULL DEFAULT 0,
    -- The name a memory declares (`name:`) where it is not its file name, and its key
    -- (core.links.name_key); why its frontmatter does not parse, its text read as plain text.
    declared_name TEXT,
    declared_key TEXT,
    header_error TEXT,
    -- Last: a row's columns are read in order, and the content, often larger than a
    -- page, would otherwise be walked through to reach the small ones after it.
    content TEXT NOT NULL DEFAULT ''
    -- and `fts_parts`, the words inside the text's camelCase names (NULL when it has
    -- none), added after it by the statements an upgrade adds it with (upgrade.PARTS)
);
CREATE INDEX memories_expires ON memories(expires_at);
-- What a verification reads of every memory (index/queries.py), without its wide row.
CREATE INDEX memories_verify ON memories(path, citation_id, citation_count, mentions, error);
-- Each memory file as last read: what every sync compares with the files, and what a
-- file rewritten with the same bytes changes (a checkout, a formatter). Narrow, apart from
-- the memories' wide rows: a bulk rewrite of 10,000 files restamps a few hundred pages,
-- not a page per memory. (memories.mtime_ns and size say when its content was read.)
CREATE TABLE files (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    hash TEXT NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER memories_files_ad AFTER DELETE ON memories BEGIN
    DELETE FROM files WHERE path = old.path;
END;
CREATE INDEX memories_name ON memories(name_key);
-- Partial: empty in most stores (no other name declared, every header parses), asked for free.
CREATE INDEX memories_declared ON memories(declared_key) WHERE declared_key IS NOT NULL;
CREATE INDEX memories_header ON memories(path) WHERE header_error IS NOT NULL;
CREATE INDEX memories_hash ON memories(hash, error);  -- which texts need vectors (covering)

CREATE VIEW memories_text AS SELECT id,
    coalesce(fts_title, title) AS title, coalesce(fts_tags, tags) AS tags,
    coalesce(fts_path, path) AS path, coalesce(fts_content, content) AS content
FROM memories;

-- Two full-text tables. memories_fts holds what a plain BM25 reads (title and text, and
-- tags, which most memories do not have): for a query in English, lexical search ranks
-- exactly as BM25 over those words would (search.py). The path has a table of its own:
-- in the first, it would lengthen every memory and shift every BM25 score.
CREATE VIRTUAL TABLE memories_fts USING fts5(
    title, tags, content,
    content='memories_text', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE memories_path_fts USING fts5(
    path,
    content='memories_text', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2'
);
-- During a cold build (meta 'bulk' set) the triggers stand aside and the FTS tables are
-- built once at the end with 'rebuild', five times faster than row by row.
CREATE TRIGGER memories_ai AFTER INSERT ON memories
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'bulk') BEGIN
    INSERT INTO memories_fts(rowid, title, tags, content)
    VALUES (new.id, coalesce(new.fts_title, new.title), coalesce(new.fts_tags, new.tags),
            coalesce(new.fts_content, new.content));
    INSERT INTO memories_path_fts(rowid, path) VALUES (new.id, coalesce(new.fts_path, new.path));
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'bulk') BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, title, tags, content)
    VALUES ('delete', old.id, coalesce(old.fts_title, old.title), coalesce(old.fts_tags, old.tags),
            coalesce(old.fts_content, old.content));
    INSERT INTO memories_path_fts(memories_path_fts, rowid, path)
    VALUES ('delete', old.id, coalesce(old.fts_path, old.path));
END;
CREATE TRIGGER memories_au AFTER UPDATE OF title, tags, content, fts_title, fts_tags,
    fts_content ON memories
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'bulk') BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, title, tags, content)
    VALUES ('delete', old.id, coalesce(old.fts_title, old.title), coalesce(old.fts_tags, old.tags),
            coalesce(old.fts_content, old.content));
    INSERT INTO memories_fts(rowid, title, tags, content)
    VALUES (new.id, coalesce(new.fts_title, new.title), coalesce(new.fts_tags, new.tags),
            coalesce(new.fts_content, new.content));
END;
CREATE TRIGGER memories_au_path AFTER UPDATE OF path, fts_path ON memories
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'bulk') BEGIN
    INSERT INTO memories_path_fts(memories_path_fts, rowid, path)
    VALUES ('delete', old.id, coalesce(old.fts_path, old.path));
    INSERT INTO memories_path_fts(rowid, path) VALUES (new.id, coalesce(new.fts_path, new.path));
END;

CREATE TABLE tags (
    memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    tag TEXT NOT NULL
);
CREATE INDEX tags_tag ON tags(tag, memory_id);
CREATE INDEX tags_memory ON tags(memory_id);

CREATE TABLE links (
    memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    target TEXT NOT NULL,
    type TEXT NOT NULL,
    kind TEXT NOT NULL,
    line INTEGER,
    key TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'dangling',
    resolved TEXT,
    candidates TEXT
);
CREATE INDEX links_memory ON links(memory_id);
CREATE INDEX links_key ON links(key);
CREATE INDEX links_resolved ON links(resolved) WHERE resolved IS NOT NULL;

CREATE TABLE citations (
    memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    target TEXT NOT NULL,
    line INTEGER,
    end_line INTEGER,
    snippet TEXT,
    verified TEXT,
    commit_sha TEXT,
    extra TEXT,
    file_line INTEGER,
    is_url INTEGER NOT NULL
);
CREATE INDEX citations_target ON citations(target);
CREATE INDEX citations_memory ON citations(memory_id, ord);  -- also reads them in order, no sort

-- Cited files as the last whole-store verification judged them, with what the verdicts
-- depended on (the file's stat, HEAD, git's index): a run that finds the same stamp need not
-- read the file again (verify/settled.py). Any change to a citation of the file forgets it,
-- so a record never outlives the citations it judged.
-- `citations_changed` counts changes to citations, so that a run writes what it learned
-- only if no citation changed while it judged them.
CREATE TABLE settled_files (
    target TEXT PRIMARY KEY,
    stamp TEXT NOT NULL,
    verdicts TEXT  -- the citations that did not simply hold, by position (NULL: all held)
) WITHOUT ROWID;
INSERT INTO meta(key, value) VALUES ('citations_changed', 0);
CREATE TRIGGER citations_settled_ai AFTER INSERT ON citations BEGIN
    DELETE FROM settled_files WHERE target = new.target;
    UPDATE meta SET value = value + 1 WHERE key = 'citations_changed';
END;
CREATE TRIGGER citations_settled_ad AFTER DELETE ON citations BEGIN
    DELETE FROM settled_files WHERE target = old.target;
    UPDATE meta SET value = value + 1 WHERE key = 'citations_changed';
END;
CREATE TRIGGER citations_settled_au AFTER UPDATE ON citations BEGIN
    DELETE FROM settled_files WHERE target IN (old.target, new.target);
    UPDATE meta SET value = value + 1 WHERE key = 'citations_changed';
END;

-- The vectors of the chunks of a memory's text (semantic.py), float16, one after the
-- other, under the content hash they were made from: a memory is embedded again only
-- when its text changes, moving or renaming it costs nothing, and a rebuild of the
-- index keeps them (index.py).
CREATE TABLE vectors (
    hash TEXT NOT NULL,
    model TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (hash, model)
);
-- Vectors of recent queries: a query asked again (an agent's repeated question, `context`
-- after `search`) needs no model, so a process does not load one. Capped (semantic.py).
CREATE TABLE query_vectors (
    model TEXT NOT NULL,
    query TEXT NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (model, query)
);
-- Any change to the vectors moves the generation on, so a process that keeps them in
-- memory between searches (the MCP server) knows when to read them again.
-- Likewise any change to which texts the memories hold (but during a cold build, which
-- moves it once at the end: index.py), so a search need not look for texts to embed
-- when nothing changed since the last look (semantic.py).
CREATE TRIGGER memories_texts_ai AFTER INSERT ON memories
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'bulk') BEGIN
    UPDATE meta SET value = value + 1 WHERE key = 'texts_generation';
END;
CREATE TRIGGER memories_texts_ad AFTER DELETE ON memories BEGIN
    UPDATE meta SET value = value + 1 WHERE key = 'texts_generation';
END;
CREATE TRIGGER memories_texts_au AFTER UPDATE OF hash, error ON memories
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'bulk') BEGIN
    UPDATE meta SET value = value + 1 WHERE key = 'texts_generation';
END;
CREATE TRIGGER vectors_ai AFTER INSERT ON vectors BEGIN
    INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_generation',
        coalesce((SELECT value FROM meta WHERE key = 'vectors_generation'), 0) + 1);
END;
CREATE TRIGGER vectors_ad AFTER DELETE ON vectors BEGIN
    INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_generation',
        coalesce((SELECT value FROM meta WHERE key = 'vectors_generation'), 0) + 1);
END;
"""
DDL += "".join(f"{statement};\n" for statement in PARTS)  # as an upgrade adds them


def connect(path: Path | None) -> sqlite3.Connection:
    """Open (creating or rebuilding as needed) the index database at path; None = in memory."""
    if path is None:
        conn = _raw_connect(":memory:")
        _create(conn)
        return conn
    check_database_path(path, "index")
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(50):
        try:
            return _open_existing(path)
        except sqlite3.OperationalError as exc:
            if is_corrupt(exc) or attempt == 49:
                raise
            # Busy or locked: another connection is creating the file or switching it
            # to WAL. Wait for it; never discard a file someone else is writing.
            time.sleep(0.02 * (attempt + 1))
    raise AssertionError("unreachable")  # pragma: no cover


def _open_existing(path: Path) -> sqlite3.Connection:
    """Open, creating the schema in an empty file; a damaged or outdated file is rebuilt."""
    conn: sqlite3.Connection | None = None
    try:
        conn = _raw_connect(str(path))
        # One statement, so one snapshot: read apart, another connection could commit
        # the new schema in between, and a complete index would look like a foreign one.
        version, tables = conn.execute(
            "SELECT (SELECT user_version FROM pragma_user_version), "
            "(SELECT count(*) FROM sqlite_master)"
        ).fetchone()
        if version == SCHEMA_VERSION:
            conn.execute("SELECT count(*) FROM meta").fetchone()
            return conn
        if version in IN_PLACE:
            migrate(conn, version)
            return conn
        if version == 0 and tables == 0:
            # A new, empty file, perhaps being created by another process right now:
            # create the schema in place (_create tolerates that race); discarding it
            # would pull the file from under the other process.
            _create(conn)
            return conn
        conn.close()
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        if isinstance(exc, sqlite3.OperationalError) and not is_corrupt(exc):
            raise  # busy or locked, not damaged: the caller waits and tries again
    _discard(path)
    conn = _raw_connect(str(path))
    _create(conn)
    return conn


def is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    """Whether an error means the file is damaged (not busy, locked or misused).

    Besides SQLite's own verdicts, a table or column of this schema version that is
    not there means the file was tampered with (opening checks only the version).
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return True
    return isinstance(exc, sqlite3.OperationalError) and str(exc).startswith(
        ("no such table", "no such column")
    )


def _raw_connect(target: str) -> sqlite3.Connection:
    conn = sqlite3.connect(target, timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 30000")
    if target != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        # A cache: after a crash it is found corrupt and rebuilt, so it need not be synced.
        conn.execute("PRAGMA synchronous = OFF")
    # A build writes the whole index in one transaction: with the default 2 MB page
    # cache it spills pages to the file mid-way and reads them back (twice the I/O).
    conn.execute("PRAGMA cache_size = -32000")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _create(conn: sqlite3.Connection) -> None:
    """Create the schema in one transaction; a process racing to do the same finds it done."""
    if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        return
    try:
        conn.executescript(
            f"BEGIN IMMEDIATE;\n{DDL}\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;"
        )
    except sqlite3.OperationalError:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            raise


def _discard(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
