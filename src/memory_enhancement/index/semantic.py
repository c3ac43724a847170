"""Semantic search, an optional extra: `pip install './memory-enhancement[semantic]'`.

The model reads at most 256 word pieces, and most real memories are longer, so a
memory is embedded as chunks of about CHUNK_WORDS words, each with the title in
front, and it scores as its best chunk: a question about a detail near the end
finds the memory by that detail. Fenced code, URLs and markdown punctuation are
left out of what is embedded (the lexical side still searches them): they cost
word pieces and say little to a model trained on sentences.

Vectors are kept in the index under the content hash they were made from
(schema.py), so only memories whose text changed are embedded again; a
process that searches repeatedly (the MCP server) keeps them in memory until
they change (`_Matrix`), and one that searches once maps them from a float32
copy beside the index (vector_file.py). Embedding many memories reports
progress through a callback; the front end decides whether to draw a bar.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.index import vector_file
from memory_enhancement.index.cjk import RANGES, width_folded
from memory_enhancement.index.embedder import (
    DEFAULT_MODEL,
    INSTALL_HINT,
    Embedder,
    available,
    embedder,
)
from memory_enhancement.index.rows import ROW_COLUMNS, row_from
from memory_enhancement.index.search import Filters, Hit, filter_sql

# One matrix-vector product per search: OpenBLAS's threads cost four times the CPU of
# one thread for it (docs/benchmarks.md, issue 13). Read when numpy is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_MODEL",
    "INSTALL_HINT",
    "Embedder",
    "Progress",
    "available",
    "embedder",
    "passages",
    "pending",
    "refresh",
    "semantic_search",
]

Progress = Callable[[int, int], None]  # (memories embedded so far, memories to embed)

CHUNK_WORDS = 120
MAX_CHUNKS = 2  # per memory: more ranked worse on the dev sets (docs/benchmarks.md, issue 13)
_BATCH_MEMORIES = 32  # embedded and committed together: an interrupted run keeps its work
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\1[^\n]*$|\Z)", re.S | re.M)
_URL = re.compile(r"\b(?:https?|file)://\S+")
_MARKUP = re.compile(r"[|*#>`_=~\\[\]()<{}-]+")
# A word, or two characters of CJK text (which has no spaces; two such characters are
# about as many word pieces as an English word).
_UNIT = re.compile(f"[{RANGES}]{{1,2}}|[^\\s{RANGES}]+")


def passages(title: str, content: str) -> list[str]:
    """The texts a memory is embedded as: its chunks of prose, each after the title."""
    text = _MARKUP.sub(" ", _URL.sub(" ", _FENCE.sub(" ", width_folded(content))))
    words = _UNIT.findall(text)
    head = " ".join(_MARKUP.sub(" ", width_folded(title)).split())
    heading = _UNIT.findall(head)
    if heading and words[: len(heading)] == heading:
        words = words[len(heading) :]  # the heading repeats the title
    chunks = [
        " ".join(words[start : start + CHUNK_WORDS]) for start in range(0, len(words), CHUNK_WORDS)
    ][:MAX_CHUNKS]
    return [f"{head}. {chunk}" if head else chunk for chunk in chunks] or [head or " "]


def pending(conn: sqlite3.Connection, model: str) -> tuple[int, int]:
    """(memories that have vectors of this model, memories still to embed)."""
    if _texts_state(conn, model) is None:  # all of them, as a look found and nothing changed
        (every,) = conn.execute("SELECT count(*) FROM memories WHERE error IS NULL").fetchone()
        return int(every), 0
    done, todo = conn.execute(
        "SELECT count(v.hash), count(*) - count(v.hash) FROM memories m "
        "LEFT JOIN vectors v ON v.hash = m.hash AND v.model = ? WHERE m.error IS NULL",
        (model,),
    ).fetchone()
    return int(done), int(todo)


def refresh(conn: sqlite3.Connection, model: Embedder, progress: Progress | None = None) -> int:
    """Embed the memories whose text has no vectors yet; return how many were embedded.

    Vectors no memory uses any more are dropped when something was embedded. Batches
    are committed as they are done, so an interrupted run (Ctrl-C) keeps what it embedded.
    Once a look finds every text embedded, the next looks are skipped until a text or
    the vectors change (`_texts_state`).
    """
    import numpy as np

    name = model.name
    checked = _texts_state(conn, name)
    if checked is None:
        return 0  # no text changed since a look found every one embedded
    missing = conn.execute(
        "SELECT DISTINCT m.hash FROM memories m WHERE m.error IS NULL "
        "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.hash = m.hash AND v.model = ?)",
        (name,),
    ).fetchall()
    stale: list[tuple[str, str, str]] = []
    for chunk in range(0, len(missing), 500):  # the texts only of what is to embed
        digests = [row[0] for row in missing[chunk : chunk + 500]]
        stale += conn.execute(
            "SELECT hash, min(title), min(content) FROM memories "
            f"WHERE hash IN ({','.join('?' * len(digests))}) GROUP BY hash ORDER BY min(path)",
            digests,
        ).fetchall()
    if not stale:
        _record(conn, checked)
        return 0
    if progress:
        progress(0, len(stale))
    for start in range(0, len(stale), _BATCH_MEMORIES):
        batch = stale[start : start + _BATCH_MEMORIES]
        texts = [passages(title, content) for _, title, content in batch]
        vectors = model.encode([t for chunks in texts for t in chunks])
        rows, at = [], 0
        for (digest, _, _), chunks in zip(batch, texts, strict=True):
            part = vectors[at : at + len(chunks)].astype(np.float16)
            rows.append((digest, name, len(chunks), part.tobytes()))
            at += len(chunks)
        _write(conn, "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
        if progress:
            progress(min(start + _BATCH_MEMORIES, len(stale)), len(stale))
    if (
        stale
        and conn.execute(  # texts changed: the vectors of their old versions may be unused
            "SELECT 1 FROM vectors v WHERE NOT EXISTS "
            "(SELECT 1 FROM memories m WHERE m.hash = v.hash) LIMIT 1"
        ).fetchone()
    ):
        _write(
            conn,
            "DELETE FROM vectors WHERE NOT EXISTS "
            "(SELECT 1 FROM memories m WHERE m.hash = vectors.hash)",
            None,
        )
    # Every text seen at the start now has vectors: the texts' generation of then, with
    # the vectors' of now (only this run's writes, or more vectors, moved it on).
    (vectors_now,) = conn.execute(
        "SELECT value FROM meta WHERE key = 'vectors_generation'"
    ).fetchone() or ("0",)
    _record(conn, (checked[0], f"{checked[1].partition('-')[0]}-{vectors_now}"))
    return len(stale)


def _record(conn: sqlite3.Connection, checked: tuple[str, str]) -> None:
    with contextlib.suppress(sqlite3.OperationalError):  # busy or read-only: look again
        _write(conn, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [checked])


def _texts_state(conn: sqlite3.Connection, model: str) -> tuple[str, str] | None:
    """The meta row to write once every text has vectors of the model, or None if the
    last look found that and neither the texts nor the vectors changed since.

    Looking costs a pass over every memory's hash (~4 ms at 10,000 memories), which
    a search would otherwise pay every time; the generations are moved on by triggers
    (schema.py).
    """
    key = f"embedded:{model}"
    found = dict(
        conn.execute(
            "SELECT key, value FROM meta "
            "WHERE key IN ('texts_generation', 'vectors_generation', ?)",
            (key,),
        )
    )
    now = f"{found.get('texts_generation', '0')}-{found.get('vectors_generation', '0')}"
    return None if found.get(key) == now else (key, now)


def _write(conn: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]] | None) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if rows is None:
            conn.execute(sql)
        else:
            conn.executemany(sql, rows)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


@dataclass(frozen=True)
class _Matrix:
    """Every chunk vector of a model, one row each, and which memory text owns each row."""

    generation: str
    hashes: list[str]  # one per text, in order
    starts: npt.NDArray[np.intp]  # the first row of each text
    rows: npt.NDArray[np.float32]


_MATRICES: dict[tuple[str, str], _Matrix] = {}
_MATRICES_LOCK = threading.Lock()


def _matrix(conn: sqlite3.Connection, model: str) -> _Matrix:
    """The vectors of a model, read from the index only when they changed since last time.

    A process that searches once (the CLI) reads them from the float32 file beside the
    index when it is there and current (vector_file.py), and otherwise writes it for
    the next process.
    """
    import numpy as np

    found = dict(
        conn.execute("SELECT key, value FROM meta WHERE key IN ('vectors_generation', 'instance')")
    )
    instance = found.get("instance")
    generation = f"{instance or ''}-{found.get('vectors_generation', '0')}"
    database = conn.execute("PRAGMA database_list").fetchone()[2] or ""
    key = (database or f"memory:{id(conn)}", model)
    with _MATRICES_LOCK:
        cached = _MATRICES.get(key)
        if cached is not None and cached.generation == generation:
            return cached
    on_disk = bool(database and instance)  # an index of before `instance`: no file
    mapped = vector_file.load(database, model, generation) if on_disk else None
    if mapped is not None:
        matrix = _Matrix(generation, *mapped)
    else:
        stored = conn.execute(
            "SELECT hash, chunks, data FROM vectors WHERE model = ? ORDER BY hash", (model,)
        ).fetchall()
        counts = np.array([chunks for _, chunks, _ in stored], dtype=np.intp)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)
        data = b"".join(blob for _, _, blob in stored)
        rows = np.frombuffer(data, dtype=np.float16).astype(np.float32)
        rows = rows.reshape(-1, _dimensions(data, counts))
        matrix = _Matrix(generation, [digest for digest, _, _ in stored], starts, rows)
        if on_disk and matrix.hashes:
            vector_file.save(database, model, generation, matrix.hashes, starts, rows)
    with _MATRICES_LOCK:
        _MATRICES[key] = matrix
    return matrix


def _dimensions(data: bytes, counts: npt.NDArray[np.intp]) -> int:
    total = int(counts.sum())
    return len(data) // 2 // total if total else 1


def semantic_search(
    conn: sqlite3.Connection,
    model: Embedder,
    query: str,
    filters: Filters,
    limit: int,
    *,
    progress: Progress | None = None,
) -> list[Hit]:
    """The memories closest in meaning to the query: cosine similarity of the best chunk.

    Memories not embedded yet are embedded first (all of them, the first time).
    """
    if not available():  # before importing numpy, which is part of the extra
        raise InvalidInputError(INSTALL_HINT)
    import numpy as np

    if not (query := width_folded(query)).strip():
        raise InvalidInputError("query is empty")
    refresh(conn, model, progress)
    matrix = _matrix(conn, model.name)
    if not matrix.hashes:
        return []
    best = np.maximum.reduceat(matrix.rows @ _query_vector(conn, model, query), matrix.starts)
    ranked = _best_allowed(conn, matrix.hashes, best, filters, limit)
    if not ranked:
        return []
    columns = ", ".join(f"m.{c.strip()}" for c in ROW_COLUMNS.split(","))
    ids = [memory_id for _, memory_id in ranked]
    found = {
        values[0]: values[1:]
        for values in conn.execute(
            f"SELECT m.id, {columns}, m.cjk, substr(m.content, 1, 200) FROM memories m "
            f"WHERE m.id IN ({','.join('?' * len(ids))})",
            ids,
        )
    }
    return [
        Hit(
            row_from(found[memory_id][:-2]),
            round(float(score), 6),
            " ".join(str(found[memory_id][-1]).split()),
            semantic_rank=n + 1,
            cjk=float(found[memory_id][-2]),
        )
        for n, (score, memory_id) in enumerate(ranked)
    ]


QUERY_CACHE = 1000  # query vectors kept


def _query_vector(conn: sqlite3.Connection, model: Embedder, query: str) -> npt.NDArray[np.float32]:
    """The query's vector, from the cache of recent queries or from the model."""
    import numpy as np

    found = conn.execute(
        "SELECT vector FROM query_vectors WHERE model = ? AND query = ?", (model.name, query)
    ).fetchone()
    if found is not None:
        cached: npt.NDArray[np.float32] = np.frombuffer(found[0], dtype=np.float32)
        return cached
    vector: npt.NDArray[np.float32] = model.encode([query])[0]
    with contextlib.suppress(sqlite3.OperationalError):  # busy: the next search caches it
        _write(
            conn,
            "INSERT OR REPLACE INTO query_vectors(model, query, vector) VALUES (?, ?, ?)",
            [(model.name, query, vector.tobytes())],
        )
        if conn.execute("SELECT max(rowid) % 100 = 0 FROM query_vectors").fetchone()[0]:
            _write(
                conn,
                "DELETE FROM query_vectors WHERE rowid <= "
                f"(SELECT max(rowid) - {QUERY_CACHE} FROM query_vectors)",
                None,
            )
    return vector


def _best_allowed(
    conn: sqlite3.Connection,
    hashes: list[str],
    best: npt.NDArray[np.float32],
    filters: Filters,
    limit: int,
) -> list[tuple[float, int]]:
    """The `limit` best (score, memory id) among memories the filters allow.

    The best texts are taken first and only they are checked against the filters,
    four times as many as wanted, more if too few pass: reading every memory's row
    to filter first would cost more than the search itself in a large store.
    """
    import numpy as np

    where, args = filter_sql(filters)
    take = min(len(hashes), max(limit * 4, 64))
    while True:
        top = np.argpartition(-best, take - 1)[:take] if take < len(hashes) else np.arange(take)
        score_of = {hashes[i]: float(best[i]) for i in top.tolist()}
        digests = list(score_of)
        found: list[tuple[float, int]] = []
        for chunk in range(0, len(digests), 500):
            part = digests[chunk : chunk + 500]
            found += [
                (score_of[digest], memory_id)
                for memory_id, digest in conn.execute(
                    f"SELECT m.id, m.hash FROM memories m WHERE m.hash IN "
                    f"({','.join('?' * len(part))}) AND {where}",
                    [*part, *args],
                )
            ]
        if len(found) >= limit or take == len(hashes):
            return sorted(found, key=lambda pair: (-pair[0], pair[1]))[:limit]
        take = min(len(hashes), take * 4)
