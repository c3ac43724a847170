"""`without_map` says which files git would find no change in since a base commit.

It stands in for a `git diff` per base commit, so it must never call a file unchanged
that git would give a line map for; a file it is unsure of is left to the diff.
"""

from __future__ import annotations

from pathlib import Path

from memory_enhancement.verify.git import Git
from memory_enhancement.verify.repo import Repository
from memory_enhancement.verify.unchanged import without_map
from verify_support import GitRepo


def test_only_files_the_diff_would_not_map_are_said_unchanged(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("same.py", ["a = 1", "b = 2"])
    repo.write_lines("edited.py", ["a = 1", "b = 2"])
    repo.write_lines("dirty.py", ["a = 1"])
    repo.write_lines("moved.py", ["c = 3"])
    base = repo.commit("base")
    repo.write_lines("edited.py", ["a = 1", "b = 3"])
    repo.write_lines("added.py", ["new = 1"])
    repo.mv("moved.py", "elsewhere.py")
    repo.commit("later")
    repo.write_lines("dirty.py", ["a = 2"])  # changed in the work tree only
    git = Git.discover(repo.root)
    assert git is not None
    paths = ["same.py", "edited.py", "dirty.py", "added.py", "moved.py", "elsewhere.py"]
    found = without_map(git, Repository(repo.root), {base: paths})
    # added.py and elsewhere.py were not there at the base; moved.py is gone from the
    # work tree (the diff follows its rename), so it is left to the diff.
    assert found == {base: {"same.py", "added.py", "elsewhere.py"}}
    maps = git.line_maps(base, paths)
    assert not found[base] & set(maps)  # never a file the diff maps


def test_a_repository_root_below_the_git_root_names_files_from_itself(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("sub/code.py", ["a = 1"])
    repo.write_lines("sub/edited.py", ["a = 1"])
    base = repo.commit("base")
    repo.write_lines("sub/edited.py", ["a = 2"])
    root = repo.root / "sub"
    git = Git.discover(root)
    assert git is not None and git.prefix == "sub"
    found = without_map(git, Repository(root), {base: ["code.py", "edited.py"]})
    assert found == {base: {"code.py"}}


def test_an_unknown_commit_tells_nothing(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("a.py", ["a = 1"])
    repo.commit("base")
    git = Git.discover(repo.root)
    assert git is not None
    assert without_map(git, Repository(repo.root), {"0" * 40: ["a.py"]}) == {"0" * 40: {"a.py"}}
