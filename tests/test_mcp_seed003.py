"""Seed 003 (the MCP tool contract), scenario by scenario, through the in-process client.

Each test is one "WHEN an agent calls ... THEN ..." of the seed, named after it.
The server is the one `serve` builds, on a real git repository whose project
store (`.memories`) is the default store.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcp_support import Agent
from memory_enhancement.cli.app import App
from memory_enhancement.mcp.server import build_server

pytestmark = pytest.mark.anyio


@pytest.fixture
async def agent(isolated_home: Path, git_repo: Path) -> AsyncIterator[Agent]:
    app = App(env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)}, cwd=git_repo)
    async with Client(build_server(app.service_for)) as client:
        yield Agent(client)


@pytest.fixture
def store(git_repo: Path) -> Path:
    return git_repo / ".memories"


async def tick() -> None:
    """Let the millisecond clock move on, so a refreshed timestamp differs."""
    await anyio.sleep(0.005)


# -- Requirement: Add memory tool ----------------------------------------------------


async def test_adding_a_memory_creates_it_at_the_path(agent: Agent, store: Path) -> None:
    data = await agent.call("add_memory", path="decisions/use-sqlite", content="We use SQLite.")
    assert data["path"] == "decisions/use-sqlite"
    assert (store / "decisions" / "use-sqlite.md").is_file()
    fetched = await agent.call("get_memory", path="decisions/use-sqlite")
    assert fetched["content"] == "We use SQLite."


async def test_adding_to_a_store_that_does_not_exist_creates_the_store(
    agent: Agent, isolated_home: Path
) -> None:
    assert not (isolated_home / "stores").exists()
    await agent.call("add_memory", path="notes/first", content="Hello.", store="scratch")
    assert (isolated_home / "stores" / "scratch" / "notes" / "first.md").is_file()
    fetched = await agent.call("get_memory", path="notes/first", store="scratch")
    assert fetched["content"] == "Hello."


async def test_adding_to_the_project_store_before_it_exists_creates_it(
    agent: Agent, store: Path
) -> None:
    assert not store.exists()
    await agent.call("add_memory", path="notes/first", content="Hello.")
    assert (store / "notes" / "first.md").is_file()


async def test_adding_in_a_category_that_does_not_exist_creates_the_category(
    agent: Agent, store: Path
) -> None:
    await agent.call("add_memory", path="notes/first", content="Hello.")
    await agent.call("add_memory", path="architecture/api/versioning", content="Use v2.")
    assert (store / "architecture" / "api").is_dir()
    listing = await agent.call("list_memories", category="architecture")
    assert [m["path"] for m in listing["memories"]] == ["architecture/api/versioning"]


async def test_a_memory_is_created_with_the_optional_tags_expiry_and_citations(
    agent: Agent,
) -> None:
    data = await agent.call(
        "add_memory",
        path="decisions/api",
        content="Clients send v2.",
        tags=["api", "versioning"],
        expires_at="2030-06-01T00:00:00Z",
        citations=["src/app.py:3"],
    )
    meta = (await agent.call("get_memory", path="decisions/api"))["metadata"]
    assert meta["tags"] == ["api", "versioning"]
    assert meta["expires_at"] == "2030-06-01T00:00:00.000Z"
    assert meta["citations"] == ["src/app.py:3"]
    assert data["metadata"] == meta


async def test_a_memory_added_with_citations_has_them_in_its_metadata(agent: Agent) -> None:
    citations = ["src/core/types.ts:17", "https://docs.example.com"]
    data = await agent.call(
        "add_memory", path="decisions/types", content="Types live in core.", citations=citations
    )
    assert data["metadata"]["citations"] == citations
    # the file does not exist in this repository: kept, with a warning that says so
    assert any("src/core/types.ts does not exist" in w for w in data["warnings"])
    fetched = await agent.call("get_memory", path="decisions/types")
    assert fetched["metadata"]["citations"] == citations
    assert [c["kind"] for c in fetched["citations"]] == ["file", "url"]


async def test_adding_at_an_existing_path_is_refused_and_keeps_the_memory(agent: Agent) -> None:
    await agent.call("add_memory", path="decisions/api", content="First.")
    message = await agent.fail("add_memory", path="decisions/api", content="Second.")
    assert "memory already exists: 'decisions/api'" in message
    assert (await agent.call("get_memory", path="decisions/api"))["content"] == "First."


# -- Requirement: Get memory tool ----------------------------------------------------


async def test_retrieving_a_memory_returns_its_content_and_metadata(agent: Agent) -> None:
    added = await agent.call(
        "add_memory", path="decisions/api", content="Clients send v2.", tags=["api"]
    )
    data = await agent.call("get_memory", path="decisions/api")
    assert data["content"] == "Clients send v2."
    assert data["id"] == added["id"]
    assert data["metadata"]["tags"] == ["api"]
    assert data["metadata"]["source"] == "mcp"
    assert data["metadata"]["created_at"] == data["metadata"]["updated_at"] is not None
    assert data["metadata"]["expires_at"] is None


async def test_getting_a_memory_that_does_not_exist_is_an_error(agent: Agent) -> None:
    message = await agent.fail("get_memory", path="decisions/nothing-here")
    assert "memory not found: 'decisions/nothing-here'" in message


async def test_a_memory_is_got_by_its_citation_id_or_unique_name_as_the_cli_gets_it(
    agent: Agent,
) -> None:
    """`get` took an ID or a name from 56f84a0 on; the tool an agent calls answered
    'memory not found' for the `[mem:ID]` every other tool hands it."""
    added = await agent.call("add_memory", path="decisions/use-sqlite", content="We use SQLite.")
    cid = added["id"]
    for reference in (cid, f"[{cid}]", cid.removeprefix("mem:"), "use-sqlite"):
        fetched = await agent.call("get_memory", path=reference)
        assert (fetched["path"], fetched["content"]) == ("decisions/use-sqlite", "We use SQLite.")
    message = await agent.fail("get_memory", path="mem:zzzzzz")
    assert message == "unknown citation ID [mem:zzzzzz]"


async def test_an_expired_memory_is_not_returned_by_default(agent: Agent) -> None:
    await agent.call(
        "add_memory", path="notes/old", content="Was true once.", expires_at="2020-01-01"
    )
    message = await agent.fail("get_memory", path="notes/old")
    assert "memory 'notes/old' expired at 2020-01-01T00:00:00.000Z" in message
    assert "include_expired" in message
    message = await agent.fail("get_memory", path="notes/old", include_expired=False)
    assert "expired" in message
    data = await agent.call("get_memory", path="notes/old", include_expired=True)
    assert data["content"] == "Was true once."


async def test_an_expired_memory_is_left_out_of_listings_and_search(agent: Agent) -> None:
    await agent.call(
        "add_memory", path="notes/old", content="Legacy header rules.", expires_at="2020-01-01"
    )
    await agent.call("add_memory", path="notes/new", content="Current header rules.")
    listing = await agent.call("list_memories")
    assert [m["path"] for m in listing["memories"]] == ["notes/new"]
    hits = (await agent.call("search_memories", query="header rules"))["hits"]
    assert [h["path"] for h in hits] == ["notes/new"]


async def test_the_response_includes_the_citations_array(agent: Agent) -> None:
    await agent.call(
        "add_memory",
        path="decisions/api",
        content="Clients send v2.",
        citations=["src/app.py:3", "src/app.py:5-7", "https://docs.example.com"],
    )
    data = await agent.call("get_memory", path="decisions/api")
    assert data["metadata"]["citations"] == [
        "src/app.py:3",
        "src/app.py:5-7",
        "https://docs.example.com",
    ]


async def test_the_response_for_a_memory_without_citations_has_an_empty_array(
    agent: Agent,
) -> None:
    await agent.call("add_memory", path="notes/plain", content="No sources.")
    data = await agent.call("get_memory", path="notes/plain")
    assert data["metadata"]["citations"] == []
    assert data["citations"] == []


# -- Requirement: Update memory tool -------------------------------------------------


async def test_updating_content_replaces_it_and_refreshes_the_timestamp(agent: Agent) -> None:
    added = await agent.call("add_memory", path="decisions/api", content="Clients send v1.")
    await tick()
    data = await agent.call("update_memory", path="decisions/api", content="Clients send v2.")
    assert data["diff"] == "@@ -1 +1 @@\n-Clients send v1.\n+Clients send v2."
    assert data["changed"] is True
    assert data["metadata"]["created_at"] == added["metadata"]["created_at"]
    assert data["metadata"]["updated_at"] > added["metadata"]["updated_at"]
    fetched = await agent.call("get_memory", path="decisions/api")
    assert fetched["content"] == "Clients send v2."


async def test_updating_only_tags_or_expiry_changes_only_the_metadata(agent: Agent) -> None:
    added = await agent.call(
        "add_memory",
        path="decisions/api",
        content="Clients send v2.",
        tags=["old"],
        citations=["src/app.py:3"],
    )
    await tick()
    tagged = await agent.call("update_memory", path="decisions/api", tags=["api", "v2"])
    assert tagged["metadata"]["tags"] == ["api", "v2"]
    assert "diff" not in tagged and tagged["size"]["chars"] == tagged["size"]["chars_before"]
    assert tagged["metadata"]["citations"] == ["src/app.py:3"]
    assert tagged["metadata"]["expires_at"] is None

    dated = await agent.call("update_memory", path="decisions/api", expires_at="2031-01-01")
    assert dated["metadata"]["expires_at"] == "2031-01-01T00:00:00.000Z"
    assert dated["metadata"]["tags"] == ["api", "v2"]
    assert "diff" not in dated and dated["citations_written"] == []
    fetched = await agent.call("get_memory", path="decisions/api")
    assert fetched["content"] == "Clients send v2."
    assert fetched["citations"] == added["citations_written"]


async def test_given_tags_replace_and_an_empty_list_clears_them(agent: Agent) -> None:
    await agent.call("add_memory", path="notes/tagged", content="Tagged.", tags=["a", "b"])
    replaced = await agent.call("update_memory", path="notes/tagged", tags=["c"])
    assert replaced["metadata"]["tags"] == ["c"]
    cleared = await agent.call("update_memory", path="notes/tagged", tags=[])
    assert cleared["metadata"]["tags"] == []
    kept = await agent.call("update_memory", path="notes/tagged", content="Still tagged?")
    assert kept["metadata"]["tags"] == []


async def test_clear_expiry_removes_the_expiry_date(agent: Agent) -> None:
    await agent.call(
        "add_memory", path="notes/old", content="Was true once.", expires_at="2020-01-01"
    )
    data = await agent.call("update_memory", path="notes/old", clear_expiry=True)
    assert data["metadata"]["expires_at"] is None
    fetched = await agent.call("get_memory", path="notes/old")  # no longer expired
    assert fetched["metadata"]["expires_at"] is None


async def test_updating_citations_replaces_the_array(agent: Agent) -> None:
    await agent.call(
        "add_memory",
        path="decisions/api",
        content="Clients send v2.",
        citations=["src/app.py:3", "https://docs.example.com"],
    )
    data = await agent.call("update_memory", path="decisions/api", citations=["new/path.ts:5"])
    assert data["metadata"]["citations"] == ["new/path.ts:5"]
    fetched = await agent.call("get_memory", path="decisions/api")
    assert fetched["metadata"]["citations"] == ["new/path.ts:5"]


async def test_updating_with_an_empty_citations_array_removes_them_all(agent: Agent) -> None:
    await agent.call(
        "add_memory",
        path="decisions/api",
        content="Clients send v2.",
        citations=["src/app.py:3", "https://docs.example.com"],
    )
    data = await agent.call("update_memory", path="decisions/api", citations=[])
    assert data["metadata"]["citations"] == []
    fetched = await agent.call("get_memory", path="decisions/api")
    assert fetched["metadata"]["citations"] == []
    assert fetched["citations"] == []


async def test_an_update_without_citations_preserves_them(agent: Agent) -> None:
    added = await agent.call(
        "add_memory",
        path="decisions/api",
        content="Clients send v2.",
        citations=["src/app.py:3", "https://docs.example.com"],
    )
    await agent.call("update_memory", path="decisions/api", content="Clients must send v2.")
    await agent.call("update_memory", path="decisions/api", tags=["api"])
    fetched = await agent.call("get_memory", path="decisions/api")
    assert fetched["content"] == "Clients must send v2."
    assert fetched["metadata"]["citations"] == ["src/app.py:3", "https://docs.example.com"]
    assert fetched["citations"] == added["citations_written"]  # snippets and stamps kept too


async def test_an_update_that_changes_nothing_writes_nothing(agent: Agent, store: Path) -> None:
    added = await agent.call("add_memory", path="decisions/api", content="Same.", tags=["a"])
    file = store / "decisions" / "api.md"
    before = file.read_bytes()
    data = await agent.call("update_memory", path="decisions/api", tags=["a"])
    assert data["changed"] is False
    assert data["metadata"]["updated_at"] == added["metadata"]["updated_at"]
    assert file.read_bytes() == before


async def test_updating_a_memory_that_does_not_exist_is_an_error(agent: Agent) -> None:
    message = await agent.fail("update_memory", path="decisions/nothing", content="x")
    assert "memory not found: 'decisions/nothing'" in message
