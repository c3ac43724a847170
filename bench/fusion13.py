"""Issue 13: score hybrid-ranking variants offline, chosen on dev, reported on test.

    .venv/bin/python bench/fusion13.py dump [--cache DIR] [--out FILE]
    .venv/bin/python bench/fusion13.py score [--dump FILE] [--split dev|test|all]

`dump` indexes and embeds the four query sets' stores exactly as
`bench_search_quality.py` does (same groups, same vector cache) and writes, per query,
what every variant needs: the lexical side of hybrid (`hybrid_lexical`, 100 deep, with
BM25 scores), each memory's chunk cosines (best and second best) for the 100 memories
whose best chunk is closest, each memory's title cosine (its title embedded alone) for
every memory either side found, the share of CJK in each memory and the query's
lexical weight. `score` then ranks every query under each variant in `VARIANTS` in a
fraction of a second, and prints R@5 / MRR@10 per set for the split asked; the choice
is made on the mean of R@5 + MRR@10 over the four dev halves (docs/benchmarks.md).
The groups' indexes are kept beside the dump (`<out>.groups/`) for bench/variants26.py.

`shipped` is what `search --mode hybrid` ranks: the fusion (`convex()`, each list scaled
by its spread since session 27), then the first result's near-duplicates moved up behind
it (`near`, index/hybrid.py, session 26); the other variants change the fusion alone, as
they were measured before session 26 (then with `scale="range"`, min-max).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_enhancement.index import semantic
from memory_enhancement.index.search import FETCH, Filters, hybrid_lexical, lexical_weight

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_search_quality import _slug, embedded_index, metrics  # noqa: E402
from queries.datasets import Query, load, materialised, pool_relevant  # noqa: E402

DEPTH = 100
SETS = ("corpus", "paraphrase", "ja", "zh")
GROUPS = BENCH / "out" / "fusion13.groups"  # set from --out by dump


def _group(
    folder: Path, queries: list[Query], model: Any, cache: Path, arrays: dict[str, Any], name: str
) -> dict[str, Any]:
    import numpy as np

    home = GROUPS / name
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    out: dict[str, Any] = {}
    with embedded_index(folder, home, model, cache) as conn:
        matrix = semantic._matrix(conn, model.name)
        paths: dict[str, list[str]] = {}
        info: dict[str, tuple[str, float]] = {}
        for path, digest, title, cjk in conn.execute(
            "SELECT path, hash, title, cjk FROM memories WHERE error IS NULL"
        ):
            paths.setdefault(digest, []).append(path)
            info[path] = (title, float(cjk))
        titles = model.encode([info[paths[h][0]][0] or " " for h in matrix.hashes])
        owners = [paths[h] for h in matrix.hashes]
        arrays[f"{name}.rows"] = matrix.rows.astype(np.float16)
        arrays[f"{name}.starts"] = matrix.starts
        arrays[f"{name}.titles"] = titles.astype(np.float16)
        arrays[f"{name}.owners"] = np.array(json.dumps(owners))
        ends = [*matrix.starts[1:].tolist(), len(matrix.rows)]
        everything = Filters(include_expired=True, now="")
        for q in queries:
            vector = semantic._query_vector(conn, model, q.query)
            cosines = matrix.rows @ vector
            best = np.maximum.reduceat(cosines, matrix.starts)
            top = np.argsort(-best)[:DEPTH]
            sem = []
            for i in top.tolist():
                chunk = sorted(cosines[matrix.starts[i] : ends[i]].tolist(), reverse=True)
                for path in paths[matrix.hashes[i]]:
                    sem.append([path, chunk[0], chunk[1] if len(chunk) > 1 else None])
            lex = [[h.row.path, h.score] for h in _lexical(conn, q.query, everything)]
            title_of = {}
            wanted = {p for p, *_ in sem} | {p for p, _ in lex}
            for i, digest in enumerate(matrix.hashes):
                for path in paths[digest]:
                    if path in wanted:
                        title_of[path] = float(titles[i] @ vector)
            arrays[f"q.{q.set}.{q.id}"] = vector.astype(np.float32)
            out[q.id] = {
                "group": name,
                "query": q.query,
                "weight": lexical_weight(q.query),
                "lex": lex,
                "sem": sem,
                "title": title_of,
                "cjk": {p: info[p][1] for p in wanted},
            }
    return out


def _lexical(conn: Any, query: str, filters: Filters) -> list[Any]:
    from memory_enhancement.index import search

    saved = search.FETCH
    search.FETCH = DEPTH
    try:
        return hybrid_lexical(conn, query, filters)
    finally:
        search.FETCH = saved


def dump(args: argparse.Namespace) -> int:
    global GROUPS
    GROUPS = args.out.with_suffix(".groups")
    model = semantic.embedder()
    cache = args.cache / f"{_slug(model.name)}-c{semantic.CHUNK_WORDS}x{semantic.MAX_CHUNKS}"
    cache.mkdir(parents=True, exist_ok=True)
    qsets = {name: load(name) for name in SETS}
    data: dict[str, Any] = {"sets": {}, "relevant": {}, "split": {}}
    merged = [q for n in ("corpus", "paraphrase") for q in qsets[n].queries]
    arrays: dict[str, Any] = {}
    with materialised(qsets["corpus"]) as roots:
        (folder,) = roots.values()
        found = _group(folder, merged, model, cache, arrays, "corpus")
    for n in ("corpus", "paraphrase"):
        data["sets"][n] = {q.id: found[q.id] for q in qsets[n].queries}
    with materialised(qsets["ja"]) as roots:
        data["sets"]["ja"] = {}
        for n, (spec, folder) in enumerate(roots.items()):
            mine = [q for q in qsets["ja"].queries if q.store.spec == spec]
            data["sets"]["ja"].update(_group(folder, mine, model, cache, arrays, f"ja{n}"))
    with materialised(qsets["zh"]) as roots:
        base = next(iter(roots.values())).parent
        data["sets"]["zh"] = _group(base, qsets["zh"].queries, model, cache, arrays, "zh")
    for n in SETS:
        for q in qsets[n].queries:
            data["relevant"][f"{n}/{q.id}"] = list(pool_relevant(q) if n == "zh" else q.relevant)
            data["split"][f"{n}/{q.id}"] = q.split
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data))
    import numpy as np

    np.savez(args.out.with_suffix(".npz"), **arrays)
    print(f"wrote {args.out}")
    return 0


Ranker = Callable[[dict[str, Any]], list[str]]


def _scaled(scores: dict[str, float]) -> dict[str, float]:
    """Min-max within the list (the fusion's scaling before session 27)."""
    if not scores:
        return {}
    top, bottom = max(scores.values()), min(scores.values())
    span = top - bottom
    return {p: (s - bottom) / span if span > 0 else 1.0 for p, s in scores.items()}


def _spread(scores: dict[str, float], length: int = 0) -> dict[str, float]:
    """search._spread: height above the list's floor in standard deviations of the list,
    a list shorter than `length` taken as that long with the rest at zero (session 27)."""
    if not scores:
        return {}
    values = [*scores.values()] + [0.0] * max(length - len(scores), 0)
    mean = sum(values) / len(values)
    deviation = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    floor = min(values)
    return {p: (s - floor) / deviation if deviation > 0 else 1.0 for p, s in scores.items()}


def convex(
    *,
    lex_depth: int = FETCH,
    sem_depth: int = FETCH,
    second: float = 0.0,
    title: float = 0.0,
    base: float | None = None,
    scale: str = "spread",
) -> Ranker:
    """The shipped fusion (`search.fuse`) with knobs: list depths, the second-best chunk's
    share in a memory's semantic score, a title vector's share, another lexical weight,
    each list's scaling (`spread`, shipped since session 27, or `range`: min-max)."""

    def rank(d: dict[str, Any]) -> list[str]:
        weight = d["weight"] if base is None else _weight(d, base)
        sem_scores = {}
        for path, first, other in d["sem"]:
            score = first + second * (other if other is not None else first)
            if title:
                score = (
                    max(score, d["title"].get(path, -1.0))
                    if title < 0
                    else ((1 - title) * score + title * d["title"].get(path, 0.0))
                )
            sem_scores[path] = score
        best = sorted(sem_scores, key=lambda p: -sem_scores[p])[:sem_depth]
        lex_hits = d["lex"][:lex_depth]
        if scale == "range":
            sem = _scaled({p: sem_scores[p] for p in best})
            lex = _scaled({p: s for p, s in lex_hits})
        else:
            sem = _spread({p: sem_scores[p] for p in best})
            lex = _spread({p: s for p, s in lex_hits}, len(best))
        lex_rank = {p: n for n, (p, _) in enumerate(lex_hits)}
        sem_rank = {p: n for n, p in enumerate(best)}
        readable = {p: 1.0 - d["cjk"].get(p, 0.0) for p in sem}
        scores = {
            p: weight * lex.get(p, 0.0) + (1 - weight) * sem.get(p, 0.0) * readable.get(p, 1.0)
            for p in {*lex, *sem}
        }
        return sorted(
            scores,
            key=lambda p: (-scores[p], lex_rank.get(p, 10**9), sem_rank.get(p, 10**9), p),
        )

    return rank


def gated(low: float, high: float) -> Ranker:
    """The shipped mix, but the semantic side's share scaled by how sure the model is: its
    best cosine for the query, from `low` (no share) to `high` (the full share). MiniLM's
    cosines are absolute: a best of 0.35 means no memory is much like the question."""
    shipped = convex()

    def rank(d: dict[str, Any]) -> list[str]:
        top = max((first for _, first, _ in d["sem"]), default=0.0)
        sure = min(max((top - low) / (high - low), 0.0), 1.0)
        weight = d["weight"]
        return shipped({**d, "weight": 1.0 - (1.0 - weight) * sure})

    return rank


def _weight(d: dict[str, Any], base: float) -> float:
    shipped = d["weight"]
    if shipped == 1.0:
        return 1.0
    # the shipped weight is 0.5 + 0.5 * share: recover the share, apply another base
    share = (shipped - 0.5) / 0.5
    return base + (1 - base) * share


class _Vectors:
    """The chunk vectors of one group (from the dump's .npz), for variants that look
    beyond the two 100-deep lists: a second query (feedback) or near-duplicates."""

    def __init__(self, arrays: Any, group: str) -> None:
        import numpy as np

        self.rows = arrays[f"{group}.rows"].astype(np.float32)
        self.starts = arrays[f"{group}.starts"]
        self.owners: list[list[str]] = json.loads(str(arrays[f"{group}.owners"]))
        self.row_of = {p: i for i, paths in enumerate(self.owners) for p in paths}
        means = np.add.reduceat(self.rows, self.starts)
        self.means = means / np.linalg.norm(means, axis=1, keepdims=True)

    def ranked(self, vector: Any, depth: int = FETCH) -> list[list[Any]]:
        import numpy as np

        best = np.maximum.reduceat(self.rows @ vector, self.starts)
        return [
            [p, float(best[i]), None] for i in np.argsort(-best)[:depth].tolist()
            for p in self.owners[i]
        ][:depth]  # fmt: skip


def feedback(beta: float, k: int) -> Ranker:
    """Pseudo-relevance feedback: the query vector moved towards the mean vector of the
    first k fused results, the semantic list searched again and fused again."""

    def rank(d: dict[str, Any]) -> list[str]:
        import numpy as np

        first = convex()(d)
        if d["weight"] >= 1.0:
            return first
        group = _VECTORS[d["group"]]
        moved = d["vector"] + beta * np.mean([group.means[group.row_of[p]] for p in first[:k]], 0)
        again = dict(d, sem=group.ranked(moved / np.linalg.norm(moved)))
        return convex()(again)

    return rank


def duplicates(tau: float, k: int) -> Ranker:
    """Near-duplicates (mean-vector cosine >= tau) of each of the first k results moved
    to just after it: the labels count a memory that says the same thing as an answer."""

    def rank(d: dict[str, Any]) -> list[str]:
        import numpy as np

        out = convex()(d)
        group = _VECTORS[d["group"]]
        for top in list(out[:k]):
            cosines = group.means @ group.means[group.row_of[top]]
            for i in np.argsort(-cosines)[1:6].tolist():
                for p in group.owners[i]:
                    if cosines[i] < tau or p == top or p in out[: out.index(top) + 2]:
                        continue
                    if p in out:
                        out.remove(p)
                    out.insert(out.index(top) + 1, p)
        return out

    return rank


def near(
    inner: Ranker | None = None,
    tau: float = 0.85,
    most: int = 5,
    readable: float | None = 0.2,
    order: str = "closeness",
) -> Ranker:
    """The first result's near-duplicates (mean chunk vectors, cosine >= tau) among what
    either 50-deep list found, moved up behind it (index/hybrid.py): the closest first,
    or in the fusion's order (`order="fused"`); only between memories with at most
    `readable` of CJK (None: all); not for a query of one word (weight 1)."""
    first_rank = inner or convex()

    def rank(d: dict[str, Any]) -> list[str]:
        out = first_rank(d)
        if d["weight"] >= 1.0 or not out:
            return out
        group = _VECTORS[d["group"]]
        semd = {p: first for p, first, _ in d["sem"]}
        found = {p for p, _ in d["lex"][:FETCH]} | set(sorted(semd, key=lambda p: -semd[p])[:FETCH])

        def ok(p: str) -> bool:
            return readable is None or d["cjk"].get(p, 1.0) <= readable

        top = out[0]
        if not ok(top):
            return out
        mine = group.means[group.row_of[top]]
        close = sorted(
            ((float(group.means[group.row_of[p]] @ mine), p) for p in found if p != top and ok(p)),
            key=lambda pair: (-pair[0], pair[1]),
        )
        keep = [p for cosine, p in close[:most] if cosine >= tau]
        if order == "fused":
            keep = [p for p in out if p in keep]
        return [top, *keep, *(p for p in out[1:] if p not in keep)]

    return rank


_VECTORS: dict[str, _Vectors] = {}
VARIANTS: dict[str, Ranker] = {
    "shipped": near(),
    "fusion alone": convex(),
    "scaled by range (shipped s26: before s27)": near(convex(scale="range")),
    "scaled by range, fusion alone (before s26)": convex(scale="range"),
    **{f"near {t} most {m}": near(tau=t, most=m) for t in (0.8, 0.85, 0.9) for m in (1, 2, 5)},
    "near 0.85 most 5, fused order": near(order="fused"),
    "near 0.85 most 5, CJK too": near(readable=None),
    "second 0.1": convex(second=0.1),
    "second 0.2": convex(second=0.2),
    "second 0.3": convex(second=0.3),
    "title max": convex(title=-1),
    "title 0.2": convex(title=0.2),
    "title 0.3": convex(title=0.3),
    "weight 0.45": convex(base=0.45),
    "weight 0.55": convex(base=0.55),
    "sem depth 100": convex(sem_depth=100),
    "lex depth 100": convex(lex_depth=100),
    "both depth 100": convex(sem_depth=100, lex_depth=100),
    "both depth 30": convex(sem_depth=30, lex_depth=30),
    "both depth 20": convex(sem_depth=20, lex_depth=20),
    "feedback 0.3 k=1": feedback(0.3, 1),
    "feedback 0.3 k=3": feedback(0.3, 3),
    "feedback 1.0 k=1": feedback(1.0, 1),
    "duplicates 0.9 k=1": duplicates(0.9, 1),
    "duplicates 0.85 k=1": duplicates(0.85, 1),
    "duplicates 0.85 k=3": duplicates(0.85, 3),
    "duplicates 0.8 k=2": duplicates(0.8, 2),
    **{f"gated {lo}-{hi}": gated(lo, hi) for lo in (0.25, 0.3, 0.35) for hi in (0.45, 0.5, 0.6)},
}


def score(args: argparse.Namespace) -> int:
    import numpy as np

    data = json.loads(args.dump.read_text())
    arrays = np.load(args.dump.with_suffix(".npz"))
    for name in SETS:
        for qid, entry in data["sets"][name].items():
            entry["vector"] = arrays[f"q.{name}.{qid}"]
            if entry["group"] not in _VECTORS:
                _VECTORS[entry["group"]] = _Vectors(arrays, entry["group"])
    splits = ["dev", "test"] if args.split == "both" else [args.split]
    for split in splits:
        print(f"== {split}: R@5 / MRR@10 per set; mean of R@5 + MRR@10 over the four")
        for label, rank in VARIANTS.items():
            cells, total = [], 0.0
            for name in SETS:
                chosen = [
                    qid for qid in data["sets"][name]
                    if split == "all" or data["split"][f"{name}/{qid}"] == split
                ]  # fmt: skip
                ranked = {qid: rank(data["sets"][name][qid]) for qid in chosen}
                queries = [_Q(qid, tuple(data["relevant"][f"{name}/{qid}"])) for qid in chosen]
                m = metrics(ranked, queries, lambda q: q.relevant)  # type: ignore[arg-type,return-value]
                cells.append(f"{name} {m['R@5']:.3f}/{m['MRR@10']:.3f}")
                total += m["R@5"] + m["MRR@10"]
            print(f"{label:22} {total / len(SETS):.3f}  " + "  ".join(cells))
    return 0


class _Q:
    def __init__(self, qid: str, relevant: tuple[str, ...]) -> None:
        self.id, self.relevant = qid, relevant


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--cache", type=Path, default=BENCH / "out" / "issue13-cache")
    d.add_argument("--out", type=Path, default=BENCH / "out" / "fusion13.json")
    s = sub.add_parser("score")
    s.add_argument("--dump", type=Path, default=BENCH / "out" / "fusion13.json")
    s.add_argument("--split", choices=["dev", "test", "all", "both"], default="dev")
    args = parser.parse_args(argv)
    return dump(args) if args.command == "dump" else score(args)


if __name__ == "__main__":
    sys.exit(main())
