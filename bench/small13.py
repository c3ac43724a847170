"""Issue 13, session 33: lexical search in small stores, where the topic word is in most
memories, and Lucene's positive IDF (index/idf.py) against FTS5's.

    .venv/bin/python bench/small13.py [--sets corpus,paraphrase,ja,zh,small] [--out FILE]

FTS5's bm25() weighs a term in n of N memories by log((N - n + 0.5) / (n + 0.5)), 1e-6
once that is not positive, so in a store of 4-15 memories the topic word often counts for
nothing. Every set is ranked three times in one run: `fts5` (idf.ENABLED off: FTS5's
ranking), `lucene` (Lucene's IDF in every window holding all matches) and `clamped`
(Lucene's only when FTS5 clamps a term: what search ranks), in the modes
`plain` (a bare FTS5 BM25, issue 13's floor), `lexical` and `hybrid`, in three layouts:
the quality bench's own (corpus and paraphrase one store, ja per store, zh one pool), and
zh and small **per store** (each query against its own store alone). For each query it
also records whether one of its words is in more than half its store's memories
(`common`), and the first relevant result's rank. Prints R@5 / MRR@10 per set, split and
setting, and the ranks of the `common` queries; writes everything to --out as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from memory_enhancement.index import idf, semantic
from memory_enhancement.index import lexical as lex_module
from memory_enhancement.index.hybrid import Ranker
from memory_enhancement.index.search import FETCH, Filters, hybrid, hybrid_lexical, lexical

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_search_quality import (  # noqa: E402
    _slug,
    embedded_index,
    metrics,
    plain_fts,
    plain_search,
)
from queries.datasets import Query, QuerySet, load, materialised, pool_relevant  # noqa: E402

MODES = ("plain", "lexical", "hybrid")
SETTINGS = {"fts5": (False, False), "lucene": (True, False), "clamped": (True, True)}


def _own(q: Query) -> tuple[str, ...]:
    return q.relevant


def run_group(
    folder: Path, queries: list[Query], model: Any, cache: Path, relevant_of: Any
) -> dict[str, Any]:
    """Index one folder and rank its queries in every mode under both IDFs."""
    home = Path(tempfile.mkdtemp(prefix="s13-"))
    out: dict[str, Any] = {}
    with embedded_index(folder, home, model, cache) as conn:
        plain = plain_fts(conn)
        total = idf.rows(conn, "memories_fts")
        everything = Filters(include_expired=True, now="")
        side = Ranker(model)
        for q in queries:
            exact = lex_module._terms(q.query, False)[0]
            counts = {
                t: conn.execute(
                    "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (t,)
                ).fetchone()[0]
                for t in exact
            }
            common = sorted(t for t, n in counts.items() if 2 * n > total)
            row: dict[str, Any] = {"N": total, "common": common, "ranked": {}}
            row["ranked"]["plain"] = plain_search(plain, q.query, FETCH)
            for name, (flag, only) in SETTINGS.items():
                idf.ENABLED, idf.ONLY_WHEN_CLAMPED = flag, only
                try:
                    lex = [h.row.path for h in lexical(conn, q.query, everything, FETCH)]
                except Exception:
                    lex = []
                stop = hybrid_lexical(conn, q.query, everything)
                sem = semantic.semantic_search(conn, model, q.query, everything, FETCH)
                hyb = [h.row.path for h in hybrid(conn, q.query, stop, sem, side)[:FETCH]]
                row["ranked"][f"lexical/{name}"] = lex
                row["ranked"][f"hybrid/{name}"] = hyb
            row["relevant"] = list(relevant_of(q))
            out[q.id] = row
    idf.ENABLED, idf.ONLY_WHEN_CLAMPED = True, True
    return out


def layouts(names: list[str]) -> list[tuple[str, str, str]]:
    """(label, set, layout) of each run: `own` is the quality bench's layout."""
    runs = [(n, n, "own") for n in names if n != "small"]
    runs += [(f"{n}/per-store", n, "store") for n in names if n in ("zh", "small")]
    return runs


def run(name: str, layout: str, model: Any, cache: Path) -> tuple[QuerySet, dict[str, Any]]:
    qset = load(name)
    rows: dict[str, Any] = {}
    with materialised(qset) as roots:
        if layout == "own" and name == "zh":
            base = next(iter(roots.values())).parent
            rows.update(run_group(base, qset.queries, model, cache, pool_relevant))
        else:
            for spec, folder in roots.items():
                mine = [q for q in qset.queries if q.store.spec == spec]
                rows.update(run_group(folder, mine, model, cache, _own))
    return qset, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="corpus,paraphrase,ja,zh,small")
    parser.add_argument("--cache", type=Path, default=BENCH / "out" / "issue13-cache")
    parser.add_argument("--out", type=Path, default=BENCH / "out" / "small13.json")
    args = parser.parse_args(argv)
    model = semantic.embedder(semantic.DEFAULT_MODEL)
    cache = args.cache / f"{_slug(model.name)}-c{semantic.CHUNK_WORDS}x{semantic.MAX_CHUNKS}"
    report: dict[str, Any] = {}
    for label, name, layout in layouts(args.sets.split(",")):
        qset, rows = run(name, layout, model, cache)
        ranked_by_mode: dict[str, dict[str, list[str]]] = {}
        for qid, row in rows.items():
            for mode, paths in row["ranked"].items():
                ranked_by_mode.setdefault(mode, {})[qid] = paths
        relevant = {qid: tuple(row["relevant"]) for qid, row in rows.items()}
        figures: dict[str, Any] = {}
        for split in ("dev", "test"):
            chosen = qset.split(split)
            figures[split] = {
                mode: metrics(ranked, chosen, lambda q, relevant=relevant: relevant[q.id])
                for mode, ranked in ranked_by_mode.items()
            }
            common = [q for q in chosen if rows[q.id]["common"]]
            figures[f"{split}-common"] = {
                mode: metrics(ranked, common, lambda q, relevant=relevant: relevant[q.id])
                for mode, ranked in ranked_by_mode.items()
            }
        report[label] = {"figures": figures, "rows": rows}
        print(f"== {label}")
        for split, by_mode in figures.items():
            cells = "  ".join(
                f"{mode} {m['R@5']:.3f}/{m['MRR@10']:.3f}" for mode, m in by_mode.items()
            )
            n = next(iter(by_mode.values()))["n"]
            print(f"  {split:12} n={n:3}  {cells}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
