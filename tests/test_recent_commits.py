"""`recent` in a fresh clone: an undated memory is as new as its last commit.

Serena memories carry no date; the file's mtime, which `recent` fell back to, is the
checkout's time in a fresh clone (lidia-k/FundFlow's 20 memories all "updated" in the
same second). Real git throughout: repositories made here, cloned, committed to.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import GIT_ENV, git
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.commit_times import read_head
from memory_enhancement.verify.repo import Repository
from verify_support import logging_git

MEMORIES = ".serena/memories"


def commit_at(repo: Path, name: str, text: str, date: str) -> None:
    """Write a memory and commit it at `date` (author and committer)."""
    (repo / MEMORIES / f"{name}.md").write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    dated = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "commit", "-q", "-m", name], cwd=repo, check=True, env=dated)


def fresh_clone(tmp_path: Path) -> Path:
    """A clone of a project whose memories were committed oldest `b`, then `c`, then `a`;
    their mtimes set the other way round, as a checkout in another order would leave
    them (a checkout writes every file within the same second)."""
    origin = tmp_path / "origin"
    (origin / MEMORIES).mkdir(parents=True)
    git(origin, "init", "-q", "-b", "main")
    commit_at(origin, "b", "# B\n\nOldest.\n", "2024-01-01T10:00:00Z")
    commit_at(origin, "c", "# C\n\nMiddle.\n", "2024-02-01T10:00:00Z")
    commit_at(origin, "a", "# A\n\nNewest.\n", "2024-03-01T10:00:00Z")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    for second, name in enumerate(["a", "c", "b"]):
        os.utime(clone / MEMORIES / f"{name}.md", (1_800_000_000 + second,) * 2)
    return clone


def service_of(clone: Path, state: State) -> MemoryService:
    return MemoryService(Store(clone / MEMORIES), Repository(clone), state=state)


def recent_paths(clone: Path, state: State) -> list[str]:
    return [s.path for s in service_of(clone, state).recent(10).memories]


def recent_process(clone: Path, env: dict[str, str]) -> list[str]:
    """`recent --json` as a process in the clone, with this environment: the paths."""
    command = [sys.executable, "-m", "memory_enhancement", "--dir", MEMORIES, "recent", "--json"]
    done = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [m["path"] for m in json.loads(done.stdout)]


def test_recent_orders_a_fresh_clones_undated_memories_by_their_last_commit(
    tmp_path: Path,
) -> None:
    clone = fresh_clone(tmp_path)
    assert recent_paths(clone, State(None)) == ["a", "c", "b"]


def test_a_memory_changed_since_its_commit_or_never_committed_goes_by_its_mtime(
    tmp_path: Path,
) -> None:
    clone = fresh_clone(tmp_path)
    (clone / MEMORIES / "b.md").write_text("# B\n\nEdited today.\n", encoding="utf-8")
    os.utime(clone / MEMORIES / "b.md", (1_900_000_000,) * 2)  # after every commit
    (clone / MEMORIES / "d.md").write_text("# D\n\nNot committed.\n", encoding="utf-8")
    os.utime(clone / MEMORIES / "d.md", (1_600_000_000,) * 2)  # 2020: before every commit
    assert recent_paths(clone, State(None)) == ["b", "a", "c", "d"]


def test_a_memory_git_ignores_goes_by_its_mtime(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path)
    (clone / ".gitignore").write_text("private/\n", encoding="utf-8")
    (clone / MEMORIES / "private").mkdir()
    (clone / MEMORIES / "private" / "p.md").write_text("# P\n", encoding="utf-8")
    os.utime(clone / MEMORIES / "private" / "p.md", (1_900_000_000,) * 2)
    assert recent_paths(clone, State(None)) == ["private/p", "a", "c", "b"]


def test_a_memory_a_merge_wrote_has_the_merges_time_and_one_merged_in_has_its_own(
    tmp_path: Path,
) -> None:
    """Fujita0113/game-macro-assistant5's memories first appear in a merge that resolved a
    conflict: git names no file of a merge unless asked (`-c`: the files it changed itself)."""
    clone = fresh_clone(tmp_path)
    git(clone, "checkout", "-q", "-b", "side")
    commit_at(clone, "c", "# C\n\nSide.\n", "2024-04-01T10:00:00Z")
    commit_at(clone, "d", "# D\n\nWritten on the side.\n", "2024-04-02T10:00:00Z")
    git(clone, "checkout", "-q", "main")
    commit_at(clone, "c", "# C\n\nMain.\n", "2024-04-03T10:00:00Z")
    dated = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": "2024-05-01T10:00:00Z"}
    subprocess.run(["git", "merge", "-q", "side"], cwd=clone, env=dated, capture_output=True)
    (clone / MEMORIES / "c.md").write_text("# C\n\nBoth.\n", encoding="utf-8")
    git(clone, "add", "-A")
    subprocess.run(["git", "commit", "-q", "--no-edit"], cwd=clone, env=dated, check=True)
    for name in "abcd":  # a checkout's times, the newest for the oldest memory
        os.utime(clone / MEMORIES / f"{name}.md", (1_800_000_000 - ord(name),) * 2)
    state = State(tmp_path / "state.db")
    assert recent_paths(clone, state) == ["c", "d", "a", "b"]
    with state.connect() as db:
        kept = dict(db.execute("SELECT path, committed FROM commit_times").fetchall())
    assert (kept["c"], kept["d"]) == (1714557600, 1712052000)  # 2024-05-01, 2024-04-02


def test_the_commit_times_are_kept_until_head_or_the_file_changes(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path)
    state = State(tmp_path / "state.db")
    assert recent_paths(clone, state) == ["a", "c", "b"]
    with state.connect() as db:
        kept = dict(db.execute("SELECT path, committed FROM commit_times").fetchall())
    assert kept == {"a": 1709287200, "b": 1704103200, "c": 1706781600}
    commit_at(clone, "b", "# B\n\nRevised.\n", "2024-04-01T10:00:00Z")  # HEAD moves
    assert recent_paths(clone, state) == ["b", "a", "c"]


def test_a_second_recent_asks_git_nothing(tmp_path: Path) -> None:
    """A `git` first on PATH that logs each call and runs the real one."""
    clone = fresh_clone(tmp_path)
    env, calls = logging_git(tmp_path)
    assert recent_process(clone, env) == ["a", "c", "b"]
    assert "log" in calls.read_text()
    calls.unlink()
    assert recent_process(clone, env) == ["a", "c", "b"]
    assert not calls.exists()


def test_head_is_read_from_the_files_of_git_in_a_linked_work_tree_and_packed_refs(
    tmp_path: Path,
) -> None:
    clone = fresh_clone(tmp_path)
    assert read_head(clone) == git(clone, "rev-parse", "HEAD").strip()
    git(clone, "pack-refs", "--all")
    assert read_head(clone) == git(clone, "rev-parse", "HEAD").strip()
    linked = tmp_path / "linked"
    git(clone, "worktree", "add", "-q", "-b", "side", str(linked))
    commit_at(linked, "e", "# E\n", "2024-05-01T10:00:00Z")
    assert read_head(linked) == git(linked, "rev-parse", "HEAD").strip()
    assert read_head(linked) != read_head(clone)
    git(clone, "checkout", "-q", "--detach")
    assert read_head(clone) == git(clone, "rev-parse", "HEAD").strip()


def kept_times(state: State) -> dict[str, int]:
    with state.connect() as db:
        return dict(db.execute("SELECT path, committed FROM commit_times").fetchall())


def test_after_a_new_commit_only_the_commits_since_the_old_head_are_walked(
    tmp_path: Path,
) -> None:
    """The old HEAD's times hold for every file no commit since touched: `old..HEAD` is
    walked, not the whole history (a new memory committed since is found there too)."""
    clone = fresh_clone(tmp_path)
    env, calls = logging_git(tmp_path)
    assert recent_process(clone, env) == ["a", "c", "b"]
    old = git(clone, "rev-parse", "HEAD").strip()
    commit_at(clone, "b", "# B\n\nRevised.\n", "2024-04-01T10:00:00Z")
    commit_at(clone, "d", "# D\n\nNew.\n", "2024-03-15T10:00:00Z")
    for name in "abcd":  # the checkout's second for every file, as a pull leaves them
        os.utime(clone / MEMORIES / f"{name}.md", (1_800_000_000,) * 2)
    calls.unlink()
    assert recent_process(clone, env) == ["b", "d", "a", "c"]
    walks = [line for line in calls.read_text().splitlines() if " log " in f" {line} "]
    assert len(walks) == 1 and f"{old}..HEAD" in walks[0].split()


def test_times_learned_step_by_step_match_a_whole_walk_through_merges_and_resets(
    tmp_path: Path,
) -> None:
    """At each HEAD of a history with a side branch, a merge, a reset, a new memory and
    one edited but not committed, the times kept and brought forward equal those a
    fresh state learns from the whole history."""
    clone = fresh_clone(tmp_path)
    kept = State(tmp_path / "kept.db")

    def check() -> None:
        for name in (p.stem for p in (clone / MEMORIES).glob("*.md")):
            os.utime(clone / MEMORIES / f"{name}.md", (1_800_000_000,) * 2)
        fresh = State(tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}.db")
        assert recent_paths(clone, kept) == recent_paths(clone, fresh)
        assert kept_times(kept) == kept_times(fresh)

    check()
    git(clone, "checkout", "-q", "-b", "side")
    commit_at(clone, "c", "# C\n\nSide.\n", "2024-04-01T10:00:00Z")
    commit_at(clone, "e", "# E\n\nOn the side.\n", "2024-04-02T10:00:00Z")
    check()
    git(clone, "checkout", "-q", "main")
    check()
    commit_at(clone, "a", "# A\n\nMain again.\n", "2024-04-03T10:00:00Z")
    check()
    (clone / MEMORIES / "b.md").write_text("# B\n\nEdited, not committed.\n", encoding="utf-8")
    (clone / MEMORIES / "f.md").write_text("# F\n\nMain.\n", encoding="utf-8")
    git(clone, "add", f"{MEMORIES}/f.md")  # b stays edited, not staged
    dated = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": "2024-04-04T10:00:00Z"}
    subprocess.run(["git", "commit", "-q", "-m", "f"], cwd=clone, env=dated, check=True)
    assert git(clone, "status", "--porcelain").strip() == f"M {MEMORIES}/b.md"
    check()
    git(clone, "checkout", "-q", "--", f"{MEMORIES}/b.md")
    dated = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": "2024-05-01T10:00:00Z"}
    subprocess.run(["git", "merge", "-q", "--no-edit", "side"], cwd=clone, env=dated, check=True)
    check()
    git(clone, "reset", "-q", "--hard", "HEAD~2")  # the old HEAD is no ancestor now
    check()
    assert set(kept_times(kept)) == {"a", "b", "c"}  # e and f gone with the reset


def times_kept_and_fresh(clone: Path, kept: State, tmp_path: Path) -> tuple[dict, dict]:
    """The times a state kept from an older HEAD brings forward, and a fresh one's."""
    fresh = State(tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}.db")
    recent_paths(clone, kept)
    recent_paths(clone, fresh)
    return kept_times(kept), kept_times(fresh)


def test_a_commit_dated_before_its_parent_is_the_time_brought_forward_as_a_whole_walk_says(
    tmp_path: Path,
) -> None:
    """A commit made on a machine whose clock is behind (its date before its parent's) is
    still the memory's last commit: the whole walk takes the newest commit in git's order,
    and so does the walk of the commits since the old HEAD, not the later of the dates."""
    clone = fresh_clone(tmp_path)
    kept = State(tmp_path / "kept.db")
    recent_paths(clone, kept)
    commit_at(clone, "b", "# B\n\nFrom a slow clock.\n", "2023-06-01T10:00:00Z")
    commit_at(clone, "c", "# C\n\nFirst.\n", "2024-06-01T10:00:00Z")
    commit_at(clone, "c", "# C\n\nThen, from a slow clock.\n", "2023-07-01T10:00:00Z")
    brought, fresh = times_kept_and_fresh(clone, kept, tmp_path)
    assert brought == fresh
    assert (fresh["b"], fresh["c"]) == (1685613600, 1688205600)  # 2023-06-01, 2023-07-01


def test_a_memory_a_merge_took_back_to_its_older_text_is_not_given_the_undone_commits_time(
    tmp_path: Path,
) -> None:
    """`recent` on a branch that edited `b`, then that branch merged with `-s ours` (its
    edit undone): b is the older text again, of its older commit, untouched by the commits
    since the branch's HEAD; its checkout gave it a new mtime, so git is asked again."""
    clone = fresh_clone(tmp_path)
    git(clone, "checkout", "-q", "-b", "side")
    commit_at(clone, "b", "# B\n\nOn the side.\n", "2024-04-01T10:00:00Z")
    kept = State(tmp_path / "kept.db")
    recent_paths(clone, kept)
    git(clone, "checkout", "-q", "main")
    commit_at(clone, "d", "# D\n\nMain.\n", "2024-04-02T10:00:00Z")
    dated = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": "2024-05-01T10:00:00Z"}
    merge = ["git", "merge", "-q", "-s", "ours", "--no-edit", "side"]
    subprocess.run(merge, cwd=clone, env=dated, check=True)
    assert "On the side" not in (clone / MEMORIES / "b.md").read_text(encoding="utf-8")
    brought, fresh = times_kept_and_fresh(clone, kept, tmp_path)
    assert brought == fresh
    assert fresh["b"] == 1704103200  # 2024-01-01, its first commit
