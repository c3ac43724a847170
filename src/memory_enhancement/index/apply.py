"""Writing what a sync found changed: the memories read anew, gone or merely touched.

Kept apart from `index.py` so that a call whose sync finds nothing to do (most of
them) imports neither the file formats nor the writers: a `verify-all` or a read of an
unchanged store starts that much faster.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING

from memory_enhancement.core.mentions import may_mention
from memory_enhancement.index.idassign import assign_ids
from memory_enhancement.index.linking import insert_resolved, resolve_links
from memory_enhancement.index.reading import read_many, unchanged
from memory_enhancement.index.writer import Children, upsert
from memory_enhancement.store.disk import Loaded, Store
from memory_enhancement.store.formats.base import Document

if TYPE_CHECKING:
    from memory_enhancement.core.links import RepoView
    from memory_enhancement.store.state import State


def apply(
    conn: sqlite3.Connection,
    todo: list[str],
    gone: list[str],
    known: dict[str, tuple[int, int, str]],
    loaded: Mapping[str, Loaded] | None = None,
    *,
    store: Store,
    state: State,
    repo: RepoView | None,
    id_length: int,
) -> tuple[int, int, int, int]:
    """Index the memories of `todo` (read from their files, or taken from `loaded`) and
    drop those `gone`; `known` is what the index held for them (mtime, size, hash).
    Returns how many memories were added, updated, removed and only touched (the same
    bytes under a new stamp)."""
    gone_ids = [
        row[0]
        for p in gone
        for row in conn.execute("SELECT citation_id FROM memories WHERE path = ?", (p,))
    ]
    names = _declared_keys(conn, [*gone, *todo])  # names declared before: links to re-resolve
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
        declared = upsert(
            conn, path, ready.doc, None, ready.mtime_ns, ready.size, digest,
            fresh=path not in known, bulk=bulk, children=children,
            mentions=may_mention(ready.data),
            header_error=getattr(ready.doc, "header_error", None),  # a lenient read's
        )  # fmt: skip
        if declared is not None:
            names.add(declared)
        if path not in known:
            added.append((path, ready.doc, None))
    digests = {path: row[2] for path, row in known.items()}
    # Same bytes under a new stamp (a checkout, a formatter): restamped in one statement.
    restamped, rest = unchanged(store, sorted(p for p in todo if p not in preloaded), digests)
    same.update(path for _, _, path in restamped)
    for outcome in read_many(store, rest, digests):
        path = outcome.path
        if outcome.kind == "gone":
            continue
        if outcome.kind == "same":
            same.add(path)
            restamped.append((outcome.mtime, outcome.size, path))
            continue
        updated += path in known
        declared = upsert(
            conn, path, outcome.doc, outcome.error, outcome.mtime, outcome.size,
            outcome.digest, fresh=path not in known, bulk=bulk, children=children,
            mentions=outcome.mentions, header_error=outcome.header,
        )  # fmt: skip
        if declared is not None:
            names.add(declared)
        if path not in known:
            added.append((path, outcome.doc, outcome.error))
    conn.executemany("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?", restamped)
    touched = len(restamped)
    children.flush(conn, links=not bulk)
    if bulk:
        conn.execute("DELETE FROM meta WHERE key = 'bulk'")
        conn.execute(  # the triggers stood aside (schema.py)
            "UPDATE meta SET value = value + 1 WHERE key = 'texts_generation'"
        )
        conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")
        conn.execute("INSERT INTO memories_path_fts(memories_path_fts) VALUES ('rebuild')")
        conn.execute("INSERT INTO memories_parts_fts(memories_parts_fts) VALUES ('rebuild')")
    assign_ids(conn, state, added, id_length)
    appeared = [path for path, _, _ in added]
    # A file touched without a change (same bytes, new mtime) keeps its links: only the
    # memories read anew have theirs resolved again (a bulk rewrite of a store would
    # otherwise resolve every link of it).
    reread = [p for p in todo if p not in same] if same else todo
    if bulk:  # an index that held no memory: every link is one just read, resolved as inserted
        insert_resolved(conn, store.name, children, repo)
    else:
        resolve_links(conn, store.name, reread, [*appeared, *gone], gone_ids, repo, names)
    return len(added), updated, len(gone), touched


def _declared_keys(conn: sqlite3.Connection, paths: list[str]) -> set[str]:
    """The keys of the names these memories declared as the index holds them (a memory
    that declares another name, or goes, changes what links of its old name find). One
    look at the partial index first: a store whose memories declare none asks no more."""
    if (
        not paths
        or not conn.execute(
            "SELECT 1 FROM memories WHERE declared_key IS NOT NULL LIMIT 1"
        ).fetchone()
    ):
        return set()
    keys: set[str] = set()
    for start in range(0, len(paths), 500):
        chunk = paths[start : start + 500]
        keys.update(
            row[0]
            for row in conn.execute(
                "SELECT declared_key FROM memories WHERE declared_key IS NOT NULL "
                f"AND path IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    return keys


def known_rows(conn: sqlite3.Connection, paths: list[str]) -> dict[str, tuple[int, int, str]]:
    """What the index records (mtime, size, hash) for these paths, where it has them: a
    query per 500 paths, or one scan of the narrow `files` table for many."""
    if len(paths) > 2000:
        wanted = set(paths)
        return {
            path: (mtime, size, digest)
            for path, mtime, size, digest in conn.execute(
                "SELECT path, mtime_ns, size, hash FROM files"
            )
            if path in wanted
        }
    known: dict[str, tuple[int, int, str]] = {}
    for start in range(0, len(paths), 500):
        chunk = paths[start : start + 500]
        known.update(
            (path, (mtime, size, digest))
            for path, mtime, size, digest in conn.execute(
                "SELECT path, mtime_ns, size, hash FROM files "
                f"WHERE path IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    return known
