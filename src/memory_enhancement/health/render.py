"""The health report as markdown (a pull-request comment), JSON, or one HTML file.

The JSON shape (documented in docs/health.md)::

    {"store", "generated_at", "summary": {"memories", "statuses": {status: n},
     "flags": {flag: n},
     "confidence": {"histogram": [10 counts], "median", "mean"},
     "broken_files": [{"file", "failing_citations", "memories"}]},
     "memories": [{"rank", "path", "id", "title", "status", "flags", "confidence",
                   "confidence_parts": {...}, "last_verified", "uses", "reinforcements",
                   "citations": {"total", "valid", "moved", ...}, "mentions": {...},
                   "dangling_links",
                   "problems": [{"citation", "reason"}]}],
     "history": [{"day", "counts": {verdict: n}}],
     "graph": {"nodes": [{"path", "status", "worst"}], "edges": [{"source", "target", "type"}]},
     "skipped": [...]}
"""

from __future__ import annotations

import statistics
from typing import Any

from memory_enhancement.core.verdicts import Verdict
from memory_enhancement.health.report import STATUSES, HealthReport, MemoryHealth

LABELS = {
    "missing": "missing files",
    "stale": "stale",
    "dangling_links": "dangling links",
    "moved": "moved",  # citations or prose mentions whose code moved (counted apart below)
    "expired": "expired",
    "unchecked": "unchecked mentions",
    "uncited": "uncited",
    "orphan": "orphans",
    "healthy": "healthy",
}
# Said after the counts when they add up to more than the memories: each memory is counted
# under every problem it has (so `orphans: 18` agrees with the `orphans` command), while its
# row shows the most urgent one.
OVERLAP = "a memory with several problems counts under each"
# What one memory's row says: the counts' labels read as plurals ("orphans: 3").
ROW_LABELS = {**LABELS, "orphan": "orphan"}


def as_json(report: HealthReport, limit: int | None = None, offset: int = 0) -> dict[str, Any]:
    """The report as JSON; `memories` holds the ranked memories from `offset` (ranks count
    from the most urgent of all), at most `limit` of them."""
    scores = [m.confidence.score for m in report.memories]
    return {
        "store": report.store,
        "generated_at": report.generated_at,
        "summary": {
            "memories": report.total,
            "statuses": report.status_counts,
            "flags": report.flag_counts,
            "confidence": {
                "histogram": report.histogram,
                "median": statistics.median(scores) if scores else None,
                "mean": round(statistics.fmean(scores), 3) if scores else None,
            },
            "broken_files": [
                {"file": f, "failing_citations": n, "memories": m}
                for f, n, m in report.broken_files
            ],
            "citations": totals(report, "citations"),
            "mentions": totals(report, "mentions"),
        },
        "memories": [
            _memory(n, m)
            for n, m in enumerate(report.memories[offset : _end(offset, limit)], start=offset + 1)
        ],
        "history": [{"day": day, "counts": counts} for day, counts in report.verdict_days],
        "graph": report.graph,
        "skipped": report.skipped,
    }


def _end(offset: int, limit: int | None) -> int | None:
    return None if limit is None else offset + limit


def _memory(rank: int, memory: MemoryHealth) -> dict[str, Any]:
    parts = memory.confidence
    return {
        "rank": rank,
        "path": memory.path,
        "id": f"mem:{memory.citation_id}",
        "title": memory.title,
        "status": memory.status,
        "flags": list(memory.flags),
        "confidence": parts.score,
        "confidence_parts": {
            "evidence": parts.evidence,
            "freshness": parts.freshness,
            "support": parts.support,
            "record": parts.record,
        },
        "last_verified": memory.last_verified,
        "uses": memory.uses,
        "reinforcements": memory.reinforcements,
        "citations": memory.citations,
        "mentions": memory.mentions,
        "dangling_links": memory.dangling_links,
        "problems": [{"citation": c, "reason": r} for c, r in memory.stale_details],
    }


def as_markdown(report: HealthReport, limit: int | None = 20) -> str:
    """A report that reads well as a pull-request comment."""
    counts = report.flag_counts
    attention = [m for m in report.memories if m.status != "healthy"]
    shown = attention[:limit] if limit else attention
    scores = [m.confidence.score for m in report.memories]
    flagged = [f"{LABELS[s]}: **{counts[s]}**" for s in STATUSES if counts[s]]
    lines = [
        "## Memory health",
        "",
        f"**{report.total} {'memory' if report.total == 1 else 'memories'}** in `{report.store}`"
        + "".join(f" · {flag}" for flag in flagged)
        + (f" ({OVERLAP})" if sum(counts.values()) > report.total else ""),
        "",
    ]
    checked = checked_counts(report)
    if checked:
        lines += [checked, ""]
    if scores:
        lines.append(
            f"Confidence: median **{statistics.median(scores):.2f}**, "
            f"mean {statistics.fmean(scores):.2f} · "
            f"distribution `{_sparkline(report.histogram)}` (0 → 1)"
        )
        lines.append("")
    if shown:
        lines += [
            f"### Needs attention ({len(attention)}, most urgent first)",
            "",
            "| # | Memory | Status | Confidence | Citations ok / moved / failing "
            "| Mentions ok / moved / failing | Last verified | Uses |",
            "|--:|--------|--------|-----------:|----------:|----------:|---------------|-----:|",
        ]
        for n, memory in enumerate(shown, start=1):
            verified = (memory.last_verified or "never")[:10]
            lines.append(
                f"| {n} | `{memory.path}` [mem:{memory.citation_id}] | {ROW_LABELS[memory.status]} "
                f"| {memory.confidence.score:.2f} | {ok_moved_failing(memory.citations)} "
                f"| {ok_moved_failing(memory.mentions)} | {verified} | {memory.uses} |"
            )
        if len(attention) > len(shown):
            lines.append(f"| | … {len(attention) - len(shown)} more | | | | | | |")
        lines.append("")
        problems = [m for m in shown if m.stale_details][:10]
        if problems:
            lines += ["<details><summary>Failing citations</summary>", ""]
            for memory in problems:
                for ref, reason in memory.stale_details[:5]:
                    lines.append(f"- `{memory.path}`: `{ref}`: {reason}")
            lines += ["", "</details>", ""]
    elif report.total:
        lines += ["All memories are healthy.", ""]
    else:  # before the first `add`, or with every memory removed
        lines += ["No memories yet.", ""]
    if report.broken_files:
        lines += [
            "### Cited files that broke the most memories",
            "",
            "| File | Failing citations | Memories |",
            "|------|------------------:|---------:|",
        ]
        lines += [f"| `{f}` | {n} | {m} |" for f, n, m in report.broken_files[:10]]
        lines.append("")
    if report.skipped:
        files = (
            "1 memory file" if len(report.skipped) == 1 else f"{len(report.skipped)} memory files"
        )
        lines.append(f"{files} could not be read in full (see `list`).")
        lines.append("")
    lines.append(f"<sub>memory-enhancement health, {report.generated_at}</sub>")
    return "\n".join(lines) + "\n"


def totals(report: HealthReport, kind: str) -> dict[str, int]:
    """The store's citations (kind "citations") or prose mentions ("mentions") by verdict:
    the per-memory counts added up, over every memory."""
    summed = dict.fromkeys(("total", *(v.value for v in Verdict)), 0)
    for memory in report.memories:
        for verdict, n in getattr(memory, kind).items():
            summed[verdict] = summed.get(verdict, 0) + n
    return summed


def failing(counts: dict[str, int]) -> int:
    """How many of these citations or mentions fail: stale, missing, out of range, invalid."""
    return sum(counts.get(k, 0) for k in ("stale", "missing", "out_of_range", "invalid"))


def ok_moved_failing(counts: dict[str, int]) -> str:
    return f"{counts.get('valid', 0)} / {counts.get('moved', 0)} / {failing(counts)}"


_NEITHER = (
    ("ambiguous", "ambiguous"),
    ("unchecked", "unchecked"),
    ("in_submodule", "in a submodule"),
    ("skipped", "skipped"),
)


def checked_counts(report: HealthReport) -> str:
    """The line saying what was checked, citations and prose mentions apart (a memory's
    status counts memories, and `moved` may be either): "" when there was neither."""
    parts = []
    for kind, label in (("citations", "Citations"), ("mentions", "prose mentions")):
        counts = totals(report, kind)
        if counts.get("total"):
            # The verdicts that neither hold nor fail, named, so the counts add up.
            rest = "".join(
                f", {counts[verdict]} {said}" for verdict, said in _NEITHER if counts.get(verdict)
            )
            parts.append(
                f"{label}: **{counts['total']}** ({counts.get('valid', 0)} ok, "
                f"{counts.get('moved', 0)} moved, {failing(counts)} failing{rest})"
            )
    line = " · ".join(parts)
    return line[:1].upper() + line[1:]  # "Prose mentions: ..." when nothing is cited


def _sparkline(histogram: list[int]) -> str:
    bars = "▁▂▃▄▅▆▇█"
    top = max(histogram) or 1
    return "".join(bars[round(n / top * (len(bars) - 1))] if n else " " for n in histogram)
