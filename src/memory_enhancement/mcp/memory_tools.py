"""The MCP tools that keep memories: add, get, update, remove, move, list, recent, prune.

Each parses its arguments, calls the service and returns what `--json` prints.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from memory_enhancement.mcp.shapes import (
    ListingOut,
    MemoryOut,
    PruneOut,
    RemovedOut,
    WrittenOut,
)
from memory_enhancement.mcp.tooling import (
    DESTRUCTIVE,
    READ_ONLY,
    WRITES,
    MemoryPath,
    MemoryRef,
    ServiceFor,
    Store,
    VerifyWrite,
    tool_errors,
    written,
)


def register(mcp: MCPServer, service: ServiceFor) -> None:
    """Add the memory tools to mcp; `service` makes a fresh service per call."""
    from memory_enhancement.mcp.answers import checks_page, memory_answer, page_note
    from memory_enhancement.mcp.checks import MEMORY_CHECKS
    from memory_enhancement.service import serialize

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
        description: Annotated[
            str | None,
            Field(description="Claude Code memory folder: one line (default: the first)."),
        ] = None,
        memory_type: Annotated[
            Literal["user", "feedback", "project", "reference"] | None,
            Field(description="Claude Code memory folder (default: the name's, else project)."),
        ] = None,
        verify: VerifyWrite = False,
        store: Store = None,
    ) -> WrittenOut:
        """Save a new memory (creating its store and category). Refuses an existing path. A
        path is category/slug; a bare name in a store that keeps all its memories at its top
        (.serena/memories, a Claude Code memory folder). In a Claude Code memory folder it
        declares name, description and type as the folder's memories do, and is listed in
        MEMORY.md (links_updated says so)."""
        with tool_errors():
            svc = service(ctx, store, create=True)
            result = svc.add(
                path, content, tags=tags or (), expires_at=expires_at,
                citations=citations or (), links=links or (), source="mcp",
                description=description, memory_type=memory_type,
            )  # fmt: skip
            data = written(result, store, new=True, verify=svc if verify else None)
            if result.links_updated:
                data["links_updated"] = list(result.links_updated)
            return data

    @mcp.tool(annotations=READ_ONLY)
    def get_memory(
        path: MemoryRef,
        ctx: Context,
        include_expired: bool = False,
        verify: Annotated[bool, Field(description="Also verify its citations now.")] = False,
        store: Store = None,
    ) -> MemoryOut:
        """A memory's content and metadata (metadata.citations is always present), by its
        path, its citation ID or a name only one memory has (as the CLI's `get`); long
        snippets are cut short, links past the first 25 and, with verify, checks past the
        first 10 left out (`cut` says so). Each link's `status` says what it finds now:
        `resolved` (to the memory `resolved` names), `dangling`, `ambiguous`, `external`,
        `repository` (a file there) or `missing`: follow only what resolves."""
        with tool_errors():
            svc = service(ctx, store)
            fetched = svc.get(svc.find(path), include_expired=include_expired)
            data = serialize.memory_dict(fetched.memory, fetched.citation_id, fetched.linked)
            if fetched.warnings:
                data["warnings"] = list(fetched.warnings)
            if verify:
                run = svc.verify(fetched.memory.path)
                checked = serialize.verification_dict(run.results[0])
                data["verification"] = checked
                then = f"verify_memory(path={fetched.memory.path!r}, offset={{offset}}) for more"
                data["cut"] = checks_page(checked, limit=MEMORY_CHECKS, offset=0, then=then)
            return cast(MemoryOut, memory_answer(data))

    @mcp.tool(annotations=WRITES)
    def update_memory(
        path: MemoryRef,
        ctx: Context,
        content: str | None = None,
        tags: Annotated[list[str] | None, Field(description="Replaces the tags.")] = None,
        expires_at: str | None = None,
        clear_expiry: bool = False,
        citations: Annotated[
            list[str] | None,
            Field(description="Replaces the citations; [] clears them; omitted keeps them."),
        ] = None,
        links: Annotated[
            list[str] | None,
            Field(description="Links to add: 'path' or 'type:path' (existing links stay)."),
        ] = None,
        old_text: Annotated[
            str | None,
            Field(
                description="Instead of content: text the content holds once, replaced by "
                "new_text (a moved path, a line that changed), the rest kept as it is."
            ),
        ] = None,
        new_text: Annotated[str | None, Field(description="What replaces old_text.")] = None,
        verify: VerifyWrite = False,
        store: Store = None,
    ) -> WrittenOut:
        """Change a memory: what is given replaces (links are added), what is omitted is
        kept. To fix one mention, give old_text and new_text rather than the whole content."""
        if (old_text is None) != (new_text is None):
            raise ToolError("give old_text and new_text together")
        edit = None if old_text is None or new_text is None else (old_text, new_text)
        with tool_errors():
            svc = service(ctx, store)
            result = svc.update(
                path, content=content, tags=tags, expires_at=expires_at,
                clear_expiry=clear_expiry, citations=citations, links=links or (), edit=edit,
            )  # fmt: skip
            return written(result, store, verify=svc if verify else None)

    @mcp.tool(annotations=DESTRUCTIVE)
    def remove_memory(
        path: Annotated[
            str, Field(description="The memory's path or its [mem:ID] (a name is refused).")
        ],
        ctx: Context,
        store: Store = None,
    ) -> RemovedOut:
        """Delete a memory (in a Claude Code memory folder, its line in MEMORY.md too).
        `linked_from`: the memories whose links to it then find no memory."""
        with tool_errors():
            removed = service(ctx, store).remove(path)
            data: RemovedOut = {
                "path": removed.path, "removed": True, "linked_from": [*removed.linked_from]
            }  # fmt: skip
            if removed.links_updated:
                data["links_updated"] = list(removed.links_updated)
            return data

    @mcp.tool(annotations=WRITES)
    def move_memory(
        from_path: MemoryRef,
        to_path: MemoryPath,
        ctx: Context,
        update_links: Annotated[
            bool, Field(description="Rewrite links the move would break (in other memories too).")
        ] = True,
        store: Store = None,
    ) -> WrittenOut:
        """Move a memory; its citations, links and citation ID go with it, and links to it
        are rewritten so they keep finding it."""
        with tool_errors():
            result = service(ctx, store).move(from_path, to_path, update_links=update_links)
            data = written(result, store)
            if result.moved_from != result.path:
                data["moved_from"] = result.moved_from
            data["links_updated"] = list(result.links_updated)
            return data

    @mcp.tool(annotations=READ_ONLY)
    def list_memories(
        ctx: Context,
        category: str | None = None,
        include_expired: bool = False,
        limit: Annotated[int, Field(description="At most this many, by path (>= 1).")] = 50,
        offset: Annotated[
            int, Field(description="Skip this many first: the next page is offset+limit.")
        ] = 0,
        tag: Annotated[str | None, Field(description="Only memories with this tag.")] = None,
        store: Store = None,
    ) -> ListingOut:
        """Memories under a category (all when omitted), expired ones hidden by default,
        a page at a time: `total` says how many there are."""
        # Paged by default: a bare list of rjmurillo/ai-agents' 1,026 memories ran to
        # 356,467 characters, more than an agent can read.
        with tool_errors():
            listing = service(ctx, store).list_memories(
                category, include_expired=include_expired, limit=limit, tag=tag, offset=offset
            )
            data = _listing(listing)
            data["total"] = listing.total if listing.total is not None else len(data["memories"])
            cut = page_note("memories", offset, len(data["memories"]), data["total"], "by path")
            if cut:  # (a typed answer: with_cut takes the untyped dicts of answers.py)
                data["cut"] = cut
            return data

    @mcp.tool(annotations=READ_ONLY)
    def recent_memories(
        ctx: Context, limit: int = 10, include_expired: bool = False, store: Store = None
    ) -> ListingOut:
        """The most recently updated memories, newest first (an undated one, as Serena's
        are, by its last commit when git has it as committed, else by its file's time)."""
        with tool_errors():
            return _listing(service(ctx, store).recent(limit, include_expired=include_expired))

    @mcp.tool(annotations=DESTRUCTIVE)
    def prune_memories(ctx: Context, dry_run: bool = False, store: Store = None) -> PruneOut:
        """Remove expired memories (dry_run: only list them, under `would_remove`)."""
        with tool_errors():
            listing = service(ctx, store).prune(dry_run=dry_run)
            paths = [s.path for s in listing.memories]
            # As `prune --json` says it: a dry run removed nothing, whatever it lists.
            return {
                "dry_run": dry_run,
                "removed": [] if dry_run else paths,
                "would_remove": paths if dry_run else [],
                "skipped": listing.skipped,
            }


def _listing(listing: Any) -> ListingOut:
    """The listing as `list --json` prints it, each memory without its empty fields."""
    from memory_enhancement.mcp.answers import listed
    from memory_enhancement.service import serialize

    memories = [listed(serialize.summary_dict(s)) for s in listing.memories]
    return cast(ListingOut, {"memories": memories, "skipped": listing.skipped})
