"""Bringing an index of an older version up to this one where it stands (schema.py).

The index is a cache, so an older database is normally deleted and rebuilt; but a
rebuild also drops the embeddings, which take minutes to make again. A version whose
tables are the same, or only lack ones this version adds (PARTS), and whose rows only need
reading from the files again, is upgraded in place instead: the SQL here adds what is
missing and makes the next sync read every file again.
"""

from __future__ import annotations

import sqlite3

from memory_enhancement.index.quick import SCHEMA_VERSION

# From an older version, the SQL that makes it this one with the same tables: every file
# is made to look changed (a size and a hash no file has) and every folder unrecorded, so
# the next sync reads and parses them all again, as a rebuild would, but keeps the rows the
# files do not give (the embeddings). 16 to 24 each read more from the same files (what
# changed is listed at SCHEMA_VERSION, quick.py): the mention grammar (`x.go` lines 28-76,
# `**Line:** 12`, `app.py 라인 42`, `app.go` línea 42), the link grammar (Chinese and Korean
# prose references, `## Links` items in any script, European related headings), names and
# CJK text composed (NFC). 24 -> 25: links find a memory by the name its frontmatter
# declares, and a file whose frontmatter does not parse is read as plain text: three
# columns (added after `content`, which a new index has last), every file read again. 25 ->
# 26 -> 27: more links (`- Bridge: `a`, `b``; `[[x]]` items, Korean headings), CJK ranges;
# 27 -> 28: file mentions (`src/app.py` alone) flag more memories as mentioning code;
# 28 -> 29: and a name written from the root (`/package.json`); 29 -> 30: and a path in
# bold (`**src/app.py**`); 30 -> 31: `[x](.serena/memories/gone.md)` dangles; 31 -> 32: but
# `[x](frontend/.serena/memories/gone.md)`, another project's store, is a missing file;
# 32 -> 33: "see `x`" in European languages (`ver `x``, `voir `x``) is a link, and so are
# the names of frontmatter `dependencies:`, `references:`, `superseded_by:`, `extends:`;
# 33 -> 34: the words inside camelCase names (identifiers.py) in a full-text table of
# their own; `fts_parts` (after `content`, which a new index has last) is filled as the
# sync reads every file again. A new index is made with these same statements (schema.py).
# 34 -> 35: a markdown link to a folder is a repository link; 35 -> 36: the words a name
# glues to a number (`python` of `python3`) join the names' words: the same tables, every
# file read again; 36 -> 37: `keywords:` and `topics:` are read as tags, the same tables.
PARTS = (
    "ALTER TABLE memories ADD COLUMN fts_parts TEXT",
    # The memories that write such names: the table holds no empty row for the others.
    "CREATE VIEW memories_parts AS SELECT id, fts_parts AS parts FROM memories "
    "WHERE fts_parts IS NOT NULL",
    "CREATE VIRTUAL TABLE memories_parts_fts USING fts5(parts, content='memories_parts', "
    "content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    # Kept in step as memories_fts is (schema.py), but only for rows with parts.
    """CREATE TRIGGER memories_parts_ai AFTER INSERT ON memories
WHEN new.fts_parts IS NOT NULL AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'bulk') BEGIN
    INSERT INTO memories_parts_fts(rowid, parts) VALUES (new.id, new.fts_parts);
END""",
    """CREATE TRIGGER memories_parts_ad AFTER DELETE ON memories
WHEN old.fts_parts IS NOT NULL AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'bulk') BEGIN
    INSERT INTO memories_parts_fts(memories_parts_fts, rowid, parts)
    VALUES ('delete', old.id, old.fts_parts);
END""",
    """CREATE TRIGGER memories_parts_au AFTER UPDATE OF fts_parts ON memories
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'bulk') BEGIN
    INSERT INTO memories_parts_fts(memories_parts_fts, rowid, parts)
    SELECT 'delete', old.id, old.fts_parts WHERE old.fts_parts IS NOT NULL;
    INSERT INTO memories_parts_fts(rowid, parts)
    SELECT new.id, new.fts_parts WHERE new.fts_parts IS NOT NULL;
END""",
)
_READ_AGAIN = ("UPDATE files SET size = -1, hash = ''", "DELETE FROM meta WHERE key = 'dirs'")
_ADD_COLUMNS = (
    "ALTER TABLE memories ADD COLUMN declared_name TEXT",
    "ALTER TABLE memories ADD COLUMN declared_key TEXT",
    "ALTER TABLE memories ADD COLUMN header_error TEXT",
    "CREATE INDEX memories_declared ON memories(declared_key) WHERE declared_key IS NOT NULL",
    "CREATE INDEX memories_header ON memories(path) WHERE header_error IS NOT NULL",
)
IN_PLACE: dict[int, tuple[str, ...]] = {
    **{version: (*_ADD_COLUMNS, *PARTS, *_READ_AGAIN) for version in range(16, 25)},
    **{version: (*PARTS, *_READ_AGAIN) for version in range(25, 34)},
    34: _READ_AGAIN,
    35: _READ_AGAIN,
    36: _READ_AGAIN,
}


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring an index of an older version up to this one in place (see IN_PLACE), in one
    transaction; another process that got there first leaves nothing to do."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == version:
            for statement in IN_PLACE[version]:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
