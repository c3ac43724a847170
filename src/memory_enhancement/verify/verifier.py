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
the files alone, then the undecided ones are resolved with history together.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.citations import squash
from memory_enhancement.core.model import Citation, Memory
from memory_enhancement.core.verdicts import CitationCheck, MemoryVerification, Verdict
from memory_enhancement.verify.git import Git, LineMap
from memory_enhancement.verify.repo import Repository, SourceFile, SourceStatus

if TYPE_CHECKING:
    from memory_enhancement.verify.urls import UrlChecker


@dataclass
class _Pending:
    """A citation whose verdict needs history: where to look and what was found."""

    citation: Citation
    path: str  # where the file is now (after a rename)
    candidates: list[int]
    renamed_to: str | None = None
    result: CitationCheck | None = None
    at_line: bool = False  # the cited line still holds the snippet (maybe as part of more)
    wanted: str = ""  # the snippet, squashed


_UNSET: Any = None


@dataclass
class Verifier:
    """Verifies citations against one repository; reuse it for a whole run."""

    repo: Repository
    git: Git | None = None
    urls: UrlChecker | None = None
    _squashed: dict[str, list[str]] = field(default_factory=dict, repr=False)
    _bases: dict[str | None, str | None] = field(default_factory=dict, repr=False)
    _counts: dict[str, Counter[str]] = field(default_factory=dict, repr=False)
    _joined_texts: dict[str, str] = field(default_factory=dict, repr=False)
    _starts: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _found: dict[str, dict[tuple[str, int], list[int]]] = field(default_factory=dict, repr=False)

    def verify_memories(self, memories: Iterable[Memory]) -> list[MemoryVerification]:
        """Verify a batch in one pass over its cited files: each file's citations are
        judged together and the file's working copies are dropped after it (a run's
        memory stays that of the largest file, not of all of them); only memories with
        a citation left for history (or a URL to fetch) are completed after the batch."""
        memories = list(memories)
        if self.git is not None:
            self.git.horizon = _oldest_stamp(memories)
        cited: list[Citation] = []
        by_file: dict[str, list[int]] = {}
        for memory in memories:
            for citation in memory.meta.citations:
                by_file.setdefault(citation.target, []).append(len(cited))
                cited.append(citation)
        outcomes: list[CitationCheck | _Pending] = [_UNSET] * len(cited)
        waiting = bytearray(len(cited))
        pending: list[_Pending] = []
        settle, local = self._settled, self._local
        for indexes in by_file.values():
            known = len(self.repo._cache)
            held = False
            for k in indexes:
                outcome = settle(cited[k]) or local(cited[k])
                if type(outcome) is _Pending:
                    pending.append(outcome)
                    waiting[k] = held = True
                outcomes[k] = outcome
            self._forget(list(self.repo._cache)[known:], keep_source=held)
        results: list[MemoryVerification] = []
        unfinished: list[tuple[int, str, list[CitationCheck | _Pending]]] = []
        start = 0
        for memory in memories:
            end = start + len(memory.meta.citations)
            row = outcomes[start:end]
            if self.urls is not None or waiting.find(1, start, end) != -1:
                unfinished.append((len(results), memory.path, row))
            results.append(MemoryVerification(memory.path, tuple(row)))  # type: ignore[arg-type]
            start = end
        self._resolve_with_history(pending)
        self._check_urls([row for _, _, row in unfinished])
        for at, path, row in unfinished:
            checks = tuple(item.result if isinstance(item, _Pending) else item for item in row)
            results[at] = MemoryVerification(path, checks)  # type: ignore[arg-type]
        return results

    def _forget(self, paths: list[str], *, keep_source: bool) -> None:
        """Drop what was worked out about these files (their citations are judged); their
        text too unless a citation waits for history, which reads it again."""
        for path in paths:
            self._squashed.pop(path, None)
            self._counts.pop(path, None)
            self._joined_texts.pop(path, None)
            self._starts.pop(path, None)
            self._found.pop(path, None)
            if not keep_source:
                self.repo.forget(path)

    def _settled(self, citation: Citation) -> CitationCheck | None:
        """The common case, settled with the least work: a one-line citation whose line
        still says exactly its snippet (whitespace aside), and no other line does.
        Everything else (None) takes the full way through `_local`."""
        line, snippet = citation.line, citation.snippet
        if line is None or not snippet or citation.end_line is not None:
            return None
        target = citation.target
        source = self.repo.read(target)
        if source.status is not SourceStatus.TEXT or "://" in target:
            return None
        squashed = self._squashed.get(target) or self._squashed_lines(target, source)
        if line > len(squashed):
            return None
        wanted = squashed[line - 1]
        if wanted != "".join(snippet.split()) or not wanted:
            return None
        counts = self._counts.get(target) or self._line_counts(target, squashed)
        if counts[wanted] != 1:
            return None
        return CitationCheck(citation, Verdict.VALID, target, line)

    def verify(self, memory: Memory) -> MemoryVerification:
        return self.verify_memories([memory])[0]

    def check(self, citation: Citation) -> CitationCheck:
        """One citation on its own (mentions, tests)."""
        outcome = self._local(citation)
        if isinstance(outcome, _Pending):
            self._resolve_with_history([outcome])
            assert outcome.result is not None
            return outcome.result
        return outcome

    # -- pass 1: the files alone ------------------------------------------------

    def _local(self, citation: Citation) -> CitationCheck | _Pending:
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
    ) -> CitationCheck | _Pending:
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
        if line is not None and not renamed:
            here = self._only_here(path, source, citation, wanted)
            if here is not None and (here or self._base(citation) is None):
                # Said exactly on its line: valid when no other line says it, or when
                # history cannot tell the copies apart (what the search below ends in).
                return CitationCheck(citation, Verdict.VALID, path, line)
        candidates = self._occurrences(path, source, wanted, _span(citation))
        if line is not None and line in candidates and not renamed:
            window = "".join(source.lines[line - 1 : line - 1 + _span(citation)])
            if len(candidates) == 1 and squash(window) == wanted:
                return CitationCheck(citation, Verdict.VALID, path, line)
            if self._base(citation) is None:
                return CitationCheck(citation, Verdict.VALID, path, line)
            # The text is on its line, but as part of a longer line or as one of several
            # copies: history tells whether this line is still the one that was cited.
            return _Pending(citation, path, candidates, at_line=True, wanted=wanted)
        if line is None and candidates:
            found = candidates[0]
            reason = f"{where}snippet at line {found}"
            return CitationCheck(citation, moved, path, found, reason, renamed_to)
        if not candidates:
            if line is not None and not renamed and self._base(citation) is not None:
                return _Pending(citation, path, [], wanted=wanted)  # stale; history says where
            return self._stale(citation, source, path, where)
        return _Pending(citation, path, candidates, renamed_to, wanted=wanted)

    def _missing(self, citation: Citation) -> CitationCheck | _Pending:
        renamed = self.git.renames.get(citation.target) if self.git else None
        if renamed:
            source = self.repo.read(renamed)
            if source.is_text:
                outcome = self._in_file(citation, source, renamed, renamed=True)
                if isinstance(outcome, _Pending):
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

    def _stale(
        self,
        citation: Citation,
        source: SourceFile,
        path: str,
        where: str,
        line_map: LineMap | None = None,
    ) -> CitationCheck:
        """A stale verdict whose reason quotes what is there now.

        With history, "there" is where git's diff put the cited line: after lines
        were inserted above an edited line, the cited line number holds some
        other line, and quoting it would send the reader to the wrong place.
        """
        if citation.line is None:
            return CitationCheck(citation, Verdict.STALE, path, None, f"{where}snippet not in file")
        start = citation.line
        if line_map is not None:
            if citation.end_line is None and line_map.deleted(start):
                reason = f"{where}line {start} was deleted"
                return CitationCheck(citation, Verdict.STALE, path, None, reason)
            start = line_map.expected(start)
        line = _first_changed(citation, source, start)
        cited = citation.line + (line - start)
        if line > len(source.lines):
            reason = f"line {line} is past the end of {path} ({len(source.lines)} lines)"
        else:
            now = source.lines[line - 1].strip()
            text = f"now reads `{_short(now)}`" if now else "is blank"
            if line != cited:
                text = f"changed (line {line} {text.removeprefix('now ')})"
            reason = f"line {cited} {text}"
        return CitationCheck(citation, Verdict.STALE, path, None, where + reason)

    def _only_here(
        self, path: str, source: SourceFile, citation: Citation, wanted: str
    ) -> bool | None:
        """The common case, decided at once: True when the cited line says exactly the
        snippet and no other line of the file says the same (a line merely containing it
        is not a copy of it); False when it says it but so do others; None when it does
        not say it. A range is checked with two searches of the whole file."""
        line = citation.line or 1
        span = _span(citation)
        squashed = self._squashed_lines(path, source)
        if span == 1:
            if line > len(squashed) or squashed[line - 1] != wanted:
                return None
            return self._line_counts(path, squashed)[wanted] == 1
        # The squashed range is the range's squashed lines joined (whitespace goes per
        # character), so the raw lines are not needed.
        if "".join(squashed[line - 1 : line - 1 + span]) != wanted:
            return None
        text = self._joined(path, source)
        first = text.find(wanted)
        if text.find(wanted, first + 1) == -1:
            return True
        # Said on its lines, but not only there: "False" only where the search of
        # _occurrences would find it there too (the whole range in the file, starting
        # on a line that is not blank), else the caller takes the long way.
        inside = line - 1 + span <= len(squashed) and bool(squashed[line - 1])
        return False if inside else None

    def _squashed_lines(self, path: str, source: SourceFile) -> list[str]:
        lines = self._squashed.get(path)
        if lines is None:
            if source.squashed is not None:  # squashed in C (see repo.squashed_text)
                lines = source.squashed.split("\n")
                if not source.text or source.text.endswith("\n"):
                    lines.pop()  # a final newline ends the last line, not starts one
            else:
                lines = [squash(text) for text in source.lines]
            self._squashed[path] = lines
        return lines

    def _line_counts(self, path: str, squashed: list[str]) -> Counter[str]:
        counts = self._counts.get(path)
        if counts is None:
            counts = self._counts[path] = Counter(squashed)
        return counts

    def _joined_text(self, path: str, source: SourceFile) -> tuple[str, list[int]]:
        """The file squashed into one string, and where each line starts in it."""
        starts = self._starts.get(path)
        if starts is None:
            lines = self._squashed_lines(path, source)
            starts = list(itertools.accumulate(map(len, lines[:-1]), initial=0))
            self._starts[path] = starts
        return self._joined(path, source), starts

    def _joined(self, path: str, source: SourceFile) -> str:
        """The file squashed into one string (the common case needs no line starts)."""
        joined = self._joined_texts.get(path)
        if joined is None:
            joined = self._joined_texts[path] = "".join(self._squashed_lines(path, source))
        return joined

    def _occurrences(self, path: str, source: SourceFile, wanted: str, span: int) -> list[int]:
        """First lines of every window of `span` lines that holds the (squashed) snippet.

        A window starts on the line where the snippet's text begins. The text is
        matched across line breaks in the squashed file, not line by line: a
        serena table cell cannot hold a newline, so a range's snippet is often
        written on one line (`def f(): return 1` for two lines of code). It is also
        one `str.find` over the whole file per citation, in C, which is what keeps
        30,000 citations fast. Memories often cite the same line of the same file,
        so each answer is kept for the run.
        """
        found_here = self._found.setdefault(path, {})
        known = found_here.get((wanted, span))
        if known is not None:
            return known
        text, starts = self._joined_text(path, source)
        total = len(starts)
        found: dict[int, None] = {}
        at = text.find(wanted)
        while at != -1:
            first = bisect.bisect_right(starts, at) - 1
            last = bisect.bisect_right(starts, at + len(wanted) - 1) - 1
            if last - first < span and first + span <= total:
                found[first + 1] = None
            at = text.find(wanted, at + 1)
        lines = list(found)
        if span == 1:
            # A line that merely contains the snippet holds it only at token boundaries:
            # `x = 3` is not in `x = 31`, `return x` not in `return xyz`.
            squashed = self._squashed_lines(path, source)
            lines = [
                n
                for n in lines
                if squashed[n - 1] == wanted or _holds_bounded(source.lines[n - 1], wanted)
            ]
        result = found_here[(wanted, span)] = lines
        return result

    # -- pass 2: history ------------------------------------------------------

    def _resolve_with_history(self, pending: Sequence[_Pending]) -> None:
        """Decide with git's diff from the commit each citation was verified at.

        That commit is the one HEAD was at when it was verified; but a citation
        written against code not yet committed (an agent saves what it learned,
        then commits) does not describe that commit. When the commit's text at the
        cited line is not the snippet, the first commit made after the verification
        is tried (the one that committed that code); when neither holds it, the
        citation is decided without history.
        """
        retry = self._decide_from(pending, self._base, last=False)
        self._decide_from(retry, self._next_base, last=True)

    def _decide_from(
        self, pending: Sequence[_Pending], base_of: Callable[[Citation], str | None], *, last: bool
    ) -> list[_Pending]:
        """Decide each citation with the diff from its base commit; return those that
        commit does not describe (on the last try they are decided without history)."""
        by_base: dict[str | None, list[_Pending]] = defaultdict(list)
        for item in pending:
            by_base[base_of(item.citation)].append(item)
        if self.git is not None:
            self.git.will_ask(
                {b: {i.citation.target for i in items} for b, items in by_base.items() if b}
            )
        undescribed = []
        for base, items in by_base.items():
            maps: dict[str, LineMap] = {}
            if base is not None and self.git is not None:
                maps = self.git.line_maps(base, {i.citation.target for i in items})
            for item in items:
                line_map = maps.get(item.citation.target)
                if line_map is not None and not _described(item, line_map, self.repo):
                    if not last:
                        undescribed.append(item)
                        continue
                    line_map = None
                item.result = self._decide(item, line_map)
        return undescribed

    def _next_base(self, citation: Citation) -> str | None:
        """The first commit after the citation was verified (see _resolve_with_history)."""
        moment = citation.verified_at
        if self.git is None or citation.commit or moment is None:
            return None
        return self.git.commit_after(moment)

    def _base(self, citation: Citation) -> str | None:
        """The commit at which the citation was last verified, when history can tell."""
        if self.git is None or citation.line is None:
            return None
        target = citation.target
        if target not in self.git.tracked and (
            # Renames are asked for only when the cited file is gone.
            self.repo.read(target).status is not SourceStatus.MISSING
            or target not in self.git.renames
        ):
            return None
        if citation.commit:
            return citation.commit
        stamp = citation.verified
        if stamp not in self._bases:  # many citations share a stamp: look each up once
            moment = citation.verified_at
            self._bases[stamp] = self.git.commit_at(moment) if moment else None
        return self._bases[stamp]

    def _decide(self, item: _Pending, line_map: LineMap | None) -> CitationCheck:
        citation, candidates = item.citation, item.candidates
        line = citation.line or 1
        where = f"renamed to {item.path}; " if item.renamed_to else ""
        if not candidates:
            usable = line_map if line_map is not None and line_map.new_path == item.path else None
            return self._stale(citation, self.repo.read(item.path), item.path, where, usable)
        if item.at_line:
            return self._at_line(item, line_map)
        if line_map is None or line_map.new_path != item.path:
            # No history (no git, no verified stamp, or the file did not change since):
            # the occurrence nearest to the cited line is the best guess.
            return self._moved(item, _nearest(candidates, line), where)
        mapped = line_map.forward(line)
        if mapped is not None:
            # The line itself survived; if its text is not there, the citation was
            # already off when verified, and the nearest occurrence is the best guess.
            target = mapped if mapped in candidates else _nearest(candidates, mapped)
            return self._moved(item, target, where)
        added = [n for n in candidates if line_map.backward(n) is None]
        source = self.repo.read(item.path)
        if _was_whole_line(item, line_map.removed.get(line)):
            # The snippet was the whole cited line: only a line that still says exactly
            # that is where it moved; a new, longer line merely containing it is a rewrite.
            wanted = item.wanted
            added = [n for n in added if squash(source.lines[n - 1]) == wanted]
        if added:
            return self._moved(item, _nearest(added, line_map.expected(line)), where)
        expected = line_map.expected(line)
        if line_map.deleted(line) or not 0 < expected <= len(source.lines):
            # A deleted line has no "now": quoting a neighbour would mislead.
            changed = f"line {line} was deleted"
        else:
            now = source.lines[expected - 1].strip()
            changed = f"line {line} changed (now line {expected}: `{_short(now)}`)"
        others = ", ".join(str(n) for n in candidates[:3])
        at = "lines" if len(candidates) > 1 else "line"
        reason = f"{where}{changed}; the same text at {at} {others} was already there"
        return CitationCheck(citation, Verdict.STALE, item.path, None, reason)

    def _at_line(self, item: _Pending, line_map: LineMap | None) -> CitationCheck:
        """The cited line holds the snippet; is it still the line that was cited?

        - The line is unchanged since the citation was verified: valid.
        - It survived but moved, and another copy of the text took its place: moved.
        - It was rewritten, the snippet was the whole old line, and it is only part
          of the new one (`testpaths = [` became `testpaths = ["tests"]`): stale,
          unless the whole old line was added back elsewhere (a block move).
        """
        citation, line = item.citation, item.citation.line or 1
        valid = CitationCheck(citation, Verdict.VALID, item.path, line)
        if line_map is None or line_map.new_path != item.path:
            return valid
        mapped = line_map.forward(line)
        if mapped is not None:
            if mapped != line and mapped in item.candidates:
                return self._moved(item, mapped, "")
            return valid
        if not _was_whole_line(item, line_map.removed.get(line)):
            return valid  # a partial snippet that still holds, or a range: containment is enough
        wanted = item.wanted
        source = self.repo.read(item.path)
        exact = [n for n in item.candidates if squash(source.lines[n - 1]) == wanted]
        added = [n for n in exact if line_map.backward(n) is None]
        if added:
            return self._moved(item, _nearest(added, line_map.expected(line)), "")
        if line in exact:
            return valid
        now = source.lines[line - 1].strip()
        reason = f"line {line} was rewritten; it now reads `{_short(now)}`"
        return CitationCheck(citation, Verdict.STALE, item.path, None, reason)

    def _moved(self, item: _Pending, line: int, where: str) -> CitationCheck:
        was = item.citation.line
        verdict = Verdict.MOVED if (line != was or item.renamed_to) else Verdict.VALID
        reason = f"{where}found at line {line}" + (f" (was {was})" if was else "")
        return CitationCheck(item.citation, verdict, item.path, line, reason, item.renamed_to)

    # -- URLs -------------------------------------------------------------------

    def _check_urls(self, drafts: list[list[CitationCheck | _Pending]]) -> None:
        if self.urls is None:
            return
        urls = [
            item.citation.target
            for row in drafts
            for item in row
            if isinstance(item, CitationCheck) and item.status is Verdict.SKIPPED
        ]
        outcomes = self.urls.check_all(urls)
        for row in drafts:
            for n, item in enumerate(row):
                if isinstance(item, CitationCheck) and item.status is Verdict.SKIPPED:
                    status, reason = outcomes[item.citation.target]
                    verdict = Verdict(status)
                    here = item.citation.target if verdict is Verdict.VALID else None
                    row[n] = CitationCheck(item.citation, verdict, here, reason=reason)


def _oldest_stamp(memories: Sequence[Memory]) -> datetime | None:
    """The oldest verified stamp among the memories' citations (each distinct stamp parsed
    once): how far back history is read in this run."""
    stamps = {c.verified for m in memories for c in m.meta.citations if c.verified}
    moments = [Citation("", verified=stamp).verified_at for stamp in stamps]
    known = [moment for moment in moments if moment is not None]
    return min(known) if known else None


def _holds_bounded(line: str, wanted: str) -> bool:
    """Whether the line holds the squashed snippet with any whitespace between its
    characters and no word character running on from either of its word-character ends.

    Done by hand on the line's non-space characters rather than with a regex per
    snippet: compiling thousands of one-off patterns cost more than the whole check.
    """
    where = [i for i, ch in enumerate(line) if not ch.isspace()]
    squashed = "".join(line[i] for i in where)
    head, tail = _is_word(wanted[0]), _is_word(wanted[-1])
    at = squashed.find(wanted)
    while at != -1:
        start, end = where[at], where[at + len(wanted) - 1]
        if not (head and start > 0 and _is_word(line[start - 1])) and not (
            tail and end + 1 < len(line) and _is_word(line[end + 1])
        ):
            return True
        at = squashed.find(wanted, at + 1)
    return False


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _described(item: _Pending, line_map: LineMap, repo: Repository) -> bool:
    """Whether the base commit held the snippet at the cited line(s), as far as the diff
    tells: a changed line's old text is in the diff, an unchanged one is where it went."""
    citation = item.citation
    if citation.line is None or not citation.snippet or line_map.new_path != item.path:
        return True
    mapped = line_map.forward(citation.line)
    if mapped is not None and mapped in item.candidates:
        return True  # the common case, at no cost: the line survived and still says it
    source = repo.read(item.path)
    old: list[str] = []
    for number in range(citation.line, (citation.end_line or citation.line) + 1):
        text = line_map.removed.get(number)
        if text is None:
            now = line_map.forward(number)
            if now is None or not 0 < now <= len(source.lines):
                return False  # past the end of the file at that commit
            text = source.lines[now - 1]
        old.append(text)
    return item.wanted in squash("".join(old))


def _was_whole_line(item: _Pending, old: str | None) -> bool:
    """Whether the snippet was the entire cited line when the citation was verified."""
    if old is None or item.citation.end_line or not item.wanted:
        return False
    return squash(old) == item.wanted


def _span(citation: Citation) -> int:
    if citation.line is None or citation.end_line is None:
        return 1
    return citation.end_line - citation.line + 1


def _first_changed(citation: Citation, source: SourceFile, line: int) -> int:
    """The line of a cited range (now starting at `line`) to quote: the first that changed.

    Quoting the first line of a range whose third line changed would show text
    that is still right; when the snippet's lines do not match the range's, the
    first line is quoted.
    """
    parts = (citation.snippet or "").split("\n")
    if citation.line is None or citation.end_line is None:
        return line
    if len(parts) != citation.end_line - citation.line + 1:
        return line
    for at, part in enumerate(parts, start=line):
        if at > len(source.lines) or squash(part) not in squash(source.lines[at - 1]):
            return at
    return line


def _nearest(lines: Sequence[int], target: int) -> int:
    return min(lines, key=lambda n: (abs(n - target), n))


def _short(text: str, limit: int = 80) -> str:
    text = text.replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"
