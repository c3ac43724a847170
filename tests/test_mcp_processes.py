"""`memory-enhancement serve` as a real process, as an agent's MCP configuration starts it.

Over stdio with the SDK's stdio client (the handshake era and the default one),
over streamable HTTP, and several writers at once: two servers and the CLI
adding to one store must lose nothing. Timing is benchmarked in
`bench/bench_mcp.py`, never asserted here.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from mcp import Client, ClientSession, stdio_client
from mcp.types import TextContent

from conftest import git
from mcp_support import (
    Agent,
    child_env,
    free_port,
    port_open,
    serve_command,
    serve_params,
    wait_for,
)
from memory_enhancement.cli.app import App
from memory_enhancement.store import formats
from memory_enhancement.store.disk import Store

pytestmark = pytest.mark.anyio

TIMEOUT = 120  # seconds for a whole test: generous on a shared, loaded machine


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[IO[str]]:
    """Where a server's stderr goes (its logs); stdout is the protocol."""
    with (tmp_path / "server-stderr.log").open("w+", encoding="utf-8") as file:
        yield file


def logged(errlog: IO[str]) -> str:
    errlog.flush()
    errlog.seek(0)
    return errlog.read()


async def agent_session(agent: Agent, store: Path) -> None:
    """What an agent does: look at the tools, save, load, change, check and find."""
    tools = await agent.tools()
    assert {"add_memory", "get_memory", "update_memory", "verify_memory"} <= set(tools)
    assert tools["get_memory"].annotations.read_only_hint is True

    added = await agent.call(
        "add_memory",
        path="decisions/api-version",
        content="Clients send the v2 header.",
        tags=["api"],
        citations=["src/app.py:3"],
    )
    assert added["citations_written"][0]["snippet"] == "API_VERSION = 'v2'"
    assert (store / "decisions" / "api-version.md").is_file()

    fetched = await agent.call("get_memory", path="decisions/api-version", verify=True)
    assert fetched["id"] == added["id"]
    assert fetched["verification"]["valid"] is True

    updated = await agent.call(
        "update_memory", path="decisions/api-version", content="Clients must send v2."
    )
    assert updated["diff"] == "@@ -1 +1 @@\n-Clients send the v2 header.\n+Clients must send v2."
    assert updated["metadata"]["citations"] == ["src/app.py:3"]  # omitted: kept

    verdict = await agent.call("verify_memory", path="decisions/api-version")
    assert [c["status"] for c in verdict["citations"]] == ["valid"]

    found = await agent.call("search_memories", query="v2")
    assert [h["id"] for h in found["hits"]] == [added["id"]]

    missing = await agent.fail("get_memory", path="decisions/nothing")
    assert "memory not found: 'decisions/nothing'" in missing


# -- stdio ------------------------------------------------------------------------


async def test_an_agent_uses_the_server_over_stdio_with_the_initialize_handshake(
    isolated_home: Path, git_repo: Path, tmp_path: Path, errlog: IO[str]
) -> None:
    store = tmp_path / "memories"
    params = serve_params(isolated_home, git_repo, ["--dir", str(store)])
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            assert client.protocol_version == "2025-11-25"  # a handshake-era connection
            assert client.server_info is not None
            assert client.server_info.name == "memory-enhancement"
            await agent_session(Agent(client), store)
    assert "Traceback" not in logged(errlog)


async def test_an_agent_uses_the_server_over_stdio_in_the_default_mode(
    isolated_home: Path, git_repo: Path, tmp_path: Path, errlog: IO[str]
) -> None:
    store = tmp_path / "memories"
    params = serve_params(isolated_home, git_repo, ["--dir", str(store)])
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await agent_session(Agent(client), store)
            # resources and the prompt work over the wire as well
            (contents,) = (
                await client.read_resource("memory://default/decisions/api-version")
            ).contents
            assert contents.text == (store / "decisions" / "api-version.md").read_text()
            skill = await client.get_prompt("memory_skill")
            assert isinstance(skill.messages[0].content, TextContent)
            assert "verify" in skill.messages[0].content.text
    assert "Traceback" not in logged(errlog)


async def test_the_first_initialize_over_stdio_is_answered(
    isolated_home: Path, git_repo: Path, errlog: IO[str]
) -> None:
    """Startup: the first request a client sends gets its answer (its speed is benched)."""
    params = serve_params(isolated_home, git_repo)  # the project store, as in an agent's config
    with anyio.fail_after(TIMEOUT):
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            result = await session.initialize()
            assert result.server_info.name == "memory-enhancement"
            assert result.protocol_version == "2025-11-25"
            assert result.instructions is not None
            assert result.capabilities.tools is not None
            assert result.capabilities.resources is not None
            assert result.capabilities.prompts is not None
            listed = await session.list_tools()
            assert "get_memory" in {t.name for t in listed.tools}


async def test_usage_over_stdio_is_recorded_under_an_mcp_session(
    isolated_home: Path, git_repo: Path, errlog: IO[str]
) -> None:
    params = serve_params(isolated_home, git_repo)
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            agent = Agent(client)
            await agent.call("add_memory", path="notes/one", content="One thing.")
            await agent.call("get_memory", path="notes/one")
            await agent.call("search_memories", query="thing")
    service = App(env=child_env(isolated_home), cwd=git_repo).service_for(None, "probe")
    with service.state.connect() as conn:
        rows = conn.execute("SELECT session, action FROM usage ORDER BY id").fetchall()
    assert [action for _, action in rows] == ["get", "search"]
    (session,) = {session for session, _ in rows}
    assert session.startswith("mcp:")


async def test_serve_with_an_unusable_store_fails_before_serving(
    isolated_home: Path, git_repo: Path
) -> None:
    (git_repo / "a-file").write_text("not a folder")
    with anyio.fail_after(TIMEOUT):
        result = await anyio.run_process(
            serve_command("--dir", str(git_repo / "a-file")),
            cwd=git_repo,
            env=child_env(isolated_home),
            check=False,
        )
    assert result.returncode == 2
    assert result.stdout == b""  # stdout is the protocol: nothing else on it
    assert b"is not a folder" in result.stderr


# -- streamable HTTP ---------------------------------------------------------------


async def test_a_shared_server_over_streamable_http_serves_tools_and_sessions(
    isolated_home: Path, git_repo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "memories"
    port = free_port()
    command = serve_command(
        "--transport", "streamable-http", "--host", "127.0.0.1", "--port", str(port),
        "--dir", str(store),
    )  # fmt: skip
    with (tmp_path / "http-stderr.log").open("w+b") as errors:
        process = await anyio.open_process(
            command,
            cwd=git_repo,
            env=child_env(isolated_home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
        try:
            with anyio.fail_after(TIMEOUT):
                await wait_for(
                    lambda: port_open(port) or process.returncode is not None, 60, "the port"
                )
                assert process.returncode is None, "the server exited"
                url = f"http://127.0.0.1:{port}/mcp"
                async with Client(url) as client:
                    agent = Agent(client)
                    added = await agent.call("add_memory", path="notes/shared", content="Shared.")
                    fetched = await agent.call("get_memory", path="notes/shared")
                    assert fetched["id"] == added["id"]
                for _ in range(2):  # two handshake connections: two HTTP sessions
                    async with Client(url, mode="legacy") as client:
                        await Agent(client).call("get_memory", path="notes/shared")
        finally:
            process.terminate()
            with anyio.fail_after(30):
                await process.wait()
        errors.seek(0)
        assert b"Traceback" not in errors.read()
    assert (store / "notes" / "shared.md").is_file()

    service = App(env=child_env(isolated_home), cwd=git_repo)
    service.options["dir"] = str(store)
    with service.service_for(None, "probe").state.connect() as conn:
        sessions = [row[0] for row in conn.execute("SELECT session FROM usage ORDER BY id")]
    assert len(sessions) == 3
    assert all(s.startswith("mcp:") for s in sessions)
    assert len(set(sessions[1:])) == 2  # each HTTP session is its own


# -- many writers at once -------------------------------------------------------------


async def test_two_servers_and_the_cli_writing_to_one_store_lose_nothing(
    isolated_home: Path, git_repo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "memories"
    per_writer = 20
    returned: dict[str, str] = {}  # path -> citation ID each writer was given
    env = child_env(isolated_home)

    async def server(name: str, errlog: IO[str]) -> None:
        params = serve_params(isolated_home, git_repo, ["--dir", str(store)])
        async with Client(stdio_client(params, errlog=errlog)) as client:
            agent = Agent(client)
            await agent.tools()

            async def add(n: int) -> None:
                data = await agent.call(
                    "add_memory",
                    path=f"shared/{name}-{n:02d}",
                    content=f"Written by {name}, number {n}.",
                    citations=["src/app.py:3"],
                )
                returned[data["path"]] = data["id"]

            async with anyio.create_task_group() as tasks:
                for n in range(per_writer):
                    tasks.start_soon(add, n)

    async def cli() -> None:
        for n in range(per_writer):
            result = await anyio.run_process(
                [
                    str(serve_command()[0]), "--dir", str(store), "add", f"shared/cli-{n:02d}",
                    "-c", f"Written by cli, number {n}.", "--citation", "src/app.py:3", "--json",
                ],
                cwd=git_repo,
                env=env,
                check=False,
            )  # fmt: skip
            assert result.returncode == 0, result.stderr.decode()
            data = json.loads(result.stdout)
            returned[data["path"]] = data["id"]

    with (
        (tmp_path / "a.log").open("w+", encoding="utf-8") as log_a,
        (tmp_path / "b.log").open("w+", encoding="utf-8") as log_b,
        anyio.fail_after(TIMEOUT * 2),
    ):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server, "alpha", log_a)
            tasks.start_soon(server, "beta", log_b)
            tasks.start_soon(cli)
        assert "Traceback" not in logged(log_a) + logged(log_b)

    expected = {
        f"shared/{name}-{n:02d}": f"Written by {name}, number {n}."
        for name in ("alpha", "beta", "cli")
        for n in range(per_writer)
    }
    assert set(returned) == set(expected)
    files = sorted(store.rglob("*.md"))
    assert len(files) == 3 * per_writer
    parsed = Store(store)
    for path, content in expected.items():
        memory = formats.parse_text(path, parsed.file_for(path).read_text("utf-8")).memory
        assert memory.content == content
        assert [c.ref for c in memory.meta.citations] == ["src/app.py:3"]
    # every writer's citation ID still names its memory, and no two memories share one
    app = App(env=env, cwd=git_repo)
    app.options["dir"] = str(store)
    listing = app.service_for(None, "probe").list_memories("shared")
    assert {s.path: f"mem:{s.citation_id}" for s in listing.memories} == returned
    assert len(set(returned.values())) == 3 * per_writer


async def test_the_cli_sees_what_an_agent_saved_over_stdio(
    isolated_home: Path, git_repo: Path, errlog: IO[str]
) -> None:
    """Both front ends share the project store, its index and its citation IDs."""
    params = serve_params(isolated_home, git_repo)
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_client(params, errlog=errlog)) as client:
            added = await Agent(client).call(
                "add_memory", path="notes/agent", content="Saved by an agent."
            )
        result = await anyio.run_process(
            [serve_command()[0], "get", "notes/agent", "--json"],
            cwd=git_repo,
            env=child_env(isolated_home),
        )
    data: dict[str, Any] = json.loads(result.stdout)
    assert (data["id"], data["content"]) == (added["id"], "Saved by an agent.")
    git(git_repo, "status", "--short")  # the repository is intact
