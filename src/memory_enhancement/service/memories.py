"""Reading and writing memories: the operations every other kind builds on.

Rules such as "citations given replace the list, an empty list clears it,
omitted keeps it" live here once. Methods return values and raise
MemoryToolError subclasses; they never print.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from memory_enhancement.core.errors import (
    ExpiredError,
    InvalidInputError,
    MemoryToolError,
    NotFoundError,
    shown,
)
from memory_enhancement.core.ids import format_citation_id
from memory_enhancement.core.memory_paths import normalize_new_path
from memory_enhancement.core.model import MAX_COUNT, Link, Memory, MemoryMeta
from memory_enhancement.core.timestamps import format_timestamp, maybe_timestamp
from memory_enhancement.index import queries
from memory_enhancement.index.rows import SyncStats
from memory_enhancement.service.base import ServiceBase
from memory_enhancement.service.inputs import (
    CitationInput,
    clean_content,
    clean_tags,
    parse_citations,
    parse_links,
)
from memory_enhancement.service.results import Fetched, Listing, Removed, Summary, WriteResult
from memory_enhancement.store import names

if TYPE_CHECKING:
    from memory_enhancement.store.formats.base import Decoded


class Memories(ServiceBase):
    """Create, read, change, move and remove memories; list them; find one."""

    # -- reading ----------------------------------------------------------------

    def takes_bare_names(self, chosen: str | None = None) -> bool:
        """Whether a new memory (`chosen` format) may be a bare name: Serena's; a flat store's."""
        if (chosen or self.store.default_format()) == "serena":
            return True
        with self.index.connect() as conn:
            return queries.flat(conn)

    def get(
        self, path: str, *, include_expired: bool = False, action: str | None = "get"
    ) -> Fetched:
        """A memory's content and metadata; records the use (seed 002 §5) unless action=None."""
        # Lenient: a memory whose header does not parse is shown as text (a warning says why).
        loaded = self.store.read(self.store.locate(path), links=False, lenient=True)
        memory = loaded.doc.memory
        expires = memory.meta.expires_at
        if not include_expired and expires is not None and memory.meta.is_expired(self.clock()):
            raise ExpiredError(
                f"memory {memory.path!r} expired at {format_timestamp(expires)} "
                "(--include-expired, or include_expired over MCP, reads it anyway)"
            )
        citation_id = self.index.citation_id(memory.path, loaded)
        linked = self.index.linked(memory.path)
        between = tuple(link for link, found in linked if not found.status.to_file)
        memory = replace(memory, links=between)
        if action:
            self._record_use([(citation_id, memory.path)], action, None)
        return Fetched(memory, tuple(loaded.doc.problems), citation_id, linked)

    def list_memories(
        self,
        category: str | None = None,
        *,
        include_expired: bool = False,
        limit: int | None = None,
        tag: str | None = None,
        offset: int = 0,
    ) -> Listing:
        """Memories by path; with a limit, only the first ones after `offset` (expired ones
        left out in SQL, so the limit counts what is shown) and the `total` there are to
        page through; with a tag, only those it tags."""
        if limit is not None and limit < 1:
            raise InvalidInputError(f"invalid limit {limit}: it must be at least 1")
        if offset < 0:
            raise InvalidInputError(f"invalid offset {offset}: it must be 0 or more")
        now_text = format_timestamp(self.clock())
        prefix = self._category(category)
        limit, offset = None if limit is None else min(limit, MAX_COUNT), min(offset, MAX_COUNT)
        with self.index.connect() as conn:
            live = {"live_at": None if include_expired else now_text, "tag": tag}
            rows, skipped = queries.rows(conn, prefix, limit=limit, offset=offset, **live)
            paged = limit is not None or offset > 0
            total = queries.count(conn, prefix, **live) if paged else None
        summaries = [Summary.of(row, now_text) for row in rows]
        if not include_expired:
            summaries = [s for s in summaries if not s.expired]
        return Listing(summaries, skipped, total)

    def recent(self, limit: int = 10, *, include_expired: bool = False) -> Listing:
        """Newest first: by a memory's updated (else created) date; one without a date
        (Serena's) by its last commit when git has the file as committed, else by the
        file's mtime, which in a fresh clone is the checkout's time for every file."""
        if limit < 1:
            raise InvalidInputError(f"invalid limit {limit}: it must be at least 1")
        listing = self.list_memories(include_expired=include_expired)
        undated = {s.path for s in listing.memories if s.meta.updated_at is None
                   and s.meta.created_at is None}  # fmt: skip
        committed: dict[str, int] = {}
        if undated:
            from memory_enhancement.verify.commit_times import committed_times

            with self.index.connect(sync=False) as conn:  # the listing just synced it
                stamps = {p: s for p, s in queries.stamps(conn).items() if p in undated}
            committed = committed_times(self.store.root, self.state, stamps)

        def moment(summary: Summary) -> float:
            return committed.get(summary.path, summary.sort_time)

        newest = sorted(listing.memories, key=lambda s: (-moment(s), s.path))
        return Listing(newest[:limit], listing.skipped)

    def citation_id(self, path: str) -> str:
        """The `[mem:XXXXXX]` handle of an existing memory."""
        return format_citation_id(self.index.citation_id(self.store.locate(path)))

    def resolve(self, citation_id: str, *, include_expired: bool = True) -> Fetched:
        """The memory a citation ID names (`mem:a7Bc3x`, `[mem:a7Bc3x]` or `a7Bc3x`). Text
        that names no memory as an ID but is a memory's path or name is taken as `get`
        takes it: `resolve project_overview` meant that memory, and an error about an ID's
        shape told the user nothing. Text that is neither keeps the ID's error."""
        from memory_enhancement.index.lookup import find, resolve_id

        try:
            path = resolve_id(self.index, self.state, citation_id)
        except (InvalidInputError, NotFoundError) as exc:
            try:
                path = find(self.index, self.state, citation_id)
            except MemoryToolError:
                raise exc from None
        return self.get(path, include_expired=include_expired, action="resolve")

    def find(self, reference: str) -> str:
        """An existing memory from a path, a citation ID or a unique (or declared) name:
        what reads take, and so do the writes that change one (an agent edits the memory
        it just got by the handle it got it by); `remove` alone wants its path."""
        from memory_enhancement.index.lookup import find

        return find(self.index, self.state, reference)

    def _to_change(self, reference: str, verb: str = "edited") -> str:
        """The memory a write changes: as `find`, but a path with a folder names its own
        file only. `find` takes `notes/foo` for the one `foo` anywhere (as a link to a
        memory since moved finds it), and `update notes/foo` replaced archive/foo's text.
        A Claude Code memory folder's `MEMORY.md` is refused: it is the index, not a memory."""
        from memory_enhancement.service import claude  # only writes and Claude folders need it

        located = "/" in reference and not reference.strip().startswith(("mem:", "[mem:"))
        target = self.store.locate(reference) if located else self.find(reference)
        claude.refuse_index_edit(self.store, target, verb)
        return target

    # -- writing ----------------------------------------------------------------

    def add(
        self,
        path: str,
        content: str,
        *,
        tags: Iterable[str] = (),
        expires_at: datetime | str | None = None,
        citations: Iterable[CitationInput] = (),
        links: Iterable[str | Link] = (),
        source: str = "cli",
        description: str | None = None,
        memory_type: str | None = None,
        like: Decoded | None = None,
    ) -> WriteResult:
        """In a Claude Code memory folder, the new memory declares its `description` and
        `memory_type` (see service/claude.py) and is listed in `MEMORY.md`. `like`: the
        line ending and BOM to write with (a graduated copy keeps its source's); LF."""
        from memory_enhancement.service import claude  # only writes and Claude folders need it

        folder = claude.folder_of(self.store, learn=False)  # create() learns its style
        chosen = "frontmatter" if folder else self.store.default_format()  # samples files
        claude.refuse_declaration(folder, description, memory_type)
        bare = "/" not in path.strip().strip("/")
        target = normalize_new_path(path, flat=bare and self.takes_bare_names(chosen))
        if not content or not content.strip():
            raise InvalidInputError(f"content of {target!r} is empty")
        content = clean_content(content)
        moment = self.clock()
        prepared, warnings = self._prepare(parse_citations(citations), ())
        meta = MemoryMeta(
            created_at=moment,
            updated_at=moment,
            tags=clean_tags(tags),
            source=source,
            expires_at=maybe_timestamp(expires_at, field="expires_at"),
            citations=tuple(prepared),
        )
        listed = False
        with self.store.lock():
            from memory_enhancement.store import formats

            target = names.in_folders_as_on_disk(self.store.root, target)
            fmt = formats.by_name(chosen)
            memory = Memory(target, content, meta, tuple(parse_links(links)), fmt.name)
            if folder is None:
                self.store.create(
                    target, (like or formats.Decoded("")).encode(fmt.render(None, memory))
                )
                unlisted = claude.index_warning(self.store)
                warnings = [*warnings, unlisted] if unlisted else warnings
            else:
                listed, more = claude.create(self.store, memory, description, memory_type, like)
                warnings = [*warnings, *more]
        result = self._written(target, warnings)
        return replace(result, links_updated=(claude.INDEX,)) if listed else result

    def update(
        self,
        path: str,
        *,
        content: str | None = None,
        tags: Iterable[str] | None = None,
        expires_at: datetime | str | None = None,
        clear_expiry: bool = False,
        citations: Iterable[CitationInput] | None = None,
        links: Iterable[str | Link] = (),
        edit: tuple[str, str] | None = None,
    ) -> WriteResult:
        """Change what is given; `citations=[]` clears them, `None` keeps them (seed 003).
        `links` are added to the memory's links (a link is never dropped by an update).
        `edit` (old, new) replaces the one place the content holds `old`, read under the
        store's lock: an agent fixing one mention of a 30,000-character memory sends the
        mention, not the memory (and cannot undo a change made since it read it)."""
        extra_links = parse_links(links)
        nothing = content is None and tags is None and expires_at is None and citations is None
        if nothing and edit is None and not clear_expiry and not extra_links:
            raise InvalidInputError(
                "nothing to update: give content, tags, expires_at, clear_expiry, citations "
                "or links"
            )
        if clear_expiry and expires_at is not None:
            raise InvalidInputError("give either expires_at or clear_expiry, not both")
        if content is not None and edit is not None:
            raise InvalidInputError("give either content or the text to replace, not both")
        if content is not None and not content.strip():
            raise InvalidInputError("content cannot be empty")
        content = None if content is None else clean_content(content)
        if edit is not None and not edit[0]:
            raise InvalidInputError("the text to replace cannot be empty")
        target = self._to_change(path)

        def change(memory: Memory) -> tuple[Memory, list[str]]:
            if edit is not None:
                memory = replace(memory, content=_edited(memory, *map(clean_content, edit)))
            meta, warnings = memory.meta, list[str]()
            if tags is not None:
                meta = replace(meta, tags=clean_tags(tags))
            if expires_at is not None:
                meta = replace(meta, expires_at=maybe_timestamp(expires_at, field="expires_at"))
            if clear_expiry:
                meta = replace(meta, expires_at=None)
            if citations is not None:
                wanted = parse_citations(citations)
                prepared, warnings = self._prepare(wanted, meta.citations)
                meta = replace(meta, citations=tuple(prepared))
            new = replace(memory, meta=meta, content=memory.content if content is None else content)
            return _with_links(new, extra_links), warnings

        return self._edit(target, change, touch=True)

    def add_links(self, path: str, links: Iterable[str | Link]) -> WriteResult:
        """Append links to a memory (the formats add them; they never drop one)."""
        extra = parse_links(links)
        return self._edit(self._to_change(path), lambda m: (_with_links(m, extra), []), touch=True)

    def remove(self, path: str) -> Removed:
        """Delete a memory; in a Claude Code memory folder, its line in `MEMORY.md` too.
        What still links to it is named, since those links now dangle."""
        from memory_enhancement.graph.traverse import incoming, lost
        from memory_enhancement.index.lookup import exact
        from memory_enhancement.service import claude  # only writes and Claude folders need it

        with self.store.lock():
            target = exact(self.index, self.state, path)  # a path or an ID, never a name
            folder = claude.folder_of(self.store, learn=False)
            claude.refuse_index(folder, target, "removed")
            with self.index.connect() as conn:
                held = incoming(conn, target)
            self.store.delete(target)
            unlisted = claude.unlist(self.store, folder, [target])
            sources: list[str] = []
            if held:  # asked again: a name may find another memory now
                with self.index.connect() as conn:
                    sources = lost(conn, held)
        updated = (claude.INDEX,) if unlisted else ()
        return Removed(target, updated, tuple(s for s in sources if s not in updated))

    def move(self, source: str, destination: str, *, update_links: bool = True) -> WriteResult:
        """Move a memory; its content, citations, links and citation ID travel with it.

        Links keep working: in the memories that link to it and in its own relative
        links, the target text of each link the move would break is rewritten
        (`update_links=False` leaves every other file alone).
        """
        from memory_enhancement.graph.broken import follow_move, links_touching

        with self.store.lock():
            origin = self._to_change(source, "moved")
            # A Serena store is flat, and so is a memory already at the top of any store
            # (Claude Code's memory folder holds its frontmatter memories there).
            flat = "/" not in origin or self.store.default_format() == "serena"
            target = (
                normalize_new_path(destination, flat=flat) if destination.strip() else destination
            )
            target = names.in_folders_as_on_disk(self.store.root, target)
            if target == origin:
                return replace(self._written(origin, [], changed=False), moved_from=origin)
            self.store.refuse_taken(target, moving=origin)
            held = links_touching(self.index, origin) if update_links else []
            self.store.prepare_move(origin, target)  # before the ID is written into origin
            self._declare_id(origin)
            self.store.rename(origin, target)
            with self.index.connect(sync=False) as conn:
                self.index.refresh(conn, [origin, target])  # the ID moves with the file
        # Each file is rewritten under the lock on its own (the store lock is not reentrant).
        fixes, skipped = (
            follow_move(self.index, self.repo.root, origin, target, held) if held else ([], [])
        )
        result = self._written(target, skipped)
        moved = tuple(sorted({f.path for f in fixes}))
        return replace(result, links_updated=moved, moved_from=origin)

    def prune(self, *, dry_run: bool = False) -> Listing:
        """Remove expired memories (or only list them). Unreadable files are never touched."""
        from memory_enhancement.service import claude  # only writes and Claude folders need it

        with self.store.lock():
            listing = self.list_memories(include_expired=True)
            folder = claude.folder_of(self.store, learn=False)  # its index is never pruned
            expired = [
                s for s in listing.memories if s.expired and not claude.is_index(folder, s.path)
            ]
            if not dry_run:
                for summary in expired:
                    self.store.delete(summary.path)
                claude.unlist(self.store, folder, [s.path for s in expired])
        return Listing(expired, listing.skipped)

    def reindex(self) -> SyncStats:
        """Rebuild the index from the files."""
        return self.index.rebuild()


def _with_links(memory: Memory, links: Iterable[Link]) -> Memory:
    """The memory with the links it lacks added (by target and type, as the formats add
    them): asking for a link it has already leaves it equal, so nothing is written and
    no time is stamped (a Serena note would gain a `## Metadata` section for nothing); a
    link asked for twice at once is added once."""
    have = {(link.target, link.type) for link in memory.links or ()}
    new = []
    for link in links:
        if (link.target, link.type) not in have:
            have.add((link.target, link.type))
            new.append(link)
    return replace(memory, links=(*(memory.links or ()), *new)) if new else memory


def _edited(memory: Memory, old: str, new: str) -> str:
    """memory's content with the one place that holds `old` holding `new`."""
    found = memory.content.count(old)
    if found != 1:
        where = "is not in" if not found else f"is {found} times in"
        more = "" if not found else ": give more of the text around it"
        raise InvalidInputError(f"the text to replace {shown(old)} {where} {memory.path}{more}")
    content = memory.content.replace(old, new, 1)
    if not content.strip():
        raise InvalidInputError("content cannot be empty")
    return content
