"""The CLI (issue 2 §6): every command, its output, its JSON and its exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import RunCli

MEM_ID = r"\[mem:[A-Za-z0-9]+\]"

HAND_WRITTEN = """\
---
created_at: 2026-01-01T00:00:00.000Z
updated_at: 2026-01-02T00:00:00.000Z
tags: [architecture, patterns]
source: mcp
citations:
  - src/app.py:3
  - https://docs.example.com/api
---
# Layering

The model imports nothing; see [[other-memory]].
"""


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """An empty store folder (a --dir that does not exist is refused)."""
    root = tmp_path / "store"
    root.mkdir()
    return root


@pytest.fixture
def hand_written(store: Path) -> Path:
    file = store / "design" / "layering.md"
    file.parent.mkdir(parents=True)
    file.write_text(HAND_WRITTEN, encoding="utf-8")
    return file


def as_json(stdout: str) -> Any:
    return json.loads(stdout)


def ok(result: Any) -> Any:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def usage_error(result: Any, *names: str) -> str:
    """Assert exit code 2 with the message on stderr naming each given value."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    for name in names:
        assert name in result.stderr, (name, result.stderr)
    return str(result.stderr)


# -- add ----------------------------------------------------------------------------


def test_add_creates_a_memory_and_says_so(run_cli: RunCli, store: Path) -> None:
    result = ok(run_cli(["add", "notes/first", "--content", "Hello.", "--dir", store]))
    assert re.fullmatch(rf"added notes/first  {MEM_ID}\n", result.stdout)
    assert result.stderr == ""
    assert (store / "notes" / "first.md").read_text().endswith("---\nHello.\n")


def test_add_reads_content_from_a_file(run_cli: RunCli, store: Path, tmp_path: Path) -> None:
    source = tmp_path / "note.md"
    source.write_text("# From a file\n\nBody.\n", encoding="utf-8")
    ok(run_cli(["--dir", store, "add", "notes/from-file", "--file", source]))
    data = as_json(ok(run_cli(["--dir", store, "get", "notes/from-file", "--json"])).stdout)
    assert data["content"] == "# From a file\n\nBody."
    assert data["metadata"]["source"] == "file"


def test_add_reads_content_from_standard_input(run_cli: RunCli, store: Path) -> None:
    ok(run_cli(["--dir", store, "add", "notes/piped"], input="Piped content.\n"))
    ok(run_cli(["--dir", store, "add", "notes/dash", "--file", "-"], input="Dash content.\n"))
    for path, content in [("notes/piped", "Piped content."), ("notes/dash", "Dash content.")]:
        data = as_json(ok(run_cli(["--dir", store, "get", path, "--json"])).stdout)
        assert (data["content"], data["metadata"]["source"]) == (content, "stdin")


def test_add_records_cli_as_the_source_of_content_given_inline(
    run_cli: RunCli, store: Path
) -> None:
    ok(run_cli(["--dir", store, "add", "notes/inline", "-c", "Inline."]))
    data = as_json(run_cli(["--dir", store, "get", "notes/inline", "--json"]).stdout)
    assert data["metadata"]["source"] == "cli"


def test_add_takes_repeatable_tags_citations_links_and_an_expiry(
    run_cli: RunCli, store: Path, git_repo: Path
) -> None:
    args = [
        "add", "notes/full", "--content", "Body.",
        "--tag", "a", "-t", "b",
        "--citation", "src/app.py:3", "--citation", "https://docs.example.com",
        "--link", "other/memory", "--link", "depends_on:infra/db",
        "--expires-at", "2099-01-01",
        "--dir", store, "--repo-root", git_repo, "--json",
    ]  # fmt: skip
    data = as_json(ok(run_cli(args)).stdout)
    assert data["path"] == "notes/full"
    assert data["changed"] is True
    assert data["metadata"]["tags"] == ["a", "b"]
    assert data["metadata"]["citations"] == ["src/app.py:3", "https://docs.example.com"]
    assert data["metadata"]["expires_at"] == "2099-01-01T00:00:00.000Z"
    assert data["citations"][0]["snippet"] == "API_VERSION = 'v2'"
    assert [(link["target"], link["type"]) for link in data["links"]] == [
        ("other/memory", "link"),
        ("infra/db", "depends_on"),
    ]


def test_add_refuses_an_existing_path_with_exit_2(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    before = hand_written.read_bytes()
    result = run_cli(["--dir", store, "add", "design/layering", "-c", "Overwrite?"])
    message = usage_error(result, "design/layering", "already exists")
    assert message.startswith("error: ")
    assert result.stdout == ""
    assert hand_written.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["add", "lonely", "-c", "x"], ["'lonely'", "category and a slug"]),
        (["add", "../../etc/passwd", "-c", "x"], ["'../../etc/passwd'"]),
        (["add", "a/b", "-c", "x", "--citation", "src/x.py:0"], ["'src/x.py:0'"]),
        (["add", "a/b", "-c", "x", "--citation", " "], ["citation", "empty"]),
        (["add", "a/b", "-c", "x", "--expires-at", "soon"], ["'soon'", "expires_at"]),
        (["add", "a/b", "-c", "x", "--tag", "a,b"], ["'a,b'"]),
        (["add", "a/b", "-c", "x", "--file", "f"], ["--content", "--file"]),
        (["add", "a/b", "--file", "missing.md"], ["'missing.md'"]),
        (["add", "a/b"], ["empty"]),
        (["add", "a/b", "-c", "   "], ["empty"]),
    ],
)
def test_add_with_bad_input_exits_2_naming_the_bad_value(
    run_cli: RunCli, store: Path, args: list[str], names: list[str]
) -> None:
    result = run_cli([*args, "--dir", store])
    usage_error(result, *names)
    assert not (store / "a" / "b.md").exists()


def test_a_citation_to_a_missing_file_warns_on_stderr_and_succeeds(
    run_cli: RunCli, store: Path, git_repo: Path
) -> None:
    result = ok(
        run_cli(
            ["add", "notes/x", "-c", "x", "--citation", "src/gone.py:4", "--dir", store],
            cwd=git_repo,
        )
    )
    assert result.stderr.startswith("warning: citation src/gone.py:4")
    assert "does not exist" in result.stderr
    assert re.fullmatch(rf"added notes/x  {MEM_ID}\n", result.stdout)


# -- get / show -----------------------------------------------------------------------


def test_get_json_has_the_documented_shape(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    data = as_json(ok(run_cli(["get", "design/layering", "--json", "--dir", store])).stdout)
    assert {"path", "content", "metadata", "links"} <= set(data)
    assert data["path"] == "design/layering"
    assert data["content"] == "# Layering\n\nThe model imports nothing; see [[other-memory]]."
    assert data["metadata"] == {
        "created_at": "2026-01-01T00:00:00.000Z",
        "updated_at": "2026-01-02T00:00:00.000Z",
        "tags": ["architecture", "patterns"],
        "source": "mcp",
        "expires_at": None,
        "citations": ["src/app.py:3", "https://docs.example.com/api"],
    }
    assert [link["target"] for link in data["links"]] == ["other-memory"]
    assert data["links"][0]["type"] == "link"


def test_get_json_of_a_memory_without_citations_has_an_empty_list(
    run_cli: RunCli, store: Path
) -> None:
    ok(run_cli(["--dir", store, "add", "notes/plain", "-c", "Plain."]))
    data = as_json(run_cli(["--dir", store, "get", "notes/plain", "--json"]).stdout)
    assert data["metadata"]["citations"] == []
    assert data["links"] == []


def test_get_prints_the_memory_for_people(run_cli: RunCli, store: Path, hand_written: Path) -> None:
    result = ok(run_cli(["--dir", store, "get", "design/layering"]))
    lines = result.stdout.splitlines()
    assert lines[0].startswith("id:") and lines.count("# Layering") == 1
    assert lines[1:15] == [
        "path:     design/layering",
        "format:   frontmatter",
        "created:  2026-01-01T00:00:00.000Z",
        "updated:  2026-01-02T00:00:00.000Z",
        "tags:     architecture, patterns",
        "source:   mcp",
        "expires:  -",
        "citations (2):",
        "  src/app.py:3",
        "  https://docs.example.com/api",
        "links (1, 1 broken):",
        "  other-memory  [line 12]  dangling: no such memory",
        "",
        "# Layering",
    ]
    assert result.stdout.endswith("The model imports nothing; see [[other-memory]].\n")


def test_get_shows_the_title_once_the_body_or_else_the_tool_heading_it(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    """A body that opens with its `# Title` shows it itself; a body without one gets the
    title the tool gives it (its name) on top. The quick path prints the same bytes."""
    (store / "design" / "plain.md").write_text("No heading, just prose.\n", encoding="utf-8")
    titled = ok(run_cli(["--dir", store, "get", "design/layering"])).stdout
    plain = ok(run_cli(["--dir", store, "get", "design/plain"])).stdout
    assert titled.count("Layering") == 1 and titled.startswith("id:       [mem:")
    assert plain.startswith("# plain\nid:       [mem:") and plain.count("# plain") == 1
    for path, by_click in (("design/layering", titled), ("design/plain", plain)):
        quick = subprocess.run(
            [sys.executable, "-m", "memory_enhancement", "--dir", str(store), "get", path],
            capture_output=True,
            text=True,
            env={**os.environ},
            check=True,
        )
        assert quick.stdout == by_click


def test_show_is_an_alias_of_get(run_cli: RunCli, store: Path, hand_written: Path) -> None:
    shown = ok(run_cli(["--dir", store, "show", "design/layering", "--json"]))
    got = ok(run_cli(["--dir", store, "get", "design/layering", "--json"]))
    assert shown.stdout == got.stdout


def test_get_finds_a_memory_by_its_file_name_as_on_disk(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    data = as_json(ok(run_cli(["--dir", store, "get", "design/layering.md", "--json"])).stdout)
    assert data["path"] == "design/layering"


def test_get_of_a_missing_memory_exits_2_naming_it(run_cli: RunCli, store: Path) -> None:
    result = run_cli(["--dir", store, "get", "notes/nothing"])
    message = usage_error(result, "'notes/nothing'", "not found")
    assert message == f"error: memory not found: 'notes/nothing' (store {store})\n"
    assert result.stdout == ""


def test_get_of_an_expired_memory_needs_include_expired(run_cli: RunCli, store: Path) -> None:
    ok(run_cli(["--dir", store, "add", "notes/old", "-c", "Old.", "--expires-at", "2000-01-01"]))
    usage_error(run_cli(["--dir", store, "get", "notes/old"]), "expired", "notes/old")
    result = ok(run_cli(["--dir", store, "get", "notes/old", "--include-expired", "--json"]))
    assert as_json(result.stdout)["metadata"]["expires_at"] == "2000-01-01T00:00:00.000Z"


# -- update ----------------------------------------------------------------------------


def test_update_replaces_content_and_keeps_everything_else(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    result = ok(run_cli(["--dir", store, "update", "design/layering", "-c", "New body."]))
    assert re.fullmatch(rf"updated design/layering  {MEM_ID}\n", result.stdout)
    data = as_json(run_cli(["--dir", store, "get", "design/layering", "--json"]).stdout)
    assert data["content"] == "New body."
    meta = data["metadata"]
    assert meta["created_at"] == "2026-01-01T00:00:00.000Z"
    assert meta["updated_at"] != "2026-01-02T00:00:00.000Z"
    assert meta["source"] == "mcp"
    assert meta["tags"] == ["architecture", "patterns"]
    assert meta["citations"] == ["src/app.py:3", "https://docs.example.com/api"]


def test_update_content_from_a_file_and_from_stdin(
    run_cli: RunCli, store: Path, hand_written: Path, tmp_path: Path
) -> None:
    source = tmp_path / "new.md"
    source.write_text("From file.\n")
    ok(run_cli(["--dir", store, "update", "design/layering", "--file", source]))
    assert "From file." in hand_written.read_text()
    ok(run_cli(["--dir", store, "update", "design/layering", "-f", "-"], input="From stdin.\n"))
    assert "From stdin." in hand_written.read_text()


def test_update_citations_replace_the_list_and_clear_citations_empties_it(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    def citations() -> list[str]:
        out = run_cli(["--dir", store, "get", "design/layering", "--json"]).stdout
        return list(as_json(out)["metadata"]["citations"])

    ok(run_cli(["--dir", store, "update", "design/layering", "--tag", "only"]))
    assert citations() == ["src/app.py:3", "https://docs.example.com/api"]
    ok(run_cli(["--dir", store, "update", "design/layering", "--citation", "new/path.ts:5"]))
    assert citations() == ["new/path.ts:5"]
    ok(run_cli(["--dir", store, "update", "design/layering", "--clear-citations"]))
    assert citations() == []
    assert "citations" not in hand_written.read_text()


def test_update_sets_and_removes_the_expiry(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    ok(run_cli(["--dir", store, "update", "design/layering", "--expires-at", "2099-12-31"]))
    assert "expires_at: 2099-12-31T00:00:00.000Z\n" in hand_written.read_text()
    ok(run_cli(["--dir", store, "update", "design/layering", "--no-expires-at"]))
    assert "expires_at" not in hand_written.read_text()


def test_update_tags_replace_and_clear_tags_empties_them(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    ok(run_cli(["--dir", store, "update", "design/layering", "-t", "x", "-t", "y"]))
    assert "tags: [x, y]\n" in hand_written.read_text()
    ok(run_cli(["--dir", store, "update", "design/layering", "--clear-tags"]))
    assert "tags: []\n" in hand_written.read_text()


def test_update_json_has_the_memory_and_whether_it_changed(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    data = as_json(
        ok(run_cli(["--dir", store, "update", "design/layering", "-t", "z", "--json"])).stdout
    )
    assert data["metadata"]["tags"] == ["z"]
    assert data["changed"] is True
    again = as_json(
        run_cli(["--dir", store, "update", "design/layering", "-t", "z", "--json"]).stdout
    )
    assert again["changed"] is False


@pytest.mark.parametrize(
    ("args", "names"),
    [
        ([], ["nothing to update"]),
        (["--tag", "a", "--clear-tags"], ["--tag", "--clear-tags"]),
        (["--expires-at", "2030-01-01", "--no-expires-at"], ["not both"]),
        (["--expires-at", "whenever"], ["'whenever'"]),
        (["--citation", "a.py:9-3"], ["'a.py:9-3'"]),
        (["-c", "  "], ["empty"]),
    ],
)
def test_update_with_bad_input_exits_2_and_leaves_the_file_alone(
    run_cli: RunCli, store: Path, hand_written: Path, args: list[str], names: list[str]
) -> None:
    before = hand_written.read_bytes()
    usage_error(run_cli(["--dir", store, "update", "design/layering", *args]), *names)
    assert hand_written.read_bytes() == before


def test_update_of_a_missing_memory_exits_2(run_cli: RunCli, store: Path) -> None:
    usage_error(run_cli(["--dir", store, "update", "notes/none", "-t", "x"]), "'notes/none'")


# -- remove, move ------------------------------------------------------------------------


def test_remove_deletes_the_memory(run_cli: RunCli, store: Path, hand_written: Path) -> None:
    result = ok(run_cli(["--dir", store, "remove", "design/layering"]))
    assert result.stdout == "removed design/layering\n"
    assert not hand_written.exists()
    usage_error(run_cli(["--dir", store, "remove", "design/layering"]), "'design/layering'")


def test_remove_json(run_cli: RunCli, store: Path, hand_written: Path) -> None:
    result = ok(run_cli(["--dir", store, "remove", "design/layering", "--json"]))
    assert as_json(result.stdout) == {"path": "design/layering", "removed": True, "linked_from": []}


def test_move_renames_and_keeps_citations(run_cli: RunCli, store: Path, hand_written: Path) -> None:
    result = ok(run_cli(["--dir", store, "move", "design/layering", "archive/layering"]))
    assert result.stdout == "moved design/layering -> archive/layering\n"
    data = as_json(run_cli(["--dir", store, "get", "archive/layering", "--json"]).stdout)
    assert data["metadata"]["citations"] == ["src/app.py:3", "https://docs.example.com/api"]
    assert not hand_written.exists()


def test_a_move_by_its_name_reports_the_path_it_moved_from(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    """Writes take a name since qa-int-s25; `from` echoed the name typed, not the path."""
    result = ok(run_cli(["--dir", store, "move", "layering", "archive/layering", "--json"]))
    assert as_json(result.stdout)["from"] == "design/layering"
    result = ok(run_cli(["--dir", store, "move", "layering", "design/layering"]))
    assert result.stdout == "moved archive/layering -> design/layering\n"


def test_move_to_the_same_path_is_a_no_op(run_cli: RunCli, store: Path, hand_written: Path) -> None:
    before = hand_written.read_bytes()
    result = ok(run_cli(["--dir", store, "move", "design/layering", "design/layering", "--json"]))
    assert as_json(result.stdout) == {
        "from": "design/layering",
        "path": "design/layering",
        "changed": False,
        "links_updated": [],
    }
    assert hand_written.read_bytes() == before


def test_move_onto_an_existing_memory_exits_2(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    ok(run_cli(["--dir", store, "add", "notes/taken", "-c", "Taken."]))
    usage_error(
        run_cli(["--dir", store, "move", "design/layering", "notes/taken"]),
        "'notes/taken'",
        "already exists",
    )
    assert hand_written.exists()


# -- list, recent, prune ------------------------------------------------------------------


def _paths(stdout: str) -> list[str]:
    return [re.sub(rf"^{MEM_ID}  ", "", line).split()[0] for line in stdout.splitlines()]


@pytest.fixture
def several(run_cli: RunCli, store: Path) -> Path:
    for path, extra in [
        ("projects/alpha/setup", ["--tag", "alpha"]),
        ("projects/alpha/deep/nested", []),
        ("projects/beta/setup", []),
        ("global/old", ["--expires-at", "2000-01-01"]),
        ("global/editor", []),
    ]:
        ok(run_cli(["--dir", store, "add", path, "-c", f"# {path}\n\nBody.", *extra]))
    return store


def test_list_prints_one_line_per_memory(run_cli: RunCli, several: Path) -> None:
    result = ok(run_cli(["--dir", several, "list"]))
    assert _paths(result.stdout) == [
        "global/editor",
        "projects/alpha/deep/nested",
        "projects/alpha/setup",
        "projects/beta/setup",
    ]
    assert any(line.endswith("#alpha") for line in result.stdout.splitlines())


def test_list_of_a_category_is_recursive(run_cli: RunCli, several: Path) -> None:
    result = ok(run_cli(["list", "projects/alpha", "--dir", several]))
    assert _paths(result.stdout) == ["projects/alpha/deep/nested", "projects/alpha/setup"]
    with_slash = ok(run_cli(["list", "projects/alpha/", "--dir", several]))
    assert with_slash.stdout == result.stdout


def test_list_can_include_expired_memories(run_cli: RunCli, several: Path) -> None:
    result = ok(run_cli(["list", "global", "--include-expired", "--dir", several]))
    lines = result.stdout.splitlines()
    assert _paths(result.stdout) == ["global/editor", "global/old"]
    assert lines[1].endswith("(expired)")


def test_list_limit_counts_what_is_shown(run_cli: RunCli, several: Path) -> None:
    result = ok(run_cli(["list", "--limit", "2", "--dir", several]))
    assert _paths(result.stdout) == ["global/editor", "projects/alpha/deep/nested"]
    expired = ok(run_cli(["list", "global", "-n", "2", "--include-expired", "--dir", several]))
    assert _paths(expired.stdout) == ["global/editor", "global/old"]
    assert run_cli(["list", "--limit", "0", "--dir", several]).exit_code == 2


def test_list_tag_keeps_the_memories_it_tags_with_a_category_and_a_limit(
    run_cli: RunCli, several: Path
) -> None:
    """As `search --tag`: a new user on a real store looked for it (session 26 QA)."""
    ok(run_cli(["--dir", several, "add", "global/alpha-notes", "-c", "# A", "--tag", "alpha"]))
    tagged = ok(run_cli(["list", "--tag", "alpha", "--dir", several]))
    assert _paths(tagged.stdout) == ["global/alpha-notes", "projects/alpha/setup"]
    assert _paths(ok(run_cli(["list", "projects", "--tag", "alpha", "--dir", several])).stdout) == [
        "projects/alpha/setup"
    ]
    assert _paths(ok(run_cli(["list", "--tag", "alpha", "-n", "1", "--dir", several])).stdout) == [
        "global/alpha-notes"
    ]
    assert ok(run_cli(["list", "--tag", "nothing", "--dir", several])).stdout == "no memories\n"
    process = subprocess.run(  # the quick read path leaves an option it does not know to click
        [sys.executable, "-m", "memory_enhancement", "list", "--tag", "alpha", "--dir", several],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert _paths(process.stdout) == ["global/alpha-notes", "projects/alpha/setup"]


def test_list_json_has_one_summary_per_memory(run_cli: RunCli, several: Path) -> None:
    data = as_json(ok(run_cli(["list", "projects", "--json", "--dir", several])).stdout)
    assert [m["path"] for m in data] == [
        "projects/alpha/deep/nested",
        "projects/alpha/setup",
        "projects/beta/setup",
    ]
    first = data[1]
    assert {
        "path", "title", "format", "tags", "created_at", "updated_at", "expires_at",
        "expired", "source", "citations",
    } <= set(first)  # fmt: skip
    assert (first["title"], first["tags"], first["expired"]) == (
        "projects/alpha/setup",
        ["alpha"],
        False,
    )


def test_list_of_an_empty_store_says_so(run_cli: RunCli, store: Path) -> None:
    assert ok(run_cli(["--dir", store, "list"])).stdout == "no memories\n"
    assert as_json(ok(run_cli(["--dir", store, "list", "--json"])).stdout) == []


def test_list_lines_up_titles_after_chinese_and_japanese_names(tmp_path: Path) -> None:
    """A wide character takes two columns (Meng-Fei/PyFstat names its memories 代码规范)."""
    store = tmp_path / "memories"
    store.mkdir()
    titles = {"代码规范": "代码规范", "task_completion": "Done", "設計メモ": "設計"}
    for name, title in titles.items():
        (store / f"{name}.md").write_text(f"# {title}\n", encoding="utf-8")
    listed = subprocess.run(
        [sys.executable, "-m", "memory_enhancement", "--dir", str(store), "list"],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    lines = [line.partition("]  ")[2] for line in listed.stdout.splitlines()]
    assert lines == ["task_completion  Done", "代码规范         代码规范", "設計メモ         設計"]


def test_recent_lists_newest_first_with_a_limit(run_cli: RunCli, several: Path) -> None:
    ok(run_cli(["--dir", several, "update", "projects/alpha/setup", "-t", "touched"]))
    result = ok(run_cli(["--dir", several, "recent", "--limit", "2"]))
    assert _paths(result.stdout) == ["projects/alpha/setup", "global/editor"]
    data = as_json(ok(run_cli(["--dir", several, "recent", "-n", "1", "--json"])).stdout)
    assert [m["path"] for m in data] == ["projects/alpha/setup"]
    usage_error(run_cli(["--dir", several, "recent", "--limit", "0"]), "limit")


def test_prune_dry_run_then_prune(run_cli: RunCli, several: Path) -> None:
    result = ok(run_cli(["--dir", several, "prune", "--dry-run"]))
    assert result.stdout == "would remove global/old\n1 expired memory would be removed\n"
    assert (several / "global" / "old.md").exists()
    data = as_json(ok(run_cli(["--dir", several, "prune", "--dry-run", "--json"])).stdout)
    assert data == {"removed": [], "would_remove": ["global/old"]}
    result = ok(run_cli(["--dir", several, "prune", "--dry-run"]))
    assert ok(run_cli(["--dir", several, "prune"])).stdout == (
        "removed global/old\n1 expired memory removed\n"
    )
    ok(run_cli(["--dir", several, "add", "global/older", "-c", "x", "--expires-at", "2001-01-01"]))
    data = as_json(ok(run_cli(["--dir", several, "prune", "--json"])).stdout)
    assert data == {"removed": ["global/older"], "would_remove": []}
    assert not (several / "global" / "old.md").exists()
    assert ok(run_cli(["--dir", several, "prune"])).stdout == "0 expired memories removed\n"


# -- citation add ------------------------------------------------------------------------


def test_citation_add_appends_a_citation_with_its_captured_snippet(
    run_cli: RunCli, store: Path, hand_written: Path, git_repo: Path
) -> None:
    result = ok(
        run_cli(
            ["citation", "add", "design/layering", "src/util/helpers.py#L2", "--dir", store],
            cwd=git_repo,
        )
    )
    assert re.fullmatch(rf"cited in design/layering  {MEM_ID}\n", result.stdout)
    data = as_json(run_cli(["--dir", store, "get", "design/layering", "--json"]).stdout)
    assert data["metadata"]["citations"][-1] == "src/util/helpers.py:2"
    assert data["citations"][-1]["snippet"] == "return a | b"


def test_citation_add_with_a_snippet_and_json(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    result = ok(
        run_cli(
            ["--dir", store, "citation", "add", "design/layering", "lib/x.py:7-9",
             "--snippet", "def x():", "--json"]
        )
    )  # fmt: skip
    data = as_json(result.stdout)
    assert data["metadata"]["citations"][-1] == "lib/x.py:7-9"
    assert data["citations"][-1]["snippet"] == "def x():"
    assert "lib/x.py" in result.stderr  # the cited file is not there: a warning


def test_citation_add_with_a_bad_reference_exits_2(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    usage_error(
        run_cli(["--dir", store, "citation", "add", "design/layering", "x.py:0"]), "'x.py:0'"
    )


# -- store options, default stores ---------------------------------------------------------


def test_store_options_work_before_and_after_the_command(
    run_cli: RunCli, store: Path, hand_written: Path
) -> None:
    before = ok(run_cli(["--dir", store, "list"]))
    after = ok(run_cli(["list", "--dir", store]))
    assert before.stdout == after.stdout
    assert "design/layering" in before.stdout


def test_the_later_store_option_wins(run_cli: RunCli, tmp_path: Path, hand_written: Path) -> None:
    empty = tmp_path / "empty"
    result = ok(run_cli(["--dir", empty, "list", "--dir", hand_written.parents[1]]))
    assert "design/layering" in result.stdout


def test_inside_a_git_repository_the_project_store_is_the_default(
    run_cli: RunCli, git_repo: Path
) -> None:
    ok(run_cli(["add", "notes/here", "-c", "Here."], cwd=git_repo / "src"))
    assert (git_repo / ".memories" / "notes" / "here.md").is_file()
    (git_repo / ".serena" / "memories").mkdir(parents=True)
    ok(run_cli(["add", "notes/serena", "-c", "# Serena\n\nBody."], cwd=git_repo))
    file = git_repo / ".serena" / "memories" / "notes" / "serena.md"
    assert file.is_file()
    assert not file.read_text().startswith("---")


def test_outside_a_repository_the_global_store_is_the_default(
    run_cli: RunCli, isolated_home: Path
) -> None:
    ok(run_cli(["add", "notes/global", "-c", "Everywhere."]))
    assert (isolated_home / "memories" / "notes" / "global.md").is_file()


def test_repo_root_chooses_the_code_snippets_come_from(
    run_cli: RunCli, store: Path, git_repo: Path
) -> None:
    result = ok(
        run_cli(
            ["add", "notes/x", "-c", "x", "--citation", "src/app.py:3", "--json",
             "--dir", store, "--repo-root", git_repo]
        )
    )  # fmt: skip
    assert as_json(result.stdout)["citations"][0]["snippet"] == "API_VERSION = 'v2'"
    usage_error(run_cli(["list", "--dir", store, "--repo-root", "no/such/dir"]), "'no/such/dir'")


# -- store commands -----------------------------------------------------------------------


def test_store_init_creates_a_store_once(run_cli: RunCli, tmp_path: Path) -> None:
    target = tmp_path / "new-store"
    result = ok(run_cli(["store", "init", str(target)]))
    assert result.stdout == f"created store {target} (new memories: frontmatter)\n"
    assert target.is_dir()
    result = ok(run_cli(["store", "init", str(target), "--json"]))
    assert as_json(result.stdout) == {
        "path": str(target),
        "created": False,
        "format": "frontmatter",
    }


def test_store_init_without_a_path_creates_the_project_store(
    run_cli: RunCli, git_repo: Path
) -> None:
    result = ok(run_cli(["store", "init"], cwd=git_repo / "src"))
    assert result.stdout == f"created store {git_repo / '.memories'} (new memories: frontmatter)\n"
    assert (git_repo / ".memories").is_dir()


def test_store_init_can_choose_the_serena_format(run_cli: RunCli, tmp_path: Path) -> None:
    target = tmp_path / "serena-store"
    result = ok(run_cli(["store", "init", str(target), "--format", "serena"]))
    assert result.stdout.endswith("(new memories: serena)\n")
    ok(run_cli(["--dir", target, "add", "notes/s", "-c", "# S\n\nBody.", "--tag", "t"]))
    assert (target / "notes" / "s.md").read_text().startswith("# S\n")


def test_a_serena_store_takes_new_memories_at_its_top_level(
    run_cli: RunCli, git_repo: Path
) -> None:
    """Serena keeps every memory at the top of `.serena/memories/`: a new one, or a rename,
    needs no category there (a store of categories still asks for one)."""
    store = git_repo / ".serena" / "memories"
    store.mkdir(parents=True)
    (store / "project_overview.md").write_text("# Project overview\n\nA tool.\n")
    ok(run_cli(["--dir", store, "add", "Tech_Stack", "-c", "# Tech stack\n\nPython."]))
    assert (store / "Tech_Stack.md").read_text().startswith("# Tech stack\n")
    ok(run_cli(["--dir", store, "move", "Tech_Stack", "tech-stack"]))
    assert sorted(p.name for p in store.iterdir()) == ["project_overview.md", "tech-stack.md"]
    usage_error(run_cli(["--dir", git_repo / "notes", "add", "lonely", "-c", "x"]), "category")


def test_store_init_on_a_file_exits_2(run_cli: RunCli, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    usage_error(run_cli(["store", "init", str(tmp_path / "file")]), "it is a file")


def test_store_add_list_and_remove(run_cli: RunCli, tmp_path: Path, isolated_home: Path) -> None:
    work = tmp_path / "work"
    assert ok(run_cli(["store", "add", "work", str(work)])).stdout == (
        f"registered store work -> {work}\n"
    )
    ok(run_cli(["--store", "work", "add", "notes/w", "-c", "Work."]))
    assert (work / "notes" / "w.md").is_file()
    assert "notes/w" in ok(run_cli(["list", "--store", "work"])).stdout

    data = as_json(ok(run_cli(["store", "list", "--json"])).stdout)
    assert data == [
        {"name": "global", "path": str(isolated_home / "memories"), "exists": False},
        {"name": "work", "path": str(work), "exists": True},
    ]
    text = ok(run_cli(["store", "list"])).stdout
    assert text == (f"global  {isolated_home / 'memories'}  (not created yet)\nwork    {work}\n")

    result = ok(run_cli(["store", "remove", "work"]))
    assert result.stdout == f"unregistered store work (files kept in {work})\n"
    assert (work / "notes" / "w.md").is_file()
    usage_error(run_cli(["--store", "work", "list"]), "'work'")
    usage_error(run_cli(["store", "remove", "work"]), "'work'")


def test_store_list_shows_the_project_store_inside_a_repository(
    run_cli: RunCli, git_repo: Path
) -> None:
    data = as_json(ok(run_cli(["store", "list", "--json"], cwd=git_repo)).stdout)
    assert data[0] == {"name": "project", "path": str(git_repo / ".memories"), "exists": False}


def test_store_add_refuses_a_bad_name(run_cli: RunCli, tmp_path: Path) -> None:
    usage_error(run_cli(["store", "add", "global", str(tmp_path)]), "'global'")


# -- usage errors, version, JSON everywhere ---------------------------------------------------


def test_an_unknown_command_or_option_is_a_usage_error(run_cli: RunCli) -> None:
    assert run_cli(["frobnicate"]).exit_code == 2
    result = run_cli(["list", "--no-such-option"])
    usage_error(result, "--no-such-option")


def test_a_missing_argument_is_a_usage_error_naming_it(run_cli: RunCli, store: Path) -> None:
    usage_error(run_cli(["--dir", store, "get"]), "PATH")
    usage_error(run_cli(["--dir", store, "move", "a/b"]), "DESTINATION")


def test_a_path_leaving_the_store_is_refused_by_every_command(run_cli: RunCli, store: Path) -> None:
    for command in (["get"], ["remove"], ["update", "-t", "x"], ["move", "a/b"]):
        result = run_cli(["--dir", store, command[0], "../../etc/passwd", *command[1:]])
        usage_error(result, "'../../etc/passwd'")


def test_dir_naming_a_file_is_a_usage_error(run_cli: RunCli, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    usage_error(run_cli(["--dir", tmp_path / "notes.txt", "list"]), "notes.txt")


def test_version_is_printed(run_cli: RunCli) -> None:
    assert ok(run_cli(["--version"])).stdout.startswith("memory-enhancement, version ")


def test_every_command_takes_json(run_cli: RunCli, store: Path, hand_written: Path) -> None:
    commands = [
        ["add", "notes/j", "-c", "J."],
        ["get", "notes/j"],
        ["show", "notes/j"],
        ["update", "notes/j", "-t", "x"],
        ["citation", "add", "notes/j", "https://example.com"],
        ["list"],
        ["recent"],
        ["prune", "--dry-run"],
        ["move", "notes/j", "notes/k"],
        ["remove", "notes/k"],
        ["store", "list"],
        ["store", "init", str(store)],
    ]
    for command in commands:
        result = ok(run_cli(["--dir", store, *command, "--json"]))
        json.loads(result.stdout)


# -- real processes ---------------------------------------------------------------------------


def _env() -> dict[str, str]:
    return dict(os.environ)


def test_python_dash_m_runs_the_cli_with_exit_codes_and_streams(
    store: Path, tmp_path: Path
) -> None:
    base = [sys.executable, "-m", "memory_enhancement", "--dir", str(store)]
    added = subprocess.run(
        [*base, "add", "notes/p", "--tag", "t"],
        input="From a pipe.\n",
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        check=False,
    )
    assert added.returncode == 0, added.stderr
    assert re.fullmatch(rf"added notes/p  {MEM_ID}\n", added.stdout)
    got = subprocess.run(
        [*base, "get", "notes/p", "--json"],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, check=False,
    )  # fmt: skip
    assert got.returncode == 0
    data = json.loads(got.stdout)
    assert (data["content"], data["metadata"]["source"], data["metadata"]["tags"]) == (
        "From a pipe.",
        "stdin",
        ["t"],
    )
    missing = subprocess.run(
        [*base, "get", "notes/none"],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, check=False,
    )  # fmt: skip
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert missing.stderr == f"error: memory not found: 'notes/none' (store {store})\n"


def test_remove_names_the_memories_whose_links_to_it_now_find_nothing(
    store: Path, tmp_path: Path
) -> None:
    """2sem/realtornote: removing `swiftui_migration` said `removed swiftui_migration`
    and nothing of `app_entry`, whose link to it now found nothing."""
    for name, text in [
        ("swiftui_migration", "# SwiftUI migration\n"),
        ("app_entry", "# 앱 진입점\n\n관련: swiftui_migration\n"),
        ("alone", "# Alone\n"),
    ]:
        (store / f"{name}.md").write_text(text, encoding="utf-8")
    src = Path(__file__).resolve().parents[1] / "src"
    base = [sys.executable, "-m", "memory_enhancement", "--dir", str(store), "remove"]
    env = {**_env(), "PYTHONPATH": str(src), "MEMORY_ENHANCEMENT_HOME": str(tmp_path / "h")}
    done = subprocess.run(
        [*base, "swiftui_migration"], capture_output=True, text=True, env=env, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "removed swiftui_migration\n  linked to from app_entry: those links now find nothing\n"
    )
    done = subprocess.run([*base, "alone"], capture_output=True, text=True, env=env, check=False)
    assert done.stdout == "removed alone\n"


def test_the_console_script_is_installed_and_works(store: Path, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "memory-enhancement"
    assert script.is_file()
    run = subprocess.run(
        [str(script), "list", "--dir", str(store), "--json"],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, check=False,
    )  # fmt: skip
    assert (run.returncode, run.stdout) == (0, "[]\n")
    bad = subprocess.run(
        [str(script), "add", "no-category", "-c", "x", "--dir", str(store)],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, check=False,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "'no-category'" in bad.stderr


def test_every_command_is_registered_lazily_and_found_in_its_module() -> None:
    import importlib

    import click

    from memory_enhancement.cli import LAZY_COMMANDS, cli

    defined = {}
    for module in {*LAZY_COMMANDS.values()}:
        loaded = importlib.import_module(f"memory_enhancement.cli.{module}")
        for command in loaded.COMMANDS:
            defined[command.name] = module
    assert {name: LAZY_COMMANDS[name] for name in defined} == defined  # none forgotten
    context = click.Context(cli)
    for name in LAZY_COMMANDS:
        command = cli.get_command(context, name)
        assert command is not None, name
        assert command.name == ("get" if name == "show" else name)


def test_get_does_not_import_the_other_commands_nor_the_verifier(
    run_cli: RunCli, store: Path
) -> None:
    run_cli(["add", "notes/a", "--content", "A.", "--dir", str(store)])
    probe = (
        "import sys\n"
        "from memory_enhancement.cli import main\n"
        f"sys.argv = ['memory-enhancement', 'get', 'notes/a', '--dir', {str(store)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = [m for m in sys.modules if m.startswith('memory_enhancement.')]\n"
        "print(' '.join(sorted(loaded)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env={**os.environ}
    )
    loaded = set(done.stderr.split())
    assert "memory_enhancement.cli.memory_cmds" in loaded
    for absent in ("cli.verify_cmds", "cli.graph_cmds", "cli.health_cmds", "verify.verifier"):
        assert f"memory_enhancement.{absent}" not in loaded


def test_a_group_typed_alone_prints_its_help_on_stdout_and_succeeds(tmp_path: Path) -> None:
    """`memory-enhancement stats` (and `store`, `citation`, `skill`, the tool itself) shows
    what the group holds: click 8.2 made it a usage error, help on stderr, exit 2."""
    import click

    from memory_enhancement.cli import cli

    context = click.Context(cli)
    groups = [
        name
        for name in cli.list_commands(context)
        if isinstance(cli.get_command(context, name), click.Group)
    ]
    assert {"citation", "skill", "stats", "store"} <= set(groups)
    for name in ["", *groups]:
        group = cli if not name else cli.get_command(context, name)
        assert isinstance(group, click.Group)
        command = [sys.executable, "-m", "memory_enhancement", *([name] if name else [])]
        done = subprocess.run(
            command, capture_output=True, text=True, env=_env(), cwd=tmp_path, check=False
        )
        assert (done.returncode, done.stderr) == (0, ""), name
        assert done.stdout.startswith(f"Usage: memory-enhancement {name}".rstrip()), name
        for sub in group.list_commands(context):
            assert re.search(rf"^  {re.escape(sub)}\s", done.stdout, re.M), (name, sub)
    missing = subprocess.run(  # an option with no command is still a missing command
        [sys.executable, "-m", "memory_enhancement", "--dir", str(tmp_path)],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, check=False,
    )  # fmt: skip
    assert missing.returncode == 2 and "Missing command" in missing.stderr
