"""Every MCP tool, resource and prompt through the SDK's in-process client (issue 6).

The server is built exactly as `serve` builds it (`build_server(App.service_for)`),
with an isolated tool home and a real git repository as the current folder, so
the default store is that repository's project store (`.memories`). Every
successful result is checked against the tool's output schema; every failure
must be a tool error whose message names the bad value.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from conftest import RunCli, git
from mcp_support import Agent, commit_then_bump_the_version, text_of
from memory_enhancement.cli.app import App
from memory_enhancement.mcp.server import build_server
from memory_enhancement.mcp.tooling import SKILL_FILE

pytestmark = pytest.mark.anyio

READ_ONLY = {
    "get_memory", "list_memories", "recent_memories", "search_memories", "get_context",
    "resolve_citation", "verify_memories", "traverse_graph", "related_memories",
    "memory_health",
}  # fmt: skip
WRITES = {
    "add_memory", "update_memory", "remove_memory", "move_memory", "prune_memories",
    "verify_memory", "add_citation", "reinforce_memory",
}  # fmt: skip
DESTRUCTIVE = {"remove_memory", "prune_memories"}
CITATION_ID = re.compile(r"mem:[0-9A-Za-z]{6}")


def usage_rows(app: App) -> list[tuple[str, str, str]]:
    """(session, action, path) of every recorded use of the default store's memories."""
    with app.service_for(None, "probe").state.connect() as conn:
        rows = conn.execute("SELECT session, action, path FROM usage ORDER BY id").fetchall()
    return [tuple(row) for row in rows]


async def add(agent: Agent, path: str, content: str, **extra: Any) -> dict[str, Any]:
    return await agent.call("add_memory", path=path, content=content, **extra)


# -- the tool list ------------------------------------------------------------------


async def test_every_tool_has_an_output_schema_and_read_only_tools_are_annotated(
    agent: Agent,
) -> None:
    tools = await agent.tools()
    assert set(tools) == READ_ONLY | WRITES  # a new tool joins one of the two sets
    for tool in tools.values():
        assert tool.output_schema is not None, tool.name
        assert tool.output_schema["type"] == "object", tool.name
        assert tool.description, tool.name
        assert tool.annotations is not None, tool.name
    for name in READ_ONLY:
        assert tools[name].annotations.read_only_hint is True, name
    for name in WRITES:
        assert tools[name].annotations.read_only_hint is False, name
    for name in DESTRUCTIVE:
        assert tools[name].annotations.destructive_hint is True, name
    assert tools["add_memory"].annotations.destructive_hint is False


async def test_every_tool_takes_an_optional_store(agent: Agent) -> None:
    for tool in (await agent.tools()).values():
        if tool.name in READ_ONLY | WRITES:
            assert "store" in tool.input_schema["properties"], tool.name
            assert "store" not in tool.input_schema.get("required", []), tool.name


async def test_the_arguments_whose_meaning_is_not_in_their_name_are_described(
    agent: Agent,
) -> None:
    """Read as a model reads the tool list: min_confidence also dropped every uncited
    memory (all of 2to4/RecRadiko2's) and max_tokens counted CJK apart, said nowhere."""
    tools = await agent.tools()
    wanted = {
        "search_memories": [
            "query",
            "limit",
            "verify",
            "min_confidence",
            "min_holding",
            "category",
            "tag",
        ],
        "get_context": ["query", "limit", "max_tokens", "verify"],
        "traverse_graph": ["depth"],
        "list_memories": ["limit", "tag"],
    }
    for name, arguments in wanted.items():
        properties = tools[name].input_schema["properties"]
        for argument in arguments:
            assert properties[argument].get("description"), (name, argument)
    search = tools["search_memories"].input_schema["properties"]
    assert "without citations" in search["min_confidence"]["description"]
    context = tools["get_context"].input_schema["properties"]
    assert "Japanese" in context["max_tokens"]["description"]


async def test_the_server_introduces_itself_and_points_at_verification(agent: Agent) -> None:
    assert agent.client.server_info.name == "memory-enhancement"
    assert agent.client.instructions is not None
    assert "verify" in agent.client.instructions
    assert "memory_skill" in agent.client.instructions


# -- the tools, one by one --------------------------------------------------------


async def test_add_memory_returns_the_path_its_citation_id_and_captured_snippets(
    agent: Agent, git_repo: Path
) -> None:
    data = await add(agent, "Decisions/API Version", "Clients send v2.", citations=["src/app.py:3"])
    assert data["path"] == "Decisions/API-Version"
    assert CITATION_ID.fullmatch(data["id"])
    assert data["changed"] is True
    assert data["metadata"]["source"] == "mcp"
    assert data["citations_written"][0]["snippet"] == "API_VERSION = 'v2'"
    assert data["citations_written"][0]["verified"] is not None
    assert (git_repo / ".memories" / "Decisions" / "API-Version.md").is_file()


async def test_memories_named_in_chinese_or_japanese_can_be_added_and_moved_to(
    agent: Agent, git_repo: Path
) -> None:
    """Real Serena stores name memories in their language (PyFstat: `代码规范.md`); a
    name in CJK used to normalize to nothing ("a segment is empty after normalization")."""
    serena = git_repo / ".serena" / "memories"
    serena.mkdir(parents=True)
    (serena / "代码规范.md").write_bytes("# 代码规范\n\n- 使用 black 格式化\n".encode())

    added = await add(agent, "メモ/設計 方針", "設計の方針。")
    assert added["path"] == "メモ/設計-方針"
    assert (serena / "メモ" / "設計-方針.md").is_file()
    assert (await agent.call("get_memory", path="メモ/設計 方針"))["path"] == "メモ/設計-方針"

    moved = await agent.call("move_memory", from_path="代码规范", to_path="规范/代码规范")
    assert moved["path"] == "规范/代码规范"
    assert (
        (serena / "规范" / "代码规范.md")
        .read_bytes()
        .startswith("# 代码规范\n\n- 使用 black 格式化\n".encode())
    )
    listed = await agent.call("list_memories")
    assert {m["path"] for m in listed["memories"]} == {"メモ/設計-方針", "规范/代码规范"}


async def test_add_memory_warns_about_a_citation_past_the_end_of_the_file_but_keeps_it(
    agent: Agent,
) -> None:
    data = await add(agent, "notes/far", "Far away.", citations=["src/app.py:99"])
    assert data["metadata"]["citations"] == ["src/app.py:99"]
    assert any("line 99 is past the end of src/app.py" in w for w in data["warnings"])


async def test_get_memory_with_verify_carries_the_verdicts(agent: Agent) -> None:
    await add(agent, "decisions/api", "Clients send v2.", citations=["src/app.py:3"])
    data = await agent.call("get_memory", path="decisions/api", verify=True)
    verification = data["verification"]
    assert verification["memory_id"] == "decisions/api"
    assert verification["valid"] is True
    assert verification["confidence"] == 1.0
    assert [c["status"] for c in verification["citations"]] == ["valid"]
    assert "verification" not in await agent.call("get_memory", path="decisions/api")


async def test_get_memory_answers_as_the_cli_get_json_does(
    agent: Agent, run_cli: RunCli, git_repo: Path
) -> None:
    await add(agent, "decisions/api", "Clients send v2.", tags=["api"], citations=["src/app.py:3"])
    over_mcp = await agent.call("get_memory", path="decisions/api")
    result = run_cli(["get", "decisions/api", "--json"], cwd=git_repo)
    assert result.exit_code == 0
    assert json.loads(result.output) == over_mcp


async def test_verify_memory_finds_a_moved_line_and_fix_rewrites_the_citation(
    agent: Agent, git_repo: Path
) -> None:
    await add(agent, "decisions/api", "Clients send v2.", citations=["src/app.py:3"])
    source = git_repo / "src" / "app.py"
    source.write_text("# header\n# more\n" + source.read_text())
    git(git_repo, "commit", "-qam", "shift")

    found = await agent.call("verify_memory", path="decisions/api")
    assert found["valid"] is True  # a moved citation still holds
    (check,) = found["citations"]
    assert (check["status"], check["current_line"]) == ("moved", 5)
    assert "fix" not in found

    fixed = await agent.call("verify_memory", path="decisions/api", fix=True)
    assert fixed["fix"]["written"] is True
    assert fixed["fix"]["diff"].startswith("--- a/.memories/decisions/api.md")
    data = await agent.call("get_memory", path="decisions/api")
    assert data["metadata"]["citations"] == ["src/app.py:5"]
    again = await agent.call("verify_memory", path="decisions/api")
    assert [c["status"] for c in again["citations"]] == ["valid"]


@pytest.mark.parametrize("store", [".memories", ".serena/memories"])
async def test_verify_memory_fix_moves_prose_that_repeats_a_moved_citation_with_it(
    agent: Agent, git_repo: Path, store: str
) -> None:
    """Found on 7nohe/figram: a memory saying `starts at packages/core/src/diff.ts:12`
    and citing that line had its citation fixed to :14 and its text left at :12, which
    the next run, now that it differs from the citation, called valid as written."""
    path = "decisions/api" if store == ".memories" else "api"  # a Serena store is flat
    if store != ".memories":
        (git_repo / store).mkdir(parents=True)
    await add(agent, path, "Clients send v2 (src/app.py:3).", citations=["src/app.py:3"])
    git(git_repo, "add", store)
    git(git_repo, "commit", "-qm", "memory")
    source = git_repo / "src" / "app.py"
    source.write_text("# header\n# more\n" + source.read_text())
    git(git_repo, "commit", "-qam", "shift")

    fixed = await agent.call("verify_memory", path=path, fix=True)
    assert fixed["fix"]["written"] is True
    data = await agent.call("get_memory", path=path)
    assert data["metadata"]["citations"] == ["src/app.py:5"]
    assert data["content"] == "Clients send v2 (src/app.py:5)."
    again = await agent.call("verify_memory", path=path)
    assert [c["status"] for c in again["citations"]] == ["valid"]
    assert "src/app.py:3" not in (git_repo / store / f"{path}.md").read_text(encoding="utf-8")


async def test_verify_memories_summarises_and_lists_only_the_invalid_ones(
    agent: Agent, git_repo: Path
) -> None:
    await add(agent, "decisions/api", "Clients send v2.", citations=["src/app.py:3"])
    await add(agent, "notes/helper", "helper ORs.", citations=["src/util/helpers.py:2"])
    await add(agent, "notes/plain", "No citations at all.")
    commit_then_bump_the_version(git_repo)

    since = await agent.call("verify_memories", changed_since="HEAD~1")
    assert since["memories"] == 1  # only the memory citing the changed file
    assert [r["memory_id"] for r in since["invalid"]] == ["decisions/api"]

    summary = await agent.call("verify_memories")
    assert summary["valid"] is False
    assert summary["counts"]["stale"] == 1
    assert summary["counts"]["valid"] == 1
    assert [r["memory_id"] for r in summary["invalid"]] == ["decisions/api"]
    (entry,) = summary["invalid"]
    assert entry["stale_citations"] == ["citations[0]"]
    (stale,) = entry["citations"]
    assert (stale["path"], stale["line"], stale["status"]) == ("src/app.py", 3, "stale")


async def test_verify_memories_of_a_category_that_does_not_exist_is_an_error(
    agent: Agent,
) -> None:
    await add(agent, "decisions/api", "Clients send v2.", citations=["src/app.py:3"])
    message = await agent.fail("verify_memories", category="desicions")
    assert message.startswith("no category 'desicions' in ")


async def test_verify_memories_lists_at_most_limit_invalid_memories_and_counts_them_all(
    agent: Agent, git_repo: Path
) -> None:
    """On a real store of a thousand memories every invalid one in full ran to 170,000
    characters: the list is capped as memory_health's is, and the total says how many."""
    for name in ("decisions/api", "decisions/client", "decisions/server"):
        await add(agent, name, "Clients send v2.", citations=["src/app.py:3"])
    commit_then_bump_the_version(git_repo)

    capped = await agent.call("verify_memories", limit=2)
    assert len(capped["invalid"]) == 2
    assert capped["invalid_total"] == 3
    everything = await agent.call("verify_memories")
    assert len(everything["invalid"]) == everything["invalid_total"] == 3


async def test_verify_memories_counts_prose_mentions_beside_declared_citations(
    agent: Agent, git_repo: Path
) -> None:
    """A store whose memories cite code only in their text (most real Serena stores) must
    not read as all valid: the summary counts the mentions that made memories invalid."""
    await add(agent, "decisions/api", "The version is set in src/app.py:3 for clients.")
    commit_then_bump_the_version(git_repo)

    summary = await agent.call("verify_memories")
    assert summary["valid"] is False
    assert [r["memory_id"] for r in summary["invalid"]] == ["decisions/api"]
    assert summary["citations"] == 0
    assert summary["mentions"] == 1
    assert summary["mention_counts"]["stale"] == 1
    assert sum(summary["mention_counts"].values()) == summary["mentions"]
    assert set(summary["mention_counts"]) == set(summary["counts"])


async def test_verify_memories_names_a_header_that_does_not_parse_and_checks_its_prose(
    agent: Agent, app: App, git_repo: Path
) -> None:
    await add(agent, "decisions/api", "Clients send v2.")
    root = app.service().store.root
    (root / "decisions" / "broken.md").write_text(
        "---\ntags: [unclosed\n---\nThe version is set in src/app.py:3 for clients.\n"
    )
    commit_then_bump_the_version(git_repo)

    summary = await agent.call("verify_memories")
    (unparsed,) = summary["unparsed_headers"]
    assert unparsed.startswith("decisions/broken: malformed YAML") and summary["skipped"] == []
    assert summary["mention_counts"]["stale"] == 1 and summary["valid"] is False


async def test_verify_memory_says_its_header_does_not_parse_as_verify_json_does(
    agent: Agent, app: App, git_repo: Path
) -> None:
    """Its prose held, so it came back `valid` with nothing to tell an agent that its
    header (and any citation there) was never read; `verify --json` says `header_error`."""
    await add(agent, "decisions/api", "Clients send v2.")
    root = app.service().store.root
    (root / "decisions" / "broken.md").write_text("---\ntags: [unclosed\n---\nSee src/app.py:3.\n")
    checked = await agent.call("verify_memory", path="decisions/broken")
    assert checked["header_error"].startswith("malformed YAML frontmatter at line 3")
    assert "header_error" not in await agent.call("verify_memory", path="decisions/api")


async def test_add_citation_captures_the_snippet_and_a_duplicate_changes_nothing(
    agent: Agent,
) -> None:
    await add(agent, "decisions/api", "Clients send v2.")
    data = await agent.call("add_citation", path="decisions/api", citation="src/app.py:5-6")
    assert data["metadata"]["citations"] == ["src/app.py:5-6"]
    snippet = data["citations_written"][0]["snippet"]
    assert snippet.startswith("def main() -> None:\n")
    assert snippet.endswith("print(API_VERSION)")
    again = await agent.call("add_citation", path="decisions/api", citation="src/app.py:5-6")
    assert again["changed"] is False
    assert any("already on decisions/api" in w for w in again["warnings"])
    assert again["citations_written"] == []  # it captured nothing
    given = await agent.call(
        "add_citation", path="decisions/api", citation="src/app.py:1", snippet="import os"
    )
    assert [c["snippet"] for c in given["citations_written"]] == ["import os"]


async def test_remove_memory_deletes_it(agent: Agent, git_repo: Path) -> None:
    await add(agent, "notes/temp", "Short-lived.")
    await add(agent, "notes/index", "See [[notes/temp]].")
    assert await agent.call("remove_memory", path="notes/temp") == {
        "path": "notes/temp",
        "removed": True,
        "linked_from": ["notes/index"],
    }
    assert not (git_repo / ".memories" / "notes" / "temp.md").exists()
    assert "memory not found: 'notes/temp'" in await agent.fail("get_memory", path="notes/temp")


async def test_move_memory_keeps_content_citations_and_citation_id(agent: Agent) -> None:
    added = await add(agent, "notes/old", "Moving on.", citations=["src/app.py:3"])
    moved = await agent.call("move_memory", from_path="notes/old", to_path="archive/new")
    assert moved["path"] == "archive/new"
    assert moved["id"] == added["id"]
    assert moved["moved_from"] == "notes/old"
    assert moved["metadata"]["citations"] == ["src/app.py:3"]
    assert moved["citations_written"] == []  # a move captures nothing anew
    assert (await agent.call("get_memory", path="archive/new"))["content"] == "Moving on."
    resolved = await agent.call("resolve_citation", id=added["id"])
    assert resolved["path"] == "archive/new"
    assert "not found" in await agent.fail("get_memory", path="notes/old")


async def test_move_memory_rewrites_links_to_it_unless_asked_not_to(agent: Agent) -> None:
    await add(agent, "notes/old", "Moving on.")
    await add(agent, "notes/other", "Elsewhere.")
    await add(agent, "ops/runbook", "See the note.", links=["notes/old", "notes/other"])
    moved = await agent.call("move_memory", from_path="notes/old", to_path="archive/new")
    assert moved["links_updated"] == ["ops/runbook"]
    runbook = await agent.call("get_memory", path="ops/runbook")
    assert sorted(link["target"] for link in runbook["links"]) == ["archive/new", "notes/other"]
    kept = await agent.call(
        "move_memory", from_path="notes/other", to_path="archive/other", update_links=False
    )
    assert kept["links_updated"] == []
    runbook = await agent.call("get_memory", path="ops/runbook")
    assert sorted(link["target"] for link in runbook["links"]) == ["archive/new", "notes/other"]


async def test_update_memory_adds_links_as_the_cli_update_link_does(
    agent: Agent, run_cli: RunCli, git_repo: Path
) -> None:
    """The error for an empty update names `links`; the tool must take them. A Serena
    file (CRLF here) keeps every byte it had, the links following it."""
    serena = git_repo / ".serena" / "memories"
    serena.mkdir(parents=True)
    before = b"# Overview\r\n\r\n- uses `app.py`\r\n"
    (serena / "overview.md").write_bytes(before)
    (serena / "workflow.md").write_bytes(b"# Workflow\n")

    data = await agent.call(
        "update_memory", path="overview", links=["depends_on:workflow", "notes/later"]
    )
    assert data["changed"] is True
    assert [(link["target"], link["type"]) for link in data["links_added"]] == [
        ("workflow", "depends_on"),
        ("notes/later", "link"),
    ]
    after = (serena / "overview.md").read_bytes()
    assert after.startswith(before)
    assert b"\n" not in after.replace(b"\r\n", b"")  # its line endings are kept
    again = await agent.call("update_memory", path="overview", links=["notes/later"])
    assert again["links_added"] == []  # an existing link is kept, not added twice
    result = run_cli(["get", "overview", "--json"], cwd=git_repo)
    assert json.loads(result.output)["links"] == data["links_added"]
    related = await agent.call("related_memories", path="workflow")
    assert [r["path"] for r in related["related"]] == ["overview"]


async def test_a_write_reports_the_links_get_memory_reports_not_list_items_naming_nothing(
    agent: Agent, run_cli: RunCli, git_repo: Path
) -> None:
    """Found on 2to4/RecRadiko2's development_workflow.md: after update_memory added one
    link, its result listed each `1. **テストリスト作成**: ...` step as a link too, where
    get_memory (and the graph) see only the one link."""
    serena = git_repo / ".serena" / "memories"
    serena.mkdir(parents=True)
    (serena / "workflow.md").write_text(
        "# 開発ワークフロー\n\n1. **テストリスト作成**: 書く\n2. **コード変更前**: 確認\n",
        encoding="utf-8",
    )
    (serena / "認証フロー.md").write_text("# 認証\n", encoding="utf-8")
    assert len((await agent.call("list_memories"))["memories"]) == 2  # as an agent starts

    updated = await agent.call("update_memory", path="workflow", links=["認証フロー"])
    got = await agent.call("get_memory", path="workflow")
    assert [link["target"] for link in updated["links_added"]] == ["認証フロー"]
    assert updated["links_added"] == got["links"]
    cited = await agent.call("add_citation", path="workflow", citation="src/app.py:3")
    assert cited["links_added"] == []  # the citation table moved the link down, added none
    again = await agent.call("add_citation", path="workflow", citation="src/app.py:3")
    assert again["changed"] is False and again["links_added"] == []
    result = run_cli(["update", "workflow", "--tag", "tdd", "--json"], cwd=git_repo)
    assert result.exit_code == 0, result.output
    got = await agent.call("get_memory", path="workflow")
    assert json.loads(result.output)["links"] == got["links"]
    assert [link["target"] for link in got["links"]] == ["認証フロー"]


async def test_get_shows_what_each_link_finds_in_the_words_of_links(
    agent: Agent, run_cli: RunCli, git_repo: Path
) -> None:
    """`get` listed a dangling link, one to a memory moved away and one to a repository
    file deleted since exactly as one that holds (or not at all): an agent follows them.
    The CLI's text and JSON, and get_memory, say what each finds, as `links` words it."""
    serena = git_repo / ".serena" / "memories"
    serena.mkdir(parents=True)
    (git_repo / "docs").mkdir()
    (git_repo / "docs" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    (git_repo / "docs" / "old.md").write_text("# Old\n", encoding="utf-8")
    (serena / "a.md").write_text(
        "# A\n\nSee [[b]], [[gone]] and [[old-name]].\n\n"
        "Read [the guide](docs/guide.md) and [the old one](docs/old.md).\n",
        encoding="utf-8",
    )
    (serena / "b.md").write_text("# B\n", encoding="utf-8")
    (serena / "old-name.md").write_text("# Moved\n", encoding="utf-8")
    assert len((await agent.call("list_memories"))["memories"]) == 3
    (serena / "old-name.md").rename(serena / "new-name.md")  # the link's target moved
    (git_repo / "docs" / "old.md").unlink()  # a repository file deleted since

    result = run_cli(["get", "a"], cwd=git_repo)
    assert result.exit_code == 0, result.output
    assert result.output.split("\n\n# A")[0].split("links ")[1].splitlines() == [
        "(5, 3 broken):",
        "  b  [line 3]  -> b",
        "  gone  [line 3]  dangling: no such memory",
        "  old-name  [line 3]  dangling: no such memory",
        "  docs/guide.md  [line 5]  -> docs/guide.md (repository file)",
        "  docs/old.md  [line 5]  missing: no such repository file or folder",
    ]
    data = json.loads(run_cli(["get", "a", "--json"], cwd=git_repo).output)
    assert [(x["target"], x["status"], x["resolved"]) for x in data["links"]] == [
        ("b", "resolved", "b"),
        ("gone", "dangling", None),
        ("old-name", "dangling", None),
        ("docs/guide.md", "repository", "docs/guide.md"),
        ("docs/old.md", "missing", None),
    ]
    assert set(data["links"][0]) == {
        "target", "type", "kind", "line", "status", "resolved", "candidates",
    }  # fmt: skip
    assert (await agent.call("get_memory", path="a"))["links"] == data["links"]
    broken = json.loads(run_cli(["links", "--json"], cwd=git_repo).output)["broken"]
    assert sorted((b["target"], b["status"]) for b in broken) == sorted(
        (x["target"], x["status"]) for x in data["links"] if x["resolved"] is None
    )


async def test_list_memories_filters_by_category_and_hides_expired_ones(agent: Agent) -> None:
    await add(agent, "decisions/api", "Clients send v2.", citations=["src/app.py:3"])
    await add(agent, "decisions/db/engine", "SQLite.")
    await add(agent, "notes/other", "Elsewhere.")
    await add(agent, "decisions/old", "Gone.", expires_at="2020-01-01")

    listing = await agent.call("list_memories", category="decisions")
    assert [m["path"] for m in listing["memories"]] == ["decisions/api", "decisions/db/engine"]
    assert listing["memories"][0]["citations"] == 1
    assert listing["skipped"] == []
    everything = await agent.call("list_memories", include_expired=True)
    assert len(everything["memories"]) == 4
    (old,) = [m for m in everything["memories"] if m["path"] == "decisions/old"]
    assert old["expired"] is True
    await add(agent, "notes/tagged", "Tagged.", tags=["db"])
    tagged = await agent.call("list_memories", tag="db")
    assert [m["path"] for m in tagged["memories"]] == ["notes/tagged"]


async def test_search_memories_finds_expired_memories_only_when_asked_as_the_cli_search_does(
    agent: Agent, run_cli: RunCli, git_repo: Path
) -> None:
    """list_memories and get_memory took include_expired; search_memories had no way to
    reach an expired memory, though `search --include-expired` has."""
    await add(agent, "decisions/旧認証", "旧い認証フロー auth0 は廃止。", expires_at="2020-01-01")
    await add(agent, "decisions/認証", "認証フロー auth1 から。")
    live = await agent.call("search_memories", query="認証フロー")
    assert [h["path"] for h in live["hits"]] == ["decisions/認証"]
    every = await agent.call("search_memories", query="認証フロー", include_expired=True)
    assert sorted(h["path"] for h in every["hits"]) == ["decisions/旧認証", "decisions/認証"]
    result = run_cli(["search", "認証フロー", "--include-expired", "--json"], cwd=git_repo)
    assert result.exit_code == 0, result.output
    assert sorted(h["path"] for h in json.loads(result.output)) == sorted(
        h["path"] for h in every["hits"]
    )


async def test_recent_memories_are_newest_first_up_to_the_limit(agent: Agent) -> None:
    for name in ("one", "two", "three"):
        await add(agent, f"notes/{name}", f"Memory {name}.")
        await anyio.sleep(0.005)  # distinct millisecond timestamps
    recent = await agent.call("recent_memories", limit=2)
    assert [m["path"] for m in recent["memories"]] == ["notes/three", "notes/two"]
    await agent.call("update_memory", path="notes/one", content="Touched.")
    recent = await agent.call("recent_memories")
    assert [m["path"] for m in recent["memories"]] == ["notes/one", "notes/three", "notes/two"]


async def test_listings_take_the_cli_s_limit_and_include_expired_so_a_big_store_is_paged(
    agent: Agent, run_cli: RunCli, git_repo: Path
) -> None:
    """list_memories had no limit (a store of hundreds of memories came back whole, where
    `list --limit` pages it) and recent_memories no include_expired (`recent` has it)."""
    for name in ("a", "b", "c"):
        await add(agent, f"notes/{name}", f"メモ {name}.")
    await add(agent, "notes/0-old", "期限切れ.", expires_at="2020-01-01")
    first = await agent.call("list_memories", limit=2)
    assert [m["path"] for m in first["memories"]] == ["notes/a", "notes/b"]
    result = run_cli(["list", "--limit", "2", "--json"], cwd=git_repo)
    assert result.exit_code == 0, result.output
    # the CLI prints the list alone, every field; the tool leaves out the null and empty ones
    cli = json.loads(result.output)
    assert [{k: v for k, v in m.items() if v or k == "title"} for m in cli] == first["memories"]
    assert "limit 0" in await agent.fail("list_memories", limit=0)
    every = await agent.call("recent_memories", limit=10, include_expired=True)
    assert "notes/0-old" in [m["path"] for m in every["memories"]]
    live = await agent.call("recent_memories", limit=10)
    assert "notes/0-old" not in [m["path"] for m in live["memories"]]


async def test_prune_memories_dry_run_lists_and_prune_removes_only_expired_ones(
    agent: Agent,
) -> None:
    await add(agent, "notes/live", "Still true.")
    await add(agent, "notes/gone", "Expired.", expires_at="2020-01-01")
    dry = await agent.call("prune_memories", dry_run=True)
    assert dry == {"dry_run": True, "removed": [], "would_remove": ["notes/gone"], "skipped": []}
    await agent.call("get_memory", path="notes/gone", include_expired=True)  # still there
    done = await agent.call("prune_memories")
    assert done == {"dry_run": False, "removed": ["notes/gone"], "would_remove": [], "skipped": []}
    assert "not found" in await agent.fail("get_memory", path="notes/gone", include_expired=True)
    await agent.call("get_memory", path="notes/live")


async def test_search_memories_returns_ranked_hits_with_ids_and_highlighted_snippets(
    agent: Agent,
) -> None:
    api = await add(agent, "decisions/api", "Clients send the v2 header.", tags=["api"])
    await add(agent, "notes/db", "The database is SQLite; the header table is small.")
    await add(agent, "notes/unrelated", "Nothing to see.")

    result = await agent.call("search_memories", query="header v2")
    assert result["query"] == "header v2"
    assert result["mode"] == "lexical"
    assert [h["path"] for h in result["hits"]] == ["decisions/api", "notes/db"]
    top = result["hits"][0]
    assert top["id"] == api["id"]
    assert "**header**" in top["snippet"]
    assert top["lexical_rank"] == 1

    assert len((await agent.call("search_memories", query="header", limit=1))["hits"]) == 1
    by_tag = await agent.call("search_memories", query="header", tag="api")
    assert [h["path"] for h in by_tag["hits"]] == ["decisions/api"]
    by_category = await agent.call("search_memories", query="header", category="notes")
    assert [h["path"] for h in by_category["hits"]] == ["notes/db"]


async def test_search_memories_with_verify_drops_memories_below_min_confidence(
    agent: Agent, git_repo: Path
) -> None:
    await add(agent, "decisions/api", "The API_VERSION constant.", citations=["src/app.py:3"])
    await add(agent, "notes/main", "main prints API_VERSION.", citations=["src/app.py:6"])
    source = git_repo / "src" / "app.py"
    source.write_text(source.read_text().replace("'v2'", "'v3'"))
    git(git_repo, "commit", "-qam", "v3")

    checked = await agent.call("search_memories", query="API_VERSION", verify=True)
    verdicts = {h["path"]: h["verification"]["valid"] for h in checked["hits"]}
    assert verdicts == {"decisions/api": False, "notes/main": True}
    holding = await agent.call("search_memories", query="API_VERSION", min_holding=0.8)
    assert [h["path"] for h in holding["hits"]] == ["notes/main"]
    assert holding["hits"][0]["verification"]["holding"] == 1.0
    # Its confidence, memory_health's figure, weighs history: verified valid twice, used
    # twice, never confirmed, it has not earned 0.8 yet.
    assert 0.7 < holding["hits"][0]["confidence"] < 0.8
    trusted = await agent.call("search_memories", query="API_VERSION", min_confidence=0.8)
    assert trusted["hits"] == []
    health = await agent.call("memory_health")
    confidence = {m["path"]: m["confidence"] for m in health["memories"]}
    again = await agent.call("search_memories", query="API_VERSION", verify=True)
    assert {h["path"]: h["confidence"] for h in again["hits"]} == confidence


async def test_get_context_gives_a_prompt_ready_block_quoting_citation_ids(agent: Agent) -> None:
    api = await add(agent, "decisions/api", "Clients send the v2 header.")
    await add(agent, "notes/unrelated", "Nothing to see.")
    data = await agent.call("get_context", query="v2 header")
    assert "Clients send the v2 header." in data["context"]
    assert f"[{api['id']}]" in data["context"]
    assert [m["path"] for m in data["memories"]] == ["decisions/api"]
    tiny = await agent.call("get_context", query="v2 header", max_tokens=1)
    assert tiny["context"] == ""
    assert tiny["memories"] == []


@pytest.mark.parametrize("form", ["{id}", "[{id}]", "{bare}"])
async def test_resolve_citation_accepts_every_form_of_the_id(agent: Agent, form: str) -> None:
    added = await add(agent, "decisions/api", "Clients send v2.")
    handle = form.format(id=added["id"], bare=added["id"].removeprefix("mem:"))
    data = await agent.call("resolve_citation", id=handle)
    assert (data["path"], data["id"], data["content"]) == (
        "decisions/api",
        added["id"],
        "Clients send v2.",
    )


async def test_an_agent_verifies_and_reinforces_a_memory_by_the_citation_id_search_gave_it(
    agent: Agent, run_cli: RunCli, git_repo: Path
) -> None:
    """Found on a real Serena store: search hands out `[mem:ID]`s and get_memory takes
    them, but verify_memory and reinforce_memory answered "memory not found" to one."""
    added = await add(agent, "decisions/認証", "認証は auth1 から。", citations=["src/app.py:3"])
    handle = f"[{added['id']}]"
    tools = await agent.tools()
    for name in ("verify_memory", "reinforce_memory", "related_memories"):
        assert "[mem:ID]" in tools[name].input_schema["properties"]["path"]["description"]

    checked = await agent.call("verify_memory", path=handle)
    assert (checked["memory_id"], checked["valid"]) == ("decisions/認証", True)
    confirmed = await agent.call("reinforce_memory", path=handle, note="読んだ")
    assert (confirmed["path"], confirmed["id"]) == ("decisions/認証", added["id"])

    result = run_cli(["verify", handle, "--json"], cwd=git_repo)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["memory_id"] == "decisions/認証"
    message = await agent.fail("verify_memory", path="[mem:zzzzzz]")
    assert "[mem:zzzzzz]" in message


async def test_traverse_graph_follows_links_to_the_depth_and_direction_asked(
    agent: Agent,
) -> None:
    await add(agent, "arch/c", "Leaf.")
    await add(agent, "arch/b", "Middle.", links=["depends_on:arch/c"])
    await add(agent, "arch/a", "Root.", links=["arch/b", "arch/missing"])

    full = await agent.call("traverse_graph", root="arch/a")
    assert full["root"] == "arch/a"
    assert full["depths"] == {"arch/a": 0, "arch/b": 1, "arch/c": 2}
    assert {(e["source"], e["target"], e["type"]) for e in full["edges"]} == {
        ("arch/a", "arch/b", "link"),
        ("arch/b", "arch/c", "depends_on"),
    }
    assert full["dangling"] == [{"source": "arch/a", "target": "arch/missing"}]

    shallow = await agent.call("traverse_graph", root="arch/a", depth=1)
    assert set(shallow["depths"]) == {"arch/a", "arch/b"}
    incoming = await agent.call("traverse_graph", root="arch/c", direction="in", algorithm="dfs")
    assert incoming["depths"] == {"arch/c": 0, "arch/b": 1, "arch/a": 2}
    by_id = await agent.call("traverse_graph", root="c")  # a unique name also works
    assert by_id["root"] == "arch/c"


async def test_related_memories_lists_the_memories_linking_to_one(agent: Agent) -> None:
    await add(agent, "arch/c", "Leaf.")
    await add(agent, "arch/b", "Middle.", links=["depends_on:arch/c"])
    await add(agent, "arch/a", "Root.", links=["arch/c"])
    data = await agent.call("related_memories", path="arch/c")
    assert data["memory"] == "arch/c"
    assert sorted((r["path"], r["type"]) for r in data["related"]) == [
        ("arch/a", "link"),
        ("arch/b", "depends_on"),
    ]
    assert (await agent.call("related_memories", path="arch/a"))["related"] == []


async def test_memory_health_ranks_the_worst_first_in_its_declared_shape(
    agent: Agent, git_repo: Path
) -> None:
    await add(agent, "decisions/api", "Clients send v2.", citations=["src/app.py:3"])
    await add(agent, "notes/prose", "Nothing cited.")
    (git_repo / "src" / "app.py").write_text("nothing here any more\n")
    data = await agent.call("memory_health", limit=1)  # checked against the output schema
    assert data["summary"]["memories"] == 2
    assert data["summary"]["statuses"]["stale"] == 1
    assert [(m["rank"], m["path"], m["status"]) for m in data["memories"]] == [
        (1, "decisions/api", "stale")
    ]
    assert data["memories"][0]["problems"][0]["citation"] == "src/app.py:3"


async def test_parallel_calls_on_one_connection_lose_no_write(agent: Agent, git_repo: Path) -> None:
    """Plain tools run on worker threads; the store lock keeps parallel writes whole."""
    ids: dict[str, str] = {}

    async def write(n: int) -> None:
        data = await add(agent, f"parallel/m{n:02d}", f"Memory number {n}.")
        ids[data["path"]] = data["id"]

    async with anyio.create_task_group() as tasks:
        for n in range(20):
            tasks.start_soon(write, n)
    listing = await agent.call("list_memories", category="parallel")
    assert [m["path"] for m in listing["memories"]] == [f"parallel/m{n:02d}" for n in range(20)]
    assert len(set(ids.values())) == 20
    assert {m["id"] for m in listing["memories"]} == set(ids.values())


# -- errors: a tool error naming the bad value, never a success -------------------


ERRORS: list[tuple[str, dict[str, Any], str]] = [
    ("get_memory", {"path": "notes/nope"}, "memory not found: 'notes/nope'"),
    ("get_memory", {"path": "old/gone"}, "memory 'old/gone' expired at 2020-01-01"),
    ("get_memory", {"path": "../../etc/passwd"}, "invalid memory path '../../etc/passwd'"),
    ("get_memory", {"path": "/etc/passwd"}, "invalid memory path '/etc/passwd'"),
    ("get_memory", {"path": "decisions/api", "store": "nostore"}, "unknown store 'nostore'"),
    ("add_memory", {"path": "decisions/api", "content": "x"}, "already exists: 'decisions/api'"),
    ("add_memory", {"path": "../../etc/passwd", "content": "x"}, "'../../etc/passwd'"),
    ("add_memory", {"path": "solo", "content": "x"}, "invalid memory path 'solo'"),
    ("add_memory", {"path": "notes/x", "content": "x", "citations": [""]}, "invalid citation ''"),
    (
        "add_memory",
        {"path": "notes/x", "content": "x", "citations": ["src/app.py:0"]},
        "invalid citation 'src/app.py:0'",
    ),
    ("add_memory", {"path": "notes/x", "content": " "}, "content of 'notes/x' is empty"),
    (
        "add_memory",
        {"path": "notes/x", "content": "x", "expires_at": "soon"},
        "invalid expires_at: 'soon'",
    ),
    ("add_memory", {"path": "notes/x", "content": "x", "tags": [""]}, "invalid tag ''"),
    ("add_memory", {"path": "notes/x", "content": "x", "links": [" "]}, "invalid link ''"),
    ("add_memory", {"path": "notes/x", "content": "x", "store": ""}, "invalid store name ''"),
    ("add_memory", {"path": "notes/x", "content": "x", "store": ".."}, "invalid store name '..'"),
    ("add_memory", {"path": "notes/x", "content": "x", "store": "a\\b"}, "invalid store name"),
    ("add_memory", {"path": "notes/x", "content": "x", "store": "日本語"}, "64 ASCII letters"),
    ("update_memory", {"path": "notes/nope", "content": "x"}, "memory not found: 'notes/nope'"),
    ("update_memory", {"path": "decisions/api"}, "nothing to update"),
    ("update_memory", {"path": "decisions/api", "content": ""}, "content cannot be empty"),
    (
        "update_memory",
        {"path": "decisions/api", "citations": ["src/app.py:5-3"]},
        "invalid citation 'src/app.py:5-3'",
    ),
    (
        "update_memory",
        {"path": "decisions/api", "expires_at": "2030-01-01", "clear_expiry": True},
        "either expires_at or clear_expiry",
    ),
    ("remove_memory", {"path": "notes/nope"}, "memory not found: 'notes/nope'"),
    ("remove_memory", {"path": "../secrets"}, "invalid memory path '../secrets'"),
    ("move_memory", {"from_path": "notes/nope", "to_path": "notes/new"}, "'notes/nope'"),
    (
        "move_memory",
        {"from_path": "decisions/api", "to_path": "old/gone"},
        "memory already exists: 'old/gone'",
    ),
    ("move_memory", {"from_path": "decisions/api", "to_path": "../out"}, "'../out'"),
    ("list_memories", {"category": "../x"}, "'../x'"),
    ("recent_memories", {"limit": 0}, "invalid limit 0"),
    ("prune_memories", {"store": "nostore"}, "unknown store 'nostore'"),
    ("search_memories", {"query": "  "}, "query '  ' has no words"),
    ("search_memories", {"query": "api", "mode": "fuzzy"}, "invalid search mode 'fuzzy'"),
    ("search_memories", {"query": "api", "limit": 0}, "invalid limit 0"),
    ("search_memories", {"query": "api", "min_confidence": 2}, "invalid min_confidence 2"),
    ("get_context", {"query": "api", "max_tokens": 0}, "invalid max_tokens 0"),
    ("get_context", {"query": "api", "limit": -1}, "invalid limit -1"),
    ("resolve_citation", {"id": ""}, "invalid citation ID ''"),
    ("resolve_citation", {"id": "mem:zzzzzz"}, "unknown citation ID [mem:zzzzzz]"),
    ("verify_memory", {"path": "notes/nope"}, "memory not found: 'notes/nope'"),
    ("verify_memories", {"changed_since": "no-such-ref"}, "unknown git ref 'no-such-ref'"),
    ("verify_memories", {"limit": 0}, "invalid limit 0"),
    ("verify_memories", {"offset": -1}, "invalid offset -1: it must be 0 or more"),
    ("add_citation", {"path": "decisions/api", "citation": ""}, "invalid citation ''"),
    ("add_citation", {"path": "notes/nope", "citation": "src/app.py:1"}, "'notes/nope'"),
    (
        "add_citation",
        {"path": "decisions/api", "citation": "src/app.py:1", "snippet": " "},
        "snippet cannot be empty",
    ),
    ("traverse_graph", {"root": "notes/nope"}, "memory not found: 'notes/nope'"),
    ("traverse_graph", {"root": "decisions/api", "direction": "up"}, "invalid direction 'up'"),
    ("traverse_graph", {"root": "decisions/api", "depth": -1}, "invalid depth -1"),
    ("traverse_graph", {"root": "decisions/api", "limit": 0}, "invalid limit 0"),
    ("related_memories", {"path": "notes/nope"}, "memory not found: 'notes/nope'"),
    ("memory_health", {"limit": 0}, "limit must be at least 1, not 0"),
    ("memory_health", {"limit": -1}, "limit must be at least 1, not -1"),
    ("memory_health", {"store": "nostore"}, "unknown store 'nostore'"),
    ("memory_health", {"offset": -2}, "invalid offset -2: it must be 0 or more"),
    ("memory_health", {"history_days": -1}, "invalid history_days -1: it must be 0 or more"),
    ("reinforce_memory", {"path": "notes/nope"}, "memory not found: 'notes/nope'"),
    ("reinforce_memory", {"path": "../../etc/passwd"}, "invalid memory path '../../etc/passwd'"),
    ("reinforce_memory", {"path": "decisions/api", "store": "nostore"}, "unknown store 'nostore'"),
]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    ERRORS,
    ids=[f"{tool}-{n}" for n, (tool, _, _) in enumerate(ERRORS)],
)
async def test_a_bad_call_is_a_tool_error_naming_the_bad_value(
    agent: Agent, git_repo: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    await add(agent, "decisions/api", "Clients send v2.", citations=["src/app.py:3"])
    await add(agent, "old/gone", "Expired.", expires_at="2020-01-01")
    store = git_repo / ".memories"
    before = sorted(p.relative_to(store) for p in store.rglob("*"))

    assert message in await agent.fail(tool, **arguments)
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before  # nothing written


async def test_every_tool_has_an_error_case() -> None:
    assert {tool for tool, _, _ in ERRORS} == READ_ONLY | WRITES


async def test_missing_or_mistyped_arguments_are_tool_errors_naming_the_argument(
    agent: Agent,
) -> None:
    assert "path" in await agent.fail("get_memory")
    assert "limit" in await agent.fail("recent_memories", limit="many")
    assert "citations" in await agent.fail(
        "add_memory", path="notes/x", content="x", citations="src/app.py:3"
    )


async def test_a_misspelled_argument_is_a_tool_error_naming_it_not_silently_dropped(
    agent: Agent,
) -> None:
    """Found driving the server on 2to4/RecRadiko2: verify_memories(categroy="nope")
    verified the whole store and search_memories(limt=1) returned ten hits."""
    await add(agent, "decisions/認証", "認証は auth1 から。", citations=["src/app.py:3"])
    message = await agent.fail("verify_memories", categroy="nope")
    assert "'categroy'" in message and "category" in message
    message = await agent.fail("search_memories", query="認証", limt=1, mdoe="lexical")
    assert "'limt', 'mdoe'" in message and "limit" in message
    assert "'kategorie'" in await agent.fail("list_memories", kategorie="decisions")
    # what the schema lists still goes through, the store argument included
    await agent.call("search_memories", query="認証", limit=1, store=None)


async def test_an_unknown_tool_is_an_error_result(agent: Agent) -> None:
    result = await agent.client.call_tool("drop_all_memories", {})
    assert result.is_error
    assert "drop_all_memories" in text_of(result)


# -- stores --------------------------------------------------------------------------


async def test_a_store_argument_reaches_a_named_store_created_on_first_write(
    agent: Agent, isolated_home: Path, git_repo: Path
) -> None:
    await add(agent, "notes/shared", "In the team store.", store="team")
    assert (isolated_home / "stores" / "team" / "notes" / "shared.md").is_file()
    assert not (git_repo / ".memories" / "notes" / "shared.md").exists()
    data = await agent.call("get_memory", path="notes/shared", store="team")
    assert data["content"] == "In the team store."
    assert "not found" in await agent.fail("get_memory", path="notes/shared")
    listing = await agent.call("list_memories", store="team")
    assert [m["path"] for m in listing["memories"]] == ["notes/shared"]


async def test_parallel_first_writes_create_and_register_every_new_store(agent: Agent) -> None:
    """Stores auto-created at once from worker threads all stay registered."""

    async def first_write(n: int) -> None:
        await add(agent, "notes/first", f"The first memory of store {n}.", store=f"team{n}")

    async with anyio.create_task_group() as tasks:
        for n in range(12):
            tasks.start_soon(first_write, n)
    for n in range(12):
        data = await agent.call("get_memory", path="notes/first", store=f"team{n}")
        assert data["content"] == f"The first memory of store {n}."


async def test_the_global_store_is_reachable_by_name(agent: Agent, isolated_home: Path) -> None:
    await add(agent, "conventions/commits", "Use the imperative mood.", store="global")
    data = await agent.call("search_memories", query="imperative", store="global")
    assert [h["path"] for h in data["hits"]] == ["conventions/commits"]
    assert (await agent.call("list_memories"))["memories"] == []


# -- resources and the prompt ------------------------------------------------------------


async def test_a_memory_is_readable_as_a_resource_of_the_default_store(
    agent: Agent, git_repo: Path
) -> None:
    await add(agent, "decisions/api", "Clients send v2.", citations=["src/app.py:3"])
    on_disk = (git_repo / ".memories" / "decisions" / "api.md").read_text(encoding="utf-8")
    for uri in ("memory://default/decisions/api", "memory://default/decisions/api.md"):
        (contents,) = (await agent.client.read_resource(uri)).contents
        assert contents.text == on_disk
        assert contents.mime_type == "text/markdown"


async def test_a_memory_is_readable_as_a_resource_of_a_named_store(agent: Agent) -> None:
    await add(agent, "notes/shared", "In the team store.", store="team")
    (contents,) = (await agent.client.read_resource("memory://team/notes/shared")).contents
    assert "In the team store." in contents.text


async def test_the_resource_template_is_listed(agent: Agent) -> None:
    templates = (await agent.client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["memory://{store}/{+path}"]


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("memory://default/notes/nope", "memory not found: 'notes/nope'"),
        ("memory://nostore/decisions/api", "unknown store 'nostore'"),
        ("memory://default/../../etc/passwd", "Unknown resource"),
        ("memory://default/decisions", "memory not found: 'decisions'"),
    ],
)
async def test_an_unknown_resource_is_an_error(agent: Agent, uri: str, message: str) -> None:
    await add(agent, "decisions/api", "Clients send v2.")
    with pytest.raises(MCPError, match=re.escape(message)):
        await agent.client.read_resource(uri)


async def test_the_prompt_carries_the_skill(agent: Agent) -> None:
    (prompt,) = (await agent.client.list_prompts()).prompts
    assert prompt.name == "memory_skill"
    result = await agent.client.get_prompt("memory_skill")
    (message,) = result.messages
    assert message.role == "user"
    assert message.content.text == SKILL_FILE.read_text(encoding="utf-8")
    assert "verify_memory(path, fix=true)" in message.content.text


# -- usage is recorded under the MCP session -----------------------------------------


async def test_usage_is_recorded_with_the_mcp_session(agent: Agent, app: App) -> None:
    await add(agent, "decisions/api", "Clients send the v2 header.")
    await agent.call("get_memory", path="decisions/api")
    await agent.call("search_memories", query="header")
    rows = usage_rows(app)
    assert [action for _, action, _ in rows] == ["get", "search"]
    assert {path for _, _, path in rows} == {"decisions/api"}
    (session,) = {session for session, _, _ in rows}
    assert session.startswith("mcp:")
    (popular,) = app.service_for(None, "probe").popular()
    assert (popular.path, popular.uses, popular.sessions) == ("decisions/api", 2, 1)


async def test_each_handshake_connection_is_its_own_session(app: App) -> None:
    server = build_server(app.service_for)
    async with Client(server, mode="legacy") as client:
        first = Agent(client)
        await add(first, "decisions/api", "Clients send v2.")
        await first.call("get_memory", path="decisions/api")
        await first.call("get_memory", path="decisions/api")
    async with Client(server, mode="legacy") as client:
        await Agent(client).call("get_memory", path="decisions/api")

    sessions = [session for session, _, _ in usage_rows(app)]
    assert len(sessions) == 3
    assert all(s.startswith("mcp:") for s in sessions)
    assert sessions[0] == sessions[1] != sessions[2]


async def test_the_state_database_is_the_cli_s(app: App, agent: Agent) -> None:
    await add(agent, "decisions/api", "Clients send v2.")
    await agent.call("get_memory", path="decisions/api")
    state = app.service_for(None, "probe").state.path
    assert state is not None
    with sqlite3.connect(state) as conn:
        (count,) = conn.execute("SELECT count(*) FROM usage WHERE session LIKE 'mcp:%'").fetchone()
    assert count == 1


async def test_update_and_move_take_the_id_or_declared_name_get_memory_took(
    agent: Agent, git_repo: Path
) -> None:
    """Found driving the server over a Claude Code memory folder (criativvo-workspace):
    get_memory, reinforce_memory and traverse_graph found `project-logo` by the name its
    frontmatter declares, then update_memory and move_memory said 'memory not found'."""
    store = git_repo / ".memories"
    store.mkdir(exist_ok=True)
    logo = store / "project_logo.md"
    logo.write_text("---\nname: project-logo\ntype: project\n---\n\nTeal.\n")
    got = await agent.call("get_memory", path="Project-Logo")
    updated = await agent.call("update_memory", path=got["id"], tags=["brand"])
    assert (updated["path"], updated["metadata"]["tags"]) == ("project_logo", ["brand"])
    assert (await agent.call("update_memory", path="project-logo", content="Teal.\n"))["path"] == (
        "project_logo"
    )
    moved = await agent.call("move_memory", from_path="project-logo", to_path="archive/logo")
    assert moved["path"] == "archive/logo" and not logo.exists()
