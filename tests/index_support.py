"""Helpers for the index, search, ID, usage and context tests: memories written by hand.

Files are written the way a person or `git pull` would write them, straight to
disk, and dated an hour in the past (mtime) unless a test says otherwise, so
the index's "written within two seconds of the last sync" re-check does not
blur what a test counts.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository

HOUR_NS = 3600 * 1_000_000_000
# Four memories on unrelated topics, for the semantic tests (one sentence each).
FOUR_TOPICS = {
    "garage/vehicles": (
        "Vehicles",
        "Our fleet of cars is parked in the garage; each car is serviced yearly.",
    ),
    "food/lunch": ("Lunch", "The cafeteria serves pasta and salad on Fridays."),
    "db/orders": ("Orders table", "Postgres stores the orders table with an index on customer id."),
    "ops/oncall": ("On call", "The on-call engineer answers pages within fifteen minutes."),
}


def write_memory(
    store: Path,
    path: str,
    body: str,
    *,
    title: str | None = None,
    tags: Iterable[str] = (),
    created: str | None = None,
    updated: str | None = None,
    expires: str | None = None,
    age_ns: int | None = HOUR_NS,
) -> Path:
    """A frontmatter memory file, as a person would write it; mtime `age_ns` in the past."""
    head = []
    if created:
        head.append(f"created_at: {created}")
    if updated:
        head.append(f"updated_at: {updated}")
    tag_list = list(tags)
    if tag_list:
        head.append(f"tags: [{', '.join(tag_list)}]")
    if expires:
        head.append(f"expires_at: {expires}")
    text = ""
    if head:
        text = "---\n" + "\n".join(head) + "\n---\n"
    if title is not None:
        text += f"# {title}\n\n"
    text += body.rstrip("\n") + "\n"
    file = store / f"{path}.md"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    if age_ns is not None:
        age(file, age_ns)
    return file


def age(file: Path, age_ns: int = HOUR_NS) -> None:
    """Date a file's mtime in the past (like a checkout of an old commit)."""
    moment = time.time_ns() - age_ns
    os.utime(file, ns=(moment, moment))


def disk_service(
    store: Path,
    repo: Path,
    folder: Path,
    *,
    id_length: int | None = None,
    **kwargs: object,
) -> MemoryService:
    """A service with its index and state as real files in `folder`."""
    extra: dict[str, object] = dict(kwargs)
    if id_length is not None:
        extra["id_length"] = id_length
    return MemoryService(
        Store(store),
        Repository(repo),
        index_path=folder / "index.db",
        state=State(folder / "state.db"),
        **extra,  # type: ignore[arg-type]
    )


def titled_notes_service(folder: Path, notes: Mapping[str, tuple[str, str]]) -> MemoryService:
    """A store of the memories `notes` names (path -> (title, body)) in `folder/store`, and
    its service: what the search tests of each language query."""
    for path, (title, body) in notes.items():
        write_memory(folder / "store", path, body, title=title)
    return disk_service(folder / "store", folder, folder)


def usage_rows(state_file: Path) -> list[tuple[str, str, str, str, str, str | None]]:
    """Every recorded use: (citation_id, path, session, used_at, action, query), oldest first."""
    conn = sqlite3.connect(state_file)
    try:
        return list(
            conn.execute(
                "SELECT citation_id, path, session, used_at, action, query FROM usage ORDER BY id"
            )
        )
    finally:
        conn.close()


def paths(results: Iterable[object]) -> list[str]:
    """The memory paths of search results, in rank order."""
    return [r.hit.row.path for r in results]  # type: ignore[attr-defined]


def as_before_34(conn: sqlite3.Connection) -> None:
    """An index's schema as versions before 34 made it: no table of the words inside
    camelCase names (index/upgrade.py, PARTS), for tests that stand in an older index."""
    for trigger in ("memories_parts_ai", "memories_parts_ad", "memories_parts_au"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE memories_parts_fts")
    conn.execute("DROP VIEW memories_parts")
    conn.execute("ALTER TABLE memories DROP COLUMN fts_parts")
