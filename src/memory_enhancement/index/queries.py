"""Reading the index: listings, lookups and the memories verification needs.

Free functions over an open connection (`Index.connect()`), so a caller that
already holds one asks several questions in the same snapshot.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from memory_enhancement.core.batch import CitedBatch
from memory_enhancement.index.rows import ROW_COLUMNS, Row, row_from


def rows(
    conn: sqlite3.Connection,
    category: str | None = None,
    *,
    live_at: str | None = None,
    limit: int | None = None,
    tag: str | None = None,
    offset: int = 0,
) -> tuple[list[Row], list[str]]:
    """Readable memories (sorted by path) and the reasons unreadable ones were skipped;
    with `live_at` (a timestamp) only those not expired then, with `limit` the first ones
    (after `offset` of them), with `tag` those tagged so (as search's --tag)."""
    where, args = _category_filter(category)
    live, filters = _live_filter(live_at, tag)
    tail = " LIMIT ? OFFSET ?" if limit is not None or offset else ""
    extra = (*filters, *((-1 if limit is None else limit, offset) if tail else ()))
    rows = [
        row_from(values)
        for values in conn.execute(
            f"SELECT {ROW_COLUMNS} FROM memories WHERE error IS NULL{where}{live} "
            f"ORDER BY path{tail}",
            (*args, *extra),
        )
    ]
    errors = [
        str(e[0])
        for e in conn.execute(
            f"SELECT error FROM memories WHERE error IS NOT NULL{where} ORDER BY path", args
        )
    ]
    headers = header_errors(conn, where, args)
    if headers:  # read as text, and listed: reported all the same (formats.md)
        errors = sorted([*errors, *headers.values()])
    return rows, errors


def count(
    conn: sqlite3.Connection,
    category: str | None = None,
    *,
    live_at: str | None = None,
    tag: str | None = None,
) -> int:
    """How many readable memories `rows` would list without a limit: a page's total."""
    where, args = _category_filter(category)
    live, filters = _live_filter(live_at, tag)
    sql = f"SELECT count(*) FROM memories WHERE error IS NULL{where}{live}"
    return int(conn.execute(sql, (*args, *filters)).fetchone()[0])


def _live_filter(live_at: str | None, tag: str | None) -> tuple[str, tuple[str, ...]]:
    live = ""
    filters: tuple[str, ...] = ()
    if tag:  # "" is no filter, as search's (columns.where_sql)
        live += " AND EXISTS (SELECT 1 FROM tags t WHERE t.memory_id = memories.id AND t.tag = ?)"
        filters += (tag,)
    if live_at is not None:
        live += " AND (expires_at IS NULL OR expires_at > ?)"
        filters += (live_at,)
    return live, filters


def header_errors(conn: sqlite3.Connection, where: str = "", args: Any = ()) -> dict[str, str]:
    """path -> why its frontmatter does not parse, for the memories read as text only
    (none in most stores: a partial index answers). `where` continues a WHERE clause."""
    return dict(
        conn.execute(
            f"SELECT path, header_error FROM memories WHERE header_error IS NOT NULL{where}", args
        )
    )


def row(conn: sqlite3.Connection, path: str) -> Row | None:
    values = conn.execute(
        f"SELECT {ROW_COLUMNS} FROM memories WHERE path = ? AND error IS NULL", (path,)
    ).fetchone()
    return row_from(values) if values else None


def path_of(conn: sqlite3.Connection, bare_id: str) -> str | None:
    found = conn.execute("SELECT path FROM memories WHERE citation_id = ?", (bare_id,)).fetchone()
    return str(found[0]) if found else None


def verifiable(
    conn: sqlite3.Connection, paths: Iterable[str] | None = None
) -> tuple[CitedBatch, list[str], list[str]]:
    """Memories to verify, as the index holds them (no file is parsed, no citation
    object made: see core/batch.py), the reasons unreadable ones among `paths` (all
    memories when None) were skipped, and the `path: why` of those verified whose
    header does not parse. Memories come in path order, each with its citations in the
    order written."""
    if paths is None:
        return _verifiable(conn, "", [])
    wanted = sorted(set(paths))
    found = CitedBatch([], [], [0], [], set())
    skipped: list[str] = []
    headers: list[str] = []
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        where = f"WHERE m.path IN ({','.join('?' * len(chunk))})"
        more, errors, unparsed = _verifiable(conn, where, chunk)
        found.extend(more)
        skipped.extend(errors)
        headers.extend(unparsed)
    return found, skipped, headers


def _verifiable(
    conn: sqlite3.Connection, where: str, args: list[str]
) -> tuple[CitedBatch, list[str], list[str]]:
    """One query for the citations, in memory path order and in the order written (the
    rows as SQLite gives them: no per-row work in Python), one for the memories. Both
    are answered from indexes (a memory that cannot be read has no citations, so the
    first need not look at the memories' wide rows)."""
    rows = conn.execute(
        "SELECT c.target, c.line, c.end_line, c.snippet, c.verified, c.commit_sha, c.extra, "
        f"c.file_line FROM citations c JOIN memories m ON m.id = c.memory_id {where} "
        "ORDER BY m.path, c.ord",
        args,
    ).fetchall()
    batch = CitedBatch([], [], [0], rows, set())
    # A memory whose header does not parse has no citations the index knows (they would
    # be in that header), but its text was read: its prose mentions are verified, and the
    # header named apart. Skipping it left a drifted mention unchecked and the memory
    # "uncited" in the health report.
    headers = header_errors(conn, where.replace("WHERE m.path", " AND path"), args)
    skipped = []
    at = 0
    for path, error, cid, mentions, count in conn.execute(
        "SELECT m.path, m.error, m.citation_id, m.mentions, m.citation_count FROM memories m "
        f"{where} ORDER BY m.path",
        args,
    ):
        if error is not None:
            skipped.append(str(error))
            continue
        if mentions:
            batch.mentionable.add(len(batch.paths))
        batch.paths.append(path)
        batch.ids.append(cid)
        at += count
        batch.starts.append(at)
    if at != len(rows):  # the count kept with each memory is its number of citation rows
        damaged = sqlite3.DatabaseError(f"{len(rows)} citation rows, but {at} counted")
        damaged.sqlite_errorcode = sqlite3.SQLITE_CORRUPT
        raise damaged  # the index is discarded and built again (Index.connect)
    return batch, skipped, sorted(headers.values())


def settled_files(conn: sqlite3.Connection) -> tuple[dict[str, tuple[str, str | None]], str]:
    """The cited files as the last whole-store verification judged them: per file its stamp
    and the verdicts that were not "valid on its line" (verify/settled.py), and the count of
    citation changes they were read at."""
    found = {target: (stamp, verdicts) for target, stamp, verdicts in conn.execute(
        "SELECT target, stamp, verdicts FROM settled_files"
    )}  # fmt: skip
    return found, _changes(conn)


def settle_files(
    conn: sqlite3.Connection,
    found: dict[str, tuple[str, str | None]],
    known: dict[str, tuple[str, str | None]],
    changes: str,
) -> bool:
    """Record what a whole-store verification learned of the cited files, if no citation
    changed since it read them (else a record could vouch for a citation it never
    judged); returns whether it was recorded."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _changes(conn) != changes:
            conn.execute("ROLLBACK")
            return False
        conn.executemany(
            "DELETE FROM settled_files WHERE target = ?", [(t,) for t in known if t not in found]
        )
        conn.executemany(
            "INSERT OR REPLACE INTO settled_files(target, stamp, verdicts) VALUES (?, ?, ?)",
            [(t, *record) for t, record in found.items() if known.get(t) != record],
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True


def _changes(conn: sqlite3.Connection) -> str:
    """This index (its instance) and how many citation changes it has seen: equal on two
    reads when no citation changed in between."""
    meta = dict(
        conn.execute("SELECT key, value FROM meta WHERE key IN ('instance', 'citations_changed')")
    )
    return f"{meta.get('instance', '')}:{meta.get('citations_changed', '')}"


def readable(
    conn: sqlite3.Connection,
    paths: Iterable[str],
    category: str | None = None,
    *,
    unreadable_too: bool = False,
) -> list[str]:
    """Those of these paths that are indexed, readable (or not, with `unreadable_too`) and
    in the category, sorted."""
    wanted = sorted(set(paths))
    where, extra = _category_filter(category)
    readable_only = "" if unreadable_too else "error IS NULL AND "
    found: list[str] = []
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        found.extend(
            str(row[0])
            for row in conn.execute(
                f"SELECT path FROM memories WHERE {readable_only}"
                f"path IN ({','.join('?' * len(chunk))}){where}",
                (*chunk, *extra),
            )
        )
    return sorted(found)


def citing(conn: sqlite3.Connection, files: Iterable[str]) -> list[str]:
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


def mentioning(conn: sqlite3.Connection, files: Iterable[str]) -> list[str]:
    """Memories that may mention one of these repository files in their prose: flagged
    as possibly mentioning code and holding the file's name in their content. A mention
    names a file by a path that ends with its name (`config.py:5` for `app/config.py`), so
    this finds every memory that mentions one (and a few that only name it, which cost a
    verification). The content leaves out a frontmatter: `mentioning_elsewhere` lists the
    memories whose frontmatter the caller must read for a mention (a `sources:` key)."""
    names = sorted({f.rsplit("/", 1)[-1] for f in files if f})
    found: set[str] = set()
    for start in range(0, len(names), 100):
        chunk = names[start : start + 100]
        named = " OR ".join("instr(content, ?) > 0" for _ in chunk)
        found.update(
            str(row[0])
            for row in conn.execute(
                f"SELECT path FROM memories WHERE mentions = 1 AND error IS NULL AND ({named})",
                chunk,
            )
        )
    return sorted(found)


def mentioning_elsewhere(conn: sqlite3.Connection, files: Iterable[str]) -> list[str]:
    """Memories flagged as possibly mentioning code whose file has more than the content
    the index holds (a frontmatter), and whose content names none of these files: a
    mention written in the frontmatter (`sources: src/app.py:3`), which a verification
    run reads, can only be found in the file (`mentioning` finds the others)."""
    found = set(mentioning(conn, files))
    rows = conn.execute(
        "SELECT path FROM memories WHERE mentions = 1 AND error IS NULL AND format = 'frontmatter'"
    )
    return sorted(path for (path,) in rows if path not in found)


def _category_filter(category: str | None) -> tuple[str, tuple[str, ...]]:
    if not category:
        return "", ()
    prefix = category.strip("/") + "/"
    # path in [prefix, prefix with its last character bumped): a prefix match on the index.
    return " AND path >= ? AND path < ?", (prefix, prefix[:-1] + "0")


def flat(conn: sqlite3.Connection) -> bool:
    """Whether the store has memories and all of them sit at its top (no folder)."""
    some = conn.execute("SELECT 1 FROM memories LIMIT 1").fetchone()
    nested = conn.execute("SELECT 1 FROM memories WHERE instr(path, '/') > 0 LIMIT 1").fetchone()
    return some is not None and nested is None


def stamps(conn: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """Each memory file's (mtime_ns, size) as the last sync saw it."""
    return {
        str(p): (int(m), int(s))
        for p, m, s in conn.execute("SELECT path, mtime_ns, size FROM files")
    }
