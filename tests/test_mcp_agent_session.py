"""An agent's session over MCP on real stores (session 26's MCP QA).

Found by driving `memory-enhancement serve` over stdio, through the SDK's own client, on
clones of ArjenSchwarz/strata (a Serena store in English), chen-uui/MustADB (a Serena
store in Chinese, nested in a sub-project) and AnotherSava/bga-assistant (a Claude Code
memory folder). Here the server is built as `serve` builds it, in a real git repository,
and reached through the SDK's in-process client; every success is checked against the
tool's output schema and every failure must be a tool error naming the bad value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.types import TextContent

from mcp_support import Agent

pytestmark = pytest.mark.anyio


@pytest.fixture
def serena(git_repo: Path) -> Path:
    store = git_repo / ".serena" / "memories"
    (store / "pipeline").mkdir(parents=True)
    return store


async def test_a_serena_mem_reference_found_in_a_memory_gets_the_memory_it_names(
    agent: Agent, serena: Path
) -> None:
    """Serena memories point at each other as `mem:NAME` (`see mem:gotchas`, `mem:pipeline/
    order`: OmegaTeee/fontforge, Kronos1993/Multiplatform-Weather-App and seven more
    stores), and the link graph follows them. An agent that passed what it read to
    get_memory was told 'invalid citation ID' and had no way to read the memory."""
    (serena / "gotchas.md").write_text("# Gotchas\n\nKerning is not standard.\n")
    (serena / "pipeline" / "order.md").write_text("# Order\n\nkern, then baseline.\n")
    index = "# Overview\n\n- `mem:gotchas` for traps\n- `mem:pipeline/order` for steps\n"
    (serena / "overview.md").write_text(index)

    got = await agent.call("get_memory", path="mem:gotchas")
    assert got["path"] == "gotchas"
    assert (await agent.call("get_memory", path="[mem:pipeline/order]"))["path"] == (
        "pipeline/order"
    )
    # The handle works wherever a memory is taken, writes included, and changes that file.
    related = await agent.call("related_memories", path="mem:gotchas")
    assert [r["path"] for r in related["related"]] == ["overview"]
    assert (await agent.call("traverse_graph", root="mem:pipeline/order"))["root"] == (
        "pipeline/order"
    )
    await agent.call("update_memory", path="mem:pipeline/order", tags=["steps"])
    assert "steps" in (serena / "pipeline" / "order.md").read_text()
    assert (serena / "overview.md").read_text() == index

    # A citation ID still comes first, and a name nothing has is still an error naming it.
    assert (await agent.call("get_memory", path=got["id"]))["path"] == "gotchas"
    message = await agent.fail("get_memory", path="mem:nothing_here")
    assert "mem:nothing_here" in message


async def test_remove_memory_takes_the_id_search_gave_and_refuses_a_name_naming_its_path(
    agent: Agent, serena: Path
) -> None:
    """On strata, remove_memory given the [mem:ID] that search_memories and get_memory
    had just handed the agent answered 'memory not found', for a memory that was there.
    An ID names one memory exactly, so it removes it; a name (which may match a file in
    any folder) is still refused, with the path to pass instead."""
    (serena / "qa_cobra.md").write_text("# Cobra\n\nThe root command.\n")
    (serena / "pipeline" / "cobra_notes.md").write_text("# Notes\n\nKeep.\n")
    hit = (await agent.call("search_memories", query="root command"))["hits"][0]
    assert hit["path"] == "qa_cobra"

    removed = await agent.call("remove_memory", path=f"[{hit['id']}]")
    assert removed["path"] == "qa_cobra" and not (serena / "qa_cobra.md").exists()

    message = await agent.fail("remove_memory", path="cobra_notes")
    assert "pipeline/cobra_notes" in message and "not found" not in message
    assert (serena / "pipeline" / "cobra_notes.md").read_text() == "# Notes\n\nKeep.\n"


async def test_list_memories_of_a_big_store_fits_an_agent_and_pages_on_with_offset(
    agent: Agent, serena: Path
) -> None:
    """On rjmurillo/ai-agents (1,026 Serena memories) a bare list_memories() answered
    356,467 characters, some 90,000 tokens, more than an agent can read; and `limit` gave
    only the first ones by path, with no way to ask for the next. Now the default is a
    page, `total` says how many there are, and `offset` asks for the next page."""
    for n in range(60):
        (serena / f"note_{n:02}.md").write_text(f"# Note {n}\n\nBody {n}.\n")
    first = await agent.call("list_memories")
    assert len(first["memories"]) == 50 and first["total"] == 60
    rest = await agent.call("list_memories", offset=50)
    assert [m["path"] for m in rest["memories"]] == [f"note_{n}" for n in range(50, 60)]
    assert rest["total"] == 60
    paged = [m["path"] for m in first["memories"] + rest["memories"]]
    assert paged == sorted(paged) and len(set(paged)) == 60
    few = await agent.call("list_memories", limit=2, offset=3, category="pipeline")
    assert few == {"memories": [], "skipped": [], "total": 0}
    assert "offset -1" in await agent.fail("list_memories", offset=-1)


async def test_the_text_an_agent_reads_is_the_result_as_compact_json(
    agent: Agent, serena: Path
) -> None:
    """Most clients hand the model a result's text, not its structured content, and the SDK
    wrote that text as JSON indented by two spaces: on rjmurillo/ai-agents verify_memories
    was 91,098 characters of text for 62,416 of JSON. The text is the same JSON, compact;
    a Chinese memory stays readable, not escaped."""
    (serena / "架构.md").write_text("# RAG 系统架构\n\n向量数据库连接管理。\n", encoding="utf-8")
    result = await agent.client.call_tool("search_memories", {"query": "向量数据库"})
    (text,) = [c.text for c in result.content if isinstance(c, TextContent)]
    assert json.loads(text) == result.structured_content
    assert text == json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    assert "向量数据库" in text


async def test_serve_started_in_a_sub_project_reads_that_sub_project_s_serena_memories(
    isolated_home: Path, git_repo: Path
) -> None:
    """chen-uui/MustADB keeps its Serena project in ccc/astrobiology (.serena/ sits there,
    below the git root). `serve` started there, as an agent's configuration for that
    project would start it, looked for .serena/memories at the git root only, fell back
    to an empty .memories and answered list_memories with nothing: 15 memories unseen,
    and an add_memory would have gone to a new store at the root."""
    from mcp import Client

    from memory_enhancement.cli.app import App
    from memory_enhancement.mcp.server import build_server

    project = git_repo / "ccc" / "astrobiology"
    store = project / ".serena" / "memories"
    store.mkdir(parents=True)
    (store / "backend_tech_stack.md").write_text("后端基于Django。", encoding="utf-8")
    inside = App(env={"MEMORY_ENHANCEMENT_HOME": str(isolated_home)}, cwd=project / "backend")
    async with Client(build_server(inside.service_for)) as client:
        agent = Agent(client)
        listed = await agent.call("list_memories")
        assert [m["path"] for m in listed["memories"]] == ["backend_tech_stack"]
        await agent.call("add_memory", path="deploy_notes", content="# Deploy\n\ndocker.\n")
    assert (store / "deploy_notes.md").is_file()
    assert not (git_repo / ".memories").exists()


async def test_get_memory_as_the_first_call_lists_an_index_memorys_links(
    agent: Agent, serena: Path
) -> None:
    """On rjmurillo/ai-agents, get_memory("memory-index") as an agent's first call answered
    `links: []` (the index had not seen the memories it names, so its 188 links read as
    repository files), and the same call after any listing answered all of them."""
    (serena / "gotchas.md").write_text("# Gotchas\n\nKerning is not standard.\n")
    (serena / "pipeline" / "order.md").write_text("# Order\n\nkern, then baseline.\n")
    (serena / "memory-index.md").write_text(
        "# Memory Index\n\n- [gotchas](gotchas.md)\n- [order](pipeline/order.md)\n"
    )
    first = await agent.call("get_memory", path="memory-index")
    assert [link["target"] for link in first["links"]] == ["gotchas.md", "pipeline/order.md"]
    await agent.call("list_memories")
    assert (await agent.call("get_memory", path="memory-index"))["links"] == first["links"]


async def test_a_store_folder_gone_while_serving_is_a_tool_error_naming_it(
    isolated_home: Path, git_repo: Path
) -> None:
    """`serve --dir` checks the folder once, at start; removed since (with the folder it
    sat in: a branch switched, a checkout cleaned), every call answered `Error executing
    tool list_memories` and nothing else, the reason only in the server's log."""
    import shutil

    from mcp import Client

    from memory_enhancement.cli.app import App
    from memory_enhancement.mcp.server import build_server

    store = git_repo / "notes" / "memories"
    store.mkdir(parents=True)
    (store / "a.md").write_text("# A\n\nSome memory.\n")
    app = App(env={"MEMORY_ENHANCEMENT_HOME": str(isolated_home)}, cwd=git_repo)
    app.options["dir"] = str(store)
    async with Client(build_server(app.service_for)) as client:
        agent = Agent(client)
        assert (await agent.call("list_memories"))["total"] == 1
        shutil.rmtree(git_repo / "notes")
        for tool, arguments in (("list_memories", {}), ("get_memory", {"path": "a"})):
            message = await agent.fail(tool, **arguments)
            assert message.startswith(f"--dir {str(store)!r}: no such folder"), message
