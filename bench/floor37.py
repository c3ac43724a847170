"""Issue 13, session 37: what hybrid search lists from the semantic side alone, with and
without a cosine floor (`search.SEMANTIC_FLOOR`, `search.above_floor`).

    .venv/bin/python bench/floor37.py [--floors 0.25,0.3,0.35,0.4] [--cache DIR] [--out FILE]

Two kinds of query, each ranked through `search.hybrid` once per floor (`off`: none):

* **labelled**: the five query sets (corpus and paraphrase over the shared corpus, ja per
  store, zh pooled and per store, small per store): R@5 / MRR@10 per set and split, and
  the cosine of every labelled answer only the semantic side found;
* **no answer**: every query of every set asked of each small, zh and ja store it was not
  written for (for zh, of the stores of no zh query): whatever hybrid lists is unrelated.
  Counted over each query's first 10 results: how many are listed, how many for queries
  whose words no memory of the store holds (nothing but the model finds anything), and
  how many of those queries list nothing.

Writes the figures to --out as JSON and prints them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from memory_enhancement.index import search, semantic
from memory_enhancement.index.hybrid import Ranker
from memory_enhancement.index.search import FETCH, Filters, hybrid, hybrid_lexical

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_search_quality import _slug, embedded_index, metrics  # noqa: E402
from queries.datasets import Query, load, materialised, pool_relevant  # noqa: E402

EVERYTHING = Filters(include_expired=True, now="")
LABELLED = (
    ("corpus", "corpus", "own"),
    ("paraphrase", "paraphrase", "own"),
    ("ja", "ja", "store"),
    ("zh", "zh", "pool"),
    ("zh/per-store", "zh", "store"),
    ("small", "small", "store"),
)


def rank(folder: Path, queries: list[Query], model: Any, cache: Path, floors: list[str]) -> Any:
    """Each query's hybrid list under each floor, and what its lexical side found."""
    home = Path(tempfile.mkdtemp(prefix="f37-"))
    out: dict[str, Any] = {}
    with embedded_index(folder, home, model, cache) as conn:
        side = Ranker(model)
        for q in queries:
            words = hybrid_lexical(conn, q.query, EVERYTHING)
            meaning = semantic.semantic_search(conn, model, q.query, EVERYTHING, FETCH)
            cosine = {h.row.path: h.score for h in meaning}
            row: dict[str, Any] = {"words": len(words), "ranked": {}, "alone": {}}
            for floor in floors:
                search.SEMANTIC_FLOOR = float("-inf") if floor == "off" else float(floor)
                hits = hybrid(conn, q.query, words, meaning, side)
                row["ranked"][floor] = [h.row.path for h in hits]
                row["alone"][floor] = {
                    h.row.path: cosine[h.row.path] for h in hits if h.lexical_rank is None
                }
            out[q.id] = row
    return out


def labelled(name: str, layout: str, model: Any, cache: Path, floors: list[str]) -> Any:
    qset = load(name)
    rows: dict[str, Any] = {}
    with materialised(qset) as roots:
        if layout == "own" or (layout == "pool" and name == "zh"):
            folder = next(iter(roots.values()))
            folder = folder.parent if name == "zh" else folder
            rows = rank(folder, qset.queries, model, cache, floors)
        else:
            for spec, folder in roots.items():
                mine = [q for q in qset.queries if q.store.spec == spec]
                rows.update(rank(folder, mine, model, cache, floors))
    relevant = pool_relevant if layout == "pool" else (lambda q: q.relevant)
    figures: dict[str, Any] = {}
    for split in ("dev", "test"):
        chosen = qset.split(split)
        figures[split] = {
            floor: metrics({q: r["ranked"][floor] for q, r in rows.items()}, chosen, relevant)
            for floor in floors
        }
    alone = sorted(
        (round(r["alone"]["off"][a], 3), q.id, q.split)
        for q in qset.queries
        for r in [rows[q.id]]
        for a in relevant(q)
        if a in r["alone"]["off"]
    )
    figures["answers found by the model alone (cosine, query, split)"] = alone
    figures["top 10 listed"] = {
        f: sum(len(r["ranked"][f][:10]) for r in rows.values()) for f in floors
    }
    return figures


def no_answer(model: Any, cache: Path, floors: list[str]) -> Any:
    sets = {n: load(n) for n in ("corpus", "paraphrase", "ja", "zh", "small")}
    every = [q for s in sets.values() for q in s.queries]
    zh_ids = {q.id for q in sets["zh"].queries}
    counts: dict[str, Counter[str]] = {f: Counter() for f in floors}
    done: set[str] = set()
    for name in ("small", "zh", "ja"):
        with materialised(sets[name]) as roots:
            for spec, folder in roots.items():
                if spec in done:
                    continue
                done.add(spec)
                theirs = zh_ids if name == "zh" or spec.startswith("1024-lab/") else set()
                mine = [
                    q for q in every
                    if not (q.store is not None and q.store.spec == spec) and q.id not in theirs
                ]  # fmt: skip
                for row in rank(folder, mine, model, cache, floors).values():
                    for f in floors:
                        listed = len(row["ranked"][f][:10])
                        c = counts[f]
                        c["queries"] += 1
                        c["listed"] += listed
                        if row["words"] == 0:
                            c["queries no word found"] += 1
                            c["listed for them"] += listed
                            c["of them listing nothing"] += listed == 0
    return {f: dict(c) for f, c in counts.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floors", default="0.25,0.3,0.35,0.4")
    parser.add_argument("--cache", type=Path, default=BENCH / "out" / "issue13-cache")
    parser.add_argument("--out", type=Path, default=BENCH / "out" / "floor37.json")
    args = parser.parse_args(argv)
    floors = ["off", *args.floors.split(",")]
    model = semantic.embedder(semantic.DEFAULT_MODEL)
    cache = args.cache / f"{_slug(model.name)}-c{semantic.CHUNK_WORDS}x{semantic.MAX_CHUNKS}"
    shipped = search.SEMANTIC_FLOOR
    report: dict[str, Any] = {"shipped": shipped, "labelled": {}}
    try:
        for label, name, layout in LABELLED:
            figures = labelled(name, layout, model, cache, floors)
            report["labelled"][label] = figures
            for split in ("dev", "test"):
                cells = "  ".join(
                    f"{f} {m['R@5']:.3f}/{m['MRR@10']:.3f}" for f, m in figures[split].items()
                )
                print(f"{label:13} {split:4} {cells}", flush=True)
            print(f"{label:13} top 10 listed {figures['top 10 listed']}", flush=True)
        report["no answer"] = no_answer(model, cache, floors)
    finally:
        search.SEMANTIC_FLOOR = shipped
    for f, c in report["no answer"].items():
        print(f"no answer, floor {f}: {c}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
