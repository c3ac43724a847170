"""Keeping the resolved targets of links in step as memories come and go.

Resolving every link again after each change would cost seconds at 100k
memories. A link's answer can only change when the linking memory is
rewritten, or when a memory with the name (or citation ID) it looks for
appears or vanishes, so only those links are resolved again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping

from memory_enhancement.core.links import (
    STORE_PREFIXES,
    RepoView,
    Resolution,
    Resolver,
    lookup_name,
    name_key,
)
from memory_enhancement.core.model import Link, LinkKind
from memory_enhancement.index.writer import ANY_NAME, UNMATCHED, Children, chunks, path_key


def resolve_links(
    conn: sqlite3.Connection,
    store_name: str,
    written: list[str],
    moved: list[str],
    gone_ids: list[str],
    repo: RepoView | None = None,
    names: set[str] | None = None,
) -> None:
    """Re-resolve the links whose answer may have changed, and only those.

    That is the links of memories just (re)written, and links anywhere whose
    target name (or citation ID) is that of a memory that appeared or vanished,
    or a name (key) a memory declared or stopped declaring (`names`).
    """
    keys = {path_key(p) for p in moved} | {ANY_NAME} | (names or set())
    for chunk in chunks(moved):
        marks = ",".join("?" * len(chunk))
        keys.update(
            f"mem:{row[0]}"
            for row in conn.execute(
                f"SELECT citation_id FROM memories WHERE path IN ({marks})", chunk
            )
            if row[0]
        )
    keys.update(f"mem:{cid}" for cid in gone_ids if cid)
    affected: set[int] = set()
    for chunk in chunks(sorted(keys)):
        affected.update(
            row[0]
            for row in conn.execute(
                f"SELECT rowid FROM links WHERE key IN ({','.join('?' * len(chunk))})", chunk
            )
        )
    for chunk in chunks(written):
        affected.update(
            row[0]
            for row in conn.execute(
                "SELECT l.rowid FROM links l JOIN memories m ON m.id = l.memory_id "
                f"WHERE m.path IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    if not affected:
        return
    rows: list[tuple[int, str, str, str, str, str | None]] = []
    select = (
        "SELECT l.rowid, m.path, l.target, l.kind, l.type, l.status FROM links l "
        "JOIN memories m ON m.id = l.memory_id"
    )
    if len(affected) == conn.execute("SELECT count(*) FROM links").fetchone()[0]:
        rows.extend(conn.execute(select))  # a full build: one query, not one per 500 rows
    else:
        for chunk in chunks(sorted(affected)):
            marks = ",".join("?" * len(chunk))
            rows.extend(conn.execute(f"{select} WHERE l.rowid IN ({marks})", chunk))
    resolver = _resolver_for(conn, store_name, [row[:5] for row in rows], repo)
    conn.executemany(
        "UPDATE links SET resolved = ?, status = ?, candidates = ? WHERE rowid = ?",
        [(*found, rowid) for rowid, found in _answers(resolver, rows)],
    )


def insert_resolved(
    conn: sqlite3.Connection,
    store_name: str,
    children: Children,
    repo: RepoView | None = None,
) -> None:
    """Insert the link rows of a build from nothing already resolved, instead of inserting
    them and then resolving (and updating) every one as resolve_links would: the same rows,
    one statement fewer per link (indexing the shared corpus updated 3,604 rows so).

    Only for an index that held no memory before this sync (apply's `bulk`): there every
    link is its own memory's, written now, so resolve_links would resolve them all, and no
    other. The memories (their citation IDs assigned) must be written first."""
    links = children.links
    rows = [
        (n, children.sources[row[0]], row[2], row[4], row[3], row[7]) for n, row in enumerate(links)
    ]
    resolver = _resolver_for(conn, store_name, [row[:5] for row in rows], repo)
    answers = dict(_answers(resolver, rows))
    conn.executemany(
        "INSERT INTO links(memory_id, ord, target, type, kind, line, key, status, resolved, "
        "candidates) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (*row[:7], found[1], found[0], found[2])
            if (found := answers.get(n))
            else (*row, None, None)
            for n, row in enumerate(links)
        ],
    )
    children.links, children.sources = [], {}


def _answers(
    resolver: Resolver, rows: list[tuple[int, str, str, str, str, str | None]]
) -> Iterator[tuple[int, tuple[str | None, str, str]]]:
    """(row id, (resolved, status, candidates)) of the rows (row id, source, target, kind,
    type, status) whose answer is not what the row holds already.

    An explicit link is resolved once per folder: its answer depends on the linking
    memory's folder alone (a path is read from there, a name from anywhere), and a store
    writes the same link from many memories of a folder (the shared corpus: 3,413 explicit
    links, 1,268 once per folder; resolving a first build's links one by one was 6% of
    indexing it). Not a candidate: one naming the memory it is written in is no link
    (Resolver.resolve)."""
    kinds = {k.value: k for k in LinkKind}
    folded = resolver.by_folded
    answered: dict[tuple[str, str, str], Resolution] = {}
    for rowid, source, target, kind, kind_type, status in rows:
        if status == UNMATCHED and _plain_unknown(target, folded):
            continue  # a candidate naming no memory stays no link: the common case, kept cheap
        link_kind = kinds[kind]
        if link_kind.candidate:
            found = resolver.resolve(source, Link(target, kind_type, link_kind))
        else:
            key = (source.rpartition("/")[0], target, kind)
            known = answered.get(key)
            if known is None:
                known = answered[key] = resolver.resolve(source, Link(target, kind_type, link_kind))
            found = known
        if found.status.value == status == UNMATCHED:
            continue  # a candidate that was no link and still is none: nothing to write
        yield rowid, (found.target, found.status.value, "\x1f".join(found.candidates))


def _plain_unknown(target: str, folded: Mapping[str, list[str]]) -> bool:
    """A plain name (no path, no extension) that no memory has, in any case."""
    return "/" not in target and "." not in target and name_key(target) not in folded


SMALL = 2_000  # links; fewer than this are resolved against only the memories they could mean


def _resolver_for(
    conn: sqlite3.Connection,
    store_name: str,
    rows: list[tuple[int, str, str, str, str]],
    repo: RepoView | None,
) -> Resolver:
    """A resolver that knows every memory these links could resolve to.

    A link can only resolve to a memory with the same file name as its target
    (by path, relative path or name alike), so after a small change only the
    memories of those names are read: building a resolver over every path
    costs 60 ms at 10k memories, 500 ms at 100k. Targets whose name is not
    plain (`..`, a trailing `.`) and big batches take the whole store.
    """
    stores = {*STORE_PREFIXES, store_name}
    names: set[str] = set()
    ids: set[str] = set()
    if len(rows) >= SMALL:
        return whole_store(conn, stores, repo)  # a big batch: no names worth gathering
    for _, _, target, kind, _ in rows:
        if len(names) + len(ids) >= SMALL:
            break
        if kind == LinkKind.MEM_ID.value:
            ids.add(target.strip().removeprefix("mem:"))
            continue
        if kind == LinkKind.MEM_REF.value:
            ids.add(target.strip())  # `mem:x` names a memory, or else a citation ID
        name = lookup_name(target)
        if name is None:
            break
        names.add(name)
    else:
        paths: list[str] = []
        declared: dict[str, str] = {}
        for chunk in chunks(sorted(names)):
            marks = ",".join("?" * len(chunk))
            paths.extend(
                row[0]
                for row in conn.execute(
                    f"SELECT path FROM memories WHERE error IS NULL AND name_key IN ({marks})",
                    chunk,
                )
            )
            declared.update(
                conn.execute(
                    "SELECT path, declared_name FROM memories WHERE error IS NULL "
                    f"AND declared_key IN ({marks})",
                    chunk,
                )
            )
        paths.extend(declared)
        by_id: dict[str, str] = {}
        for chunk in chunks(sorted(ids)):
            by_id.update(
                conn.execute(
                    "SELECT citation_id, path FROM memories WHERE citation_id IN "
                    f"({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return Resolver(paths, by_id, stores, repo, declared)
    return whole_store(conn, stores, repo)


def whole_store(
    conn: sqlite3.Connection,
    stores: Iterable[str] = STORE_PREFIXES,
    repo: RepoView | None = None,
) -> Resolver:
    """A resolver that knows every readable memory of the index, its citation ID and the
    name it declares."""
    return Resolver(
        [row[0] for row in conn.execute("SELECT path FROM memories WHERE error IS NULL")],
        dict(conn.execute("SELECT citation_id, path FROM memories WHERE citation_id IS NOT NULL")),
        stores,
        repo,
        declared_names(conn),
    )


def declared_names(conn: sqlite3.Connection) -> dict[str, str]:
    """path -> the name it declares, for the memories that declare another name than their
    file's (none in most stores: asked of a partial index, it costs nothing then)."""
    return dict(
        conn.execute(
            "SELECT path, declared_name FROM memories "
            "WHERE declared_key IS NOT NULL AND error IS NULL"
        )
    )
