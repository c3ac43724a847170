"""Just-in-time citation verification: valid, moved (and where to), stale, missing.

The seed's rule ("is the snippet on the cited line?") calls every line that
merely moved stale. Here a citation whose snippet left its line is looked for
in the rest of the file (and in the file git says it was renamed to). When the
text occurs more than once, git's diff since the citation was last verified
decides: the old line is mapped forward; an occurrence that the diff *added* is
where the code moved to, while one that was already there before is somebody
else's line, so the citation is stale. Without history the nearest occurrence
is taken.

Work is done in two passes so that git is asked once per run and per base
commit, not once per citation: a local pass settles every citation it can from
the files alone, then the undecided ones are resolved with history together
(history_pass.py, which the Verifier inherits).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory_enhancement.core.batch import CitedBatch, Row
from memory_enhancement.core.batch_verdicts import held
from memory_enhancement.core.citations import squash
from memory_enhancement.core.model import Citation, Memory
from memory_enhancement.core.verdicts import CitationCheck, MemoryVerification, Verdict
from memory_enhancement.verify.decisions import Pending, span_of, stale
from memory_enhancement.verify.file_text import FileText, FileTexts, lead_of
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.history_pass import HistoryPass, oldest_stamp, row_of
from memory_enhancement.verify.line_maps import LineMap
from memory_enhancement.verify.repo import Repository, SourceFile, SourceStatus
from memory_enhancement.verify.settled import SettledFiles, Stamp, give

if TYPE_CHECKING:
    from memory_enhancement.verify.urls import UrlChecker


HERE, AT_LINE = 1, 2  # how a citation stands in its file (see `Verifier._on_line`)


@dataclass
class Verifier(HistoryPass):
    """Verifies citations against one repository; reuse it for a whole run."""

    repo: Repository
    git: Git | None = None
    urls: UrlChecker | None = None
    _texts: FileTexts = field(default_factory=FileTexts, repr=False)
    _bases: dict[str | None, str | None] = field(default_factory=dict, repr=False)
    _maps: dict[str, dict[str, LineMap | None]] = field(default_factory=dict, repr=False)
    # After a run given a record of the cited files: those it judged (the others recalled).
    judged: set[str] | None = field(default=None, repr=False)

    def verify_memories(self, memories: Iterable[Memory]) -> list[MemoryVerification]:
        """Verify a batch of memories (see `verify_batch`), each result in full."""
        memories = list(memories)
        batch = CitedBatch.of([(memory, (), None) for memory in memories])
        _, checks = self.verify_batch(batch)
        results = []
        for i, memory in enumerate(memories):
            rows = range(batch.starts[i], batch.starts[i + 1])
            results.append(MemoryVerification(memory.path, tuple(
                checks[k] if k in checks else held(batch.citation(k))
                for k in rows
            )))  # fmt: skip
        return results

    def verify_batch(
        self, batch: CitedBatch, settled: SettledFiles | None = None
    ) -> tuple[bytearray, dict[int, CitationCheck]]:
        """Verify every citation of a batch in one pass over its cited files.

        Returns, per row of the batch, 1 where the citation is valid on its line (the
        common case, judged on the row itself: no `Citation` is made for it), and the
        verdict on each other row. Each file's citations are judged together and the
        file's working copies are dropped after it (a run's memory stays that of the
        largest file, not of all of them). A citation whose line holds its text but
        which history must confirm (`AT_LINE`) is valid when git has no change to the
        file since the citation's commit; only the rest go to history, together.

        With `settled` (a run over the whole store), a file that is as it was at the last
        such run is not read: its citations' verdicts are as recorded then
        (verify/settled.py); every file judged is recorded there.
        """
        rows = batch.rows
        by_file: dict[str, list[int]] = {}
        for k, row in enumerate(rows):
            by_file.setdefault(row[0], []).append(k)
        valid = bytearray(len(rows))
        checks: dict[int, CitationCheck] = {}
        pending: dict[int, Pending] = {}
        at_line: list[int] = []
        stamps: dict[str, Stamp | None] = {}
        judged = by_file
        if settled is not None:
            judged = {
                target: indexes
                for target, indexes in by_file.items()
                if target not in settled.known
                or (recorded := settled.recall(target, self.repo.stamp(target))) is None
                or not give(recorded, indexes, batch, valid, checks)
            }
        self.judged = set(judged) if settled is not None else None
        if self.git is not None:  # history is read back to the oldest stamp judged
            stamped = {rows[k][4] for indexes in judged.values() for k in indexes}
            self.git.horizon = oldest_stamp(s for s in stamped if s)
        for target, indexes in judged.items():
            known = len(self.repo._cache)
            held = False
            source = self.repo.read(target) if "://" not in target else None
            stamps[target] = source.stamp if source is not None else None
            text = None
            if source is not None and source.status is SourceStatus.TEXT:
                text = self._texts.get(target, source, len(indexes))
            for k in indexes:
                code = self._row_code(rows[k], text) if text is not None else 0
                if code == HERE:
                    valid[k] = 1
                    continue
                if code == AT_LINE:
                    at_line.append(k)
                    held = True
                    continue
                outcome = self._local(batch.citation(k))
                if type(outcome) is Pending:
                    pending[k] = outcome
                    held = True
                else:
                    checks[k] = outcome  # type: ignore[assignment]
            self._forget(list(self.repo._cache)[known:], keep_source=held)
        for k in self._unchanged_since_base(rows, at_line, pending.values()):
            valid[k] = 1
        for k in at_line:
            if not valid[k]:
                outcome = self._local(batch.citation(k))  # history decides (a Pending)
                if type(outcome) is Pending:
                    pending[k] = outcome
                else:
                    checks[k] = outcome  # type: ignore[assignment]
        self._resolve_with_history(list(pending.values()))
        for k, item in pending.items():
            assert item.result is not None
            checks[k] = item.result
        self._check_urls(checks)
        if settled is not None:
            for target, stamp in stamps.items():
                said = {n: checks[k] for n, k in enumerate(by_file[target]) if k in checks}
                settled.record(target, stamp, said)
        return valid, checks

    def _row_code(self, row: Row, text: FileText) -> int:
        """The common cases, judged on the index row (its file a readable text file):
        `HERE` (valid on its line), `AT_LINE` (its line holds the text, history must
        confirm), or 0 (the full way, `_local`)."""
        line, end, snippet = row[1], row[2], row[3]
        if line is None or not snippet:
            return 0
        wanted = "".join(snippet.split())
        if not wanted:
            return 0
        span = 1 if end is None else end - line + 1
        return self._on_line(text, line, span, wanted, row, lead_of(snippet, span))

    def _on_line(
        self, text: FileText, line: int, span: int, wanted: str, row: Row, lead: int
    ) -> int:
        """How a citation that names a line stands in its file (not renamed), from the
        file alone: `HERE` when its line says the snippet and no other line does (or when
        history cannot tell the copies apart, which is what the search ends in);
        `AT_LINE` when its line holds the snippet but as part of a longer line or as one
        of several copies, so history must tell whether this line is still the one
        cited; else 0 (the snippet is elsewhere, if anywhere: `text.occurrences`)."""
        blind = self._base_of(row) is None  # no history to tell copies of the line apart
        if blind:
            # Whether the line holds the snippet is all that matters, and the cited lines
            # alone tell it (most of the time).
            holds = text.holds_at(line, span, wanted)
            if holds is not None:
                return HERE if holds else 0
        if span == 1:
            # Said exactly on its line, and no other line says it (or copies cannot be
            # told apart).
            lines = text.lines
            said = line <= len(lines) and lines[line - 1] == wanted
            if said and (blind or text.how_many(wanted) == 1):
                return HERE
        else:
            here = text.only_here(line, span, wanted)
            if here is not None and (here or blind):
                return HERE
        if not text.starts_on(line, span, wanted, lead):
            return 0
        if blind:
            return HERE
        candidates = text.occurrences(wanted, span, lead)
        window = "".join(text.lines[line - 1 : line - 1 + span])
        return HERE if len(candidates) == 1 and window == wanted else AT_LINE

    def _forget(self, paths: list[str], *, keep_source: bool) -> None:
        """Drop what was worked out about these files (their citations are judged); their
        text too unless a citation waits for history, which reads it again."""
        for path in paths:
            self._texts.forget(path)
            if not keep_source:
                self.repo.forget(path)

    def verify(self, memory: Memory) -> MemoryVerification:
        return self.verify_memories([memory])[0]

    def check(self, citation: Citation) -> CitationCheck:
        """One citation on its own (mentions, tests)."""
        outcome = self._local(citation)
        if isinstance(outcome, Pending):
            self._resolve_with_history([outcome])
            assert outcome.result is not None
            return outcome.result
        return outcome

    # -- pass 1: the files alone ------------------------------------------------

    def _local(self, citation: Citation) -> CitationCheck | Pending:
        if citation.is_url:
            return CitationCheck(citation, Verdict.SKIPPED, reason="URL not checked")
        source = self.repo.read(citation.target)
        if source.status is SourceStatus.MISSING:
            return self._missing(citation)
        if not source.is_text:
            return CitationCheck(citation, Verdict.INVALID, reason=source.reason)
        return self._in_file(citation, source, citation.target)

    def _in_file(
        self, citation: Citation, source: SourceFile, path: str, renamed: bool = False
    ) -> CitationCheck | Pending:
        line, snippet = citation.line, citation.snippet
        moved = Verdict.MOVED if renamed else Verdict.VALID
        where = f"renamed to {path}; " if renamed else ""
        renamed_to = path if renamed else None
        wanted = squash(snippet) if snippet is not None else ""
        if not wanted:
            total = len(source.lines)
            if line is None or (citation.end_line or line) <= total:
                reason = f"{where}no snippet to compare"
                return CitationCheck(citation, moved, path, line, reason, renamed_to)
            last = citation.end_line or line
            reason = f"{where}line {last} is past the end of {path} ({total} lines)"
            return CitationCheck(citation, Verdict.OUT_OF_RANGE, path, None, reason)
        span = span_of(citation)
        lead = lead_of(snippet, span)
        text = self._texts.get(path, source)
        if line is not None and not renamed:
            row = row_of(citation)
            code = self._on_line(text, line, span, wanted, row, lead)
            if code == HERE:
                return CitationCheck(citation, Verdict.VALID, path, line)
            candidates = text.occurrences(wanted, span, lead)
            if code == AT_LINE:
                return Pending(citation, path, candidates, at_line=True, wanted=wanted)
        else:
            candidates = text.occurrences(wanted, span, lead)
        if line is None and candidates:
            found = candidates[0]
            reason = f"{where}snippet at line {found}"
            return CitationCheck(citation, moved, path, found, reason, renamed_to)
        if not candidates:
            if line is not None and not renamed and self._base(citation) is not None:
                return Pending(citation, path, [], wanted=wanted)  # stale; history says where
            return stale(citation, source, path, where)
        return Pending(citation, path, candidates, renamed_to, wanted=wanted)

    def _missing(self, citation: Citation) -> CitationCheck | Pending:
        renamed = self.git.renames.get(citation.target) if self.git else None
        if renamed:
            source = self.repo.read(renamed)
            if source.is_text:
                outcome = self._in_file(citation, source, renamed, renamed=True)
                if isinstance(outcome, Pending):
                    return outcome
                if outcome.status in (Verdict.MOVED, Verdict.VALID):
                    return outcome
                return CitationCheck(
                    citation,
                    Verdict.MISSING,
                    reason=f"file was renamed to {renamed}, but the cited text is not in it",
                    renamed_to=renamed,
                )
        return CitationCheck(citation, Verdict.MISSING, reason=f"{citation.target} not found")

    # -- pass 2: history, `HistoryPass` (history_pass.py) ----------------------

    # -- URLs -------------------------------------------------------------------

    def _check_urls(self, checks: dict[int, CitationCheck]) -> None:
        """Fetch the URLs the run was asked to check (their checks say skipped until then)."""
        if self.urls is None:
            return
        skipped = {k: c for k, c in checks.items() if c.status is Verdict.SKIPPED}
        outcomes = self.urls.check_all([c.citation.target for c in skipped.values()])
        for k, check in skipped.items():
            status, reason = outcomes[check.citation.target]
            verdict = Verdict(status)
            here = check.citation.target if verdict is Verdict.VALID else None
            checks[k] = CitationCheck(check.citation, verdict, here, reason=reason)
