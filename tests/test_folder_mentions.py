"""Folder mentions: a backticked folder (`src/api/handlers/`), the way memories describe a
project's layout. Real git repositories in temporary folders: the grammar (and what it
leaves alone), each verdict, the fallback without history, `--fix` renaming the folder, the
cache on a rerun, and health counting them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_enhancement.core.folder_mentions import FOLDER
from memory_enhancement.core.mentions import find_mentions, may_mention
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.store.state import State
from verify_support import STORE, GitRepo, fixed_service, form_checks, git_commands, note, store_cli

# -- the grammar ----------------------------------------------------------------------------


def test_a_backticked_or_bold_path_ending_with_a_slash_is_a_folder_mention() -> None:
    text = "\n".join([
        "Handlers live in `src/api/handlers/`, docs in **docs/** and __lib/__; `./app/`.",
        "Routes: `app/[id]/`, from the root `/templates/`; a file: `src/app.py`.",
        "```",
        "`in/code/`",
        "```",
    ])  # fmt: skip
    found = [(m.line, m.column, m.text, m.path, m.rooted) for m in find_mentions(text)
             if m.form == FOLDER]  # fmt: skip
    assert found == [
        (1, 18, "src/api/handlers/", "src/api/handlers", False),
        (1, 48, "docs/", "docs", False),
        (1, 62, "lib/", "lib", False),
        (1, 71, "./app/", "./app", False),
        (2, 9, "app/[id]/", "app/[id]", False),
        (2, 37, "templates/", "templates", True),
    ]
    mention = next(m for m in find_mentions(text) if m.form == FOLDER)
    assert mention.start is None and mention.ref_text == "src/api/handlers/"
    assert may_mention(b"in `src/api/` only") and may_mention(b"**docs/**")


def test_what_is_not_a_folder_mention() -> None:
    text = "\n".join([
        "`~/.claude/` `/usr/local/` `/tmp/x/` `src/**/` `.claude/skills/*/` `file:///x/`",
        "`mongodb://` `../up/` `./` `../` `github.com/owner/` `src/claude` `a/b.py:3`",
        "`cd src/` a__b/__ `-/` `{team}/` ``src/x/`` `src/ x/`",
    ])  # fmt: skip
    assert [m.text for m in find_mentions(text) if m.form == FOLDER] == []


# -- verdicts -------------------------------------------------------------------------------


service = fixed_service


def checks(
    repo: GitRepo, name: str = "notes", state: State | None = None
) -> dict[str, CitationCheck]:
    """The verdicts on a memory's folder mentions, by the mention as written."""
    return form_checks(repo, FOLDER, name, state)


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    for name in [
        "src/tools/a.py", "src/tools/b.py", "src/tools/sub/c.py", "src/api/handlers/h.py",
        "old/x.py", "old/y.py", "pkg/a/util/u.py", "pkg/b/util/u.py", "docs/readme.md",
    ]:  # fmt: skip
        repo.write_lines(name, [f"# {name}", "x = 1"])
    repo.write(".gitignore", "dist/\n")
    repo.commit("code")
    return repo


def test_a_folder_there_is_valid_from_the_root_or_by_its_ending(repo: GitRepo) -> None:
    note(repo, "`src/tools/`, `handlers/`, `./docs/`, **src/api/**, `/src/`")
    repo.commit("memory")
    found = checks(repo)
    assert {k: c.status for k, c in found.items()} == {
        "src/tools/": Verdict.VALID, "handlers/": Verdict.VALID, "./docs/": Verdict.VALID,
        "src/api/": Verdict.VALID, "src/": Verdict.VALID,
    }  # fmt: skip
    assert found["handlers/"].current_path == "src/api/handlers"
    assert "as src/api/handlers/" in found["handlers/"].reason


def test_a_folder_renamed_since_is_moved_to_where_most_of_its_files_went(repo: GitRepo) -> None:
    note(repo, "Tools live in `src/tools/`.")
    written = repo.commit("memory")
    repo.mv("src/tools", "lib/tools")
    repo.commit("move")
    found = checks(repo)["src/tools/"]
    assert found.status is Verdict.MOVED
    assert (found.renamed_to, found.written_in) == ("lib/tools", written)
    assert "3 of the 3 files src/tools/ held" in found.reason


def test_the_rename_diff_asks_only_the_folders_files_and_those_named_like_them(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole-tree `git diff -M` from an old commit compared every file added since with
    every file deleted (0.72 s of CPU for one commit of the shared corpus): the folder's
    files then and the files now named like them are all the pairs it needs."""
    note(repo, "Tools live in `src/tools/`.")
    repo.commit("memory")
    repo.mv("src/tools", "lib/tools")
    repo.mv("docs/readme.md", "manual/readme.md")  # a rename the folder's verdict needs not
    repo.write_lines("lib/other/a.py", ["# another a.py", "y = 2"])
    repo.commit("move")
    asked = git_commands(monkeypatch)
    found = checks(repo)["src/tools/"]
    assert (found.status, found.renamed_to) == (Verdict.MOVED, "lib/tools")
    (diff,) = [a for a in asked if a[:3] == ("--literal-pathspecs", "diff", "-M")]
    assert sorted(diff[diff.index("--") + 1 :]) == [
        "lib/other/a.py", "lib/tools/a.py", "lib/tools/b.py", "lib/tools/sub/c.py",
        "src/tools/a.py", "src/tools/b.py", "src/tools/sub/c.py",
    ]  # fmt: skip


def test_a_folder_deleted_since_is_missing_and_its_leftover_ignored_files_do_not_hide_it(
    repo: GitRepo,
) -> None:
    note(repo, "Old code in `old/`, tools in `src/tools/`.")
    repo.commit("memory")
    repo.git("rm", "-q", "-r", "old")
    repo.mv("src/tools", "lib/tools")
    repo.commit("delete old/, move tools")
    repo.write("src/tools/__pycache__/a.pyc", b"\0")  # left behind, untracked
    found = checks(repo)
    assert found["old/"].status is Verdict.MISSING
    assert "held 2 files" in found["old/"].reason
    assert found["src/tools/"].status is Verdict.MOVED


def test_a_folder_deleted_since_names_the_commit_its_last_file_went_in(repo: GitRepo) -> None:
    note(repo, "Old code in `old/`.")
    repo.commit("memory")
    repo.git("rm", "-q", "old/x.py")
    first = repo.commit("delete x")
    repo.write("elsewhere.py", b"pass\n")
    repo.commit("unrelated")
    repo.git("rm", "-q", "old/y.py")
    last = repo.commit("delete y")
    found = checks(repo)["old/"]
    assert found.status is Verdict.MISSING
    assert f"git tracks none of them now (the last of them gone in {last[:7]}, " in found.reason
    assert first[:7] not in found.reason


def test_a_folder_deleted_and_not_committed_is_missing(repo: GitRepo) -> None:
    note(repo, "Old code in `old/`.")
    repo.commit("memory")
    for name in ("x.py", "y.py"):
        (repo.root / "old" / name).unlink()
    (repo.root / "old").rmdir()
    found = checks(repo)["old/"]
    assert found.status is Verdict.MISSING
    assert "deleted, not committed" in found.reason


def test_a_folder_split_up_is_missing_with_where_some_went(repo: GitRepo) -> None:
    note(repo, "`src/tools/`")
    repo.commit("memory")
    repo.mv("src/tools/a.py", "lib/one/a.py")
    repo.mv("src/tools/b.py", "lib/two/b.py")
    repo.mv("src/tools/sub/c.py", "lib/three/sub/c.py")
    repo.commit("scatter")
    found = checks(repo)["src/tools/"]
    assert found.status is Verdict.MISSING, found.reason
    assert "held 3 files" in found.reason


def test_a_folder_never_there_is_skipped_and_an_ignored_one_is_valid(repo: GitRepo) -> None:
    (repo.root / "dist").mkdir()
    (repo.root / "dist" / "bundle.js").write_text("x")
    note(repo, "Build into `dist/`; create `src/future/` later; `node_modules/`, `/pane/dev/`.")
    repo.commit("memory")
    found = checks(repo)
    assert found["pane/dev/"].status is Verdict.SKIPPED  # from the root: reported, not hidden
    assert found["dist/"].status is Verdict.VALID
    assert "not tracked by git" in found["dist/"].reason
    assert found["src/future/"].status is Verdict.SKIPPED
    assert found["node_modules/"].status is Verdict.SKIPPED
    assert "not a folder of this repository then" in found["src/future/"].reason


def test_a_folder_from_the_root_is_that_folder_only(repo: GitRepo) -> None:
    """`/handlers/` names no folder ending with it elsewhere (lane-core/pane's `/pane/`, the
    namespace of its file system, was once taken for the store's `.serena/memories/pane/`)."""
    note(repo, "Mounted at `/handlers/`; sources in `/src/api/`.")
    repo.commit("memory")
    found = checks(repo)
    assert found["handlers/"].status is Verdict.SKIPPED
    assert found["src/api/"].status is Verdict.VALID


def test_a_folder_added_after_the_memory_line_is_valid(repo: GitRepo) -> None:
    note(repo, "Plugins will go in `plugins/`.")
    repo.commit("memory")
    repo.write_lines("src/plugins/p.py", ["x = 1"])
    repo.commit("add plugins")
    found = checks(repo)["plugins/"]
    assert found.status is Verdict.VALID and found.current_path == "src/plugins"


def test_a_partial_folder_under_several_folders_is_ambiguous(repo: GitRepo) -> None:
    note(repo, "Helpers in `util/`.")
    repo.commit("memory")
    found = checks(repo)["util/"]
    assert found.status is Verdict.AMBIGUOUS
    assert found.candidates == ("pkg/a/util", "pkg/b/util")


def test_a_submodule_named_by_a_partial_path_is_there(tmp_path: Path) -> None:
    """NEXTAltair/LoRAIro's `image-annotator-lib/` for its submodule
    local_packages/image-annotator-lib: git lists no file under a submodule, and it was
    called missing (held 0 files)."""
    library = GitRepo(tmp_path / "library")
    library.write_lines("lib.py", ["x = 1"])
    library.commit("library")
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/app.py", ["x = 1"])
    repo.commit("code")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library.root),
             "local_packages/image-annotator-lib")  # fmt: skip
    repo.commit("submodule")
    note(repo, "`image-annotator-lib/`, `local_packages/image-annotator-lib/`")
    note(repo, "`local_packages/image-annotator-lib/docs/`", name="inside")
    repo.commit("memory")
    inside = checks(repo, "inside")["local_packages/image-annotator-lib/docs/"]
    assert inside.status is Verdict.IN_SUBMODULE
    found = checks(repo)
    assert found["image-annotator-lib/"].status is Verdict.VALID
    assert "a submodule" in found["image-annotator-lib/"].reason
    assert found["local_packages/image-annotator-lib/"].status is Verdict.VALID


def test_without_history_a_folder_is_valid_when_there_else_unchecked(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project", init=False)
    repo.write_lines("src/tools/a.py", ["x = 1"])
    note(repo, "`src/tools/` and `src/gone/`")
    found = checks(repo)
    assert found["src/tools/"].status is Verdict.VALID
    assert found["src/gone/"].status is Verdict.UNCHECKED


def test_a_memory_line_not_committed_yet_is_read_against_the_work_tree(repo: GitRepo) -> None:
    note(repo, "x")
    repo.commit("memory")
    note(repo, "`src/tools/` and `src/planned/`")
    found = checks(repo)
    assert found["src/tools/"].status is Verdict.VALID
    assert found["src/planned/"].status is Verdict.SKIPPED


# -- --fix, the cache and health ------------------------------------------------------------


def test_fix_rewrites_a_renamed_folder_and_nothing_else(repo: GitRepo) -> None:
    text = "# Notes\n\nTools: `src/tools/` and `./src/tools/` (see `old/x.py`).\r\n"
    file = repo.write(f"{STORE}/notes.md", text.encode())
    repo.commit("memory")
    repo.mv("src/tools", "lib/tools")
    repo.commit("move")
    done = store_cli(repo, "verify-all", "--fix")
    assert done.returncode in (0, 1), done.stderr
    assert file.read_bytes() == text.replace("src/tools/", "lib/tools/").encode()


def test_fix_keeps_a_partial_folder_partial_where_it_still_names_that_folder_alone(
    repo: GitRepo,
) -> None:
    """`handlers/` and `api/handlers/` of src/api/handlers/, renamed to src/api/routes/:
    `routes/` and `api/routes/`, as files keep their short paths; `util/` of pkg/a/util/
    (settled by its parent list item) renamed to pkg/a/tools/ stays in full, since
    `tools/` would name src/tools/ too. Casecommons/pg_search's nested `features/` was
    rewritten `lib/pg_search/search_features/`."""
    text = "\n".join([
        "# Notes", "", "- `handlers/` and `api/handlers/`", "- `pkg/a/`", "  - `util/` - x", "",
    ])  # fmt: skip
    file = repo.write(f"{STORE}/notes.md", text.encode())
    repo.commit("memory")
    repo.mv("src/api/handlers", "src/api/routes")
    repo.mv("pkg/a/util", "pkg/a/tools")
    repo.commit("move")
    done = store_cli(repo, "verify-all", "--fix")
    assert done.returncode in (0, 1), done.stderr
    expected = text.replace("handlers/", "routes/").replace("`util/`", "`pkg/a/tools/`")
    assert file.read_text() == expected


def test_text_output_names_the_folder_a_renamed_one_became_as_a_folder(repo: GitRepo) -> None:
    note(repo, "Tools live in `src/tools/`.")
    repo.commit("memory")
    repo.mv("src/tools", "lib/tools")
    repo.commit("move")
    done = store_cli(repo, "verify", "notes")
    assert "src/tools/ (memory line 3) -> lib/tools/  renamed:" in done.stdout, done.stdout


def test_a_rerun_with_nothing_changed_asks_git_nothing_new(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    note(repo, "`src/tools/`, `old/`, `src/future/`")
    repo.commit("memory")
    repo.git("rm", "-q", "-r", "old")
    repo.commit("delete")
    state = State(tmp_path / "state.db")
    first = {k: c.status for k, c in checks(repo, state=state).items()}
    asked = git_commands(monkeypatch)
    again = {k: c.status for k, c in checks(repo, state=state).items()}
    assert again == first == {
        "src/tools/": Verdict.VALID, "old/": Verdict.MISSING, "src/future/": Verdict.SKIPPED,
    }  # fmt: skip
    assert not [a for a in asked if a[0] in ("diff", "ls-tree", "blame", "log", "diff-tree")]


def test_health_and_json_count_folder_mentions(repo: GitRepo) -> None:
    note(repo, "`src/tools/`, `old/`, `/pane/dev/`")
    repo.commit("memory")
    repo.git("rm", "-q", "-r", "old")
    repo.commit("delete")
    for _ in range(2):  # judged, then kept: the same verdicts shown
        done = store_cli(repo, "verify-all", "--json")
        rows = [c for m in json.loads(done.stdout) for c in m["mentions"]]
        assert sorted((c["mention"], c["form"], c["status"]) for c in rows) == [
            ("old/", "folder", "missing"), ("pane/dev/", "folder", "skipped"),
            ("src/tools/", "folder", "valid"),
        ]  # fmt: skip
    report = json.loads(store_cli(repo, "health", "--json").stdout)
    memory = next(m for m in report["memories"] if m["path"] == "notes")
    assert (memory["status"], memory["mentions"]["missing"], memory["mentions"]["valid"]) == (
        "missing", 1, 1,
    )  # fmt: skip


def test_a_past_version_s_folders_are_the_work_tree_s_with_its_changes() -> None:
    """The folders of a commit's list (`FileList.changed`, as history lists past commits)
    are read from the work tree's index and the files added and gone since."""
    from memory_enhancement.core.file_list import FileList

    now = FileList(["a/b/x.py", "c/d.py", "c/e/f.py", "lib/b/y.py"], submodules=["vendor/lib"])
    then = now.changed(added=["c/d.py", "c/e/f.py", "lib/b/y.py"], deleted=["old/e/g.py"])
    assert (then.folder("c").path, then.folder("e").path, then.folder("b").path) == (
        None, "old/e", "a/b",
    )  # fmt: skip
    assert now.folder("b").candidates == ("a/b", "lib/b") and now.folder("e").path == "c/e"
    assert then.folder("old/e", rooted=True).path == "old/e" and then.folder("e", True).path is None
    assert now.folder("vendor/lib").submodule == "vendor/lib"


def test_a_folder_gone_with_nothing_added_since_among_its_files_asks_no_rename_diff(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git pairs a file deleted since with one added since: a folder whose files were
    deleted, and no file named like them added since, asks no `git diff -M` (its two trees
    say so, mention_diffs.cannot_pair); its files moved into a new folder still do."""
    note(repo, "Old code in `old/`, tools in `src/tools/`.")
    repo.commit("memory")
    repo.git("rm", "-q", "-r", "old")
    repo.mv("src/tools", "lib/tools")
    repo.commit("delete old/, move tools")
    asked = git_commands(monkeypatch)
    found = checks(repo)
    assert found["old/"].status is Verdict.MISSING
    assert (found["src/tools/"].status, found["src/tools/"].renamed_to) == (
        Verdict.MOVED, "lib/tools",
    )  # fmt: skip
    diffs = [a for a in asked if a[:3] == ("--literal-pathspecs", "diff", "-M")]
    assert [sorted(p for p in d[d.index("--") + 1 :] if p.startswith("old/")) for d in diffs] == [
        []
    ]
