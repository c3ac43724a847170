"""The MCP tools that answer from memories: search, context, citations, verification,
the graph, health and reinforcement; plus the `memory://` resource and the skill prompt.

Each parses its arguments, calls the service and returns what `--json` prints.
"""

from __future__ import annotations

from typing import Annotated, Any, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from pydantic import Field

from memory_enhancement.core.errors import MemoryToolError, NotFoundError
from memory_enhancement.mcp.shapes import (
    ContextOut,
    GraphOut,
    HealthOut,
    HitOut,
    MemoryOut,
    ReinforceOut,
    RelatedOut,
    SearchOut,
    VerificationOut,
    VerifySummaryOut,
    WrittenOut,
)
from memory_enhancement.mcp.tooling import (
    MODE_HELP,
    PROCESS_SESSION,
    READ_ONLY,
    SKILL_FILE,
    WRITES,
    MemoryRef,
    ServiceFactory,
    ServiceFor,
    Store,
    VerifyWrite,
    tool_errors,
    written,
)


def register(mcp: MCPServer, service: ServiceFor, factory: ServiceFactory) -> None:
    """Add the answering tools, the resource and the prompt to mcp; `service` makes a
    fresh service per call, `factory` one for a resource read (no MCP session there)."""
    from memory_enhancement.core.verdicts import VerifyOptions
    from memory_enhancement.mcp.answers import (
        hits_answer,
        memory_answer,
        short_snippets,
        with_cut,
    )
    from memory_enhancement.mcp.checks import HIT_CHECKS, MEMORY_CHECKS
    from memory_enhancement.service import serialize

    @mcp.tool(annotations=READ_ONLY)
    def search_memories(
        query: Annotated[
            str,
            Field(description="Words to look for (found inside Chinese, Japanese and Korean too)."),
        ],
        ctx: Context,
        limit: Annotated[int, Field(description="At most this many hits (>= 1).")] = 10,
        mode: Annotated[str, Field(description=MODE_HELP)] = "auto",
        verify: Annotated[bool, Field(description="Verify the hits' citations now.")] = False,
        min_confidence: Annotated[
            float | None,
            Field(
                description="0 to 1: drop hits whose confidence (memory_health's figure, "
                "history included: 0.70 for a memory verified valid now that nobody "
                "confirmed or used) is lower (implies verify); hits without citations are "
                "dropped too."
            ),
        ] = None,
        min_holding: Annotated[
            float | None,
            Field(
                description="0 to 1: drop hits whose share of citations that hold now "
                "(valid or moved) is lower (implies verify; 1: every citation holds); hits "
                "without citations are dropped too."
            ),
        ] = None,
        category: Annotated[
            str | None, Field(description="Only memories under this category (and below).")
        ] = None,
        tag: Annotated[str | None, Field(description="Only memories with this tag.")] = None,
        include_expired: Annotated[
            bool, Field(description="Also search expired memories (as list_memories can).")
        ] = False,
        store: Store = None,
    ) -> SearchOut:
        """Search memories; each hit carries its [mem:ID], path and a highlighted snippet."""
        with tool_errors():
            memories = service(ctx, store)
            chosen = memories.resolve_mode(mode)
            results = memories.search(
                query, limit=limit, mode=chosen, category=category, tag=tag, verify=verify,
                min_confidence=min_confidence, min_holding=min_holding,
                include_expired=include_expired,
            )  # fmt: skip
            answer: SearchOut = {
                "query": query, "mode": chosen.value, "hits": [_hit(r) for r in results]
            }  # fmt: skip
            cut = hits_answer(cast(list[dict[str, Any]], answer["hits"]))
            if cut:
                answer["cut"] = cut
            return answer

    @mcp.tool(annotations=READ_ONLY)
    def get_context(
        query: Annotated[str, Field(description="Words to look for, as search_memories.")],
        ctx: Context,
        limit: Annotated[int, Field(description="At most this many memories.")] = 5,
        max_tokens: Annotated[
            int,
            Field(
                description="Token budget of the block (characters / 4; a Chinese, "
                "Japanese or Korean character counts as one)."
            ),
        ] = 2000,
        verify: Annotated[
            bool, Field(description="Verify citations; flag stale memories.")
        ] = False,
        mode: Annotated[str, Field(description=MODE_HELP)] = "auto",
        store: Store = None,
    ) -> ContextOut:
        """A markdown block of the memories answering a query, ready to put in a prompt."""
        with tool_errors():
            text, used = service(ctx, store).context(
                query, limit=limit, max_tokens=max_tokens, verify=verify, mode=mode
            )
            context: ContextOut = {"context": text, "memories": [_hit(r) for r in used]}
            cut = hits_answer(cast(list[dict[str, Any]], context["memories"]))
            if cut:
                context["cut"] = cut
            return context

    @mcp.tool(annotations=READ_ONLY)
    def resolve_citation(
        id: Annotated[str, Field(description="mem:a7Bc3x, [mem:a7Bc3x] or a7Bc3x.")],
        ctx: Context,
        store: Store = None,
    ) -> MemoryOut:
        """The memory a citation ID names (a memory's path or name works too)."""
        with tool_errors():
            fetched = service(ctx, store).resolve(id)
            data = serialize.memory_dict(fetched.memory, fetched.citation_id, fetched.linked)
            return cast(MemoryOut, memory_answer(data))

    @mcp.tool(annotations=WRITES)
    def verify_memory(
        path: MemoryRef,
        ctx: Context,
        fix: Annotated[
            bool, Field(description="Rewrite moved citations in place; capture missing snippets.")
        ] = False,
        limit: Annotated[
            int,
            Field(
                description="List at most this many of its citations and mentions, those "
                "that failed or moved first (>= 1); `left_out` counts the others by status."
            ),
        ] = MEMORY_CHECKS,
        offset: Annotated[
            int, Field(description="Skip this many first: the next page is offset+limit.")
        ] = 0,
        store: Store = None,
    ) -> VerificationOut:
        """Are this memory's citations and prose mentions still true? valid, moved (and
        where), stale, missing; a page of them, failed and moved first (long snippets cut
        short: `cut` says what was left out)."""
        from memory_enhancement.mcp.answers import check_page, checks_page

        check_page(limit, offset)
        with tool_errors():
            run = service(ctx, store).verify(path, VerifyOptions(fix=fix))
            entry = serialize.run_verifications(run)[0]
            then = "offset={offset} for the next"
            note = checks_page(entry, limit=limit, offset=offset, then=then)
            return cast(VerificationOut, short_snippets(with_cut(entry, [note])))

    @mcp.tool(annotations=READ_ONLY)
    def verify_memories(
        ctx: Context,
        changed_since: Annotated[
            str | None,
            Field(description="A git ref: only memories citing or mentioning files changed since."),
        ] = None,
        category: Annotated[
            str | None, Field(description="Only memories under this category (and below).")
        ] = None,
        limit: Annotated[
            int,
            Field(description="List at most this many invalid memories, worst first (>= 1)."),
        ] = 10,
        checks: Annotated[
            int,
            Field(
                description="List at most this many citations and mentions of each, those "
                "that failed or moved first (>= 1); `left_out` counts its others by status."
            ),
        ] = HIT_CHECKS,
        offset: Annotated[
            int,
            Field(description="Skip this many invalid memories: the next page is offset+limit."),
        ] = 0,
        include_valid: Annotated[
            bool,
            Field(
                description="Also list each invalid memory's citations and mentions that hold "
                "or were not judged: skipped, ambiguous, in_submodule, unchecked (left out by "
                "default; `counts` and `mention_counts` count them)."
            ),
        ] = False,
        store: Store = None,
    ) -> VerifySummaryOut:
        """Verify every memory with citations or prose mentions (`src/x.py:42` in the
        text): counts for each, whether all hold, and a page of the invalid memories
        (`invalid_total` counts them all; `cut` says what was left out)."""
        from memory_enhancement.mcp.answers import check_page, verify_summary

        check_page(limit, offset)
        check_page(checks, name="checks")
        with tool_errors():
            run = service(ctx, store).verify_all(category, changed_since=changed_since)
            summary = verify_summary(
                run, limit=limit, offset=offset, include_valid=include_valid, checks=checks
            )
            return cast(VerifySummaryOut, summary)

    @mcp.tool(annotations=WRITES)
    def add_citation(
        path: MemoryRef,
        citation: Annotated[str, Field(description="src/x.py:42, src/x.py:17-25 or a URL.")],
        ctx: Context,
        snippet: Annotated[
            str | None, Field(description="Text of the cited line(s); captured when omitted.")
        ] = None,
        verify: VerifyWrite = False,
        store: Store = None,
    ) -> WrittenOut:
        """Add one citation to a memory; the answer lists it with its captured snippet (or
        a warning saying what is wrong with it)."""
        with tool_errors():
            svc = service(ctx, store)
            result = svc.add_citation(path, citation, snippet=snippet)
            return written(result, store, verify=svc if verify else None)

    @mcp.tool(annotations=READ_ONLY)
    def traverse_graph(
        root: MemoryRef,
        ctx: Context,
        depth: Annotated[int, Field(description="How many links away to go (>= 0).")] = 3,
        direction: Annotated[str, Field(description="out, in or both.")] = "out",
        algorithm: Annotated[str, Field(description="bfs or dfs.")] = "bfs",
        link_types: Annotated[
            list[str] | None,
            Field(description="Only follow links of these types (e.g. related, depends_on)."),
        ] = None,
        limit: Annotated[
            int,
            Field(
                description="List at most this many memories, the nearest first, and the links "
                "among them (>= 1); `visited_count` counts all."
            ),
        ] = 25,
        store: Store = None,
    ) -> GraphOut:
        """Follow the links between memories from root, up to depth."""
        from memory_enhancement.mcp.answers import check_page, graph_answer

        check_page(limit)
        with tool_errors():
            result = service(ctx, store).graph(
                root, depth=depth, direction=direction, algorithm=algorithm,
                types=link_types or (),
            )  # fmt: skip
            return cast(GraphOut, graph_answer(result, limit=limit))

    @mcp.tool(annotations=READ_ONLY)
    def related_memories(path: MemoryRef, ctx: Context, store: Store = None) -> RelatedOut:
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
        ] = 10,
        offset: Annotated[
            int, Field(description="Skip this many first: the next page is offset+limit.")
        ] = 0,
        history_days: Annotated[
            int, Field(description="Days of verdict history to include, newest last (>= 0).")
        ] = 7,
        include_graph: Annotated[
            bool,
            Field(description="Also the link graph around the worst memories (nodes, edges)."),
        ] = False,
        store: Store = None,
    ) -> HealthOut:
        """Verify every memory and rank them: a summary of all, then a page of memories,
        stale and doubtful first (`cut` says what was left out)."""
        from memory_enhancement.mcp.answers import check_health, health_answer

        check_health(limit, offset, history_days)
        with tool_errors():
            report = service(ctx, store).health()
            answer = health_answer(
                report, limit=limit, offset=offset, include_graph=include_graph,
                history_days=history_days,
            )  # fmt: skip
            return cast(HealthOut, answer)

    @mcp.tool(annotations=WRITES)
    def reinforce_memory(
        path: MemoryRef,
        ctx: Context,
        note: Annotated[str | None, Field(description="What you checked.")] = None,
        store: Store = None,
    ) -> ReinforceOut:
        """Confirm a memory you checked against the code (raises its confidence)."""
        with tool_errors():
            svc = service(ctx, store)
            target = svc.find(path)
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


def _hit(result: Any) -> HitOut:
    from memory_enhancement.service import serialize

    return cast(HitOut, serialize.hit_dict(result))
