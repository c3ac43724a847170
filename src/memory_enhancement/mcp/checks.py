"""A memory's verification as an MCP answer holds it: what failed or moved first, a bounded
number of checks, the rest counted by status in `left_out`.

A memory's citations and prose mentions can be many, and each check is about 500 characters
of JSON (plus 150 more in `stale_citations` when it failed, until it pointed to the check
instead: `stale_references`). Measured through the SDK's
client on sducournau/filter_mate's store (26 Serena memories): `verify_memory` on
`performance_optimizations` answered 23,737 characters (38 mentions, 36 of them failing),
`verify_memories` 41,945 for its 10 worst memories (`ui_system` alone 14,263: 24 mentions),
and `search_memories(verify=true)` 83,008 for 10 hits, each with every check, held ones
and 6,365-character snippets included. An agent acts on a few failures at a time; the counts
say how many more there are, and `offset` (verify_memory) pages through them. Every field
keeps its meaning; `stale_citations` points to the failing checks that are listed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from memory_enhancement.core.verdicts import Verdict

# What failed, and what moved (a fix), is what to read: not what held, nor what said
# nothing either way (a path never a file here, several files of that name, no history).
ACTED_ON = frozenset(v.value for v in Verdict if v.failing or v is Verdict.MOVED)
FAILING = frozenset(v.value for v in Verdict if v.failing)

# Checks listed of one memory: in verify_memory and get_memory(verify=true), a page; in an
# answer about several memories (verify_memories, search and context hits), each memory's.
MEMORY_CHECKS = 10
HIT_CHECKS = 3


def bound_checks(
    entry: dict[str, Any], *, limit: int, offset: int = 0, include_valid: bool = True
) -> tuple[int, int]:
    """Keep in `entry` (a `verification_dict`) at most `limit` of its checks from `offset`,
    those that failed or moved first, then (with `include_valid`) the others; each list
    keeps the memory's order. `left_out` counts by status what is not listed.

    Returns (checks in the listing order, checks listed).
    """
    citations = entry["citations"]
    mentions = entry.get("mentions", [])
    checks = [*citations, *mentions]
    acted_on = [c for c in checks if c["status"] in ACTED_ON]
    order = acted_on + ([c for c in checks if c["status"] not in ACTED_ON] if include_valid else [])
    listed = {id(c) for c in order[offset : offset + limit]}
    entry["citations"] = [c for c in citations if id(c) in listed]
    if "mentions" in entry:
        entry["mentions"] = [c for c in mentions if id(c) in listed]
    entry["stale_citations"] = stale_references(entry)
    left = Counter(c["status"] for c in checks if id(c) not in listed)
    if left:
        entry["left_out"] = dict(sorted(left.items()))
    return len(order), len(listed)


def stale_references(entry: dict[str, Any]) -> list[str]:
    """Where each failing check of `entry` is listed: `citations[i]`, `mentions[i]` (the
    answer's own lists). The CLI's `stale_citations` repeats each one's path, line and
    reason (the seed's shape for `verify --json`); over MCP, which no seed shapes, they
    were said twice: ai-agents' `verify_memories` sent 3,700 of its 15,168 characters so."""
    return [
        f"{key}[{i}]"
        for key in ("citations", "mentions")
        for i, check in enumerate(entry.get(key, ()))
        if check["status"] in FAILING
    ]


def held_left_out(entry: dict[str, Any]) -> int:
    """How many of what `entry` left out held or were not judged."""
    return sum(n for status, n in entry.get("left_out", {}).items() if status not in ACTED_ON)


def acted_on_left_out(entry: dict[str, Any]) -> int:
    """How many of what `entry` left out failed or moved."""
    return sum(n for status, n in entry.get("left_out", {}).items() if status in ACTED_ON)


def cap_note(memories: int, limit: int, how: str) -> str | None:
    """The note of an answer whose `memories` memories listed only `limit` of the checks
    that failed or moved; None when none was cut."""
    if not memories:
        return None
    return (
        f"{memories} memories list only {limit} of their failed and moved checks, "
        f"`left_out` counts the rest by status ({how})"
    )
