"""The health report: which memories are stale or doubtful, most urgent first.

It verifies every memory now (and records that in the history), then joins
what the index knows (links, expiry) with what the history knows (past runs,
confirmations, uses) into a status and a confidence per memory. The summary
says how many memories have each problem (a memory with two counts under both, so
`orphans: 18` agrees with the `orphans` command; its status is its most urgent one),
how confidence is spread, and which cited files broke the most memories. Rendering is in
health_render.py.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.core.verdicts import (
    UNCOUNTED,
    CitationCheck,
    MemoryVerification,
    Verdict,
    VerifyRun,
)
from memory_enhancement.graph.traverse import orphans
from memory_enhancement.index import queries
from memory_enhancement.index.index import Index
from memory_enhancement.store.state import State
from memory_enhancement.verify import confidence as conf
from memory_enhancement.verify import history

# The order is the urgency: a missing file is worse than a moved line.
STATUSES = (
    "missing",
    "stale",
    "dangling_links",
    "moved",
    "expired",
    "unchecked",
    "uncited",
    "orphan",
    "healthy",
)
WORST_GRAPH = 15


@dataclass(frozen=True)
class MemoryHealth:
    path: str
    citation_id: str
    title: str
    status: str
    flags: tuple[str, ...]
    confidence: conf.Confidence
    last_verified: str | None
    uses: int
    reinforcements: int
    citations: dict[str, int]
    dangling_links: int
    mentions: dict[str, int] = field(default_factory=dict)  # prose mentions, as citations
    stale_details: tuple[tuple[str, str], ...] = ()  # (citation, reason)

    @property
    def urgency(self) -> tuple[int, float, int, str]:
        """Its status, then the less trusted first, then the one with more failing
        citations and mentions (a first report reads 0.00 for every memory none of whose
        citations holds: path order alone put one dead mention before six)."""
        return (
            STATUSES.index(self.status),
            self.confidence.score,
            -len(self.stale_details),
            self.path,
        )


@dataclass
class HealthReport:
    store: str
    generated_at: str
    memories: list[MemoryHealth]
    status_counts: dict[str, int]  # each memory once, under its most urgent flag
    flag_counts: dict[str, int]  # each memory under every flag it carries (`orphans` lists all)
    histogram: list[int]  # memories per confidence tenth: [0, 0.1), ..., [0.9, 1.0]
    broken_files: list[tuple[str, int, int]]  # (file, failing citations, memories)
    verdict_days: list[tuple[str, dict[str, int]]]
    graph: dict[str, Any] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.memories)


def build(run: VerifyRun, index: Index, state: State, now: datetime) -> HealthReport:
    """Assess every memory from a verification run of the whole store (just made), the
    index (links, expiry) and the history (past runs, confirmations, uses)."""
    now_text = format_timestamp(now)
    verified = {r.path: r for r in run.results}
    with index.connect(sync=False) as conn:  # the run just brought it in step
        rows, skipped = queries.rows(conn)
        dangling = dict(
            conn.execute(
                "SELECT m.path, count(*) FROM links l JOIN memories m ON m.id = l.memory_id "
                "WHERE l.status IN ('dangling', 'ambiguous') GROUP BY m.path"
            ).fetchall()
        )
        lonely = set(orphans(conn))
        edges = conn.execute(
            "SELECT m.path, l.resolved, l.type FROM links l JOIN memories m ON m.id = l.memory_id "
            "WHERE l.status = 'resolved' AND l.resolved != m.path"
        ).fetchall()
    evidence = history.evidence(state, [row.citation_id for row in rows])
    memories = []
    broken: Counter[str] = Counter()
    broken_memories: dict[str, set[str]] = {}
    for row in rows:
        result = verified.get(row.path)
        facts = evidence.get(row.citation_id, history.Evidence())
        health = _assess(
            row, result, facts, dangling.get(row.path, 0), row.path in lonely, now, now_text
        )
        memories.append(health)
        for check in result.everything if result else ():
            if check.status.failing:
                broken[check.citation.target] += 1
                broken_memories.setdefault(check.citation.target, set()).add(row.path)
    memories.sort(key=lambda m: m.urgency)
    counts = Counter(m.status for m in memories)
    flagged = Counter(flag for m in memories for flag in m.flags)
    histogram = [0] * 10
    for memory in memories:
        histogram[min(int(memory.confidence.score * 10), 9)] += 1
    return HealthReport(
        store=str(index.store.root),
        generated_at=now_text,
        memories=memories,
        status_counts={status: counts.get(status, 0) for status in STATUSES},
        flag_counts={flag: flagged.get(flag, 0) for flag in STATUSES},
        histogram=histogram,
        broken_files=[(f, n, len(broken_memories[f])) for f, n in broken.most_common(15)],
        verdict_days=history.verdict_days(state),
        graph=_worst_graph(memories, edges),
        # The index and the verification run both report an unreadable file: list it once.
        skipped=list(dict.fromkeys([*skipped, *run.skipped])),
    )


def _assess(
    row: Any,
    result: MemoryVerification | None,
    facts: history.Evidence,
    dangling: int,
    orphan: bool,
    now: Any,
    now_text: str,
) -> MemoryHealth:
    checks = result.checks if result else ()
    mentions = result.mentions if result else ()
    every = checks + mentions
    counts = Counter(check.status._value_ for check in every)
    counted = [c for c in every if c.status._value_ not in UNCOUNTED]
    score = conf.of_checks(counted, facts, now)
    flags = []
    if counts["missing"]:
        flags.append("missing")
    if counts["stale"] or counts["out_of_range"] or counts["invalid"]:
        flags.append("stale")
    if dangling:
        flags.append("dangling_links")
    if counts["moved"]:
        flags.append("moved")
    if row.expired(now_text):
        flags.append("expired")
    if counts["ambiguous"] or counts["in_submodule"] or counts["unchecked"]:
        flags.append("unchecked")  # mentions nothing could vouch for (issue 17)
    if not counted:
        flags.append("uncited")
    if orphan:
        flags.append("orphan")
    status = flags[0] if flags else "healthy"
    details = tuple((_problem_ref(check), check.reason) for check in every if check.status.failing)
    return MemoryHealth(
        path=row.path,
        citation_id=row.citation_id,
        title=row.title,
        status=status,
        flags=tuple(flags) or ("healthy",),
        confidence=score,
        last_verified=format_timestamp(facts.last_verified) if facts.last_verified else None,
        uses=facts.uses,
        reinforcements=facts.reinforcements,
        citations=_counts(checks),
        dangling_links=dangling,
        stale_details=details,
        mentions=_counts(mentions),
    )


def _counts(checks: tuple[CitationCheck, ...]) -> dict[str, int]:
    counts = Counter(check.status._value_ for check in checks)
    return {"total": len(checks), **{v.value: counts.get(v.value, 0) for v in Verdict}}


def _problem_ref(check: CitationCheck) -> str:
    """A failing citation by its reference; a mention also by where it is in the memory,
    as `path:line` (as written it may hold a backtick, which would end the report's code
    span, or be a list's later item, `55`, without its path)."""
    if check.mention is None:
        return check.citation.ref
    return f"{check.mention.ref_text} (memory line {check.mention.line})"


def _worst_graph(memories: list[MemoryHealth], edges: list[tuple[str, str, str]]) -> dict[str, Any]:
    """The worst memories and the memories they link with, for a picture of where rot spreads."""
    worst = [m.path for m in memories if m.status != "healthy"][:WORST_GRAPH]
    chosen = set(worst)
    picked = [
        (source, target, kind)
        for source, target, kind in edges
        if source in chosen or target in chosen
    ][: WORST_GRAPH * 4]
    nodes = list(dict.fromkeys([*worst, *(p for e in picked for p in e[:2])]))
    status = {m.path: m.status for m in memories}
    return {
        "nodes": [
            {"path": n, "status": status.get(n, "healthy"), "worst": n in chosen} for n in nodes
        ],
        "edges": [{"source": s, "target": t, "type": k} for s, t, k in picked],
    }
