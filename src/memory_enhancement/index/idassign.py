"""Handing out citation IDs to memories the index sees for the first time.

IDs come from ids.citation_id; here they are made unique within the store and
remembered in the state database, so a rebuilt index gives every memory the ID
it had, and an ID once given is never given to another memory.
"""

from __future__ import annotations

import sqlite3

from ..formats.base import Document
from ..ids import citation_id
from ..state import State
from ..timestamps import format_timestamp


def assign_ids(
    conn: sqlite3.Connection,
    state: State,
    added: list[tuple[str, Document | None, str | None]],
    id_length: int,
) -> None:
    """Give new memories their IDs, oldest first, so collisions resolve the same way."""
    if not added:
        return
    taken = {row[0] for row in conn.execute("SELECT citation_id FROM memories") if row[0]}
    order = sorted(added, key=lambda a: (_created(a[1]), a[0]))
    assigned = []
    with state.connect() as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            for path, doc, _ in order:
                declared = doc.memory.meta.citation_id if doc else None
                cid = _choose_id(db, path, declared, taken, id_length)
                taken.add(cid)
                assigned.append((cid, path))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    conn.executemany("UPDATE memories SET citation_id = ? WHERE path = ?", assigned)


def _choose_id(
    state: sqlite3.Connection, path: str, declared: str | None, taken: set[str], id_length: int
) -> str:
    if declared and declared not in taken:
        return declared
    known = state.execute("SELECT citation_id FROM ids WHERE identity = ?", (path,)).fetchone()
    if known and known[0] not in taken:
        return str(known[0])
    salt = 0
    while True:
        cid = citation_id(path, salt, id_length)
        owner = state.execute("SELECT identity FROM ids WHERE citation_id = ?", (cid,)).fetchone()
        if cid not in taken and (owner is None or owner[0] == path):
            state.execute(
                "INSERT INTO ids(identity, citation_id) VALUES (?, ?) "
                "ON CONFLICT(identity) DO UPDATE SET citation_id = excluded.citation_id",
                (path, cid),
            )
            return cid
        salt += 1


def _created(doc: Document | None) -> str:
    moment = doc.memory.meta.created_at if doc else None
    return format_timestamp(moment) if moment else "~"
