"""MCP answers an agent can afford to read (session 27's MCP work).

Agents read every answer into their context window. Measured through the SDK's client on
rjmurillo/ai-agents' store (1,026 Serena memories, in its clone with full history),
`verify_memories` answered 113,886 characters (49 invalid memories, each with every
citation and mention that held), `memory_health` 66,149 (50 ranked memories, the HTML
report's link graph, 90 days of history) and `traverse_graph` from its `memory-index`
552,893 at the default depth. Each now answers what an agent needs first, keeps its
fields' meaning, and says in `cut` what it left out and which argument brings it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp.types import TextContent

from conftest import CORPUS, git
from mcp_support import Agent, commit_then_bump_the_version
from memory_enhancement.cli.app import App

pytestmark = pytest.mark.anyio


async def add(agent: Agent, path: str, content: str, **extra: Any) -> dict[str, Any]:
    return await agent.call("add_memory", path=path, content=content, **extra)


async def test_verify_memories_lists_the_worst_first_and_pages_on_with_offset(
    agent: Agent, git_repo: Path
) -> None:
    await add(agent, "notes/half", "Half holds.", citations=["src/app.py:3", "src/app.py:1"])
    await add(agent, "notes/none", "Nothing holds.", citations=["src/app.py:3"])
    await add(agent, "notes/also_none", "Nothing holds.", citations=["src/app.py:3"])
    await add(agent, "notes/fine", "Holds.", citations=["src/app.py:1"])
    commit_then_bump_the_version(git_repo, "-A")

    first = await agent.call("verify_memories", limit=2)
    assert [r["memory_id"] for r in first["invalid"]] == ["notes/also_none", "notes/none"]
    assert first["invalid_total"] == 3
    assert first["cut"] == "listed invalid memories 1-2 of 3, worst first: offset=2 for the next"
    rest = await agent.call("verify_memories", limit=2, offset=2)
    assert [r["memory_id"] for r in rest["invalid"]] == ["notes/half"]
    assert rest["counts"] == first["counts"]  # the counts always cover the whole store
    assert rest["cut"].startswith("listed invalid memories 3-3 of 3, worst first; ")
    past = await agent.call("verify_memories", offset=5)
    assert (
        past["invalid"] == []
        and past["cut"] == "offset 5 is past the last of the 3 invalid memories"
    )


async def test_verify_memories_leaves_out_what_held_unless_asked(
    agent: Agent, git_repo: Path
) -> None:
    """A citation that holds is what an agent needs last: `counts` has it. The list says
    what failed; include_valid=true gives each memory's every check, as before."""
    await add(agent, "notes/half", "Half holds.", citations=["src/app.py:3", "src/app.py:1"])
    commit_then_bump_the_version(git_repo, "-A")

    (short,) = (await agent.call("verify_memories"))["invalid"]
    assert [(c["line"], c["status"]) for c in short["citations"]] == [(3, "stale")]
    summary = await agent.call("verify_memories")
    assert summary["counts"]["valid"] == 1 and summary["counts"]["stale"] == 1
    assert summary["cut"] == (
        "the 1 citations and mentions of these memories that held or were not judged "
        "(skipped, ambiguous, in_submodule, unchecked) are left out (include_valid=true lists them)"
    )
    everything = await agent.call("verify_memories", include_valid=True)
    (full,) = everything["invalid"]
    assert [(c["line"], c["status"]) for c in full["citations"]] == [(3, "stale"), (1, "valid")]
    assert "cut" not in everything
    assert full["stale_citations"] == short["stale_citations"]


async def test_traverse_graph_lists_the_nearest_memories_and_the_links_among_them(
    agent: Agent,
) -> None:
    """An index memory linking to everything (ai-agents' memory-index: 189 links) made the
    answer hundreds of thousands of characters; `limit` keeps the nearest."""
    await add(agent, "hub/index", "Index.", links=[f"notes/n{n}" for n in range(4)])
    for n in range(4):
        await add(agent, f"notes/n{n}", f"Note {n}.", links=[f"deep/d{n}"])
        await add(agent, f"deep/d{n}", f"Deep {n}.")

    whole = await agent.call("traverse_graph", root="hub/index")
    assert whole["visited_count"] == 9 and "cut" not in whole
    near = await agent.call("traverse_graph", root="hub/index", limit=3)
    assert list(near["depths"]) == ["hub/index", "notes/n0", "notes/n1"]
    assert near["nodes"] == {"hub/index": ["notes/n0", "notes/n1"], "notes/n0": [], "notes/n1": []}
    assert [(e["source"], e["target"]) for e in near["edges"]] == [
        ("hub/index", "notes/n0"), ("hub/index", "notes/n1")
    ]  # fmt: skip
    assert (near["visited_count"], near["max_depth_reached"]) == (9, 2)  # of the traversal
    assert near["cut"] == (
        "listed the 3 memories nearest hub/index of the 9 reached, and only the links among "
        "them (limit=9 lists all; a smaller depth, fewer)"
    )


async def test_memory_health_leaves_out_the_graph_and_old_history_unless_asked(
    agent: Agent, git_repo: Path
) -> None:
    await add(agent, "notes/api", "Clients send v2.", citations=["src/app.py:3"])
    await add(agent, "notes/other", "See the api.", links=["notes/api"])
    commit_then_bump_the_version(git_repo, "-A")

    first = await agent.call("memory_health", history_days=0)
    assert "graph" not in first and first["history"] == []
    assert first["cut"] == (
        "history holds the last 0 of 1 days (history_days=1 for all); the link graph around "
        "the worst memories (2 memories, 1 links) is left out (include_graph=true adds it)"
    )
    full = await agent.call("memory_health", include_graph=True)
    assert [n["path"] for n in full["graph"]["nodes"]] == ["notes/api", "notes/other"]
    assert len(full["history"]) == 1 and "cut" not in full
    second = await agent.call("memory_health", limit=1, offset=1)
    assert [(m["rank"], m["path"]) for m in second["memories"]] == [(2, "notes/other")]


async def test_a_memory_lists_its_first_links_and_says_how_many_it_has(agent: Agent) -> None:
    """rjmurillo/ai-agents' `memory-index` links to 188 memories: 18,528 of the 47,068
    characters get_memory answered were its links, each a target its content names."""
    targets = [f"notes/n{n:02}" for n in range(30)]
    content = "Index.\n\n" + "".join(f"- [[{t}]]\n" for t in targets)
    added = await add(agent, "hub/index", content)
    assert [link["target"] for link in added["links_added"]] == targets[:25]
    assert added["cut"] == "listed the first 25 of the 30 links it added"
    note = (
        "listed the first 25 of its 30 links (its content names them all; traverse_graph "
        "or related_memories follows them)"
    )
    got = await agent.call("get_memory", path="hub/index")
    assert got["links"] == added["links_added"] and got["cut"] == note
    assert all(target in got["content"] for target in targets)  # where the rest are
    few = await add(agent, "hub/small", "Small.", links=targets[:2])
    assert len(few["links_added"]) == 2 and "cut" not in few


async def test_memory_health_lists_a_few_problems_of_each_memory(
    agent: Agent, git_repo: Path
) -> None:
    """filter_mate's ui_system listed 22 problems (4,129 characters) in memory_health."""
    cited = [f"src/app.py:{n}" for n in (1, 3, 5, 6, 7)]
    await add(agent, "notes/api", "Clients send v2.", citations=cited)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "memories")
    (git_repo / "src" / "app.py").write_text("".join(f"value_{n} = {n}\n" for n in range(7)))
    git(git_repo, "commit", "-qam", "rewritten")

    health = await agent.call("memory_health")
    (memory,) = [m for m in health["memories"] if m["path"] == "notes/api"]
    assert [p["citation"] for p in memory["problems"]] == cited[:3]
    assert memory["citations"]["stale"] == 5  # counted all the same
    assert (
        "1 memories list only their first 3 problems (their `citations` and `mentions` count "
        "them all; verify_memory lists each)"
    ) in health["cut"]


async def test_list_memories_says_which_page_it_is(agent: Agent) -> None:
    for n in range(3):
        await add(agent, f"notes/n{n}", f"Note {n}.")
    page = await agent.call("list_memories", limit=2)
    assert page["cut"] == "listed memories 1-2 of 3, by path: offset=2 for the next"
    assert "cut" not in await agent.call("list_memories")
    past = await agent.call("list_memories", offset=10**20)  # more than SQLite can bind
    assert (past["memories"], past["total"]) == ([], 3)
    assert past["cut"] == f"offset {10**20} is past the last of the 3 memories"


async def test_every_default_answer_on_the_real_corpus_fits_an_agent(
    isolated_home: Path, git_repo: Path
) -> None:
    """The 1,026 memories of rjmurillo/ai-agents (the vendored corpus), committed as the
    repository's Serena store: no tool's answer with its default arguments runs past
    25,000 characters of text, and each cut answer says so."""
    from mcp import Client

    from memory_enhancement.mcp.server import build_server

    store = git_repo / ".serena" / "memories"
    shutil.copytree(CORPUS, store)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "corpus")
    app = App(env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)}, cwd=git_repo)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_memories", {}),
        ("recent_memories", {}),
        ("search_memories", {"query": "session protocol"}),
        ("get_context", {"query": "session protocol"}),
        ("traverse_graph", {"root": "memory-index"}),
        ("related_memories", {"path": "memory-index"}),
        ("verify_memories", {}),
        ("memory_health", {}),
    ]
    async with Client(build_server(app.service_for)) as client:
        agent = Agent(client)
        sizes = {}
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, (tool, result.content)
            (text,) = [c.text for c in result.content if isinstance(c, TextContent)]
            sizes[tool] = len(text)
            data = await agent.call(tool, **arguments)  # in its declared shape
            if tool in ("list_memories", "traverse_graph", "verify_memories", "memory_health"):
                assert "offset=" in data["cut"] or "limit=" in data["cut"], (tool, data["cut"])
    assert {tool: n for tool, n in sizes.items() if n > 25_000} == {}


async def test_a_page_asked_for_wrongly_is_refused_before_the_store_is_verified(
    agent: Agent, git_repo: Path, isolated_home: Path
) -> None:
    """`limit=0` or a negative offset is the agent's mistake: refused before a run over
    the whole store is made and recorded in the verdict history (as memory_health's
    limit was refused before session 27 moved the checks into mcp/answers.py)."""
    import sqlite3

    await add(agent, "notes/api", "Clients send v2.", citations=["src/app.py:3"])
    commit_then_bump_the_version(git_repo, "-A")
    for tool, arguments, said in (
        ("verify_memories", {"limit": 0}, "invalid limit 0"),
        ("verify_memories", {"offset": -1}, "invalid offset -1"),
        ("memory_health", {"limit": 0}, "limit must be at least 1, not 0"),
        ("memory_health", {"history_days": -1}, "invalid history_days -1"),
    ):
        assert (await agent.fail(tool, **arguments)).startswith(said)
    (state,) = (isolated_home / "data" / "state").glob("*.db")
    with sqlite3.connect(state) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
