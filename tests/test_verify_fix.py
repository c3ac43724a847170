"""`--fix`: moved citations follow their code, and not one other byte of the file changes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from conftest import RunCli
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import Verdict, VerifyOptions
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
NEW = "2026-06-01T12:00:00.000Z"  # verify_support.FIXED_NOW, as the tool writes it


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/app.py", APP)
    repo.write_lines("src/util.py", UTIL)
    repo.commit("initial")
    return repo


@pytest.fixture
def cli(project: GitRepo, run_cli: RunCli) -> Any:
    def run(*args: str) -> Result:
        return run_cli([*args, "--dir", str(project.store_root)], cwd=project.root)

    return run


def change_the_code(project: GitRepo) -> None:
    """Two lines above everything in app.py (3 -> 5, 5 -> 7), line 6 edited (stale);
    a line above util.py (its 1-2 range -> 2-3)."""
    lines = list(APP)
    lines[5] = "    print(API_VERSION, flush=True)"
    project.write_lines("src/app.py", ["# header", "# more header", *lines])
    project.write_lines("src/util.py", ["import operator", *UTIL])
    project.commit("change")


def serena(stamp: str, moved: tuple[str, str, str] | None = None) -> str:
    """A serena memory; `moved` = (api line, main line, stamp of both) once fixed."""
    api, main, fixed = moved or ("3", "5", stamp)
    return (
        "# API notes\n"
        "\n"
        "Client and server agree on `API_VERSION`  (two spaces, kept).\n"
        "\n"
        "## Citations\n"
        "\n"
        "| File | Line | Snippet | Verified | Note |\n"
        "|:-----|-----:|---------|----------|------|\n"
        f"| src/app.py | {api} | `API_VERSION = 'v2'` | {fixed} | the constant |\n"
        f"| src/app.py  |  6  | `print(API_VERSION)` | {stamp} | stale, untouched |\n"
        "| src/gone.py | 1 | `x = 1` | 2026-01-01 | missing, untouched |\n"
        f"| src/app.py | {main} | `def main() -> None:` | {fixed} | entry |\n"
        "| https://example.invalid/ |  |  |  | a URL |\n"
        "\n"
        "## Links\n"
        "\n"
        "- other-memory\n"
        "\n"
        "## Metadata\n"
        "\n"
        "- **Tags**: api\n"
        "- **Owner**: platform team\n"
    )


def frontmatter(stamp: str, fixed: tuple[str, str, str] | None = None) -> str:
    """A frontmatter memory; `fixed` = (api line, util range, stamp) once fixed."""
    api, util, new_stamp = fixed or ("3", "line: 1\n    end_line: 2", stamp)
    return (
        "---\n"
        "created_at: 2026-01-01T00:00:00.000Z\n"
        "# a comment the tool keeps\n"
        "tags: [api, versions]\n"
        "owner: platform-team\n"
        "citations:\n"
        "  - path: src/app.py\n"
        f"    line: {api}\n"
        "    snippet: API_VERSION = 'v2'\n"
        f"    verified: {new_stamp}\n"
        "  - src/gone.py:4\n"
        "  - path: src/app.py\n"
        "    line: 6\n"
        "    snippet: print(API_VERSION)\n"
        f"    verified: {stamp}\n"
        "    reviewer: alice\n"
        "  - path: src/util.py\n"
        f"    {util}\n"
        '    snippet: "def helper(a, b):\\n    return a | b"\n'
        f"    verified: {new_stamp}\n"
        "custom: {keep: me}\n"
        "---\n"
        "# Versions\n"
        "\n"
        "Body text   with odd spacing.\n"
    )


FIXED_RANGE = "line: 2\n    end_line: 3"


def verify_all_fixed(project: GitRepo, **options: bool) -> Any:
    return project.service().verify_all(options=VerifyOptions(fix=True, **options))


# -- both formats, only the moved citations change ------------------------------


def test_fix_rewrites_moved_rows_of_a_serena_table_and_nothing_else(project: GitRepo) -> None:
    stamp = project.stamp()
    file = project.write(".serena/memories/table.md", serena(stamp))
    change_the_code(project)
    run = verify_all_fixed(project)
    statuses = [c.status for c in run.results[0].checks]
    assert statuses == [
        Verdict.MOVED,
        Verdict.STALE,
        Verdict.MISSING,
        Verdict.MOVED,
        Verdict.SKIPPED,
    ]
    assert [(f.path, f.written) for f in run.fixes] == [("table", True)]
    assert file.read_text(encoding="utf-8") == serena(stamp, ("5", "7", NEW))


def test_fix_rewrites_moved_items_of_a_frontmatter_file_and_nothing_else(
    project: GitRepo,
) -> None:
    stamp = project.stamp()
    file = project.write(".serena/memories/front.md", frontmatter(stamp))
    change_the_code(project)
    run = verify_all_fixed(project)
    statuses = [c.status for c in run.results[0].checks]
    assert statuses == [Verdict.MOVED, Verdict.MISSING, Verdict.STALE, Verdict.MOVED]
    assert file.read_text(encoding="utf-8") == frontmatter(stamp, ("5", FIXED_RANGE, NEW))


def test_fix_keeps_the_keys_a_citation_item_was_written_with_in_their_order(
    project: GitRepo,
) -> None:
    """`file:`, `lines: "3"`, `verified_at:` and a key of the author's own (the shape of
    phenobarbital/querysource's findings) came back as `path:`, `line:`/`end_line:` and
    `verified:`, the author's key moved last (QA round s27)."""
    item = (
        '  - file: src/app.py\n    lines: "{}"\n    why: the version\n'
        "    snippet: API_VERSION = 'v2'\n    verified_at: {}\n"
    )
    text = "---\ntitle: Version\ncitations:\n{}---\nBody.\n"
    file = project.write(".serena/memories/kept.md", text.format(item.format("3", "2026-01-01")))
    change_the_code(project)
    verify_all_fixed(project)
    assert file.read_text(encoding="utf-8") == text.format(item.format("5", NEW))


def test_after_a_fix_the_moved_citations_verify_as_valid(project: GitRepo) -> None:
    project.write(".serena/memories/table.md", serena(project.stamp()))
    project.write(".serena/memories/front.md", frontmatter(project.stamp()))
    change_the_code(project)
    verify_all_fixed(project)
    run = project.service().verify_all()
    assert [c.count(Verdict.MOVED) for c in run.results] == [0, 0]
    assert [c.count(Verdict.VALID) for c in run.results] == [2, 2]


def test_fix_follows_a_rename_in_both_formats(project: GitRepo) -> None:
    stamp = project.stamp()
    util = Citation("src/util.py", 1, 2, "def helper(a, b):\n    return a | b", stamp)
    project.memory("front", [util])
    table = project.memory("table", [util], fmt="serena")
    project.mv("src/util.py", "src/helpers.py")
    project.commit("rename")
    verify_all_fixed(project)
    fixed = project.service().get("front").memory.meta.citations
    assert fixed == (Citation("src/helpers.py", 1, 2, util.snippet, NEW),)
    assert "| src/helpers.py | 1-2 |" in table.read_text(encoding="utf-8")


def test_fix_never_touches_a_file_without_moved_citations(project: GitRepo) -> None:
    stamp = project.stamp()
    lines = list(APP)
    lines[2] = "API_VERSION = 'v3'"
    file = project.write(".serena/memories/front.md", frontmatter(stamp))
    project.write_lines("src/app.py", lines)
    before = file.read_bytes(), file.stat().st_mtime_ns
    run = verify_all_fixed(project)
    assert run.fixes == []
    assert (file.read_bytes(), file.stat().st_mtime_ns) == before


def test_fix_keeps_crlf_line_endings(project: GitRepo) -> None:
    stamp = project.stamp()
    file = project.write(".serena/memories/table.md", serena(stamp).replace("\n", "\r\n"))
    change_the_code(project)
    verify_all_fixed(project)
    assert file.read_bytes() == serena(stamp, ("5", "7", NEW)).replace("\n", "\r\n").encode()


def test_fix_rewrites_an_inline_citation_in_place_and_reports_nothing_once_done(
    project: GitRepo,
) -> None:
    text = "# Inline\n\nSee [cite:file](src/app.py:3) and [cite:file](src/util.py)  here.\n"
    file = project.write(".serena/memories/inline.md", text)
    project.mv("src/util.py", "src/helpers.py")
    project.commit("rename")
    run = verify_all_fixed(project)
    assert [f.path for f in run.fixes] == ["inline"]
    assert file.read_text(encoding="utf-8") == text.replace("src/util.py", "src/helpers.py")
    again = verify_all_fixed(project)  # the unanchored inline one cannot hold a snippet
    assert again.fixes == []


# -- unanchored citations -------------------------------------------------------


def test_fix_captures_the_snippet_of_an_unanchored_citation(project: GitRepo, cli: Any) -> None:
    file = project.write(
        ".serena/memories/loose.md",
        "---\ntags: [x]\ncitations:\n  - src/app.py:3\n  - src/app.py:5-6\n---\n# Loose\n",
    )
    result = cli("verify", "loose", "--fix")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "fixed 2 citations in loose"
    citations = project.service().get("loose").memory.meta.citations
    assert [(c.ref, c.snippet) for c in citations] == [
        ("src/app.py:3", "API_VERSION = 'v2'"),
        ("src/app.py:5-6", "def main() -> None:\nprint(API_VERSION)"),
    ]
    assert all(c.verified for c in citations)
    text = file.read_text(encoding="utf-8")
    assert text.startswith("---\ntags: [x]\ncitations:\n  - path: src/app.py\n    line: 3\n")
    assert text.endswith("---\n# Loose\n")
    data = json.loads(cli("verify", "loose", "--json").stdout)
    assert [c["anchored"] for c in data["citations"]] == [True, True]


def test_an_unanchored_citation_follows_what_history_says_of_its_line_not_the_line_now(
    project: GitRepo, cli: Any
) -> None:
    """A citation without a snippet is a line number alone, as a mention is: the memory
    also says `src/app.py:3` in prose, and history tells that its code moved to line 5.
    The fix moves both and captures the code there; it captured what line 3 read now
    (another line) and the prose mention was not even listed (bytes-s33)."""
    file = project.write(
        ".serena/memories/loose.md",
        "---\ncitations: [src/app.py:3]\n---\n# Loose\n\nThe version is at src/app.py:3.\n",
    )
    project.commit("the memory")
    change_the_code(project)  # line 3 -> 5
    data = json.loads(cli("verify", "loose", "--json").stdout)
    assert [(m["status"], m["current_line"]) for m in data["mentions"]] == [("moved", 5)]
    result = cli("verify", "loose", "--fix")
    assert result.stdout.splitlines()[-1] == "fixed 1 citation and 1 mention in loose"
    citations = project.service().get("loose").memory.meta.citations
    assert [(c.ref, c.snippet) for c in citations] == [("src/app.py:5", "API_VERSION = 'v2'")]
    assert file.read_text(encoding="utf-8").endswith("# Loose\n\nThe version is at src/app.py:5.\n")


def test_an_unanchored_citation_whose_line_changed_since_written_gets_no_snippet(
    project: GitRepo, cli: Any
) -> None:
    """History says the code the line named was changed: what it reads now is not what the
    memory cited, so nothing is captured (the prose mention reports it stale)."""
    project.write(
        ".serena/memories/loose.md",
        "---\ncitations: [src/app.py:6]\n---\n# Loose\n\nIt prints at src/app.py:6.\n",
    )
    project.commit("the memory")
    project.write_lines("src/app.py", [*APP[:5], "    print(API_VERSION, flush=True)", APP[6]])
    project.commit("line 6 edited")
    data = json.loads(cli("verify", "loose", "--json").stdout)
    assert [m["status"] for m in data["mentions"]] == ["stale"]
    cli("verify", "loose", "--fix")
    citations = project.service().get("loose").memory.meta.citations
    assert [(c.ref, c.snippet) for c in citations] == [("src/app.py:6", None)]


# -- through the CLI --------------------------------------------------------------


def test_verify_all_fix_from_the_cli_writes_and_refreshes_the_stamp(
    project: GitRepo, cli: Any
) -> None:
    stamp = project.stamp()
    file = project.write(".serena/memories/table.md", serena(stamp))
    change_the_code(project)
    result = cli("verify-all", "--fix")
    assert result.exit_code == 1  # the stale and missing ones still fail
    assert "fixed 2 citations in table\n" in result.stdout
    text = file.read_text(encoding="utf-8")
    fresh = re.search(r"\| src/app\.py \| 5 \| `API_VERSION = 'v2'` \| (\S+) \|", text)
    assert fresh is not None
    assert fresh[1] != stamp and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", fresh[1])
    assert text == serena(stamp, ("5", "7", fresh[1]))


def test_dry_run_prints_the_diff_and_writes_nothing(project: GitRepo, cli: Any) -> None:
    stamp = project.stamp()
    file = project.write(".serena/memories/table.md", serena(stamp))
    change_the_code(project)
    before = file.read_bytes(), file.stat().st_mtime_ns
    result = cli("verify-all", "--fix", "--dry-run")
    assert (file.read_bytes(), file.stat().st_mtime_ns) == before
    lines = result.stdout.splitlines()
    assert "--- a/.serena/memories/table.md" in lines
    assert "+++ b/.serena/memories/table.md" in lines
    removed = [line for line in lines if line.startswith("-|")]
    added = [line for line in lines if line.startswith("+|")]
    assert removed == [
        f"-| src/app.py | 3 | `API_VERSION = 'v2'` | {stamp} | the constant |",
        f"-| src/app.py | 5 | `def main() -> None:` | {stamp} | entry |",
    ]
    assert [re.sub(r"\| \S+Z \|", "| NOW |", line) for line in added] == [
        "+| src/app.py | 5 | `API_VERSION = 'v2'` | NOW | the constant |",
        "+| src/app.py | 7 | `def main() -> None:` | NOW | entry |",
    ]
    assert "fixed" not in result.stdout


def test_a_fix_with_nothing_to_rewrite_says_so_instead_of_passing_for_a_plain_verify(
    project: GitRepo, cli: Any
) -> None:
    # As a Serena store with nothing moved (QA round 29: 14 such stores), whose dry run
    # printed the very lines of a plain verify-all.
    file = project.write(".serena/memories/notes.md", "# Notes\n\nThe entry is `src/app.py`.\n")
    project.commit("notes")
    before = file.read_bytes(), file.stat().st_mtime_ns
    plain = cli("verify-all").stdout.splitlines()
    dry = cli("verify-all", "--fix", "--dry-run").stdout.splitlines()
    assert dry == [*plain[:-1], "--fix --dry-run: nothing to rewrite", plain[-1]]
    assert cli("verify", "notes", "--fix").stdout.splitlines()[-1] == "--fix: nothing to rewrite"
    assert (file.read_bytes(), file.stat().st_mtime_ns) == before
    assert "nothing to rewrite" not in cli("verify-all", "--fix", "--json").stdout


def test_verify_fix_json_carries_the_diff_with_its_memory(project: GitRepo, cli: Any) -> None:
    project.write(".serena/memories/front.md", frontmatter(project.stamp()))
    change_the_code(project)
    data = json.loads(cli("verify", "front", "--fix", "--dry-run", "--json").stdout)
    assert data["fix"]["written"] is False
    assert "-    line: 3\n+    line: 5\n" in data["fix"]["diff"]
    assert [c["status"] for c in data["citations"]] == ["moved", "missing", "stale", "moved"]
