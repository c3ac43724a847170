"""Helpers of the MCP tests: an agent's view of the server, and the server as a process.

`Agent` wraps the SDK's `Client`: `call` asserts a success whose structured
result matches the tool's output schema (and whose text is that same JSON),
`fail` asserts a tool error (never a success that says "error") and returns its
message. `serve_params`/`serve_command` start `memory-enhancement serve` the way
an agent's MCP configuration would.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import jsonschema
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent, Tool

from conftest import GIT_ENV, git

CONSOLE_SCRIPT = Path(sys.executable).with_name("memory-enhancement")


def check_output(tool: Tool, data: Any) -> None:
    """data is valid against the tool's output schema and carries no undeclared key."""
    schema = tool.output_schema
    assert schema is not None, f"{tool.name} has no output schema"
    jsonschema.validate(data, schema)
    assert isinstance(data, dict)
    undeclared = set(data) - set(schema.get("properties", {}))
    assert not undeclared, f"{tool.name} returned undeclared keys {undeclared}"


def text_of(result: CallToolResult) -> str:
    parts = [c.text for c in result.content if isinstance(c, TextContent)]
    assert parts, f"no text content in {result!r}"
    return "\n".join(parts)


class Agent:
    """An MCP client as an agent uses it, with the checks every call deserves."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._tools: dict[str, Tool] | None = None

    async def tools(self) -> dict[str, Tool]:
        if self._tools is None:
            listed = await self.client.list_tools()
            self._tools = {t.name: t for t in listed.tools}
        return self._tools

    async def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        """A successful call's structured result, checked against the output schema."""
        result = await self.client.call_tool(name, arguments)
        assert not result.is_error, f"{name}({arguments}) failed: {text_of(result)}"
        data = result.structured_content
        assert isinstance(data, dict), f"{name} returned no structured content"
        assert "error" not in data, f"{name} returned a success that says error: {data}"
        check_output((await self.tools())[name], data)
        assert json.loads(text_of(result)) == data  # the text is the same result
        return data

    async def fail(self, name: str, **arguments: Any) -> str:
        """A failed call's message (without the SDK's 'Error executing tool NAME: ')."""
        result = await self.client.call_tool(name, arguments)
        assert result.is_error, f"{name}({arguments}) succeeded: {result.structured_content}"
        assert result.structured_content is None
        text = text_of(result)
        prefix = f"Error executing tool {name}: "
        assert text.startswith(prefix), text  # a message, not the SDK's bare crash report
        return text.removeprefix(prefix)


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a server or CLI child: an isolated tool home, quiet git."""
    env = {**os.environ, **GIT_ENV, "MEMORY_ENHANCEMENT_HOME": str(home), **extra}
    env.pop("MEMORY_ENHANCEMENT_SESSION", None)
    return env


def serve_command(*args: str) -> list[str]:
    """The installed console script, as an agent's MCP configuration names it."""
    assert CONSOLE_SCRIPT.exists(), f"{CONSOLE_SCRIPT} is not installed"
    return [str(CONSOLE_SCRIPT), "serve", *args]


def serve_params(home: Path, cwd: Path, args: Sequence[str] = ()) -> StdioServerParameters:
    command = serve_command(*args)
    return StdioServerParameters(
        command=command[0], args=command[1:], env=child_env(home), cwd=str(cwd)
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await anyio.sleep(0.05)


def commit_then_bump_the_version(git_repo: Path, memories: str = ".memories") -> None:
    """Commit the memories, then change what src/app.py:3 says (`'v2'` to `'v3'`)."""
    git(git_repo, "add", memories)
    git(git_repo, "commit", "-qm", "memories")
    source = git_repo / "src" / "app.py"
    source.write_text(source.read_text().replace("'v2'", "'v3'"))
    git(git_repo, "commit", "-qam", "v3")
