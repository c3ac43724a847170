"""A cited file's text in the forms verification compares snippets in.

Snippets are compared without whitespace (`squash`), so each cited file is worked
out once per run in that form: its squashed lines, how often each squashed line
occurs, the squashed text joined into one string with where each line starts in it,
and where a snippet occurs. A run judges a file's citations together and then drops
what it worked out (`forget`), so it holds at most a few files' worth at a time.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter

from memory_enhancement.core.citations import squash
from memory_enhancement.verify.repo import SourceFile


class FileTexts:
    """Per cited file (by its repository path), its text in comparable forms."""

    def __init__(self) -> None:
        self._squashed: dict[str, list[str]] = {}
        self._counts: dict[str, Counter[str]] = {}
        self._joined: dict[str, str] = {}
        self._starts: dict[str, list[int]] = {}
        self._found: dict[str, dict[tuple[str, int], list[int]]] = {}

    def forget(self, path: str) -> None:
        """Drop what was worked out about a file (its citations are judged)."""
        self._squashed.pop(path, None)
        self._counts.pop(path, None)
        self._joined.pop(path, None)
        self._starts.pop(path, None)
        self._found.pop(path, None)

    def lines(self, path: str, source: SourceFile) -> list[str]:
        """The file's lines, each squashed (split once from the text squashed in C when
        the reader could, else squashed line by line)."""
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

    def counts(self, path: str, source: SourceFile) -> Counter[str]:
        """How many lines of the file say each squashed text."""
        counts = self._counts.get(path)
        if counts is None:
            counts = self._counts[path] = Counter(self.lines(path, source))
        return counts

    def joined(self, path: str, source: SourceFile) -> str:
        """The file squashed into one string (the common case needs no line starts)."""
        joined = self._joined.get(path)
        if joined is None:
            joined = self._joined[path] = "".join(self.lines(path, source))
        return joined

    def joined_with_starts(self, path: str, source: SourceFile) -> tuple[str, list[int]]:
        """The file squashed into one string, and where each line starts in it."""
        starts = self._starts.get(path)
        if starts is None:
            lines = self.lines(path, source)
            starts = list(itertools.accumulate(map(len, lines[:-1]), initial=0))
            self._starts[path] = starts
        return self.joined(path, source), starts

    def only_here(
        self, path: str, source: SourceFile, line: int, span: int, wanted: str
    ) -> bool | None:
        """The common case, decided at once: True when the cited line says exactly the
        snippet and no other line of the file says the same (a line merely containing it
        is not a copy of it); False when it says it but so do others; None when it does
        not say it. A range is checked with two searches of the whole file."""
        squashed = self.lines(path, source)
        if span == 1:
            if line > len(squashed) or squashed[line - 1] != wanted:
                return None
            return self.counts(path, source)[wanted] == 1
        # The squashed range is the range's squashed lines joined (whitespace goes per
        # character), so the raw lines are not needed.
        if "".join(squashed[line - 1 : line - 1 + span]) != wanted:
            return None
        text = self.joined(path, source)
        first = text.find(wanted)
        if text.find(wanted, first + 1) == -1:
            return True
        # Said on its lines, but not only there: "False" only where the search of
        # `occurrences` would find it there too (the whole range in the file, starting
        # on a line that is not blank), else the caller takes the long way.
        inside = line - 1 + span <= len(squashed) and bool(squashed[line - 1])
        return False if inside else None

    def occurrences(self, path: str, source: SourceFile, wanted: str, span: int) -> list[int]:
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
        text, starts = self.joined_with_starts(path, source)
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
            squashed = self.lines(path, source)
            lines = [
                n
                for n in lines
                if squashed[n - 1] == wanted or _holds_bounded(source.lines[n - 1], wanted)
            ]
        result = found_here[(wanted, span)] = lines
        return result


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
