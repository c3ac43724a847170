"""LineMap on crafted hunks, and the Git wrapper's answers from a real repository."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.line_maps import Hunk, LineMap, parse_diff
from verify_support import GitRepo, git_of, numbered


def mapped(*hunks: Hunk) -> LineMap:
    return LineMap("f.py", "f.py", hunks)


# -- LineMap on crafted hunks -------------------------------------------------


def test_without_hunks_every_line_stays_where_it_was() -> None:
    line_map = mapped()
    assert [line_map.forward(n) for n in (1, 7, 100)] == [1, 7, 100]
    assert [line_map.backward(n) for n in (1, 7, 100)] == [1, 7, 100]
    assert [line_map.expected(n) for n in (1, 7, 100)] == [1, 7, 100]
    assert not line_map.deleted(1)


def test_lines_inserted_at_the_top_shift_every_old_line_down() -> None:
    line_map = mapped(Hunk(0, 0, 1, 2))  # @@ -0,0 +1,2 @@
    assert [line_map.forward(n) for n in (1, 2, 10)] == [3, 4, 12]
    assert [line_map.backward(n) for n in (1, 2, 3, 12)] == [None, None, 1, 10]
    assert line_map.expected(1) == 3


def test_lines_inserted_in_the_middle_shift_only_the_lines_after_them() -> None:
    line_map = mapped(Hunk(3, 0, 4, 2))  # two lines after old line 3
    assert [line_map.forward(n) for n in (1, 3, 4, 5)] == [1, 3, 6, 7]
    assert [line_map.backward(n) for n in (3, 4, 5, 6, 7)] == [3, None, None, 4, 5]
    assert [line_map.expected(n) for n in (3, 4)] == [3, 6]


def test_deleted_lines_have_no_forward_and_later_lines_move_up() -> None:
    line_map = mapped(Hunk(2, 2, 1, 0))  # @@ -2,2 +1,0 @@: old lines 2-3 deleted
    assert [line_map.forward(n) for n in (1, 2, 3, 4, 9)] == [1, None, None, 2, 7]
    assert [line_map.backward(n) for n in (1, 2, 7)] == [1, 4, 9]
    assert line_map.deleted(2) and line_map.deleted(3)
    assert not line_map.deleted(1) and not line_map.deleted(4)
    assert line_map.expected(4) == 2


def test_a_replaced_line_has_no_forward_but_an_expected_place() -> None:
    line_map = mapped(Hunk(5, 1, 5, 1))  # @@ -5 +5 @@
    assert line_map.forward(5) is None
    assert line_map.backward(5) is None
    assert line_map.expected(5) == 5
    assert not line_map.deleted(5)
    assert [line_map.forward(n) for n in (4, 6)] == [4, 6]


def test_a_replacement_that_grows_maps_its_old_lines_into_the_new_block() -> None:
    line_map = mapped(Hunk(5, 2, 5, 4))  # old 5-6 became new 5-8
    assert [line_map.expected(n) for n in (5, 6)] == [5, 6]
    assert [line_map.forward(n) for n in (4, 5, 6, 7)] == [4, None, None, 9]
    assert [line_map.backward(n) for n in (8, 9)] == [None, 7]


def test_a_replacement_that_shrinks_maps_its_old_lines_to_the_last_new_one() -> None:
    line_map = mapped(Hunk(5, 3, 5, 1))  # old 5-7 became new 5
    assert [line_map.expected(n) for n in (5, 6, 7, 8)] == [5, 5, 5, 6]
    assert line_map.forward(8) == 6


def test_several_hunks_add_up_their_offsets() -> None:
    line_map = mapped(
        Hunk(0, 0, 1, 2),  # +2 at the top
        Hunk(10, 1, 11, 0),  # old line 10 deleted
        Hunk(20, 1, 21, 3),  # old line 20 became three lines
    )
    assert [line_map.forward(n) for n in (1, 9, 10, 11, 19, 20, 21)] == [
        3, 11, None, 12, 20, None, 24,
    ]  # fmt: skip
    assert [line_map.backward(n) for n in (1, 3, 11, 12, 21, 23, 24)] == [
        None, 1, 9, 11, None, None, 21,
    ]  # fmt: skip
    assert line_map.expected(20) == 21
    assert line_map.expected(30) == 33


def test_forward_and_backward_are_inverse_on_unchanged_lines() -> None:
    line_map = mapped(Hunk(0, 0, 1, 2), Hunk(10, 1, 11, 0), Hunk(20, 1, 21, 3))
    for old in range(1, 40):
        new = line_map.forward(old)
        if new is not None:
            assert line_map.backward(new) == old


def _forward_by_walking(line_map: LineMap, old_line: int) -> int | None:
    """The definition: walk the hunks in order, adding up what each inserted or removed."""
    offset = 0
    for h in line_map.hunks:
        if h.old_count:
            if old_line < h.old_start:
                break
            if old_line < h.old_start + h.old_count:
                return None
        elif old_line <= h.old_start:
            break
        offset += h.new_count - h.old_count
    return old_line + offset


def _random_hunks(rng: random.Random, old_total: int) -> list[Hunk]:
    """Non-overlapping zero-context hunks as git writes them: insertions after a line,
    deletions and replacements of runs of old lines."""
    hunks, old, new = [], 0, 0  # the last old and new line consumed
    while old < old_total:
        gap = min(rng.randint(0, 6), old_total - old)
        old, new = old + gap, new + gap
        kind = rng.choice(["insert", "delete", "replace"]) if old < old_total else "insert"
        removed = 0 if kind == "insert" else min(rng.randint(1, 4), old_total - old)
        added = 0 if kind == "delete" else rng.randint(1, 4)
        if removed == 0 and added == 0:
            break
        start = old + 1 if removed else old
        hunks.append(Hunk(start, removed, new + 1 if added else new, added))
        old, new = old + removed, new + added
        if removed == 0:  # two insertions after the same line are one hunk in git
            gap = rng.randint(1, 6)
            old, new = min(old + gap, old_total), new + gap
    return hunks


def test_forward_agrees_with_walking_the_hunks_on_random_diffs() -> None:
    rng = random.Random(7)
    for _ in range(300):
        total = rng.randint(0, 60)
        line_map = mapped(*_random_hunks(rng, total))
        for old_line in range(1, total + 3):
            assert line_map.forward(old_line) == _forward_by_walking(line_map, old_line), (
                line_map.hunks,
                old_line,
            )


def test_hunk_headers_are_parsed_with_and_without_counts() -> None:
    out = (
        "diff --git a/f.py b/f.py\n"
        "index 1111111..2222222 100644\n"
        "--- a/f.py\n"
        "+++ b/f.py\n"
        "@@ -0,0 +1,2 @@\n"
        "+a\n"
        "+b\n"
        "@@ -3 +5 @@ def f():\n"
        "-old\n"
        "+new\n"
        "@@ -7,2 +8,0 @@\n"
        "-x\n"
        "-y\n"
    )
    [line_map] = parse_diff(out)
    assert (line_map.old_path, line_map.new_path) == ("f.py", "f.py")
    assert line_map.hunks == (Hunk(0, 0, 1, 2), Hunk(3, 1, 5, 1), Hunk(7, 2, 8, 0))


def test_changed_lines_that_look_like_headers_are_not_read_as_headers() -> None:
    out = (
        "diff --git a/q.sql b/q.sql\n"
        "--- a/q.sql\n"
        "+++ b/q.sql\n"
        "@@ -1 +1 @@\n"
        "--- old comment\n"
        "+++ new text\n"
        "diff --git a/r.lua b/r.lua\n"
        "--- a/r.lua\n"
        "+++ b/r.lua\n"
        "@@ -2,0 +3 @@\n"
        "+rename to elsewhere\n"
    )
    maps = parse_diff(out)
    assert [(m.old_path, m.new_path, m.hunks) for m in maps] == [
        ("q.sql", "q.sql", (Hunk(1, 1, 1, 1),)),
        ("r.lua", "r.lua", (Hunk(2, 0, 3, 1),)),
    ]


# -- Git on a real repository -------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/a.py", numbered(10))
    repo.write_lines("docs/my notes.txt", numbered(3))
    repo.write_lines("src/café.py", numbered(5))
    repo.commit("initial")
    return repo


def test_line_maps_come_from_one_git_diff_for_all_paths(repo: GitRepo) -> None:
    base = repo.head()
    repo.write_lines("src/a.py", ["new_top", *numbered(10)])
    repo.write_lines("docs/my notes.txt", [*numbered(2), "changed"])
    repo.write_lines("src/café.py", numbered(4))
    repo.commit("edit")
    git = git_of(repo)
    before = git.calls
    maps = git.line_maps(base, ["src/a.py", "docs/my notes.txt", "src/café.py"])
    assert git.calls == before + 2  # the base's tree, one diff; nothing gone: no renames
    assert maps["src/a.py"].hunks == (Hunk(0, 0, 1, 1),)
    assert maps["docs/my notes.txt"].hunks == (Hunk(3, 1, 3, 1),)
    assert maps["src/café.py"].hunks == (Hunk(5, 1, 4, 0),)
    assert git.line_maps(base, ["src/a.py"])["src/a.py"].forward(3) == 4
    assert git.calls == before + 4
    assert "renames" not in vars(git)  # never computed


def test_files_written_after_the_base_are_not_diffed(repo: GitRepo) -> None:
    base = repo.head()
    repo.write_lines("src/new.py", numbered(5))
    repo.commit("new file")
    git = git_of(repo)
    before = git.calls
    assert git.line_maps(base, ["src/new.py"]) == {}
    assert git.calls == before + 1  # the base's tree says it was not there: no diff


def test_renames_are_read_only_since_the_horizon(repo: GitRepo) -> None:
    repo.mv("src/a.py", "lib/a.py")
    repo.commit("early move")
    git = git_of(repo)
    assert git.renames == {"src/a.py": "lib/a.py"}  # no horizon: the whole history
    later = git_of(repo)
    later.horizon = datetime.now(UTC) + timedelta(days=1)  # every stamp after the move
    assert later.renames == {}


def test_history_is_walked_back_only_to_the_horizon(repo: GitRepo) -> None:
    first = repo.head()
    repo.write_lines("src/a.py", ["x"])
    repo.commit("second")
    git = git_of(repo)
    git.horizon = datetime.now(UTC) + timedelta(days=1)  # HEAD is older than every stamp
    assert git.commit_at(git.horizon) == repo.head()
    assert git.commit_after(git.horizon) is None
    walked = git._walked
    assert walked is not None and walked[1][0] == []  # not one commit listed
    oldest = int(repo.git("log", "--format=%ct", first).split()[0])
    early = datetime.fromtimestamp(oldest - 1, UTC)  # before the first commit: walked again
    assert git.commit_at(early) is None
    assert git.commit_after(early) == first


def test_an_unchanged_file_has_no_line_map(repo: GitRepo) -> None:
    base = repo.head()
    assert git_of(repo).line_maps(base, ["src/a.py"]) == {}


def test_line_maps_follow_a_rename(repo: GitRepo) -> None:
    base = repo.head()
    repo.mv("src/a.py", "lib/a.py")
    repo.write_lines("lib/a.py", ["top", *numbered(10)])
    repo.commit("move")
    git = git_of(repo)
    assert git.renames == {"src/a.py": "lib/a.py"}
    line_map = git.line_maps(base, ["src/a.py"])["src/a.py"]
    assert (line_map.old_path, line_map.new_path) == ("src/a.py", "lib/a.py")
    assert line_map.forward(1) == 2


def test_tracked_files_are_listed_once_relative_to_the_root(repo: GitRepo) -> None:
    git = git_of(repo)
    assert git.tracked == {"src/a.py", "docs/my notes.txt", "src/café.py"}
    calls = git.calls
    assert "src/a.py" in git.tracked
    assert git.calls == calls


def test_a_subfolder_root_sees_paths_relative_to_itself(repo: GitRepo) -> None:
    git = Git.discover(repo.root / "src")
    assert git is not None
    assert git.prefix == "src"
    assert git.tracked == {"a.py", "café.py"}


def test_changed_since_lists_both_sides_of_renames_and_untracked_files(repo: GitRepo) -> None:
    base = repo.head()
    repo.mv("src/a.py", "src/b.py")
    repo.commit("rename")
    repo.write_lines("docs/my notes.txt", ["edited"])  # uncommitted
    repo.write_lines("src/new.py", ["x"])  # untracked
    assert git_of(repo).changed_since(base) == {
        "src/a.py",
        "src/b.py",
        "docs/my notes.txt",
        "src/new.py",
    }
    assert git_of(repo).changed_since("HEAD") == {"docs/my notes.txt", "src/new.py"}


def test_an_unknown_ref_is_the_callers_mistake(repo: GitRepo) -> None:
    with pytest.raises(InvalidInputError, match="unknown git ref 'no-such-branch'"):
        git_of(repo).resolve("no-such-branch")


def test_a_repository_without_commits_has_no_history(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "empty")
    repo.write_lines("a.py", ["x"])
    git = git_of(repo)
    assert git.head() is None
    assert git.renames == {}
    assert git.tracked == frozenset()


def test_a_plain_folder_has_no_git(tmp_path: Path) -> None:
    assert Git.discover(tmp_path) is None


def test_heads_time_once_asked_answers_the_current_commit_without_git(repo: GitRepo) -> None:
    """`current_commit` reads HEAD from its time and sha once they were asked (`_head`)
    rather than starting a second git process; it asked `head()`, which is
    `current_commit` itself: a recursion without end."""
    git = git_of(repo)
    assert git._head is not None
    calls = git.calls
    assert git.current_commit() == git.head() == repo.head()
    assert git.calls == calls
