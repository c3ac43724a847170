"""Reads that go through the index: search, prompt context, citation IDs, usage.

The service layer above `index` and `search`: it keeps the index in step,
applies filters, verifies hits on request (seed 004 `search_with_verification`),
renders prompt context (seed 002 §3.3) and records which memories were handed
to an agent, in which session and for which query (seed 002 §5).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .errors import InvalidInputError, NotFoundError
from .ids import format_citation_id, parse_citation_id
from .search import Filters, Hit, Mode, search
from .timestamps import format_timestamp

if TYPE_CHECKING:
    from .model import Link
    from .results import WriteResult
    from .service import MemoryService
    from .storage import Loaded
    from .verify import MemoryVerification

CHARS_PER_TOKEN = 4  # the estimate Cortex uses
Ranker = Callable[[sqlite3.Connection, str, Filters, int], list[Hit]]


@dataclass(frozen=True)
class SearchResult:
    hit: Hit
    verification: MemoryVerification | None = None
    expired: bool = False  # by the service's clock; only --include-expired returns such hits

    @property
    def citation_id(self) -> str:
        return format_citation_id(self.hit.row.citation_id)


@dataclass(frozen=True)
class Popular:
    citation_id: str
    path: str | None  # None when the memory no longer exists
    uses: int
    sessions: int
    last_used: str


def citation_id_of(service: MemoryService, path: str, loaded: Loaded | None = None) -> str:
    """The bare citation ID of an existing memory, indexing just that memory when needed.

    Reading one memory must not parse the whole store; when the caller already
    read the file (`loaded`, with links), the index takes it as it is.
    """
    if loaded is None or loaded.doc.memory.links is None:
        stat = os.stat(service.store.file_for(path))
        current = (stat.st_mtime_ns, stat.st_size)
        ready = None
    else:
        current = (loaded.mtime_ns, loaded.size)
        ready = {path: loaded}
    with service.index.connect(sync=False) as conn:
        row = conn.execute(
            "SELECT citation_id, mtime_ns, size FROM memories WHERE path = ?", (path,)
        ).fetchone()
        if row is None or row[0] is None or tuple(row[1:]) != current:
            service.index.refresh(conn, [path], ready)
            row = conn.execute(
                "SELECT citation_id FROM memories WHERE path = ?", (path,)
            ).fetchone()
    if row is None or row[0] is None:  # pragma: no cover - the file was just read
        raise NotFoundError(f"memory not found: {path!r}")
    return str(row[0])


def indexed_links(service: MemoryService, path: str) -> tuple[Link, ...]:
    """A memory's links as the index extracted them (call after citation_id_of).

    `get` reads the file without extracting links and takes them from the index
    row it just checked is current: same result, no markdown parser to load.
    """
    from .model import Link, LinkKind

    with service.index.connect(sync=False) as conn:
        rows = conn.execute(
            "SELECT l.target, l.type, l.kind, l.line FROM links l "
            "JOIN memories m ON m.id = l.memory_id WHERE m.path = ? ORDER BY l.ord",
            (path,),
        ).fetchall()
    return tuple(Link(target, kind, LinkKind(how), line) for target, kind, how, line in rows)


def resolve(service: MemoryService, text: str) -> str:
    """The path of the memory a citation ID names."""
    bare = parse_citation_id(text)
    with service.index.connect() as conn:
        path = service.index.path_of(conn, bare)
    if path is None:
        with service.state.connect() as state:
            owner = state.execute(
                "SELECT identity FROM ids WHERE citation_id = ?", (bare,)
            ).fetchone()
        gone = f" (it belonged to {owner[0]!r}, which no longer exists)" if owner else ""
        raise NotFoundError(f"unknown citation ID {format_citation_id(bare)}{gone}")
    return path


def run_search(
    service: MemoryService,
    query: str,
    *,
    limit: int = 10,
    mode: Mode = Mode.LEXICAL,
    filters: Filters,
    verify: bool = False,
    min_confidence: float | None = None,
    action: str | None = "search",
) -> list[SearchResult]:
    """Search, verify the hits just in time if asked, and record their use (unless action=None)."""
    if min_confidence is not None and not 0 <= min_confidence <= 1:
        raise InvalidInputError(f"invalid min_confidence {min_confidence}: use a value in [0, 1]")
    # A confidence floor can only be applied to verified hits: asking for one implies
    # verification, rather than silently returning stale hits the caller meant to drop.
    verify = verify or bool(min_confidence)
    filters = Filters(filters.category, filters.tag, filters.include_expired, _now(service))
    ranker = _semantic_ranker(service) if mode is not Mode.LEXICAL else None
    fetch = limit * 3 if verify and min_confidence else limit
    with service.index.connect() as conn:
        hits = search(conn, query, filters, limit=fetch, mode=mode, semantic=ranker)
    results = [SearchResult(hit, expired=hit.row.expired(filters.now)) for hit in hits]
    if verify and results:
        from .verification import VerifyOptions, verify_paths

        run = verify_paths(service, [r.hit.row.path for r in results], VerifyOptions())
        by_path = {v.path: v for v in run.results}
        results = [replace(r, verification=by_path.get(r.hit.row.path)) for r in results]
        if min_confidence:
            results = [r for r in results if _confidence(r) >= min_confidence]
    results = results[:limit]
    if action:
        used = [(r.hit.row.citation_id, r.hit.row.path) for r in results]
        record_use(service, used, action, query)
    return results


def _confidence(result: SearchResult) -> float:
    """The hit's share of citations valid or moved now; 0 for a hit with nothing to check.

    A memory without citations (or with only unchecked URLs) has shown nothing, so
    asking for a minimum confidence leaves it out: zero citations is not "all valid".
    """
    verification = result.verification
    if verification is None or verification.confidence is None:
        return 0.0
    return verification.confidence


def _semantic_ranker(service: MemoryService) -> Ranker:
    from .semantic import embedder as embedder_for
    from .semantic import semantic_search

    embedder = embedder_for(service.semantic_model)

    def rank(conn: sqlite3.Connection, query: str, filters: Filters, limit: int) -> list[Hit]:
        return semantic_search(conn, embedder, query, filters, limit)

    return rank


def render_context(
    service: MemoryService, results: Sequence[SearchResult], max_tokens: int | None
) -> tuple[str, list[SearchResult]]:
    """A markdown block for a prompt: each memory quoted, then `[mem:ID] - date, path`.

    With verification, a memory whose citations failed is flagged, not served as
    truth. Memories are added whole while they fit the token budget (chars / 4);
    a first memory too long for the budget alone is cut, and says so. The cut is
    measured on the quoted block (each line gains `> `), so the budget holds; a
    budget too small for even one memory's citation line gives an empty block.
    """
    if max_tokens is not None and max_tokens < 1:
        raise InvalidInputError(f"invalid max_tokens {max_tokens}: it must be at least 1")
    budget = None if max_tokens is None else max_tokens * CHARS_PER_TOKEN
    blocks: list[str] = []
    used: list[SearchResult] = []
    size = 0
    for result in results:
        memory = service.store.read(result.hit.row.path, links=False).doc.memory
        block = _block(memory.content, result)
        if budget is not None and size + len(block) > budget:
            if blocks:
                break
            cut = _cut_to_fit(memory.content, result, budget)
            if cut is None:
                break
            block = cut
        blocks.append(block)
        used.append(result)
        size += len(block) + 1
    return "\n".join(blocks), used


def _cut_to_fit(content: str, result: SearchResult, budget: int) -> str | None:
    """The longest block of a prefix of content, marked as truncated, within budget."""

    def cut(chars: int) -> str:
        return _block(content[:chars].rstrip() + "\n[… truncated to fit]", result)

    if len(cut(0)) > budget:
        return None
    low, high = 0, len(content)  # cut(low) fits; find the largest such prefix
    while low < high:
        middle = (low + high + 1) // 2
        if len(cut(middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    return cut(low)


def _block(content: str, result: SearchResult) -> str:
    row = result.hit.row
    day = (row.updated_at or row.created_at or "")[:10]
    quoted = "\n".join(f"> {line}" if line else ">" for line in content.splitlines())
    footer = f"> {format_citation_id(row.citation_id)} - {day + ', ' if day else ''}{row.path}"
    verification = result.verification
    if verification is not None and verification.checks:
        state = _verdict_note(verification)
        footer += f" ({state})"
        if not verification.valid:
            quoted = (
                f"> **Warning: stale memory, check before relying on it.** {state}\n>\n{quoted}"
            )
    return f"{quoted}\n>\n{footer}\n"


def _verdict_note(verification: MemoryVerification) -> str:
    confidence = verification.confidence
    share = "" if confidence is None else f", confidence {confidence:.0%}"
    if verification.valid:
        moved = sum(c.status.value == "moved" for c in verification.checks)
        return f"verified{share}" + (f", {moved} citation(s) moved" if moved else "")
    failing = [c for c in verification.checks if c.status.failing]
    return f"STALE: {len(failing)} of {len(verification.checks)} citations fail{share}"


def record_use(
    service: MemoryService, used: Sequence[tuple[str, str]], action: str, query: str | None
) -> None:
    """Remember that these memories (citation ID, path) were handed to an agent."""
    if not used:
        return
    moment = format_timestamp(service.clock())
    with service.state.connect() as state:
        state.executemany(
            "INSERT INTO usage(citation_id, path, session, used_at, action, query) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(cid, path, service.session, moment, action, query) for cid, path in used],
        )


def popular(service: MemoryService, limit: int, min_uses: int = 1) -> list[Popular]:
    """The most used memories (by citation ID, so moves do not split their counts)."""
    if limit < 1:
        raise InvalidInputError(f"invalid limit {limit}: it must be at least 1")
    with service.state.connect() as state:
        rows = state.execute(
            "SELECT citation_id, count(*) AS uses, count(DISTINCT session), max(used_at) "
            "FROM usage GROUP BY citation_id HAVING uses >= ? "
            "ORDER BY uses DESC, max(used_at) DESC LIMIT ?",
            (min_uses, limit),
        ).fetchall()
    with service.index.connect() as conn:
        paths = {cid: service.index.path_of(conn, cid) for cid, *_ in rows}
    return [Popular(cid, paths[cid], uses, sessions, last) for cid, uses, sessions, last in rows]


def _now(service: MemoryService) -> str:
    return format_timestamp(service.clock())


def find(service: MemoryService, reference: str) -> str:
    """An existing memory from a path, a citation ID or a unique name."""
    from .links import LinkStatus, Resolver
    from .model import Link, LinkKind

    try:
        return service.store.locate(reference)
    except NotFoundError:
        pass
    text = reference.strip()
    if text.startswith(("mem:", "[mem:")):
        return resolve(service, text)
    with service.index.connect() as conn:
        paths = [r[0] for r in conn.execute("SELECT path FROM memories WHERE error IS NULL")]
    found = Resolver(paths).resolve("", Link(text, "link", LinkKind.BARE))
    if found.status is LinkStatus.RESOLVED and found.target:
        return found.target
    if found.candidates:
        raise InvalidInputError(f"{reference!r} is ambiguous: {', '.join(found.candidates[:5])}")
    raise NotFoundError(f"memory not found: {reference!r} (store {service.store.root})")


def graduate(service: MemoryService, path: str, target: MemoryService) -> WriteResult:
    """Copy a memory into another store (the global one), keeping citations; link the two."""
    from .model import Link, LinkKind

    if target.store.root == service.store.root:
        raise InvalidInputError("cannot graduate a memory into its own store")
    # action=None: reading the memory to copy it is not an agent using it (seed 002 §5).
    found = service.find(path)  # a path, a [mem:ID] as `stats graduation` shows, or a name
    source = service.get(found, include_expired=True, action=None).memory
    link_back = Link(f"{service.store.name}:{source.path}", "graduated_from", LinkKind.TYPED)
    result = target.add(
        source.path, source.content, tags=source.meta.tags, expires_at=source.meta.expires_at,
        citations=source.meta.citations, links=[link_back], source="graduate",
    )  # fmt: skip
    link_out = Link(f"{target.store.name}:{result.path}", "graduated_to", LinkKind.TYPED)
    service.add_links(source.path, [link_out])
    return result
