"""Handing out citation IDs to memories the index sees for the first time.

IDs come from ids.citation_id; here they are made unique within the store and
remembered in the state database, so a rebuilt index gives every memory the ID
it had, and an ID once given is never given to another memory.
"""

from __future__ import annotations

import sqlite3

from memory_enhancement.core.ids import citation_id
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.store.formats.base import Document
from memory_enhancement.store.state import State


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

    def give(db: sqlite3.Connection) -> list[tuple[str, str]]:
        assigned = []
        chosen = set(taken)
        db.execute("BEGIN IMMEDIATE")
        try:
            registry = _Registry(db, [path for path, _, _ in order])
            for path, doc, _ in order:
                declared = doc.memory.meta.citation_id if doc else None
                cid = _choose_id(registry, path, declared, chosen, id_length)
                chosen.add(cid)
                assigned.append((cid, path))
            registry.save()
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return assigned

    assigned = state.run(give)
    conn.executemany("UPDATE memories SET citation_id = ? WHERE path = ?", assigned)


class _Registry:
    """The IDs handed out before (identity <-> ID), read once for a batch of new memories."""

    def __init__(self, db: sqlite3.Connection, identities: list[str]) -> None:
        self.db = db
        self.by_identity: dict[str, str] = {}
        self.owner: dict[str, str] = {}
        rows = db.execute("SELECT identity, citation_id FROM ids").fetchall()
        for identity, cid in rows:
            self.by_identity[identity] = cid
            self.owner[cid] = identity
        self.new: list[tuple[str, str]] = []

    def give(self, identity: str, cid: str) -> None:
        old = self.by_identity.get(identity)
        if old is not None:
            self.owner.pop(old, None)
        self.by_identity[identity] = cid
        self.owner[cid] = identity
        self.new.append((identity, cid))

    def save(self) -> None:
        self.db.executemany(
            "INSERT INTO ids(identity, citation_id) VALUES (?, ?) "
            "ON CONFLICT(identity) DO UPDATE SET citation_id = excluded.citation_id",
            self.new,
        )


def _choose_id(
    registry: _Registry, path: str, declared: str | None, taken: set[str], id_length: int
) -> str:
    if declared and declared not in taken:
        return declared
    known = registry.by_identity.get(path)
    if known and known not in taken:
        return known
    salt = 0
    while True:
        cid = citation_id(path, salt, id_length)
        owner = registry.owner.get(cid)
        if cid not in taken and (owner is None or owner == path):
            registry.give(path, cid)
            return cid
        salt += 1


def _created(doc: Document | None) -> str:
    moment = doc.memory.meta.created_at if doc else None
    return format_timestamp(moment) if moment else "~"
