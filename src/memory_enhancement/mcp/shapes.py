"""The typed shapes of the MCP tools' results (their output schemas).

They describe exactly the dictionaries `serialize.py` builds for `--json`, so
an agent over MCP and a script over the CLI read the same fields. Nested
TypedDicts come from typing_extensions, as pydantic requires on Python 3.11.
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict


class MetadataOut(TypedDict):
    created_at: str | None
    updated_at: str | None
    tags: list[str]
    source: str | None
    expires_at: str | None
    citations: list[str]
    keywords: NotRequired[list[str]]  # another tool's `keywords:`/`topics:`, read as tags


class LinkOut(TypedDict):
    target: str
    type: str
    kind: str
    line: int | None
    # get_memory: what the link finds now, in the words of `links` (resolved, dangling,
    # ambiguous, external, repository, missing), the memory or file, an ambiguous one's choices
    status: NotRequired[str]
    resolved: NotRequired[str | None]
    candidates: NotRequired[list[str]]


class CitationOut(TypedDict):
    ref: str
    kind: str
    path: str | None
    url: str | None
    line: int | None
    end_line: int | None
    snippet: str | None
    verified: str | None


class CheckOut(TypedDict):
    path: str
    line: int | None
    end_line: int | None
    snippet: str | None
    status: str
    current_path: str | None
    current_line: int | None
    reason: str
    anchored: bool
    renamed_to: str | None


class MentionCheckOut(CheckOut):
    mention: str | None
    memory_line: int | None
    column: int | None
    form: str | None
    written_in: str | None
    candidates: list[str]


class FixOut(TypedDict):
    diff: str
    written: bool


class VerificationOut(TypedDict):
    memory_id: str
    valid: bool
    confidence: float | None  # the seed's name for holding
    holding: float | None  # share of checked citations valid or moved now
    stale_citations: list[str]  # where each failing check is listed: citations[i], mentions[i]
    citations: list[CheckOut]
    mentions: NotRequired[list[MentionCheckOut]]
    fix: NotRequired[FixOut]
    header_error: NotRequired[str]  # its frontmatter does not parse: its prose alone verified
    left_out: NotRequired[dict[str, int]]  # MCP: its checks not listed, by status
    cut: NotRequired[str]  # verify_memory: the page of checks, the snippets cut short


class MemoryOut(TypedDict):
    path: str
    id: str | None
    content: str
    metadata: MetadataOut
    links: list[LinkOut]
    title: str
    format: str
    citations: list[CitationOut]
    confidence: float | None
    last_verified: str | None
    extra: dict[str, Any]
    changed: NotRequired[bool]
    warnings: NotRequired[list[str]]
    verification: NotRequired[VerificationOut]
    links_updated: NotRequired[list[str]]  # move, add: memories whose links were rewritten
    cut: NotRequired[str]  # how many snippets were cut short, and where they are whole


class SizeOut(TypedDict):
    chars: int  # the content's characters now
    lines: int
    chars_before: int | None  # before this write; None when it did not read the memory


class WrittenOut(TypedDict):
    """What a write answers (mcp/writes.py): what it did, not the whole memory."""

    path: str
    id: str | None
    title: str
    format: str
    changed: bool
    metadata: MetadataOut
    size: SizeOut
    extra: NotRequired[dict[str, Any]]  # as in MemoryOut, when it holds anything
    diff: NotRequired[str]  # an edit that changed the content: a unified diff, bounded
    moved_from: NotRequired[str]  # move_memory
    citations_written: list[CitationOut]  # the citations this write captured
    links_added: list[LinkOut]  # the links the memory has now that it had not before
    valid: NotRequired[bool]  # verify: the whole memory's verdict after the write
    failing: NotRequired[int]  # verify: how many of its citations and mentions fail
    citation_checks: NotRequired[list[CheckOut]]  # verify: of the citations it captured
    mention_checks: NotRequired[list[MentionCheckOut]]  # verify: of the lines it wrote
    warnings: NotRequired[list[str]]
    links_updated: NotRequired[list[str]]  # move, add, remove: memories whose links it rewrote
    read: str  # the call that gives the whole memory
    cut: NotRequired[str]


class HitMemoryOut(TypedDict):
    """A search or context hit's memory: as list_memories lists it, without the id, path
    and title the hit gives (each hit said them twice)."""

    format: str
    tags: NotRequired[list[str]]
    created_at: NotRequired[str]
    updated_at: NotRequired[str]
    expires_at: NotRequired[str]
    expired: NotRequired[bool]  # only when true
    source: NotRequired[str]
    citations: NotRequired[int]  # only when some


class ListedOut(HitMemoryOut):
    """A memory in list_memories and recent_memories: what `list --json` prints of it
    (`summary_dict`) without the fields that are null, empty, false or 0 (most of them, on
    a Serena store: no dates, tags or source)."""

    path: str
    title: str
    id: NotRequired[str]


class ListingOut(TypedDict):
    memories: list[ListedOut]
    skipped: list[str]
    total: NotRequired[int]  # list_memories: how many there are beyond this page
    cut: NotRequired[str]  # list_memories: which page this is, and the offset of the next


class RemovedOut(TypedDict):
    path: str
    removed: bool
    links_updated: NotRequired[list[str]]  # MEMORY, when it listed the memory
    linked_from: list[str]


class PruneOut(TypedDict):
    dry_run: bool
    removed: list[str]
    would_remove: list[str]
    skipped: list[str]


class HitOut(TypedDict):
    id: str
    path: str
    title: str
    score: float
    snippet: str
    lexical_rank: int | None
    semantic_rank: int | None
    memory: HitMemoryOut  # without its null and empty fields, nor the hit's id, path, title
    confidence: NotRequired[float | None]  # verified hits: health's figure, history included
    verification: NotRequired[VerificationOut]


class SearchOut(TypedDict):
    query: str
    mode: str
    hits: list[HitOut]
    cut: NotRequired[str]  # verify: what each hit's verification left out


class ContextOut(TypedDict):
    context: str
    memories: list[HitOut]
    cut: NotRequired[str]  # verify: what each hit's verification left out


class VerifySummaryOut(TypedDict):
    memories: int
    citations: int
    counts: dict[str, int]
    mentions: int
    mention_counts: dict[str, int]
    valid: bool
    invalid: list[VerificationOut]
    invalid_total: int
    skipped: list[str]
    unparsed_headers: list[str]
    cut: NotRequired[str]  # what was left out of this answer, and the argument that brings it


class EdgeOut(TypedDict):
    source: str
    target: str
    type: str
    depth: int


class DanglingOut(TypedDict):
    source: str
    target: str


class GraphOut(TypedDict):
    root: str
    nodes: dict[str, list[str]]
    visited_count: int
    max_depth_reached: int
    edges: list[EdgeOut]
    cycles: list[list[str]]
    depths: dict[str, int]
    dangling: list[DanglingOut]
    cut: NotRequired[str]


class LinkAtOut(TypedDict):
    type: str
    line: int | None


class BacklinkOut(TypedDict):
    path: str
    type: str
    line: int | None
    links: list[LinkAtOut]


class RelatedOut(TypedDict):
    memory: str
    related: list[BacklinkOut]


class ReinforceOut(TypedDict):
    path: str
    id: str
    reinforcements: int


# -- memory_health: the documented JSON of `health --format json` (docs/health.md) -------


class ConfidenceSummaryOut(TypedDict):
    histogram: list[int]  # memories per confidence tenth, [0, 0.1) ... [0.9, 1.0]
    median: float | None
    mean: float | None


class BrokenFileOut(TypedDict):
    file: str
    failing_citations: int
    memories: int


class HealthSummaryOut(TypedDict):
    memories: int
    statuses: dict[str, int]  # each memory once, under its most urgent flag
    flags: dict[str, int]  # each memory under every flag it carries
    confidence: ConfidenceSummaryOut
    broken_files: list[BrokenFileOut]
    citations: dict[str, int]  # the store's citations by verdict
    mentions: dict[str, int]  # its prose mentions by verdict, apart


class ConfidencePartsOut(TypedDict):
    evidence: float
    freshness: float
    support: float
    record: float


class ProblemOut(TypedDict):
    citation: str
    reason: str


class MemoryHealthOut(TypedDict):
    rank: int
    path: str
    id: str
    title: str
    status: str
    flags: list[str]
    confidence: float
    confidence_parts: ConfidencePartsOut
    last_verified: str | None
    uses: int
    reinforcements: int
    citations: dict[str, int]  # MCP: only the verdicts it has some of
    mentions: dict[str, int]  # MCP: likewise
    dangling_links: int
    problems: list[ProblemOut]


class HistoryDayOut(TypedDict):
    day: str
    counts: dict[str, int]  # MCP: only the verdicts of that day


class GraphNodeOut(TypedDict):
    path: str
    status: str
    worst: bool


class GraphEdgeOut(TypedDict):
    source: str
    target: str
    type: str


class HealthGraphOut(TypedDict):
    nodes: list[GraphNodeOut]
    edges: list[GraphEdgeOut]


class HealthOut(TypedDict):
    store: str
    generated_at: str
    summary: HealthSummaryOut
    memories: list[MemoryHealthOut]
    history: list[HistoryDayOut]
    graph: NotRequired[HealthGraphOut]  # with include_graph
    skipped: list[str]
    cut: NotRequired[str]
