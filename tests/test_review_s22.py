"""Defects found reviewing session 22 (bulk writes, mention forms in words), each with
the real thing: git repositories in temp folders, SQLite, the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from graph_support import out_links, write_all
from memory_enhancement.service import MemoryService
from memory_enhancement.store import atomic
from memory_enhancement.store.disk import Store
from memory_enhancement.verify.repo import Repository
from verify_support import STORE, GitRepo

SRC = str(Path(__file__).resolve().parents[1] / "src")


def cli(repo: GitRepo, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC, "MEMORY_ENHANCEMENT_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "memory_enhancement", *args, "--dir", str(repo.store_root)],
        cwd=repo.root, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def code(count: int) -> list[str]:
    return [f"app_{n} = {n}" for n in range(1, count + 1)]


def test_fix_moves_both_numbers_of_a_list_written_before_its_path(
    tmp_path: Path,
) -> None:
    """`Lines 10, 20 of `app.py``: the first mention's text spans the list item `20`, so
    the item's edit and the first one's overlapped and one of them was dropped."""
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/app.py", code(30))
    repo.commit("code")
    memory = repo.write_lines(
        f"{STORE}/notes.md", ["# Notes", "", "- Lines 10, 20 of `src/app.py`"]
    )
    repo.commit("memory")
    repo.write_lines("src/app.py", ["# a", "# b", *code(30)])
    repo.commit("two lines on top")
    done = cli(repo, tmp_path / "home", "verify", "notes", "--fix")
    assert done.returncode in (0, 1), done.stderr
    assert memory.read_text(encoding="utf-8").splitlines()[2] == "- Lines 12, 22 of `src/app.py`"


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
                store.replace("a/one", b"# One, fixed\n")
            inside.set()
            leave.wait(10)

    worker = threading.Thread(target=batch)
    worker.start()
    try:
        assert inside.wait(10)
        with store.lock():
            store.replace("b/two", b"# Two, updated\n")
        assert synced == [store.root / "b"]  # synced by the write itself, not by the batch
    finally:
        leave.set()
        worker.join(10)
    assert synced == [store.root / "b", store.root / "a"]


def test_a_path_to_a_file_of_the_repository_is_not_taken_for_a_moved_memory(
    git_repo: Path,
) -> None:
    """`memories/README.md` from the repository root is the file there, not the store's
    `archived/README` found by its name: the unique-name fallback for store paths must
    not take a link to a file that exists."""
    other = git_repo / "memories" / "README.md"
    other.parent.mkdir(parents=True)
    other.write_text("# Another tool's memories\n", encoding="utf-8")
    serena = git_repo / ".serena" / "memories"
    write_all(
        serena,
        {
            "archived/README": "# This store's README, moved\n",
            "export": "# Export\n\n## Related Files\n\n- `memories/README.md` - the workflow\n",
        },
    )
    service = MemoryService(Store(serena), Repository(git_repo))
    assert out_links(service, "export") == []
    assert service.related("archived/README") == []
