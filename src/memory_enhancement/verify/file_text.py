"""A cited file's text in the forms verification compares snippets in.

Snippets are compared without whitespace (`squash`), so each cited file is worked
out once per run in that form: its squashed lines, how often a squashed line occurs,
the squashed text joined into one string with where each line starts in it, and
where a snippet occurs. A run judges a file's citations together and then drops what
it worked out (`FileTexts.forget`), so it holds at most a few files' worth at a time.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter

from memory_enhancement.core.citations import squash
from memory_enhancement.verify.repo import SourceFile

# A file with fewer citations than this answers "how many lines say this?" by counting
# in its list of lines (C, no allocation) rather than by counting all its lines once.
_COUNT_ALL_FROM = 8


class FileText:
    """One cited file's text, worked out as far as its citations need."""

    __slots__ = ("_counts", "_found", "_joined", "_lines", "_starts", "cited", "source")

    def __init__(self, source: SourceFile, cited: int = 0) -> None:
        self.source = source
        self.cited = cited  # how many citations will ask (a hint: see `how_many`)
        self._lines: list[str] | None = None
        self._counts: Counter[str] | None = None
        self._joined: str | None = None
        self._starts: list[int] | None = None
        self._found: dict[tuple[str, int, int], list[int]] = {}

    @property
    def lines(self) -> list[str]:
        """Each line, squashed: the whole file at once (in C when the text allows, see
        repo.squashed_text), on first use; a citation that holds on its line needs only
        its own line squashed (`Verifier._judge_file`)."""
        if self._lines is None:
            source = self.source
            squashed = source.squashed
            if squashed is not None:
                lines = squashed.split("\n")
                if not source.text or source.text.endswith("\n"):
                    lines.pop()  # a final newline ends the last line, not starts one
            else:
                lines = [squash(text) for text in source.lines]
            self._lines = lines
        return self._lines

    def how_many(self, wanted: str) -> int:
        """How many lines say exactly this (squashed) text."""
        if self.cited < _COUNT_ALL_FROM:
            return self.lines.count(wanted)
        if self._counts is None:
            self._counts = Counter(self.lines)
        return self._counts[wanted]

    @property
    def joined(self) -> str:
        """The file squashed into one string (the common case needs no line starts)."""
        if self._joined is None:
            self._joined = "".join(self.lines)
        return self._joined

    @property
    def starts(self) -> list[int]:
        """Where each line starts in `joined`."""
        if self._starts is None:
            self._starts = list(itertools.accumulate(map(len, self.lines[:-1]), initial=0))
        return self._starts

    def only_here(self, line: int, span: int, wanted: str) -> bool | None:
        """A cited range (`span` > 1; one line is `how_many`), decided at once: True when
        its lines say exactly the snippet and nothing else in the file does; False when
        they say it but so does more of the file; None when they do not say it. Two
        searches of the whole file."""
        lines = self.lines
        # The squashed range is the range's squashed lines joined (whitespace goes per
        # character), so the raw lines are not needed.
        if "".join(lines[line - 1 : line - 1 + span]) != wanted:
            return None
        text = self.joined
        first = text.find(wanted)
        if text.find(wanted, first + 1) == -1:
            return True
        # Said on its lines, but not only there: "False" only where the search of
        # `occurrences` would find it there too (the whole range in the file, starting
        # on a line that is not blank), else the caller takes the long way.
        inside = line - 1 + span <= len(lines) and bool(lines[line - 1])
        return False if inside else None

    def holds_at(self, line: int, span: int, wanted: str) -> bool | None:
        """Whether the cited line(s) hold the snippet as `only_here` and `starts_on` tell
        it when history cannot tell copies apart (no base commit): True when the line says
        it or a window of `span` lines starting on it holds it, False when not; None when
        only the whole file can tell (a range past the end, or starting on a blank line).
        Only the cited lines are squashed: the common case needs nothing of the rest."""
        raw = self.source.lines
        if line > len(raw) or line < 1:
            return None
        first = "".join(raw[line - 1].split())
        if span == 1:
            return _line_holds(first, raw[line - 1], wanted)
        if line - 1 + span > len(raw) or not first:
            return None
        window = first + "".join("".join(text.split()) for text in raw[line : line - 1 + span])
        at = window.find(wanted)  # said on the lines, or starting on the first of them
        return window == wanted or (at != -1 and at < len(first))

    def starts_on(self, line: int, span: int, wanted: str, lead: int = 0) -> bool:
        """Whether `line` is among `occurrences(wanted, span, lead)`, found without looking
        at the rest of the file: one bounded search from the start of the line the text
        begins on."""
        lines = self.lines
        total = len(lines)
        if not 0 < line <= total - span + 1:
            return False
        if span == 1:
            return _line_holds(lines[line - 1], self.source.lines[line - 1], wanted)
        starts = self.starts
        first = line + lead  # where the snippet's text begins, past its blank lines
        last = line - 1 + span  # the first line after the window
        if first > last:
            return False
        end = starts[last] if last < total else len(self.joined)
        at = self.joined.find(wanted, starts[first - 1], end)
        return at != -1 and (first == total or at < starts[first])

    def occurrences(self, wanted: str, span: int, lead: int = 0) -> list[int]:
        """First lines of every window of `span` lines that holds the (squashed) snippet.

        A window starts on the line where the snippet's text begins, less the `lead`
        blank lines the snippet starts with (a blank line squashes to nothing: without
        them the window would start on the text and reach past the cited range). The text is
        matched across line breaks in the squashed file, not line by line: a
        serena table cell cannot hold a newline, so a range's snippet is often
        written on one line (`def f(): return 1` for two lines of code). It is also
        one `str.find` over the whole file per citation, in C, which is what keeps
        30,000 citations fast. Memories often cite the same line of the same file,
        so each answer is kept for the run.
        """
        known = self._found.get((wanted, span, lead))
        if known is not None:
            return known
        text, starts = self.joined, self.starts
        total = len(starts)
        found: dict[int, None] = {}
        at = text.find(wanted)
        while at != -1:
            first = bisect.bisect_right(starts, at) - 1 - lead
            last = bisect.bisect_right(starts, at + len(wanted) - 1) - 1
            if first >= 0 and last - first < span and first + span <= total:
                found[first + 1] = None
            at = text.find(wanted, at + 1)
        lines = list(found)
        if span == 1:
            squashed, raw = self.lines, self.source.lines
            lines = [n for n in lines if _line_holds(squashed[n - 1], raw[n - 1], wanted)]
        self._found[(wanted, span, lead)] = lines
        return lines


class FileTexts:
    """The cited files of a run being worked on, by repository path."""

    def __init__(self) -> None:
        self._files: dict[str, FileText] = {}

    def get(self, path: str, source: SourceFile, cited: int = 0) -> FileText:
        """The file's text (worked out on first use); `cited`: how many citations of the
        run point at it, when known."""
        found = self._files.get(path)
        if found is None or found.source is not source:
            found = self._files[path] = FileText(source, cited)
        return found

    def forget(self, path: str) -> None:
        """Drop what was worked out about a file (its citations are judged)."""
        self._files.pop(path, None)


def lead_of(snippet: str | None, span: int) -> int:
    """How many blank lines a range's snippet starts with (none for one line: a blank
    snippet is no snippet), as `occurrences` and `starts_on` take them."""
    if span < 2 or not snippet:
        return 0
    lead = 0
    for text in snippet.split("\n", span - 1)[: span - 1]:
        if text.strip():
            break
        lead += 1
    return lead


def _line_holds(squashed: str, line: str, wanted: str) -> bool:
    """Whether one line (`squashed`, and as written) holds the squashed snippet: says
    exactly it, or contains it at token boundaries (`x = 3` is not in `x = 31`, `return x`
    not in `return xyz`)."""
    return squashed == wanted or (wanted in squashed and _holds_bounded(line, wanted))


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
