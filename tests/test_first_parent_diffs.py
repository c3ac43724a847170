"""The first-parent line's diffs asked of root trees (verify/first_parent_diffs.py) say
what `git log --first-parent` says: which commits deleted a path and which changed it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_enhancement.verify import deletions, first_parent_diffs
from memory_enhancement.verify.folder_log import FolderLog
from memory_enhancement.verify.git import Git
from verify_support import STORE, GitRepo, code, git_commands


def walked(repo: GitRepo, prefix: str = "") -> Git:
    """The repository's Git with its first-parent line (and root trees) read by the run's
    folder walk, as a mention run reads them."""
    git = Git(repo.root, prefix)
    FolderLog(git, f"{prefix}/{STORE}" if prefix else STORE).commits()
    return git


def logged(repo: GitRepo, *args: str) -> list[tuple[str, str]]:
    """(commit, path) of `git log --first-parent --name-only <args>`, oldest first."""
    out = repo.git("log", "--first-parent", "--reverse", "--format=%x01%H", "-z", "--name-only",
                   "--no-renames", *args)  # fmt: skip
    found, commit = [], ""
    for field in out.split("\0"):
        field = field.lstrip("\n")
        if field.startswith("\x01"):
            commit = field[1:]
        elif field:
            found.append((commit, field))
    return found


@pytest.fixture
def history(tmp_path: Path) -> GitRepo:
    """A line with every case the log distinguishes: a root commit, an empty commit (the
    same tree twice), a file deleted on a branch and merged, a file deleted, re-created and
    deleted again, a file turned into a folder, and a file deleted twice."""
    repo = GitRepo(tmp_path / "project")
    for name in ["src/a.py", "src/twice.py", "src/side.py", "src/box", "old.md"]:
        repo.write_lines(name, code(name, 5))
    repo.write_lines(f"{STORE}/notes.md", ["# Notes"])
    repo.commit("root")
    repo.commit("empty")
    (repo.root / "src/twice.py").unlink()
    repo.commit("delete twice.py")
    repo.git("checkout", "-q", "-b", "side")
    (repo.root / "src/side.py").unlink()
    repo.write_lines("src/on_side.py", code("s", 3))
    repo.commit("delete side.py on a branch")
    repo.git("checkout", "-q", "main")
    repo.write_lines("src/a.py", code("a2", 5))
    repo.commit("edit a.py")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    repo.write_lines("src/twice.py", code("again", 5))
    (repo.root / "src/box").unlink()
    repo.write_lines("src/box/inner.py", code("inner", 2))
    repo.commit("re-create twice.py, box becomes a folder")
    repo.commit("empty again")
    (repo.root / "src/twice.py").unlink()
    (repo.root / "old.md").unlink()
    repo.commit("delete twice.py again")
    return repo


def test_the_trees_diffs_name_what_the_first_parent_log_names(history: GitRepo) -> None:
    git = walked(history)
    shas, trees = git.first_parents(), git.first_trees()
    assert trees is not None
    assert trees == [history.git("rev-parse", f"{sha}^{{tree}}").strip() for sha in shas]
    for options, paths, args in [
        (("--diff-filter=D",), (), ("--diff-filter=D",)),
        ((), (), ()),
        ((), ("src/twice.py", "src/box"), ("--", "src/twice.py", "src/box")),
    ]:
        found = first_parent_diffs.changed(git, 0, len(shas), bool(options), paths)
        assert found is not None
        assert [(shas[at], path) for at, path in found] == logged(history, *args)
    later = first_parent_diffs.changed(git, 3, len(shas), deleted=True)
    assert later is not None and all(at >= 3 for at, _ in later)
    # A pathspec git would match otherwise (a glob, a magic word): the caller asks the log.
    for spec in ("src/*.py", ":(top)src", "src/./a.py"):
        assert first_parent_diffs.changed(git, 0, len(shas), paths=[spec]) is None


def test_the_deletions_from_the_trees_are_the_logs_deleted_twice_merged_or_turned_folder(
    history: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each gone path names its last deletion (twice.py: the second), a merge when its
    branch deleted it; the dates and parents come from one `git log --no-walk`."""
    first = history.git("rev-list", "--max-parents=0", "HEAD").strip()
    asked_after = [(p, first) for p in ("src/twice.py", "src/side.py", "src/box", "old.md")]
    by_log = deletions.deletions(Git(history.root), asked_after, {"src/a.py", "nothing.py"})
    asked = git_commands(monkeypatch)
    by_trees = deletions.deletions(walked(history), asked_after, {"src/a.py", "nothing.py"})
    assert by_trees.found == by_log.found
    # The folder walk, the line's diffs, the dates of the deleting commits.
    assert [a[:2] for a in asked if a[0] == "log" or "diff-tree" in a] == [
        ("log", "--first-parent"),
        ("diff-tree", "--stdin"),
        ("log", "--no-walk=unsorted"),
    ]
    assert next(a for a in asked if a[0] == "diff-tree")[-2:] == ("--raw", "-z")
    twice = by_trees.found["src/twice.py"]
    assert [d.commit for d in twice] == [
        history.git("log", "-1", "--format=%H", f"--grep=^{m}$").strip()
        for m in ("delete twice.py again", "delete twice.py")
    ]
    assert by_trees.found["src/side.py"][0].merge
    assert (
        not twice[0].merge
        and twice[0].date == history.git("log", "-1", "--format=%cs", twice[0].commit).strip()
    )
    assert "src/box" in by_trees.found and "src/a.py" not in by_trees.found
    # From a later commit on (no path asked everywhere): the log's range, the same answer.
    start = history.git("log", "-1", "--format=%H", "--grep=edit a.py").strip()
    after = [("src/twice.py", start)]
    assert (
        deletions.deletions(walked(history), after, ()).found
        == deletions.deletions(Git(history.root), after, ()).found
    )


def test_a_repository_root_below_gits_names_paths_from_itself(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("sub/src/gone.py", code("g", 3))
    repo.write_lines("outside.py", code("o", 3))
    repo.write_lines(f"sub/{STORE}/notes.md", ["# Notes"])
    repo.commit("root")
    (repo.root / "sub/src/gone.py").unlink()
    (repo.root / "outside.py").unlink()
    deleted = repo.commit("delete")
    git = walked(repo, "sub")
    trees = git.first_trees()
    assert trees is not None
    assert first_parent_diffs.changed(git, 1, 2, deleted=True) == [(1, "src/gone.py")]
    found = deletions.deletions(git, [("src/gone.py", repo.git("rev-parse", "HEAD^").strip())], ())
    assert [d.commit for d in found.found["src/gone.py"]] == [deleted]


def test_an_answer_git_does_not_give_in_the_order_asked_is_not_read(history: GitRepo) -> None:
    """Trees not of the line (an echo that differs): None, and the caller asks the log."""
    git = walked(history)
    trees = git.first_trees()
    assert trees is not None
    bogus = ["0" * 40 if n == 2 else tree for n, tree in enumerate(trees)]
    diffs = first_parent_diffs.LineDiffs(git, git.first_parents(), bogus)
    assert not diffs.read(0, len(bogus))


def test_each_commits_raw_diff_is_the_first_parent_logs_whatever_its_paths_hold(
    history: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paths with spaces, quotes, non-ASCII letters and a newline (git quotes them unless
    `-z`; `core.quotePath` set as a user may), a merge and the root commit: each commit's
    changes are `git log --first-parent -m --raw`'s, read in pieces (a reader asking for
    older commits later gets only those read, one process each time)."""
    history.git("config", "core.quotePath", "true")
    for name in ["odd/with space.py", 'odd/"quoted".py', "odd/café.py", "odd/new\nline.py"]:
        history.write_lines(name, code("odd", 2))
    history.commit("odd names")
    (history.root / "odd/café.py").unlink()
    history.write_lines("odd/with space.py", code("changed", 2))
    history.commit("odd names changed")
    git = walked(history)
    shas = git.first_parents()
    diffs = first_parent_diffs.line_diffs(git)
    assert diffs is not None and first_parent_diffs.line_diffs(git) is diffs  # one a run
    asked = git_commands(monkeypatch)
    assert diffs.read(4, len(shas)) and diffs.read(0, 6) and diffs.read(2, len(shas))
    assert [a[0] for a in asked] == ["diff-tree", "diff-tree"]
    out = history.git(
        "log", "--first-parent", "-m", "--reverse", "--raw", "--no-renames", "--no-abbrev",
        "-z", "--format=%x01%H",
    )  # fmt: skip
    logged: dict[str, list[tuple[str, str]]] = {}
    fields = iter(out.split("\0"))
    current: list[tuple[str, str]] = []
    for field in fields:
        field = field.lstrip("\n")
        if field.startswith("\x01"):
            current = logged.setdefault(field[1:], [])
        elif field:
            current.append((field, next(fields)))
    assert {sha: diffs.at(n) for n, sha in enumerate(shas)} == logged
    assert "odd/new\nline.py" in {p for _, p in diffs.at(len(shas) - 2)}


def test_the_files_added_and_deleted_between_two_commits_are_their_diffs(
    history: GitRepo,
) -> None:
    """`between` sums the line's diffs from one commit to a newer one: what `git diff-tree
    --diff-filter=AD` of the two lists, for every pair of commits (a file deleted and
    re-created in between is neither; a file turned into a folder both)."""
    git = walked(history)
    shas = git.first_parents()
    diffs = first_parent_diffs.line_diffs(git)
    assert diffs is not None and diffs.read(0, len(shas))
    for older in range(len(shas)):
        for newer in range(older, len(shas)):
            out = history.git(
                "diff-tree", "-r", "--no-renames", "--name-status", "-z", "--diff-filter=AD",
                shas[newer], shas[older],
            )  # fmt: skip
            fields = out.split("\0")
            listed = {(fields[i], fields[i + 1]) for i in range(0, len(fields) - 1, 2)}
            gone, came = diffs.between(older, newer)
            assert {("A", p) for p in gone} | {("D", p) for p in came} == listed


def test_a_deleting_commits_renames_known_to_the_run_or_adding_nothing_are_not_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`renamed_by` asks git's `diff-tree -M` of each commit deleting a gone file. A
    commit the memory files' replay already asked about (line_origins: the same diff of a
    commit with its parent) is read from the run's answers, and one whose diff on the line
    adds no file renamed nothing: no process for either, the same renames."""
    from memory_enhancement.verify.line_origins import _Renames

    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/a.py", code("a", 5))
    repo.write_lines("src/edited.py", code("e", 8))
    repo.write_lines("src/c.py", code("c", 3))
    repo.write_lines(f"{STORE}/notes.md", ["# Notes"])
    first = repo.commit("root")
    repo.mv("src/a.py", "lib/a.py")
    repo.mv("src/edited.py", "lib/edited.py")
    repo.write_lines("lib/edited.py", [*code("e", 8), "one more line"])
    moved = repo.commit("move a.py and edited.py")
    (repo.root / "src/c.py").unlink()
    repo.commit("delete c.py, adding nothing")
    after = [(p, first) for p in ("src/a.py", "src/edited.py", "src/c.py")]
    present = {"lib/a.py", "lib/edited.py"}.__contains__
    expected = {"src/a.py": "lib/a.py", "src/edited.py": "lib/edited.py"}
    plain = Git(repo.root)
    asked = git_commands(monkeypatch)
    assert deletions.renamed_by(plain, deletions.deletions(plain, after, ()), after, present) == (
        expected
    )
    assert len([a for a in asked if "-M" in a]) == 1  # both deleting commits, one process
    git = walked(repo)
    _Renames(git, FolderLog(git, STORE)).of([moved], {})
    known = deletions.deletions(git, after, ())  # reads the line's diffs
    asked.clear()
    assert deletions.renamed_by(git, known, after, present) == expected
    assert [a for a in asked if "-M" in a] == []


def test_commits_off_the_line_are_diffed_in_the_same_process_echoed_or_not(
    history: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commits asked with the line's pairs of trees (`read_with`) get git's diff of each
    with the commit given: git echoes a commit only when its diff is not empty, after
    the pairs' echoes (the last pair's diff empty here: the line ends with an empty
    commit)."""
    history.commit("empty at the end")
    side = history.git("rev-parse", "side").strip()
    git = walked(history)
    shas = git.first_parents()
    diffs = first_parent_diffs.line_diffs(git)
    assert diffs is not None
    head, first = shas[-1], shas[0]
    asked = git_commands(monkeypatch)
    others = diffs.read_with(len(shas) - 3, len(shas), {side: head, first: first})
    assert [a[0] for a in asked] == ["diff-tree"]
    raw = history.git("diff-tree", "-r", "--no-renames", "--raw", "-z", head, side).split("\0")
    assert others == {side: list(zip(raw[0:-1:2], raw[1::2], strict=True))}
    assert diffs.at(len(shas) - 1) == [] and diffs.read(len(shas) - 3, len(shas))


def test_the_deletions_a_rename_is_followed_by_are_the_full_history_logs_on_a_line(
    history: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mention_renames._moved_on` asks `git log --full-history --diff-filter=D` which
    commits deleted a path since a commit (0.12 s of git on rjmurillo/ai-agents); after the
    line's last merge every commit since is on the line, and a path nothing under which
    changed is told by the line's own diffs: the same commits, no log. A path turned into
    a folder, a commit before a merge, or a glob is left to the log. Names with a space,
    quotes and `é` under `core.quotePath=true`, deleted, re-created and deleted again."""
    from memory_enhancement.verify.mention_renames import _deleted_on_line

    history.git("config", "core.quotePath", "true")
    odd = ["odd/with space.py", 'odd/"quoted".py', "odd/café.py"]
    for round_ in range(2):
        for name in odd:
            history.write_lines(name, code(f"{name}{round_}", 2))
        history.commit("odd names")
        for name in odd:
            (history.root / name).unlink()
        history.commit("odd names deleted")
    git = walked(history)
    shas = git.first_parents()
    asked = git_commands(monkeypatch)
    told = 0
    for path in ["src/twice.py", "old.md", "src/box", "src/a.py", "src/*.py", *odd]:
        for since in shas[:-1]:
            got = _deleted_on_line(git, path, [f"^{since}"])
            if got is None:
                continue
            told += 1
            logs = history.git(
                "log", "--full-history", "--format=%H", "--diff-filter=D", "--reverse",
                "HEAD", f"^{since}", "--", path,
            ).split()  # fmt: skip
            assert got == logs, (path, since)
    assert _deleted_on_line(git, "src/twice.py", [f"^{shas[3]}"]) is None  # the merge after
    assert _deleted_on_line(git, "src/box", [f"^{shas[4]}"]) is None  # a folder since
    assert _deleted_on_line(git, "src/*.py", [f"^{shas[6]}"]) is None  # a glob: git's to say
    assert _deleted_on_line(git, "odd/café.py", [f"^{shas[6]}"]) == [shas[9], shas[11]]
    assert told >= 40
    assert [a[0] for a in asked] == ["diff-tree"]  # the line's diffs, read once; no log
    from memory_enhancement.verify.mention_renames import named_now

    assert named_now(git, "odd/café.py", shas[6], lambda path: False) is None
    assert [a[0] for a in asked] == ["diff-tree", "diff"]  # the deleting commit's renames
