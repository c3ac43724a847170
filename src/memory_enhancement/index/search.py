"""Search over the index: BM25, and semantic and hybrid with the optional extra.

Lexical search is SQLite FTS5 with BM25 over title, tags and text. The words of
a query as written rank first, exactly as a plain BM25 over them would; only
then come memories that match just an inflection (`_stem`) or their path
(`lexical`). A query is never
passed to FTS5 as syntax: its words are extracted
and quoted (quoted phrases stay phrases), so `"`, `-`, `*`, `:` or parentheses
in a question can neither crash the search nor change its meaning. Words are
OR-ed: agents ask questions, and BM25 ranks documents matching more of the
words higher anyway. Words in Chinese, Japanese or Korean are found inside
runs of text with no spaces through character bigrams (cjk.py).

Hybrid search fuses the two rankings by a convex mix of their scores, each
measured within its list from its floor in standard deviations (`fuse`): a memory
only one side finds, but finds clearly, can win, which reciprocal rank fusion with
k = 60 does not allow (any memory both lists find weakly beats the first of one
list), and a list that stands out counts for more than a flat one. The weight and the
scaling were chosen on the dev halves of four query sets (docs/benchmarks.md, issue 13). A
memory only the model found, and found weakly, is not listed (`SEMANTIC_FLOOR`). Then the
memories that restate the first result (its near-duplicates by their vectors, hybrid.py)
come right after it.
"""

from __future__ import annotations

import enum
import sqlite3
from dataclasses import dataclass, replace
from typing import Protocol

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.core.model import MAX_COUNT
from memory_enhancement.index import cjk, snippets
from memory_enhancement.index.columns import where_sql
from memory_enhancement.index.lexical import (
    _SNIPPET,
    _WORD,
    STOPWORDS,
    fts_query,
    needles,
    query_terms,
    ranked,
)
from memory_enhancement.index.rows import Row, row_from

__all__ = [
    "FETCH",
    "LEXICAL_WEIGHT",
    "SEMANTIC_FLOOR",
    "STOPWORDS",
    "Filters",
    "Hit",
    "Mode",
    "SemanticSide",
    "above_floor",
    "filter_sql",
    "fts_query",
    "fuse",
    "hybrid",
    "hybrid_lexical",
    "lexical",
    "lexical_weight",
    "near_first",
    "query_terms",
    "search",
]
LEXICAL_WEIGHT = 0.5  # of the lexical score in hybrid (1 - this: the semantic one); chosen on dev
FETCH = 50  # hits taken from each side before fusing
HYBRID_STOPWORDS = True  # drop function words on the lexical side of hybrid
HYBRID_WORDS_FIRST = False  # hybrid's lexical side: one BM25 over words and stems (chosen on dev)
SEMANTIC_FLOOR = 0.35  # the cosine a memory only the model finds needs to be listed in hybrid


class Mode(enum.Enum):
    AUTO = "auto"  # hybrid when the semantic index can answer, else lexical (the service decides)
    LEXICAL = "lexical"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class Filters:
    category: str | None = None
    tag: str | None = None
    include_expired: bool = False
    now: str = ""


@dataclass(frozen=True)
class Hit:
    """One result: the memory's row, a highlighted snippet and how it ranked."""

    row: Row
    score: float
    snippet: str
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    cjk: float = 0.0  # the share of the memory's text in CJK, which the model cannot read


class SemanticSide(Protocol):
    """What search asks of the semantic side (hybrid.Ranker, with the extra installed)."""

    def __call__(
        self, conn: sqlite3.Connection, query: str, filters: Filters, limit: int
    ) -> list[Hit]: ...

    def near_duplicates(
        self, conn: sqlite3.Connection, first: str, others: list[str]
    ) -> list[str]: ...


def filter_sql(filters: Filters) -> tuple[str, list[object]]:
    """WHERE conditions (on memories `m`) shared by every search mode."""
    return where_sql(filters.category, filters.tag, filters.include_expired, filters.now)


def lexical(
    conn: sqlite3.Connection,
    query: str,
    filters: Filters,
    limit: int,
    *,
    drop_stopwords: bool = False,
    snippets: bool = True,
    words_first: bool = True,
) -> list[Hit]:
    """BM25 hits; `snippets=False` leaves them empty (hybrid cuts them for its winners).

    With `words_first`, the memories are ranked in three tiers, each only filling
    what the one before left of `limit`: (1) BM25 over the query's words as written,
    in title, tags and text, the ranking a plain FTS5 BM25 gives; (2) the same with
    the words' variants (stems, prefixes), for what only an inflection of a word
    matches; (3) the memory's path. So for an English question, lexical search never
    ranks a memory below where plain BM25 over the same words would: stems and paths
    only add memories the words alone do not find (measured in docs/benchmarks.md,
    issue 13: stems mixed into one BM25 cost precision on questions). Without it, one
    BM25 over words and variants together, then paths (what hybrid's lexical side uses).
    """
    where, args = filter_sql(filters)
    found = ranked(
        conn, query, where, args, limit, drop_stopwords=drop_stopwords, snippets=snippets,
        words_first=words_first,
    )  # fmt: skip
    return [
        Hit(row_from(values), score, snippet, rank)
        for rank, (values, score, snippet) in enumerate(found, start=1)
    ]


def search(
    conn: sqlite3.Connection,
    query: str,
    filters: Filters,
    *,
    limit: int,
    mode: Mode,
    semantic: SemanticSide | None = None,
) -> list[Hit]:
    """Search in a mode; `semantic` ranks by embeddings when the extra is installed.

    Hybrid ranks every hit of both sides (`hybrid`), then keeps `limit`.
    """
    if limit < 1:
        raise InvalidInputError(f"invalid limit {limit}: it must be at least 1")
    limit = min(limit, MAX_COUNT)
    if mode is Mode.LEXICAL:
        return lexical(conn, query, filters, limit)
    assert semantic is not None
    if mode is Mode.SEMANTIC:
        return semantic(conn, query, filters, limit)
    lexical_hits = hybrid_lexical(conn, query, filters)
    semantic_hits = semantic(conn, query, filters, FETCH)
    ranked = hybrid(conn, query, lexical_hits, semantic_hits, semantic)
    return _with_snippets(conn, query, ranked[:limit])


def hybrid(
    conn: sqlite3.Connection,
    query: str,
    lexical_hits: list[Hit],
    semantic_hits: list[Hit],
    semantic: SemanticSide,
) -> list[Hit]:
    """Every hit of both sides, fused (`fuse`), less those only the model found weakly
    (`above_floor`), with the first result's near-duplicates moved up right after it
    (`near_first`); without snippets."""
    weight = lexical_weight(query)
    fused = fuse(lexical_hits, semantic_hits, len(lexical_hits) + len(semantic_hits), weight)
    fused = above_floor(fused, semantic_hits, cjk.share(query))
    if weight < 1.0 and len(fused) > 1:  # a query of one word stays ranked by its words
        paths = [h.row.path for h in fused]
        fused = near_first(fused, semantic.near_duplicates(conn, paths[0], paths[1:]))
    return fused


def above_floor(
    fused: list[Hit], semantic_hits: list[Hit], query_cjk: float, floor: float | None = None
) -> list[Hit]:
    """The fused hits less the memories only the semantic side found, with a cosine below
    `floor` for the part of the query and of the memory the model can read.

    The semantic side ranks every memory of a small store, however unlike the question:
    all-MiniLM-L6-v2 gives unrelated English text a cosine of about 0.1-0.3, so a store of
    18 memories listed all 18, and a Korean question, which the model cannot read, listed
    the memories after the one its words found. Measured on issue 13's query sets
    (docs/benchmarks.md, session 37): every labelled answer only the model found had a
    cosine of 0.36 or more, and 0.35 drops 99.95% of what hybrid listed for questions
    asked of a store without their answer whose words it does not hold. A cosine counts
    only for what the model reads: times the share of the memory, and of the query, not
    in CJK (`Hit.cjk`, `query_cjk`), so a query all in CJK keeps only what its words find.
    `floor` defaults to SEMANTIC_FLOOR as it is when called (bench/floor37.py varies it).
    """
    floor = SEMANTIC_FLOOR if floor is None else floor
    readable = 1.0 - query_cjk
    cosines = {h.row.path: h.score * (1.0 - h.cjk) * readable for h in semantic_hits}
    return [h for h in fused if h.lexical_rank is not None or cosines.get(h.row.path, 0) >= floor]


def near_first(hits: list[Hit], near: list[str]) -> list[Hit]:
    """The first hit, then the hits whose paths are in `near` (in its order), then the rest.

    Each keeps its own fused score, so a near-duplicate moved up may show a lower score
    than a hit it now precedes.
    """
    if not hits or not near:
        return hits
    by_path = {h.row.path: h for h in hits[1:]}
    moved = [by_path[p] for p in near if p in by_path]
    taken = {h.row.path for h in moved}
    return [hits[0], *moved, *(h for h in hits[1:] if h.row.path not in taken)]


def _with_snippets(conn: sqlite3.Connection, query: str, hits: list[Hit]) -> list[Hit]:
    """Highlighted snippets for the hits the lexical side found (one FTS query for all)."""
    found = [h.row.path for h in hits if h.lexical_rank is not None]
    if not found:
        return hits
    rows = conn.execute(
        f"SELECT m.path, {_SNIPPET}, "
        "CASE WHEN m.fts_content IS NOT NULL THEN m.content END "
        "FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid "
        f"WHERE memories_fts MATCH ? AND m.path IN ({','.join('?' * len(found))})",
        [fts_query(query, drop_stopwords=HYBRID_STOPWORDS), *found],
    ).fetchall()
    cut: dict[str, str] = {}
    for path, snippet, original in rows:
        cut[path] = (
            snippets.emphasised(str(snippet))
            if original is None
            else snippets.snippet(original, needles(query))
        )
    missing = [path for path in found if path not in cut]  # found by their path alone
    if missing:
        texts = conn.execute(
            f"SELECT path, content FROM memories WHERE path IN ({','.join('?' * len(missing))})",
            missing,
        ).fetchall()
        cut.update((path, snippets.snippet(text, needles(query))) for path, text in texts)
    return [replace(h, snippet=cut[h.row.path]) if h.row.path in cut else h for h in hits]


def lexical_weight(query: str, base: float = LEXICAL_WEIGHT) -> float:
    """The lexical side's weight for a query: more for text the model cannot read.

    all-MiniLM-L6-v2 was trained on English; on Chinese or Japanese it ranks barely
    better than chance (docs/benchmarks.md, issue 13), so the share of the query's
    characters that are CJK moves the weight from `base` towards 1. A query of one
    word (`pHash`, `offscreen`, `修正`) is all lexical: the model, trained on sentences,
    makes little of a lone word, while the index knows exactly which memories hold it;
    the semantic side then only ranks what the word does not find.
    """
    if len(_WORD.findall(query)) == 1:
        return 1.0
    letters = [c for c in query if c.isalnum()]
    if not letters:
        return base
    share = sum(1 for c in letters if cjk.has_cjk(c)) / len(letters)
    return base + (1 - base) * share


def hybrid_lexical(conn: sqlite3.Connection, query: str, filters: Filters) -> list[Hit]:
    try:
        return lexical(
            conn,
            query,
            filters,
            FETCH,
            drop_stopwords=HYBRID_STOPWORDS,
            snippets=False,
            words_first=HYBRID_WORDS_FIRST,
        )
    except InvalidInputError:
        return []  # a query of only punctuation can still be embedded


def _spread(hits: list[Hit], length: int = 0) -> dict[str, float]:
    """Each hit's height above the list's floor, in standard deviations of the list's scores.

    Scaled by its spread rather than by its range (the best 1, the worst 0, as before
    session 27), a list lets a hit that stands out from it count for more than the first
    of a flat list: when the model finds nothing much like the question, its cosines lie
    close together and min-max scaling stretched that noise to the full [0, 1], enough
    to outvote a clear first hit of the words (docs/benchmarks.md, issue 13, session 27).
    A list shorter than `length` is taken as that long, the memories it lacks scoring 0:
    a lexical list that holds every memory with a word of the query ends at BM25's zero,
    not at its own last hit. All equal: 1 each.
    """
    if not hits:
        return {}
    values = [h.score for h in hits] + [0.0] * max(length - len(hits), 0)
    mean = sum(values) / len(values)
    deviation = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    floor = min(values)
    return {h.row.path: (h.score - floor) / deviation if deviation > 0 else 1.0 for h in hits}


def fuse(
    lexical_hits: list[Hit],
    semantic_hits: list[Hit],
    limit: int,
    weight: float = LEXICAL_WEIGHT,
) -> list[Hit]:
    """A convex mix: weight x lexical + (1 - weight) x semantic, each measured within its
    list from its floor in standard deviations (`_spread`), then divided by the best, so
    the scores lie in [0, 1] and the first is 1.

    A memory missing from a list scores 0 there (the lexical list is taken as long as
    the semantic one, the memories it lacks at BM25's zero). The semantic side counts only for the
    part of a memory the model can read: a memory all in Chinese or Japanese (`Hit.cjk`
    near 1) is ranked by its words alone, whatever the query. Ties go to the memory
    the lexical side ranked higher, then the semantic side, then by path.
    """
    lexical_scores = _spread(lexical_hits, len(semantic_hits))
    semantic_scores = _spread(semantic_hits)
    by_path: dict[str, Hit] = {}
    for hit in (*lexical_hits, *semantic_hits):
        by_path.setdefault(hit.row.path, hit)  # lexical first: its snippet is highlighted
    lexical_rank = {h.row.path: n for n, h in enumerate(lexical_hits, start=1)}
    semantic_rank = {h.row.path: n for n, h in enumerate(semantic_hits, start=1)}
    readable = {h.row.path: 1.0 - h.cjk for h in semantic_hits}
    scores = {
        path: weight * lexical_scores.get(path, 0.0)
        + (1 - weight) * semantic_scores.get(path, 0.0) * readable.get(path, 1.0)
        for path in by_path
    }
    best = max(scores.values(), default=0.0)
    if best > 0:
        scores = {path: score / best for path, score in scores.items()}
    # Equal scores: a memory a list found before one it did not. Measured from its floor,
    # the last hit of a full list scores 0 there, as does every memory it did not find.
    ranked = sorted(
        by_path,
        key=lambda p: (
            -scores[p],
            lexical_rank.get(p, 10**9),
            semantic_rank.get(p, 10**9),
            p,
        ),
    )[:limit]
    return [
        Hit(
            by_path[p].row,
            round(scores[p], 6),
            by_path[p].snippet,
            lexical_rank.get(p),
            semantic_rank.get(p),
        )
        for p in ranked
    ]
