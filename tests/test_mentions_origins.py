"""A first run asks git less and gets the same answers: real git in temporary folders.

The commit that last changed each memory line comes from one walk of the memory
folder; a file created once and unchanged since takes no diff, nor does an old name
renamed unchanged; objects of past commits are read in batches from one `git
cat-file`; git's output is read from a temporary file. Each shortcut is checked
against the long way (`line_origins` without object ids, `git blame`, `git ls-tree`,
one object at a time), never against timings.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

from memory_enhancement.verify.blame import GitHistory
from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import GitObjects, blob_hash, run_git
from memory_enhancement.verify.line_origins import line_origins
from memory_enhancement.verify.mention_maps import _batches
from verify_support import STORE, GitRepo, git_commands, git_of


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "project")


def on_disk(repo: GitRepo, names: list[str]) -> tuple[dict[str, int], dict[str, str]]:
    """What the mention reader gives line_origins: line counts and object ids on disk."""
    counts, blobs = {}, {}
    for name in names:
        data = (repo.root / name).read_bytes()
        counts[name] = data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
        blobs[name] = blob_hash(data)
    return counts, blobs


def blamed(repo: GitRepo, name: str, count: int) -> list[str | None]:
    history = GitHistory(git_of(repo))
    found = history.blame(name, range(1, count + 1))
    assert found is not None
    return [found[n] for n in range(1, count + 1)]


def test_files_created_once_and_renames_unchanged_need_no_diff_and_agree_with_blame(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory written once, then moved twice unchanged (as stores are reorganized into
    folders), takes its lines' commit from the walk alone; one edited since, one edited
    in the work tree and one renamed with edits take the diffs. Every answer is the
    long way's (no object ids given) and blame's."""
    repo.write_lines("src/app.py", ["x = 1"])
    repo.write_lines(f"{STORE}/once.md", ["# Once", "", "src/app.py:1"])
    repo.write_lines(f"{STORE}/chain.md", ["# Chain", "", "written first"])
    repo.write_lines(f"{STORE}/edited.md", ["# Edited", "", "first"])
    repo.write_lines(f"{STORE}/dirty.md", ["# Dirty", "", "committed"])
    repo.write_lines(f"{STORE}/reworded.md", ["# Reworded", "", "a", "b", "c", "d"])
    repo.commit("memories")
    repo.write_lines(f"{STORE}/edited.md", ["# Edited", "", "first", "second"])
    repo.commit("edit")
    repo.mv(f"{STORE}/chain.md", f"{STORE}/middle.md")
    repo.commit("rename once")
    repo.mv(f"{STORE}/middle.md", f"{STORE}/topic/chain.md")
    repo.mv(f"{STORE}/reworded.md", f"{STORE}/topic/reworded.md")
    repo.write_lines(f"{STORE}/topic/reworded.md", ["# Reworded", "", "a", "b", "c", "d", "e"])
    repo.commit("rename again, one with an edit")
    repo.write_lines(f"{STORE}/dirty.md", ["# Dirty", "", "committed", "not yet"])
    names = [
        f"{STORE}/once.md",
        f"{STORE}/topic/chain.md",
        f"{STORE}/edited.md",
        f"{STORE}/dirty.md",
        f"{STORE}/topic/reworded.md",
    ]
    counts, blobs = on_disk(repo, names)
    long_way = line_origins(git_of(repo), counts)
    asked = git_commands(monkeypatch)
    short_way = line_origins(git_of(repo), counts, blobs)
    assert short_way == long_way
    for name in names:
        assert short_way[name] == blamed(repo, name, counts[name])
    assert short_way[f"{STORE}/dirty.md"][-1] is None  # not committed yet
    patched = [args for args in asked if "-p" in args]  # the memory files' diffs
    assert patched and all(f"{STORE}/once.md" not in args for args in patched)
    assert all(f"{STORE}/topic/chain.md" not in args for args in patched)
    assert all(f"{STORE}/middle.md" not in args for args in patched)  # the old names too
    renames = [args for args in asked if "-M" in args and "diff-tree" in args]
    assert len(renames) == 1  # the renames of every level asked at once, the walk telling which
    pending = [args for args in asked if "diff" in args and "HEAD" in args]
    assert [a[a.index("--") + 1 :] for a in pending] == [(f"{STORE}/dirty.md",)]


def test_a_file_unchanged_since_it_was_created_is_still_diffed_if_a_merge_created_it(
    repo: GitRepo,
) -> None:
    """Lines a merge brought in came from a branch: the replay leaves such a file to
    blame, with or without the shortcut."""
    repo.write_lines("README.md", ["x"])
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "side")
    repo.write_lines(f"{STORE}/merged.md", ["# Merged", "", "from the branch"])
    repo.commit("on the branch")
    repo.git("checkout", "-q", "main")
    repo.write_lines("other.txt", ["y"])
    repo.commit("main moves on")
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    name = f"{STORE}/merged.md"
    counts, blobs = on_disk(repo, [name])
    assert line_origins(git_of(repo), counts, blobs) == {} == line_origins(git_of(repo), counts)


def test_files_blamed_together_get_the_answers_each_gets_alone(repo: GitRepo) -> None:
    """Memories merged from branches are blamed one git process each, several at once
    (GitHistory.blame_all): the answers, their order and the count of git processes are
    those of blaming them one at a time."""
    repo.write_lines("README.md", ["x"])
    repo.commit("base")
    names = [f"{STORE}/merged{n}.md" for n in range(5)]
    for n, name in enumerate(names):
        repo.git("checkout", "-q", "-b", f"side{n}", "main")
        repo.write_lines(name, [f"# Merged {n}", "", f"line {n}", "src/app.py:1"])
        repo.commit(f"on branch {n}")
        repo.git("checkout", "-q", "main")
        repo.write_lines("other.txt", [f"y{n}"])
        repo.commit(f"main moves on {n}")
        repo.git("merge", "-q", "--no-ff", "--no-edit", f"side{n}")
    repo.write_lines(names[2], ["# Merged 2", "", "edited, not committed", "src/app.py:1"])
    jobs: list[tuple[str, range, str | None]] = [(n, range(1, 5), None) for n in names]
    jobs.append((f"{STORE}/untracked.md", range(1, 2), None))
    (repo.root / STORE / "untracked.md").write_text("# New\n")
    together = GitHistory(git_of(repo))
    answers = together.blame_all(jobs)
    alone = GitHistory(git_of(repo))
    assert answers == [alone.blame(*job) for job in jobs]
    assert together.git.calls == alone.git.calls == len(jobs)
    assert answers[0] is not None and answers[0][3] is not None  # the branch commit
    assert answers[2] is not None and answers[2][3] is None  # not committed yet
    assert answers[-1] is None  # git cannot blame an untracked file


def test_objects_fetched_together_are_those_asked_one_at_a_time(repo: GitRepo) -> None:
    repo.write_lines("src/a.py", ["a = 1"])
    repo.write_lines("docs/my notes é.txt", ["n"])
    repo.write_lines("tool.sh", ["#!/bin/sh"])
    (repo.root / "tool.sh").chmod(0o755)
    (repo.root / "link").symlink_to("src/a.py")
    first = repo.commit("first")
    repo.write_lines("src/a.py", ["a = 2", "b = 3"])
    repo.commit("second")
    specs = [
        f"{first}:src/a.py",
        "HEAD:src/a.py",
        f"{first}:docs/my notes é.txt",
        f"{first}:missing.py",
        "HEAD:",
        f"{first}:src",
        "HEAD:no such folder",
    ]
    git = git_of(repo)
    with GitObjects(git) as together, GitObjects(Git(git.toplevel)) as alone:
        together.fetch(specs)
        fetched = together.git.calls
        assert fetched == 1  # one cat-file for all of them
        for spec in specs:
            commit, _, path = spec.partition(":")
            assert together.read(commit, path) == alone.read(commit, path)
            assert together.object_id(commit, path) == alone.object_id(commit, path)
            ours, theirs = together.tree(spec), alone.tree(spec)
            assert (ours and ours.oid) == (theirs and theirs.oid)
        assert together.git.calls == fetched  # every read answered from what was fetched
    listed = {
        line.split("\t")[1]: tuple(line.split("\t")[0].split(" ")[::2])
        for line in repo.git("ls-tree", "HEAD").splitlines()
    }
    with GitObjects(git) as objects:
        root = objects.tree("HEAD:")
        assert root is not None
        for name, (mode, oid) in listed.items():
            assert root.get(name) == (mode, oid)
        assert root.get("nothing") is None


def test_git_output_is_read_through_a_file_or_else_a_pipe(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write_lines("a.txt", ["a"])
    repo.commit("first")
    git = git_of(repo)
    through_file = run_git(git, "ls-files", "-z")
    with pytest.raises(GitError, match="no-such-object"):  # git's own message
        run_git(git, "cat-file", "-t", "no-such-object")

    def no_file(*args: Any, **kwargs: Any) -> Any:
        raise OSError("no temporary folder")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_file)
    assert run_git(git, "ls-files", "-z") == through_file == "a.txt\0"
    assert run_git(git, "cat-file", "--batch", stdin="HEAD:a.txt\n").endswith("a\n\n")


def test_line_maps_are_batched_so_that_no_process_diffs_a_file_nobody_asked_for() -> None:
    """One folder cited at four commits, a different file at each, each file changed
    since every commit: four processes, none diffing a file its pairs did not ask for;
    past the limit the fewest such diffs."""
    pairs = {f"t{n} head": [(f"c{n}", f"src/f{n}.py", f"f{n}.py")] for n in range(4)}
    changed = {line: {f"f{n}.py" for n in range(4)} for line in pairs}
    batches = _batches(pairs, changed)
    assert len(batches) == 4
    for batch in batches:
        asked = {name for wanted in batch.values() for *_, name in wanted}
        assert all(not (changed[line] - asked) & asked for line in batch)
    assert len(_batches(pairs, changed, most=2)) == 2
    unchanged = {line: {name for *_, name in pairs[line]} for line in pairs}
    assert len(_batches(pairs, unchanged)) == 1  # nothing else changed: one process


def test_cited_lines_are_those_of_the_whole_file_read(repo: GitRepo) -> None:
    """`cited` reads only the lines asked, as `read` reads the whole file: CRLF, invalid
    UTF-8 and a truncated sequence before a newline, no final newline, an empty file,
    lines past the end, a binary file."""
    repo.write("crlf.txt", b"one\r\ntwo\r\nthree\r\n")
    repo.write("bad.txt", b"ok\n\xe2\x82\nmid \xff end\nlast")
    repo.write("empty.txt", b"")
    repo.write("binary.bin", b"a\0b\n")
    commit = repo.commit("files")
    with GitObjects(git_of(repo)) as objects:
        for name in ("crlf.txt", "bad.txt", "empty.txt"):
            lines = objects.read(commit, name)
            assert lines is not None
            for start in range(1, len(lines) + 2):
                for end in range(start, len(lines) + 3):
                    expected = "\n".join(lines[start - 1 : end]) if end <= len(lines) else None
                    assert objects.cited(commit, name, start, end) == (len(lines), expected)
        assert objects.read(commit, "binary.bin") is None
        assert objects.cited(commit, "binary.bin", 1, 1) is None
        assert objects.cited(commit, "missing.txt", 1, 1) is None


def test_line_maps_read_by_pattern_are_those_git_diff_gives(repo: GitRepo) -> None:
    """The hunks of the folders' diffs are read by one pattern, not line by line: removed
    lines that look like headers (`-- x`, `--- y`, `+++ z`), CRLF lines, a last line
    without a newline, a file turned binary (no map) read as `Git.line_maps` reads them."""
    from memory_enhancement.verify.mention_maps import MentionGit
    from memory_enhancement.verify.repo import Repository

    repo.write("src/sql.txt", b"-- a comment\n--- dashes\n+++ pluses\nkeep\nlast")
    repo.write("src/crlf.txt", b"one\r\ntwo\r\nthree\r\n")
    repo.write("src/turns.bin", b"text\n")
    first = repo.commit("first")
    repo.write("src/sql.txt", b"new top\n--- dashes\nkeep\nlast, changed")
    repo.write("src/crlf.txt", b"one\r\n2\r\nthree\r\nfour\r\n")
    repo.write("src/turns.bin", b"bin\0ary\n")
    repo.commit("second")
    paths = {"src/sql.txt", "src/crlf.txt", "src/turns.bin"}
    plain = git_of(repo)
    expected = plain.line_maps(first, paths)
    with GitHistory(plain) as history:
        learned = MentionGit(plain, {}, None, history, Repository(repo.root))
        learned.will_ask({first: paths})
        assert learned.line_maps(first, paths) == expected
    assert expected["src/sql.txt"].removed  # header-like removed lines were read


def test_a_commit_that_only_changes_line_endings_or_spaces_writes_no_memory_line(
    repo: GitRepo,
) -> None:
    """A memory file converted to CRLF (an editor on Windows, a `.gitattributes`), or
    stripped of trailing spaces, says what it said: each line keeps the commit that wrote
    it, in the replay and in blame, and a mention is judged from the code of that commit.
    fizic37/Delcampe's memories went CRLF a week after they were written; judged from that
    commit, `--fix` pointed `tracking_database.R` lines 254-256 at the code that sat there
    a week later."""
    from memory_enhancement.service import MemoryService
    from memory_enhancement.store.disk import Store
    from memory_enhancement.verify.repo import Repository

    repo.write_lines("src/app.py", ["a = 0", "width = 1", "z = 2"])
    repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "The width is set at src/app.py:2.  "])
    written = repo.commit("memory")
    repo.write_lines("src/app.py", ["a = 0", "pad = 9", "width = 1", "z = 2"])
    repo.commit("code moves")
    repo.write(f"{STORE}/notes.md", b"# Notes\r\n\r\nThe width is set at src/app.py:2.\r\n")
    repo.commit("line endings, trailing spaces")
    name = f"{STORE}/notes.md"
    counts, blobs = on_disk(repo, [name])
    assert line_origins(git_of(repo), counts, blobs)[name] == [written] * 3
    assert blamed(repo, name, counts[name]) == [written] * 3
    result = MemoryService(Store(repo.store_root), Repository(repo.root)).verify("notes")
    (check,) = result.results[0].mentions
    assert (check.status.value, check.current_line, check.written_in) == ("moved", 3, written)


def test_memory_lines_that_look_like_a_diff_s_own_rows_are_followed_as_blame_follows_them(
    repo: GitRepo,
) -> None:
    """The replay reads a diff's rows that may say something (a commit, a file, a hunk) by a
    pattern, and the commits' rows are cut at the lines naming a commit: a memory's own
    lines shaped like them (a commit id, `--- x`, `diff --git`, `@@ `) are lines it adds or
    removes, and an empty line is one too."""
    sha = "0123456789abcdef0123456789abcdef01234567"
    repo.write_lines(f"{STORE}/odd.md", ["# Odd", "", sha, "-- x", "++ y", "plain"])
    repo.commit("odd lines")
    repo.write_lines(
        f"{STORE}/odd.md",
        ["# Odd", "", sha, "", "diff --git a/x b/x", "@@ -1 +1 @@", "-- z", "plain", sha],
    )
    repo.commit("more odd lines")
    repo.write_lines(f"{STORE}/odd.md", ["# Odd", "Binary files a/x and b/x differ", sha, "", ""])
    repo.commit("and again")
    name = f"{STORE}/odd.md"
    counts, blobs = on_disk(repo, [name])
    found = line_origins(git_of(repo), counts, blobs)
    assert found[name] == line_origins(git_of(repo), counts)[name] == blamed(repo, name, 5)


def test_the_files_git_indexed_with_an_object_are_found_by_its_id(repo: GitRepo) -> None:
    """`indexed_as` passes over a file of the index by a slice of its line when its id is
    not asked (a mode of six digits, then the id), and reads the line whole otherwise, or
    when the ids asked differ in length."""
    repo.write_lines("a b/x.py", ["same"])
    repo.write_lines("c.py", ["same"])
    repo.write_lines("d.py", ["other"])
    repo.commit("files")
    history = GitHistory(git_of(repo))
    same = blob_hash((repo.root / "c.py").read_bytes())
    assert sorted(history.indexed_as([same])) == ["a b/x.py", "c.py"]
    assert sorted(history.indexed_as([same, "0" * 64])) == ["a b/x.py", "c.py"]
    assert history.indexed_as(["0" * 40]) == [] and history.indexed_as([]) == []
