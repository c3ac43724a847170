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
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

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
