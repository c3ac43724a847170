"""The MCP server: every memory operation as a tool for agents (seed 003).

Tools are thin, like the CLI commands: parse, call the service, return the same
dictionaries `--json` prints. Each call builds a fresh service (so cited files
and git history are read as they are now, not as they were when the server
started) and records usage under the MCP session. Library errors become tool
errors whose message names the bad value; a failure is never returned as a
successful result. Plain `def` tools run in worker threads, which is safe: the
index and state databases open one connection per call. The embedding model, once
loaded, stays loaded for the life of the process (`index.embedder.embedder`), and so
do the vectors until they change, so only the first semantic search pays for them.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from memory_enhancement import __version__
from memory_enhancement.core.errors import shown
from memory_enhancement.mcp.tooling import PROCESS_SESSION, ServiceFactory

if TYPE_CHECKING:
    from memory_enhancement.service import MemoryService

log = logging.getLogger("memory_enhancement.server")

INSTRUCTIONS = """\
Memories about this codebase, with citations to the code they were learned from.
Before relying on a memory, check it: get_memory(verify=true) or verify_memory.
Fix moved citations with verify_memory(fix=true); update or remove stale ones.
When you save what you learned from code, cite file:line (the snippet is captured).
Quote [mem:ID] when you rely on a memory. Never store secrets.
The prompt `memory_skill` has the full guidance."""


def session_of(ctx: Context) -> str:
    """The MCP session: the HTTP session header, else the connection, else this process.

    One stdio process serves one client, so the process is the session there.
    """
    header = (ctx.headers or {}).get("mcp-session-id")
    if header:
        return f"mcp:{header}"
    connection = getattr(ctx.session, "_connection", None)
    if connection is not None and ctx.request_context.protocol_version not in (
        MODERN_PROTOCOL_VERSIONS
    ):
        key = connection.state.setdefault("memory_session", uuid.uuid4().hex[:12])
        return f"mcp:{key}"
    return f"mcp:{PROCESS_SESSION}"


class DeferredServer(MCPServer):
    """An MCP server that registers its tools, resources and prompts on the first request
    that lists or uses one.

    The `initialize` answer needs none of them (capabilities come from the request
    handlers, which exist from the start), and building the tools' schemas was most
    of what our own code cost before a client got that answer.
    """

    def __init__(self, register: Callable[[MCPServer], None], *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._pending: Callable[[MCPServer], None] | None = register

    def _ready(self) -> None:
        register, self._pending = self._pending, None
        if register is not None:
            register(self)

    async def list_tools(self) -> Any:
        self._ready()
        return await super().list_tools()

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        self._ready()
        return super()._tool_input_schema(name)

    async def call_tool(self, name: str, arguments: dict[str, Any], *args: Any) -> Any:
        self._ready()
        _refuse_unknown_arguments(name, arguments, self._tool_input_schema(name))
        try:
            return _compact(await super().call_tool(name, arguments, *args))
        except ToolError as exc:
            raise _plain_validation_error(name, exc) from exc.__cause__

    async def list_resources(self) -> Any:
        self._ready()
        return await super().list_resources()

    async def list_resource_templates(self) -> Any:
        self._ready()
        return await super().list_resource_templates()

    async def read_resource(self, *args: Any, **kwargs: Any) -> Any:
        self._ready()
        return await super().read_resource(*args, **kwargs)

    async def list_prompts(self) -> Any:
        self._ready()
        return await super().list_prompts()

    async def get_prompt(self, *args: Any, **kwargs: Any) -> Any:
        self._ready()
        return await super().get_prompt(*args, **kwargs)


def _compact(result: Any) -> Any:
    """A result whose text is its structured content as compact JSON. Most clients hand the
    model the text, and the SDK indents it by two spaces: on a real store of a thousand
    memories verify_memories was 91,098 characters of text for 62,416 of JSON."""
    from mcp.types import CallToolResult, TextContent

    if not isinstance(result, CallToolResult) or result.structured_content is None:
        return result
    if len(result.content) != 1 or not isinstance(result.content[0], TextContent):
        return result
    text = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    return result.model_copy(update={"content": [TextContent(type="text", text=text)]})


def _refuse_unknown_arguments(
    name: str, arguments: dict[str, Any], schema: dict[str, Any] | None
) -> None:
    """An argument the tool does not take is an error naming it, not silently dropped:
    a misspelled `categroy` would otherwise verify the whole store, a `limt` return the
    default count, and the agent would never learn why. (An unknown tool is the SDK's
    error, so it is left to it.)"""
    if schema is None:
        return
    known = schema.get("properties", {})
    unknown = sorted(key for key in arguments if key not in known)
    if unknown:
        raise ToolError(
            f"Error executing tool {name}: unknown argument{'s' * (len(unknown) > 1)} "
            f"{', '.join(map(repr, unknown))} (it takes: {', '.join(known)})"
        )


def _plain_validation_error(name: str, exc: ToolError) -> ToolError:
    """A wrongly typed or missing argument, said in one line per argument naming it and
    the value given; the SDK's text is pydantic's report (`1 validation error for
    search_memoriesArguments`, a URL per error), tokens an agent pays for nothing. The
    value is cut (`core.errors.shown`): a megabyte sent was a megabyte said back.
    Any other error is returned as it is."""
    from pydantic import ValidationError

    cause = exc.__cause__
    if not isinstance(cause, ValidationError):
        return exc
    said = []
    for error in cause.errors():
        head, *rest = error["loc"]
        where = f"{head}" + "".join(f"[{part!r}]" for part in rest)
        if error["type"] == "missing":
            said.append(f"missing argument {where!r}")
        else:
            said.append(f"invalid {where} {shown(error.get('input'))}: {error['msg']}")
    return ToolError(f"Error executing tool {name}: {'; '.join(said)}")


def build_server(factory: ServiceFactory, *, auth_token: str | None = None) -> MCPServer:
    """The server, with tools calling services made by factory (one per call).

    With `auth_token`, every HTTP request must carry `Authorization: Bearer TOKEN`
    (see mcp/http.py); stdio has no use for it.
    """
    secured: dict[str, Any] = {}
    if auth_token is not None:
        from memory_enhancement.mcp.http import StaticTokenVerifier, auth_settings

        secured = {"token_verifier": StaticTokenVerifier(auth_token), "auth": auth_settings()}
    return DeferredServer(
        lambda server: _register(server, factory),
        "memory-enhancement",
        title="memory-enhancement",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        **secured,
    )


def _register(mcp: MCPServer, factory: ServiceFactory) -> None:
    """Every tool, resource and prompt (see DeferredServer: done on first use)."""
    from memory_enhancement.mcp import knowledge_tools, memory_tools

    def service(ctx: Context, store: str | None, *, create: bool = False) -> MemoryService:
        return factory(store, session_of(ctx), create=create)

    memory_tools.register(mcp, service)
    knowledge_tools.register(mcp, service, factory)
