"""The Verifier's second pass: what the files alone could not settle, decided with history.

A citation is judged against git's line map of its file since its base commit, the
commit HEAD was at when it was last verified (the one it names, else the commit made
before its verified stamp). Bases are looked up once per stamp and maps asked once per
base and file, for the whole run together, so git is asked a bounded number of times
however many citations wait. The Verifier (verifier.py) runs the first pass, on the
files alone, and inherits this one: `HistoryPass` holds the methods, the Verifier the
state they read (its repository, its git, the bases and maps it learned).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from memory_enhancement.core.batch import Row
from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.core.model import Citation
from memory_enhancement.core.timestamps import maybe_timestamp
from memory_enhancement.verify.decisions import Pending, decide, described
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.line_maps import LineMap
from memory_enhancement.verify.repo import Repository, SourceStatus
from memory_enhancement.verify.unchanged import without_map


class HistoryPass:
    """The citations that wait for history (`Pending`), decided together; a mixin of
    `Verifier`, which declares these attributes as its fields."""

    repo: Repository
    git: Git | None
    _bases: dict[str | None, str | None]  # a verified stamp -> the commit HEAD was at then
    _maps: dict[str, dict[str, LineMap | None]]  # base -> path -> its map (None: git has none)

    def _unchanged_since_base(
        self, rows: list[Row], at_line: list[int], pending: Iterable[Pending]
    ) -> list[int]:
        """Those `at_line` rows whose file git has no change for since the row's base
        commit (no line map): their line is still the one cited. The maps are asked once
        per base, for these files and those of the citations already waiting for history,
        and kept for the history pass."""
        bases = {k: self._base_of(rows[k]) for k in at_line}
        by_base: dict[str, set[str]] = defaultdict(set)
        for k, base in bases.items():
            if base is not None:
                by_base[base].add(rows[k][0])
        if by_base:
            for item in pending:
                base = self._base(item.citation)
                if base is not None:
                    by_base[base].add(item.citation.target)
        if self.git is not None and by_base:
            self.git.will_ask(by_base)
            for base, paths in without_map(self.git, self.repo, by_base).items():
                self._maps.setdefault(base, {}).update(dict.fromkeys(paths))
        maps = {base: self._line_maps(base, paths) for base, paths in by_base.items()}
        return [k for k, base in bases.items() if base is None or rows[k][0] not in maps[base]]

    def _line_maps(self, base: str, paths: Iterable[str]) -> dict[str, LineMap]:
        """git's line maps from a base commit, each (base, path) asked once per run."""
        known = self._maps.setdefault(base, {})
        ask = {p for p in paths if p not in known}
        if ask and self.git is not None:
            found = self.git.line_maps(base, ask)
            for path in ask:
                known[path] = found.get(path)
        return {p: m for p in paths if (m := known.get(p)) is not None}

    def _resolve_with_history(self, pending: Sequence[Pending]) -> None:
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
        self, pending: Sequence[Pending], base_of: Callable[[Citation], str | None], *, last: bool
    ) -> list[Pending]:
        """Decide each citation with the diff from its base commit; return those that
        commit does not describe (on the last try they are decided without history)."""
        by_base: dict[str | None, list[Pending]] = defaultdict(list)
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
                maps = self._line_maps(base, {i.citation.target for i in items})
            for item in items:
                line_map = maps.get(item.citation.target)
                if line_map is not None and not described(item, line_map, self.repo):
                    if not last:
                        undescribed.append(item)
                        continue
                    line_map = None
                item.result = decide(item, line_map, self.repo)
        return undescribed

    def _next_base(self, citation: Citation) -> str | None:
        """The first commit after the citation was verified (see _resolve_with_history)."""
        moment = citation.verified_at
        if self.git is None or citation.commit or moment is None:
            return None
        return self.git.commit_after(moment)

    def _base(self, citation: Citation) -> str | None:
        """The commit at which the citation was last verified, when history can tell."""
        return self._base_of(row_of(citation))

    def _base_of(self, row: Row) -> str | None:
        """`_base` of a citation as an index row: (target, line, end, snippet, verified,
        commit, ...)."""
        if self.git is None or row[1] is None:
            return None
        target = row[0]
        if target not in self.git.tracked and (
            # Renames are asked for only when the cited file is gone.
            self.repo.read(target).status is not SourceStatus.MISSING
            or target not in self.git.renames
        ):
            return None
        if row[5]:
            return row[5]
        stamp = row[4]
        if stamp not in self._bases:  # many citations share a stamp: look each up once
            moment = _moment(stamp)
            self._bases[stamp] = self.git.commit_at(moment) if moment else None
        return self._bases[stamp]


def oldest_stamp(stamps: Iterable[str]) -> datetime | None:
    """The oldest of the verified stamps in play (each distinct stamp parsed once): how
    far back history is read in this run."""
    known = [moment for moment in map(_moment, stamps) if moment is not None]
    return min(known) if known else None


def _moment(stamp: str | None) -> datetime | None:
    """A verified stamp as a time, None when absent or unreadable (`Citation.verified_at`)."""
    try:
        return maybe_timestamp(stamp)
    except InvalidInputError:
        return None


def row_of(citation: Citation) -> Row:
    """A citation as an index row (what `_base_of` and `_on_line` read)."""
    c = citation
    return (c.target, c.line, c.end_line, c.snippet, c.verified, c.commit, None, None)
