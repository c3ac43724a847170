"""The operations on memories: one service under both the CLI and the MCP server.

Every front end parses its arguments, calls one method here and renders the
result; rules such as "citations given replace the list, an empty list clears
it, omitted keeps it" live here once. Methods return values and raise
MemoryToolError subclasses; they never print.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TypeVar

from . import formats, history, retrieval
from .citations import parse_citation, snippet_matches
from .errors import AlreadyExistsError, ExpiredError, InvalidInputError, NotFoundError
from .formats.markdown import code_span
from .git import Git
from .graph import Algorithm, Backlink, Direction, GraphResult, backlinks, orphans, roots, traverse
from .health import HealthReport
from .health import build as build_health
from .ids import ID_LENGTH, format_citation_id
from .index import Index, Row, SyncStats
from .linkfix import BrokenLink, broken_links, fix_links
from .links import LinkStatus, Resolver
from .memory_paths import normalize_category, normalize_new_path
from .model import Citation, Link, LinkKind, Memory, MemoryMeta
from .repo import Repository, SourceStatus, cited_text
from .search import Filters, Mode
from .semantic import DEFAULT_MODEL
from .state import State
from .storage import Loaded, Store
from .timestamps import format_timestamp, maybe_timestamp, now
from .verification import Fix, VerifyOptions, VerifyRun, changed_paths, verify_file, verify_paths

CitationInput = str | Citation
E = TypeVar("E", bound=enum.Enum)
_TYPED_LINK = "[link:"
SOURCES = ("cli", "file", "stdin", "mcp", "import", "graduate")


@dataclass(frozen=True)
class WriteResult:
    """What a write did: the memory as now on disk, and anything worth a warning."""

    path: str
    memory: Memory
    changed: bool = True
    warnings: tuple[str, ...] = ()
    citation_id: str = ""


@dataclass(frozen=True)
class Summary:
    """One line of a listing: what can be known without extracting links."""

    path: str
    title: str
    format: str
    meta: MemoryMeta
    expired: bool
    mtime_ns: int
    citation_id: str = ""
    citation_count: int = 0

    @classmethod
    def of(cls, row: Row, now_text: str) -> Summary:
        meta = MemoryMeta(
            created_at=maybe_timestamp(row.created_at),
            updated_at=maybe_timestamp(row.updated_at),
            tags=row.tags,
            source=row.source,
            expires_at=maybe_timestamp(row.expires_at),
        )
        expired = row.expired(now_text)
        return cls(
            row.path, row.title, row.format, meta, expired, row.mtime_ns, row.citation_id,
            row.citation_count,
        )  # fmt: skip

    @property
    def sort_time(self) -> float:
        moment = self.meta.updated_at or self.meta.created_at
        return moment.timestamp() if moment else self.mtime_ns / 1e9


@dataclass(frozen=True)
class Listing:
    memories: list[Summary]
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Fetched:
    memory: Memory
    warnings: tuple[str, ...] = ()
    citation_id: str = ""  # bare; format_citation_id() quotes it


class MemoryService:
    """Operations on one store, citing code in one repository."""

    def __init__(
        self,
        store: Store,
        repo: Repository,
        *,
        index_path: Path | None = None,
        state: State | None = None,
        session: str = "cli",
        semantic_model: str = DEFAULT_MODEL,
        id_length: int = ID_LENGTH,
        clock: Callable[[], datetime] = now,
    ) -> None:
        """`index_path=None` keeps the index in memory (tests, one-off use); `state=None` too."""
        self.store = store
        self.repo = repo
        self.clock = clock
        self.session = session
        self.state = state or State(None)
        self.index = Index(store, index_path, self.state, id_length=id_length)
        self.semantic_model = semantic_model

    # -- reading ----------------------------------------------------------------

    def get(
        self, path: str, *, include_expired: bool = False, action: str | None = "get"
    ) -> Fetched:
        """A memory's content and metadata; records the use (seed 002 §5) unless action=None."""
        loaded = self.store.read(self.store.locate(path))
        memory = loaded.doc.memory
        expires = memory.meta.expires_at
        if not include_expired and expires is not None and memory.meta.is_expired(self.clock()):
            raise ExpiredError(
                f"memory {memory.path!r} expired at {format_timestamp(expires)} "
                "(use include_expired to read it anyway)"
            )
        citation_id = retrieval.citation_id_of(self, memory.path)
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
        prepared, warnings = self._prepare_citations(_parse_citations(citations), ())
        meta = MemoryMeta(
            created_at=moment,
            updated_at=moment,
            tags=_clean_tags(tags),
            source=source,
            expires_at=maybe_timestamp(expires_at, field="expires_at"),
            citations=tuple(prepared),
        )
        with self.store.lock():
            fmt = formats.by_name(self.store.default_format())
            memory = Memory(target, content, meta, tuple(_parse_links(links)), fmt.name)
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
                meta = replace(meta, tags=_clean_tags(tags))
            if expires_at is not None:
                meta = replace(meta, expires_at=maybe_timestamp(expires_at, field="expires_at"))
            if clear_expiry:
                meta = replace(meta, expires_at=None)
            if citations is not None:
                wanted = _parse_citations(citations)
                prepared, warnings = self._prepare_citations(wanted, meta.citations)
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
            prepared, warnings = self._prepare_citations([citation], ())
            meta = replace(memory.meta, citations=(*existing, *prepared))
            if meta.updated_at is not None:
                meta = replace(meta, updated_at=self.clock())
            return replace(memory, meta=meta), warnings

        return self._edit(target, change, touch=False)

    def remove(self, path: str) -> str:
        with self.store.lock():
            target = self.store.locate(path)
            self.store.delete(target)
        return target

    def move(self, source: str, destination: str) -> WriteResult:
        """Move a memory; its content, citations and links travel with it unchanged."""
        with self.store.lock():
            origin = self.store.locate(source)
            target = normalize_new_path(destination) if destination.strip() else destination
            if target == origin:
                return self._written(origin, [], changed=False)
            if self.store.exists(target):
                raise AlreadyExistsError(f"memory already exists: {target!r}")
            self._declare_id(origin)
            self.store.rename(origin, target)
            with self.index.connect(sync=False) as conn:
                self.index.refresh(conn, [origin, target])  # the ID moves with the file
        return self._written(target, [])

    def _declare_id(self, path: str) -> None:
        """Write the memory's citation ID into its file, so the ID survives the move."""
        citation_id = retrieval.citation_id_of(self, path)
        loaded = self.store.read(path)
        memory = loaded.doc.memory
        if memory.meta.citation_id != citation_id:
            declared = replace(memory, meta=replace(memory.meta, citation_id=citation_id))
            self._write(loaded, declared)

    def prune(self, *, dry_run: bool = False) -> Listing:
        """Remove expired memories (or only list them). Unreadable files are never touched."""
        with self.store.lock():
            listing = self.list_memories(include_expired=True)
            expired = [s for s in listing.memories if s.expired]
            if not dry_run:
                for summary in expired:
                    self.store.delete(summary.path)
        return Listing(expired, listing.skipped)

    # -- the index: IDs, search, context, usage ---------------------------------------

    def reindex(self) -> SyncStats:
        """Rebuild the index from the files."""
        return self.index.rebuild()

    def citation_id(self, path: str) -> str:
        """The `[mem:XXXXXX]` handle of an existing memory."""
        return format_citation_id(retrieval.citation_id_of(self, self.store.locate(path)))

    def resolve(self, citation_id: str, *, include_expired: bool = True) -> Fetched:
        """The memory a citation ID names (`mem:a7Bc3x`, `[mem:a7Bc3x]` or `a7Bc3x`)."""
        return self.get(
            retrieval.resolve(self, citation_id), include_expired=include_expired, action="resolve"
        )

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        mode: Mode | str = Mode.LEXICAL,
        category: str | None = None,
        tag: str | None = None,
        include_expired: bool = False,
        verify: bool = False,
        min_confidence: float | None = None,
    ) -> list[retrieval.SearchResult]:
        filters = Filters(normalize_category(category) if category else None, tag, include_expired)
        return retrieval.run_search(
            self, query, limit=limit, mode=_mode(mode), filters=filters, verify=verify,
            min_confidence=min_confidence,
        )  # fmt: skip

    def context(
        self,
        query: str,
        *,
        limit: int = 5,
        max_tokens: int | None = 2000,
        verify: bool = False,
        mode: Mode | str = Mode.LEXICAL,
    ) -> tuple[str, list[retrieval.SearchResult]]:
        """A prompt-ready markdown block of the memories that answer a query."""
        results = retrieval.run_search(
            self, query, limit=limit, mode=_mode(mode), filters=Filters(), verify=verify,
            action=None,
        )  # fmt: skip
        text, used = retrieval.render_context(self, results, max_tokens)
        retrieval.record_use(
            self, [(r.hit.row.citation_id, r.hit.row.path) for r in used], "context", query
        )
        return text, used

    def popular(self, limit: int = 10) -> list[retrieval.Popular]:
        return retrieval.popular(self, limit)

    def graduation_candidates(self, min_uses: int = 5, limit: int = 50) -> list[retrieval.Popular]:
        """Memories used often enough to deserve a place in the global store (seed 002 §5.3)."""
        if min_uses < 1:
            raise InvalidInputError(f"invalid min_uses {min_uses}: it must be at least 1")
        return [p for p in retrieval.popular(self, limit, min_uses) if p.path is not None]

    def graduate(self, path: str, target: MemoryService) -> WriteResult:
        """Copy a memory into another store (the global one), keeping citations; link the two."""
        if target.store.root == self.store.root:
            raise InvalidInputError("cannot graduate a memory into its own store")
        # action=None: reading the memory to copy it is not an agent using it (seed 002 §5).
        source = self.get(path, include_expired=True, action=None).memory
        link_back = Link(f"{self.store.name}:{source.path}", "graduated_from", LinkKind.TYPED)
        result = target.add(
            source.path, source.content, tags=source.meta.tags, expires_at=source.meta.expires_at,
            citations=source.meta.citations, links=[link_back], source="graduate",
        )  # fmt: skip
        link_out = Link(f"{target.store.name}:{result.path}", "graduated_to", LinkKind.TYPED)
        self._edit(
            source.path,
            lambda m: (replace(m, links=(*(m.links or ()), link_out)), []),
            touch=True,
        )
        return result

    # -- the link graph ------------------------------------------------------------

    def graph(
        self,
        root: str,
        *,
        depth: int = 3,
        direction: Direction | str = Direction.OUT,
        algorithm: Algorithm | str = Algorithm.BFS,
        types: Iterable[str] = (),
    ) -> GraphResult:
        """Follow links from a memory (seed 004 US-4), BFS or DFS, out, in or both ways."""
        start = self.find(root)
        with self.index.connect() as conn:
            return traverse(
                conn, start, depth=depth, direction=_choice(Direction, direction, "direction"),
                algorithm=_choice(Algorithm, algorithm, "algorithm"), types=tuple(types),
            )  # fmt: skip

    def related(self, path: str) -> list[Backlink]:
        """Memories that link to this one (the seed's `related`)."""
        target = self.find(path)
        with self.index.connect() as conn:
            return backlinks(conn, target)

    def roots(self) -> list[str]:
        with self.index.connect() as conn:
            return roots(conn)

    def orphans(self) -> list[str]:
        with self.index.connect() as conn:
            return orphans(conn)

    def broken_links(self) -> list[BrokenLink]:
        """Dangling and ambiguous links, each with the fix offered when there is one."""
        return broken_links(self)

    def fix_links(self, *, dry_run: bool = False) -> tuple[list[BrokenLink], list[Fix]]:
        broken = broken_links(self)
        return broken, fix_links(self, broken, dry_run=dry_run)

    def find(self, reference: str) -> str:
        """An existing memory from a path, a citation ID or a unique name."""
        try:
            return self.store.locate(reference)
        except NotFoundError:
            pass
        text = reference.strip()
        if text.startswith(("mem:", "[mem:")):
            return retrieval.resolve(self, text)
        with self.index.connect() as conn:
            paths = [r[0] for r in conn.execute("SELECT path FROM memories WHERE error IS NULL")]
        found = Resolver(paths).resolve("", Link(text, "link", LinkKind.BARE))
        if found.status is LinkStatus.RESOLVED and found.target:
            return found.target
        if found.candidates:
            options = ", ".join(found.candidates[:5])
            raise InvalidInputError(f"{reference!r} is ambiguous: {options}")
        raise NotFoundError(f"memory not found: {reference!r} (store {self.store.root})")

    # -- health and confidence -----------------------------------------------------

    def health(self) -> HealthReport:
        """Verify every memory now and rank them by urgency (see health.py)."""
        return build_health(self)

    def reinforce(self, path: str, note: str | None = None) -> tuple[str, int]:
        """Record that an agent or a person confirmed this memory; returns (ID, confirmations)."""
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
        """Give memories neither verified valid, confirmed nor used for `after_days` an expiry.

        They fade `grace_days` later unless someone renews them (reinforce, or
        `update --no-expires-at`). Memories that already expire are left alone.
        """
        if after_days <= 0 or grace_days < 0:
            raise InvalidInputError("expiry policy needs after_days > 0 and grace_days >= 0")
        now_time = self.clock()
        cutoff = now_time - timedelta(days=after_days)
        expires = now_time + timedelta(days=grace_days)
        listing = self.list_memories(include_expired=True)
        ids = [s.citation_id for s in listing.memories]
        facts = history.evidence(self, ids)
        chosen = []
        for summary in listing.memories:
            if summary.meta.expires_at is not None:
                continue
            evidence = facts.get(summary.citation_id, history.Evidence())
            moments = [
                m
                for m in (
                    evidence.last_valid, evidence.last_used, evidence.last_reinforced,
                    summary.meta.updated_at, summary.meta.created_at,
                )
                if m is not None
            ]  # fmt: skip
            last = max(moments) if moments else datetime.fromtimestamp(summary.sort_time, UTC)
            if last < cutoff:
                chosen.append((summary.path, summary.citation_id))
        if not dry_run:
            for path, citation_id in chosen:
                self.update(path, expires_at=expires)
                history.mark_policy_expiry(self, citation_id, path, expires)
        return [(path, expires) for path, _ in chosen]

    # -- verification -------------------------------------------------------------

    @cached_property
    def git(self) -> Git | None:
        """The git repository around the cited code, found once per service."""
        return Git.discover(self.repo.root)

    def verify(self, path: str, options: VerifyOptions | None = None) -> VerifyRun:
        """Verify one memory's citations just in time (and fix moved ones on request)."""
        target = self.store.locate(path)
        return verify_file(self, target, options or VerifyOptions())

    def verify_all(
        self,
        category: str | None = None,
        *,
        changed_since: str | None = None,
        options: VerifyOptions | None = None,
    ) -> VerifyRun:
        """Verify every memory with citations, or only those a change since a ref touches."""
        prefix = normalize_category(category) if category else None
        paths: list[str] | None = None
        if changed_since:
            paths = changed_paths(self, changed_since, prefix)
        elif prefix:
            paths = list(self.store.iter_paths(prefix))
        return verify_paths(self, paths, options or VerifyOptions())

    # -- helpers ----------------------------------------------------------------

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
        citation_id = retrieval.citation_id_of(self, target)
        return WriteResult(target, loaded.doc.memory, changed, tuple(problems), citation_id)

    def _prepare_citations(
        self, wanted: Sequence[Citation], existing: Sequence[Citation]
    ) -> tuple[list[Citation], list[str]]:
        """Capture snippets from the code and say what looks wrong, without refusing it.

        A citation already on the memory is kept exactly as it is; a new
        file:line citation without a snippet gets the cited text as snippet and a
        verified stamp, so verification can later tell a moved line from a
        changed one. Problems are warnings: a store may live apart from its code.
        """
        kept = set(existing)
        stamp = format_timestamp(self.clock())
        result: list[Citation] = []
        warnings: list[str] = []
        for citation in dict.fromkeys(wanted):
            if citation in kept or citation.is_url:
                result.append(citation)
                continue
            source = self.repo.read(citation.target)
            if source.status is not SourceStatus.TEXT:
                warnings.append(_source_warning(citation, source.status, str(self.repo.root)))
            elif citation.line is not None:
                text = cited_text(source, citation.line, citation.end_line)
                if text is None:
                    warnings.append(
                        f"citation {citation.ref}: line {citation.end_line or citation.line} is "
                        f"past the end of {citation.target} ({len(source.lines)} lines)"
                    )
                elif citation.snippet is None and not text.strip():
                    warnings.append(
                        f"citation {citation.ref}: the cited line is blank, so no snippet was "
                        "captured and a change there cannot be detected"
                    )
                elif citation.snippet is None:
                    citation = replace(citation, snippet=text, verified=stamp)
                elif snippet_matches(snippet := citation.snippet, text):
                    citation = replace(citation, verified=citation.verified or stamp)
                else:
                    warnings.append(
                        f"citation {citation.ref}: snippet {code_span(snippet)} is not "
                        f"on that line, which reads {code_span(text.splitlines()[0])}"
                    )
            result.append(citation)
        return result, warnings


def _choice(enum_type: type[E], value: E | str, name: str) -> E:
    if isinstance(value, enum_type):
        return value
    try:
        return enum_type(value)
    except ValueError:
        choices = ", ".join(str(m.value) for m in enum_type)
        raise InvalidInputError(f"invalid {name} {value!r} (choose from {choices})") from None


def _mode(mode: Mode | str) -> Mode:
    if isinstance(mode, Mode):
        return mode
    try:
        return Mode(mode)
    except ValueError:
        choices = ", ".join(m.value for m in Mode)
        raise InvalidInputError(f"invalid search mode {mode!r} (choose from {choices})") from None


def _source_warning(citation: Citation, status: SourceStatus, root: str) -> str:
    match status:
        case SourceStatus.MISSING:
            return f"citation {citation.ref}: {citation.target} does not exist under {root} (kept)"
        case SourceStatus.OUTSIDE:
            return f"citation {citation.ref}: the path leaves the repository root {root}"
        case SourceStatus.BINARY:
            return f"citation {citation.ref}: {citation.target} is a binary file"
        case _:
            return f"citation {citation.ref}: {citation.target} cannot be read"


def _parse_citations(items: Iterable[CitationInput]) -> list[Citation]:
    if isinstance(items, str):
        raise InvalidInputError("citations must be a list of strings, not one string")
    return [parse_citation(item) if isinstance(item, str) else item for item in items]


def _clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    if isinstance(tags, str):
        raise InvalidInputError("tags must be a list of strings, not one string")
    cleaned: list[str] = []
    for tag in tags:
        text = str(tag).strip()
        if not text:
            raise InvalidInputError("invalid tag '': tags cannot be empty")
        if "," in text or "\n" in text:
            raise InvalidInputError(f"invalid tag {text!r}: tags cannot contain commas or newlines")
        if text not in cleaned:
            cleaned.append(text)
    return tuple(cleaned)


def _parse_links(items: Iterable[str | Link]) -> list[Link]:
    links = []
    for item in items:
        if isinstance(item, Link):
            links.append(item)
            continue
        text = str(item).strip()
        if not text:
            raise InvalidInputError("invalid link '': a link needs a target")
        if text.startswith(_TYPED_LINK) and text.endswith(")") and "](" in text:
            kind, _, target = text[len(_TYPED_LINK) : -1].partition("](")
            links.append(Link(target.strip(), kind.strip() or "link", LinkKind.TYPED))
            continue
        kind, sep, target = text.partition(":")
        if sep and kind.isidentifier() and target.strip():
            links.append(Link(target.strip(), kind, LinkKind.TYPED))
        else:
            links.append(Link(text, "link", LinkKind.BARE))
    return links
