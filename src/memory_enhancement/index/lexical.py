"""Lexical search: the BM25 ranking over the index's FTS5 tables (search.py wraps it).

Kept apart from search.py, with nothing but `re`, `sqlite3` and cjk.py, so that a
search in a new process (the quick read path, cli/fast.py) ranks with this very
code without importing `dataclasses`, `typing` or the semantic side: rows come
back as tuples, and search.py makes them `Hit`s. See search.py for how a query
becomes FTS5 terms and how the tiers are ranked.
"""

from __future__ import annotations

import _thread
import functools
import re
import sqlite3

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.index import cjk
from memory_enhancement.index.columns import ROW_COLUMNS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

    Ranked = tuple[tuple[Any, ...], float, str]  # (ROW_COLUMNS values, score, snippet)

# Snippets come from the content column: with -1, FTS5 picks the best-matching
# column, which may be the tags (joined by an invisible \x1f).
_SNIPPET_COLUMN = 2
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
_STEMMER_LOCK = _thread.allocate_lock()  # threading, without importing it


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


def where_sql(
    category: str | None, tag: str | None, include_expired: bool, now: str
) -> tuple[str, list[object]]:
    """WHERE conditions (on memories `m`) shared by every search mode (search.filter_sql)."""
    clauses: list[str] = ["m.error IS NULL"]
    args: list[object] = []
    if category:
        prefix = category.strip("/") + "/"
        clauses.append("m.path >= ? AND m.path < ?")
        args += [prefix, prefix[:-1] + "0"]
    if tag:
        clauses.append("EXISTS (SELECT 1 FROM tags t WHERE t.memory_id = m.id AND t.tag = ?)")
        args.append(tag)
    if not include_expired:
        clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        args.append(now)
    return " AND ".join(clauses), args


def ranked(
    conn: sqlite3.Connection,
    query: str,
    where: str,
    args: list[object],
    limit: int,
    *,
    drop_stopwords: bool = False,
    snippets: bool = True,
    words_first: bool = True,
) -> list[Ranked]:
    """The hits of search.lexical (see there) as (row values, score, snippet), best first."""
    exact, variants = query_terms(query, drop_stopwords=drop_stopwords)
    tiers = [("memories_fts", [*exact, *variants]), ("memories_path_fts", [*exact, *variants])]
    if words_first and variants:
        tiers.insert(0, ("memories_fts", exact))
    hits: list[Ranked] = []
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
        floor = hits[-1][1] if hits else None
        for values in fresh:
            seen.add(values[0])
            snippet, original = str(values[-2]), values[-1]
            if original is not None:  # indexed as bigrams, or found by path: cut from the text
                needles = needles if needles is not None else cjk.needles(query)
                snippet = cjk.snippet(original, needles)
            score = -float(values[-3])
            if floor is not None and top > 0:
                score = floor * 0.99 * score / top
            hits.append((values[1:-3], score, snippet if snippets else ""))
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
