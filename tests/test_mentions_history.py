"""Prose mentions verified against what the line said when the memory line was written:
real git repositories in temporary folders, one test per verdict and per form, the
fallback without history, and the cache of what git answered."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from memory_enhancement.core.verdicts import CitationCheck, Verdict, VerifyOptions
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify import blame, git_objects
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.repo import Repository
from verify_support import FIXED_NOW, STORE, GitRepo, code, note


def service(repo: GitRepo, state: State | None = None, root: Path | None = None) -> MemoryService:
    return MemoryService(
        Store(repo.store_root),
        Repository(root or repo.root),
        state=state or State(None),
        clock=lambda: FIXED_NOW,
    )


def mentions(repo: GitRepo, name: str = "notes", **kw: Any) -> dict[str, CitationCheck]:
    """The verdicts on a memory's mentions, by the mention as written."""
    result = service(repo, **kw).verify(name).results[0]
    return {c.mention.text: c for c in result.mentions if c.mention is not None}


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """Code, then a memory mentioning it, then the code moves on."""
    repo = GitRepo(tmp_path / "project")
    for name, count in [("src/app.py", 30), ("src/api.py", 20), ("lib/old.py", 10)]:
        repo.write_lines(name, code(name, count))
    repo.write_lines("src/gone.py", code("src/gone.py", 5))
    repo.commit("code")
    return repo


def move_code(repo: GitRepo) -> None:
    """Three lines inserted at the top of app.py, line 20 changed, api.py grows, old.py
    renamed, gone.py deleted."""
    app = code("src/app.py", 30)
    app[19] = "src_app_py_20 = 'changed'"
    repo.write_lines("src/app.py", ["# a", "# b", "# c", *app])
    repo.write_lines("src/api.py", code("src/api.py", 120))
    (repo.root / "src/gone.py").unlink()
    repo.commit("refactor")
    repo.mv("lib/old.py", "lib/new.py")
    repo.commit("rename")


# -- verdicts -----------------------------------------------------------------------------


def test_each_verdict_is_judged_from_the_line_as_it_was_when_the_memory_was_written(
    repo: GitRepo,
) -> None:
    written = repo.head()
    note(
        repo,
        "- `src/api.py:5` valid",
        "- `src/app.py:10` moved",
        "- `lib/old.py:7` renamed",
        "- `src/app.py:20` stale",
        "- `src/gone.py:3` missing",
        "- `src/api.py:99` past the end when written",
        "- `src/nowhere.py:3` never existed",
    )
    memory_commit = repo.commit("memory")
    move_code(repo)
    found = mentions(repo)
    assert {text: c.status for text, c in found.items()} == {
        "src/api.py:5": Verdict.VALID,
        "src/app.py:10": Verdict.MOVED,
        "lib/old.py:7": Verdict.MOVED,
        "src/app.py:20": Verdict.STALE,
        "src/gone.py:3": Verdict.MISSING,
        "src/api.py:99": Verdict.OUT_OF_RANGE,
        "src/nowhere.py:3": Verdict.MISSING,
    }
    assert written != memory_commit
    assert all(c.written_in == memory_commit for c in found.values())
    moved = found["src/app.py:10"]
    assert (moved.current_path, moved.current_line) == ("src/app.py", 13)
    assert moved.citation.snippet == "src_app_py_10 = 10"  # the line as it was written
    renamed = found["lib/old.py:7"]
    assert (renamed.renamed_to, renamed.current_path, renamed.current_line) == (
        "lib/new.py",
        "lib/new.py",
        7,
    )
    stale = found["src/app.py:20"].reason
    assert "src_app_py_20 = 'changed'" in stale  # now
    assert "it read `src_app_py_20 = 20`" in stale  # then
    assert "wrong when written" in found["src/api.py:99"].reason
    assert "(20 lines)" in found["src/api.py:99"].reason  # the length then, not now (120)
    assert "after the memory line was written" in found["src/gone.py:3"].reason
    assert "now or when the memory line was written" in found["src/nowhere.py:3"].reason


def test_a_mention_valid_by_line_count_alone_is_stale_when_its_line_changed(
    repo: GitRepo,
) -> None:
    """The issue's first complaint: today's tool called this `valid` (line 20 exists)."""
    note(repo, "The flag is set at src/app.py:20.")
    repo.commit("memory")
    move_code(repo)
    assert mentions(repo)["src/app.py:20"].status is Verdict.STALE


def test_a_stale_range_quotes_the_line_that_changed_as_it_read_then(repo: GitRepo) -> None:
    """Found in doublefx/9router: `constants.js:47-48` whose line 48 (a secret) changed was
    told "line 48 now reads ...; when written it read" line 47."""
    note(repo, "The keys are at src/app.py:19-20.")
    repo.commit("memory")
    move_code(repo)
    stale = mentions(repo)["src/app.py:19-20"]
    assert stale.status is Verdict.STALE
    assert stale.reason.startswith("line 20 ")
    assert stale.reason.endswith("it read `src_app_py_20 = 20`")


def test_out_of_range_when_written_stays_wrong_after_the_file_grows(repo: GitRepo) -> None:
    note(repo, "See src/api.py:50 (the file has 20 lines).")
    repo.commit("memory")
    repo.write_lines("src/api.py", code("src/api.py", 80))
    repo.commit("grow")
    check = mentions(repo)["src/api.py:50"]
    assert check.status is Verdict.OUT_OF_RANGE and check.status.failing


def test_a_memory_line_written_after_the_code_moved_is_judged_from_its_own_commit(
    repo: GitRepo,
) -> None:
    note(repo, "- old: src/app.py:10")
    repo.commit("memory")
    move_code(repo)
    note(repo, "- old: src/app.py:10", "- new: src/app.py:13")
    repo.commit("memory, a line later")
    found = mentions(repo)
    assert found["src/app.py:10"].status is Verdict.MOVED
    assert found["src/app.py:13"].status is Verdict.VALID


def test_a_memory_written_on_a_branch_merged_into_main_is_judged_from_its_branch_commit(
    repo: GitRepo,
) -> None:
    """Found in doublefx/9router: every memory line came from a commit of a branch merged
    with `--no-ff`, none on HEAD's first-parent line, and a path written from below the
    root sent the run to that commit's file list; verify-all crashed before judging."""
    repo.git("checkout", "-q", "-b", "notes")
    note(repo, "- app.py:10 moved", "- src/api.py:5 valid")
    repo.commit("memory, on a branch")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "--no-edit", "notes")
    move_code(repo)
    found = mentions(repo)
    assert (found["app.py:10"].status, found["app.py:10"].citation.target) == (
        Verdict.MOVED,
        "src/app.py",
    )
    assert found["src/api.py:5"].status is Verdict.VALID


def test_partial_paths_resolve_to_the_root_file_else_a_unique_suffix_else_are_ambiguous(
    repo: GitRepo,
) -> None:
    repo.write_lines("app.py", code("app.py", 5))
    repo.write_lines("pkg_a/util.py", code("pkg_a/util.py", 5))
    repo.write_lines("pkg_b/util.py", code("pkg_b/util.py", 5))
    repo.write_lines("admin/app/core/redis.py", code("redis", 15))
    repo.commit("more code")
    note(repo, "app.py:3 and util.py:2 and `app/core/redis.py:12` and `api.py:4`")
    repo.commit("memory")
    found = mentions(repo)
    assert (found["app.py:3"].status, found["app.py:3"].citation.target) == (
        Verdict.VALID,
        "app.py",
    )
    ambiguous = found["util.py:2"]
    assert ambiguous.status is Verdict.AMBIGUOUS and not ambiguous.status.failing
    assert ambiguous.candidates == ("pkg_a/util.py", "pkg_b/util.py")
    assert "pkg_a/util.py, pkg_b/util.py" in ambiguous.reason
    assert found["app/core/redis.py:12"].citation.target == "admin/app/core/redis.py"
    assert found["api.py:4"].citation.target == "src/api.py"
    assert found["api.py:4"].status is Verdict.VALID


def test_an_absolute_path_of_the_authors_machine_names_the_file_its_tail_is(
    repo: GitRepo,
) -> None:
    """Found in doublefx/9router (10 mentions in one memory): an agent wrote the path it
    read the file at, `/home/doublefx/projects/9router/open-sse/...`; it was missing."""
    note(
        repo,
        "- `/home/dev/projects/app/src/app.py:10` moved",
        "- `/home/dev/projects/app/src/api.py:5` valid",
        "- `/home/dev/projects/app/src/nowhere.py:5` missing",
    )
    repo.commit("memory")
    move_code(repo)
    found = {text.rsplit("/", 1)[1]: check for text, check in mentions(repo).items()}
    assert (found["app.py:10"].status, found["app.py:10"].current_line) == (Verdict.MOVED, 13)
    assert (found["api.py:5"].status, found["api.py:5"].citation.target) == (
        Verdict.VALID,
        "src/api.py",
    )
    assert found["nowhere.py:5"].status is Verdict.MISSING


def test_a_file_in_a_submodule_that_is_not_checked_out_says_so(repo: GitRepo) -> None:
    (repo.root / "vendor/sub").mkdir(parents=True)
    repo.git("update-index", "--add", "--cacheinfo", "160000," + "1" * 40 + ",vendor/sub")
    note(repo, "the helper is vendor/sub/x.py:3")
    repo.commit("memory and submodule")
    check = mentions(repo)["vendor/sub/x.py:3"]
    assert check.status is Verdict.IN_SUBMODULE
    assert check.reason == "in submodule vendor/sub (not checked out)"


def test_a_file_committed_after_the_memory_line_is_read_where_it_was_added(
    repo: GitRepo,
) -> None:
    note(repo, "the new module: src/later.py:4")
    repo.commit("memory first")
    repo.write_lines("src/later.py", code("src/later.py", 6))
    repo.commit("then the code")
    repo.write_lines("src/later.py", ["# header", *code("src/later.py", 6)])
    repo.commit("moved")
    check = mentions(repo)["src/later.py:4"]
    assert (check.status, check.current_line) == (Verdict.MOVED, 5)
    assert check.reason.startswith("file added after the memory line")


def test_a_memory_line_not_committed_yet_is_checked_against_the_work_tree(
    repo: GitRepo,
) -> None:
    note(repo, "committed: src/app.py:10")
    repo.commit("memory")
    move_code(repo)
    note(repo, "committed: src/app.py:10", "pending: src/app.py:13 and src/app.py:500")
    found = mentions(repo)
    assert found["src/app.py:10"].status is Verdict.MOVED
    pending = found["src/app.py:13"]
    assert (pending.status, pending.written_in) == (Verdict.VALID, None)
    assert "not committed yet" in pending.reason
    assert found["src/app.py:500"].status is Verdict.OUT_OF_RANGE


def test_without_history_only_the_line_count_is_checked_and_the_verdict_says_so(
    tmp_path: Path,
) -> None:
    plain = GitRepo(tmp_path / "plain", init=False)  # no repository at all
    plain.write_lines("src/app.py", code("src/app.py", 10))
    note(plain, "src/app.py:5 and src/app.py:50 and src/none.py:1")
    found = mentions(plain)
    assert found["src/app.py:5"].status is Verdict.UNCHECKED
    assert "only the line count" in found["src/app.py:5"].reason
    assert found["src/app.py:50"].status is Verdict.OUT_OF_RANGE
    assert found["src/none.py:1"].status is Verdict.MISSING


def test_an_untracked_memory_file_has_no_history_either(repo: GitRepo) -> None:
    note(repo, "src/app.py:5 is here")  # never committed
    check = mentions(repo)["src/app.py:5"]
    assert check.status is Verdict.UNCHECKED and check.written_in is None


# -- forms ----------------------------------------------------------------------------------


def test_every_form_is_verified_like_the_colon_form(repo: GitRepo) -> None:
    repo.git("remote", "add", "origin", "git@github.com:Acme/Widget.git")
    url = "https://github.com/acme/widget/blob/main/src/app.py#L25"
    note(
        repo,
        "[handler](src/app.py#L10-L12) and [top](src/app.py#L2)",
        "src/app.py:11以降は処理、ファイルsrc/app.py:12を参照。",
        "src/app.py:9:4: warning: unused",
        "list: `src/app.py:7,8-9`",
        f"url: {url} and https://github.com/other/thing/blob/main/src/app.py#L3",
        "range: main app lines src/app.py:14–15",
    )
    repo.commit("memory")
    move_code(repo)
    found = mentions(repo)
    lines = {
        text: (c.status.value, c.current_line, c.current_end_line) for text, c in found.items()
    }
    assert lines == {
        "src/app.py#L10-L12": ("moved", 13, 15),
        "src/app.py#L2": ("moved", 5, None),
        "src/app.py:11": ("moved", 14, None),
        "src/app.py:12": ("moved", 15, None),
        "src/app.py:9:4": ("moved", 12, None),
        "src/app.py:7": ("moved", 10, None),
        "8-9": ("moved", 11, 12),
        url: ("moved", 28, None),
        "https://github.com/other/thing/blob/main/src/app.py#L3": ("skipped", None, None),
        "src/app.py:14–15": ("moved", 17, 18),
    }
    assert (
        "another repository"
        in found["https://github.com/other/thing/blob/main/src/app.py#L3"].reason
    )


def test_mentions_that_repeat_a_declared_citation_are_not_checked_twice(repo: GitRepo) -> None:
    note(
        repo,
        "The entry is src/app.py:5 and src/app.py:6.",
        "",
        "## Citations",
        "",
        "| File | Line | Snippet |",
        "|---|---|---|",
        "| src/app.py | 5 | src_app_py_5 = 5 |",
    )
    repo.commit("memory")
    result = service(repo).verify("notes").results[0]
    assert [c.citation.ref for c in result.checks] == ["src/app.py:5"]
    assert [c.mention.text for c in result.mentions if c.mention] == ["src/app.py:6"]


def test_a_path_quoted_in_a_citation_snippet_is_not_a_mention_of_the_memory(
    repo: GitRepo,
) -> None:
    """A snippet in the citations table quotes the cited file; that file's own text
    naming `Test-GetUser.ps1:42` is verified by the citation, not read as prose."""
    repo.write_lines("src/app.py", [*code("src/app.py", 4), 'hint = "Test-GetUser.ps1:42"'])
    repo.commit("hint")
    note(
        repo,
        "The hint is at src/app.py:5.",
        "",
        "## Citations",
        "",
        "| File | Line | Snippet |",
        "|---|---|---|",
        '| src/app.py | 5 | `hint = "Test-GetUser.ps1:42"` |',
    )
    repo.commit("memory")
    result = service(repo).verify("notes").results[0]
    assert [(c.citation.ref, c.status) for c in result.checks] == [("src/app.py:5", Verdict.VALID)]
    assert [c.mention.text for c in result.mentions if c.mention] == []


def test_a_mention_beside_an_inline_citation_in_prose_is_still_a_mention(repo: GitRepo) -> None:
    """Only the citations table's rows quote the cited file: a prose line that holds an
    inline `[cite:file](...)` is the memory's own words, and the other code it names there is
    verified as any mention is."""
    note(repo, "The handler in src/api.py:7 calls the parser [cite:file](src/app.py:5).")
    repo.commit("memory")
    result = service(repo).verify("notes").results[0]
    assert [(c.citation.ref, c.status) for c in result.checks] == [("src/app.py:5", Verdict.VALID)]
    assert [c.mention.text for c in result.mentions if c.mention] == ["src/api.py:7"]


def test_a_snippet_quoting_an_inline_citation_is_still_not_a_mention(repo: GitRepo) -> None:
    """A citations table's row stays the cited file's text when its snippet quotes an
    inline citation (a test of the parser, as in this tool's own generated stores)."""
    quoted = 'doc = "[cite:file](Test-GetUser.ps1:42)"'
    repo.write_lines("src/app.py", [*code("src/app.py", 4), quoted])
    repo.commit("quoted")
    note(
        repo,
        "The parser test.",
        "",
        "## Citations",
        "",
        "| File | Line | Snippet |",
        "|---|---|---|",
        f"| src/app.py | 5 | `{quoted}` |",
    )
    repo.commit("memory")
    result = service(repo).verify("notes").results[0]
    assert [(c.citation.ref, c.status) for c in result.checks] == [("src/app.py:5", Verdict.VALID)]
    assert [c.mention.text for c in result.mentions if c.mention] == []


def test_a_file_gone_since_is_followed_through_the_index_without_reading_the_work_tree(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Renames staged and not committed are read from git's index: comparing the work
    tree with HEAD instead read every file of it (0.35 s of a first run on
    rjmurillo/ai-agents), for every run in which a mentioned file was gone."""
    note(repo, "- `src/gone.py:3` and `src/api.py:4`")
    repo.commit("memory")
    move_code(repo)  # gone.py deleted
    repo.mv("src/api.py", "src/api2.py")  # staged, not committed
    diffs: list[tuple[str, ...]] = []
    real_bytes = git_objects.run_git_bytes

    def recording(git: Git, *args: str, stdin: bytes | None = None) -> bytes:
        if "diff" in args:
            diffs.append(args)
        return real_bytes(git, *args, stdin=stdin)

    monkeypatch.setattr(git_objects, "run_git_bytes", recording)
    found = mentions(repo)
    assert found["src/gone.py:3"].status is Verdict.MISSING
    assert found["src/api.py:4"].renamed_to == "src/api2.py"  # the staged `git mv`
    assert diffs and all("--cached" in args for args in diffs if args[-1] == "HEAD")


# -- the cache ------------------------------------------------------------------------------


def test_a_rerun_on_an_unchanged_memory_asks_git_nothing_about_its_history(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    note(repo, "src/app.py:10 and src/app.py:20")
    repo.commit("memory")
    move_code(repo)
    asked: list[str] = []
    real, real_bytes = Git.run, git_objects.run_git_bytes
    commands = ("log", "blame", "diff", "diff-tree", "ls-files", "ls-tree", "rev-parse")

    def counting(self: Git, *args: str) -> str:
        asked.append(next((a for a in args if a in commands), args[0]))
        return real(self, *args)

    def counting_bytes(git: Git, *args: str, stdin: bytes | None = None) -> bytes:
        asked.append(next((a for a in args if a in commands), args[0]))
        return real_bytes(git, *args, stdin=stdin)

    monkeypatch.setattr(Git, "run", counting)  # what the run asks (git.py)
    monkeypatch.setattr(git_objects, "run_git_bytes", counting_bytes)  # and the mentions
    state = State(repo.root / "state.db")
    first = mentions(repo, state=state)
    assert "log" in asked and "diff-tree" in asked  # the memory's history, then the code's
    asked.clear()
    second = mentions(repo, state=state)
    assert {"blame", "diff", "diff-tree"}.isdisjoint(asked)  # all from the state database
    assert {k: (c.status, c.current_line, c.reason) for k, c in first.items()} == {
        k: (c.status, c.current_line, c.reason) for k, c in second.items()
    }
    note(repo, "src/app.py:10 and src/app.py:20", "and src/api.py:3")
    asked.clear()
    third = mentions(repo, state=state)
    assert "diff" in asked  # the memory changed: its blob hash is another
    assert third["src/api.py:3"].written_in is None  # not committed yet
    repo.write_lines("src/app.py", code("src/app.py", 30))
    fourth = mentions(repo, state=state)  # a cited file changed: judged again
    assert fourth["src/app.py:10"].status is Verdict.VALID


def test_history_replayed_from_one_log_agrees_with_git_blame(repo: GitRepo) -> None:
    """line_origins follows a memory file through edits and a rename like blame does."""
    from memory_enhancement.verify.git import Git as RealGit
    from memory_enhancement.verify.line_origins import line_origins

    notes = f"{STORE}/notes.md"
    note(repo, "first", "second", "third")
    repo.commit("memory")
    note(repo, "first", "inserted", "second", "third, edited")
    repo.commit("edit")
    repo.mv(notes, f"{STORE}/topic/notes.md")
    repo.commit("rename")
    moved = f"{STORE}/topic/notes.md"
    repo.write_lines(moved, ["# Notes", "", "first", "inserted", "second", "third, edited", "new"])
    git = RealGit.discover(repo.root)
    assert git is not None
    replayed = line_origins(git, {moved: 7})[moved]
    blamed = blame.GitHistory(git).blame(moved, range(1, 8))
    assert blamed is not None
    assert replayed == [blamed[n] for n in range(1, 8)]
    assert replayed[-1] is None  # not committed yet


@pytest.mark.parametrize("graph", [False, True], ids=["no commit-graph", "commit-graph"])
def test_the_folder_walk_gives_the_run_its_first_parent_history(repo: GitRepo, graph: bool) -> None:
    """line_origins walks the memory folder once, and the run's Git reuses what it learned
    of every first-parent commit (also those that leave the folder alone): from the walk
    itself, or with a commit-graph from `git rev-list --timestamp`."""
    from memory_enhancement.verify.folder_log import has_commit_graph
    from memory_enhancement.verify.git import Git as RealGit
    from memory_enhancement.verify.line_origins import line_origins

    note(repo, "first")
    repo.commit("memory")
    note(repo, "first", "second")
    repo.commit("edit")
    repo.write_lines("src/other.py", ["x = 1"])
    repo.commit("code only")  # HEAD leaves the memory folder alone
    if graph:
        repo.git("commit-graph", "write", "--reachable")
    assert has_commit_graph(RealGit(repo.root)) is graph
    git = RealGit.discover(repo.root)
    assert git is not None
    notes = f"{STORE}/notes.md"
    origins = line_origins(git, {notes: 4})[notes]
    walked = git._walked is not None and git._walked[0] == 0  # the whole history, learned
    fresh = RealGit.discover(repo.root)
    assert fresh is not None
    assert walked and git.first_parents() == fresh.first_parents()  # the same list, not read again
    assert git.head() == repo.git("rev-parse", "HEAD").strip()
    blamed = blame.GitHistory(fresh).blame(notes, range(1, 5))
    assert blamed is not None and origins == [blamed[n] for n in range(1, 5)]


def test_a_cached_answer_for_an_uncommitted_line_is_not_reused_once_it_is_committed(
    repo: GitRepo,
) -> None:
    note(repo, "src/app.py:10")
    state = State(repo.root / "state.db")
    repo.git("add", "-A")  # tracked, not committed: its line has no commit yet
    assert mentions(repo, state=state)["src/app.py:10"].written_in is None
    commit = repo.commit("memory")
    assert mentions(repo, state=state)["src/app.py:10"].written_in == commit


def test_mentions_can_be_turned_off(repo: GitRepo) -> None:
    note(repo, "src/app.py:10")
    repo.commit("memory")
    options = VerifyOptions(include_mentions=False)
    run = service(repo).verify("notes", options)
    assert run.results[0].mentions == ()


# -- where a snippet cannot tell ------------------------------------------------------------


def test_a_blank_cited_line_is_followed_by_the_diff(repo: GitRepo) -> None:
    lines = code("src/blank.py", 10)
    lines[4] = ""
    lines[6] = ""
    repo.write_lines("src/blank.py", lines)
    repo.commit("blank lines")
    note(repo, "src/blank.py:5 and src/blank.py:7")
    repo.commit("memory")
    now = ["# top", *lines]
    now[7] = "filled = 7"  # old line 7 (blank) is now line 8, and no longer blank
    repo.write_lines("src/blank.py", now)
    repo.commit("edit")
    found = mentions(repo)
    assert (found["src/blank.py:5"].status, found["src/blank.py:5"].current_line) == (
        Verdict.MOVED,
        6,
    )
    assert found["src/blank.py:7"].status is Verdict.STALE


def test_a_range_with_lines_inserted_inside_moved_and_grew(repo: GitRepo) -> None:
    note(repo, "the block src/app.py:10-14")
    repo.commit("memory")
    app = code("src/app.py", 30)
    repo.write_lines("src/app.py", ["# top", *app[:11], "# inserted", *app[11:]])
    repo.commit("grow the block")
    check = mentions(repo)["src/app.py:10-14"]
    assert (check.status, check.current_line, check.current_end_line) == (Verdict.MOVED, 11, 16)
    assert "inserted inside the range" in check.reason


def test_a_rename_git_log_cannot_pair_is_found_by_the_direct_diff(repo: GitRepo) -> None:
    """Deleted in one commit, added back (edited) in another folder in the next: no
    commit is a rename, but from the memory's commit to HEAD the file moved."""
    note(repo, "helper at lib/old.py:7")
    repo.commit("memory")
    (repo.root / "lib/old.py").unlink()
    repo.commit("delete")
    repo.write_lines("pkg/old.py", ["# moved here", *code("lib/old.py", 10)])
    repo.commit("add")
    check = mentions(repo)["lib/old.py:7"]
    assert (check.status, check.renamed_to, check.current_line) == (
        Verdict.MOVED,
        "pkg/old.py",
        8,
    )


def test_a_renamed_file_that_lost_the_cited_text_is_stale_not_missing(repo: GitRepo) -> None:
    note(repo, "helper at lib/old.py:7")
    repo.commit("memory")
    repo.mv("lib/old.py", "pkg/old.py")
    lines = code("lib/old.py", 10)
    lines[6] = "rewritten = 7"
    repo.write_lines("pkg/old.py", lines)
    repo.commit("move and edit")
    check = mentions(repo)["lib/old.py:7"]
    assert (check.status, check.renamed_to) == (Verdict.STALE, "pkg/old.py")


def rename_then_rewrite(repo: GitRepo, kept: list[str]) -> None:
    """lib/old.py renamed unchanged to pkg/old.py in one commit, then rewritten in the
    next (keeping only `kept`), so that from the memory's commit to HEAD git's diff no
    longer pairs the two files."""
    repo.mv("lib/old.py", "pkg/old.py")
    repo.commit("rename the package")
    repo.write_lines("pkg/old.py", [*(f"new_{n} = {n}" for n in range(1, 31)), *kept])
    repo.commit("rewrite")


def test_a_file_renamed_then_rewritten_is_followed_through_the_commit_that_renamed_it(
    repo: GitRepo,
) -> None:
    note(repo, "helper at lib/old.py:7")
    repo.commit("memory")
    rename_then_rewrite(repo, kept=[code("lib/old.py", 10)[6]])
    check = mentions(repo)["lib/old.py:7"]
    assert (check.status, check.renamed_to, check.current_line) == (
        Verdict.MOVED,
        "pkg/old.py",
        31,
    )


def test_a_file_renamed_then_rewritten_without_the_cited_text_is_stale_not_missing(
    repo: GitRepo,
) -> None:
    note(repo, "helper at lib/old.py:7")
    repo.commit("memory")
    rename_then_rewrite(repo, kept=[])
    check = mentions(repo)["lib/old.py:7"]
    assert (check.status, check.renamed_to) == (Verdict.STALE, "pkg/old.py")


def test_a_file_moved_twice_through_another_folder_is_followed_to_its_last_name(
    repo: GitRepo,
) -> None:
    """Found on aoxiansheng/stock-api: `src/core/receiver/services/receiver.service.ts`
    went to `src/core/restapi/receiver/...` and then `src/core/01-entry/receiver/...`,
    edited each time; the direct diff no longer paired the first and the last, and each
    commit's rename was looked for among the gone file and the last alone, so neither
    commit showed one (the folder in between is neither): `missing`, "deleted"."""
    note(repo, "helper at lib/old.py:7")
    repo.commit("memory")
    old = code("lib/old.py", 10)
    added = [f"added_{n} = {n}" for n in range(1, 7)]
    repo.mv("lib/old.py", "pkg/old.py")
    repo.write_lines("pkg/old.py", [*old, *added])
    repo.commit("move into pkg, with more")
    repo.mv("pkg/old.py", "app/core/old.py")
    repo.write_lines("app/core/old.py", [*old[4:], *added, *(f"more_{n} = {n}" for n in range(4))])
    repo.commit("move into app/core, with less of the old")
    check = mentions(repo)["lib/old.py:7"]
    assert (check.status, check.renamed_to, check.current_line) == (
        Verdict.MOVED,
        "app/core/old.py",
        3,
    )


def test_a_rename_made_before_the_memory_line_is_not_followed(repo: GitRepo) -> None:
    """lib/old.py was renamed away, then a new lib/old.py was written and mentioned, then
    deleted: the rename says nothing of the file the memory line read."""
    repo.mv("lib/old.py", "pkg/old.py")
    repo.commit("rename")
    repo.write_lines("lib/old.py", code("lib/again.py", 10))
    repo.commit("a new lib/old.py")
    note(repo, "helper at lib/old.py:7")
    repo.commit("memory")
    (repo.root / "lib/old.py").unlink()
    repo.commit("delete it")
    check = mentions(repo)["lib/old.py:7"]
    assert (check.status, check.renamed_to) == (Verdict.MISSING, None)


def test_a_memory_without_mentions_is_not_read_for_them_until_it_changes(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index knows from the bytes it read whether a memory file may mention code, so
    a verify-all reads for mentions only the files that may hold some; once a file
    changes the index reads it again, and a mention written into it is seen."""
    from memory_enhancement.verify.mention_reading import MentionReader

    note(repo, "nothing cited here", name="plain")
    note(repo, "src/app.py:10")
    repo.commit("memories")
    state = State(repo.root / "state.db")
    read: list[str] = []
    real = MentionReader._bytes

    def counting(self: MentionReader, path: str) -> bytes | None:
        read.append(path)
        return real(self, path)

    monkeypatch.setattr(MentionReader, "_bytes", counting)
    first = service(repo, state=state).verify_all()
    assert read == ["notes"]
    assert [r.path for r in first.results if r.mentions] == ["notes"]
    note(repo, "now it cites src/app.py:12 and more text", name="plain")
    run = service(repo, state=state).verify_all()
    mentions = {r.path: [c.mention.text for c in r.mentions if c.mention] for r in run.results}
    assert mentions["plain"] == ["src/app.py:12"]
    assert "plain" in read


def test_a_memory_with_mentions_is_not_read_again_until_it_changes(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rerun takes an unchanged memory file's mentions from the state database (its
    size and modification time say it is the same) rather than reading and parsing it;
    once the file changes it is read again, and the new mention is seen."""
    from memory_enhancement.verify import mention_reading

    note(repo, "src/app.py:10 and `src/api.py#L3-L4`")
    repo.commit("memory")
    move_code(repo)
    state = State(repo.root / "state.db")
    first = mentions(repo, state=state)
    parsed: list[str] = []
    real = mention_reading.find_mentions

    def counting(text: str) -> list[Any]:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(mention_reading, "find_mentions", counting)
    second = mentions(repo, state=state)
    assert parsed == []  # nothing read again
    assert second == first  # the same mentions (every field) and the same verdicts
    note(repo, "src/app.py:10 and `src/api.py#L3-L4`", "then src/app.py:20")
    third = mentions(repo, state=state)
    assert len(parsed) == 1 and set(third) == {*first, "src/app.py:20"}
    assert third["src/app.py:20"].written_in is None  # read again: the new line is seen


def _damaged(checked: bytes, part: int, damage: str, *, reseal: bool) -> bytes:
    """A kept verdicts row (mention_cache.Cached.checked: a CRC-32, then a header and the
    rows' parts, a line each, and the fingerprint's lines) with one part replaced;
    resealed with a fresh CRC or not."""
    parts = checked[8:].split(b"\n", 5)
    header = json.loads(parts[0])
    if part == 0:
        key, value = damage.split("=", 1)
        header[key] = json.loads(value)
        parts[0] = json.dumps(header).encode()
    else:
        parts[part] = damage.encode()
    text = b"\n".join(parts)
    return (b"%08x" % zlib.crc32(text) if reseal else checked[:8]) + text


@pytest.mark.parametrize(
    ("part", "damage", "reseal"),
    [
        (2, "[[1, 2]]", False),  # the mentions' rows, torn or rotten
        (2, '"x"', False),
        (2, '[["a", 0, "t", "p", 1, null, "colon"', False),
        (1, "[]", False),  # the verdicts' rows
        (0, 'n="many"', False),
        (0, 'n="many"', True),  # another version's header, sealed as it was written
        (0, 'k="two"', True),
        (0, "s=5", True),
        (0, 'st=["a"]', True),
        (0, "e=0", True),  # the fingerprint's length
        (5, "[1, 2]", True),  # the fingerprint
    ],
)
def test_a_damaged_cached_mention_list_is_read_again_not_trusted(
    repo: GitRepo, part: int, damage: str, reseal: bool
) -> None:
    """A cache row whose kept mentions or verdicts changed since they were written (a torn
    write, a damaged disk) or whose header is not this version's is a miss: the memory file
    is read again and judged as on a first run."""
    note(repo, "src/app.py:10 and src/api.py:3")
    repo.commit("memory")
    move_code(repo)
    state = State(repo.root / "state.db")
    first = mentions(repo, state=state)
    with state.connect() as db:
        (checked,) = db.execute("SELECT checked FROM mention_history").fetchone()
        db.execute(
            "UPDATE mention_history SET checked = ?",
            (_damaged(checked, part, damage, reseal=reseal),),
        )
        db.commit()
    assert mentions(repo, state=state) == first


def test_a_mention_written_on_a_merged_branch_is_verified_from_the_branch_commit(
    repo: GitRepo,
) -> None:
    """A memory line committed on a branch merged with --no-ff comes from a commit off HEAD's
    first-parent line; resolving a bare file name needs the file lists of such commits,
    and asking for those alone once crashed the run
    (d-kishi/ubiquitous-lang-mng, whose memories are written on pull-request branches)."""
    repo.git("checkout", "-q", "-b", "side")
    note(repo, "- `app.py:10` on the branch, by its file name alone")
    repo.commit("memory on the branch")
    repo.git("checkout", "-q", "main")
    move_code(repo)
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    check = mentions(repo)["app.py:10"]
    assert (check.status, check.citation.target, check.current_line) == (
        Verdict.MOVED,
        "src/app.py",
        13,
    )


def test_what_another_grammar_read_of_an_unchanged_memory_is_read_again(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade that reads more forms (route folders like `[id]/route.js`, found in
    doublefx/9router) sees them in memory files that did not change: the mentions an
    older grammar kept of a file, or its finding none, are not trusted."""
    from memory_enhancement.core import mentions as grammar
    from memory_enhancement.verify import (
        mention_cache,
        mention_history,
        mention_judge,
        mention_reading,
    )

    note(repo, "- src/app.py:10 and src/api.py:3", name="some")
    note(repo, "- src/api.py:4", name="none")
    repo.commit("memories")
    move_code(repo)
    state = State(repo.root / "state.db")

    def older(text: str) -> list[Any]:  # a grammar that knew no `api.py`
        return [m for m in grammar.find_mentions(text) if "api" not in m.path]

    monkeypatch.setattr(mention_reading, "find_mentions", older)
    for module in (mention_cache, mention_history, mention_judge, mention_reading):
        monkeypatch.setattr(module, "GRAMMAR", grammar.GRAMMAR + 1)
    before = service(repo, state=state).verify_all()
    assert {r.path: len(r.mentions) for r in before.results} == {"some": 1}
    monkeypatch.undo()
    after = service(repo, state=state).verify_all()
    found = {
        r.path: {c.mention.text: c.status for c in r.mentions if c.mention} for r in after.results
    }
    assert found == {
        "some": {"src/app.py:10": Verdict.MOVED, "src/api.py:3": Verdict.VALID},
        "none": {"src/api.py:4": Verdict.VALID},
    }
