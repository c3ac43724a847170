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

import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import ToolAnnotations
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from memory_enhancement import __version__
from memory_enhancement.core.errors import MemoryToolError, NotFoundError
from memory_enhancement.core.verdicts import Verdict, VerifyOptions
from memory_enhancement.mcp.shapes import (
    ContextOut,
    GraphOut,
    HealthOut,
    HitOut,
    ListingOut,
    MemoryOut,
    PruneOut,
    ReinforceOut,
    RelatedOut,
    RemovedOut,
    SearchOut,
    VerificationOut,
    VerifySummaryOut,
)

if TYPE_CHECKING:
    from memory_enhancement.service import MemoryService

log = logging.getLogger("memory_enhancement.server")
PROCESS_SESSION = uuid.uuid4().hex[:12]
SKILL_FILE = Path(__file__).resolve().parent.parent / "SKILL.md"  # shipped in the package

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

Store = Annotated[
    str | None,
    Field(description="Store name (see `store list`); omitted: the server's default store."),
]
MemoryPath = Annotated[str, Field(description="Memory path, e.g. 'decisions/use-sqlite'.")]
MODE_HELP = (
    "auto (default): hybrid when semantic search is installed and its index is current, "
    "else lexical; or lexical (BM25), semantic, hybrid."
)

INSTRUCTIONS = """\
Memories about this codebase, with citations to the code they were learned from.
Before relying on a memory, check it: get_memory(verify=true) or verify_memory.
Fix moved citations with verify_memory(fix=true); update or remove stale ones.
When you save what you learned from code, cite file:line (the snippet is captured).
Quote [mem:ID] when you rely on a memory. Never store secrets.
The prompt `memory_skill` has the full guidance."""


class ServiceFactory(Protocol):
    def __call__(self, store: str | None, session: str, *, create: bool) -> MemoryService: ...


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


@contextmanager
def tool_errors() -> Iterator[None]:
    """Library errors become tool errors carrying their message."""
    try:
        yield
    except MemoryToolError as exc:
        raise ToolError(str(exc)) from None


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

    async def call_tool(self, *args: Any, **kwargs: Any) -> Any:
        self._ready()
        return await super().call_tool(*args, **kwargs)

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
    from memory_enhancement.graph.render import as_dict
    from memory_enhancement.service import serialize

    def service(ctx: Context, store: str | None, *, create: bool = False) -> MemoryService:
        return factory(store, session_of(ctx), create=create)

    @mcp.tool(annotations=WRITES)
    def add_memory(
        path: MemoryPath,
        content: Annotated[str, Field(description="The memory, in markdown.")],
        ctx: Context,
        tags: list[str] | None = None,
        expires_at: Annotated[str | None, Field(description="ISO 8601 date/time.")] = None,
        citations: Annotated[
            list[str] | None,
            Field(description="src/x.py:42, src/x.py:17-25 or a URL; snippets are captured."),
        ] = None,
        links: Annotated[
            list[str] | None, Field(description="Other memories: 'path' or 'type:path'.")
        ] = None,
        store: Store = None,
    ) -> MemoryOut:
        """Save a new memory (creating its store and category). Refuses an existing path."""
        with tool_errors():
            result = service(ctx, store, create=True).add(
                path, content, tags=tags or (), expires_at=expires_at,
                citations=citations or (), links=links or (), source="mcp",
            )  # fmt: skip
            return _written(result)

    @mcp.tool(annotations=READ_ONLY)
    def get_memory(
        path: MemoryPath,
        ctx: Context,
        include_expired: bool = False,
        verify: Annotated[bool, Field(description="Also verify its citations now.")] = False,
        store: Store = None,
    ) -> MemoryOut:
        """A memory's content and metadata (metadata.citations is always present)."""
        with tool_errors():
            svc = service(ctx, store)
            fetched = svc.get(path, include_expired=include_expired)
            data = serialize.memory_dict(fetched.memory, fetched.citation_id)
            if fetched.warnings:
                data["warnings"] = list(fetched.warnings)
            if verify:
                run = svc.verify(fetched.memory.path)
                data["verification"] = serialize.verification_dict(run.results[0])
            return cast(MemoryOut, data)

    @mcp.tool(annotations=WRITES)
    def update_memory(
        path: MemoryPath,
        ctx: Context,
        content: str | None = None,
        tags: Annotated[list[str] | None, Field(description="Replaces the tags.")] = None,
        expires_at: str | None = None,
        clear_expiry: bool = False,
        citations: Annotated[
            list[str] | None,
            Field(description="Replaces the citations; [] clears them; omitted keeps them."),
        ] = None,
        store: Store = None,
    ) -> MemoryOut:
        """Change a memory: what is given replaces, what is omitted is kept."""
        with tool_errors():
            result = service(ctx, store).update(
                path, content=content, tags=tags, expires_at=expires_at,
                clear_expiry=clear_expiry, citations=citations,
            )  # fmt: skip
            return _written(result)

    @mcp.tool(annotations=DESTRUCTIVE)
    def remove_memory(path: MemoryPath, ctx: Context, store: Store = None) -> RemovedOut:
        """Delete a memory."""
        with tool_errors():
            return {"path": service(ctx, store).remove(path), "removed": True}

    @mcp.tool(annotations=WRITES)
    def move_memory(
        from_path: MemoryPath,
        to_path: MemoryPath,
        ctx: Context,
        update_links: Annotated[
            bool, Field(description="Rewrite links the move would break (in other memories too).")
        ] = True,
        store: Store = None,
    ) -> MemoryOut:
        """Move a memory; its citations, links and citation ID go with it, and links to it
        are rewritten so they keep finding it."""
        with tool_errors():
            result = service(ctx, store).move(from_path, to_path, update_links=update_links)
            data = _written(result)
            data["links_updated"] = list(result.links_updated)
            return data

    @mcp.tool(annotations=READ_ONLY)
    def list_memories(
        ctx: Context,
        category: str | None = None,
        include_expired: bool = False,
        store: Store = None,
    ) -> ListingOut:
        """Memories under a category (all when omitted), expired ones hidden by default."""
        with tool_errors():
            listing = service(ctx, store).list_memories(category, include_expired=include_expired)
            return _listing(listing)

    @mcp.tool(annotations=READ_ONLY)
    def recent_memories(ctx: Context, limit: int = 10, store: Store = None) -> ListingOut:
        """The most recently updated memories, newest first."""
        with tool_errors():
            return _listing(service(ctx, store).recent(limit))

    @mcp.tool(annotations=DESTRUCTIVE)
    def prune_memories(ctx: Context, dry_run: bool = False, store: Store = None) -> PruneOut:
        """Remove expired memories (dry_run: only list them)."""
        with tool_errors():
            listing = service(ctx, store).prune(dry_run=dry_run)
            paths = [s.path for s in listing.memories]
            return {"dry_run": dry_run, "removed": paths, "skipped": listing.skipped}

    @mcp.tool(annotations=READ_ONLY)
    def search_memories(
        query: str,
        ctx: Context,
        limit: int = 10,
        mode: Annotated[str, Field(description=MODE_HELP)] = "auto",
        verify: bool = False,
        min_confidence: float | None = None,
        category: str | None = None,
        tag: str | None = None,
        store: Store = None,
    ) -> SearchOut:
        """Search memories; each hit carries its [mem:ID], path and a highlighted snippet."""
        with tool_errors():
            memories = service(ctx, store)
            chosen = memories.resolve_mode(mode)
            results = memories.search(
                query, limit=limit, mode=chosen, category=category, tag=tag, verify=verify,
                min_confidence=min_confidence,
            )  # fmt: skip
            return {"query": query, "mode": chosen.value, "hits": [_hit(r) for r in results]}

    @mcp.tool(annotations=READ_ONLY)
    def get_context(
        query: str,
        ctx: Context,
        limit: int = 5,
        max_tokens: int = 2000,
        verify: bool = False,
        mode: Annotated[str, Field(description=MODE_HELP)] = "auto",
        store: Store = None,
    ) -> ContextOut:
        """A markdown block of the memories answering a query, ready to put in a prompt."""
        with tool_errors():
            text, used = service(ctx, store).context(
                query, limit=limit, max_tokens=max_tokens, verify=verify, mode=mode
            )
            return {"context": text, "memories": [_hit(r) for r in used]}

    @mcp.tool(annotations=READ_ONLY)
    def resolve_citation(
        id: Annotated[str, Field(description="mem:a7Bc3x, [mem:a7Bc3x] or a7Bc3x.")],
        ctx: Context,
        store: Store = None,
    ) -> MemoryOut:
        """The memory a citation ID names."""
        with tool_errors():
            fetched = service(ctx, store).resolve(id)
            return cast(MemoryOut, serialize.memory_dict(fetched.memory, fetched.citation_id))

    @mcp.tool(annotations=WRITES)
    def verify_memory(
        path: MemoryPath,
        ctx: Context,
        fix: Annotated[
            bool, Field(description="Rewrite moved citations in place; capture missing snippets.")
        ] = False,
        store: Store = None,
    ) -> VerificationOut:
        """Are this memory's citations still true? valid, moved (and where), stale, missing."""
        with tool_errors():
            run = service(ctx, store).verify(path, VerifyOptions(fix=fix))
            data = serialize.verification_dict(run.results[0])
            for change in run.fixes:
                data["fix"] = {"diff": change.diff, "written": change.written}
            return cast(VerificationOut, data)

    @mcp.tool(annotations=READ_ONLY)
    def verify_memories(
        ctx: Context,
        changed_since: Annotated[
            str | None, Field(description="A git ref: only memories citing files changed since.")
        ] = None,
        category: str | None = None,
        store: Store = None,
    ) -> VerifySummaryOut:
        """Verify every memory with citations: a summary plus the invalid ones."""
        with tool_errors():
            run = service(ctx, store).verify_all(category, changed_since=changed_since)
            return {
                "memories": len(run.results),
                "citations": run.citations,
                "counts": {v.value: run.count(v) for v in Verdict},
                "valid": run.ok(),
                "invalid": [
                    cast(VerificationOut, serialize.verification_dict(r))
                    for r in run.results
                    if not r.valid
                ],
                "skipped": run.skipped,
            }

    @mcp.tool(annotations=WRITES)
    def add_citation(
        path: MemoryPath,
        citation: Annotated[str, Field(description="src/x.py:42, src/x.py:17-25 or a URL.")],
        ctx: Context,
        snippet: Annotated[
            str | None, Field(description="Text of the cited line(s); captured when omitted.")
        ] = None,
        store: Store = None,
    ) -> MemoryOut:
        """Add one citation to a memory."""
        with tool_errors():
            return _written(service(ctx, store).add_citation(path, citation, snippet=snippet))

    @mcp.tool(annotations=READ_ONLY)
    def traverse_graph(
        root: Annotated[str, Field(description="A memory path, [mem:ID] or unique name.")],
        ctx: Context,
        depth: int = 3,
        direction: Annotated[str, Field(description="out, in or both.")] = "out",
        algorithm: Annotated[str, Field(description="bfs or dfs.")] = "bfs",
        link_types: Annotated[
            list[str] | None,
            Field(description="Only follow links of these types (e.g. related, depends_on)."),
        ] = None,
        store: Store = None,
    ) -> GraphOut:
        """Follow the links between memories from root, up to depth."""
        with tool_errors():
            result = service(ctx, store).graph(
                root, depth=depth, direction=direction, algorithm=algorithm,
                types=link_types or (),
            )  # fmt: skip
            return cast(GraphOut, as_dict(result))

    @mcp.tool(annotations=READ_ONLY)
    def related_memories(path: MemoryPath, ctx: Context, store: Store = None) -> RelatedOut:
        """Memories that link to this one, each once (with every link it makes here)."""
        with tool_errors():
            svc = service(ctx, store)
            target = svc.find(path)
            return cast(RelatedOut, serialize.related_dict(target, svc.related(target)))

    @mcp.tool(annotations=READ_ONLY)
    def memory_health(
        ctx: Context,
        limit: Annotated[
            int, Field(description="At most this many memories, most urgent first (>= 1).")
        ] = 50,
        store: Store = None,
    ) -> HealthOut:
        """Verify every memory and rank them: stale and doubtful first, with a summary."""
        from memory_enhancement.health.render import as_json

        if limit < 1:
            raise ToolError(f"limit must be at least 1, not {limit}")
        with tool_errors():
            return cast(HealthOut, as_json(service(ctx, store).health(), limit))

    @mcp.tool(annotations=WRITES)
    def reinforce_memory(
        path: MemoryPath,
        ctx: Context,
        note: Annotated[str | None, Field(description="What you checked.")] = None,
        store: Store = None,
    ) -> ReinforceOut:
        """Confirm a memory you checked against the code (raises its confidence)."""
        with tool_errors():
            svc = service(ctx, store)
            target = svc.store.locate(path)
            citation_id, count = svc.reinforce(target, note)
            return {"path": target, "id": f"mem:{citation_id}", "reinforcements": count}

    @mcp.resource(
        "memory://{store}/{+path}",
        mime_type="text/markdown",
        description="A memory file as it is on disk; store is a store name or 'default'.",
    )
    def memory_resource(store: str, path: str) -> str:
        try:
            svc = factory(
                None if store == "default" else store, f"mcp:{PROCESS_SESSION}", create=False
            )
            located = svc.store.locate(path)
            data, _ = svc.store.read_bytes(located)
            return data.decode("utf-8", errors="replace")
        except NotFoundError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        except MemoryToolError as exc:
            raise ResourceNotFoundError(str(exc)) from None

    @mcp.prompt(title="How to use memories")
    def memory_skill() -> str:
        """The memory skill: how an agent should save, verify, cite and fix memories."""
        return SKILL_FILE.read_text(encoding="utf-8")


def _written(result: Any) -> MemoryOut:
    from memory_enhancement.service import serialize

    data = serialize.memory_dict(result.memory, result.citation_id)
    data["changed"] = result.changed
    if result.warnings:
        data["warnings"] = list(result.warnings)
    return cast(MemoryOut, data)


def _listing(listing: Any) -> ListingOut:
    from memory_enhancement.service import serialize

    memories = [serialize.summary_dict(s) for s in listing.memories]
    return cast(ListingOut, {"memories": memories, "skipped": listing.skipped})


def _hit(result: Any) -> HitOut:
    from memory_enhancement.service import serialize

    return cast(HitOut, serialize.hit_dict(result))
