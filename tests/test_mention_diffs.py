"""History learned for many mentions at once gives what git answers one question at a time.

A first run over a store asks git about dozens of commits; `MentionGit` learns
the line maps from all of them in a few `git diff-tree` processes, and
`GitHistory.prefetch_trees` learns the file lists of past commits from chained
diffs. Both must answer exactly as `git diff <commit>` and `git ls-tree <commit>`
do, including for a file changed in the work tree, a file that did not change,
names that need quoting, and files added and deleted along the way.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memory_enhancement.verify.blame import GitHistory
from memory_enhancement.verify.folder_log import FolderLog
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.mention_maps import MentionGit
from memory_enhancement.verify.repo import Repository
from verify_support import STORE, GitRepo, git_commands, git_of
from verify_support import git_of as git_of_plain


def numbered(count: int, tag: str = "line") -> list[str]:
    return [f"{tag} {n}" for n in range(1, count + 1)]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


@pytest.fixture(autouse=True, params=["asked", "walked"])
def line_read(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test twice: with the Git of a run that has not walked the first-parent line
    (the lists and ids asked of git's chained diffs), and with one whose folder walk
    printed the line's root trees, as a mention run's does (the same answers read from
    each commit's own diff, first_parent_diffs.LineDiffs)."""
    if request.param == "walked":
        monkeypatch.setattr(sys.modules[__name__], "git_of", walked_git)
    return str(request.param)


def walked_git(repo: GitRepo) -> Git:
    """The repository's Git with its first-parent line and root trees read by a folder
    walk (folder_log.py), as a mention run's."""
    git = git_of_plain(repo)
    FolderLog(git, STORE).commits()
    assert git.first_trees() is not None
    return git


def test_line_maps_learned_together_are_git_diffs_own(repo: GitRepo) -> None:
    repo.write_lines("src/a.py", numbered(10))
    repo.write_lines("src/b.py", numbered(6, "b"))
    repo.write_lines("docs/my notes é.txt", numbered(4, "n"))
    repo.write_lines("same.py", numbered(3, "s"))
    first = repo.commit("first")
    repo.write_lines("src/a.py", ["top", *numbered(10)])
    repo.write_lines("src/b.py", [*numbered(3, "b"), "changed", *numbered(6, "b")[4:]])
    second = repo.commit("second")
    repo.write_lines("src/a.py", ["top", *numbered(5), "middle", *numbered(10)[5:]])
    repo.write_lines("docs/my notes é.txt", numbered(3, "n"))
    repo.commit("third")
    repo.write_lines("src/b.py", ["uncommitted", *numbered(6, "b")])  # changed since HEAD
    wanted = {
        first: {"src/a.py", "src/b.py", "docs/my notes é.txt", "same.py"},
        second: {"src/a.py", "src/b.py"},
    }
    plain = git_of(repo)
    expected = {c: plain.line_maps(c, paths) for c, paths in wanted.items()}
    assert expected[first]["src/a.py"].hunks  # something to learn
    history = GitHistory(plain)
    try:
        together = MentionGit(plain, {}, None, history, Repository(repo.root))
        together.will_ask(wanted)
        learned = together.calls
        assert learned <= 2  # one diff-tree, not one git diff per commit
        got = {c: together.line_maps(c, paths) for c, paths in wanted.items()}
    finally:
        history.close()
    assert got == expected
    # Only the file changed since HEAD was asked again, costing what git alone costs.
    alone = git_of(repo)
    before = alone.calls
    for commit in wanted:
        alone.line_maps(commit, {"src/b.py"})
    assert together.calls - learned == alone.calls - before > 0


def test_file_lists_of_past_commits_from_chained_diffs(repo: GitRepo) -> None:
    commits = []
    for n in range(5):
        repo.write_lines(f"pkg/keep{n}.py", ["x"])
        if n:
            (repo.root / f"pkg/keep{n - 1}.py").unlink()  # deleted again
        repo.write_lines(f"other/app{n % 2}.py", [str(n)])
        commits.append(repo.commit(f"commit {n}"))
    repo.write_lines("pkg/later.py", ["y"])
    commits.append(repo.commit("last"))
    git = git_of(repo)
    learned, listed = GitHistory(git), GitHistory(Git(git.toplevel))
    try:
        learned.prefetch_trees(commits[:-1])
        names = [f"pkg/keep{n}.py" for n in range(5)] + ["pkg/later.py", "other/app0.py"]
        for commit in commits[:-1]:
            ours, theirs = learned.files_at(commit), listed.files_at(commit)
            assert [p in ours.files for p in names] == [p in theirs.files for p in names]
            assert ours.resolve("app0.py") == theirs.resolve("app0.py")
        partial = GitHistory(git)
        partial.prefetch_trees(commits[:2], names=["keep0.py"])
        assert partial.files_at(commits[0], "keep0.py").resolve("keep0.py").path == "pkg/keep0.py"
        calls = partial.git.calls
        assert partial.files_at(commits[0], "app0.py").resolve("app0.py").path == "other/app0.py"
        assert partial.git.calls == calls + 1  # a name it did not learn: the whole tree read
    finally:
        learned.close()
        listed.close()


def test_file_lists_of_past_commits_leave_out_what_is_only_staged(repo: GitRepo) -> None:
    """The lists are made from git's index and the diffs since HEAD: a staged `git mv`,
    add or delete (a pre-commit hook's view, a merge in progress) was taken as there at
    every past commit (found on 2sem/talktrans: a bare name resolved at an old commit to
    the path its file was being moved to)."""
    repo.write_lines("src/app.py", ["a"])
    repo.write_lines("src/gone.py", ["g"])
    first = repo.commit("first")
    repo.write_lines("src/other.py", ["o"])
    second = repo.commit("second")
    repo.mv("src/app.py", "lib/app.py")
    repo.write_lines("src/new.py", ["n"])
    repo.git("add", "src/new.py")
    repo.git("rm", "-q", "src/gone.py")
    git = git_of(repo)
    learned, listed = GitHistory(git), GitHistory(Git(git.toplevel))
    try:
        learned.prefetch_trees([first, second])
        names = ["src/app.py", "lib/app.py", "src/new.py", "src/gone.py", "src/other.py"]
        for commit in (first, second):
            ours, theirs = learned.files_at(commit), listed.files_at(commit)
            assert [p in ours.files for p in names] == [p in theirs.files for p in names]
            assert ours.resolve("app.py") == theirs.resolve("app.py")
    finally:
        learned.close()
        listed.close()


def test_a_walked_line_gives_the_lists_and_the_ids_from_one_diff_of_its_commits(
    repo: GitRepo, line_read: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the line's root trees known, the file lists of past commits and the gone
    files' ids come from one `git diff-tree --raw` of each commit with its first parent,
    read once for both (the chained diffs of each cost git as much again on a first run:
    0.39 s on rjmurillo/ai-agents)."""
    from memory_enhancement.verify.exact_renames import exact_renames

    repo.write_lines("src/moved.py", numbered(5, "moved"))
    repo.write_lines("src/kept.py", numbered(3, "kept"))
    first = repo.commit("first")
    repo.mv("src/moved.py", "pkg/moved.py")
    second = repo.commit("moved")
    repo.write_lines("src/new.py", numbered(2, "new"))
    repo.commit("later")
    git = git_of(repo)
    asked = git_commands(monkeypatch)
    history = GitHistory(git)
    try:
        history.prefetch_trees([first, second])
        found = exact_renames(git, history, {first: {"src/moved.py"}})
    finally:
        history.close()
    assert found == {first: [("src/moved.py", "pkg/moved.py")]}
    diffs = [a for a in asked if "diff-tree" in a]
    if line_read == "walked":
        assert diffs == [("diff-tree", "--stdin", "-r", "--no-renames", "--raw", "-z")]
    else:
        assert len(diffs) == 2  # the lists' chained diff, the ids' (limited to their paths)


def test_file_lists_of_commits_on_and_off_the_first_parent_line_from_one_process(
    repo: GitRepo, line_read: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit of a merged branch (off HEAD's first-parent line) is diffed with HEAD, the
    line's commits chained: one `git diff-tree` for both, whether the chain comes from
    the line's own diffs or from git's chained diffs; the lists are `git ls-tree`'s."""
    repo.write_lines("src/a.py", ["a"])
    repo.write_lines("src/b c.py", ["b"])
    main = repo.commit("first")
    repo.git("checkout", "-q", "-b", "side")
    repo.write_lines("src/side é.py", ["s"])
    (repo.root / "src/a.py").unlink()
    side = repo.commit("on the branch")
    repo.git("checkout", "-q", "-")
    repo.write_lines("other.txt", ["x"])
    online = repo.commit("on the main line")
    repo.time += 3600
    repo.git("merge", "-q", "--no-ff", "-m", "merge", "side")
    repo.write_lines("src/late.py", ["l"])
    repo.commit("last")
    git = git_of(repo)
    asked = git_commands(monkeypatch)
    learned, listed = GitHistory(git), GitHistory(Git(git.toplevel))
    try:
        learned.prefetch_trees([main, side, online])
        assert len([a for a in asked if a[0] == "diff-tree"]) == 1
        names = ["src/a.py", "src/b c.py", "src/side é.py", "other.txt", "src/late.py"]
        for commit in (main, side, online):
            ours, theirs = learned.files_at(commit), listed.files_at(commit)
            assert [p in ours.files for p in names] == [p in theirs.files for p in names]
        assert "src/side é.py" in learned.files_at(side).files
        assert "src/a.py" not in learned.files_at(side).files
    finally:
        learned.close()
        listed.close()


def renames_of(repo: GitRepo, gone: dict[str, set[str]]) -> dict[str, list[tuple[str, str]]]:
    """`exact_renames` of these gone files (per commit), through a history opened and
    closed here."""
    from memory_enhancement.verify.exact_renames import exact_renames

    git = git_of(repo)
    history = GitHistory(git)
    try:
        return exact_renames(git, history, gone)
    finally:
        history.close()


def test_exact_renames_of_gone_files_are_git_diffs_own(repo: GitRepo) -> None:
    """Renames found by object id (the diff limited to the gone files and the files now
    holding their content) are those `git diff -M100%` finds between each commit and
    HEAD, for every gone file: moved unchanged, moved and edited (not exact), deleted
    while a copy that was already there stays (not a rename), and a gone file that was
    renamed unchanged since another commit than its own."""
    repo.write_lines("src/moved.py", numbered(5, "moved"))
    repo.write_lines("src/edited.py", numbered(5, "edited"))
    repo.write_lines("src/copied.py", numbered(5, "copied"))
    repo.write_lines("keep/copy.py", numbered(5, "copied"))
    first = repo.commit("first")
    repo.write_lines("src/late.py", numbered(4, "late"))
    second = repo.commit("second")
    for name in ("moved", "edited", "copied", "late"):
        (repo.root / f"src/{name}.py").unlink()
    repo.write_lines("pkg/moved.py", numbered(5, "moved"))
    repo.write_lines("pkg/edited.py", [*numbered(5, "edited"), "more"])
    repo.write_lines("pkg/late_renamed.py", numbered(4, "late"))
    repo.commit("reorganise")
    gone = {
        first: {"src/moved.py", "src/edited.py", "src/copied.py"},
        second: {"src/late.py"},
    }
    found = renames_of(repo, gone)
    olds = set().union(*gone.values())
    for commit in gone:
        out = repo.git("diff", "-M100%", "--name-status", "-z", "--diff-filter=R", commit, "HEAD")
        fields = out.split("\0")
        expected = {
            (fields[i + 1], fields[i + 2])
            for i in range(len(fields) - 2)
            if fields[i].startswith("R") and fields[i + 1] in olds
        }
        assert set(found[commit]) == expected
    assert set(found[first]) == {("src/moved.py", "pkg/moved.py")}
    assert set(found[second]) == {
        ("src/moved.py", "pkg/moved.py"),
        ("src/late.py", "pkg/late_renamed.py"),
    }


def test_renames_read_from_git_are_the_pairs_git_wrote_whatever_their_paths_begin_with(
    repo: GitRepo,
) -> None:
    """`--name-status -z` fields were scanned one at a time for a status starting with R,
    so a renamed `README.md` read as a status too and made a rename of its new path into
    `R100`; the entries are now stepped through as git writes them (verify/git.name_status,
    which the staged renames and the Verifier's renames read too)."""
    from memory_enhancement.verify.mention_renames import RENAMES, renames

    repo.write_lines("README.md", numbered(6, "readme"))
    repo.write_lines("x.py", numbered(6, "x"))
    first = repo.commit("first")
    repo.mv("README.md", "archive/README.md")  # listed first, before x.py's rename
    repo.mv("x.py", "y.py")
    repo.commit("moved")
    found = renames(git_of(repo), ["-M", *RENAMES, first, "HEAD"])
    assert sorted(found) == [("README.md", "archive/README.md"), ("x.py", "y.py")]


def _git_exact(repo: GitRepo, commit: str, paths: list[str]) -> set[tuple[str, str]]:
    """What `git diff -M100%` between a commit and HEAD, limited to these paths, pairs."""
    out = repo.git(
        "diff", "-M100%", "--name-status", "-z", "--diff-filter=R", commit, "HEAD", "--", *paths
    )
    fields = out.split("\0")
    return {(fields[i + 1], fields[i + 2]) for i in range(len(fields) - 2) if fields[i][:1] == "R"}


def test_exact_renames_pair_copies_and_same_named_files_as_git_does(repo: GitRepo) -> None:
    """The pairs are made from the paths' ids at each commit (one chained diff), not asked
    of git per commit: a file archived to two folders at once (git gives it to the first
    in its order), two gone files of one content (the one of the same name first), and a
    commit whose diff finds nothing all pair as git's own diff limited to the paths does."""
    repo.write_lines("sessions/log.md", numbered(4, "log"))
    repo.write_lines("a/twin.py", numbered(3, "twin"))
    repo.write_lines("b/other.py", numbered(3, "twin"))
    (repo.root / "a" / "__init__.py").write_text("")  # empty files pair too
    first = repo.commit("first")
    repo.write_lines("unrelated.txt", ["x"])
    quiet = repo.commit("nothing of theirs changes")
    for path in ("sessions/log.md", "a/twin.py", "b/other.py", "a/__init__.py"):
        (repo.root / path).unlink()
    (repo.root / "pkg").mkdir()
    (repo.root / "pkg" / "__init__.py").write_text("")
    repo.write_lines("archive/sessions/log.md", numbered(4, "log"))
    repo.write_lines("archive/session/log.md", numbered(4, "log"))
    repo.write_lines("pkg/twin.py", numbered(3, "twin"))
    repo.commit("archive")
    gone = {
        c: {"sessions/log.md", "a/twin.py", "b/other.py", "a/__init__.py"} for c in (first, quiet)
    }
    found = renames_of(repo, gone)
    paths = sorted(
        {"sessions/log.md", "a/twin.py", "b/other.py", "a/__init__.py"}
        | {"archive/sessions/log.md", "archive/session/log.md", "pkg/twin.py", "pkg/__init__.py"}
    )
    for commit in (first, quiet):
        assert set(found[commit]) == _git_exact(repo, commit, paths)
    assert set(found[first]) == {
        ("sessions/log.md", "archive/session/log.md"),
        ("a/twin.py", "pkg/twin.py"),
        ("a/__init__.py", "pkg/__init__.py"),
    }


def test_exact_renames_ask_git_when_a_path_was_once_a_folder(repo: GitRepo) -> None:
    """A path given to git stands for everything under it: where a gone file's path was a
    folder at some commit, git's own diff is asked, and each commit gets its own answer
    (git echoes a pair of trees whose diff is empty too; the pair after it was read as
    part of it, and its renames given to the commit before)."""
    repo.write_lines("docs/x.md/inner.txt", ["inside a folder named like a file"])
    repo.write_lines("src/keep.py", numbered(3, "keep"))
    folder = repo.commit("a folder named x.md")
    (repo.root / "docs/x.md/inner.txt").unlink()
    (repo.root / "docs/x.md").rmdir()
    repo.write_lines("docs/x.md", numbered(3, "x"))
    repo.write_lines("src/mod.py", numbered(3, "mod"))
    filed = repo.commit("x.md a file")
    for path in ("docs/x.md", "src/mod.py"):
        (repo.root / path).unlink()
    repo.write_lines("guide/x.md", numbered(3, "x"))
    repo.write_lines("lib/mod.py", numbered(3, "mod"))
    repo.commit("moved")
    gone = {folder: {"src/mod.py"}, filed: {"docs/x.md", "src/mod.py"}}
    found = renames_of(repo, gone)
    paths = ["docs/x.md", "guide/x.md", "lib/mod.py", "src/mod.py"]
    for commit in (folder, filed):
        assert set(found[commit]) == _git_exact(repo, commit, paths)
    assert set(found[filed]) == {("docs/x.md", "guide/x.md"), ("src/mod.py", "lib/mod.py")}
    assert found[folder] == []
    # The pair whose diff is empty asked first, so that the next one's echo follows it.
    from memory_enhancement.verify.exact_renames import _diffed

    trees = {c: repo.git("rev-parse", f"{c}^{{tree}}").strip() for c in (folder, filed, "HEAD")}
    asked = {f"{trees[c]} {trees['HEAD']}": c for c in (folder, filed)}
    assert _diffed(git_of(repo), paths, asked) == {folder: [], filed: found[filed]}


def test_exact_renames_of_a_commit_off_the_first_parent_line_are_git_diffs_own(
    repo: GitRepo,
) -> None:
    """A mention written on a branch merged since has its commit off HEAD's first-parent
    line, where the chained diff does not reach: git's own diff answers for it, and the
    commits on the line are still paired from the chain."""
    from memory_enhancement.verify.exact_renames import exact_renames

    repo.write_lines("src/a.py", numbered(4, "a"))
    repo.write_lines("src/b.py", numbered(4, "b"))
    main = repo.commit("first")
    repo.git("checkout", "-q", "-b", "side")
    repo.write_lines("src/side.py", numbered(4, "side"))
    side = repo.commit("on the branch")
    repo.git("checkout", "-q", "-")
    repo.write_lines("other.txt", ["x"])
    repo.commit("on the main line")
    repo.time += 3600
    repo.git("merge", "-q", "--no-ff", "-m", "merge", "side")
    for name in ("a", "b", "side"):
        repo.mv(f"src/{name}.py", f"lib/{name}.py")
    repo.commit("moved")
    gone = {main: {"src/a.py", "src/b.py"}, side: {"src/side.py", "src/a.py"}}
    git = git_of(repo)
    history = GitHistory(git)
    try:
        assert side not in git.first_parents()
        found = exact_renames(git, history, gone)
    finally:
        history.close()
    paths = ["lib/a.py", "lib/b.py", "lib/side.py", "src/a.py", "src/b.py", "src/side.py"]
    for commit in (main, side):
        assert set(found[commit]) == _git_exact(repo, commit, paths)
    assert ("src/side.py", "lib/side.py") in found[side]
    assert set(found[main]) == {("src/a.py", "lib/a.py"), ("src/b.py", "lib/b.py")}


def _git_renames(repo: GitRepo, commit: str, paths: list[str]) -> set[tuple[str, str]]:
    """What `git diff -M <commit> HEAD -- <paths>` pairs (mention_diffs.mention_git's diff)."""
    out = repo.git(
        "diff", "-M", "--name-status", "-z", "--diff-filter=R", commit, "HEAD", "--", *paths
    )
    fields = out.split("\0")
    return {(fields[i + 1], fields[i + 2]) for i in range(len(fields) - 2) if fields[i][:1] == "R"}


def test_a_diff_said_to_pair_nothing_is_one_where_git_pairs_nothing(repo: GitRepo) -> None:
    """`cannot_pair` spares `git diff -M <commit> HEAD` of a gone file and the files named
    like it only where git pairs nothing: no file added since among them, or only files
    more than twice or less than half a gone file's size (never 50% alike). An exact
    rename, an edited one, a folder at the commit where HEAD has a file, a symlink made a
    file, a glob character, and names with spaces, quotes and `é` under
    `core.quotePath=true` are each compared with git's own answer."""
    from memory_enhancement.verify.mention_diffs import cannot_pair

    repo.git("config", "core.quotePath", "true")
    body = numbered(40, "body")
    names = ["src/app.py", "src/edit.py", "src/big.py", "src/tiny.py", 'src/"q" é.py']
    names.append("src/gl[a].py")
    for name in names:
        repo.write_lines(name, body if name != "src/edit.py" else numbered(40, "edit"))
    repo.write_lines("keep/app_notes.py", numbered(3, "kept"))  # there then and now
    repo.write_lines("was/dir/x.py", numbered(3, "x"))
    (repo.root / "link.py").symlink_to("src/app.py")
    then = repo.commit("then")
    for name in names:
        (repo.root / name).unlink()
    (repo.root / "link.py").unlink()
    repo.write_lines("link.py", body)  # a symlink made a file
    repo.write_lines("pkg/app.py", body)  # exact
    repo.write_lines("pkg/edit_v2.py", [*numbered(40, "edit")[:30], *numbered(10, "new")])
    repo.write_lines("pkg/big_more.py", body * 3)  # three times the size
    repo.write_lines("pkg/tiny_x.py", body[:15])  # under half the size
    repo.write_lines('pkg/"q" é_2.py', body[:10])
    repo.write_lines("pkg/gl[a]b.py", body)
    (repo.root / "was/dir/x.py").unlink()
    (repo.root / "was/dir").rmdir()
    repo.write_lines("was/dir", ["now a file"])
    repo.commit("now")
    cases = {
        ("src/app.py", "keep/app_notes.py"): True,  # nothing added among them
        ("src/app.py", "pkg/app.py"): False,  # an exact rename
        ("src/edit.py", "pkg/edit_v2.py"): False,  # a rename with edits
        ("src/big.py", "pkg/big_more.py"): True,
        ("src/tiny.py", "pkg/tiny_x.py"): True,
        ('src/"q" é.py', 'pkg/"q" é_2.py'): True,
        ("src/gl[a].py", "pkg/gl[a]b.py"): False,  # a pattern to git: asked
        ("was/dir", "src/app.py"): False,  # a folder then, a file now
        ("link.py", "src/app.py"): False,  # a type change
    }
    git = git_of(repo)
    history = GitHistory(git)
    try:
        for (gone, offered), expected in cases.items():
            said = cannot_pair(history, git, then, [gone], [offered])
            assert said == expected, (gone, offered)
            if said:
                assert _git_renames(repo, then, [gone, offered]) == set()
        assert _git_renames(repo, then, ["src/app.py", "pkg/app.py"])
        assert _git_renames(repo, then, ["src/edit.py", "pkg/edit_v2.py"])
    finally:
        history.close()
