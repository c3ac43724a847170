"""File mentions: a backticked path with no line (`src/app.py`), the way most real memories
name their code. Real git repositories in temporary folders: the grammar, each verdict, the
fallback without history, `--fix` renaming the path, the cache, and health counting them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from conftest import RunCli
from memory_enhancement.core.file_mentions import FILE
from memory_enhancement.core.mentions import find_mentions, may_mention
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.store.state import State
from verify_support import STORE, GitRepo, code, fixed_service, form_checks, git_commands, note

# -- the grammar ----------------------------------------------------------------------------


def test_a_backticked_path_with_a_folder_is_a_file_mention_and_nothing_else_is() -> None:
    text = "\n".join([
        "See `src/app/handler.py`, `./lib/x.dart` and `app/[id]/page.tsx`.",  # 3
        "Not: `package.json`, `cat src/a.py`, `github.com/o/r/README.md`, `../up/x.py`,",
        "`~/x/y.md`, `gopkg.in/yaml.v3`, `src/folder/`, src/bare/path.py, `src/a.py:12`.",
        "```",
        "`src/in/code.py`",
        "```",
    ])  # fmt: skip
    found = find_mentions(text)
    files = [(m.line, m.column, m.text) for m in found if m.form == FILE]
    assert files == [
        (1, 5, "src/app/handler.py"),
        (1, 27, "./lib/x.dart"),
        (1, 46, "app/[id]/page.tsx"),
    ]
    assert [m.text for m in found if m.form != FILE] == ["src/folder/", "src/a.py:12"]
    assert [m.form for m in found if m.form != FILE] == ["folder", "colon"]  # a folder's, a line's
    assert all(m.start is None and m.start_at is None for m in found if m.form == FILE)
    assert may_mention(b"x `src/a.py` y") and not may_mention(b"`src/x` and `a.py` and src/b.py")


def test_a_git_range_is_no_file_mention() -> None:
    """ai-agents: `git diff `origin/main...HEAD`` was a file mention, `skipped` as no file."""
    found = find_mentions("Diff `origin/main...HEAD`, `origin/main..HEAD` and `src/a..b.py`.")
    assert found == []


def test_a_path_with_its_lines_in_words_stays_one_line_mention() -> None:
    found = find_mentions("The handler: `src/app.py` lines 3-4.\n")
    assert [(m.form, m.start, m.end) for m in found] == [("words", 3, 4)]


# -- verdicts -------------------------------------------------------------------------------


service = fixed_service


def checks(
    repo: GitRepo, name: str = "notes", state: State | None = None
) -> dict[str, CitationCheck]:
    """The verdicts on a memory's file mentions, by the mention as written."""
    return form_checks(repo, FILE, name, state)


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    for name in ["src/app.py", "lib/old.py", "src/gone.py", "pkg/a/util.py", "pkg/b/util.py"]:
        repo.write_lines(name, code(name, 10))
    repo.write_lines("docs/removed.md", ["# removed before the memory"])
    repo.commit("code")
    (repo.root / "docs/removed.md").unlink()
    repo.commit("remove a doc")
    return repo


def test_each_verdict_says_what_became_of_the_file_since_the_memory_line_was_written(
    repo: GitRepo,
) -> None:
    note(
        repo,
        "- `src/app.py` is there",
        "- `app.py` is not a file mention (no folder); `core/app.py` resolves by its ending",
        "- `lib/old.py` was renamed",
        "- `src/gone.py` was deleted",
        "- `docs/removed.md` was removed before the memory was written",
        "- `examples/demo.py` never was a file here",
        "- `util.py` has no folder; `a/util.py` ends one file, `util/x.py` none",
    )
    written = repo.commit("memory")
    repo.mv("lib/old.py", "lib/new.py")
    (repo.root / "src/gone.py").unlink()
    repo.commit("rename and delete")
    found = checks(repo)
    assert {path: c.status for path, c in found.items()} == {
        "src/app.py": Verdict.VALID,
        "core/app.py": Verdict.SKIPPED,  # no file ends with it, then or now
        "lib/old.py": Verdict.MOVED,
        "src/gone.py": Verdict.MISSING,
        "docs/removed.md": Verdict.SKIPPED,
        "examples/demo.py": Verdict.SKIPPED,
        "a/util.py": Verdict.VALID,
        "util/x.py": Verdict.SKIPPED,
    }
    renamed = found["lib/old.py"]
    assert (renamed.renamed_to, renamed.current_path, renamed.written_in) == (
        "lib/new.py", "lib/new.py", written,
    )  # fmt: skip
    assert f"renamed to lib/new.py since the memory line was written ({written[:7]})" in (
        renamed.reason
    )
    assert "after the memory line was written" in found["src/gone.py"].reason
    assert found["a/util.py"].current_path == "pkg/a/util.py"
    assert "deleted before it was written, in " in found["docs/removed.md"].reason  # git knew
    assert "not a file of this repository then" in found["examples/demo.py"].reason
    assert "of that name" not in found["docs/removed.md"].reason  # none: nothing to point to
    assert "of that name" not in found["util/x.py"].reason


def test_a_path_that_never_was_a_file_names_the_one_file_of_that_name_elsewhere(
    repo: GitRepo,
) -> None:
    """kahwei-loo/doctify (f6586d4): `frontend/src/features/knowledge-base/pages/
    KnowledgeBasePage.tsx` was skipped as "removed before, to be created, an example" with
    no word of frontend/src/pages/KnowledgeBasePage.tsx, the file the memory meant."""
    note(repo, "- `web/pages/app.py` is the page", "- `web/pages/util.py` are its helpers")
    repo.commit("memory")
    found = checks(repo)
    wrong = found["web/pages/app.py"]
    assert wrong.status is Verdict.SKIPPED  # still no claim that rotted: only a pointer
    assert wrong.reason.endswith("; the one file of that name now is src/app.py")
    assert "of that name" not in found["web/pages/util.py"].reason  # two: no one to name


def test_a_path_read_as_a_files_that_is_a_folder_now_is_there(repo: GitRepo) -> None:
    """Kronos1993/Multiplatform-Weather-App (df51309): `iosApp/iosApp.xcodeproj`, an Xcode
    bundle (a folder), was skipped as "no file iosApp/iosApp.xcodeproj now nor when the
    memory line was written" while the repository had it."""
    repo.write_lines("ios/App.xcodeproj/project.pbxproj", ["// !$*UTF8*$!"])
    repo.commit("bundle")
    note(repo, "- open `ios/App.xcodeproj` in Xcode", "- or `ios/Gone.xcodeproj`")
    repo.commit("memory")
    found = checks(repo)
    bundle = found["ios/App.xcodeproj"]
    assert bundle.status is Verdict.VALID
    assert bundle.reason == "the folder is there, a folder of files rather than a file"
    assert found["ios/Gone.xcodeproj"].status is Verdict.SKIPPED  # no folder either: as before


def test_a_deleted_file_whose_name_lives_on_in_one_other_folder_says_where(
    repo: GitRepo,
) -> None:
    """MongLong0214/stock-ai-newsletter moved `scripts/tli/snapshot-predictions.ts` into
    `scripts/tli/comparison/` and rewrote it (no rename git pairs): the mention is
    `missing`, and its reason names the one file of that name now, as a line mention's
    does; a name several files have points nowhere."""
    note(repo, "- `src/gone.py` and src/gone.py:3", "- `pkg/a/util.py`")
    repo.commit("memory")
    (repo.root / "src/gone.py").unlink()
    repo.write_lines("src/new/gone.py", ["rewritten = True"])
    (repo.root / "pkg/a/util.py").unlink()
    repo.write_lines("lib/util.py", ["helpers = True"])
    repo.commit("gone.py rewritten in another folder; a/util.py deleted, two util.py left")
    result = service(repo).verify("notes").results[0]
    reasons = {(c.mention.text, c.status): c.reason for c in result.mentions if c.mention}
    hint = "; the one file of that name now is src/new/gone.py"
    assert reasons[("src/gone.py", Verdict.MISSING)].endswith(hint)
    assert reasons[("src/gone.py:3", Verdict.MISSING)].endswith(hint)
    assert "of that name" not in reasons[("pkg/a/util.py", Verdict.MISSING)]


def test_a_partial_path_naming_several_files_is_ambiguous(repo: GitRepo) -> None:
    repo.write_lines("other/pkg/a/util.py", code("x", 3))
    note(repo, "- `pkg/a/util.py` exact, `a/util.py` two files end with it")
    repo.commit("memory")
    found = checks(repo)
    assert found["pkg/a/util.py"].status is Verdict.VALID
    assert found["a/util.py"].status is Verdict.AMBIGUOUS
    assert set(found["a/util.py"].candidates) == {"pkg/a/util.py", "other/pkg/a/util.py"}


def test_a_line_not_committed_yet_or_no_history_is_read_against_the_work_tree(
    repo: GitRepo, tmp_path: Path
) -> None:
    note(repo, "- `src/app.py` and `src/planned.py`")  # never committed: no history
    found = checks(repo)
    assert found["src/app.py"].status is Verdict.VALID
    assert found["src/planned.py"].status is Verdict.UNCHECKED
    assert "no history" in found["src/planned.py"].reason
    repo.commit("memory")
    note(repo, "- `src/app.py` and `src/planned.py`", "- pending: `src/next.py`")
    found = checks(repo)
    assert found["src/next.py"].status is Verdict.SKIPPED  # to be created, perhaps
    assert "not committed yet" in found["src/next.py"].reason
    assert found["src/planned.py"].status is Verdict.SKIPPED  # committed: never a file


def test_a_memory_naming_only_files_that_are_there_asks_git_nothing_about_its_history(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    note(repo, "- `src/app.py` and `lib/old.py`")
    repo.commit("memory")
    asked = git_commands(monkeypatch)
    state = State(repo.root / "state.db")
    assert {c.status for c in checks(repo, state=state).values()} == {Verdict.VALID}
    assert not {"blame", "diff-tree"} & {a[0] for a in asked}
    repo.mv("lib/old.py", "lib/new.py")  # now one needs history: the memory file is traced
    repo.commit("rename")
    found = checks(repo, state=state)
    assert (found["lib/old.py"].status, found["lib/old.py"].renamed_to) == (
        Verdict.MOVED, "lib/new.py",
    )  # fmt: skip
    again = checks(repo, state=state)  # from the cache, the same
    assert {k: (c.status, c.reason) for k, c in again.items()} == {
        k: (c.status, c.reason) for k, c in found.items()
    }


def test_a_partial_path_that_now_ends_another_file_is_followed_from_the_file_it_named(
    repo: GitRepo,
) -> None:
    """hluisi/pause-monitor's `tui/app.py` was renamed; an archived copy elsewhere ends with
    the same path now. The file named when the line was written is what is followed."""
    repo.write_lines("src/tui/app.py", code("src/tui/app.py", 10))
    note(repo, "- `tui/app.py` draws the screen")
    repo.commit("memory")
    repo.mv("src/tui/app.py", "src/ui/app.py")
    repo.write_lines("archive/tui/app.py", ["# an old copy"])
    repo.commit("rename, archive")
    check = checks(repo)["tui/app.py"]
    assert (check.status, check.renamed_to) == (Verdict.MOVED, "src/ui/app.py")


def test_a_partial_path_of_several_files_settled_by_its_neighbours_is_judged(
    repo: GitRepo,
) -> None:
    """Two files end with `a/util.py`; the path named beside it says which folder."""
    repo.write_lines("other/a/util.py", code("x", 3))
    repo.write_lines("pkg/a/helpers.py", code("y", 3))
    note(repo, "- `a/util.py` with `pkg/a/helpers.py`")
    repo.commit("memory")
    found = checks(repo)
    assert found["a/util.py"].status is Verdict.VALID
    assert found["a/util.py"].current_path == "pkg/a/util.py"


def test_a_path_in_any_script_is_a_file_mention(repo: GitRepo) -> None:
    """`docs/要件定義書_EscapeNine.md` (kamui00002/escape-nine-endless's memories)."""
    text = "- 仕様は`docs/要件定義書.md`を参照\n"
    assert [m.text for m in find_mentions(text)] == ["docs/要件定義書.md"]
    assert may_mention(text.encode())
    repo.write_lines("docs/要件定義書.md", ["# 要件"])
    note(repo, text.rstrip("\n"))
    repo.commit("memory")
    repo.mv("docs/要件定義書.md", "docs/仕様書.md")
    repo.commit("rename")
    check = checks(repo)["docs/要件定義書.md"]
    assert (check.status, check.renamed_to) == (Verdict.MOVED, "docs/仕様書.md")


def test_a_file_there_when_its_memory_was_traced_is_traced_again_once_it_is_gone(
    repo: GitRepo,
) -> None:
    """A memory traced for its line mention keeps no history of the files it names that
    are there (none was asked); once one is deleted, the next run traces the memory again."""
    note(repo, "- `src/app.py:3` and `src/gone.py`")
    written = repo.commit("memory")
    state = State(repo.root / "state.db")
    assert checks(repo, state=state)["src/gone.py"].status is Verdict.VALID
    (repo.root / "src/gone.py").unlink()
    repo.commit("delete")
    gone = checks(repo, state=state)["src/gone.py"]
    assert (gone.status, gone.written_in) == (Verdict.MISSING, written)


def test_a_path_from_the_root_with_a_leading_slash_is_a_file_mention_of_this_repository(
    repo: GitRepo,
) -> None:
    """`/app/globals.css`, `/docs/PRD.md` (JeremyDong22/MansionOfSmartICE's, 4lisson777/
    shinobiops's memories): the slash is the repository root, and is not part of the path,
    so `--fix` keeps it. A machine's folders (`/etc/`, `/Users/`) are read by the grammar
    and left out by the verifier here: this repository has no such folder."""
    text = "- `/src/app.py`, `/lib/old.py`; not `/etc/app/x.conf` nor `/Users/me/src/app.py`"
    assert [(m.column, m.text, m.rooted) for m in find_mentions(text)] == [
        (4, "src/app.py", True), (19, "lib/old.py", True), (38, "etc/app/x.conf", True),
        (60, "Users/me/src/app.py", True),
    ]  # fmt: skip
    assert may_mention(b"see `/docs/PRD.md`")
    note(repo, text)
    repo.commit("memory")
    repo.mv("lib/old.py", "lib/new.py")
    repo.commit("rename")
    found = checks(repo)
    assert set(found) == {"src/app.py", "lib/old.py"}
    assert found["src/app.py"].status is Verdict.VALID
    assert (found["lib/old.py"].status, found["lib/old.py"].renamed_to) == (
        Verdict.MOVED, "lib/new.py",
    )  # fmt: skip


def test_a_file_in_a_submodule_is_there_when_checked_out_and_says_so_when_not(
    repo: GitRepo,
) -> None:
    """All a whole file's mention claims is that the file is there: in a submodule that is
    checked out, the work tree tells (a line mention there would need the submodule's own
    history); not checked out, it says so (NEXTAltair/LoRAIro's `local_packages/...`)."""
    (repo.root / "vendor/sub").mkdir(parents=True)
    repo.git("update-index", "--add", "--cacheinfo", "160000," + "1" * 40 + ",vendor/sub")
    note(repo, "- `vendor/sub/lib/x.py` and `vendor/sub/lib/y.py`")
    repo.commit("memory and submodule")
    (repo.root / "vendor/sub/lib").mkdir()
    (repo.root / "vendor/sub/lib/x.py").write_text("x = 1\n")  # as a checkout would
    found = checks(repo)
    assert (found["vendor/sub/lib/x.py"].status, found["vendor/sub/lib/x.py"].reason) == (
        Verdict.VALID, "the file is there (in submodule vendor/sub)",
    )  # fmt: skip
    assert found["vendor/sub/lib/y.py"].status is Verdict.IN_SUBMODULE


# -- the command line -----------------------------------------------------------------------


@pytest.fixture
def cli(repo: GitRepo, run_cli: RunCli) -> Any:
    def run(*args: str) -> Result:
        return run_cli([*args, "--dir", str(repo.store_root)], cwd=repo.root)

    return run


def test_fix_writes_a_renamed_files_new_path_and_keeps_every_other_byte(
    repo: GitRepo, cli: Any
) -> None:
    text = "\ufeff# Notes\r\n\r\n- see `lib/old.py` — and `src/app.py`\r\nno newline"
    file = repo.write(f"{STORE}/notes.md", text.encode("utf-8"))
    repo.commit("memory")
    repo.mv("lib/old.py", "lib/new.py")
    repo.commit("rename")
    dry = cli("verify-all", "--fix", "--dry-run")
    assert "+- see `lib/new.py` — and `src/app.py`" in dry.stdout
    assert file.read_bytes() == text.encode("utf-8")
    cli("verify", "notes", "--fix")
    assert file.read_bytes() == text.replace("lib/old.py", "lib/new.py").encode("utf-8")
    after = json.loads(cli("verify", "notes", "--json").stdout)
    statuses = {c["mention"]: c["status"] for c in after["mentions"] if c["form"] == FILE}
    assert statuses == {"lib/new.py": "valid", "src/app.py": "valid"}


def test_fix_of_a_path_from_the_root_keeps_its_slash_and_the_report_shows_no_line(
    repo: GitRepo, cli: Any
) -> None:
    file = note(repo, "- `/lib/old.py` and `src/app.py`")
    repo.commit("memory")
    repo.mv("lib/old.py", "lib/new.py")
    repo.commit("rename")
    report = cli("verify-all")
    assert "lib/old.py (memory line 3) -> lib/new.py  renamed to lib/new.py" in report.stdout
    assert ":None" not in report.stdout
    cli("verify-all", "--fix")
    assert file.read_text(encoding="utf-8").splitlines()[2] == "- `/lib/new.py` and `src/app.py`"


def test_health_counts_file_mentions_so_a_memory_naming_a_deleted_file_ranks_first(
    repo: GitRepo, cli: Any
) -> None:
    note(repo, "- `src/app.py` holds the app", name="fine")
    note(repo, "- `src/gone.py` holds the cache", name="rotted")
    note(repo, "- no file named here", name="plain")
    repo.commit("memories")
    (repo.root / "src/gone.py").unlink()
    repo.commit("delete")
    report = json.loads(cli("health", "--json").stdout)
    ranked = [m["path"] for m in report["memories"]]
    assert ranked.index("rotted") < ranked.index("fine")
    uncited = {m["path"] for m in report["memories"] if "uncited" in m["flags"]}
    assert uncited == {"plain"}
    rotted = next(m for m in report["memories"] if m["path"] == "rotted")
    assert (rotted["status"], rotted["mentions"]["missing"]) == ("missing", 1)


def test_a_file_deleted_from_the_work_tree_and_not_committed_is_not_there(
    repo: GitRepo,
) -> None:
    """Git still lists it, but the file mention claims the file is there, and a line
    mention of the same file is read from the work tree: both say it is gone."""
    note(repo, "- `src/gone.py` and `src/app.py` hold the app")
    written = repo.commit("memory")
    state = State(repo.root / "state.db")
    assert checks(repo, state=state)["src/gone.py"].status is Verdict.VALID
    (repo.root / "src/gone.py").unlink()
    gone = checks(repo, state=state)["src/gone.py"]
    assert (gone.status, gone.written_in) == (Verdict.MISSING, written)
    assert checks(repo)["src/app.py"].status is Verdict.VALID


def test_github_annotations_leave_out_paths_that_were_never_files_here(
    repo: GitRepo, cli: Any
) -> None:
    """A skipped mention (an example path, a file to be created) says nothing either way,
    as docs/cli.md has it: annotating each would bury the renames under notices (GitHub
    shows a few per step), and real stores name dozens of such paths."""
    note(repo, "- `lib/old.py` and `examples/demo.py`, `docs/removed.md`")
    repo.commit("memory")
    repo.mv("lib/old.py", "lib/new.py")
    repo.commit("rename")
    lines = cli("verify-all", "--format", "github").stdout.splitlines()
    notices = [line for line in lines if line.startswith("::")]
    assert len(notices) == 1 and "renamed mention lib/old.py" in notices[0]


def test_a_mention_whose_line_changed_in_a_renamed_file_is_shown_stale_not_renamed(
    repo: GitRepo, cli: Any
) -> None:
    """`lib/old.py:3`, its line edited and its file renamed: the verdict is `stale` with
    the new name (`--json`, the summary), and the text and the annotations said `RENAMED`
    and `renamed mention`, as for a mention `--fix` rewrites (the QA round's scratch
    commits on a Spring service)."""
    note(repo, "- lib/old.py:3 and lib/old.py:5")
    repo.commit("memory")
    lines = code("lib/old.py", 10)
    lines[2] = "changed = 3"
    repo.write_lines("lib/old.py", lines)
    repo.mv("lib/old.py", "lib/new.py")
    repo.commit("edit and rename")
    text = cli("verify-all").stdout
    stale = "mention STALE        lib/old.py:3 (memory line 3)  file was renamed to lib/new.py"
    assert stale in text
    assert "mention RENAMED      lib/old.py:5 (memory line 3) -> lib/new.py:5" in text
    assert "2 mentions: 1 moved, 1 stale" in text
    annotations = cli("verify-all", "--format", "github").stdout.splitlines()
    assert [a.split("::")[1].split(" ")[0] for a in annotations if a.startswith("::")] == [
        "warning", "notice",
    ]  # fmt: skip
    assert "::stale mention lib/old.py:3: file was renamed to lib/new.py" in annotations[0]
    assert "::renamed mention lib/old.py:5" in annotations[1]


def test_a_memory_kept_from_the_files_alone_is_traced_once_a_file_it_names_is_deleted(
    repo: GitRepo,
) -> None:
    """Run 1 caches the memory with no history read (every file there); the deletion is
    committed, then the memory is edited: each run says what became of the file."""
    note(repo, "- `src/gone.py` here, twice: `src/gone.py`")
    written = repo.commit("memory")
    state = State(repo.root / "state.db")
    assert checks(repo, state=state)["src/gone.py"].status is Verdict.VALID
    (repo.root / "src/gone.py").unlink()
    repo.commit("delete")
    gone = checks(repo, state=state)["src/gone.py"]
    assert (gone.status, gone.written_in) == (Verdict.MISSING, written)
    note(repo, "- `src/gone.py` here, twice: `src/gone.py`", "- and `src/app.py`")
    repo.commit("edit")
    again = checks(repo, state=state)
    assert (again["src/gone.py"].status, again["src/app.py"].status) == (
        Verdict.MISSING, Verdict.VALID,
    )  # fmt: skip


def test_a_kept_missing_verdict_stops_naming_the_one_file_of_that_name_once_it_is_deleted(
    repo: GitRepo, tmp_path: Path
) -> None:
    """The reason of a `missing` (or `skipped`) mention names the one file of that name now;
    a rerun that keeps the verdicts must not name it after that file is deleted (not
    staged: HEAD and git's index as they were), as a fresh run would not."""
    note(repo, "- `src/gone.py` and src/gone.py:3", "- `web/never.py`")
    repo.commit("memory")
    (repo.root / "src/gone.py").unlink()
    repo.write_lines("src/new/gone.py", ["rewritten = True"])
    repo.write_lines("lib/never.py", ["here = True"])
    repo.commit("gone.py rewritten in another folder")
    state = State(tmp_path / "state.db")

    def reasons(state: State) -> list[str]:
        result = service(repo, state).verify("notes").results[0]
        return sorted(c.reason for c in result.mentions)

    first = reasons(state)
    assert sum("the one file of that name now is" in r for r in first) == 3
    (repo.root / "src/new/gone.py").unlink()
    (repo.root / "lib/never.py").unlink()
    fresh = reasons(State(tmp_path / "fresh.db"))
    assert not any("of that name" in r for r in fresh)
    assert reasons(state) == fresh


def _rename_diffs(asked: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The `git diff -M <commit> HEAD -- <paths>` a run asked (mention_diffs.mention_git)."""
    return [a for a in asked if "diff" in a[:2] and "-M" in a and "--" in a]


def test_a_gone_file_whose_exact_rename_is_known_asks_no_diff_of_the_files_named_like_it(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The diff from the mention's commit among the gone file and the files named like it
    can pair only files deleted since with files added since; once every gone file of the
    commit has its rename, and no file named like it is staged as added, it has nothing to
    add (5 of rjmurillo/ai-agents' 35 such diffs, a process each)."""
    note(repo, "- `src/app.py` starts it")
    repo.commit("memory")
    repo.mv("src/app.py", "pkg/app.py")  # unchanged: an exact rename
    repo.write_lines("lib/app_extra.py", ["# named like it"])
    repo.commit("move")
    asked = git_commands(monkeypatch)
    found = checks(repo)["src/app.py"]
    assert (found.status, found.renamed_to) == (Verdict.MOVED, "pkg/app.py")
    assert _rename_diffs(asked) == []
    repo.write_lines("new/app.py", ["# staged, not committed"])
    repo.git("add", "new/app.py")  # in git's index, not at HEAD: the diff is asked again
    again = checks(repo)["src/app.py"]
    assert (again.status, again.renamed_to, again.reason) == (
        found.status, found.renamed_to, found.reason,
    )  # fmt: skip
    (diff,) = _rename_diffs(asked)
    assert "new/app.py" in diff[diff.index("--") + 1 :]


def test_a_gone_files_namesakes_that_cannot_be_its_rename_ask_no_diff(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git pairs a file deleted since with one added since, never two of which one is more
    than twice the other's size (not 50% alike): a gone file whose only namesake added
    since is three times its size asks no `git diff -M` (8 of rjmurillo/ai-agents' 30 such
    diffs, a process each, none naming a rename). One edited into a namesake of its size
    still does, and is followed."""
    note(repo, "- `src/app.py` starts it")
    repo.commit("memory")
    note(repo, "- `src/app.py` starts it", "- `src/gone.py` helps")
    repo.commit("memory, a line more")  # its own commit: a diff of its own
    (repo.root / "src/app.py").unlink()
    repo.write_lines("tools/app_report.py", code("report", 30))  # three times the size
    source = code("src/gone.py", 10)
    (repo.root / "src/gone.py").unlink()
    repo.write_lines("lib/gone_v2.py", [*source[:8], "edited = 1", "edited = 2"])
    repo.commit("rework")
    asked = git_commands(monkeypatch)
    found = checks(repo)
    assert found["src/app.py"].status is Verdict.MISSING
    assert (found["src/gone.py"].status, found["src/gone.py"].renamed_to) == (
        Verdict.MOVED, "lib/gone_v2.py",
    )  # fmt: skip
    (diff,) = _rename_diffs(asked)
    assert "lib/gone_v2.py" in diff and "tools/app_report.py" not in diff
