"""Verdicts: what verification says about a citation, and about a memory.

Plain values in the model (a closed set of verdicts, frozen results), so the
front ends, the health report and the history can read them without loading
the verifier that produces them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from memory_enhancement.core.model import Citation, Fix


class Verdict(enum.Enum):
    VALID = "valid"
    MOVED = "moved"
    STALE = "stale"
    MISSING = "missing"
    OUT_OF_RANGE = "out_of_range"
    SKIPPED = "skipped"
    INVALID = "invalid"

    @property
    def failing(self) -> bool:
        """Whether this verdict makes its memory invalid."""
        return self._value_ in _FAILING  # by value: an enum member hashes in Python, slowly


_FAILING = frozenset({"stale", "missing", "out_of_range", "invalid"})


@dataclass(frozen=True, slots=True)
class CitationCheck:
    """The verdict on one citation, and where its text is now."""

    citation: Citation
    status: Verdict
    current_path: str | None = None
    current_line: int | None = None
    reason: str = ""
    renamed_to: str | None = None

    @property
    def anchored(self) -> bool:
        """A citation without a snippet cannot notice that its line changed."""
        return self.citation.snippet is not None or self.citation.is_url

    @property
    def current_end_line(self) -> int | None:
        c = self.citation
        if c.end_line is None or c.line is None or self.current_line is None:
            return None
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
        return not any(check.status.failing for check in self.checks)

    @property
    def confidence(self) -> float | None:
        """Share of checked citations that are valid or moved (seed 004 §4.4.2).

        Skipped URLs are not counted; with nothing checked there is no figure.
        """
        counted = [c for c in self.checks if c.status is not Verdict.SKIPPED]
        if not counted:
            return None
        good = sum(c.status in (Verdict.VALID, Verdict.MOVED) for c in counted)
        return round(good / len(counted), 4)

    def count(self, status: Verdict) -> int:
        return sum(check.status is status for check in self.checks)


@dataclass(frozen=True)
class VerifyOptions:
    fix: bool = False
    dry_run: bool = False
    include_mentions: bool = False
    check_urls: bool = False
    url_timeout: float = 5.0
    write: bool = False


@dataclass(frozen=True)
class VerifyRun:
    results: list[MemoryVerification]
    fixes: list[Fix] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def citations(self) -> int:
        return sum(len(r.checks) for r in self.results)

    def count(self, status: Verdict) -> int:
        return sum(r.count(status) for r in self.results)

    def ok(self, *, strict: bool = False) -> bool:
        """No failing citation and no unreadable memory file; with strict, no moved
        citation either. A memory that cannot be read cannot be vouched for."""
        if self.skipped or any(not r.valid for r in self.results):
            return False
        return not (strict and self.count(Verdict.MOVED))
