"""The semantic side of hybrid search: its ranking, and which memories restate the first.

Stores of agents' memories repeat themselves: the same lesson is written down again
under another name (`labeler-001-negation-pattern-matcher-selection` and
`labeler-006-negation-pattern-isolation`), often next to a cluster of memories on the
same topic that the query's words cannot tell apart. Once the fusion has picked its
first result, the memories either side found whose vectors are closest to that result's
(the mean of their chunk vectors, cosine at least NEAR_DUPLICATE) come right after it,
closest first: a memory that says what the best answer says is the next best answer.
Measured on the dev halves of the four query sets (docs/benchmarks.md, issue 13,
session 26): hybrid Recall@5 on the corpus questions 0.949 -> 0.962, the other sets
unchanged; the order among the near-duplicates matters (in the fusion's order instead
of by closeness, nothing was gained).

A query of one word stays ranked by its words (search.py; the Japanese single words
lost answers to this rule otherwise), and only memories the model can read take part
(at most READABLE of their text in Chinese, Japanese or Korean): all-MiniLM-L6-v2 was
trained on English, and how alike two Japanese texts look to it says little about what
they say. The rule is search.py's to apply; this module answers which memories are
near-duplicates.
"""

from __future__ import annotations

import bisect
import sqlite3
from dataclasses import dataclass

from memory_enhancement.index.embedder import Embedder, embedder
from memory_enhancement.index.search import Filters, Hit
from memory_enhancement.index.semantic import Progress, _matrix, semantic_search

__all__ = ["MOST", "NEAR_DUPLICATE", "READABLE", "Ranker", "near_duplicates", "ranker"]

NEAR_DUPLICATE = 0.85  # mean-vector cosine from which a memory restates another (chosen on dev)
MOST = 5  # near-duplicates moved up after the first result, the closest first
READABLE = 0.2  # the largest share of CJK in a memory whose vectors are compared


@dataclass(frozen=True)
class Ranker:
    """What `search.search` asks of the semantic side, with the model loaded once."""

    model: Embedder
    progress: Progress | None = None

    def __call__(
        self, conn: sqlite3.Connection, query: str, filters: Filters, limit: int
    ) -> list[Hit]:
        return semantic_search(conn, self.model, query, filters, limit, progress=self.progress)

    def near_duplicates(self, conn: sqlite3.Connection, first: str, others: list[str]) -> list[str]:
        return near_duplicates(conn, self.model.name, first, others)


def ranker(model: str, progress: Progress | None = None) -> Ranker:
    """The semantic side for `search.search` (semantic and hybrid modes)."""
    return Ranker(embedder(model), progress)


def near_duplicates(
    conn: sqlite3.Connection,
    model: str,
    first: str,
    others: list[str],
    *,
    threshold: float = NEAR_DUPLICATE,
    most: int = MOST,
) -> list[str]:
    """The paths among `others` whose memories restate `first`'s, closest first.

    Closeness is the cosine of the two memories' mean chunk vectors; a memory without
    vectors of the model (not embedded yet), or mostly in CJK, is nobody's duplicate.
    """
    import numpy as np

    if not others:
        return []
    matrix = _matrix(conn, model)
    wanted = [first, *others]
    found: dict[str, int] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        for path, digest, cjk in conn.execute(
            "SELECT path, hash, cjk FROM memories "
            f"WHERE path IN ({','.join('?' * len(part))}) AND error IS NULL",
            part,
        ):
            at = bisect.bisect_left(matrix.hashes, digest)  # _matrix reads them by hash
            if cjk <= READABLE and at < len(matrix.hashes) and matrix.hashes[at] == digest:
                found[path] = at
    candidates = [p for p in dict.fromkeys(others) if p != first and p in found]
    if first not in found or not candidates:
        return []
    texts = np.array([found[first], *(found[p] for p in candidates)], dtype=np.intp)
    starts = matrix.starts[texts]
    counts = np.append(matrix.starts, len(matrix.rows))[texts + 1] - starts
    sums = np.zeros((len(texts), matrix.rows.shape[1]), dtype=np.float32)
    for k in range(int(counts.max())):  # a text's k-th chunk, for the texts that have one
        sums += np.where((k < counts)[:, None], matrix.rows[starts + np.minimum(k, counts - 1)], 0)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    means = sums / np.where(norms > 0, norms, 1.0)
    cosines = (means[1:] @ means[0]).tolist()
    close = sorted(
        ((cosine, path) for cosine, path in zip(cosines, candidates, strict=True)
         if cosine >= threshold),
        key=lambda pair: (-pair[0], pair[1]),
    )  # fmt: skip
    return [path for _, path in close[:most]]
