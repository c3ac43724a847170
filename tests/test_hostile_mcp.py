"""The cases of issue 14 as an agent meets them: through the real MCP SDK client.

In-process (`build_server(App.service_for)`, as `serve` builds it) for the tools;
a real `serve --transport streamable-http` process for what HTTP exposes: the
Host/Origin checks on every address and the bearer token.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from hostile_support import ALIAS_BOMB, MEMORY_LIMIT, run_bounded, snapshot
from mcp_support import Agent, child_env, free_port, serve_command, wait_for
from memory_enhancement.cli.app import App
from memory_enhancement.store.formats.base import MAX_FILE_BYTES
from memory_enhancement.store.locations import REGISTRY_FILE

pytestmark = pytest.mark.anyio

HUGE_LINE = "99999999999999999999"
TOKEN = "a-long-random-test-token-0123456789"


@pytest.fixture
def app(isolated_home: Path, git_repo: Path) -> App:
    return App(env={"MEMORY_ENHANCEMENT_HOME": str(isolated_home)}, cwd=git_repo)


def project_store(git_repo: Path) -> Path:
    return git_repo / ".memories"


async def test_a_huge_line_number_is_a_tool_error_and_the_store_keeps_working(
    agent: Agent, git_repo: Path
) -> None:
    message = await agent.fail(
        "add_memory", path="notes/x", content="X.", citations=[f"src/app.py:{HUGE_LINE}"]
    )
    assert HUGE_LINE in message and "largest line number" in message
    assert not (project_store(git_repo) / "notes" / "x.md").exists()
    await agent.call("add_memory", path="notes/base", content="A memory.")
    message = await agent.fail("add_citation", path="notes/base", citation=f"src/a.py:{HUGE_LINE}")
    assert HUGE_LINE in message
    assert [m["path"] for m in (await agent.call("list_memories"))["memories"]] == ["notes/base"]
    assert (await agent.call("search_memories", query="memory"))["hits"]
    await agent.call("memory_health")
    await agent.call("verify_memories")


async def test_an_alias_bomb_in_the_store_is_a_prompt_tool_error(
    isolated_home: Path, git_repo: Path, tmp_path: Path
) -> None:
    """Through a real `serve` over stdio, whose memory is bounded: the bomb once grew the
    server to 2 GB; now it is refused at once and the rest of the store is served."""
    store = tmp_path / "s"
    (store / "n").mkdir(parents=True)
    (store / "n" / "ok.md").write_text("Fine.\n", encoding="utf-8")
    (store / "n" / "bomb.md").write_text(ALIAS_BOMB, encoding="utf-8")
    bounded = (
        "import os, resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))\n"
        "os.execv(sys.argv[1], sys.argv[1:])\n"
    )
    command = serve_command("--dir", str(store))
    params = StdioServerParameters(
        command=sys.executable, args=["-c", bounded, *command],
        env=child_env(isolated_home), cwd=str(git_repo),
    )  # fmt: skip
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            agent = Agent(client)
            with anyio.fail_after(60):
                message = await agent.fail("get_memory", path="n/bomb")
                listing = await agent.call("list_memories")
    assert "n/bomb" in message and "aliases expand" in message
    assert [m["path"] for m in listing["memories"]] == ["n/ok"]
    assert any("n/bomb" in reason for reason in listing["skipped"])


async def test_content_over_the_size_limit_is_refused_before_writing(
    agent: Agent, git_repo: Path
) -> None:
    message = await agent.fail(
        "add_memory", path="notes/big", content="x" * (MAX_FILE_BYTES + 1000)
    )
    assert "notes/big" in message and str(MAX_FILE_BYTES) in message
    assert not (project_store(git_repo) / "notes" / "big.md").exists()
    await agent.call("add_memory", path="notes/big", content="Small enough.")  # no "exists"


async def test_a_serena_reserved_heading_in_content_is_a_tool_error(
    agent: Agent, git_repo: Path
) -> None:
    serena = git_repo / ".serena" / "memories"
    serena.mkdir(parents=True)
    message = await agent.fail(
        "add_memory", path="n/own", content="Intro.\n\n## Metadata\n\nMine.", tags=["a"]
    )
    assert "## Metadata" in message and "n/own" in message
    assert not (serena / "n" / "own.md").exists()
    (serena / "fence.md").write_text("Body.\n\n## Citations\n\n```\n| File |\n|---|\n")
    before = snapshot(serena)
    message = await agent.fail("add_citation", path="fence", citation="src/app.py:3")
    assert "never closed" in message
    assert snapshot(serena) == before


@pytest.mark.parametrize(
    "name",
    ["~", "$HOME", "x" * 300, "../escape", "a/b", ".hidden", "with space", "nul\x00"],
)
async def test_a_store_name_an_agent_may_not_create_is_a_tool_error(
    agent: Agent, isolated_home: Path, name: str
) -> None:
    message = await agent.fail("add_memory", path="n/x", content="X.", store=name)
    assert "store name" in message
    assert repr(name)[1:40] in message
    assert not (isolated_home / "stores").exists()
    registry = isolated_home / REGISTRY_FILE
    assert not registry.exists() or name not in registry.read_text(encoding="utf-8")


async def test_a_valid_store_name_is_created_under_the_tool_home_on_first_write(
    agent: Agent, isolated_home: Path
) -> None:
    await agent.call("add_memory", path="n/x", content="X.", store="team-notes_2")
    assert (isolated_home / "stores" / "team-notes_2" / "n" / "x.md").is_file()
    message = await agent.fail("get_memory", path="n/x", store="never-created")
    assert "unknown store 'never-created'" in message
    assert not (isolated_home / "stores" / "never-created").exists()


async def test_stores_created_on_demand_are_bounded(agent: Agent, isolated_home: Path) -> None:
    from memory_enhancement.store.locations import MAX_CREATED_STORES, Registry

    registry = Registry(isolated_home)
    for n in range(MAX_CREATED_STORES):
        registry.add(f"s{n}", isolated_home / "stores" / f"s{n}")
    message = await agent.fail("add_memory", path="n/x", content="X.", store="one-more")
    assert "one-more" in message and str(MAX_CREATED_STORES) in message
    assert not (isolated_home / "stores" / "one-more").exists()


# -- serving over HTTP ---------------------------------------------------------------


class Served:
    """A `serve --transport streamable-http` child process, stopped on exit."""

    def __init__(self, home: Path, cwd: Path, store: Path, *args: str) -> None:
        self.port = free_port()
        self.command = serve_command(
            "--transport", "streamable-http", "--port", str(self.port), "--dir", str(store), *args
        )
        self.home, self.cwd = home, cwd
        self.log = cwd.parent / f"serve-{self.port}.log"

    async def __aenter__(self) -> Served:
        self.errors = self.log.open("w+b")
        self.process = await anyio.open_process(
            self.command, cwd=self.cwd, env=child_env(self.home),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.errors,
        )  # fmt: skip
        await wait_for(self._listening, 60, "the server's port")
        assert self.process.returncode is None, self.stderr()
        return self

    def _listening(self) -> bool:
        import socket

        if self.process.returncode is not None:
            return True
        host = self.command[self.command.index("--host") + 1] if "--host" in self.command else ""
        with socket.socket() as sock:
            sock.settimeout(0.2)
            return sock.connect_ex((host or "127.0.0.1", self.port)) == 0

    async def __aexit__(self, *exc: object) -> None:
        self.process.terminate()
        with anyio.fail_after(30):
            await self.process.wait()
        self.errors.close()

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def initialize(host_header: str | None = None, origin: str | None = None) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if host_header:
        headers["Host"] = host_header
    if origin:
        headers["Origin"] = origin
    return headers


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "forger", "version": "0"},
    },
}


async def test_serving_off_loopback_without_a_token_refuses_to_start(
    isolated_home: Path, git_repo: Path, tmp_path: Path
) -> None:
    for host in ("0.0.0.0", "192.0.2.10"):
        result = run_bounded(
            ["serve", "--transport", "streamable-http", "--host", host, "--port", "1",
             "--dir", tmp_path / "s"],
            home=isolated_home, cwd=git_repo, timeout=60,
        )  # fmt: skip
        assert result.returncode == 2
        assert f"refusing to serve on {host}:1 without a bearer token" in result.stderr
    short = run_bounded(
        ["serve", "--transport", "streamable-http", "--host", "0.0.0.0", "--auth-token", "short",
         "--dir", tmp_path / "s"],
        home=isolated_home, cwd=git_repo, timeout=60,
    )  # fmt: skip
    assert short.returncode == 2 and "5 characters" in short.stderr


async def test_forged_host_and_origin_headers_are_refused_on_any_address(
    isolated_home: Path, git_repo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s"
    async with Served(isolated_home, git_repo, store, "--host", "127.0.0.2") as served:
        url = f"http://127.0.0.2:{served.port}/mcp"
        async with httpx2.AsyncClient(timeout=30) as http:
            forged_host = await http.post(url, json=INIT, headers=initialize("evil.example"))
            forged_origin = await http.post(
                url, json=INIT, headers=initialize(origin="http://evil.example")
            )
            honest = await http.post(url, json=INIT, headers=initialize())
        assert forged_host.status_code == 421
        assert forged_origin.status_code == 403
        assert honest.status_code == 200
        async with Client(url) as client:  # an agent that names the server it talks to
            await Agent(client).call("add_memory", path="n/ok", content="Honest.")
    assert [p.name for p in (store / "n").iterdir()] == ["ok.md"]


async def test_a_bearer_token_is_required_when_given_and_the_sdk_client_can_send_it(
    isolated_home: Path, git_repo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s"
    async with Served(
        isolated_home, git_repo, store, "--host", "127.0.0.1", "--auth-token", TOKEN
    ) as served:
        url = f"http://127.0.0.1:{served.port}/mcp"
        async with httpx2.AsyncClient(timeout=30) as http:
            anonymous = await http.post(url, json=INIT, headers=initialize())
            wrong = await http.post(
                url, json=INIT, headers={**initialize(), "Authorization": "Bearer not-the-token"}
            )
        assert anonymous.status_code == 401
        assert wrong.status_code == 401
        authorized = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        async with authorized, Client(streamable_http_client(url, http_client=authorized)) as c:
            await Agent(c).call("add_memory", path="n/ok", content="With the token.")
    assert (store / "n" / "ok.md").is_file()
    assert TOKEN not in served.stderr()


async def test_serving_on_all_addresses_with_a_token_warns_on_start(
    isolated_home: Path, git_repo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s"
    async with Served(
        isolated_home, git_repo, store, "--host", "0.0.0.0", "--auth-token", TOKEN
    ) as served:
        url = f"http://127.0.0.1:{served.port}/mcp"
        async with httpx2.AsyncClient(timeout=30) as http:
            anonymous = await http.post(url, json=INIT, headers=initialize())
            forged = await http.post(
                url,
                json=INIT,
                headers={**initialize("evil.example"), "Authorization": f"Bearer {TOKEN}"},
            )
        assert anonymous.status_code == 401
        assert forged.status_code == 421
    log = served.stderr()
    assert "warning: serving MCP on 0.0.0.0" in log and "bearer token" in log
    assert TOKEN not in log
    assert not store.exists() or not list(store.rglob("*.md"))
