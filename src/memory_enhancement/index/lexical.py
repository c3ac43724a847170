"""Lexical search: the BM25 ranking over the index's FTS5 tables (search.py wraps it).

Kept apart from search.py, with nothing but sqlite3 (its C module) and cjk.py, so that a
search in a new process (the quick read path, cli/fast.py) ranks with this very
code without importing `dataclasses`, `typing` or the semantic side: rows come
back as tuples, and search.py makes them `Hit`s. See search.py for how a query
becomes FTS5 terms and how the tiers are ranked.

Such a process must cost little more than a bare Python start, so an English
query imports no `re` (words are split by `cjk.WORDS`; quoted phrases and CJK
compile their patterns on first use), a word's stem is computed only when a tier
needs the variants, and a tier ranks the matches in the FTS table alone before
reading the few rows it keeps (`_tier`).
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # sqlite3 without `datetime`: see index/quick.py
import _thread
import functools

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.index import cjk, identifiers, idf
from memory_enhancement.index import snippets as cut  # `snippets` names a flag below
from memory_enhancement.index.columns import ROW_COLUMNS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    Ranked = tuple[tuple[Any, ...], float, str]  # (ROW_COLUMNS values, score, snippet)

# Snippets come from the content column: with -1, FTS5 picks the best-matching
# column, which may be the tags (joined by an invisible \x1f).
_SNIPPET_COLUMN = 2
# Matches are marked apart from the text's own `**` (snippets.emphasised makes them bold).
_SNIPPET = f"snippet(memories_fts, {_SNIPPET_COLUMN}, char(2), char(3), '…', 16)"
_PHRASE = r'"([^"]+)"'
_WORD = cjk.WORDS  # `_WORD.findall(text)`, as `re.findall(r"\w+", text)` (search.py reads it)
_WINDOW_MAX = 1000  # rows ranked apart before reading theirs (see _tier)
_COLUMNS = ", ".join(f"m.{c.strip()}" for c in ROW_COLUMNS.split(","))

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
    exact, searched, alone, parted = _terms(text, drop_stopwords)
    return exact, _variants(exact, searched, alone, parted)


def as_typed(text: str) -> str:
    """The query as typed, followed by its NFKC form when that differs.

    A Japanese or Chinese input method in full-width mode types `ＡＰＩ`, `ｐｎｐｍ`,
    half-width `ﾃｽﾄ`; memories spell them `API`, `pnpm`, `テスト`, and FTS5 does not fold
    widths, so such a query found nothing. Both forms are searched (OR-ed, as every
    term), so a memory written the typed way is still found. ASCII text is itself.
    """
    if text.isascii():
        return text
    import unicodedata

    folded = unicodedata.normalize("NFKC", text)
    return text if folded == text else f"{text} {folded}"


def _usual_width(texts: list[str]) -> list[str]:
    """The texts that NFKC leaves as they are: a query's words and terms without their
    full- or half-width forms (as_typed searches both)."""
    import unicodedata

    return [t for t in texts if unicodedata.normalize("NFKC", t) == t]


def _terms(text: str, drop_stopwords: bool) -> tuple[list[str], list[str], str, list[str]]:
    """(the exact terms of query_terms, the words whose stems are variants, the word
    searched alone as a prefix or "", the phrases of the words inside the camelCase names
    typed): what query_terms needs besides the stems."""
    typed, text = text, as_typed(text)
    words_as_written: list[str] = []
    rest = text
    if '"' in text:
        for phrase in cjk.regex(_PHRASE).findall(text):
            words = [w.lower() for w in _WORD.findall(phrase)]
            if words:
                words_as_written.append(_phrase_of(words))
        rest = cjk.regex(_PHRASE).sub(" ", text)
    typed_words = _WORD.findall(rest)
    words = list(dict.fromkeys(w.lower() for w in typed_words))
    # `MemoryService` typed: also the phrase of its words, which finds `memory_service`,
    # `memory-service` and, in the table of names' words, `MemoryServiceImpl` (a variant:
    # the name as typed ranks first).
    parted = [
        _phrase_of(list(identifiers.split(piece)))
        for word in typed_words
        for piece in word.split("_")
        if identifiers.is_compound(piece)
    ]
    content = [w for w in words if w not in STOPWORDS] if drop_stopwords else words
    searched = content or words  # a query of only function words is searched as it is
    for word in searched:
        words_as_written += cjk.query_terms(word)
    one_word, one_term = words, words_as_written
    if text != typed:  # `ＡＰＩ API`: one word, typed at another width, still counts as one
        one_word, one_term = _usual_width(words), _usual_width(words_as_written)
    alone = one_word[0] if len(one_word) == 1 and not one_term[1:] else ""
    if not (alone.isascii() and len(alone) >= 4 and alone not in STOPWORDS):
        alone = ""
    if not words_as_written:
        raise InvalidInputError(f"query {text!r} has no words to search for")
    return list(dict.fromkeys(words_as_written)), searched, alone, parted


def marked_terms(terms: list[str]) -> list[str]:
    """The terms a snippet highlights: a query's words without English function words
    when others remain. `the` and `of` are searched (their weight in BM25 is small), but
    in bold they drew the eye to every `the` of the text, away from the words that count."""
    kept = [t for t in terms if t.strip('"*') not in STOPWORDS]
    return kept or terms


def needles(query: str) -> list[str]:
    """What a snippet cut from the text highlights (cjk.needles), without English function
    words when others remain, as `marked_terms`."""
    found = cjk.needles(as_typed(query))
    kept = [n for n in found if n.lower() not in STOPWORDS]
    return kept or found


def _variants(exact: list[str], searched: list[str], alone: str, parted: list[str]) -> list[str]:
    """The variants of query_terms: the stems of the words searched, the word alone, the
    words of the camelCase names typed."""
    variants = [f'"{stem}"*' for stem in map(_stem, searched) if stem is not None]
    variants += parted
    if alone:
        variants.append(f'"{alone}"*')  # one word alone: also inside longer identifiers
    return [v for v in dict.fromkeys(variants) if v not in exact]


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
    Porter tokenizer computes the stem; a word with accents or in Cyrillic, which Porter
    does not read, is cut by inflection.py instead (`migrações` -> `migraç`).
    """
    global _STEMMER
    if not word.isascii():
        from memory_enhancement.index import inflection

        return inflection.stem(word)
    if not word.isalpha() or len(word) < 4:
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
    exact, searched, alone, parted = _terms(query, drop_stopwords)
    variants: list[str] | None = None

    def with_variants() -> list[str]:
        nonlocal variants
        if variants is None:
            variants = _variants(exact, searched, alone, parted)
        return [*exact, *variants]

    hits: list[Ranked] = []
    seen: set[int] = set()
    words: list[str] | None = None
    for table, terms in _tiers(exact, with_variants, words_first, lambda: len(hits) >= limit):
        marked = " OR ".join(marked_terms(terms))
        found = _tier(conn, table, terms, marked, where, args, limit + len(seen), snippets)
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
                words = words if words is not None else needles(query)
                snippet = cut.snippet(original, words)
            else:
                snippet = cut.emphasised(snippet)
            score = -float(values[-3])
            if floor is not None and top > 0:
                score = floor * 0.99 * score / top
            hits.append((values[1:-3], score, snippet if snippets else ""))
    return hits


def _tiers(
    exact: list[str],
    with_variants: Callable[[], list[str]],
    words_first: bool,
    full: Callable[[], bool],
) -> Iterator[tuple[str, list[str]]]:
    """(table, terms) of each tier in turn, until `full()`. The variants (stems: an FTS5
    table in memory) are computed only when a tier that needs them is reached: the
    words alone usually fill the limit."""
    if full():
        return
    if not words_first:
        yield "memories_fts", with_variants()
    else:
        yield "memories_fts", exact
        if full():
            return
        every = with_variants()
        if len(every) > len(exact):
            yield "memories_fts", every
    if not full():  # the words inside camelCase names (identifiers.py)
        yield "memories_parts_fts", with_variants()
    if not full():
        yield "memories_path_fts", with_variants()


def _tier(
    conn: sqlite3.Connection,
    table: str,
    terms: list[str],
    marked: str,
    where: str,
    args: list[object],
    wanted: int,
    snippets: bool,
) -> list[tuple[Any, ...]]:
    """The first `wanted` memories the table matches that pass `where`, best first, as
    (memory id, row columns..., -score, FTS snippet, text to cut a snippet from) rows.

    Ranked in the FTS table alone first and cut to a window of the best; then only the
    rows needed are read from `memories` (for `where` and the columns: the best
    `wanted`, and the rest of the window only if `where` rejects some), and only the
    kept ones given a snippet (highlighting the terms of `marked`, the match without its
    function words, or of match for a memory only they found). A common word matches
    thousands of memories, and reading each one's row (a page read each) and snippet was
    two thirds of a search. The order
    is the one a single query joining `memories` gives (`_joined`): SQLite sorts under a
    LIMIT by score, then by the order rows came in (the FTS table's, by rowid), and
    taking out the rows `where` rejects keeps that order. When the window holds fewer
    than `wanted` rows that pass and more matches exist (a narrow filter), `_joined`
    answers instead. When the window holds every match and FTS5 has weighed a term at
    nothing (in half the memories or more), they are ranked again (idf.py).
    """
    match = " OR ".join(terms)
    window = 2 * wanted + 16
    if window > _WINDOW_MAX:  # one SQL variable a row: a long list is read by the join
        return _joined(conn, table, match, marked, where, args, wanted, snippets)
    try:
        top = conn.execute(
            f"SELECT rowid, bm25({table}) AS rank FROM {table} "
            f"WHERE {table} MATCH ? ORDER BY rank LIMIT ?",
            (match, window),
        ).fetchall()
    except sqlite3.OperationalError as exc:  # pragma: no cover - query_terms quotes everything
        raise InvalidInputError(f"cannot search for {match!r}: {exc}") from None
    if not top:
        return []
    if idf.ENABLED and len(top) < window and len(terms) > 1:
        top = idf.reranked(conn, table, terms, top)
    if table == "memories_fts":
        text = "CASE WHEN m.fts_content IS NOT NULL THEN m.content END" if snippets else "NULL"
    else:
        text = "m.content" if snippets else "NULL"
    ids = [rowid for rowid, _ in top]
    rows: dict[int, tuple[Any, ...]] = {}
    for batch in (ids[:wanted], ids[wanted:]):  # the best first: they usually all pass
        if batch and len(rows) < wanted:
            marks = ", ".join("?" * len(batch))
            rows.update(
                (row[0], row)
                for row in conn.execute(
                    f"SELECT m.id, {_COLUMNS}, {text} FROM memories m "
                    f"WHERE m.id IN ({marks}) AND {where}",
                    [*batch, *args],
                )
            )
    kept = [(rows[rowid], rank) for rowid, rank in top if rowid in rows][:wanted]
    if len(kept) < wanted and len(top) == window:
        return _joined(conn, table, match, marked, where, args, wanted, snippets)
    cut: dict[int, str] = {}
    if snippets and table == "memories_fts":
        for row, _ in kept:
            if row[-1] is None:  # CJK text is cut from the original instead (snippets.snippet)
                cut[row[0]] = _snippet(conn, marked, row[0]) or _snippet(conn, match, row[0])
    return [(*row[:-1], rank, cut.get(row[0], ""), row[-1]) for row, rank in kept]


def _snippet(conn: sqlite3.Connection, match: str, rowid: int) -> str:
    """The FTS5 snippet of one memory for match, "" when match does not find it."""
    found = conn.execute(
        f"SELECT {_SNIPPET} FROM memories_fts WHERE memories_fts MATCH ? AND rowid = ?",
        (match, rowid),
    ).fetchone()
    return str(found[0]) if found else ""


def _joined(
    conn: sqlite3.Connection,
    table: str,
    match: str,
    marked: str,
    where: str,
    args: list[object],
    limit: int,
    snippets: bool,
) -> list[tuple[Any, ...]]:
    """What `_tier` returns, in one query joining every match's `memories` row."""
    if not snippets:
        cut = "'', NULL"
    elif table == "memories_fts":
        cut = f"{_SNIPPET}, CASE WHEN m.fts_content IS NOT NULL THEN m.content END"
    else:
        cut = "'', m.content"
    sql = (
        f"SELECT m.id, {_COLUMNS}, bm25({table}) AS rank, {cut} "
        f"FROM {table} JOIN memories m ON m.id = {table}.rowid "
        f"WHERE {table} MATCH ? AND {where} ORDER BY rank LIMIT ?"
    )
    found = conn.execute(sql, [match, *args, limit]).fetchall()
    if not snippets or table != "memories_fts" or marked == match:
        return found
    return [  # highlight the words that count (see _tier), where they found the memory
        (*row[:-2], _snippet(conn, marked, row[0]) or row[-2], row[-1]) if row[-1] is None else row
        for row in found
    ]
