"""Confidence: how much to trust a memory, from its history rather than one run.

    confidence = 0.55 × evidence × (0.5 + 0.5 × freshness)
               + 0.30 × support
               + 0.15 × record

- evidence: the share of its citations that are valid or moved now (the seed's
  per-run confidence). A memory without citations has none: it is `uncited`
  and zero citations earn nothing, they are not "all valid".
- freshness: 0.5 ^ (days since it was last verified valid / 30); 0 if never.
  Evidence that is not checked again fades, by half a month by month.
- support: 1 − 0.5 ^ (confirmations + uses / 4), uses capped at 20. Every
  confirmation (`reinforce`) halves the remaining doubt; four uses by agents
  count as one confirmation.
- record: the share of its recent verification runs (up to 10) in which no
  citation failed; 0 if never verified.

The result is in [0, 1], rounded to two decimals. A memory verified valid
today and never confirmed or used scores 0.70; confirmed twice, 0.93.

This is the one figure called "confidence" (health, `verify --write`, search's
`--min-confidence`); the evidence part alone, the share of citations that hold
now, is called "holding" wherever it is shown (`verify --json`, search's
`--min-holding`), so one word never names two numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from memory_enhancement.core.verdicts import UNCOUNTED, Verdict

if TYPE_CHECKING:
    from memory_enhancement.core.verdicts import CitationCheck
    from memory_enhancement.verify.history_reading import Evidence

HALF_LIFE_DAYS = 30.0
USES_PER_CONFIRMATION = 4.0
MAX_USES = 20
WEIGHTS = {"evidence": 0.55, "support": 0.30, "record": 0.15}


@dataclass(frozen=True)
class Inputs:
    citations: int  # checked citations (URLs not counted unless checked)
    good: int  # valid or moved now
    last_valid: datetime | None
    reinforcements: int
    uses: int
    runs: int
    failed_runs: int


@dataclass(frozen=True)
class Confidence:
    score: float
    evidence: float
    freshness: float
    support: float
    record: float


def compute(inputs: Inputs, now: datetime) -> Confidence:
    """The score is computed from the parts as reported (four decimals), so the parts
    shown in a report reproduce it, and the sub-millisecond gap between recording a
    verification (stored to the millisecond) and reading it back cannot tip the second
    decimal (a memory verified just now and confirmed twice is 0.93, not 0.92)."""
    evidence = inputs.good / inputs.citations if inputs.citations else 0.0
    if inputs.last_valid is None:
        freshness = 0.0
    else:
        days = max((now - inputs.last_valid).total_seconds(), 0.0) / 86400
        freshness = 0.5 ** (days / HALF_LIFE_DAYS)
    doubts = inputs.reinforcements + min(inputs.uses, MAX_USES) / USES_PER_CONFIRMATION
    support = 1 - 0.5**doubts
    record = 1 - inputs.failed_runs / inputs.runs if inputs.runs else 0.0
    evidence, freshness, support, record = (
        round(part, 4) for part in (evidence, freshness, support, record)
    )
    score = (
        WEIGHTS["evidence"] * evidence * (0.5 + 0.5 * freshness)
        + WEIGHTS["support"] * support
        + WEIGHTS["record"] * record
    )
    return Confidence(round(min(max(score, 0.0), 1.0), 2), evidence, freshness, support, record)


def of_checks(checks: Iterable[CitationCheck], facts: Evidence, now: datetime) -> Confidence:
    """A memory's confidence from this run's verdicts (citations and prose mentions) and
    what history says of it: the one computation health, `verify --write` and search
    share, so the same memory reads the same figure in each."""
    counted = [c for c in checks if c.status._value_ not in UNCOUNTED]
    good = sum(c.status in (Verdict.VALID, Verdict.MOVED) for c in counted)
    return compute(
        Inputs(
            citations=len(counted),
            good=good,
            last_valid=facts.last_valid,
            reinforcements=facts.reinforcements,
            uses=facts.uses,
            runs=facts.runs,
            failed_runs=facts.failed_runs,
        ),
        now,
    )
