"""A cold build parses in worker processes; the index it makes is the same as a serial one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_enhancement.index import reading
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository


def make_store(root: Path, count: int) -> None:
    for n in range(count):
        folder = root / f"topic{n % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        links = f"- [next](../topic{(n + 1) % 5}/note{n + 1}.md)\n" if n + 1 < count else ""
        frontmatter = "---\ntags: [t]\n---\n" if n % 2 else ""
        (folder / f"note{n}.md").write_text(
            f"{frontmatter}# Note {n}\n\nAbout the number {n}.\n\n## Related\n\n{links}",
            encoding="utf-8",
        )
    (root / "broken.md").write_bytes(b"# bad \xff\xfe bytes\n")


_original_work = reading._work


def counted(root: str, paths: list[str], known: dict[str, str]) -> list[reading.Outcome]:
    """The worker, noting which process ran it (module level, so workers can unpickle it)."""
    with open(os.environ["PIDS_FILE"], "a", encoding="utf-8") as out:
        out.write(f"{os.getpid()}\n")
    return _original_work(root, paths, known)


def snapshot(service: MemoryService) -> tuple[object, ...]:
    with service.index.connect() as conn:
        rows = conn.execute(
            "SELECT path, title, tags, content, citation_id, error FROM memories ORDER BY path"
        ).fetchall()
        links = conn.execute(
            "SELECT m.path, l.target, l.status, l.resolved FROM links l "
            "JOIN memories m ON m.id = l.memory_id ORDER BY m.path, l.ord"
        ).fetchall()
        hits = conn.execute(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'number' ORDER BY rowid"
        ).fetchall()
    return tuple(rows), tuple(links), len(hits)


def build(root: Path, home: Path) -> MemoryService:
    service = MemoryService(
        Store(root), Repository(root), index_path=home / "index.db", state=State(home / "s.db")
    )
    service.reindex()
    return service


def test_a_parallel_cold_build_indexes_exactly_what_a_serial_one_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_store(tmp_path / "store", 60)
    serial = snapshot(build(tmp_path / "store", tmp_path / "serial"))
    pids = tmp_path / "pids"
    monkeypatch.setenv("PIDS_FILE", str(pids))
    monkeypatch.setattr(reading, "_work", counted)
    monkeypatch.setattr(reading, "PARALLEL_FROM", 10)
    monkeypatch.setattr(reading, "_CHUNK", 16)
    monkeypatch.setattr(reading.os, "cpu_count", lambda: 2)
    parallel = snapshot(build(tmp_path / "store", tmp_path / "parallel"))
    assert parallel == serial
    rows, links, hits = parallel
    assert len(rows) == 61 and hits == 60  # the undecodable file is indexed as an error
    assert sum(1 for row in rows if row[5]) == 1
    assert all(status == "resolved" for _, _, status, _ in links)
    workers = set(pids.read_text(encoding="utf-8").split())
    assert workers and str(os.getpid()) not in workers  # parsed in other processes


def test_a_bulk_rewrite_of_the_same_bytes_is_hashed_here_and_only_changes_are_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_store(tmp_path / "store", 60)
    service = build(tmp_path / "store", tmp_path / "home")
    before = snapshot(service)
    pids = tmp_path / "pids"
    monkeypatch.setenv("PIDS_FILE", str(pids))
    monkeypatch.setattr(reading, "_work", counted)
    monkeypatch.setattr(reading, "PARALLEL_FROM", 10)
    monkeypatch.setattr(reading, "_CHUNK", 16)
    monkeypatch.setattr(reading.os, "cpu_count", lambda: 2)
    for file in (tmp_path / "store").rglob("note*.md"):  # a checkout: new files, same bytes
        data = file.read_bytes()
        file.unlink()
        file.write_bytes(data)
    with service.index.connect(sync=False) as conn:
        stats = service.index.sync(conn, check_files=True)
    assert (stats.added, stats.updated, stats.touched) == (0, 0, 60)
    assert not pids.exists()  # no worker was started for content that did not change
    assert snapshot(service) == before
    for n in range(20):  # now twenty really change: those alone are parsed, in workers
        file = tmp_path / "store" / f"topic{n % 5}" / f"note{n}.md"
        file.write_text(file.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    with service.index.connect(sync=False) as conn:
        stats = service.index.sync(conn, check_files=True)
    assert stats.updated == 20  # (others written just before the last sync are hashed again)
    assert pids.exists()
