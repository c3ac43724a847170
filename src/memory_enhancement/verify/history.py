"""Verification history, confirmations and usage: what confidence is computed from.

Every verification (CLI, MCP, `get --verify`, `search --verify`, CI) is
recorded per citation with its time, the git commit and the verdict, in the
state database (it cannot be rebuilt from the files): one row per run, and one
row per memory per run holding the verdicts of its citations (the last ten
runs of each memory are kept in full, older ones pruned). Two summaries
are kept up to date as runs are written, one per memory (its last ten runs,
when it was last verified and last valid) and one per day and verdict, so a
health report over a large store reads a summary, not the whole history, and
stays as fast after a thousand runs as after one.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.timestamps import format_timestamp, maybe_timestamp

if TYPE_CHECKING:
    from memory_enhancement.core.verdicts import MemoryVerification
    from memory_enhancement.store.state import State

RECENT_RUNS = 10
KEPT_RUNS = 10  # per memory, the runs whose verdicts are kept in full (see _prune)


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


def record(
    state: State,
    results: Sequence[MemoryVerification],
    ids: Mapping[str, str],
    moment: datetime,
    commit: str | None,
) -> None:
    """Remember the verdicts of a run, per citation, with the time and the commit.

    `ids` maps each memory's path to its citation ID (the history is kept by ID,
    so a memory that moves keeps its record).
    """
    checked = [r for r in results if r.checks]
    if not checked:
        return
    stamp = format_timestamp(moment)
    run_id = uuid.uuid4().hex
    rows: list[tuple[str, str, str, str, int]] = []
    evidence: list[tuple[str, int]] = []
    encode = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps makes one per call
    days: Counter[str] = Counter()
    for result in checked:
        cid = ids.get(result.path)
        if cid is None:
            continue
        # `_value_`, not `.value`: the enum property costs a Python call per citation.
        statuses: list[str] = [c.status._value_ for c in result.checks]
        days.update(statuses)
        checks = [
            [c.citation.ref, status, c.current_path, c.current_line]
            for c, status in zip(result.checks, statuses, strict=True)
        ]
        failing = sum(c.status.failing for c in result.checks)
        rows.append((cid, run_id, result.path, encode(checks), failing))
        if any(status != "skipped" for status in statuses):
            # Only a run that checked something vouches for the memory: URLs skipped
            # unchecked neither renew it nor count as a clean run.
            evidence.append((cid, failing))
    with state.connect() as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT INTO runs(run_id, verified_at, commit_sha) VALUES (?, ?, ?)",
                (run_id, stamp, commit),
            )
            db.executemany(
                "INSERT INTO verdicts(citation_id, run_id, path, checks, failing) "
                "VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            _update_evidence(db, evidence, stamp)
            db.executemany(
                "INSERT INTO verdict_days(day, status, count) VALUES (?, ?, ?) "
                "ON CONFLICT(day, status) DO UPDATE SET count = count + excluded.count",
                [(stamp[:10], status, count) for status, count in days.items()],
            )
            (count,) = db.execute("SELECT max(rowid) FROM runs").fetchone()
            if count % KEPT_RUNS == 0:
                _prune(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


def _prune(state: sqlite3.Connection) -> None:
    """Keep the verdicts of each memory's last KEPT_RUNS runs, drop older ones.

    A nightly verify-all of 10k memories writes about 3 MB of verdicts; kept
    forever that is a gigabyte a year that nothing reads, since confidence and
    the health report read the summaries. Run every KEPT_RUNS runs, so a memory
    has between KEPT_RUNS and twice that many rows.
    """
    state.execute(
        "DELETE FROM verdicts WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER "
        "(PARTITION BY citation_id ORDER BY id DESC) AS n FROM verdicts) WHERE n > ?)",
        (KEPT_RUNS,),
    )


def _update_evidence(state: sqlite3.Connection, runs: list[tuple[str, int]], moment: str) -> None:
    """Fold one run into each memory's summary, in SQL: `recent` has one mark per run,
    newest first ('x' a run in which a citation failed, '.' a clean one), at most
    RECENT_RUNS; `last_valid` moves only when the run was clean."""
    state.executemany(
        "INSERT INTO evidence(citation_id, recent, last_verified, last_valid) "
        "VALUES (?1, ?2, ?3, CASE WHEN ?2 = '.' THEN ?3 END) "
        "ON CONFLICT(citation_id) DO UPDATE SET "
        f"recent = substr(excluded.recent || evidence.recent, 1, {RECENT_RUNS}), "
        "last_verified = excluded.last_verified, "
        "last_valid = coalesce(excluded.last_valid, evidence.last_valid)",
        [(cid, "x" if failing else ".", moment) for cid, failing in runs],
    )


def verdicts(state: State, path: str | None = None) -> list[tuple[Any, ...]]:
    """Every recorded citation verdict, oldest first:
    (verified_at, commit, memory path, citation index, citation, verdict)."""
    out = []
    with state.connect() as db:
        rows = db.execute(
            "SELECT r.verified_at, r.commit_sha, v.path, v.checks FROM verdicts v "
            "JOIN runs r ON r.run_id = v.run_id "
            + ("WHERE v.path = ? " if path else "")
            + "ORDER BY r.verified_at, v.id",
            (path,) if path else (),
        ).fetchall()
    for verified_at, commit, memory, checks in rows:
        for n, (ref, status, *_) in enumerate(json.loads(checks)):
            out.append((verified_at, commit, memory, n, ref, status))
    return out


def runs(state: State, path: str | None = None) -> int:
    """How many verification runs were recorded (that verified this memory, with a path)."""
    with state.connect() as db:
        if path is None:
            row = db.execute("SELECT count(*) FROM runs").fetchone()
        else:
            row = db.execute(
                "SELECT count(DISTINCT run_id) FROM verdicts WHERE path = ?", (path,)
            ).fetchone()
    return int(row[0])


def reinforce(
    state: State, citation_id: str, path: str, *, session: str, moment: datetime, note: str | None
) -> int:
    """Record that an agent or a person confirmed a memory; return how many times it was."""
    with state.connect() as db:
        db.execute(
            "INSERT INTO reinforcements(citation_id, path, session, reinforced_at, note) "
            "VALUES (?, ?, ?, ?, ?)",
            (citation_id, path, session, format_timestamp(moment), note),
        )
        db.execute("DELETE FROM policy_expiry WHERE citation_id = ?", (citation_id,))
        row = db.execute(
            "SELECT count(*) FROM reinforcements WHERE citation_id = ?", (citation_id,)
        ).fetchone()
    return int(row[0])


def evidence(state: State, ids: Iterable[str] | None = None) -> dict[str, Evidence]:
    """Evidence per citation ID (all memories with any history when ids is None)."""
    with state.connect() as db:
        summaries = {
            cid: (recent, last_verified, last_valid)
            for cid, recent, last_verified, last_valid in db.execute(
                "SELECT citation_id, recent, last_verified, last_valid FROM evidence"
            )
        }
        reinforced = {
            cid: (count, last)
            for cid, count, last in db.execute(
                "SELECT citation_id, count(*), max(reinforced_at) FROM reinforcements "
                "GROUP BY citation_id"
            )
        }
        used = {
            cid: (count, last)
            for cid, count, last in db.execute(
                "SELECT citation_id, count(*), max(used_at) FROM usage GROUP BY citation_id"
            )
        }
    keys = set(ids) if ids is not None else {*summaries, *reinforced, *used}
    out = {}
    for cid in keys:
        recent, last_verified, last_valid = summaries.get(cid, ("", None, None))
        count, last_use = used.get(cid, (0, None))
        confirmations, last_confirmed = reinforced.get(cid, (0, None))
        out[cid] = Evidence(
            runs=len(recent),
            failed_runs=recent.count("x"),
            last_verified=maybe_timestamp(last_verified),
            last_valid=maybe_timestamp(last_valid),
            reinforcements=int(confirmations),
            uses=int(count),
            last_used=maybe_timestamp(last_use),
            last_reinforced=maybe_timestamp(last_confirmed),
        )
    return out


def verdict_days(state: State, days: int = 90) -> list[tuple[str, dict[str, int]]]:
    """Verdict counts per day, oldest first (the "verdicts over time" chart)."""
    per_day: dict[str, dict[str, int]] = defaultdict(dict)
    with state.connect() as db:
        for day, status, count in db.execute(
            "SELECT day, status, count FROM verdict_days ORDER BY day DESC LIMIT ?", (days * 8,)
        ):
            per_day[day][status] = int(count)
    return sorted(per_day.items())[-days:]


def mark_policy_expiry(
    state: State, citation_id: str, path: str, *, moment: datetime, expires: datetime
) -> None:
    """Remember that the expiry policy (not a person) set this memory's expiry."""
    with state.connect() as db:
        db.execute(
            "INSERT OR REPLACE INTO policy_expiry(citation_id, path, set_at, expires_at) "
            "VALUES (?, ?, ?, ?)",
            (citation_id, path, format_timestamp(moment), format_timestamp(expires)),
        )


def policy_expiry(state: State, citation_id: str) -> str | None:
    """The expiry the policy set on this memory, if it did."""
    with state.connect() as db:
        row = db.execute(
            "SELECT expires_at FROM policy_expiry WHERE citation_id = ?", (citation_id,)
        ).fetchone()
    return str(row[0]) if row else None
