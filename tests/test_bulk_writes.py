"""Bulk writes by the tool itself (`verify-all --write` and `--fix` rewrite every memory
they touch): each file is written whole, each folder is synced once at the end of the
batch, and a writer killed half-way leaves every file old or new, never half.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mcp_support import child_env
from memory_enhancement.core.model import Citation
from memory_enhancement.index.index import Index
from memory_enhancement.store import atomic
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from verify_support import GitRepo, numbered

MEMORIES = 24

# `verify-all --write` in a child that kills itself at its 10th rename of a memory into
# place: ten memories rewritten, the eleventh's new bytes in a temporary file.
KILLED_WRITER = r"""
import os, signal, sys
renames = 0
def at_rename(event, args):
    global renames
    if event == "os.rename" and str(args[0]).endswith(".tmp"):
        renames += 1
        if renames == 11:
            os.kill(os.getpid(), signal.SIGKILL)
sys.addaudithook(at_rename)
from memory_enhancement.cli import main
sys.argv = ["memory-enhancement", "verify-all", "--write", "--dir", sys.argv[1]]
main()
"""


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    lines = numbered(40, "code")
    repo.write_lines("src/app.py", lines)
    repo.commit("code")
    stamp = repo.stamp()
    for n in range(MEMORIES):
        folder = ("alpha", "beta", "gamma")[n % 3]
        citation = Citation("src/app.py", n + 1, snippet=lines[n], verified=stamp)
        repo.memory(f"{folder}/m{n:02d}", [citation], fmt="serena")
    repo.commit("memories")
    return repo


def test_a_batch_syncs_each_folder_once_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    monkeypatch.setattr(atomic, "fsync_folder", lambda folder: synced.append(folder.name))
    store = Store(tmp_path / "store")
    with store.lock():
        for path in ("a/x", "a/y", "b/z"):
            store.create(path, b"# One\n")
    assert synced == ["a", "a", "b"]  # alone, every write syncs its folder
    synced.clear()
    with store.batch():
        with store.batch():  # nested: still the one batch
            for path in ("a/x", "b/z", "a/y"):
                with store.lock():
                    store.replace(path, b"# Two\n", None)
        assert synced == []
        assert all(store.read(p).decoded.text == "# Two\n" for p in ("a/x", "a/y", "b/z"))
    assert synced == ["a", "b"]
    synced.clear()
    with store.lock():
        store.replace("a/x", b"# Three\n", None)  # after the batch: synced at once again
    assert synced == ["a"]


def test_a_write_by_another_thread_during_a_batch_syncs_its_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The MCP server shares one Store between its worker threads: a `verify --fix` batch
    in one must not take over the folder syncs of an `update` in another (that update's
    rename was left unsynced until the batch ended, or for good when the batch ended
    between the update's choice and its rename)."""
    store = Store(tmp_path / "store")
    with store.lock():
        store.create("a/one", b"# One\n")
        store.create("b/two", b"# Two\n")
    synced: list[Path] = []
    real = atomic.fsync_folder

    def recording(folder: Path) -> None:
        synced.append(folder)
        real(folder)

    monkeypatch.setattr(atomic, "fsync_folder", recording)
    inside, leave = threading.Event(), threading.Event()

    def batch() -> None:
        with store.batch():
            with store.lock():
                store.replace("a/one", b"# One, fixed\n", None)
            inside.set()
            leave.wait(10)

    worker = threading.Thread(target=batch)
    worker.start()
    try:
        assert inside.wait(10)
        with store.lock():
            store.replace("b/two", b"# Two, updated\n", None)
        assert synced == [store.root / "b"]  # synced by the write itself, not by the batch
    finally:
        leave.set()
        worker.join(10)
    assert synced == [store.root / "b", store.root / "a"]


def test_a_bulk_write_killed_half_way_leaves_every_memory_whole(
    repo: GitRepo, isolated_home: Path, tmp_path: Path
) -> None:
    env = child_env(isolated_home)
    before = {p: p.read_bytes() for p in sorted(repo.store_root.rglob("*.md"))}
    writer = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(repo.store_root)],
        cwd=repo.root, env=env, capture_output=True, timeout=120,
    )  # fmt: skip
    assert writer.returncode == -signal.SIGKILL, writer.stderr.decode()[-2000:]
    after = {p: p.read_bytes() for p in sorted(repo.store_root.rglob("*.md"))}
    assert list(after) == list(before)  # no memory lost, none added
    rewritten = [p for p in before if after[p] != before[p]]
    assert len(rewritten) == 10
    for path in rewritten:
        assert after[path].startswith(before[path].split(b"## Metadata")[0])
        assert b"**Last Verified**" in after[path]
    store = Store(repo.store_root)
    for path in store.iter_paths():
        store.read(path)  # raises if any file is half-written

    # The next run completes the batch; its index is what a rebuild from the files holds.
    done = subprocess.run(
        [sys.executable, "-m", "memory_enhancement", "verify-all", "--write", "--json",
         "--dir", str(repo.store_root)],
        cwd=repo.root, env=env, capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert all(b"**Last Verified**" in p.read_bytes() for p in repo.store_root.rglob("*.md"))
    assert sorted(repo.store_root.rglob(".*.tmp")) == []  # the killed write's leftover
    indexes = sorted((isolated_home / "cache" / "indexes").rglob("*.db"))
    assert len(indexes) == 1, indexes
    rebuilt = tmp_path / "rebuilt.db"
    Index(store, rebuilt, State(tmp_path / "state.db")).rebuild()
    assert _rows(indexes[0]) == _rows(rebuilt)


def _rows(index_file: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(index_file) as conn:
        return conn.execute(
            "SELECT m.path, m.hash, m.last_verified, f.mtime_ns, f.size FROM memories m "
            "JOIN files f ON f.path = m.path ORDER BY m.path"
        ).fetchall()
