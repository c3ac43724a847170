"""A file or folder a prose mention names, moved by a `git mv` not committed yet (what a
pre-commit hook sees), alone or after a commit renamed it: the mention follows it there.

Found on 2sem/talktrans (QA round 38): `TranslationManager.swift`, cited by line in a
memory, was renamed in one commit and moved again with a staged `git mv`; every mention of
it read `missing` ("deleted in <the commit that renamed it>"), though a rename staged alone,
or the two renames committed, were followed (citations of a memory's header followed both).
On Totaro-int/Medivu a folder moved by a staged `git mv` read `missing` until the commit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_enhancement.core.verdicts import Verdict
from verify_support import GitRepo, code, fixed_service, note


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/app.py", code("src/app.py", 12))
    repo.commit("code")
    note(repo, "- `src/app.py:5` the handler", "- the file `src/app.py`")
    repo.commit("memory")
    return repo


def verdicts(repo: GitRepo) -> dict[str, tuple[Verdict, str | None, int | None]]:
    [result] = fixed_service(repo).verify("notes").results
    return {
        c.mention.text: (c.status, c.current_path, c.current_line)
        for c in result.mentions
        if c.mention is not None
    }


def test_a_committed_rename_then_a_staged_one_is_followed_to_the_index(repo: GitRepo) -> None:
    repo.mv("src/app.py", "src/main.py")
    repo.commit("rename")
    repo.mv("src/main.py", "lib/main.py")  # staged, not committed
    found = verdicts(repo)
    assert found["src/app.py:5"] == (Verdict.MOVED, "lib/main.py", 5)
    assert found["src/app.py"][:2] == (Verdict.MOVED, "lib/main.py")


def test_a_committed_rename_with_an_edit_then_a_staged_one_is_followed(repo: GitRepo) -> None:
    repo.mv("src/app.py", "src/main.py")
    repo.write_lines("src/main.py", ["# header", *code("src/app.py", 12)])
    repo.commit("rename and grow")
    repo.mv("src/main.py", "lib/main.py")
    assert verdicts(repo)["src/app.py:5"] == (Verdict.MOVED, "lib/main.py", 6)


def test_a_staged_rename_of_another_file_leaves_a_deleted_one_missing(repo: GitRepo) -> None:
    repo.write_lines("src/other.py", code("src/other.py", 3))
    repo.commit("other")
    (repo.root / "src/app.py").unlink()
    repo.commit("delete app.py")
    repo.mv("src/other.py", "lib/other.py")
    assert verdicts(repo)["src/app.py:5"][0] is Verdict.MISSING


def test_a_folder_moved_by_a_staged_git_mv_is_renamed_as_once_committed(repo: GitRepo) -> None:
    """Found on Totaro-int/Medivu: `git mv lib/screens/ocr lib/screens/scan`, not committed
    yet (what a pre-commit hook sees), left the memory's `ocr/` `missing`, "git tracks none
    of them now"; the same move committed is `moved` to the new folder."""
    for name in ("a", "b", "c"):
        repo.write_lines(f"src/pkg/{name}.py", code(name, 2))
    repo.commit("package")
    note(repo, "- the package `src/pkg/` holds the models")
    repo.commit("memory")
    repo.mv("src/pkg", "src/models")
    found = verdicts(repo)["src/pkg/"]
    assert found[:2] == (Verdict.MOVED, "src/models")
    repo.commit("move")
    assert verdicts(repo)["src/pkg/"][:2] == (Verdict.MOVED, "src/models")


def test_a_folder_renamed_in_a_commit_then_moved_by_a_staged_git_mv(repo: GitRepo) -> None:
    for name in ("a", "b"):
        repo.write_lines(f"src/pkg/{name}.py", code(name, 2))
    repo.commit("package")
    note(repo, "- the package `src/pkg/` holds the models")
    repo.commit("memory")
    repo.mv("src/pkg", "src/models")
    repo.commit("rename")
    repo.mv("src/models", "lib/models")
    assert verdicts(repo)["src/pkg/"][:2] == (Verdict.MOVED, "lib/models")


def test_a_folder_of_one_file_renamed_says_it_is_under_the_new_one(repo: GitRepo) -> None:
    repo.write_lines("src/one/a.py", code("a", 2))
    repo.commit("one")
    note(repo, "- the folder `src/one/`")
    repo.commit("memory")
    repo.mv("src/one", "src/two")
    repo.commit("rename")
    [result] = fixed_service(repo).verify("notes").results
    [check] = [c for c in result.mentions if c.mention is not None]
    assert check.reason.startswith("renamed: 1 of the 1 file src/one/ held when")
    assert check.reason.endswith(") is under src/two/ now")
