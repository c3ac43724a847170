"""The operations on memories: one service under both the CLI and the MCP server.

Every front end parses its arguments, calls one method here and renders the
result; rules such as "citations given replace the list, an empty list clears
it, omitted keeps it" live here once. Methods return values and raise
MemoryToolError subclasses; they never print.

Reading and writing memories is implemented here; the rest (search,
verification, the graph, health) lives in its own module and is imported when
first used, so that a `get` does not pay for loading the verifier or an HTTP
client: start-up time is part of every CLI call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from . import formats, retrieval
from .citations import parse_citation
from .errors import AlreadyExistsError, ExpiredError, InvalidInputError
from .ids import ID_LENGTH, format_citation_id
from .index import Index, SyncStats
from .inputs import CitationInput, choice, clean_tags, parse_citations, parse_links
from .inputs import prepare_citations as _prepare
from .memory_paths import normalize_category, normalize_new_path
from .model import Citation, Link, Memory, MemoryMeta
from .repo import Repository
from .results import Fetched, Listing, Summary, WriteResult
from .semantic import DEFAULT_MODEL
from .state import State
from .storage import Loaded, Store
from .timestamps import format_timestamp, maybe_timestamp, now

if TYPE_CHECKING:
    from .git import Git
    from .graph import Algorithm, Backlink, Direction, GraphResult
    from .health import HealthReport
    from .linkfix import BrokenLink
    from .search import Mode
    from .verification import Fix, VerifyOptions, VerifyRun

__all__ = ["Fetched", "Listing", "MemoryService", "Summary", "WriteResult"]

SOURCES = ("cli", "file", "stdin", "mcp", "import", "graduate")


class MemoryService:
    """Operations on one store, citing code in one repository."""

    def __init__(
        self,
        store: Store,
        repo: Repository,
        *,
        index_path: Path | None = None,
        index: Index | None = None,
        state: State | None = None,
        session: str = "cli",
        semantic_model: str = DEFAULT_MODEL,
        id_length: int = ID_LENGTH,
        clock: Callable[[], datetime] = now,
    ) -> None:
        """`index_path=None` keeps the index in memory (tests, one-off use); `state=None` too.

        A long-running process passes the same `index` and `state` to every service
        it makes, so their connections stay open between calls.
        """
        self.store = store
        self.repo = repo
        self.clock = clock
        self.session = session
        self.state = state or State(None)
        self.index = index or Index(store, index_path, self.state, id_length=id_length)
        self.semantic_model = semantic_model

    # -- reading ----------------------------------------------------------------

    def get(
        self, path: str, *, include_expired: bool = False, action: str | None = "get"
    ) -> Fetched:
        """A memory's content and metadata; records the use (seed 002 §5) unless action=None."""
        loaded = self.store.read(self.store.locate(path), links=False)
        memory = loaded.doc.memory
        expires = memory.meta.expires_at
        if not include_expired and expires is not None and memory.meta.is_expired(self.clock()):
            raise ExpiredError(
                f"memory {memory.path!r} expired at {format_timestamp(expires)} "
                "(use include_expired to read it anyway)"
            )
        citation_id = retrieval.citation_id_of(self, memory.path, loaded)
        memory = replace(memory, links=retrieval.indexed_links(self, memory.path))
        if action:
            retrieval.record_use(self, [(citation_id, memory.path)], action, None)
        return Fetched(memory, tuple(loaded.doc.problems), citation_id)

    def list_memories(
        self, category: str | None = None, *, include_expired: bool = False
    ) -> Listing:
        now_text = format_timestamp(self.clock())
        prefix = normalize_category(category) if category else None
        with self.index.connect() as conn:
            rows, skipped = self.index.rows(conn, prefix)
        summaries = [Summary.of(row, now_text) for row in rows]
        if not include_expired:
            summaries = [s for s in summaries if not s.expired]
        return Listing(summaries, skipped)

    def recent(self, limit: int = 10, *, include_expired: bool = False) -> Listing:
        if limit < 1:
            raise InvalidInputError(f"invalid limit {limit}: it must be at least 1")
        listing = self.list_memories(include_expired=include_expired)
        newest = sorted(listing.memories, key=lambda s: (-s.sort_time, s.path))
        return Listing(newest[:limit], listing.skipped)

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
    ) -> WriteResult:
        target = normalize_new_path(path)
        if not content or not content.strip():
            raise InvalidInputError(f"content of {target!r} is empty")
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
        with self.store.lock():
            fmt = formats.by_name(self.store.default_format())
            memory = Memory(target, content, meta, tuple(parse_links(links)), fmt.name)
            decoded = formats.Decoded(fmt.render(None, memory))
            self.store.create(target, decoded.encode(decoded.text))
        return self._written(target, warnings)

    def update(
        self,
        path: str,
        *,
        content: str | None = None,
        tags: Iterable[str] | None = None,
        expires_at: datetime | str | None = None,
        clear_expiry: bool = False,
        citations: Iterable[CitationInput] | None = None,
    ) -> WriteResult:
        """Change what is given; `citations=[]` clears them, `None` keeps them (seed 003)."""
        nothing = content is None and tags is None and expires_at is None and citations is None
        if nothing and not clear_expiry:
            raise InvalidInputError(
                "nothing to update: give content, tags, expires_at, clear_expiry or citations"
            )
        if clear_expiry and expires_at is not None:
            raise InvalidInputError("give either expires_at or clear_expiry, not both")
        if content is not None and not content.strip():
            raise InvalidInputError("content cannot be empty")
        target = self.store.locate(path)

        def change(memory: Memory) -> tuple[Memory, list[str]]:
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
            return new, warnings

        return self._edit(target, change, touch=True)

    def add_citation(
        self, path: str, ref: CitationInput, *, snippet: str | None = None
    ) -> WriteResult:
        """Append one citation, capturing its snippet from the code when none is given.

        Only the citations change, and `updated_at` when the memory keeps one: a
        Serena note that records no timestamps gains no Metadata section for it.
        """
        citation = parse_citation(ref, snippet=snippet) if isinstance(ref, str) else ref
        if snippet is not None and not snippet.strip():
            raise InvalidInputError("snippet cannot be empty")
        target = self.store.locate(path)

        def change(memory: Memory) -> tuple[Memory, list[str]]:
            existing = memory.meta.citations
            if any(c.ref == citation.ref and c.snippet == citation.snippet for c in existing):
                return memory, [f"citation {citation.ref} is already on {target}"]
            if citation.snippet is None and any(c.ref == citation.ref for c in existing):
                return memory, [f"citation {citation.ref} is already on {target}"]
            prepared, warnings = self._prepare([citation], ())
            meta = replace(memory.meta, citations=(*existing, *prepared))
            if meta.updated_at is not None:
                meta = replace(meta, updated_at=self.clock())
            return replace(memory, meta=meta), warnings

        return self._edit(target, change, touch=False)

    def add_links(self, path: str, links: Iterable[str | Link]) -> WriteResult:
        """Append links to a memory (the formats add them; they never drop one)."""
        extra = parse_links(links)
        return self._edit(
            self.store.locate(path),
            lambda m: (replace(m, links=(*(m.links or ()), *extra)), []),
            touch=True,
        )

    def remove(self, path: str) -> str:
        with self.store.lock():
            target = self.store.locate(path)
            self.store.delete(target)
        return target

    def move(self, source: str, destination: str, *, update_links: bool = True) -> WriteResult:
        """Move a memory; its content, citations, links and citation ID travel with it.

        Links keep working: in the memories that link to it and in its own relative
        links, the target text of each link the move would break is rewritten
        (`update_links=False` leaves every other file alone).
        """
        from .linkfix import follow_move, links_touching

        with self.store.lock():
            origin = self.store.locate(source)
            target = normalize_new_path(destination) if destination.strip() else destination
            if target == origin:
                return self._written(origin, [], changed=False)
            if self.store.exists(target):
                raise AlreadyExistsError(f"memory already exists: {target!r}")
            held = links_touching(self, origin) if update_links else []
            self._declare_id(origin)
            self.store.rename(origin, target)
            with self.index.connect(sync=False) as conn:
                self.index.refresh(conn, [origin, target])  # the ID moves with the file
        # Each file is rewritten under the lock on its own (the store lock is not reentrant).
        fixes = follow_move(self, origin, target, held) if held else []
        result = self._written(target, [])
        return replace(result, links_updated=tuple(sorted({f.path for f in fixes})))

    def prune(self, *, dry_run: bool = False) -> Listing:
        """Remove expired memories (or only list them). Unreadable files are never touched."""
        with self.store.lock():
            listing = self.list_memories(include_expired=True)
            expired = [s for s in listing.memories if s.expired]
            if not dry_run:
                for summary in expired:
                    self.store.delete(summary.path)
        return Listing(expired, listing.skipped)

    # -- the index: IDs, search, context, usage ---------------------------------

    def reindex(self) -> SyncStats:
        """Rebuild the index from the files."""
        return self.index.rebuild()

    def citation_id(self, path: str) -> str:
        """The `[mem:XXXXXX]` handle of an existing memory."""
        return format_citation_id(retrieval.citation_id_of(self, self.store.locate(path)))

    def resolve(self, citation_id: str, *, include_expired: bool = True) -> Fetched:
        """The memory a citation ID names (`mem:a7Bc3x`, `[mem:a7Bc3x]` or `a7Bc3x`)."""
        path = retrieval.resolve(self, citation_id)
        return self.get(path, include_expired=include_expired, action="resolve")

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        mode: Mode | str = "lexical",
        category: str | None = None,
        tag: str | None = None,
        include_expired: bool = False,
        verify: bool = False,
        min_confidence: float | None = None,
    ) -> list[retrieval.SearchResult]:
        from .search import Filters, Mode

        filters = Filters(normalize_category(category) if category else None, tag, include_expired)
        return retrieval.run_search(
            self, query, limit=limit, mode=choice(Mode, mode, "search mode"), filters=filters,
            verify=verify, min_confidence=min_confidence,
        )  # fmt: skip

    def context(
        self,
        query: str,
        *,
        limit: int = 5,
        max_tokens: int | None = 2000,
        verify: bool = False,
        mode: Mode | str = "lexical",
    ) -> tuple[str, list[retrieval.SearchResult]]:
        """A prompt-ready markdown block of the memories that answer a query."""
        from .search import Filters, Mode

        results = retrieval.run_search(
            self, query, limit=limit, mode=choice(Mode, mode, "search mode"), filters=Filters(),
            verify=verify, action=None,
        )  # fmt: skip
        text, used = retrieval.render_context(self, results, max_tokens)
        handed = [(r.hit.row.citation_id, r.hit.row.path) for r in used]
        retrieval.record_use(self, handed, "context", query)
        return text, used

    def popular(self, limit: int = 10) -> list[retrieval.Popular]:
        return retrieval.popular(self, limit)

    def graduation_candidates(self, min_uses: int = 5, limit: int = 50) -> list[retrieval.Popular]:
        """Memories used often enough to deserve a place in the global store (seed 002 §5.3)."""
        if min_uses < 1:
            raise InvalidInputError(f"invalid min_uses {min_uses}: it must be at least 1")
        with self.index.connect() as conn:
            # Already graduated (it links to its copy), or itself a graduated copy.
            done = {
                str(row[0])
                for row in conn.execute(
                    "SELECT DISTINCT m.path FROM links l JOIN memories m ON m.id = l.memory_id "
                    "WHERE l.type IN ('graduated_to', 'graduated_from')"
                )
            }
        return [
            p
            for p in retrieval.popular(self, limit, min_uses)
            if p.path is not None and p.path not in done
        ]

    def graduate(self, path: str, target: MemoryService) -> WriteResult:
        """Copy a memory into another store (the global one), keeping citations; link the two."""
        return retrieval.graduate(self, path, target)

    def find(self, reference: str) -> str:
        """An existing memory from a path, a citation ID or a unique name."""
        return retrieval.find(self, reference)

    # -- the link graph ---------------------------------------------------------

    def graph(
        self,
        root: str,
        *,
        depth: int = 3,
        direction: Direction | str = "out",
        algorithm: Algorithm | str = "bfs",
        types: Iterable[str] = (),
    ) -> GraphResult:
        """Follow links from a memory (seed 004 US-4), BFS or DFS, out, in or both ways."""
        from .graph import Algorithm, Direction, traverse

        start = self.find(root)
        with self.index.connect() as conn:
            return traverse(
                conn, start, depth=depth, direction=choice(Direction, direction, "direction"),
                algorithm=choice(Algorithm, algorithm, "algorithm"), types=tuple(types),
            )  # fmt: skip

    def related(self, path: str) -> list[Backlink]:
        """Memories that link to this one (the seed's `related`)."""
        from .graph import backlinks

        target = self.find(path)
        with self.index.connect() as conn:
            return backlinks(conn, target)

    def roots(self) -> list[str]:
        from .graph import roots

        with self.index.connect() as conn:
            return roots(conn)

    def orphans(self) -> list[str]:
        from .graph import orphans

        with self.index.connect() as conn:
            return orphans(conn)

    def broken_links(self) -> list[BrokenLink]:
        """Dangling and ambiguous links, each with the fix offered when there is one."""
        from .linkfix import broken_links

        return broken_links(self)

    def fix_links(self, *, dry_run: bool = False) -> tuple[list[BrokenLink], list[Fix]]:
        from .linkfix import broken_links, fix_links

        broken = broken_links(self)
        return broken, fix_links(self, broken, dry_run=dry_run)

    # -- verification, health and confidence -------------------------------------

    @cached_property
    def git(self) -> Git | None:
        """The git repository around the cited code, found once per service."""
        from .git import Git

        return Git.discover(self.repo.root)

    def verify(self, path: str, options: VerifyOptions | None = None) -> VerifyRun:
        """Verify one memory's citations just in time (and fix moved ones on request)."""
        from .verification import VerifyOptions, verify_file

        return verify_file(self, self.store.locate(path), options or VerifyOptions())

    def verify_all(
        self,
        category: str | None = None,
        *,
        changed_since: str | None = None,
        options: VerifyOptions | None = None,
    ) -> VerifyRun:
        """Verify every memory with citations, or only those a change since a ref touches."""
        from .verification import VerifyOptions, changed_paths, verify_paths

        prefix = normalize_category(category) if category else None
        paths: list[str] | None = None
        if changed_since:
            paths = changed_paths(self, changed_since, prefix)
        elif prefix:
            paths = list(self.store.iter_paths(prefix))
        return verify_paths(self, paths, options or VerifyOptions())

    def health(self) -> HealthReport:
        """Verify every memory now and rank them by urgency (see health.py)."""
        from .health import build

        return build(self)

    def reinforce(self, path: str, note: str | None = None) -> tuple[str, int]:
        """Record that an agent or a person confirmed this memory; returns (ID, confirmations)."""
        from . import history

        target = self.store.locate(path)
        citation_id = retrieval.citation_id_of(self, target)
        faded = history.policy_expiry(self, citation_id)
        current = self.store.read(target, links=False).doc.memory.meta.expires_at
        if faded is not None and current is not None and format_timestamp(current) == faded:
            self.update(target, clear_expiry=True)  # renewed: the policy's expiry no longer holds
        return citation_id, history.reinforce(self, citation_id, target, note)

    def apply_expiry_policy(
        self, *, after_days: float, grace_days: float, dry_run: bool = False
    ) -> list[tuple[str, datetime]]:
        """Give memories neither verified valid, confirmed nor used for a while an expiry."""
        from .expiry import apply_policy

        return apply_policy(self, after_days=after_days, grace_days=grace_days, dry_run=dry_run)

    # -- helpers ----------------------------------------------------------------

    def _prepare(
        self, wanted: Sequence[Citation], existing: Sequence[Citation]
    ) -> tuple[list[Citation], list[str]]:
        return _prepare(self.repo, format_timestamp(self.clock()), wanted, existing)

    def _edit(
        self,
        target: str,
        change: Callable[[Memory], tuple[Memory, list[str]]],
        *,
        touch: bool,
    ) -> WriteResult:
        """Read, change and write one memory under the lock; skip the write if nothing changed."""
        with self.store.lock():
            loaded = self.store.read(target)
            memory, warnings = change(loaded.doc.memory)
            if memory == loaded.doc.memory:
                return WriteResult(target, memory, False, tuple(warnings))
            if touch:
                memory = replace(memory, meta=replace(memory.meta, updated_at=self.clock()))
            self._write(loaded, memory)
        return self._written(target, warnings)

    def _write(self, loaded: Loaded, memory: Memory) -> None:
        fmt = formats.by_name(loaded.doc.memory.format)
        text = fmt.render(loaded.doc, memory)
        if text != loaded.decoded.text:
            self.store.replace(loaded.path, loaded.decoded.encode(text))

    def _written(
        self, target: str, warnings: Sequence[str], *, changed: bool = True
    ) -> WriteResult:
        loaded = self.store.read(target)
        problems = [*warnings, *loaded.doc.problems]
        citation_id = retrieval.citation_id_of(self, target, loaded)
        return WriteResult(target, loaded.doc.memory, changed, tuple(problems), citation_id)

    def _declare_id(self, path: str) -> None:
        """Write the memory's citation ID into its file, so the ID survives the move."""
        citation_id = retrieval.citation_id_of(self, path)
        loaded = self.store.read(path)
        memory = loaded.doc.memory
        if memory.meta.citation_id != citation_id:
            declared = replace(memory, meta=replace(memory.meta, citation_id=citation_id))
            self._write(loaded, declared)
