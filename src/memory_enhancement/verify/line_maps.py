"""How the lines of a file moved between a commit and the work tree, read from git's diff.

Verification follows a cited line through history by the hunks of a zero-context
diff (`git diff -U0`) from the commit the citation was verified at: a `LineMap` says
where an unchanged line is now, whether a current line was added since, and what a
changed line said then. `git.Git.line_maps` asks git for them; the mentions build
them from diffs of their own (mention_maps.py, line_origins.py), so the map and the
reading of a diff are here, apart from the module that runs git.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True)
class Hunk:
    """One `@@ -old_start,old_count +new_start,new_count @@` of a zero-context diff."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int


@dataclass(frozen=True)
class LineMap:
    """How the lines of one file moved between a base commit and the working tree."""

    old_path: str
    new_path: str
    hunks: tuple[Hunk, ...] = ()
    removed: Mapping[int, str] = field(default_factory=dict)  # old line -> its text at the base

    def forward(self, old_line: int) -> int | None:
        """Where an unchanged old line is now; None when the diff changed or deleted it.

        A bisection over the hunks (a run asks this for thousands of citations, and
        an edited file can have hundreds of hunks).
        """
        ends, offsets = self._forward_table
        passed = bisect.bisect_right(ends, old_line)  # hunks wholly before old_line
        if passed < len(self.hunks):
            h = self.hunks[passed]
            if h.old_count and h.old_start <= old_line:
                return None
        return old_line + offsets[passed]

    @cached_property
    def _forward_table(self) -> tuple[list[int], list[int]]:
        """Per hunk, the first old line after it; and the line offset after 0, 1, ... hunks."""
        ends = [h.old_start + (h.old_count or 1) for h in self.hunks]
        offsets = [0, *itertools.accumulate(h.new_count - h.old_count for h in self.hunks)]
        return ends, offsets

    def backward(self, new_line: int) -> int | None:
        """Where a current line was at the base; None when the diff added it."""
        offset = 0
        for h in self.hunks:
            if h.new_count:
                if new_line < h.new_start:
                    break
                if new_line < h.new_start + h.new_count:
                    return None
            elif new_line <= h.new_start:
                break
            offset += h.old_count - h.new_count
        return new_line + offset

    def deleted(self, old_line: int) -> bool:
        """Whether the diff deleted an old line with nothing put in its place."""
        for h in self.hunks:
            if h.old_count and h.old_start <= old_line < h.old_start + h.old_count:
                return not h.new_count
        return False

    def outnumbered(self, first: int, last: int) -> Hunk | None:
        """The hunk that put fewer lines in the place of old lines `first`-`last`, when
        all of them lie past the lines put there: none of them stands anywhere now
        (`expected` says the hunk's last new line, a neighbour at best)."""
        for h in self.hunks:
            if h.old_count and h.old_start <= first < h.old_start + h.old_count:
                fits = last < h.old_start + h.old_count and first - h.old_start >= h.new_count
                return h if h.new_count and fits else None
        return None

    def expected(self, old_line: int) -> int:
        """The best guess of where an old line is now, even when the diff changed it."""
        offset = 0
        for h in self.hunks:
            end = h.old_start + max(h.old_count, 1)
            if old_line < h.old_start or (not h.old_count and old_line <= h.old_start):
                break
            if h.old_count and old_line < end:
                return h.new_start + min(old_line - h.old_start, max(h.new_count - 1, 0))
            offset += h.new_count - h.old_count
        return old_line + offset


def parse_diff(out: str) -> list[LineMap]:
    """Line maps from `git diff -M -U0` output; added and deleted files have none.

    File headers are read only before a file's first hunk: inside hunks, a
    deleted line `-- note` (an SQL or Lua comment) reads `--- note` and an added
    `++ x` reads `+++ x`, which are not headers.
    """
    maps: list[LineMap] = []
    for chunk in out.split("\ndiff --git ")[0:]:
        old: str | None = None
        new: str | None = None
        hunks: list[Hunk] = []
        removed: dict[int, str] = {}
        at = 0
        for line in chunk.split("\n"):
            if hunks:  # inside hunks only their own headers and removed lines matter
                first = line[:1]
                if first == "-":  # a changed line, whatever it looks like
                    removed[at] = line[1:]
                    at += 1
                elif first == "@" and line.startswith("@@ "):
                    hunks.append(parse_hunk(line))
                    at = hunks[-1].old_start
            elif line.startswith("@@ "):
                hunks.append(parse_hunk(line))
                at = hunks[-1].old_start
            elif line.startswith("--- "):
                old = _diff_path(line[4:])
            elif line.startswith("+++ "):
                new = _diff_path(line[4:])
            elif line.startswith("rename from "):
                old = _unquote(line[len("rename from ") :])
            elif line.startswith("rename to "):
                new = _unquote(line[len("rename to ") :])
        if old is not None and new is not None:
            maps.append(LineMap(old, new, tuple(hunks), removed))
    return maps


def _diff_path(text: str) -> str | None:
    text = text.rstrip("\t")
    if text == "/dev/null":
        return None
    text = _unquote(text)
    return text[2:] if text[:2] in ("a/", "b/") else text


def _unquote(text: str) -> str:
    """Undo git's C-style quoting of unusual paths (`"a\\tb.py"`)."""
    if not (len(text) >= 2 and text[0] == text[-1] == '"'):
        return text
    raw = text[1:-1].encode("ascii", "backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1", "replace").decode("utf-8", "replace")


def parse_hunk(line: str) -> Hunk:
    """A `@@ -a,b +c,d @@` header as a Hunk (a count left out is 1, as git writes it)."""
    old_part, new_part = line.split(" ")[1:3]
    old_start, _, old_count = old_part[1:].partition(",")
    new_start, _, new_count = new_part[1:].partition(",")
    return Hunk(
        int(old_start),
        int(old_count) if old_count else 1,
        int(new_start),
        int(new_count) if new_count else 1,
    )
