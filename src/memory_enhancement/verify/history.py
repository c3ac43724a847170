"""Verification history, confirmations and usage: what confidence is computed from.

Every verification (CLI, MCP, `get --verify`, `search --verify`, CI) is
recorded in the state database (it cannot be rebuilt from the files): one row
per run (time, git commit, whether it covered the whole store), and a row of a
memory's verdicts only when they differ from its last recorded ones (the last
ten changes of each memory are kept, older ones pruned as new ones come).
Two summaries are kept, one per memory (its last ten runs, when it was last
verified and last valid) and one per day and verdict, so a health report over
a large store reads a summary, not the whole history. A memory's summary is
rewritten only when its verdicts change or a partial run verifies it; the runs
over the whole store since it was written are replayed onto it when it is
read (they vouched for it, unchanged). So a nightly verify-all of an unchanged
store writes one run row, and the database stays the same size run after run.
This module writes the history; history_reading.py reads it back (its names are
importable from here too).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.model import is_url
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.core.verdicts import FAILING
from memory_enhancement.verify.history_reading import (
    RECENT_RUNS,
    SUMMARY,
    Evidence,
    evidence,
    full_runs,
    replay,
    runs,
    verdict_days,
    verdicts,
)

if TYPE_CHECKING:
    from memory_enhancement.core.batch_verdicts import BatchVerdicts
    from memory_enhancement.store.state import State

__all__ = [
    "KEPT_RUNS",
    "RECENT_RUNS",
    "Evidence",
    "evidence",
    "mark_policy_expiry",
    "policy_expiry",
    "record",
    "reinforce",
    "runs",
    "verdict_days",
    "verdicts",
]
KEPT_RUNS = 10  # per memory, the runs whose verdicts are kept in full (see _prune)
MENTION_CACHE = "mention_cache"  # the key of the mention cache's generation in history_marks
WITHOUT_MENTIONS = "-"  # `record`'s `cache` for a run that verified no mention
NONE_KEPT = "m"  # and for one that verified mentions and could keep none from the cache


def record(
    state: State,
    results: BatchVerdicts,
    moment: datetime,
    commit: str | None,
    *,
    whole_store: bool = False,
    mark: str | None = None,
    cache: str | None = WITHOUT_MENTIONS,
) -> None:
    """Remember the verdicts of a run, per citation, with the time and the commit.

    The history is kept by citation ID (the batch's), so a memory that moves keeps its
    record. What is written is what changed: one run row, and for each memory only
    verdicts that differ from its last recorded ones (with its summary). A run over
    the `whole_store` also vouches for every memory whose verdicts did not change,
    without a write: readers replay such runs onto each summary (see `history_reading.replay`), so a
    nightly verify-all of an unchanged store costs a run row, not ten thousand.
    Memories are compared a chunk at a time against their summaries, in the text
    `BatchVerdicts.compared` gives (written straight from the rows of a memory whose
    citations all hold), so a run over 50,000 memories never holds them all.

    `mark` names the index the run read (its instance and count of citation changes),
    and `cache` the mention cache's generation the run read or wrote (`WITHOUT_MENTIONS`
    when it verified no mention; None when another run wrote the cache meanwhile). When
    the last whole-store run read the same index and cache, no citation changed since, and
    a memory whose cited files all kept their recorded verdicts and whose mention verdicts
    were all kept (`as_recorded`) has the verdicts that run gave it: if its summary still
    collects runs, it is vouched for without being compared.
    """
    if not results.has_verdicts():
        return
    ids = results.batch.ids
    stamp = format_timestamp(moment)
    counted: list[str] = []  # every status counted, tallied once at the end
    checked = False
    with state.connect() as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            run = _Run(db, uuid.uuid4().hex, stamp, commit, whole_store)
            vouched: set[str] = set()
            read = _read_mark(db, mark, cache) if whole_store else None
            same_index = read is not None and _last_mark(db) == read
            collecting = run.collecting() if same_index else set()
            for start in range(0, len(results), _CHUNK):
                current: dict[str, tuple[int, str, str]] = {}  # cid -> j, as compared, mark
                for j in range(start, min(start + _CHUNK, len(results))):
                    cid = ids[results.order[j]]
                    if same_index and results.as_recorded(j):
                        statuses = results.statuses(j)
                        # A summary set aside (a run missed the memory) is written again,
                        # unless the memory still counts no run (only skipped verdicts).
                        if cid is None or cid in collecting or _flag(set(statuses)) == "":
                            if statuses and cid is not None:
                                checked = True
                                counted += statuses
                                vouched.add(cid)  # as last run: replayed onto its summary
                            continue
                    text, statuses = results.compared(j)
                    if not statuses:
                        continue
                    checked = True
                    if cid is None:
                        continue
                    counted += statuses
                    current[cid] = (j, text, _flag(set(statuses)))
                vouched.update(current)
                run.write(results, current)
            if whole_store:  # what collected runs at the start, unless not read then
                run.forget_others(vouched, collecting if same_index else None)
            if read is not None:
                db.execute(
                    "INSERT OR REPLACE INTO history_marks(key, value) VALUES ('index', ?)", (read,)
                )
            else:  # a summary may now hold what only this run said (a URL checked, say)
                db.execute("DELETE FROM history_marks WHERE key = 'index'")
            if not checked:
                db.execute("ROLLBACK")
                return
            db.executemany(
                "INSERT INTO verdict_days(day, status, count) VALUES (?, ?, ?) "
                "ON CONFLICT(day, status) DO UPDATE SET count = count + excluded.count",
                [(stamp[:10], status, count) for status, count in Counter(counted).items()],
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


_SKIPPED = {"skipped"}


def _flag(kinds: set[str]) -> str:
    """What a run adds to a memory's summary: a failed run ("x"), a clean one ("."), or
    nothing: only a run that checked something vouches for the memory (URLs skipped
    unchecked neither renew it nor count as a clean run)."""
    if not kinds.isdisjoint(FAILING):
        return "x"
    return "" if kinds == _SKIPPED else "."


_CHUNK = 2000  # memories compared and written at a time


class _Run:
    """One run being written: its row, then the verdicts that changed, chunk by chunk."""

    def __init__(
        self, db: sqlite3.Connection, run_id: str, stamp: str, commit: str | None, whole: bool
    ) -> None:
        self.db, self.run_id, self.stamp, self.whole = db, run_id, stamp, whole
        cursor = db.execute(
            "INSERT INTO runs(run_id, verified_at, commit_sha, scope) VALUES (?, ?, ?, ?)",
            (run_id, stamp, commit, "all" if whole else None),
        )
        self.seq = cursor.lastrowid or 0
        self.full = full_runs(db)
        self.encode = json.JSONEncoder(separators=(",", ":")).encode

    def write(self, results: BatchVerdicts, current: dict[str, tuple[int, str, str]]) -> None:
        """The verdicts and summaries of one chunk of memories that must be written."""
        db, seq = self.db, self.seq
        summaries = _summaries_of(db, list(current))
        verdict_rows: list[tuple[str, str, str, str, int]] = []
        rewritten: list[tuple[Any, ...]] = []
        for cid, (j, checks, mark) in current.items():
            path = results.path(j)
            old = summaries.get(cid)
            if self.whole and old is not None and (old[8], old[7], old[4]) == (checks, path, mark):
                continue  # unchanged: this run is replayed onto the summary when it is read
            # (A summary a run stopped collecting, mark "", is written again: a memory that
            # one run did not verify, as a run without mentions does not verify one that
            # only mentions code, is counted again by the next that does.)
            if old is None or old[8] != checks:
                seen = results.seen(j)
                listed = [[_ref(*item[:3]), item[3], item[4], item[5]] for item in seen]
                failing = sum(item[3] in FAILING for item in seen)
                verdict_rows.append((cid, self.run_id, path, self.encode(listed), failing))
            recent, verified, valid, runs = replay(old, self.full, before=seq)
            if mark:
                recent = (mark + recent)[:RECENT_RUNS]
                verified = self.stamp
                valid = self.stamp if mark == "." else valid
                runs += 1
            # A memory never vouched for has no last verification ("" reads as none).
            rewritten.append((cid, recent, verified or "", valid, mark, seq, runs, path, checks))
        db.executemany(
            "INSERT INTO verdicts(citation_id, run_id, path, checks, failing) "
            "VALUES (?, ?, ?, ?, ?)",
            verdict_rows,
        )
        db.executemany(f"INSERT OR REPLACE INTO evidence({SUMMARY}) VALUES ({_MARKS})", rewritten)
        for cid, *_ in verdict_rows:
            _prune(db, cid)

    def collecting(self) -> set[str]:
        """The memories whose summary still collects whole-store runs: only those can be
        vouched for without a write (one a run missed, moved away and back, say, has its
        summary written again)."""
        rows = self.db.execute("SELECT citation_id FROM evidence WHERE mark != ''")
        return {cid for (cid,) in rows}

    def forget_others(self, vouched: set[str], collecting: set[str] | None = None) -> None:
        """Memories the whole store no longer vouches for (deleted, uncited): their summary
        stops collecting this and later runs. `collecting`: this run's `collecting()`, read
        in the same transaction before it wrote (each summary it wrote since is vouched
        for), so not read again: a rerun's thousand summaries were read twice."""
        db, seq = self.db, self.seq
        others = list((self.collecting() if collecting is None else collecting) - vouched)
        rewritten = []
        for row in _summaries_of(db, others).values():
            recent, verified, valid, runs = replay(row, self.full, before=seq)
            rewritten.append((row[0], recent, verified, valid, "", seq, runs, row[7], row[8]))
        db.executemany(f"INSERT OR REPLACE INTO evidence({SUMMARY}) VALUES ({_MARKS})", rewritten)


_MARKS = ", ".join("?" * 9)


def _read_mark(db: sqlite3.Connection, mark: str | None, cache: str | None) -> str | None:
    """What a whole-store run read, as the history keeps it: the index and whether it
    verified mentions, with the mention cache's generation (None when unknown, or when
    the cache changed since the run read or wrote it: another run kept verdicts meanwhile,
    and what this run vouches for may not be what the cache holds now)."""
    if mark is None or cache is None:
        return None
    if cache in (WITHOUT_MENTIONS, NONE_KEPT):
        return f"{mark} {cache}"
    return f"{mark} m:{cache}" if cache_generation(db) == cache else None


def cache_generation(db: sqlite3.Connection) -> str:
    """The mention cache's generation: a token each save of its verdicts rewrites
    (mention_cache.MentionCache.save), "" before the first."""
    row = db.execute("SELECT value FROM history_marks WHERE key = ?", (MENTION_CACHE,)).fetchone()
    return str(row[0]) if row else ""


def _last_mark(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT value FROM history_marks WHERE key = 'index'").fetchone()
    return str(row[0]) if row else None


def _ref(target: str, line: int | None, end: int | None) -> str:
    """A citation's canonical one-line form (`Citation.ref`) from its values."""
    if line is None or is_url(target):
        return target
    return f"{target}:{line}-{end}" if end is not None and end != line else f"{target}:{line}"


def _summaries_of(db: sqlite3.Connection, ids: list[str]) -> dict[str, tuple[Any, ...]]:
    found: dict[str, tuple[Any, ...]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found.update(
            (row[0], row)
            for row in db.execute(
                f"SELECT {SUMMARY} FROM evidence "
                f"WHERE citation_id IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        )
    return found


def _prune(db: sqlite3.Connection, citation_id: str) -> None:
    """Keep the last KEPT_RUNS verdict changes of a memory (the summaries keep counting).

    Incremental: done for the memories a run wrote a change for, on the index of
    (citation_id, id), so it costs nothing when nothing changed.
    """
    db.execute(
        "DELETE FROM verdicts WHERE citation_id = ?1 AND id < (SELECT id FROM verdicts "
        "WHERE citation_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
        (citation_id, KEPT_RUNS - 1),
    )


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
