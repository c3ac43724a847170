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
scaled to [0, 1] within its list (`fuse`): a memory only one side finds, but
finds clearly, can win, which reciprocal rank fusion with k = 60 does not allow
(any memory both lists find weakly beats the first of one list). The weight was
chosen on the dev halves of four query sets (docs/benchmarks.md, issue 13).
"""

from __future__ import annotations

import enum
import functools
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.index import cjk
from memory_enhancement.index.rows import ROW_COLUMNS, Row, row_from

# Snippets come from the content column: with -1, FTS5 picks the best-matching
# column, which may be the tags (joined by an invisible \x1f).
_SNIPPET_COLUMN = 2
LEXICAL_WEIGHT = 0.5  # of the lexical score in hybrid (1 - this: the semantic one); chosen on dev
FETCH = 50  # hits taken from each side before fusing
HYBRID_STOPWORDS = True  # drop function words on the lexical side of hybrid
HYBRID_WORDS_FIRST = False  # hybrid's lexical side: one BM25 over words and stems (chosen on dev)
_PHRASE = re.compile(r'"([^"]+)"')
_WORD = re.compile(r"\w+", re.UNICODE)


# English function words, left out of a question's terms on the lexical side of hybrid
# search, where the model reads the question whole; measured in docs/benchmarks.md.
_STOPWORDS = """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing don down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves"""
STOPWORDS = frozenset(_STOPWORDS.split())


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


def query_terms(text: str, *, drop_stopwords: bool = False) -> tuple[list[str], list[str]]:
    """A query's FTS5 terms (quoted, to be OR-ed): (its words as written, their variants).

    The words are what a plain BM25 would search for (with CJK runs as the index holds
    them); the variants are each English word's stem as a prefix (`deploying` ->
    `deploy*`), and a single word alone as a prefix (inside longer identifiers).
    `drop_stopwords` leaves English function words out when other words remain.
    InvalidInputError when nothing is searchable.
    """
    words_as_written: list[str] = []
    variants: list[str] = []
    for phrase in _PHRASE.findall(text):
        words = [w.lower() for w in _WORD.findall(phrase)]
        if words:
            words_as_written.append(_phrase_of(words))
    rest = _PHRASE.sub(" ", text)
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(rest)))
    content = [w for w in words if w not in STOPWORDS] if drop_stopwords else words
    for word in content or words:  # a query of only function words is searched as it is
        words_as_written += cjk.query_terms(word)
        stem = _stem(word)
        if stem is not None:
            variants.append(f'"{stem}"*')
    alone = words[0] if len(words) == 1 and not words_as_written[1:] else ""
    if alone.isascii() and len(alone) >= 4 and alone not in STOPWORDS:
        variants.append(f'"{alone}"*')  # one word alone: also inside longer identifiers
    if not words_as_written:
        raise InvalidInputError(f"query {text!r} has no words to search for")
    exact = list(dict.fromkeys(words_as_written))
    return exact, [v for v in dict.fromkeys(variants) if v not in exact]


def fts_query(text: str, *, drop_stopwords: bool = False) -> str:
    """A safe FTS5 MATCH expression for free text: its words and their variants, OR-ed."""
    exact, variants = query_terms(text, drop_stopwords=drop_stopwords)
    return " OR ".join([*exact, *variants])


_STEMMER: sqlite3.Connection | None = None
_STEMMER_LOCK = threading.Lock()


@functools.lru_cache(maxsize=4096)
def _stem(word: str) -> str | None:
    """The stem of an English word when it differs (`deploying` -> `deploy`), else None.

    The index keeps words as written (a stemmed index ranked below plain BM25 on the
    query sets, docs/benchmarks.md); a query word is searched as written and as its
    stem's prefix, so inflections still match and exact words rank first. SQLite's own
    Porter tokenizer computes the stem.
    """
    global _STEMMER
    if not word.isascii() or not word.isalpha() or len(word) < 4:
        return None
    with _STEMMER_LOCK:
        if _STEMMER is None:
            _STEMMER = sqlite3.connect(":memory:", check_same_thread=False)
            _STEMMER.execute("CREATE VIRTUAL TABLE s USING fts5(x, tokenize='porter ascii')")
            _STEMMER.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'row')")
        _STEMMER.execute("DELETE FROM s")
        _STEMMER.execute("INSERT INTO s VALUES (?)", (word,))
        found = _STEMMER.execute("SELECT term FROM v").fetchone()
    stem = str(found[0]) if found else word
    # The index holds words as written, and Porter also rewrites endings (deploy ->
    # deploi): what inflections share is the part of the stem the word starts with.
    same = 0
    while same < min(len(stem), len(word)) and stem[same] == word[same]:
        same += 1
    shared = word[:same]
    return shared if shared != word and len(shared) >= 3 else None


def _phrase_of(words: list[str]) -> str:
    """A quoted phrase as the index holds it: CJK runs as bigrams."""
    tokens: list[str] = []
    for word in words:
        segmented = cjk.segment(word)
        tokens += _WORD.findall(segmented) if segmented else [word]
    return '"' + " ".join(tokens) + '"'


def filter_sql(filters: Filters) -> tuple[str, list[object]]:
    """WHERE conditions (on memories `m`) shared by every search mode."""
    clauses: list[str] = ["m.error IS NULL"]
    args: list[object] = []
    if filters.category:
        prefix = filters.category.strip("/") + "/"
        clauses.append("m.path >= ? AND m.path < ?")
        args += [prefix, prefix[:-1] + "0"]
    if filters.tag:
        clauses.append("EXISTS (SELECT 1 FROM tags t WHERE t.memory_id = m.id AND t.tag = ?)")
        args.append(filters.tag)
    if not filters.include_expired:
        clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        args.append(filters.now)
    return " AND ".join(clauses), args


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
    exact, variants = query_terms(query, drop_stopwords=drop_stopwords)
    tiers = [("memories_fts", [*exact, *variants]), ("memories_path_fts", [*exact, *variants])]
    if words_first and variants:
        tiers.insert(0, ("memories_fts", exact))
    hits: list[Hit] = []
    seen: set[int] = set()
    needles: list[str] | None = None
    for table, terms in tiers:
        if len(hits) >= limit:
            break
        found = _tier(conn, table, " OR ".join(terms), where, args, limit + len(seen), snippets)
        fresh = [values for values in found if values[0] not in seen][: limit - len(hits)]
        if not fresh:
            continue
        # Scores of a later tier are scaled below the last score so far: one ranking.
        top = max(-float(values[-3]) for values in fresh)
        floor = hits[-1].score if hits else None
        for values in fresh:
            seen.add(values[0])
            snippet, original = str(values[-2]), values[-1]
            if original is not None:  # indexed as bigrams, or found by path: cut from the text
                needles = needles if needles is not None else cjk.needles(query)
                snippet = cjk.snippet(original, needles)
            score = -float(values[-3])
            if floor is not None and top > 0:
                score = floor * 0.99 * score / top
            hits.append(
                Hit(row_from(values[1:-3]), score, snippet if snippets else "", len(hits) + 1)
            )
    return hits


def _tier(
    conn: sqlite3.Connection,
    table: str,
    match: str,
    where: str,
    args: list[object],
    limit: int,
    snippets: bool,
) -> list[tuple[Any, ...]]:
    """(memory id, row columns..., -score, FTS snippet, text to cut a snippet from) rows."""
    columns = ", ".join(f"m.{c.strip()}" for c in ROW_COLUMNS.split(","))
    if not snippets:
        cut = "'', NULL"
    elif table == "memories_fts":
        cut = (
            f"snippet(memories_fts, {_SNIPPET_COLUMN}, '**', '**', '…', 16), "
            "CASE WHEN m.fts_content IS NOT NULL THEN m.content END"
        )
    else:
        cut = "'', m.content"
    sql = (
        f"SELECT m.id, {columns}, bm25({table}) AS rank, {cut} "
        f"FROM {table} JOIN memories m ON m.id = {table}.rowid "
        f"WHERE {table} MATCH ? AND {where} ORDER BY rank LIMIT ?"
    )
    try:
        return conn.execute(sql, [match, *args, limit]).fetchall()
    except sqlite3.OperationalError as exc:  # pragma: no cover - query_terms quotes everything
        raise InvalidInputError(f"cannot search for {match!r}: {exc}") from None


def search(
    conn: sqlite3.Connection,
    query: str,
    filters: Filters,
    *,
    limit: int,
    mode: Mode,
    semantic: Callable[[sqlite3.Connection, str, Filters, int], list[Hit]] | None = None,
) -> list[Hit]:
    """Search in a mode; `semantic` ranks by embeddings when the extra is installed."""
    if limit < 1:
        raise InvalidInputError(f"invalid limit {limit}: it must be at least 1")
    if mode is Mode.LEXICAL:
        return lexical(conn, query, filters, limit)
    assert semantic is not None
    if mode is Mode.SEMANTIC:
        return semantic(conn, query, filters, limit)
    lexical_hits = hybrid_lexical(conn, query, filters)
    semantic_hits = semantic(conn, query, filters, FETCH)
    fused = fuse(lexical_hits, semantic_hits, limit, lexical_weight(query))
    return _with_snippets(conn, query, fused)


def _with_snippets(conn: sqlite3.Connection, query: str, hits: list[Hit]) -> list[Hit]:
    """Highlighted snippets for the hits the lexical side found (one FTS query for all)."""
    found = [h.row.path for h in hits if h.lexical_rank is not None]
    if not found:
        return hits
    rows = conn.execute(
        f"SELECT m.path, snippet(memories_fts, {_SNIPPET_COLUMN}, '**', '**', '…', 16), "
        "CASE WHEN m.fts_content IS NOT NULL THEN m.content END "
        "FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid "
        f"WHERE memories_fts MATCH ? AND m.path IN ({','.join('?' * len(found))})",
        [fts_query(query, drop_stopwords=HYBRID_STOPWORDS), *found],
    ).fetchall()
    cut: dict[str, str] = {}
    for path, snippet, original in rows:
        cut[path] = str(snippet) if original is None else cjk.snippet(original, cjk.needles(query))
    missing = [path for path in found if path not in cut]  # found by their path alone
    if missing:
        texts = conn.execute(
            f"SELECT path, content FROM memories WHERE path IN ({','.join('?' * len(missing))})",
            missing,
        ).fetchall()
        cut.update((path, cjk.snippet(text, cjk.needles(query))) for path, text in texts)
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


def _scaled(hits: list[Hit]) -> dict[str, float]:
    """Scores scaled to [0, 1] within one list: the best 1, the worst 0 (all 1 if equal)."""
    if not hits:
        return {}
    top = max(h.score for h in hits)
    bottom = min(h.score for h in hits)
    span = top - bottom
    return {h.row.path: (h.score - bottom) / span if span > 0 else 1.0 for h in hits}


def fuse(
    lexical_hits: list[Hit],
    semantic_hits: list[Hit],
    limit: int,
    weight: float = LEXICAL_WEIGHT,
) -> list[Hit]:
    """A convex mix: weight x lexical + (1 - weight) x semantic, each scaled within its list.

    A memory missing from a list scores 0 there. The semantic side counts only for the
    part of a memory the model can read: a memory all in Chinese or Japanese (`Hit.cjk`
    near 1) is ranked by its words alone, whatever the query. Ties go to the memory
    the lexical side ranked higher, then the semantic side, then by path.
    """
    lexical_scores = _scaled(lexical_hits)
    semantic_scores = _scaled(semantic_hits)
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
    # Equal scores: a memory a list found before one it did not. Scaled within its list,
    # the last lexical hit scores 0 there, as does every memory lexical did not find.
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
