"""Search over the index: BM25 by default, semantic and hybrid as an option.

Lexical search is SQLite FTS5 with BM25, title and tags weighted above path
and body. A query is never passed to FTS5 as syntax: its words are extracted
and quoted (quoted phrases stay phrases), so `"`, `-`, `*`, `:` or parentheses
in a question can neither crash the search nor change its meaning. Words are
OR-ed: agents ask questions, and BM25 ranks documents matching more of the
words higher anyway. Hybrid search fuses the lexical and semantic rankings
with reciprocal rank fusion (k = 60).
"""

from __future__ import annotations

import enum
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.index.rows import ROW_COLUMNS, Row, row_from

WEIGHTS = (10.0, 6.0, 3.0, 1.0)  # title, tags, path, content
# Snippets come from the content column: with -1, FTS5 picks the best-matching
# column, which may be the tags (joined by an invisible \x1f) or the bare path.
_SNIPPET_COLUMN = 3
RRF_K = 60
_FETCH = 50
_PHRASE = re.compile(r'"([^"]+)"')
_WORD = re.compile(r"\w+", re.UNICODE)


class Mode(enum.Enum):
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


def fts_query(text: str) -> str:
    """A safe FTS5 MATCH expression for free text; InvalidInputError when nothing is searchable."""
    terms = [f'"{p.strip()}"' for p in _PHRASE.findall(text) if _WORD.search(p)]
    rest = _PHRASE.sub(" ", text)
    terms += [f'"{word}"' for word in dict.fromkeys(w.lower() for w in _WORD.findall(rest))]
    if not terms:
        raise InvalidInputError(f"query {text!r} has no words to search for")
    return " OR ".join(terms)


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


def lexical(conn: sqlite3.Connection, query: str, filters: Filters, limit: int) -> list[Hit]:
    where, args = filter_sql(filters)
    columns = ", ".join(f"m.{c.strip()}" for c in ROW_COLUMNS.split(","))
    weights = ", ".join(str(w) for w in WEIGHTS)
    sql = (
        f"SELECT {columns}, bm25(memories_fts, {weights}) AS rank, "
        f"snippet(memories_fts, {_SNIPPET_COLUMN}, '**', '**', '…', 16) "
        "FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid "
        f"WHERE memories_fts MATCH ? AND {where} ORDER BY rank LIMIT ?"
    )
    try:
        found = conn.execute(sql, [fts_query(query), *args, limit]).fetchall()
    except sqlite3.OperationalError as exc:  # pragma: no cover - fts_query quotes everything
        raise InvalidInputError(f"cannot search for {query!r}: {exc}") from None
    return [
        Hit(row_from(values[:-2]), -float(values[-2]), str(values[-1]), lexical_rank=n + 1)
        for n, values in enumerate(found)
    ]


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
    lexical_hits = _lexical_or_empty(conn, query, filters)
    semantic_hits = semantic(conn, query, filters, _FETCH)
    return fuse(lexical_hits, semantic_hits, limit)


def _lexical_or_empty(conn: sqlite3.Connection, query: str, filters: Filters) -> list[Hit]:
    try:
        return lexical(conn, query, filters, _FETCH)
    except InvalidInputError:
        return []  # a query of only punctuation can still be embedded


def fuse(lexical_hits: list[Hit], semantic_hits: list[Hit], limit: int) -> list[Hit]:
    """Reciprocal rank fusion: score = sum over rankings of 1 / (k + rank)."""
    merged: dict[str, Hit] = {}
    scores: dict[str, float] = {}
    for hits, key in ((lexical_hits, "lexical_rank"), (semantic_hits, "semantic_rank")):
        for rank, hit in enumerate(hits, start=1):
            path = hit.row.path
            scores[path] = scores.get(path, 0.0) + 1.0 / (RRF_K + rank)
            previous = merged.get(path)
            if previous is None:
                merged[path] = hit
            elif key == "semantic_rank":
                merged[path] = Hit(previous.row, 0, previous.snippet, previous.lexical_rank, rank)
    ranked = sorted(merged, key=lambda p: (-scores[p], p))[:limit]
    return [
        Hit(
            merged[p].row,
            round(scores[p], 6),
            merged[p].snippet,
            merged[p].lexical_rank,
            merged[p].semantic_rank,
        )
        for p in ranked
    ]
