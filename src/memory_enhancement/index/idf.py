"""Lexical search's IDF in small stores: Lucene's where FTS5's weighs a word at nothing.

FTS5's `bm25()` weighs a term found in n of N memories by log((N - n + 0.5) / (n + 0.5)),
and by 1e-6 once that is not positive, so a word in half the memories or more counts for
nothing. Real Serena stores hold 4-15 memories, and there the word a query is about is
often in most of them (`菜单`, menu, in 6 of smart-admin's 7). lexical.py hands a tier's
matches here when its window holds all of them; `reranked` ranks them again. (It cannot
bring up a memory that lacks the query's other words: smart-admin's menu guide says 创建,
not 添加, and stays 4th for `如何添加新菜单`; docs/benchmarks.md.) Nothing but sqlite3's C
module and math: the quick read path (cli/fast.py) ranks with this code.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # sqlite3 without `datetime`: see index/quick.py
import math

# bench/small13.py turns these off to compare with FTS5's ranking (or the second off for
# Lucene's IDF in every window: docs/benchmarks.md, issue 13, session 33).
ENABLED = True
ONLY_WHEN_CLAMPED = True


def reranked(
    conn: sqlite3.Connection, table: str, terms: list[str], top: list[tuple[int, float]]
) -> list[tuple[int, float]]:
    """Every match of the terms (`top`: all of them, as (rowid, bm25)) ranked again by
    BM25 with Lucene's IDF, log(1 + (N - n + 0.5) / (n + 0.5)), when FTS5's clamps.

    FTS5 weighs a term found in n of N memories by log((N - n + 0.5) / (n + 0.5)), and
    by 1e-6 once that is not positive: a word in half the memories or more counts for
    nothing. In a store of a few memories (Serena's hold 4-15) the word a query is about
    is often in most of them, and the query's other words alone decided the order (the
    memory about the word could come after a note that says the other word once, and
    the rest scored 0.0). Lucene's IDF stays positive, falling smoothly as n grows. It
    replaces FTS5's for the whole tier, and only when FTS5 clamps one of its terms: used
    everywhere, it cost a near-duplicate on the Japanese dev queries (docs/benchmarks.md,
    issue 13, session 33).

    Each term is matched alone: its BM25 is FTS5's IDF (known from n, the rows it
    matches, and N) times the term's share from its frequency and the memory's length,
    which is kept and weighed by Lucene's IDF instead. Only for a window holding every
    match (a small store, or rare words), so each term's rows are few, and only when a
    term can be in half the rows (when the matches are that many).
    """
    total = rows(conn, table)
    if ONLY_WHEN_CLAMPED and 2 * len(top) < total:  # no term is in half the rows
        return top
    scores: dict[int, float] = {}
    clamped = False
    for term in terms:
        found = conn.execute(
            f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ?", (term,)
        ).fetchall()
        n = len(found)
        if not n:
            continue
        ratio = (total - n + 0.5) / (n + 0.5)
        clamped = clamped or ratio <= 1
        fts5 = math.log(ratio) if ratio > 1 else 1e-6
        for rowid, score in found:
            scores[rowid] = scores.get(rowid, 0.0) + score / fts5 * math.log(1 + ratio)
    if ONLY_WHEN_CLAMPED and not clamped:
        return top
    # rowid order first, as FTS5 breaks ties (see _tier); sorted() keeps it among equals
    ordered = sorted(top, key=lambda row: row[0])
    return sorted(((rowid, scores.get(rowid, rank)) for rowid, rank in ordered), key=_score)


def _score(row: tuple[int, float]) -> float:
    return row[1]


def rows(conn: sqlite3.Connection, table: str) -> int:
    """N of FTS5's BM25: the rows of the table, the first varint of its averages record
    (the `_data` row of id 1, which FTS5 keeps up to date with every write)."""
    found = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    value = 0
    for byte in bytes(found[0]) if found and found[0] else b"":
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return value
