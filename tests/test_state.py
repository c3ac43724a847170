"""The state database holds what cannot be rebuilt: it is never deleted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory_enhancement.store.state import State


def test_a_damaged_state_database_is_moved_aside_not_deleted(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not a database, " * 200)
    with State(path).connect() as conn:
        conn.execute(
            "INSERT INTO usage(citation_id, path, session, used_at, action) "
            "VALUES ('abc123', 'a/b', 's', '2026-01-01T00:00:00.000Z', 'get')"
        )
    kept = list(tmp_path.glob("state.db.unreadable-*"))
    assert len(kept) == 1
    assert kept[0].read_bytes().startswith(b"this is not a database")
    with State(path).connect() as conn:
        assert conn.execute("SELECT count(*) FROM usage").fetchone()[0] == 1


def test_a_persistent_state_reopens_when_its_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    state = State(path, persistent=True)
    with state.connect() as conn:
        conn.execute("INSERT INTO ids(identity, citation_id) VALUES ('a/b', 'abc123')")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with state.connect() as conn:
        assert conn.execute("SELECT count(*) FROM ids").fetchone()[0] == 0
        conn.execute("INSERT INTO ids(identity, citation_id) VALUES ('c/d', 'def456')")
    with State(path).connect() as conn:
        assert conn.execute("SELECT identity FROM ids").fetchall() == [("c/d",)]


def test_a_held_state_gives_one_connection_to_every_use_and_closes_it_after(
    tmp_path: Path,
) -> None:
    """A command that reads and writes the state several times (verify-all's mention
    cache, then its history) opens the database once, and leaves nothing open after."""
    state = State(tmp_path / "state.db")
    with state.held():
        with state.connect() as first:
            first.execute("CREATE TABLE IF NOT EXISTS t (x)")
        with state.connect() as second:
            assert second is first
    with pytest.raises(sqlite3.ProgrammingError):  # closed
        first.execute("SELECT 1")
    with state.connect() as third:
        assert third is not first
    with state.held(), state.connect() as fourth:
        assert fourth is not first
