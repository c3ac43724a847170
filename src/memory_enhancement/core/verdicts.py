"""Verdicts: what verification says about a citation, and about a memory.

Plain values in the model (a closed set of verdicts, frozen results), so the
front ends, the health report and the history can read them without loading
the verifier that produces them.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memory_enhancement.core.mentions import Mention
from memory_enhancement.core.model import Citation, Fix


class Verdict(enum.Enum):
    VALID = "valid"
    MOVED = "moved"
    STALE = "stale"
    MISSING = "missing"
    OUT_OF_RANGE = "out_of_range"
    SKIPPED = "skipped"
    INVALID = "invalid"
    # Prose mentions only: a path naming several files, a file inside a submodule
    # that is not checked out, and a mention with no history to check it against
    # (only the line count was checked). None of them fails a memory; none vouches.
    AMBIGUOUS = "ambiguous"
    IN_SUBMODULE = "in_submodule"
    UNCHECKED = "unchecked"

    @property
    def failing(self) -> bool:
        """Whether this verdict makes its memory invalid."""
        return self._value_ in FAILING  # by value: an enum member hashes in Python, slowly


FAILING = frozenset({"stale", "missing", "out_of_range", "invalid"})
# Verdicts that say nothing either way: not counted in a memory's confidence.
UNCOUNTED = frozenset({"skipped"})
# The word each verdict is shown with as text: `verify`'s lines, search's marks and the
# prompt block of `context` say the same of one citation (search said STALE of a file
# `verify` called MISSING when it summed up every failing verdict as stale).
MARKS = {
    "valid": "ok",
    "moved": "moved",
    "stale": "STALE",
    "missing": "MISSING",
    "out_of_range": "OUT OF RANGE",
    "skipped": "skipped",
    "invalid": "INVALID",
    "ambiguous": "AMBIGUOUS",
    "in_submodule": "in submodule",
    "unchecked": "unchecked",
}


def failing_marks(checks: Sequence[CitationCheck]) -> str:
    """The marks of the failing verdicts among checks, each once, in `Verdict`'s order
    (`MISSING`, `STALE, MISSING`): what a one-line summary of a failing memory names."""
    found = {c.status._value_ for c in checks}
    return ", ".join(MARKS[v.value] for v in Verdict if v.value in found and v.value in FAILING)


@dataclass(frozen=True, slots=True)
class CitationCheck:
    """The verdict on one citation, and where its text is now."""

    citation: Citation
    status: Verdict
    current_path: str | None = None
    current_line: int | None = None
    reason: str = ""
    renamed_to: str | None = None
    # Prose mentions only: the mention as written, the commit that last changed its
    # memory line (None: not committed, or no history), the files an ambiguous one names.
    mention: Mention | None = None
    written_in: str | None = None
    candidates: tuple[str, ...] = ()
    current_end: int | None = None  # where a range ends now, when it did not just move
    # A stale verdict: the changed line as it reads now, whole (its reason quotes it clipped,
    # and a mention's reason quotes what it read then beside it, clipped alike).
    now: str | None = None

    @property
    def anchored(self) -> bool:
        """A citation without a snippet cannot notice that its line changed."""
        return self.citation.snippet is not None or self.citation.is_url

    @property
    def current_end_line(self) -> int | None:
        c = self.citation
        if c.end_line is None or c.line is None or self.current_line is None:
            return None
        if self.current_end is not None:
            return self.current_end
        return self.current_line + (c.end_line - c.line)


@dataclass(frozen=True, slots=True)
class MemoryVerification:
    """All verdicts for one memory."""

    path: str
    checks: tuple[CitationCheck, ...]
    mentions: tuple[CitationCheck, ...] = ()
    file: str | None = None  # the memory file, for reports that point into it
    lines: tuple[int | None, ...] = ()  # per citation, its line in that file

    @property
    def valid(self) -> bool:
        """No failing citation and no failing mention: mentions are citations (issue 17)."""
        return not any(check.status.failing for check in self.checks) and not any(
            check.status.failing for check in self.mentions
        )

    @property
    def everything(self) -> tuple[CitationCheck, ...]:
        """Declared citations and prose mentions together."""
        return self.checks + self.mentions if self.mentions else self.checks

    @property
    def holding(self) -> float | None:
        """Share of checked citations and mentions that are valid or moved now.

        Skipped URLs are not counted; with nothing checked there is no figure. A
        mention that could not be checked (ambiguous, in a submodule, no history)
        counts as not good: nothing vouches for it. Not the confidence, which
        weighs history too (verify/confidence.py).
        """
        return share_good(self.everything)

    @property
    def confidence(self) -> float | None:
        """`holding`, under the name seed 004 §4.4.2 gives it in verify's JSON."""
        return self.holding

    def count(self, status: Verdict) -> int:
        return sum(check.status is status for check in self.checks)


def share_good(checks: tuple[CitationCheck, ...] | list[CitationCheck]) -> float | None:
    """The share of counted checks that are valid or moved, None when none counts."""
    return share_of([c.status._value_ for c in checks])


def share_of(statuses: list[str]) -> float | None:
    """`share_good` of verdicts given by their statuses (kept verdicts are rows). Counted
    in C (`list.count`): a rerun asks it of 500 memories with 1,500 mentions."""
    counted = len(statuses) - sum(map(statuses.count, UNCOUNTED))
    if not counted:
        return None
    good = statuses.count("valid") + statuses.count("moved")
    return round(good / counted, 4)


@dataclass(frozen=True)
class VerifyOptions:
    fix: bool = False
    dry_run: bool = False
    include_mentions: bool = True
    check_urls: bool = False
    url_timeout: float = 5.0
    write: bool = False
    recheck: bool = False  # judge every cited file, even one that held and did not change
    # Told, in a sentence, when a run starts work that takes seconds (tracing the history of
    # many memory files for their mentions); the CLI passes one only on a terminal.
    notice: Callable[[str], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class VerifyRun:
    """What a run verified, fixed and could not read.

    `results` is a list, or the lazy `core.batch_verdicts.BatchVerdicts` of a run over
    a whole store: the counts below are then read from its tally, without building a
    result per memory."""

    results: Sequence[MemoryVerification]
    fixes: list[Fix] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # Per unreadable memory file: (its path in the store, its file as annotations name
    # it, the reason), for reports that point at it.
    unreadable: list[tuple[str, str, str]] = field(default_factory=list)
    # Memory files a --fix or --write could not edit in place (the format cannot hold
    # the edit), each `path: why`; they were left unchanged, the others written.
    unwritten: list[str] = field(default_factory=list)
    # Per memory verified whose frontmatter does not parse (its prose read as text, its
    # header's citations unknown): (path, file, reason), as `unreadable`.
    headers: list[tuple[str, str, str]] = field(default_factory=list)
    # A `--changed-since` run: the repository files the change touched, so that
    # annotations can put what the change did before what was broken already.
    changed: frozenset[str] | None = None

    def _tally(self) -> Counter[tuple[str, str]]:
        """How many citations ("c") and mentions ("m") got each verdict."""
        tally = getattr(self.results, "tally", None)
        if tally is not None:
            counted: Counter[tuple[str, str]] = tally()
            return counted
        counts: Counter[tuple[str, str]] = Counter()
        for result in self.results:
            counts.update(("c", check.status._value_) for check in result.checks)
            counts.update(("m", check.status._value_) for check in result.mentions)
        return counts

    @property
    def citations(self) -> int:
        return sum(n for (kind, _), n in self._tally().items() if kind == "c")

    @property
    def mentions(self) -> int:
        return sum(n for (kind, _), n in self._tally().items() if kind == "m")

    def count_mentions(self, status: Verdict) -> int:
        return self._tally()["m", status._value_]

    def count(self, status: Verdict) -> int:
        return self._tally()["c", status._value_]

    def ok(self, *, strict: bool = False) -> bool:
        """No failing citation or mention, no unreadable memory file, no header that does
        not parse and no fix left unwritten; with strict, no moved citation either. A
        memory that cannot be read cannot be vouched for."""
        if self.skipped or self.unwritten or self.headers:
            return False
        if any(s in FAILING for _, s in +self._tally()):
            return False
        return not (strict and self.count(Verdict.MOVED))
