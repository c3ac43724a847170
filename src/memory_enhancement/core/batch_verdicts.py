"""The verdicts of a run over a batch, kept as the batch's rows until someone reads them.

A verify-all of 10,000 memories says "valid, on its line" about nearly every one of
its 30,000 citations. Building a `CitationCheck` (and its `Citation`) per citation
and a `MemoryVerification` per memory cost as much as judging them and held the whole
run in memory at once; so a run keeps, per row of its batch, only whether it was valid
on its line, plus the verdicts that say more. A reader that iterates gets one
`MemoryVerification` at a time, built when reached and dropped after; the JSON writer
(`service.serialize`), the history (`verify.history`) and the counts read the rows of
a settled memory directly (`settled`, `seen`, `tally`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import overload

from memory_enhancement.core.batch import CitedBatch, Row
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdict_rows import Recalled
from memory_enhancement.core.verdicts import CitationCheck, MemoryVerification, Verdict

# A verdict as the history compares it: (target, line, end_line, status, current path,
# current line).
Seen = tuple[str, int | None, int | None, str, str | None, int | None]
_KEPT = Recalled([], [])  # no mention: nothing judged


class BatchVerdicts(Sequence[MemoryVerification]):
    """The memories of a batch that have something verified, in batch order.

    `valid[k]` is 1 where row `k` of the batch was valid on its line; `checks[k]` is
    the verdict on each other row; `mentions[i]` the verdicts on memory `i`'s prose
    mentions (as a rerun kept them, `Recalled`, when nothing they depend on changed).
    `file_prefix` + path + `.md` is each memory file as annotations name it.
    """

    def __init__(
        self,
        batch: CitedBatch,
        valid: bytearray,
        checks: dict[int, CitationCheck],
        mentions: dict[int, tuple[CitationCheck, ...] | Recalled],
        file_prefix: str,
        *,
        keep_uncited: bool = False,
    ) -> None:
        self.batch = batch
        self.valid = valid
        self.checks = checks
        self.mentions = mentions
        self.file_prefix = file_prefix
        starts = batch.starts
        self.order = [
            i
            for i in range(len(batch))
            if keep_uncited or starts[i] < starts[i + 1] or i in mentions
        ]
        self._tally: Counter[tuple[str, str]] | None = None
        # The cited files judged by this run (None: every one was); the others' verdicts
        # were recalled as recorded (verify/settled.py).
        self.judged: set[str] | None = None
        self._quoted: dict[str, str] = {}  # repr of each cited path, made once

    def __len__(self) -> int:
        return len(self.order)

    @overload
    def __getitem__(self, j: int) -> MemoryVerification: ...
    @overload
    def __getitem__(self, j: slice) -> list[MemoryVerification]: ...
    def __getitem__(self, j: int | slice) -> MemoryVerification | list[MemoryVerification]:
        if isinstance(j, slice):
            return [self.build(i) for i in self.order[j]]
        return self.build(self.order[j])

    def __iter__(self) -> Iterator[MemoryVerification]:
        for i in self.order:
            yield self.build(i)

    def build(self, i: int) -> MemoryVerification:
        """Memory `i` of the batch, its verdicts in full."""
        mentions = self.mentions.get(i, ())
        if isinstance(mentions, Recalled):
            mentions = mentions.built()
        return self._result(i, mentions)

    def recalled(self, j: int) -> tuple[MemoryVerification, Recalled] | None:
        """The `j`th memory without its mentions, and its mentions' verdicts as a rerun
        kept them, when it kept them (the JSON writer reads those rows as they are)."""
        i = self.order[j]
        mentions = self.mentions.get(i)
        if not isinstance(mentions, Recalled):
            return None
        return self._result(i, ()), mentions

    def kept(self, j: int) -> Recalled | None:
        """The `j`th memory's mentions' verdicts as a rerun kept them, when it cites nothing
        else (a rerun's usual memory): its JSON is theirs alone, written without a result."""
        i = self.order[j]
        mentions = self.mentions.get(i)
        if not isinstance(mentions, Recalled) or self.batch.starts[i] != self.batch.starts[i + 1]:
            return None
        return mentions

    def _result(self, i: int, mentions: tuple[CitationCheck, ...]) -> MemoryVerification:
        batch = self.batch
        path = batch.paths[i]
        file = self.file_prefix + path + ".md"
        start, end = batch.starts[i], batch.starts[i + 1]
        if start == end:  # most memories with mentions cite nothing in a table
            return MemoryVerification(path, (), mentions, file, ())
        checks = tuple(self.checks.get(k) or held(batch.citation(k)) for k in range(start, end))
        return MemoryVerification(path, checks, mentions, file, batch.lines_of(i))

    # -- read without building --------------------------------------------------------

    def path(self, j: int) -> str:
        return self.batch.paths[self.order[j]]

    def settled(self, j: int) -> list[Row] | None:
        """The rows of the `j`th memory when every one of its citations is valid on its
        line and it has no mention, else None (then read it in full)."""
        i = self.order[j]
        if i in self.mentions:
            return None
        start, end = self.batch.starts[i], self.batch.starts[i + 1]
        if self.valid.count(1, start, end) != end - start:
            return None
        return self.batch.rows[start:end]

    def seen(self, j: int) -> list[Seen]:
        """The `j`th memory's verdicts as the history compares them (mentions included)."""
        i = self.order[j]
        out: list[Seen] = []
        for k in range(self.batch.starts[i], self.batch.starts[i + 1]):
            check = self.checks.get(k)
            if check is None:
                target, line, end = self.batch.rows[k][:3]
                out.append((target, line, end, "valid", target, line))
            else:
                out.append(_seen(check))
        mentions = self.mentions.get(i, ())
        if isinstance(mentions, Recalled):
            out.extend(mentions.seen())
        else:
            out.extend(_seen(check) for check in mentions)
        return out

    def has_verdicts(self) -> bool:
        """Whether any memory got a verdict (a citation or a mention checked)."""
        starts = self.batch.starts
        return any(starts[i] < starts[i + 1] or i in self.mentions for i in self.order)

    def compared(self, j: int) -> tuple[str, list[str]]:
        """The `j`th memory's verdicts as the history compares them, as text (`repr` of
        `seen(j)`), and their statuses. A memory whose citations all hold is written from
        its rows, without building the tuples."""
        rows = self.settled(j)
        if rows is None:
            seen = self.seen(j)
            return repr(seen), [item[3] for item in seen]
        quoted = self._quoted
        parts = []
        for target, line, end, *_ in rows:
            text = quoted.get(target)
            if text is None:
                text = quoted[target] = repr(target)
            parts.append(f"({text}, {line}, {end}, 'valid', {text}, {line})")
        return f"[{', '.join(parts)}]", ["valid"] * len(rows)

    def as_recorded(self, j: int) -> bool:
        """Whether the `j`th memory's verdicts all come from the record of its cited files
        (none of them judged by this run) and the mention cache (`Recalled`: none judged
        either): then they are the ones the last whole-store run gave it, when that run
        read the same index and mention cache (the history checks: verify/history.py).
        Not for a memory with a verdict the folders of the work tree alone may show or
        leave out (`Recalled.hidable`: verify/rooted.py)."""
        i = self.order[j]
        mentions = self.mentions.get(i, _KEPT)
        if self.judged is None or not isinstance(mentions, Recalled) or mentions.hidable:
            return False
        judged = self.judged
        rows = self.batch.rows
        start, end = self.batch.starts[i], self.batch.starts[i + 1]
        return start == end or all(rows[k][0] not in judged for k in range(start, end))

    def quiet(self, j: int) -> bool:
        """Whether the `j`th memory has nothing to look at: no citation failed or moved, and
        every mention is valid. Text output and annotations pass over such a memory without
        building it (a rerun would otherwise decode the kept rows of 500 memories for it)."""
        i = self.order[j]
        for k in range(self.batch.starts[i], self.batch.starts[i + 1]):
            check = self.checks.get(k)
            if check is not None and (check.status.failing or check.status is Verdict.MOVED):
                return False
        return all(status == "valid" for status in _statuses(self.mentions.get(i, ())))

    def statuses(self, j: int) -> list[str]:
        """The `j`th memory's verdicts, as statuses (mentions included)."""
        i = self.order[j]
        out = []
        for k in range(self.batch.starts[i], self.batch.starts[i + 1]):
            check = self.checks.get(k)
            out.append("valid" if check is None else check.status._value_)
        out.extend(_statuses(self.mentions.get(i, ())))
        return out

    def tally(self) -> Counter[tuple[str, str]]:
        """How many citations ("c") and mentions ("m") got each verdict."""
        if self._tally is None:
            tally: Counter[tuple[str, str]] = Counter()
            starts = self.batch.starts
            for i in self.order:
                start, end = starts[i], starts[i + 1]
                settled = self.valid.count(1, start, end)
                if settled:
                    tally["c", "valid"] += settled
                if settled != end - start:
                    for k in range(start, end):
                        check = self.checks.get(k)
                        if check is not None:
                            tally["c", check.status._value_] += 1
                for status in _statuses(self.mentions.get(i, ())):
                    tally["m", status] += 1
            self._tally = tally
        return self._tally


def held(citation: Citation) -> CitationCheck:
    """The verdict of a citation that holds on its line (a row the batch marks valid)."""
    return CitationCheck(citation, Verdict.VALID, citation.target, citation.line)


def _statuses(mentions: tuple[CitationCheck, ...] | Recalled) -> list[str]:
    if isinstance(mentions, Recalled):
        return mentions.statuses()
    return [check.status._value_ for check in mentions]


def _seen(check: CitationCheck) -> Seen:
    c = check.citation
    return (c.target, c.line, c.end_line, check.status._value_, check.current_path,
            check.current_line)  # fmt: skip
