"""A new user's first hour, session 23: each case met by following the README from a fresh
clone, fixed, and held here (the system's refusals are in test_system_errors.py).

Through the real CLI in process (exit codes, stdout and stderr apart), in a real git
repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import RunCli, git


@pytest.fixture
def repo(git_repo: Path, run_cli: RunCli) -> Path:
    """The test repository as the current folder, with one memory in its project store."""
    added = run_cli(["add", "notes/api", "-c", "# API", "--citation", "src/app.py:3"], cwd=git_repo)
    assert added.exit_code == 0, added.output
    return git_repo


# -- a citation whose line is mistyped ---------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "file"),
    [
        ("src/app.py:abc", "src/app.py"),
        ("src/app.py:L3", "src/app.py"),
        ("src/app.py:3:5", "src/app.py"),
        ("src/app.py#3", "src/app.py"),
        ("gone.py:12a", "gone.py"),
    ],
)
def test_a_citation_whose_line_is_not_a_number_is_refused_naming_it(
    run_cli: RunCli, repo: Path, ref: str, file: str
) -> None:
    memory = repo / ".memories" / "notes" / "api.md"
    before = memory.read_bytes()
    for args in (
        ["add", "notes/typo", "-c", "# T", "--citation", ref],
        ["citation", "add", "notes/api", ref],
    ):
        result = run_cli(args)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert result.stderr.startswith(f"error: invalid citation '{ref}': ")
        assert f"write {file}:42, {file}:17-25 or {file}#L17-L25" in result.stderr
    assert not (repo / ".memories" / "notes" / "typo.md").exists()
    assert memory.read_bytes() == before


def test_a_missing_file_or_one_named_with_a_colon_is_still_cited(
    run_cli: RunCli, repo: Path
) -> None:
    (repo / "logs").mkdir()
    (repo / "logs" / "run:a.txt").write_text("one\ntwo\n")
    git(repo, "add", "-A")
    for ref in ("docs/later.md", "notes#1.md", "logs/run:a.txt", "logs/run:a.txt:2"):
        result = run_cli(["citation", "add", "notes/api", ref])
        assert result.exit_code == 0, result.output
    shown = run_cli(["get", "notes/api"]).stdout
    assert "docs/later.md" in shown and "notes#1.md" in shown
    assert "logs/run:a.txt:2  `two`" in shown
    warned = run_cli(["citation", "add", "notes/api", "docs/other.md"]).stderr
    assert "docs/other.md does not exist" in warned and "(kept)" in warned
