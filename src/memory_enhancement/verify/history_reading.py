"""Verification history read back: each memory's evidence, its verdicts, the runs, the days.

history.py rewrites a memory's summary only when its verdicts change or a partial run
verifies it; the runs over the whole store made since then vouched for the memory
unchanged, and are replayed onto its summary here, when it is read (`replay`). So a
read costs the summaries and the list of whole-store runs, never the whole history: a
health report over a large store reads a summary per memory. history.py re-exports the
public names, so callers keep reading and writing the history through one module.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.timestamps import maybe_timestamp

if TYPE_CHECKING:
    from memory_enhancement.store.state import State

RECENT_RUNS = 10
# A memory's summary, as the `evidence` table holds it (history.py writes it).
SUMMARY = "citation_id, recent, last_verified, last_valid, mark, seq, runs, path, checks"


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


def evidence(state: State, ids: Iterable[str] | None = None) -> dict[str, Evidence]:
    """Evidence per citation ID (all memories with any history when ids is None)."""
    with state.connect() as db:
        full = full_runs(db)
        summaries = {
            row[0]: replay(row, full)[:3] for row in db.execute(f"SELECT {SUMMARY} FROM evidence")
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
            return int(row[0])
        rows = db.execute(f"SELECT {SUMMARY} FROM evidence WHERE path = ?", (path,)).fetchall()
        full = full_runs(db) if rows else ([], [])
    return sum(replay(row, full)[3] for row in rows)


def verdict_days(state: State, days: int = 90) -> list[tuple[str, dict[str, int]]]:
    """Verdict counts per day, oldest first (the "verdicts over time" chart)."""
    per_day: dict[str, dict[str, int]] = defaultdict(dict)
    with state.connect() as db:
        for day, status, count in db.execute(
            "SELECT day, status, count FROM verdict_days ORDER BY day DESC LIMIT ?", (days * 8,)
        ):
            per_day[day][status] = int(count)
    return sorted(per_day.items())[-days:]


def full_runs(db: sqlite3.Connection) -> tuple[list[int], list[str]]:
    """The runs over the whole store, oldest first: (their sequence numbers, times)."""
    rows = db.execute("SELECT rowid, verified_at FROM runs WHERE scope = 'all' ORDER BY rowid")
    seqs: list[int] = []
    times: list[str] = []
    for seq, moment in rows:
        seqs.append(seq)
        times.append(moment)
    return seqs, times


def replay(
    row: tuple[Any, ...] | None, full: tuple[list[int], list[str]], *, before: int | None = None
) -> tuple[str, str | None, str | None, int]:
    """A summary brought up to date: the runs over the whole store made after it was
    written (and before `before`) vouched for the memory with its mark, unchanged.
    Returns (recent marks, last verified, last valid, runs)."""
    if row is None:
        return "", None, None, 0
    _, recent, verified, valid, mark, seq, runs, *_ = row
    if mark:
        seqs, times = full
        first = bisect.bisect_right(seqs, seq)
        last = bisect.bisect_left(seqs, before) if before is not None else len(seqs)
        count = last - first
        if count > 0:
            recent = (mark * min(count, RECENT_RUNS) + recent)[:RECENT_RUNS]
            verified = times[last - 1]
            valid = verified if mark == "." else valid
            runs += count
    return recent, verified, valid, int(runs)
