"""The graph MCP tools, `traverse_graph` and `related_memories`, through the SDK's
in-process client (issue 5 "The MCP tools of the server issue reuse these operations").

The server is built as `serve` builds it, in a real git repository whose
project store (`.memories`) holds the crafted store of graph_support.py, written
by hand. Each answer must be what the CLI's `--json` prints for the same store.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import RunCli
from graph_support import FULL, STORE, write_all
from mcp_support import Agent
from memory_enhancement.cli.app import App

pytestmark = pytest.mark.anyio


@pytest.fixture
def app(isolated_home: Path, git_repo: Path) -> App:
    write_all(git_repo / ".memories", STORE)
    return App(env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)}, cwd=git_repo)


async def test_traverse_graph_answers_as_graph_json(
    agent: Agent, run_cli: RunCli, git_repo: Path
) -> None:
    data = await agent.call("traverse_graph", root="a")
    assert data == FULL
    cli = run_cli(["graph", "a", "--json"], cwd=git_repo)
    assert json.loads(cli.stdout) == data


async def test_traverse_graph_takes_depth_direction_and_algorithm(agent: Agent) -> None:
    root_only = await agent.call("traverse_graph", root="a", depth=0)
    assert (root_only["nodes"], root_only["edges"]) == ({"a": []}, [])
    dfs = await agent.call("traverse_graph", root="a", algorithm="dfs")
    assert list(dfs["nodes"]) == ["a", "b", "d", "c", "e"]
    both = await agent.call("traverse_graph", root="e", direction="both", depth=2)
    assert [(e["source"], e["target"]) for e in both["edges"]] == [("c", "e"), ("a", "c")]


async def test_traverse_graph_follows_only_the_link_types_asked_for(agent: Agent) -> None:
    plain = await agent.call("traverse_graph", root="a", link_types=["link"])
    assert "e" not in plain["nodes"]
    assert {e["type"] for e in plain["edges"]} == {"link"}
    typed = await agent.call("traverse_graph", root="c", link_types=["depends_on"])
    assert [(e["source"], e["target"], e["type"]) for e in typed["edges"]] == [
        ("c", "e", "depends_on")
    ]


async def test_traverse_graph_lists_ten_cycles_and_says_how_many_there_are(
    agent: Agent, run_cli: RunCli, git_repo: Path
) -> None:
    """kqc-real/arsnova.eu's densely cross-linked store answered 25,236 characters at the
    default limit, 9,100 of them the loops found: an agent needs a few to see that memories
    link back, and how many there are."""
    spokes = [f"spoke{n:02}" for n in range(12)]
    write_all(git_repo / ".memories", {
        "hub": "# Hub\n\n" + "".join(f"- [[{name}]]\n" for name in spokes),
        **{name: f"# {name}\n\nBack to [[hub]].\n" for name in spokes},
    })  # fmt: skip
    data = await agent.call("traverse_graph", root="hub")
    assert "listed 10 of the 12 cycles among these memories" in data["cut"]
    cli = json.loads(run_cli(["graph", "hub", "--json"], cwd=git_repo).stdout)
    assert len(cli["cycles"]) == 12  # the CLI's JSON keeps them all
    assert data["cycles"] == cli["cycles"][:10]
    assert {tuple(cycle) for cycle in cli["cycles"]} == {("hub", s, "hub") for s in spokes}


async def test_traverse_graph_of_an_unknown_root_is_a_tool_error(agent: Agent) -> None:
    message = await agent.fail("traverse_graph", root="nope")
    assert message.startswith("memory not found: 'nope'")
    assert "invalid depth -2" in await agent.fail("traverse_graph", root="a", depth=-2)
    assert "invalid algorithm 'astar'" in await agent.fail(
        "traverse_graph", root="a", algorithm="astar"
    )


async def test_related_memories_answers_as_related_json(
    agent: Agent, run_cli: RunCli, git_repo: Path
) -> None:
    data = await agent.call("related_memories", path="a")
    assert data == {
        "memory": "a",
        "related": [
            {"path": "b", "type": "link", "line": 6, "links": [{"type": "link", "line": 6}]},
            {
                "path": "f",
                "type": "related",
                "line": 5,
                "links": [{"type": "related", "line": 5}],
            },
        ],
    }
    assert json.loads(run_cli(["related", "a", "--json"], cwd=git_repo).stdout) == data
    assert (await agent.call("related_memories", path="g"))["related"] == []
    assert (await agent.fail("related_memories", path="nope")).startswith("memory not found")
