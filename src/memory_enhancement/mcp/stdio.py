"""Serving over stdio so that every request read gets its answer, even at end of input.

A client (or a script: `printf '...' | memory-enhancement serve`) may write a
`tools/call` and close its end of the pipe at once. The SDK's stdio loop stops
at end of input and cancels what is still running, so that call was never
answered. Here the read side reports end of input only once every request it
handed over has been answered (or `DRAIN_SECONDS` have passed), by watching
the responses go out on the write side.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

DRAIN_SECONDS = 60.0  # the longest a call still running at end of input is waited for


class _Pending:
    """Request IDs read and not yet answered; an event set whenever none is left."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self.idle = anyio.Event()
        self.idle.set()

    def opened(self, message: object) -> None:
        if isinstance(message, SessionMessage) and isinstance(message.message, JSONRPCRequest):
            self.ids.add(message.message.id)
            if self.idle.is_set():
                self.idle = anyio.Event()

    def answered(self, message: SessionMessage) -> None:
        if isinstance(message.message, JSONRPCResponse | JSONRPCError):
            self.ids.discard(message.message.id)
            if not self.ids:
                self.idle.set()


class _Wrapped:
    """A stream wrapping the transport's own: closing it (directly or by leaving its
    `async with`) closes the inner one."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class _DrainingReader(_Wrapped):
    """The transport's read stream, whose end waits for the pending answers."""

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            with anyio.move_on_after(DRAIN_SECONDS):
                await self._pending.idle.wait()
            raise
        self._pending.opened(item)
        return item

    def __aiter__(self) -> _DrainingReader:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None


class _WatchedWriter(_Wrapped):
    """The transport's write stream, telling the pending set what was answered."""

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        self._pending.answered(item)


async def serve_stdio(server: MCPServer) -> None:
    """What `MCPServer.run("stdio")` does, with the read side draining at end of input."""
    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async goes through it too
    async with stdio_server() as (read_stream, write_stream):
        pending = _Pending()
        await lowlevel.run(
            _DrainingReader(read_stream, pending),
            _WatchedWriter(write_stream, pending),
            lowlevel.create_initialization_options(),
        )


def run_stdio(server: MCPServer) -> None:
    anyio.run(serve_stdio, server)
