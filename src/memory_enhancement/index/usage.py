"""Which memories were handed to agents: usage by citation ID (seed 002 §5).

Usage lives in the state database, not the index: it cannot be rebuilt from
the files. It is counted by citation ID, so a memory that moves keeps its count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.core.model import MAX_COUNT
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.index import queries
from memory_enhancement.index.index import Index
from memory_enhancement.store.state import State


@dataclass(frozen=True)
class Popular:
    citation_id: str
    path: str | None  # None when the memory no longer exists
    uses: int
    sessions: int
    last_used: str


def record_use(
    state: State,
    used: Sequence[tuple[str, str]],
    *,
    action: str,
    query: str | None,
    session: str,
    moment: datetime,
) -> None:
    """Remember that these memories (citation ID, path) were handed to an agent."""
    if not used:
        return
    stamp = format_timestamp(moment)
    rows = [(cid, path, session, stamp, action, query) for cid, path in used]
    state.run(
        lambda db: db.executemany(
            "INSERT INTO usage(citation_id, path, session, used_at, action, query) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
    )


def popular(state: State, index: Index, limit: int, min_uses: int = 1) -> list[Popular]:
    """The most used memories (by citation ID, so moves do not split their counts)."""
    if limit < 1:
        raise InvalidInputError(f"invalid limit {limit}: it must be at least 1")
    limit, min_uses = min(limit, MAX_COUNT), min(min_uses, MAX_COUNT)
    with state.connect() as db:
        rows = db.execute(
            "SELECT citation_id, count(*) AS uses, count(DISTINCT session), max(used_at) "
            "FROM usage GROUP BY citation_id HAVING uses >= ? "
            "ORDER BY uses DESC, max(used_at) DESC LIMIT ?",
            (min_uses, limit),
        ).fetchall()
    with index.connect() as conn:
        paths = {cid: queries.path_of(conn, cid) for cid, *_ in rows}
    return [Popular(cid, paths[cid], uses, sessions, last) for cid, uses, sessions, last in rows]
