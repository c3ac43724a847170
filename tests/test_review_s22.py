"""Defects found reviewing session 22 (bulk writes, mention forms in words), each with
the real thing: git repositories in temp folders, SQLite, the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
    memory = repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "- Lines 10, 20 of `src/app.py`"])
    repo.commit("memory")
    repo.write_lines("src/app.py", ["# a", "# b", *code(30)])
    repo.commit("two lines on top")
    done = cli(repo, tmp_path / "home", "verify", "notes", "--fix")
    assert done.returncode in (0, 1), done.stderr
    assert memory.read_text(encoding="utf-8").splitlines()[2] == "- Lines 12, 22 of `src/app.py`"
