"""`--fix` writes a renamed file the way the mention reached it: a link relative to the memory
(`../../src/a.py#L5`) keeps its `../../`, an author's clone path (`/home/me/project/src/a.py`)
its folders; only the line number, or the file's path after them, changes. Real git
repositories in temporary folders; `--fix` through the command line in a process of its
own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memory_enhancement.core.mentions import as_written
from verify_support import STORE, GitRepo, code, logging_git, store_cli


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    for name in ["src/a.py", "src/b.py"]:
        repo.write_lines(name, code(name, 20))
    repo.commit("code")
    return repo


def statuses(repo: GitRepo) -> list[str]:
    after = json.loads(store_cli(repo, "verify-all", "--json").stdout)
    return [c["status"] for m in after for c in m["mentions"]]


def test_fix_keeps_a_relative_links_climb_when_its_line_moves_and_its_file_is_renamed(
    repo: GitRepo,
) -> None:
    """The store is `.serena/memories/`, two folders down: `../../src/a.py` is the
    repository's `src/a.py` as a link from the memory reads it. Written as `src/a.py` the
    link would lead to `.serena/memories/src/a.py`, which is no file."""
    text = (
        "# Notes\r\n\r\n"
        "- moved: ../../src/a.py:5 and [the handler](../../src/a.py#L5-L6)  \r\n"
        "- renamed: ../../src/b.py:5, [b](../../src/b.py#L5) and ./src/b.py:5\r\n"
        "no newline"
    )
    file = repo.write(f"{STORE}/notes.md", text.encode("utf-8"))
    repo.commit("memory")
    repo.write_lines("src/a.py", ["first = 1", "second = 2", *code("src/a.py", 20)])
    (repo.root / "pkg").mkdir()
    repo.mv("src/b.py", "pkg/b.py")
    repo.commit("two lines added; b moved to another folder")
    done = store_cli(repo, "verify-all", "--fix")
    assert done.returncode in (0, 1), done.stderr
    expected = (
        text.replace("a.py:5", "a.py:7").replace("#L5-L6", "#L7-L8").replace("src/b.py", "pkg/b.py")
    )
    assert file.read_bytes() == expected.encode("utf-8")
    assert statuses(repo) == ["valid"] * 5


def test_fix_keeps_an_authors_clone_folders_before_a_renamed_file(repo: GitRepo) -> None:
    """doublefx/9router's memories write `/home/doublefx/projects/9router/open-sse/...:1-500`;
    the path after the clone's folder is the repository's, and only that part changes."""
    text = "# Notes\n\n- see /home/me/work/project/src/b.py:5 for b\n"
    file = repo.write(f"{STORE}/notes.md", text)
    repo.commit("memory")
    (repo.root / "pkg").mkdir()
    repo.mv("src/b.py", "pkg/b.py")
    repo.commit("b moved to another folder")
    done = store_cli(repo, "verify-all", "--fix")
    assert done.returncode in (0, 1), done.stderr
    assert file.read_text() == text.replace("src/b.py", "pkg/b.py")
    assert statuses(repo) == ["valid"]


def test_a_new_path_keeps_what_leads_to_the_root_and_a_partial_path_is_written_in_full() -> None:
    assert as_written("../../src/b.py", "pkg/b.py", "src/b.py") == "../../pkg/b.py"
    assert as_written("@src/b.py", "pkg/b.py", "src/b.py") == "@pkg/b.py"
    assert as_written("/w/project/src/b.py", "pkg/b.py", "src/b.py") == "/w/project/pkg/b.py"
    assert as_written("b/x.py", "c/x.py", "a/b/x.py") == "c/x.py"  # a partial path: in full
    assert as_written("./b/x.py", "a/c/x.py", "a/b/x.py") == "./a/c/x.py"
    assert as_written("xsrc/b.py", "pkg/b.py", "src/b.py") == "pkg/b.py"  # not a folder's end


def test_a_file_named_through_the_authors_clone_of_the_repository_is_verified(
    tmp_path: Path,
) -> None:
    """`/workspaces/<name>/src/a.py`, `/home/me/<name>/...`, `/Users/me/work/<name>/...`
    (`<name>`: the work tree's folder, or the origin remote's repository) name the file
    below that folder. One under another folder is still left out, and so is a machine's
    path under the repository's name that names no file of it (`/etc/<name>/x.toml`); a
    path under `/workspaces/<name>/` that names none is `skipped`."""
    repo = GitRepo(tmp_path / "project")
    repo.git("remote", "add", "origin", "git@github.com:owner/Upstream.git")
    for name in ["src/a.py", "src/b.py", "README.md"]:
        repo.write_lines(name, code(name, 20))
    repo.commit("code")
    repo.write_lines(f"{STORE}/notes.md", [
        "# Notes", "",
        "- `/workspaces/project/src/a.py` and `/home/me/project/README.md`",
        "- `/Users/me/work/upstream/src/b.py` (the origin's) and **/home/me/project/src/b.py**",
        "- `/workspaces/project/docs/plan.md` and `/home/me/project/docs/plan.md` never were;",
        "- `/home/me/other/src/a.py` is another's, `/etc/project/x.toml` the machine's",
    ])  # fmt: skip
    repo.commit("memory")
    (repo.root / "pkg").mkdir()
    repo.mv("src/b.py", "pkg/b.py")
    repo.commit("b moved")
    found = json.loads(store_cli(repo, "verify-all", "--json").stdout)
    said = {c["mention"]: (c["status"], c["current_path"]) for m in found for c in m["mentions"]}
    assert said == {
        "workspaces/project/src/a.py": ("valid", "src/a.py"),
        "home/me/project/README.md": ("valid", "README.md"),
        "Users/me/work/upstream/src/b.py": ("moved", "pkg/b.py"),
        "home/me/project/src/b.py": ("moved", "pkg/b.py"),
        "workspaces/project/docs/plan.md": ("skipped", None),
    }
    done = store_cli(repo, "verify-all", "--fix")
    assert done.returncode in (0, 1), done.stderr
    text = (repo.root / STORE / "notes.md").read_text()
    assert "`/Users/me/work/upstream/pkg/b.py`" in text and "**/home/me/project/pkg/b.py**" in text


def test_the_clones_name_is_asked_of_git_once_and_again_when_the_origin_changes(
    tmp_path: Path,
) -> None:
    """What the author's clone is called (the origin remote's repository) decides whether
    `/Users/me/<name>/src/a.py` is verified or left out as a machine's path, on every run:
    it is kept with git's config file's size and time, so a rerun asks `git config`
    nothing, and a new origin is asked again."""
    repo = GitRepo(tmp_path / "project")
    repo.git("remote", "add", "origin", "git@github.com:owner/Upstream.git")
    repo.write_lines("src/a.py", code("src/a.py", 20))
    repo.commit("code")
    repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "See `/Users/me/upstream/src/a.py`."])
    repo.commit("memory")
    env, calls = logging_git(tmp_path)

    def mentioned() -> list[str]:
        command = [sys.executable, "-m", "memory_enhancement", "verify-all", "--json"]
        command += ["--dir", STORE]
        done = subprocess.run(command, cwd=repo.root, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return [c["mention"] for m in json.loads(done.stdout) for c in m.get("mentions", [])]

    assert mentioned() == ["Users/me/upstream/src/a.py"]
    assert "config --get remote.origin.url" in calls.read_text()
    calls.unlink()
    assert mentioned() == ["Users/me/upstream/src/a.py"]
    assert "config" not in calls.read_text()
    repo.git("remote", "set-url", "origin", "git@github.com:owner/Renamed.git")
    assert mentioned() == []  # a machine's path now: no folder of it is named as the clone


@pytest.mark.parametrize("value", ["[" * 100_000, "not json", '[["x"], 5]', "7"])
def test_a_damaged_clone_name_row_is_asked_of_git_again(tmp_path: Path, value: str) -> None:
    """The kept clone's name is read back from the state database: a value that does not
    decode (nested past the decoder's limit included) or is not what was written is a
    miss, asked of git again and written over, never a crash."""
    from memory_enhancement.store.state import State
    from memory_enhancement.verify.git import Git
    from memory_enhancement.verify.mention_cache import CloneNames

    repo = GitRepo(tmp_path / "project")
    repo.git("remote", "add", "origin", "git@github.com:owner/Upstream.git")
    repo.write_lines("src/a.py", code("src/a.py", 3))
    repo.commit("code")
    state = State(repo.root / "state.db")
    git = Git.discover(repo.root)
    assert git is not None
    assert CloneNames(state).of(git) == {"project", "upstream"}
    with state.connect() as db:
        db.execute("UPDATE facts SET value = ? WHERE key = 'clone_names'", (value,))
    assert CloneNames(state).of(git) == {"project", "upstream"}
    with state.connect() as db:
        (kept,) = db.execute("SELECT value FROM facts WHERE key = 'clone_names'").fetchone()
    assert kept != value


def test_fix_leaves_a_mention_of_a_file_renamed_to_a_backup_copy(repo: GitRepo) -> None:
    """amitcjmu/Stock-Analysis moved `deduplication.py` to `deduplication.py.bak` when the
    code went into a `deduplication/` package: git calls it a rename, and the verdict says
    so, but `--fix` must not send the memory's readers to the backup."""
    text = "# Notes\n\n- see src/b.py:5 and `src/a.py`\n"
    file = repo.write(f"{STORE}/notes.md", text)
    repo.commit("memory")
    repo.mv("src/b.py", "src/b.py.bak")
    repo.mv("src/a.py", "src/a.py.BAK")
    repo.commit("old modules kept aside")
    done = store_cli(repo, "verify-all", "--fix")
    assert done.returncode in (0, 1), done.stderr
    assert "nothing to rewrite" in done.stdout
    assert file.read_text() == text
    after = json.loads(store_cli(repo, "verify-all", "--json").stdout)
    renamed = [c["renamed_to"] for m in after for c in m["mentions"]]
    assert renamed == ["src/b.py.bak", "src/a.py.BAK"]
