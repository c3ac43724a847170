"""A batch of memories to verify, kept as the index holds it: one tuple per citation.

A verify-all of a large store handles tens of thousands of citations, and nearly all
of them still say what they said: the line holds its snippet. Turning every index row
into a `Citation` (and every verdict into a `CitationCheck`) cost more than judging
them, so a batch keeps the rows as plain tuples and builds a `Citation` only for a
row that needs one: one whose verdict is not the common "valid, on its line"
(verify/verifier.py), or one a reader of the results asks for (core/batch_verdicts.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import MappingProxyType

from memory_enhancement.core.model import Citation, Memory, MemoryMeta, Verifiable

# Shared by every memory of a batch without citations (frozen, its `extra` read-only).
_UNCITED = MemoryMeta(extra=MappingProxyType({}))

# (target, line, end_line, snippet, verified, commit, extra, file_line): a citation as the
# index stores it; `extra` is the JSON of the fields the tool does not know (or None).
Row = tuple[str, int | None, int | None, str | None, str | None, str | None, str | None, int | None]


class CitedBatch:
    """Memories (in order) with their citations as rows.

    `starts[i]:starts[i + 1]` are the rows of memory `i`. `mentionable` holds the
    memories whose file may mention code in prose (the index knows from the bytes it
    read); only those are read again for their mentions. `memories`, when given,
    are the memories the batch was made from (a memory read from its file).
    """

    __slots__ = ("_citations", "ids", "memories", "mentionable", "paths", "rows", "starts")

    def __init__(
        self,
        paths: list[str],
        ids: list[str | None],
        starts: list[int],
        rows: list[Row],
        mentionable: set[int] | None = None,
        memories: list[Memory] | None = None,
        citations: list[Citation] | None = None,
    ) -> None:
        self.paths = paths
        self.ids = ids
        self.starts = starts
        self.rows = rows
        self.mentionable = set(range(len(paths))) if mentionable is None else mentionable
        self.memories = memories
        self._citations = citations

    @classmethod
    def of(cls, batch: Sequence[Verifiable]) -> CitedBatch:
        """A batch of memories already read (one memory verified just in time, search
        results): their citations become rows, and the objects are kept."""
        paths, ids, starts, rows, citations = [], [], [0], [], []
        for memory, lines, cid in batch:
            paths.append(memory.path)
            ids.append(cid)
            for n, c in enumerate(memory.meta.citations):
                extra = json.dumps(c.extra) if c.extra else None
                at = lines[n] if n < len(lines) else None
                rows.append((c.target, c.line, c.end_line, c.snippet, c.verified, c.commit,
                             extra, at))  # fmt: skip
                citations.append(c)
            starts.append(len(rows))
        memories = [memory for memory, _, _ in batch]
        return cls(paths, ids, starts, rows, None, memories, citations)

    def __len__(self) -> int:
        return len(self.paths)

    def extend(self, more: CitedBatch) -> None:
        """Append another batch read from the index (in chunks of paths)."""
        offset, count = len(self.rows), len(self.paths)
        self.mentionable.update(count + i for i in more.mentionable)
        self.paths.extend(more.paths)
        self.ids.extend(more.ids)
        self.rows.extend(more.rows)
        self.starts.extend(offset + start for start in more.starts[1:])

    def citation(self, k: int) -> Citation:
        """Row `k` as a Citation (the one the batch was made from, when it was)."""
        if self._citations is not None:
            return self._citations[k]
        target, line, end, snippet, verified, commit, extra, _ = self.rows[k]
        fields = tuple(tuple(pair) for pair in json.loads(extra)) if extra else ()
        return Citation(target, line, end, snippet, verified, commit, fields)

    def citations_of(self, i: int) -> tuple[Citation, ...]:
        return tuple(self.citation(k) for k in range(self.starts[i], self.starts[i + 1]))

    def lines_of(self, i: int) -> tuple[int | None, ...]:
        """Where each citation of memory `i` is written in its file."""
        start, end = self.starts[i], self.starts[i + 1]
        if start == end:  # most memories a run reads for mentions: no generator made
            return ()
        return tuple(row[7] for row in self.rows[start:end])

    def memory(self, i: int) -> Memory:
        """Memory `i` as verification needs it (its path and citations; no content)."""
        if self.memories is not None:
            return self.memories[i]
        if self.starts[i] == self.starts[i + 1]:  # most memories a run reads for mentions
            return Memory(self.paths[i], "", _UNCITED, None)
        return Memory(self.paths[i], "", MemoryMeta(citations=self.citations_of(i)), None)

    def verifiable(self, i: int) -> Verifiable:
        return self.memory(i), self.lines_of(i), self.ids[i]
