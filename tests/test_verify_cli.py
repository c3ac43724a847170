"""`verify`, `verify-all` and `get --verify` from the command line: output and exit codes."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from conftest import RunCli
from memory_enhancement.core.model import Citation
from memory_enhancement.verify.urls import UrlChecker
from verify_support import GitRepo

APP = [
    "import os",  # 1
    "",  # 2
    "API_VERSION = 'v2'",  # 3
    "",  # 4
    "def main() -> None:",  # 5
    "    print(API_VERSION)",  # 6
    "    return None",  # 7
]
UTIL = ["def helper(a, b):", "    return a | b"]
CITATION_KEYS = {
    "path",
    "line",
    "end_line",
    "snippet",
    "status",
    "current_line",
    "current_path",
    "reason",
    "anchored",
    "renamed_to",
}

VERIFY_KEYS = {"memory_id", "valid", "confidence", "holding", "stale_citations", "citations"}


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/app.py", APP)
    repo.write_lines("src/util.py", UTIL)
    repo.commit("initial")
    return repo


@pytest.fixture
def cli(project: GitRepo, run_cli: RunCli) -> Any:
    """Run the CLI from the project's root against its `.serena/memories` store."""

    def run(*args: str) -> Result:
        return run_cli([*args, "--dir", str(project.store_root)], cwd=project.root)

    return run


def at(project: GitRepo, path: str, line: int, snippet: str) -> Citation:
    return Citation(path, line, snippet=snippet, verified=project.stamp())


def three_memories(project: GitRepo) -> None:
    """`api` stays valid, `helpers` moves, `version` goes stale; `plain` cites nothing."""
    project.memory("api", [at(project, "src/app.py", 5, "def main() -> None:")])
    project.memory("helpers", [at(project, "src/util.py", 1, "def helper(a, b):")])
    project.memory(
        "version",
        [
            at(project, "src/app.py", 3, "API_VERSION = 'v2'"),
            at(project, "src/app.py", 6, "print(API_VERSION)"),
        ],
    )
    project.memory("plain", [])
    project.write_lines("src/util.py", ["import operator", "", *UTIL])
    project.write_lines("src/app.py", [line.replace("'v2'", "'v3'") for line in APP])


# -- verify --json --------------------------------------------------------------


def test_verify_json_prints_the_documented_keys_and_nothing_else(
    project: GitRepo, cli: Any
) -> None:
    project.memory("api", [at(project, "src/app.py", 3, "API_VERSION = 'v2'")])
    result = cli("verify", "api", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "memory_id": "api",
        "valid": True,
        "confidence": 1.0,
        "holding": 1.0,
        "stale_citations": [],
        "citations": [
            {
                "path": "src/app.py",
                "line": 3,
                "end_line": None,
                "snippet": "API_VERSION = 'v2'",
                "status": "valid",
                "current_line": 3,
                "current_path": "src/app.py",
                "reason": "",
                "anchored": True,
                "renamed_to": None,
            }
        ],
    }


def test_verify_json_reports_stale_citations_with_path_line_and_reason(
    project: GitRepo, cli: Any
) -> None:
    three_memories(project)
    result = cli("verify", "version", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert set(data) == VERIFY_KEYS
    assert data["valid"] is False
    assert data["confidence"] == data["holding"] == 0.5  # the seed's name, and what it is
    assert data["stale_citations"] == [
        {"path": "src/app.py", "line": 3, "reason": "line 3 now reads `API_VERSION = 'v3'`"}
    ]
    stale, valid = data["citations"]
    assert all(set(c) == CITATION_KEYS for c in data["citations"])
    assert (stale["status"], stale["current_line"], stale["current_path"]) == (
        "stale",
        None,
        "src/app.py",
    )
    assert (valid["status"], valid["current_line"], valid["current_path"]) == (
        "valid",
        valid["line"],
        valid["path"],
    )


def test_verify_json_gives_where_a_moved_citation_is_now(project: GitRepo, cli: Any) -> None:
    three_memories(project)
    [moved] = json.loads(cli("verify", "helpers", "--json").stdout)["citations"]
    assert moved["status"] == "moved"
    assert (moved["line"], moved["current_line"]) == (1, 3)
    assert moved["current_path"] == "src/util.py"
    assert moved["reason"] == "found at line 3 (was 1)"


def test_an_unanchored_citation_is_marked_in_json(project: GitRepo, cli: Any) -> None:
    project.memory("loose", [Citation("src/app.py", 3)])
    [citation] = json.loads(cli("verify", "loose", "--json").stdout)["citations"]
    assert citation["anchored"] is False
    assert citation["snippet"] is None
    assert citation["status"] == "valid"


def test_verify_text_lists_every_citation_of_the_memory(project: GitRepo, cli: Any) -> None:
    three_memories(project)
    result = cli("verify", "version")
    assert result.exit_code == 1
    assert result.stdout == (
        "INVALID  version  (1 of 2 citations hold)\n"
        "  STALE        src/app.py:3  line 3 now reads `API_VERSION = 'v3'`\n"
        "  ok           src/app.py:6\n"
    )


# -- verify-all -------------------------------------------------------------------


def test_verify_all_json_lists_one_object_per_memory_with_citations(
    project: GitRepo, cli: Any
) -> None:
    three_memories(project)
    result = cli("verify-all", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert [d["memory_id"] for d in data] == ["api", "helpers", "version"]
    assert [d["valid"] for d in data] == [True, True, False]
    for item in data:
        assert set(item) == VERIFY_KEYS


def test_verify_all_text_shows_what_needs_a_look_then_a_one_line_summary(
    project: GitRepo, cli: Any
) -> None:
    three_memories(project)
    result = cli("verify-all")
    assert result.exit_code == 1
    assert result.stdout == (
        # Moved, not `valid (1 of 1 citation holds)`: that read as nothing to do.
        "moved    helpers  (1 of 1 citation holds, 1 moved: --fix rewrites it)\n"
        "  moved        src/util.py:1 -> src/util.py:3  found at line 3 (was 1)\n"
        "INVALID  version  (1 of 2 citations hold)\n"
        "  STALE        src/app.py:3  line 3 now reads `API_VERSION = 'v3'`\n"
        "3 of 4 memories citing code, 4 citations: 2 valid, 1 moved, 1 stale, 0 missing\n"
    )


def test_the_summary_names_rarer_verdicts_only_when_they_occur(
    project: GitRepo, cli: Any, tmp_path: Path
) -> None:
    (tmp_path / "outside.py").write_text("x\n", encoding="utf-8")
    project.memory(
        "odd",
        [
            Citation("src/app.py", 50),
            Citation("https://example.invalid/"),
            Citation("../outside.py", 1, snippet="x"),
            Citation("src/gone.py", 1, snippet="x"),
        ],
    )
    result = cli("verify-all")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == (
        "1 memory, 4 citations: 0 valid, 0 moved, 0 stale, 1 missing, "
        "1 out of range, 1 skipped, 1 invalid"
    )


def test_verify_all_exits_0_when_everything_is_valid(project: GitRepo, cli: Any) -> None:
    project.memory("api", [at(project, "src/app.py", 5, "def main() -> None:")])
    result = cli("verify-all")
    assert result.exit_code == 0
    assert result.stdout == "1 memory, 1 citation: 1 valid, 0 moved, 0 stale, 0 missing\n"


def test_verify_all_of_a_category_that_does_not_exist_says_so_and_exits_2(
    project: GitRepo, cli: Any
) -> None:
    """A mistyped category answered "nothing to verify" and exit 0 (over MCP, valid: true):
    a check of nothing passed."""
    project.memory("decisions/api", [at(project, "src/app.py", 5, "def main() -> None:")])
    assert cli("verify-all", "decisions").exit_code == 0
    typo = cli("verify-all", "desicions")
    assert typo.exit_code == 2 and "no category 'desicions' in " in typo.stderr
    assert cli("verify-all", "desicions", "--changed-since", "HEAD").exit_code == 2


def test_an_unreadable_memory_file_fails_verify_all_and_is_named(
    project: GitRepo, cli: Any
) -> None:
    project.memory("api", [at(project, "src/app.py", 5, "def main() -> None:")])
    project.write(".serena/memories/latin1.md", b"caf\xe9\n")
    project.write(".serena/memories/broken.md", b"---\ntags: [unclosed\n---\nbody\n")
    result = cli("verify-all")
    assert result.exit_code == 1
    assert "latin1: not UTF-8 text" in result.stderr
    assert "broken" in result.stderr and "malformed YAML" in result.stderr
    assert result.stdout.splitlines()[-1] == (
        "1 of 2 memories citing code, 1 citation: 1 valid, 0 moved, 0 stale, 0 missing, "
        "1 unreadable memory file, 1 memory whose frontmatter does not parse"
    )


def test_moved_citations_pass_unless_strict(project: GitRepo, cli: Any) -> None:
    three_memories(project)
    (project.store_root / "version.md").unlink()
    assert cli("verify-all").exit_code == 0
    assert cli("verify-all", "--strict").exit_code == 1
    assert cli("verify", "helpers").exit_code == 0
    assert cli("verify", "helpers", "--strict").exit_code == 1


def test_an_empty_store_is_all_valid(project: GitRepo, cli: Any) -> None:
    project.store_root.mkdir(parents=True)
    result = cli("verify-all", "--json")
    assert (result.exit_code, json.loads(result.stdout)) == (0, [])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["verify-all", "--dry-run"], "--dry-run only applies with --fix"),
        (["verify", "api", "--dry-run"], "--dry-run only applies with --fix"),
        (["verify-all", "--changed-since", "no-such-ref"], "unknown git ref 'no-such-ref'"),
        (["verify-all", "--format", "xml"], "'xml' is not one of"),
        (["verify", "no-such-memory"], "memory not found: 'no-such-memory'"),
    ],
)
def test_usage_errors_exit_with_2(
    project: GitRepo, cli: Any, args: list[str], message: str
) -> None:
    project.memory("api", [at(project, "src/app.py", 5, "def main() -> None:")])
    result = cli(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_changed_since_without_git_is_a_usage_error(tmp_path: Path, run_cli: RunCli) -> None:
    folder = GitRepo(tmp_path / "plain", init=False)
    folder.write_lines("src/app.py", APP)
    folder.memory("api", [Citation("src/app.py", 3, snippet="API_VERSION")])
    result = run_cli(
        ["verify-all", "--changed-since", "HEAD", "--dir", folder.store_root],
        cwd=folder.root,
    )
    assert result.exit_code == 2
    assert "needs a git repository" in result.stderr


# -- where the repository is ------------------------------------------------------


def test_the_repository_is_the_git_top_level_of_the_store_folder(
    project: GitRepo, run_cli: RunCli, tmp_path: Path
) -> None:
    project.memory("api", [at(project, "src/app.py", 3, "API_VERSION = 'v2'")])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_cli(["verify", "api", "--json", "--dir", project.store_root], cwd=elsewhere)
    assert json.loads(result.stdout)["citations"][0]["status"] == "valid"


def test_repo_root_points_a_store_outside_the_code_at_it(
    project: GitRepo, run_cli: RunCli, tmp_path: Path
) -> None:
    outside = GitRepo(tmp_path / "notes", init=False)
    outside.memory("api", [at(project, "src/app.py", 3, "API_VERSION = 'v2'")])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    args = ["verify", "api", "--json", "--dir", outside.store_root]
    found = run_cli([*args, "--repo-root", project.root], cwd=elsewhere)
    assert json.loads(found.stdout)["citations"][0]["status"] == "valid"
    from_cwd = run_cli(args, cwd=project.root)  # no git around the store: the current folder
    assert json.loads(from_cwd.stdout)["citations"][0]["status"] == "valid"
    lost = run_cli(args, cwd=elsewhere)
    assert (lost.exit_code, json.loads(lost.stdout)["citations"][0]["status"]) == (1, "missing")


def test_a_plain_folder_without_git_is_verified_from_the_cli(
    tmp_path: Path, run_cli: RunCli
) -> None:
    folder = GitRepo(tmp_path / "plain", init=False)
    folder.write_lines("src/app.py", APP)
    folder.memory("api", [Citation("src/app.py", 3, snippet="API_VERSION = 'v2'")])
    folder.write_lines("src/app.py", ["# header", *APP])
    result = run_cli(["verify-all", "--dir", folder.store_root], cwd=folder.root)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-2:] == [
        "  moved        src/app.py:3 -> src/app.py:4  found at line 4 (was 3)",
        "1 memory, 1 citation: 0 valid, 1 moved, 0 stale, 0 missing",
    ]


# -- --format github ------------------------------------------------------------


def frontmatter_text(stamp: str) -> str:
    return (
        "---\n"
        "tags: [api]\n"
        "citations:\n"
        "  - path: src/app.py\n"
        "    line: 6\n"
        "    snippet: print(API_VERSION)\n"
        "  - path: src/app.py\n"  # line 7
        "    line: 3\n"
        "    snippet: API_VERSION = 'v2'\n"
        f"    verified: {stamp}\n"
        "---\n"
        "# Version\n"
    )


def serena_text(stamp: str) -> str:
    return (
        "# Version\n"
        "\n"
        "Client and server agree on the version.\n"
        "\n"
        "## Citations\n"
        "\n"
        "| File | Line | Snippet | Verified |\n"
        "|------|------|---------|----------|\n"
        f"| src/app.py | 6 | `print(API_VERSION)` | {stamp} |\n"
        f"| src/app.py | 3 | `API_VERSION = 'v2'` | {stamp} |\n"  # line 10
        f"| src/util.py | 1 | `def helper(a, b):` | {stamp} |\n"  # line 11
    )


def test_github_annotations_point_at_the_line_holding_the_citation_in_both_formats(
    project: GitRepo, cli: Any
) -> None:
    project.write(".serena/memories/front.md", frontmatter_text(project.stamp()))
    project.write(".serena/memories/table.md", serena_text(project.stamp()))
    project.write_lines("src/app.py", [line.replace("'v2'", "'v3'") for line in APP])
    result = cli("verify-all", "--format", "github")
    assert result.exit_code == 1
    message = "stale citation src/app.py:3: line 3 now reads `API_VERSION = 'v3'`"
    assert result.stdout.splitlines() == [
        f"::warning file=.serena/memories/front.md,line=7,title=memory front::{message}",
        f"::warning file=.serena/memories/table.md,line=10,title=memory table::{message}",
        "2 memories, 5 citations: 3 valid, 0 moved, 2 stale, 0 missing",
    ]


def test_github_annotations_name_moved_citations_as_notices_warnings_when_strict(
    project: GitRepo, cli: Any
) -> None:
    """A moved declared citation is annotated as a moved mention is (a notice, a warning
    with --strict), naming where its code is now and the fix; text and JSON stay as they were."""
    project.write(".serena/memories/table.md", serena_text(project.stamp()))
    project.write(".serena/memories/front.md", frontmatter_text(project.stamp()))
    project.write_lines("src/util.py", ["", *UTIL])
    message = (
        "moved citation src/util.py:1 -> src/util.py:2: found at line 2 (was 1); "
        "`verify-all --fix` rewrites it"
    )
    result = cli("verify-all", "--format", "github")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"::notice file=.serena/memories/table.md,line=11,title=memory table::{message}",
        "2 memories, 5 citations: 4 valid, 1 moved, 0 stale, 0 missing",
    ]
    assert "  moved        src/util.py:1 -> src/util.py:2  found at line 2 (was 1)" in (
        cli("verify-all").stdout.splitlines()
    )
    strict = cli("verify-all", "--format", "github", "--strict")
    assert strict.exit_code == 1
    assert strict.stdout.splitlines()[0] == (
        f"::warning file=.serena/memories/table.md,line=11,title=memory table::{message}"
    )
    project.git("mv", "src/util.py", "src/helpers.py")
    project.commit("rename")
    renamed = cli("verify-all", "--format", "github").stdout.splitlines()[0]
    assert renamed == (
        "::notice file=.serena/memories/table.md,line=11,title=memory table::moved citation "
        "src/util.py:1 -> src/helpers.py:2: renamed to src/helpers.py; found at line 2 (was 1); "
        "`verify-all --fix` rewrites it"
    )


# -- --changed-since ------------------------------------------------------------


def test_changed_since_verifies_only_memories_touched_by_the_change(
    project: GitRepo, cli: Any
) -> None:
    project.memory("app-notes", [at(project, "src/app.py", 5, "def main() -> None:")])
    project.memory("util-notes", [at(project, "src/util.py", 1, "def helper(a, b):")])
    project.memory("edited", [at(project, "src/util.py", 2, "return a | b")])
    base = project.commit("memories")
    assert json.loads(cli("verify-all", "--json", "--changed-since", base).stdout) == []
    project.write_lines("src/app.py", ["# header", *APP])
    project.commit("code change")
    notes = project.store_root / "edited.md"
    notes.write_text(notes.read_text(encoding="utf-8") + "\nOne more thing.\n", encoding="utf-8")
    result = cli("verify-all", "--json", "--changed-since", base)
    assert result.exit_code == 0
    assert [d["memory_id"] for d in json.loads(result.stdout)] == ["app-notes", "edited"]
    result = cli("verify-all", "--changed-since", "HEAD")
    assert result.stdout.splitlines()[-1] == (
        "1 memory, 1 citation: 1 valid, 0 moved, 0 stale, 0 missing"
    )


def test_changed_since_reports_a_memory_file_the_change_left_unreadable(
    project: GitRepo, cli: Any
) -> None:
    """rjmurillo/ai-agents, a pull request simulated at 70241a0: a memory the pull request
    saved as invalid UTF-8 was in neither --format github, --json nor stderr of
    `verify-all --changed-since` (the full run annotated it `::error`), and exit 0 on an
    otherwise clean store let the broken file through."""
    project.memory("api", [at(project, "src/app.py", 5, "def main() -> None:")])
    project.memory("notes", [at(project, "src/util.py", 1, "def helper(a, b):")])
    project.memory("old", [at(project, "src/util.py", 1, "def helper(a, b):")])
    (project.store_root / "old.md").write_bytes(b"# Old\n\nsaved as \xff latin-1\n")
    base = project.commit("memories")
    (project.store_root / "notes.md").write_bytes(b"# Notes\n\nsaved as \xe9t\xe9 latin-1\n")
    project.commit("notes saved in another encoding")
    github = cli("verify-all", "--changed-since", base, "--format", "github")
    assert github.exit_code == 1
    assert github.stdout.splitlines()[0] == (
        "::error file=.serena/memories/notes.md,title=unreadable memory notes::"
        "not UTF-8 text (invalid byte 0xe9 at offset 18)"
    )
    assert "old" not in github.stdout  # broken before the change: the full run says so
    listed = cli("verify-all", "--changed-since", base, "--json")
    assert listed.exit_code == 1
    assert [(d["memory_id"], d.get("unreadable")) for d in json.loads(listed.stdout)] == [
        ("notes", "not UTF-8 text (invalid byte 0xe9 at offset 18)")
    ]


def test_changed_since_annotates_what_the_change_broke_before_older_rot(
    project: GitRepo, cli: Any
) -> None:
    """GitHub shows 10 warnings per step, in the order printed. rjmurillo/ai-agents, a pull
    request simulated at 70241a0: of the 15 warnings `--changed-since` printed, one was the
    pull request's doing (a line it changed); the others, files deleted months before, came
    first whenever their memory's path sorted first, and could have hidden it."""
    project.memory(
        "alpha",
        [
            at(project, "src/app.py", 5, "def main() -> None:"),
            at(project, "src/util.py", 1, "def helper_that_never_was():"),
        ],
    )
    project.memory("zulu", [at(project, "src/app.py", 3, "API_VERSION = 'v2'")])
    base = project.commit("memories")
    project.write_lines("src/app.py", [*APP[:2], "API_VERSION = 'v3'", *APP[3:]])
    project.commit("v3")
    result = cli("verify-all", "--changed-since", base, "--format", "github")
    assert result.exit_code == 1
    warnings = [
        w.split("::")[2].split(": ")[0] for w in result.stdout.splitlines() if "::warning" in w
    ]
    assert warnings == ["stale citation src/app.py:3", "stale citation src/util.py:1"]
    everything = cli("verify-all", "--format", "github").stdout.splitlines()
    assert [w.split("::")[2].split(": ")[0] for w in everything if "::warning" in w] == [
        "stale citation src/util.py:1",  # no change to judge by: the store's order
        "stale citation src/app.py:3",
    ]


def test_changed_since_verifies_the_memories_that_mention_a_changed_file_in_prose(
    project: GitRepo, cli: Any
) -> None:
    """In a Serena store most memories cite code only in their prose (`src/app.py:3`), and
    the pull-request check of docs/ci.md passed them by: 'no memory cites code: nothing to
    verify', exit 0, while verify-all reported the mention stale."""
    project.write_lines(".serena/memories/version.md", ["# Version", "", "Set in `src/app.py:3`."])
    project.write_lines(".serena/memories/helper.md", ["# Helper", "", "See src/util.py:1."])
    base = project.commit("memories")
    project.write_lines("src/app.py", [*APP[:2], "API_VERSION = 'v3'", *APP[3:]])
    project.commit("v3")
    result = cli("verify-all", "--changed-since", base)
    assert result.exit_code == 1
    assert "mention STALE        src/app.py:3 (memory line 3)" in result.stdout
    assert "helper" not in result.stdout
    assert result.stdout.splitlines()[-1] == (
        "1 memory, 0 citations; 1 mention: 1 stale"  # no row of zeros (QA round 38)
    )
    quiet = cli("verify-all", "--changed-since", base, "--no-mentions")
    assert quiet.exit_code == 0
    assert quiet.stdout == f"no memory cites or mentions a file changed since {base}: " + (
        "nothing to verify\n"
    )


def test_changed_since_verifies_a_mention_in_a_frontmatter_and_in_a_decomposed_memory(
    project: GitRepo, cli: Any
) -> None:
    """The whole run reads a mention written in a frontmatter (`sources: src/app.py:3`),
    which the index's content leaves out: --changed-since passed that memory by. A memory
    a Mac named decomposed (`가게.md` in NFD), its prose decomposed too, is picked as well."""
    import unicodedata

    project.write_lines(
        ".serena/memories/sourced.md",
        ["---", "sources: src/app.py:3", "---", "# Sourced", "", "No code named here."],
    )
    shop = unicodedata.normalize("NFD", "가게")
    project.write_lines(f".serena/memories/{shop}.md", [f"# {shop}", "", f"{shop}: src/app.py:3"])
    base = project.commit("memories")
    project.write_lines("src/app.py", [*APP[:2], "API_VERSION = 'v3'", *APP[3:]])
    project.commit("v3")
    whole = {d["memory_id"]: d for d in json.loads(cli("verify-all", "--json").stdout)}
    since = {
        d["memory_id"]: d
        for d in json.loads(cli("verify-all", "--json", "--changed-since", base).stdout)
    }
    assert [m["status"] for m in whole["sourced"]["mentions"]] == ["stale"]
    assert sorted(since) == sorted(["sourced", f"{shop}"])
    assert since["sourced"]["mentions"] == whole["sourced"]["mentions"]


def test_changed_since_sees_a_renamed_cited_file(project: GitRepo, cli: Any) -> None:
    project.memory("util-notes", [at(project, "src/util.py", 1, "def helper(a, b):")])
    base = project.commit("memories")
    project.mv("src/util.py", "src/helpers.py")
    project.commit("rename")
    [data] = json.loads(cli("verify-all", "--json", "--changed-since", base).stdout)
    assert data["citations"][0]["current_path"] == "src/helpers.py"


def test_changed_since_lists_the_changes_when_a_renamed_files_old_blob_is_gone(
    project: GitRepo, tmp_path: Path
) -> None:
    """`git diff -M` read the blobs of the files added and deleted, to pair renames, and
    failed ("unable to read <sha>") when one was not in the repository, a partial or
    damaged clone (found on a mirror of openimagingdata/findingmodel without its large
    files): a traceback. Both sides of a rename are listed anyway, so no blob is read."""
    project.memory("util-notes", [at(project, "src/util.py", 1, "def helper(a, b):")])
    project.memory("app-notes", [at(project, "src/app.py", 5, "def main() -> None:")])
    base = project.commit("memories")
    old = project.git("rev-parse", "HEAD:src/util.py").strip()
    project.mv("src/util.py", "src/helpers.py")
    project.write_lines("src/helpers.py", ["import operator", "", *UTIL])
    project.commit("rename and edit")
    (project.root / ".git" / "objects" / old[:2] / old[2:]).unlink()
    src = Path(__file__).resolve().parents[1] / "src"
    done = subprocess.run(
        [sys.executable, "-m", "memory_enhancement", "verify-all", "--json",
         "--changed-since", base],
        capture_output=True, text=True, cwd=project.root,
        env={**os.environ, "PYTHONPATH": str(src), "MEMORY_ENHANCEMENT_HOME": str(tmp_path / "h")},
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    assert [d["memory_id"] for d in json.loads(done.stdout)] == ["util-notes"]


def test_changed_since_names_the_git_failure_without_a_traceback(
    project: GitRepo, tmp_path: Path
) -> None:
    """A repository git cannot diff (here its base commit's tree is gone) is an error
    that says what failed, exit 2, as an unknown ref is."""
    project.memory("app-notes", [at(project, "src/app.py", 5, "def main() -> None:")])
    base = project.commit("base")
    tree = project.git("rev-parse", "HEAD^{tree}").strip()
    project.write_lines("src/app.py", ["# header", *APP])
    project.commit("next")
    (project.root / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    src = Path(__file__).resolve().parents[1] / "src"
    done = subprocess.run(
        [sys.executable, "-m", "memory_enhancement", "verify-all", "--changed-since", base,
         "--dir", str(project.store_root)],
        capture_output=True, text=True, cwd=project.root,
        env={**os.environ, "PYTHONPATH": str(src), "MEMORY_ENHANCEMENT_HOME": str(tmp_path / "h")},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: cannot list the files changed since {base!r} in ")


# -- get --verify -----------------------------------------------------------------


def test_get_with_verify_includes_the_verdicts(project: GitRepo, cli: Any) -> None:
    three_memories(project)
    data = json.loads(cli("get", "version", "--verify", "--json").stdout)
    assert data["path"] == "version"
    verification = data["verification"]
    assert verification["valid"] is False
    assert [c["status"] for c in verification["citations"]] == ["stale", "valid"]
    text = cli("get", "version", "--verify")
    assert text.exit_code == 0
    assert text.stdout.endswith(
        "INVALID  version  (1 of 2 citations hold)\n"
        "  STALE        src/app.py:3  line 3 now reads `API_VERSION = 'v3'`\n"
        "  ok           src/app.py:6\n"
    )


def test_get_with_verify_names_the_command_that_rewrites_a_moved_citation(
    project: GitRepo, cli: Any
) -> None:
    """`get` has no `--fix`: its heading names `verify --fix`, which has."""
    three_memories(project)
    text = cli("get", "helpers", "--verify")
    assert text.exit_code == 0
    assert "moved    helpers  (1 of 1 citation holds, 1 moved: verify --fix rewrites it)\n" in (
        text.stdout
    )


def test_get_without_verify_does_not_verify(project: GitRepo, cli: Any) -> None:
    three_memories(project)
    data = json.loads(cli("get", "version", "--json").stdout)
    assert "verification" not in data


# -- prose mentions (more in test_mentions_*.py) ------------------------------------------


MENTIONS = (
    "# Notes\n\n"
    "The version is set in `src/app.py:3`; the helper is util.py:2.\n"
    "Entry point: src/app.py:5 (declared below). Not a file: version 2.0:1.\n"
    "The old location src/app.py:40 is gone; main.py:1 is ambiguous.\n"
    "Not mentions: http://example.com:8080/x.py:3, host.example.org:22, 12:30.\n"
)


def two_mains(project: GitRepo) -> None:
    """Two files named main.py: a bare `main.py:1` is ambiguous between them."""
    project.write_lines("pkg/a/main.py", ["a = 1"])
    project.write_lines("pkg/b/main.py", ["b = 1"])
    project.commit("two mains")


def test_mentions_in_prose_are_verified_by_default_and_count_like_citations(
    project: GitRepo, cli: Any
) -> None:
    two_mains(project)
    declared = at(project, "src/app.py", 5, "def main() -> None:")
    project.memory("notes", [declared], content=MENTIONS)
    project.commit("memory")
    without = cli("verify", "notes", "--json", "--no-mentions")
    assert without.exit_code == 0
    assert "mentions" not in json.loads(without.stdout)
    result = cli("verify", "notes", "--json")
    assert result.exit_code == 1  # src/app.py:40 was past the end when written
    data = json.loads(result.stdout)
    assert data["valid"] is False
    assert len(data["citations"]) == 1
    assert [(m["mention"], m["path"], m["line"], m["status"]) for m in data["mentions"]] == [
        ("src/app.py:3", "src/app.py", 3, "valid"),
        ("util.py:2", "src/util.py", 2, "valid"),
        ("src/app.py:40", "src/app.py", 40, "out_of_range"),
        ("main.py:1", "main.py", 1, "ambiguous"),
    ]
    assert data["mentions"][3]["candidates"] == ["pkg/a/main.py", "pkg/b/main.py"]
    assert all(m["anchored"] is (m["status"] == "valid") for m in data["mentions"])
    assert data["stale_citations"] == [
        {"path": "src/app.py", "line": 40, "reason": data["mentions"][2]["reason"]}
    ]


def test_a_memory_whose_only_mention_is_undecided_is_headed_unsure_and_says_why(
    project: GitRepo, cli: Any
) -> None:
    two_mains(project)
    project.memory("notes", [], content="# Note\n\nThe entry point is main.py:1.\n")
    project.commit("memory")
    result = cli("verify-all")
    assert result.exit_code == 0  # ambiguous is no failure
    line = result.stdout.splitlines()[0]
    assert line == "unsure   notes  (0 of 1 citations and mentions hold, 1 ambiguous)"


def test_a_memory_whose_mentions_all_moved_is_headed_moved_with_what_rewrites_them(
    project: GitRepo, cli: Any
) -> None:
    """Headed `valid (2 of 2 ... hold)`, a memory --fix would rewrite read as nothing to do."""
    project.memory("notes", [], content="# Note\n\nSee src/app.py:3 and src/app.py:5.\n")
    project.commit("memory")
    project.write_lines("src/app.py", ["# header", "", *APP])
    project.commit("header")
    result = cli("verify-all")
    assert result.exit_code == 0  # moved is no failure without --strict
    assert result.stdout.splitlines()[0] == (
        "moved    notes  (2 of 2 citations and mentions hold, 2 moved: --fix rewrites them)"
    )
    fixed = cli("verify-all", "--fix")
    assert fixed.stdout.splitlines()[0] == (
        "moved    notes  (2 of 2 citations and mentions hold, 2 moved)"
    )
    assert "fixed 2 mentions in notes" in fixed.stdout
    again = cli("verify", "notes")
    assert again.stdout.splitlines()[0] == "valid    notes  (2 of 2 citations and mentions hold)"


def test_failing_mentions_make_the_memory_invalid_in_verify_all_text(
    project: GitRepo, cli: Any
) -> None:
    project.memory("notes", [at(project, "src/app.py", 5, "def main()")], content=MENTIONS)
    project.commit("memory")
    result = cli("verify-all")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "INVALID  notes  (3 of 5 citations and mentions hold)"
    assert lines[1].startswith(
        "  mention OUT OF RANGE src/app.py:40 (memory line 13)  line 40 was already"
    )
    assert lines[2].startswith(
        "  mention MISSING      main.py:1 (memory line 13)  no file main.py in"
    )
    assert lines[-1] == (
        "1 memory, 1 citation: 1 valid, 0 moved, 0 stale, 0 missing; "
        "4 mentions: 2 valid, 1 missing, 1 out of range"
    )


# -- --check-urls -------------------------------------------------------------------


@pytest.fixture
def http_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A local HTTP server in a thread, serving one file (`/ok.txt`)."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    site = tmp_path / "site"
    site.mkdir()
    (site / "ok.txt").write_text("hello\n", encoding="utf-8")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_urls_are_skipped_unless_checked_then_200_is_valid_and_404_missing(
    project: GitRepo, cli: Any, http_base: str
) -> None:
    project.memory("links", [Citation(f"{http_base}/ok.txt"), Citation(f"{http_base}/nope.txt")])
    skipped = cli("verify", "links", "--json")
    assert skipped.exit_code == 0
    assert [c["status"] for c in json.loads(skipped.stdout)["citations"]] == ["skipped"] * 2
    checked = cli("verify", "links", "--json", "--check-urls", "--url-timeout", "5")
    assert checked.exit_code == 1
    data = json.loads(checked.stdout)
    assert [(c["status"], c["reason"], c["current_path"]) for c in data["citations"]] == [
        ("valid", "HTTP 200", f"{http_base}/ok.txt"),  # where it is now: where it was
        ("missing", "HTTP 404", None),
    ]
    assert data["confidence"] == 0.5


def test_an_unreachable_url_is_stale_when_checked(project: GitRepo, cli: Any) -> None:
    project.memory("links", [Citation("http://127.0.0.1:9/unreachable")])
    data = json.loads(cli("verify", "links", "--json", "--check-urls").stdout)
    [citation] = data["citations"]
    assert citation["status"] == "stale"
    assert citation["reason"].startswith("cannot fetch")


def test_a_server_that_refuses_head_is_asked_with_get_and_each_url_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    requests: list[tuple[str, str]] = []

    class NoHead(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            requests.append(("HEAD", self.path))
            self.send_response(405)
            self.end_headers()

        def do_GET(self) -> None:
            requests.append(("GET", self.path))
            self.send_response(200 if self.path == "/page" else 410)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NoHead)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        outcomes = UrlChecker(timeout=5).check_all([f"{base}/page", f"{base}/gone", f"{base}/page"])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert outcomes == {
        f"{base}/page": ("valid", "HTTP 200"),
        f"{base}/gone": ("missing", "HTTP 410"),
    }
    assert sorted(requests) == [
        ("GET", "/gone"),
        ("GET", "/page"),
        ("HEAD", "/gone"),
        ("HEAD", "/page"),
    ]


# -- a real subprocess ----------------------------------------------------------


def console_script() -> list[str]:
    script = Path(sys.executable).parent / "memory-enhancement"
    if script.exists():
        return [str(script)]
    found = shutil.which("memory-enhancement")
    return [found] if found else [sys.executable, "-m", "memory_enhancement"]


def test_verify_all_in_a_real_process_prints_json_and_exits_1_on_stale(
    project: GitRepo,
) -> None:
    three_memories(project)
    done = subprocess.run(
        [*console_script(), "verify-all", "--json"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert [d["valid"] for d in json.loads(done.stdout)] == [True, True, False]
    text = subprocess.run(
        [*console_script(), "verify-all"], cwd=project.root, capture_output=True, text=True
    )
    assert text.stdout.splitlines()[-1] == (
        "3 of 4 memories citing code, 4 citations: 2 valid, 1 moved, 1 stale, 0 missing"
    )
