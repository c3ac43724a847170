"""Which file a prose mention names, where the path as written does not say alone: the
causes of the wrong verdicts found auditing real stores (docs/benchmarks.md, issue 17,
"Session 26"), each on a real git repository in a temporary folder.

- an author's clone in their home (`~/www/MCP/remembrances-mcp/internal/storage/x.go:72`);
- a bare name of several files, under neighbours naming one's folder (Vecto-Pilot,
  filter_mate, Research);
- a name that only looks like a path (`app.main (line 26)`, `postgresql.pg.svc:5432`);
- lines past the end of a file that the memory line's own commit rewrote (Delcampe);
- a file copied to a new home whose old path was then moved away and deleted (filter_mate).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hostile_support import python_bounded
from memory_enhancement.core.file_list import FileList
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify import blame
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.repo import Repository
from verify_support import GitRepo, code, note


def mentions(repo: GitRepo) -> dict[str, CitationCheck]:
    """The verdicts on the memory's mentions, by the mention as written."""
    service = repo.service()
    result = service.verify("notes").results[0]
    return {c.mention.text: c for c in result.mentions if c.mention is not None}


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    for name in ("server/api/venue.js", "server/lib/venue.js", "server/lib/utils.js", "app.py"):
        repo.write_lines(name, code(name, 12))
    repo.commit("code")
    return repo


# -- the author's home ----------------------------------------------------------------------


def test_a_path_in_the_authors_home_names_the_repository_file_it_ends_with(repo: GitRepo) -> None:
    """remembrances-mcp: `~/www/MCP/remembrances-mcp/internal/storage/surrealdb.go:72`
    was `missing` ("the path leaves the repository"); the file is in the repository."""
    note(repo, "Changed `~/www/project/server/lib/utils.js:3`.")
    repo.commit("memory")
    found = mentions(repo)["~/www/project/server/lib/utils.js:3"]
    assert (found.status, found.current_path) == (Verdict.VALID, "server/lib/utils.js")


def test_a_home_path_naming_no_file_of_the_repository_still_leaves_it(repo: GitRepo) -> None:
    """lane-core/psh: `~/gist/fcmonads.gist.txt:3957` is a note of the author's own."""
    note(repo, "See `~/gist/notes.txt:12`.")
    repo.commit("memory")
    found = mentions(repo)["~/gist/notes.txt:12"]
    assert (found.status, found.reason) == (Verdict.MISSING, "the path leaves the repository")


@pytest.mark.parametrize(
    "written",
    [
        # jmagar/axon's notes: a crate's source in cargo's registry, a sibling project
        "~/.cargo/registry/src/index.crates.io-6f17d22b/chromey-2.38.3/src/lib.rs:3",
        "~/workspace/spider/spider/src/lib.rs:3",
    ],
)
def test_a_home_path_into_another_project_is_not_read_in_this_one(
    repo: GitRepo, written: str
) -> None:
    """A tail of a home path is this repository's file only when the folder above it is
    the repository's (`~/www/project/...` in `project`): any Rust crate has `src/lib.rs`,
    and another project's was read as this one's (and found `valid`)."""
    repo.write_lines("src/lib.rs", code("src/lib.rs", 12))
    repo.commit("crate")
    note(repo, f"See `{written}`.")
    repo.commit("memory")
    found = mentions(repo)[written]
    assert (found.status, found.reason) == (Verdict.MISSING, "the path leaves the repository")


def test_the_file_list_reads_a_home_path_from_its_longest_tail_in_the_repository() -> None:
    files = FileList(["src/x.py", "x.py"])
    assert files.resolve("~/code/app/src/x.py").path == "src/x.py"
    assert files.resolve("~/x.py").outside  # no folder of the repository: the home's own
    assert files.resolve("~/notes/y.py").outside


# -- folders left out (`...`) ----------------------------------------------------------------


def test_a_path_with_folders_left_out_names_the_one_file_it_fits(repo: GitRepo) -> None:
    """loveu8/TravelPlanWithAccounting (413e8f8): `backend/src/main/java/.../config/advice/
    GlobalExceptionHandler.java` was `skipped` as "not a file of this repository", and
    the same path with a line got no verdict of its own: the file is there."""
    java = "backend/src/main/java/com/travel/service/config/advice/Handler.java"
    repo.write_lines(java, code(java, 12))
    repo.commit("java")
    note(
        repo,
        "1. `backend/src/main/java/.../config/advice/Handler.java` - errors",
        "2. backend/src/main/java/.../advice/Handler.java:3 handles them",
    )
    repo.commit("memory")
    found = mentions(repo)
    whole = found["backend/src/main/java/.../config/advice/Handler.java"]
    assert (whole.status, whole.current_path) == (Verdict.VALID, java)
    line = found["backend/src/main/java/.../advice/Handler.java:3"]
    assert (line.status, line.current_path, line.current_line) == (Verdict.VALID, java, 3)


def test_the_file_list_reads_left_out_folders_as_one_folder_or_more() -> None:
    files = FileList(["a/b/c/x/Y.java", "a/b/d/x/Y.java", "a/q/Z.java", "lib/a/b/c/W.java"])
    assert files.resolve("a/.../c/x/Y.java").path == "a/b/c/x/Y.java"
    assert files.resolve("a/.../x/Y.java").candidates == ("a/b/c/x/Y.java", "a/b/d/x/Y.java")
    assert files.resolve(".../q/Z.java").path == "a/q/Z.java"
    assert files.resolve("b/.../W.java").path == "lib/a/b/c/W.java"  # at a folder's start
    assert not files.resolve("a/.../q/Z.java").found  # `...` is a folder at least
    assert files.resolve("b/.../Y.java").candidates == ("a/b/c/x/Y.java", "a/b/d/x/Y.java")
    assert not files.resolve("q/.../Y.java").found


def test_a_past_version_of_the_file_list_knows_its_own_folders() -> None:
    """A list made from HEAD's by `changed` (a past commit's, as `prefetch_trees` makes
    them) shares HEAD's index: its folders are those of its own files, the deleted ones
    back and the added ones out (it answered with HEAD's first folders and raised
    AttributeError for folders at any depth)."""
    now = FileList(["src/app.py", "new/z.py", "a/b/c.py"])
    then = now.changed(added=["new/z.py"], deleted=["old/lib/y.py"])
    assert then.has_folder("old") and then.has_folder_named("lib")
    assert not then.has_folder("new") and not then.has_folder_named("new")
    assert now.has_folder("new") and not now.has_folder_named("lib")


def test_a_path_of_many_left_out_folders_is_read_in_a_moment_not_tried_every_way() -> None:
    """Each `...` stood for a regular expression's `[^/]+(?:/[^/]+)*`: a memory writing a
    dozen of them, the file of its name deep in the repository but not fitting, made the
    matcher try every split of the folders (8 of them took 1.5 s, each more about 3 times
    longer). Every file of the name is still tried, and the fitting one found."""
    done = python_bounded(
        "from memory_enhancement.core.file_list import FileList\n"
        "deep = '/'.join(['d'] * 40) + '/x.py'\n"
        "files = FileList([deep, 'd/y/' + deep])\n"
        "print(files.resolve('d/' + '/'.join(['...'] * 16) + '/z/x.py').found)\n"
        "print(files.resolve('d/y/' + '/'.join(['...'] * 16) + '/x.py').path)\n",
        timeout=30,
    )
    assert done.stdout.split() == ["False", "d/y/" + "/".join(["d"] * 40) + "/x.py"]
    files = FileList(["a/b/c/b/c/x/Y.java", "a/b/x/Y.java"])
    assert files.resolve("b/.../c/.../Y.java").path == "a/b/c/b/c/x/Y.java"
    assert files.resolve("a/.../.../.../Y.java").path == "a/b/c/b/c/x/Y.java"  # three or more
    assert not files.resolve("b/.../b/x/Y.java").found  # `...` is a folder at least


# -- a bare name of several files -------------------------------------------------------------


def lib_venue_moved(repo: GitRepo, *lines: str) -> CitationCheck:
    """The verdict on the memory's `venue.js:4-5` (server/lib/venue.js or server/api/venue.js),
    written on `lines`, after server/lib/venue.js's lines moved one down: it must be read
    in server/lib/ and found moved."""
    note(repo, *lines)
    repo.commit("memory")
    repo.write_lines("server/lib/venue.js", ["// moved down", *code("server/lib/venue.js", 12)])
    repo.commit("code moves")
    found = mentions(repo)["venue.js:4-5"]
    where = (found.status, found.current_path, found.current_line)
    assert where == (Verdict.MOVED, "server/lib/venue.js", 5)
    return found


def test_a_bare_name_of_several_files_is_read_in_the_folder_of_its_neighbour(
    repo: GitRepo,
) -> None:
    """Vecto-Pilot: `venue-intelligence.js:57` under `venue-utils.js:16` (server/lib/venue/)
    was `ambiguous` between server/api/venue/ and server/lib/venue/."""
    found = lib_venue_moved(repo, "- `utils.js:2` parses the hours", "- `venue.js:4-5` evaluates")
    assert found.reason.startswith(
        "venue.js read as server/lib/venue.js, the folder of `utils.js:2` (line 3); found at"
    )


def test_a_bare_name_is_read_in_the_folder_a_file_label_above_it_names(repo: GitRepo) -> None:
    """Research: `run.py line 136` four lines under `**File**: src/phase1/stages/ga_optimize/
    optuna_optimizer.py`, a path that is no mention (no line)."""
    note(repo, "**File**: `server/lib/helpers.ts`", "**Status**: fixed", "", "See venue.js line 7.")
    repo.commit("memory")
    found = mentions(repo)["venue.js line 7"]
    assert (found.status, found.current_path) == (Verdict.VALID, "server/lib/venue.js")
    assert "the folder of `server/lib/helpers.ts` (line 3)" in found.reason


def test_neighbours_are_found_on_the_lines_the_mentions_were_counted_on(repo: GitRepo) -> None:
    """Lines are counted at newlines; a Unicode line separator (pasted from a web page) made
    the neighbours' lines one more, and a label 8 lines under the name fell out of reach."""
    filler = ["Notes\u2028pasted from the dashboard", *(f"- step {n}" for n in range(6))]
    note(repo, "See venue.js line 7.", *filler, "**File**: `server/lib/helpers.ts`")
    repo.commit("memory")
    found = mentions(repo)["venue.js line 7"]
    assert (found.status, found.current_path) == (Verdict.VALID, "server/lib/venue.js")


def test_a_neighbour_mention_tells_its_files_folder_not_the_folder_as_written(
    repo: GitRepo,
) -> None:
    """`lib/helpers.ts:2` is client/lib/helpers.ts: read as written, its `lib` matched
    server/lib/ too, and venue.js was read in server/lib/ on the word of a file that is not
    there."""
    repo.write_lines("client/lib/helpers.ts", code("client/lib/helpers.ts", 12))
    repo.commit("client")
    note(repo, "- `lib/helpers.ts:2` formats the hours", "- `venue.js:4` evaluates them")
    repo.commit("memory")
    found = mentions(repo)["venue.js:4"]
    assert found.status is Verdict.AMBIGUOUS
    assert mentions(repo)["lib/helpers.ts:2"].current_path == "client/lib/helpers.ts"


@pytest.mark.parametrize(
    "lines",
    [
        ["- `venue.js:4` is all it says"],  # no neighbour
        ["- `app.py:2` imports it", "- `venue.js:4`"],  # a neighbour in no candidate's folder
        ["- `server/api/x.js`, `server/lib/y.js`:", "- `venue.js:4`"],  # both folders, as near
    ],
)
def test_a_bare_name_stays_ambiguous_when_its_neighbours_do_not_tell(
    repo: GitRepo, lines: list[str]
) -> None:
    note(repo, *lines)
    repo.commit("memory")
    found = mentions(repo)["venue.js:4"]
    assert found.status is Verdict.AMBIGUOUS
    assert found.candidates == ("server/api/venue.js", "server/lib/venue.js")


# -- names that only look like paths ---------------------------------------------------------


def test_a_name_whose_ending_no_file_has_is_skipped_not_missing(repo: GitRepo) -> None:
    """artStore: `postgresql.pg.svc:5432` (a Kubernetes host) and `app.main (line 26)` (a
    module, the line of the file importing it) were `missing`, failing their memory."""
    note(
        repo,
        "- Database: `postgresql.pg.svc:5432`",
        "- test_upload.py imports app.main (line 26)",
        "- `gone.py:3` was never there",
    )
    repo.commit("memory")
    found = mentions(repo)
    for text, ending in [("postgresql.pg.svc:5432", "svc"), ("app.main (line 26", "main")]:
        assert found[text].status is Verdict.SKIPPED
        assert found[text].reason.endswith(
            f"no file of the repository ends in .{ending}: a name (a module, a host) or another "
            "project's file, not a path of this one"
        )
    assert found["gone.py:3"].status is Verdict.MISSING  # .py files there are: a file's name


def test_a_path_under_a_folder_the_repository_never_had_is_skipped_not_missing(
    repo: GitRepo,
) -> None:
    """lane-core/pane: research notes quoting Haiku's sources (`bhandler/IsWatchedTest.cpp:25`)
    and a crate's (`par-0.3.10/src/exchange.rs:9`) were `missing`, and `health` ranked them
    among the most urgent though no folder of that name was ever in the repository: nothing
    here drifted. A path whose first folder the repository has (at any depth, as a partial
    path may start there) stays `missing`: a file deleted, or a wrong path
    (rjmurillo/ai-agents' `scripts/my_script.py:42` is a made-up example, but nothing tells
    that apart from a typo). Whole-file mentions of such paths were `skipped` already."""
    note(
        repo,
        "- `bhandler/IsWatchedTest.cpp:25` tests it",
        "- `kits/servers/registrar/WatchingService.cpp:112` watches",
        "- `api/registrar/WatchingService.cpp:112` watches too",
        "- `par-0.3.10/src/exchange.rs:9` exchanges",
        "- `server/api/gone.js:3` was never there",
        "- `server/venue/index.js:3` neither",
    )
    repo.commit("memory")
    found = mentions(repo)
    for text, folder in [
        ("bhandler/IsWatchedTest.cpp:25", "bhandler"),
        ("kits/servers/registrar/WatchingService.cpp:112", "kits"),
        ("par-0.3.10/src/exchange.rs:9", "par-0.3.10"),
    ]:
        assert found[text].status is Verdict.SKIPPED, text
        assert found[text].reason.endswith(
            f"; no folder {folder}/ in the repository, now or then: another project's path "
            "or an example, not one of this repository"
        )
    assert found["server/api/gone.js:3"].status is Verdict.MISSING
    assert found["server/venue/index.js:3"].status is Verdict.MISSING
    assert found["api/registrar/WatchingService.cpp:112"].status is Verdict.MISSING  # server/api/


@pytest.mark.parametrize("committed", [True, False])
def test_a_file_deleted_with_the_last_of_its_ending_before_the_memory_line_is_missing(
    repo: GitRepo, committed: bool
) -> None:
    """The skip is for names no file of the repository ever had: a memory line written
    after the only `.coffee` file was deleted (committed or not yet) names a file that is
    gone, and skipping it hid that."""
    repo.write_lines("lib/legacy.coffee", code("lib/legacy.coffee", 12))
    repo.commit("legacy")
    (repo.root / "lib/legacy.coffee").unlink()
    repo.commit("no more coffee")
    note(repo, "- `legacy.coffee:3` parses the hours")
    if committed:
        repo.commit("memory")
    found = mentions(repo)["legacy.coffee:3"]
    assert found.status is Verdict.MISSING


def test_a_store_outside_the_work_tree_asks_history_for_a_name_once_per_head(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store git does not track has its mentions judged by every run; each name no file
    has was looked for in the whole history by each of them (a second per name on
    2,600 commits): the answer is kept while HEAD is the same commit."""
    outside = tmp_path / "notes-store"
    outside.mkdir()
    (outside / "notes.md").write_text("# Notes\n\n- `Tool.ps1:3` runs the checks\n")
    state = State(tmp_path / "state.db")
    asked: list[str] = []
    real = blame.run_git

    def counting(git: Git, *args: str) -> str:
        asked.extend(a for a in args if "icase" in a)
        return real(git, *args)

    monkeypatch.setattr(blame, "run_git", counting)

    def verdict() -> Verdict:
        service = MemoryService(Store(outside), Repository(repo.root), state=state)
        result = service.verify("notes").results[0]
        return next(c.status for c in result.mentions if c.mention is not None)

    assert (verdict(), len(asked)) == (Verdict.SKIPPED, 1)
    assert (verdict(), len(asked)) == (Verdict.SKIPPED, 1)  # the same HEAD: kept
    repo.write_lines("lib/tool.ps1", code("lib/tool.ps1", 5))
    repo.commit("a tool")
    (repo.root / "lib/tool.ps1").unlink()
    repo.commit("no tool")
    assert (verdict(), len(asked)) == (Verdict.MISSING, 2)  # a new HEAD: asked again


# -- the commit that wrote the memory line ----------------------------------------------------


def test_lines_past_the_end_of_a_file_the_memory_commit_rewrote_are_read_as_before(
    repo: GitRepo,
) -> None:
    """Delcampe: notes of an investigation (`ebay_integration.R lines 66-231`) committed with
    the fix that cut the file to 165 lines were `out_of_range`, "wrong when written"."""
    before = repo.commit("nothing yet")
    note(repo, "- Location detection: `server/lib/utils.js` lines 8-11")
    repo.write_lines("server/lib/utils.js", ["// rewritten", "export {};"])
    written = repo.commit("fix, with its notes")
    found = mentions(repo)["server/lib/utils.js` lines 8-11"]
    assert found.status is Verdict.STALE
    assert found.written_in == before
    assert found.reason.startswith(
        f"server/lib/utils.js had 2 lines after the commit that wrote the memory line "
        f"({written[:7]}), which rewrote it; read as it was before: "
    )


def test_a_bare_name_told_apart_by_its_neighbour_is_read_as_before_its_memory_commit_too(
    repo: GitRepo,
) -> None:
    """Stock-Analysis: `service.py` (lines 335-380) beside `task_builder.py`, both of
    gap_analysis/, in the commit that cut service.py to 133 lines."""
    before = repo.commit("nothing yet")
    note(repo, "- `utils.js:2` parses the hours", "- `venue.js:9-11` evaluates them")
    repo.write_lines("server/lib/venue.js", ["// split up"])
    repo.commit("split, with its notes")
    found = mentions(repo)["venue.js:9-11"]
    assert (found.status, found.written_in) == (Verdict.STALE, before)
    assert found.reason.startswith(
        "venue.js read as server/lib/venue.js, the folder of `utils.js:2` (line 3); "
        "server/lib/venue.js had 1 lines after the commit"
    )


def test_lines_past_the_end_of_a_file_the_memory_commit_left_alone_are_wrong_when_written(
    repo: GitRepo,
) -> None:
    note(repo, "- `server/lib/utils.js` lines 8-14")
    repo.commit("notes")
    found = mentions(repo)["server/lib/utils.js` lines 8-14"]
    assert found.status is Verdict.OUT_OF_RANGE
    assert found.reason.endswith("wrong when written")


# -- copies ---------------------------------------------------------------------------------


def test_a_file_copied_to_a_new_home_then_deleted_is_followed_to_the_copy(
    repo: GitRepo,
) -> None:
    """filter_mate: modules/tasks/layer_management_task.py was copied to core/tasks/, worked
    on there, then moved into _backups/ and deleted: `missing`, while its code lives on."""
    repo.write_lines("modules/task.py", code("modules/task.py", 40))
    repo.commit("module")
    note(repo, "The key is found at `modules/task.py:30`.")
    repo.commit("memory")
    repo.write_lines("core/task.py", code("modules/task.py", 40))
    repo.commit("copy into core/")
    rewritten = code("core/task.py", 40)
    rewritten[29] = code("modules/task.py", 40)[29]  # the cited line survives the rewrite
    repo.write_lines("core/task.py", ["# new home", *rewritten])
    repo.commit("work goes on in core/")
    repo.mv("modules/task.py", "_backups/task.py")
    repo.commit("back up the old module")
    (repo.root / "_backups/task.py").unlink()
    repo.commit("drop the backups")
    found = mentions(repo)["modules/task.py:30"]
    assert (found.status, found.renamed_to, found.current_path, found.current_line) == (
        Verdict.MOVED,
        "core/task.py",
        "core/task.py",
        31,
    )


def test_a_bare_name_is_read_as_the_one_file_the_memory_names_in_full_far_from_it(
    repo: GitRepo,
) -> None:
    """rjmurillo/ai-agents: `.claude/skills/github/scripts/pr/new_pr.py` in a memory's first
    lines, `new_pr.py:282` sixteen lines on, out of the neighbours' reach; two files of the
    name (the other under src/copilot-cli/) left it `ambiguous`."""
    filler = [f"- step {n}" for n in range(12)]
    found = lib_venue_moved(
        repo, "`server/lib/venue.js` evaluates hours.", *filler, "`venue.js:4-5`"
    )
    assert found.reason.startswith(
        "venue.js read as server/lib/venue.js, which the memory names at "
        "`server/lib/venue.js` (line 3); found at"
    )


@pytest.mark.parametrize(
    "named",
    [
        ["`server/lib/venue.js` and `server/api/venue.js` both evaluate hours."],  # both
        ["`lib/venue.js` is not `api/venue.js`."],  # both, each by a partial path
        ["See `venue.js:2`, `venue.js:3`."],  # the name alone, again
    ],
)
def test_a_bare_name_stays_ambiguous_when_the_memory_names_no_one_file_in_full(
    repo: GitRepo, named: list[str]
) -> None:
    filler = [f"- step {n}" for n in range(12)]
    note(repo, *named, *filler, "See `venue.js:4`.")
    repo.commit("memory")
    found = mentions(repo)["venue.js:4"]
    assert found.status is Verdict.AMBIGUOUS
    assert found.candidates == ("server/api/venue.js", "server/lib/venue.js")


def copies(repo: GitRepo) -> None:
    """server/api/venue.js made a copy of server/lib/venue.js (a generated tree)."""
    repo.write_lines("server/api/venue.js", code("server/lib/venue.js", 12))
    repo.commit("generated copy")


def test_a_bare_name_of_copies_of_one_file_is_read_in_the_first_of_them(repo: GitRepo) -> None:
    """rjmurillo/ai-agents keeps src/copilot-cli/ as a copy of .claude/: `push_guard_base.py:
    388-395` named two files, one object then and the same bytes now, so either gives the
    same verdict."""
    copies(repo)
    note(repo, "See `venue.js:4`.")
    repo.commit("memory")
    found = mentions(repo)["venue.js:4"]
    assert (found.status, found.current_path) == (Verdict.VALID, "server/api/venue.js")
    assert found.reason.startswith(
        "venue.js read as server/api/venue.js, the same file then and now as server/lib/venue.js; "
    )


def test_copies_that_part_ways_after_the_memory_leave_the_name_ambiguous(repo: GitRepo) -> None:
    copies(repo)
    note(repo, "See `venue.js:4`.")
    repo.commit("memory")
    repo.write_lines(
        "server/lib/venue.js", ["// edited here only", *code("server/lib/venue.js", 12)]
    )
    repo.commit("one copy moves on")
    found = mentions(repo)["venue.js:4"]
    assert found.status is Verdict.AMBIGUOUS
    assert found.candidates == ("server/api/venue.js", "server/lib/venue.js")


def test_a_fifo_where_a_copy_was_is_not_read(repo: GitRepo) -> None:
    copies(repo)
    note(repo, "See `venue.js:4`.")
    repo.commit("memory")
    (repo.root / "server/lib/venue.js").unlink()
    os.mkfifo(repo.root / "server/lib/venue.js")
    found = mentions(repo)["venue.js:4"]  # returns: the FIFO is never opened
    assert found.status is Verdict.AMBIGUOUS  # not the same bytes now: no longer copies


def test_a_file_mention_of_copies_says_how_its_file_was_chosen(repo: GitRepo) -> None:
    """`issue/close_issue.py` in ai-agents named .claude/skills/github/scripts/issue/ and
    src/copilot-cli/skills/github/scripts/issue/ copies: `valid`, and the reason says why
    that file."""
    repo.write_lines("client/lib/venue.js", code("server/lib/venue.js", 12))
    repo.commit("generated copy")
    note(repo, "The hours are in `lib/venue.js`.")
    repo.commit("memory")
    found = mentions(repo)["lib/venue.js"]
    assert (found.status, found.current_path) == (Verdict.VALID, "client/lib/venue.js")
    assert found.reason == (
        "lib/venue.js read as client/lib/venue.js, the same file then and now as "
        "server/lib/venue.js; the file is there"
    )
