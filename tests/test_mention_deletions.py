"""Mention reasons that name the commit git deleted a file in (verify/deletions.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.repo import Repository
from verify_support import FIXED_NOW, STORE, GitRepo, code, git_commands, note


def verdicts(repo: GitRepo, state: State | None = None) -> dict[str, CitationCheck]:
    service = MemoryService(
        Store(repo.store_root), Repository(repo.root), state=state or State(None),
        clock=lambda: FIXED_NOW,
    )  # fmt: skip
    result = service.verify("notes").results[0]
    return {c.mention.text: c for c in result.mentions if c.mention is not None}


def day(repo: GitRepo, sha: str) -> str:
    return repo.git("log", "-1", "--format=%cs", sha).strip()


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    for name in ["src/app.py", "src/gone.py", "src/later.py", "docs/old.md"]:
        repo.write_lines(name, code(name, 10))
    repo.commit("code")
    return repo


def test_a_missing_mention_names_the_commit_that_deleted_its_file_not_the_memory_lines(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """122sp7/xuanwu-app: `app/layout.tsx was deleted after the memory line was written
    (998e61d)` named the memory's own commit; the file went in a merge a week later.
    One `git log` answers for every such file of the run."""
    repo.write_lines(
        f"{STORE}/notes.md",
        ["# Notes", "", "- src/gone.py:3 and `src/gone.py`", "- src/later.py:2", "- `src/app.py`"],
    )
    written = repo.commit("memory")
    repo.commit("something else")
    (repo.root / "src/gone.py").unlink()
    deleted = repo.commit("delete gone.py")
    repo.git("checkout", "-q", "-b", "side")
    (repo.root / "src/later.py").unlink()
    repo.commit("delete later.py on a branch")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    merged = repo.head()
    asked = git_commands(monkeypatch)
    found = verdicts(repo)
    told = f"in {deleted[:7]}, {day(repo, deleted)}, after the memory line was written"
    for text in ("src/gone.py:3", "src/gone.py"):
        assert found[text].status is Verdict.MISSING
        assert found[text].reason == f"src/gone.py was deleted {told} ({written[:7]})"
    later = found["src/later.py:2"]
    assert later.status is Verdict.MISSING
    assert f"deleted in merge {merged[:7]}, {day(repo, merged)}, after" in later.reason
    # One process asks for the deletions: the log, or the diff of the line's root trees
    # when the run's folder walk printed them (first_parent_diffs.py), which reads what the
    # run has not read of the line yet.
    line = [a for a in asked if "--diff-filter=D" in a or a[-2:] == ("--raw", "-z")]
    assert len(line) == 1


def test_the_deleting_commits_renames_are_asked_of_the_runs_own_line(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The renames of the commits deleting missing files are asked with the run's Git (its
    first-parent line, its diffs, the renames it learned), not the mentions' own Git, which
    had walked the whole line again to read them (one more `git log` a first run)."""
    note(repo, "- src/gone.py:3")
    repo.commit("memory")
    repo.mv("src/gone.py", "lib/moved.py")
    repo.write_lines("lib/moved.py", code("rewritten", 10))
    repo.commit("move gone.py and rewrite it")
    walks: list[tuple[str, ...]] = []
    real = Git.run

    def run(git: Git, *args: str) -> str:
        walks.append(args)
        return real(git, *args)

    monkeypatch.setattr(Git, "run", run)
    asked = git_commands(monkeypatch)
    found = verdicts(repo)
    assert found["src/gone.py:3"].status is Verdict.MISSING
    assert [a for a in walks if a[:2] == ("log", "--first-parent")] == []
    assert next(a for a in asked if a[:2] == ("log", "--first-parent"))[-2:] == ("--", STORE)


def test_a_skipped_file_mention_says_what_git_knows_of_its_path_instead_of_every_guess(
    repo: GitRepo,
) -> None:
    """rjmurillo/ai-agents: 130 file mentions were skipped as "not a file of this
    repository then (removed before, to be created, an example)", 34 of them paths git
    had deleted (32 before the memory line, 2 created after it and deleted since)."""
    (repo.root / "docs/old.md").unlink()
    removed = repo.commit("remove old.md")
    repo.write_lines(
        f"{STORE}/notes.md",
        ["# Notes", "", "- `docs/old.md` was removed", "- `docs/plan.md` is planned",
         "- `docs/never.md` is an example"],
    )  # fmt: skip
    written = repo.commit("memory")
    repo.write_lines("docs/plan.md", ["# plan"])
    repo.commit("plan.md written")
    (repo.root / "docs/plan.md").unlink()
    dropped = repo.commit("plan.md dropped")
    found = verdicts(repo)
    assert {k: c.status for k, c in found.items()} == {
        "docs/old.md": Verdict.SKIPPED,
        "docs/plan.md": Verdict.SKIPPED,
        "docs/never.md": Verdict.SKIPPED,
    }
    head = f"now nor when the memory line was written ({written[:7]}): "
    assert found["docs/old.md"].reason == (
        f"no file docs/old.md {head}deleted before it was written, in {removed[:7]}, "
        f"{day(repo, removed)}"
    )
    assert found["docs/plan.md"].reason == (
        f"no file docs/plan.md {head}created after it was written and deleted in "
        f"{dropped[:7]}, {day(repo, dropped)}"
    )
    assert found["docs/never.md"].reason.endswith("(removed before, to be created, an example)")


def test_a_file_edited_then_renamed_is_followed_through_the_rename_not_told_deleted(
    repo: GitRepo,
) -> None:
    """1morr/FMP: `download_status_cache.dart`, edited since the memory line, was renamed
    to `file_exists_cache.dart` (git: 67% alike) and the mention said `deleted in` the
    renaming commit; so did a plain `git mv` of a file edited since (the diff from the
    memory's commit is asked for renames only among files named like the gone one).
    The commit that deleted the name pairs the rename in its own diff."""
    repo.write_lines(
        f"{STORE}/notes.md",
        ["# Notes", "", "- src/gone.py:3", "- `src/gone.py`", "- src/later.py:2"],
    )
    repo.commit("memory")
    repo.write_lines("src/gone.py", ["import os", *code("src/gone.py", 10)])
    repo.commit("edit gone.py")
    repo.git("mv", "src/gone.py", "src/status.py")
    repo.commit("rename gone.py")
    # A file deleted outright, beside a file added, is still told deleted.
    (repo.root / "src/later.py").unlink()
    repo.write_lines("src/other.py", ["something else entirely"])
    deleted = repo.commit("delete later.py, add other.py")
    found = verdicts(repo)
    line, whole = found["src/gone.py:3"], found["src/gone.py"]
    assert (line.status, line.renamed_to, line.current_line) == (Verdict.MOVED, "src/status.py", 4)
    assert (whole.status, whole.renamed_to) == (Verdict.MOVED, "src/status.py")
    later = found["src/later.py:2"]
    assert (later.status, later.renamed_to) == (Verdict.MISSING, None)
    assert f"deleted in {deleted[:7]}" in later.reason


def test_a_file_renamed_with_an_edit_then_renamed_again_is_followed_to_its_last_name(
    repo: GitRepo,
) -> None:
    """A Java class renamed with an edit (JwtAuthenticationFilter.java -> JwtGatewayFilter
    .java, a line inserted), then renamed again (-> GatewayJwtFilter.java): the commit
    deleting the first name pairs it with the second, which is gone too, and the mentions
    said `deleted in` that commit (the QA round's scratch commits on a Spring service).
    Each later name is read from the commit that deleted the one before."""
    repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "- src/gone.py:3", "- `src/gone.py`"])
    repo.commit("memory")
    repo.write_lines("src/gone.py", ["import os", *code("src/gone.py", 10)])
    repo.git("mv", "src/gone.py", "src/status.py")
    repo.commit("edit gone.py and rename it")
    repo.git("mv", "src/status.py", "src/state.py")
    repo.commit("rename it again")
    found = verdicts(repo)
    line, whole = found["src/gone.py:3"], found["src/gone.py"]
    assert (line.status, line.renamed_to, line.current_line) == (Verdict.MOVED, "src/state.py", 4)
    assert (whole.status, whole.renamed_to) == (Verdict.MOVED, "src/state.py")


def test_a_rerun_keeps_the_deleting_commit_and_asks_git_for_no_deletions(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "- src/gone.py:3"])
    repo.commit("memory")
    (repo.root / "src/gone.py").unlink()
    deleted = repo.commit("delete gone.py")
    state = State(repo.root / "state.db")
    first = verdicts(repo, state)["src/gone.py:3"]
    assert f"deleted in {deleted[:7]}" in first.reason
    asked = git_commands(monkeypatch)
    again = verdicts(repo, state)["src/gone.py:3"]
    assert (again.status, again.reason) == (first.status, first.reason)
    assert "log" not in [a[0] for a in asked]


def test_a_file_recreated_under_a_longer_path_is_pointed_to_with_the_cited_line_found(
    repo: GitRepo,
) -> None:
    """122sp7/xuanwu-app: `app/layout.tsx` went to `src/app/layout.tsx` in a commit that
    rewrote it (no rename git pairs), beside another `layout.tsx`: the mention was
    `missing` with no hint. It stays `missing`; its reason says where the cited line is."""
    repo.write_lines("app/layout.tsx", code("layout", 10))
    repo.write_lines("app/shell/layout.tsx", ["shell = 1"])
    repo.write_lines(
        f"{STORE}/notes.md",
        ["# Notes", "", "- app/layout.tsx:3 and app/layout.tsx:4-5", "- app/layout.tsx:9"],
    )
    repo.commit("memory")
    (repo.root / "app/layout.tsx").unlink()
    moved = [f"fresh_{n} = {n}" for n in range(20)]
    moved[6:6] = ["  layout_3 = 3", "layout_4 = 4", "layout_5 = 5"]
    repo.write_lines("src/app/layout.tsx", moved)
    repo.commit("app/ moved to src/app/, rewritten")
    state = State(repo.root / "state.db")
    found = verdicts(repo, state)
    pointer = "; the one file ending in app/layout.tsx now is src/app/layout.tsx"
    assert found["app/layout.tsx:3"].status is Verdict.MISSING
    assert found["app/layout.tsx:3"].reason.endswith(f"{pointer}, which has that line at 7")
    assert found["app/layout.tsx:4-5"].reason.endswith(f"{pointer}, which has those lines at 8-9")
    assert found["app/layout.tsx:9"].reason.endswith(pointer)  # not there: the file alone
    moved[6] = "layout_3 = 'changed'"
    repo.write_lines("src/app/layout.tsx", moved)  # the file pointed to changes: told again
    again = verdicts(repo, state)
    assert again["app/layout.tsx:3"].reason.endswith(pointer)


def test_a_file_deleted_and_not_committed_names_no_older_deletion_of_its_path(
    repo: GitRepo,
) -> None:
    """No commit deleted it yet: an older deletion of the same path (the file came back
    since) is not the one, even for a memory line written on a merged branch, whose place
    on the first-parent line cannot tell which deletion came after it."""
    (repo.root / "src/gone.py").unlink()
    repo.commit("gone.py deleted")
    repo.write_lines("src/gone.py", code("src/gone.py", 10))
    repo.commit("gone.py back")
    repo.git("checkout", "-q", "-b", "notes")
    repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "- src/gone.py:3"])
    written = repo.commit("memory, on a branch")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge notes", "notes")
    (repo.root / "src/gone.py").unlink()  # not committed
    found = verdicts(repo)["src/gone.py:3"]
    assert found.status is Verdict.MISSING
    assert found.reason == (
        f"src/gone.py was deleted after the memory line was written ({written[:7]}): "
        "from the work tree, not committed yet (git still lists it)"
    )


def test_a_line_mention_under_a_folder_gone_before_the_memory_is_a_deleted_file_not_a_guess(
    repo: GitRepo,
) -> None:
    """A path whose first folder the repository has neither now nor then is skipped as
    another project's path or an example; git knows this one was a file of its own."""
    repo.write_lines("legacy/old.py", code("legacy/old.py", 10))
    repo.commit("legacy")
    (repo.root / "legacy/old.py").unlink()
    removed = repo.commit("legacy/ removed")
    repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "- legacy/old.py:3", "- vendor/x.py:2"])
    repo.commit("memory")
    found = verdicts(repo)
    assert found["legacy/old.py:3"].status is Verdict.SKIPPED
    assert found["legacy/old.py:3"].reason.endswith(
        f"no folder legacy/ in the repository, now or then: a file deleted before it was "
        f"written, in {removed[:7]}, {day(repo, removed)}"
    )
    assert found["vendor/x.py:2"].reason.endswith("an example, not one of this repository")


@pytest.mark.parametrize("graph", [False, True])
def test_a_range_wrong_when_committed_names_the_earlier_version_of_its_file_that_had_it(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, graph: bool
) -> None:
    """davidsonsilva/fintwin: `DashboardView.tsx:352-355` was past the end of the file's
    338 lines at the commit that added the memory, and the lines the memory describes were
    there the day before (406 lines). The verdict stays; the reason says where they were.
    The versions come from the diffs of the line's root trees the folder walk printed
    (first_parent_diffs.LineDiffs); with a commit-graph the walk prints none, and one `git
    log` lists them."""
    repo.write_lines("src/view.tsx", code("view", 30))
    grown = repo.commit("view grows to 30 lines")
    repo.write_lines("src/view.tsx", code("view", 12))
    repo.commit("view cut to 12 lines")
    repo.write_lines(
        f"{STORE}/notes.md", ["# Notes", "", "- src/view.tsx:20-22", "- src/app.py:40"]
    )
    repo.commit("memory, written before the cut")
    if graph:
        repo.git("commit-graph", "write", "--reachable")
    asked = git_commands(monkeypatch)
    found = verdicts(repo)
    limited = [a[0] for a in asked if a[-1] == "src/view.tsx" and "--name-only" in a]
    assert limited == (["log"] if graph else [])  # without one: the line's own diffs
    assert any(a[-2:] == ("--raw", "-z") for a in asked) is not graph
    assert found["src/view.tsx:20-22"].status is Verdict.OUT_OF_RANGE
    assert found["src/view.tsx:20-22"].reason.endswith(
        f"wrong when written; src/view.tsx had those lines at {grown[:7]} ({day(repo, grown)}, "
        "30 lines), before the memory line's commit: the memory may describe that version"
    )
    assert found["src/app.py:40"].reason.endswith(": wrong when written")  # never that long


def test_a_gone_file_is_not_pointed_to_another_modules_file_sharing_only_its_last_folders(
    repo: GitRepo,
) -> None:
    """amitcjmu/Stock-Analysis: a gone `assessment_flow_repository/commands/flow_commands.py`
    is not the one `commands/flow_commands.py` left, of another module."""
    repo.write_lines("repo/assess/cmd/flow.py", code("assess", 5))
    repo.write_lines("repo/discover/cmd/flow.py", code("discover", 5))
    repo.write_lines("web/flow.py", ["web = 1"])
    repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "- repo/assess/cmd/flow.py:2"])
    repo.commit("memory")
    (repo.root / "repo/assess/cmd/flow.py").unlink()
    repo.commit("assess gone")
    found = verdicts(repo)["repo/assess/cmd/flow.py:2"]
    assert found.status is Verdict.MISSING
    assert "the one file" not in found.reason
