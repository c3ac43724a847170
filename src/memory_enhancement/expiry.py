"""The optional expiry policy: memories nobody verifies, confirms or uses fade away.

In the spirit of Copilot's memory: a memory neither verified valid, confirmed
nor used for `after_days` gets an expiry `grace_days` away. Someone renewing it
(reinforce, or `update --no-expires-at`) keeps it; otherwise it is hidden and
`prune` removes it. Memories that already expire are left alone.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from . import history
from .errors import InvalidInputError

if TYPE_CHECKING:
    from .service import MemoryService


def apply_policy(
    service: MemoryService, *, after_days: float, grace_days: float, dry_run: bool
) -> list[tuple[str, datetime]]:
    """The memories given an expiry (path, when), applied unless dry_run."""
    if after_days <= 0 or grace_days < 0:
        raise InvalidInputError("expiry policy needs after_days > 0 and grace_days >= 0")
    now = service.clock()
    cutoff = now - timedelta(days=after_days)
    expires = now + timedelta(days=grace_days)
    listing = service.list_memories(include_expired=True)
    facts = history.evidence(service, [s.citation_id for s in listing.memories])
    chosen = []
    for summary in listing.memories:
        if summary.meta.expires_at is not None:
            continue
        evidence = facts.get(summary.citation_id, history.Evidence())
        moments = [
            moment
            for moment in (
                evidence.last_valid, evidence.last_used, evidence.last_reinforced,
                summary.meta.updated_at, summary.meta.created_at,
            )
            if moment is not None
        ]  # fmt: skip
        last = max(moments) if moments else datetime.fromtimestamp(summary.sort_time, UTC)
        if last < cutoff:
            chosen.append((summary.path, summary.citation_id))
    if not dry_run:
        for path, citation_id in chosen:
            service.update(path, expires_at=expires)
            history.mark_policy_expiry(service, citation_id, path, expires)
    return [(path, expires) for path, _ in chosen]
