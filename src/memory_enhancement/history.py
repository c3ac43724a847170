"""Verification history, confirmations and usage: what confidence is computed from.

Every verification (CLI, MCP, `get --verify`, `search --verify`, CI) is
recorded per citation with its time, the git commit and the verdict, in the
state database (it cannot be rebuilt from the files). Two small aggregates are
kept as rows are written, one row per memory per run and one per day and
verdict, so that a health report over a large store reads a summary instead
of the whole history.
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from .timestamps import format_timestamp, maybe_timestamp
from .verify import MemoryVerification, Verdict

if TYPE_CHECKING:
    from .service import MemoryService
    from .storage import Loaded

RECENT_RUNS = 10


@dataclass(frozen=True)
class Evidence:
    """What history says about one memory."""

    runs: int = 0  # recent runs that verified it (at most RECENT_RUNS)
    failed_runs: int = 0  # of those, runs in which a citation failed
    last_verified: datetime | None = None
    last_valid: datetime | None = None  # last run in which no citation failed
    reinforcements: int = 0
    uses: int = 0
    last_used: datetime | None = None
    last_reinforced: datetime | None = None  # a confirmation renews, as the expiry policy says


def record(service: MemoryService, results: Sequence[MemoryVerification]) -> None:
    """Remember the verdicts of a run, per citation, with the time and the commit."""
    checked = [r for r in results if r.checks]
    if not checked:
        return
    ids = citation_ids(service, [r.path for r in checked])
    moment = format_timestamp(service.clock())
    commit = service.git.head() if service.git else None
    run_id = uuid.uuid4().hex
    rows, runs = [], []
    days: Counter[str] = Counter()
    for result in checked:
        cid = ids.get(result.path)
        if cid is None:
            continue
        for n, check in enumerate(result.checks):
            rows.append(
                (run_id, moment, commit, cid, result.path, n, check.citation.ref,
                 check.status.value, check.current_path, check.current_line)
            )  # fmt: skip
            days[check.status.value] += 1
        failing = sum(c.status.failing for c in result.checks)
        moved = result.count(Verdict.MOVED)
        runs.append((cid, run_id, moment, commit, len(result.checks), failing, moved))
    with service.state.connect() as state:
        state.execute("BEGIN IMMEDIATE")
        try:
            state.executemany(
                "INSERT INTO verifications(run_id, verified_at, commit_sha, citation_id, path, "
                "ord, ref, status, current_path, current_line) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            state.executemany(
                "INSERT OR REPLACE INTO memory_runs(citation_id, run_id, verified_at, commit_sha, "
                "total, failing, moved) VALUES (?, ?, ?, ?, ?, ?, ?)",
                runs,
            )
            state.executemany(
                "INSERT INTO verdict_days(day, status, count) VALUES (?, ?, ?) "
                "ON CONFLICT(day, status) DO UPDATE SET count = count + excluded.count",
                [(moment[:10], status, count) for status, count in days.items()],
            )
            state.execute("COMMIT")
        except BaseException:
            state.execute("ROLLBACK")
            raise


def citation_ids(
    service: MemoryService, paths: Iterable[str], loaded: Mapping[str, Loaded] | None = None
) -> dict[str, str]:
    """path -> bare citation ID. The index was brought in step by the caller's run,
    so it is not synced again; a memory it does not know yet is indexed on its own."""
    wanted = list(paths)
    found: dict[str, str] = {}
    with service.index.connect(sync=False) as conn:
        known = {
            row[0]
            for start in range(0, len(wanted), 500)
            for row in conn.execute(
                "SELECT path FROM memories WHERE citation_id IS NOT NULL AND path IN "
                f"({','.join('?' * len(wanted[start : start + 500]))})",
                wanted[start : start + 500],
            )
        }
        missing = [p for p in wanted if p not in known]
        if missing:
            service.index.refresh(conn, missing, loaded)
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                conn.execute(
                    f"SELECT path, citation_id FROM memories WHERE path IN ({marks})", chunk
                ).fetchall()
            )
    return found


def reinforce(service: MemoryService, citation_id: str, path: str, note: str | None) -> int:
    """Record that an agent or a person confirmed a memory; return how many times it was."""
    with service.state.connect() as state:
        state.execute(
            "INSERT INTO reinforcements(citation_id, path, session, reinforced_at, note) "
            "VALUES (?, ?, ?, ?, ?)",
            (citation_id, path, service.session, format_timestamp(service.clock()), note),
        )
        state.execute("DELETE FROM policy_expiry WHERE citation_id = ?", (citation_id,))
        row = state.execute(
            "SELECT count(*) FROM reinforcements WHERE citation_id = ?", (citation_id,)
        ).fetchone()
    return int(row[0])


def evidence(service: MemoryService, ids: Iterable[str] | None = None) -> dict[str, Evidence]:
    """Evidence per citation ID (all memories with any history when ids is None)."""
    runs: dict[str, list[tuple[str, int]]] = defaultdict(list)
    with service.state.connect() as state:
        for cid, moment, failing in state.execute(
            "SELECT citation_id, verified_at, failing FROM memory_runs "
            "ORDER BY citation_id, verified_at DESC"
        ):
            if len(runs[cid]) < RECENT_RUNS:
                runs[cid].append((moment, failing))
        last_valid = dict(
            state.execute(
                "SELECT citation_id, max(verified_at) FROM memory_runs WHERE failing = 0 "
                "GROUP BY citation_id"
            ).fetchall()
        )
        reinforced = {
            cid: (count, last)
            for cid, count, last in state.execute(
                "SELECT citation_id, count(*), max(reinforced_at) FROM reinforcements "
                "GROUP BY citation_id"
            )
        }
        used = {
            cid: (count, last)
            for cid, count, last in state.execute(
                "SELECT citation_id, count(*), max(used_at) FROM usage GROUP BY citation_id"
            )
        }
    keys = set(ids) if ids is not None else {*runs, *reinforced, *used}
    out = {}
    for cid in keys:
        recent = runs.get(cid, [])
        count, last_use = used.get(cid, (0, None))
        confirmations, last_confirmed = reinforced.get(cid, (0, None))
        out[cid] = Evidence(
            runs=len(recent),
            failed_runs=sum(1 for _, failing in recent if failing),
            last_verified=maybe_timestamp(recent[0][0]) if recent else None,
            last_valid=maybe_timestamp(last_valid.get(cid)),
            reinforcements=int(confirmations),
            uses=int(count),
            last_used=maybe_timestamp(last_use),
            last_reinforced=maybe_timestamp(last_confirmed),
        )
    return out


def verdict_days(service: MemoryService, days: int = 90) -> list[tuple[str, dict[str, int]]]:
    """Verdict counts per day, oldest first (the "verdicts over time" chart)."""
    per_day: dict[str, dict[str, int]] = defaultdict(dict)
    with service.state.connect() as state:
        for day, status, count in state.execute(
            "SELECT day, status, count FROM verdict_days ORDER BY day DESC LIMIT ?", (days * 8,)
        ):
            per_day[day][status] = int(count)
    return sorted(per_day.items())[-days:]


def mark_policy_expiry(
    service: MemoryService, citation_id: str, path: str, expires: datetime
) -> None:
    """Remember that the expiry policy (not a person) set this memory's expiry."""
    with service.state.connect() as state:
        state.execute(
            "INSERT OR REPLACE INTO policy_expiry(citation_id, path, set_at, expires_at) "
            "VALUES (?, ?, ?, ?)",
            (citation_id, path, format_timestamp(service.clock()), format_timestamp(expires)),
        )


def policy_expiry(service: MemoryService, citation_id: str) -> str | None:
    """The expiry the policy set on this memory, if it did."""
    with service.state.connect() as state:
        row = state.execute(
            "SELECT expires_at FROM policy_expiry WHERE citation_id = ?", (citation_id,)
        ).fetchone()
    return str(row[0]) if row else None
