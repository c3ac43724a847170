"""The optional expiry policy: memories nobody verifies, confirms or uses fade away.

In the spirit of Copilot's memory: a memory neither verified valid, confirmed
nor used for `after_days` gets an expiry `grace_days` away. Someone renewing it
(reinforce, or `update --no-expires-at`) keeps it; otherwise it is hidden and
`prune` removes it. Memories that already expire are left alone. This module
chooses; the service writes the expiry and remembers that the policy set it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.core.timestamps import maybe_timestamp
from memory_enhancement.index.rows import Row
from memory_enhancement.verify.history import Evidence

_MAX_DAYS = 36_525  # a century


def choose(
    rows: Iterable[Row],
    facts: Mapping[str, Evidence],
    *,
    now: datetime,
    after_days: float,
    grace_days: float,
) -> tuple[list[Row], datetime]:
    """The memories the policy gives an expiry, and that expiry."""
    # Written so that NaN fails too; a century at most, as dates past that overflow.
    if not (0 < after_days <= _MAX_DAYS and 0 <= grace_days <= _MAX_DAYS):
        raise InvalidInputError(
            f"invalid expiry policy: after_days={after_days!r}, grace_days={grace_days!r} "
            f"(it needs after_days > 0 and grace_days >= 0, at most {_MAX_DAYS} days each)"
        )
    cutoff = now - timedelta(days=after_days)
    chosen = []
    for row in rows:
        if row.expires_at is not None:
            continue
        evidence = facts.get(row.citation_id, Evidence())
        moments = [
            moment
            for moment in (
                evidence.last_valid, evidence.last_used, evidence.last_reinforced,
                maybe_timestamp(row.updated_at), maybe_timestamp(row.created_at),
            )
            if moment is not None
        ]  # fmt: skip
        last = max(moments) if moments else datetime.fromtimestamp(row.mtime_ns / 1e9, UTC)
        if last < cutoff:
            chosen.append(row)
    return chosen, now + timedelta(days=grace_days)
