"""Issue 15: lexical search ranks as another version does: same hits, order, scores, snippets.

    .venv/bin/python bench/check_search_identical.py --baseline OTHER/src [--store PATH ...]
        [--json-out FILE]

Every query of the four sets in bench/queries/*.yaml (253) is searched on the shared
corpus (corpus/ai-agents-memories/, 1,026 memories); the Japanese and the Chinese sets
also on their own stores (read from the mirrors as datasets.py does, each set's stores
pooled in one folder); and the corpus and paraphrase sets with the quick-read test's
queries on every `--store` (e.g. the 10k store bench_issue15.py builds). Each is run
through `index.search.lexical` with the baseline's src/ and with this checkout's, in one
process per version, over the same index file (built once by this checkout), in these
shapes: what `search QUERY` does (limit 10), limits 1, 3, 50 and 600 (past the window
index/lexical.py ranks apart), hybrid's lexical side (50, function words dropped, no
snippets, words and stems in one tier), expired memories included, a category and a tag
(the most common of the store). A hit is compared as (path, score's repr, snippet,
rank); an error as its type and message. Exit code 0 when every answer is identical.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(1, str(ROOT / "tests"))

from queries.datasets import CORPUS, load, materialised  # noqa: E402
from quick_support import QUERY_SHAPES  # noqa: E402

NOW = "2026-06-01T00:00:00.000Z"  # the moment expiry is judged at, the same for both
QUICK_READ_QUERIES = [  # the odd shapes of a query, as the quick read tests ask them
    *QUERY_SHAPES,
    "xyzzyq plugh",
    "ヘッドレス",
    "offscreenモードのQMessageBoxハング",
    "本番に反映する前のマイグレーションの手順は？",
    "",
    "?!",
]

# Run by each version's python with its src/ first on the path.
WORKER = """
import json, sqlite3, sys
from memory_enhancement.index import lexical
from memory_enhancement.index.search import Filters, lexical as search
spec = json.load(open(sys.argv[1], encoding="utf-8"))
joined = [0]
if hasattr(lexical, "_joined"):  # count the tiers the one-query fallback answered
    inner = lexical._joined
    def counted(*args, **kwargs):
        joined[0] += 1
        return inner(*args, **kwargs)
    lexical._joined = counted
conn = sqlite3.connect(spec["index"])
out = []
for query in spec["queries"]:
    for shape in spec["shapes"]:
        filters = Filters(shape.get("category"), shape.get("tag"), shape.get("expired", False),
                          spec["now"])
        try:
            hits = search(conn, query, filters, shape["limit"], drop_stopwords=shape["drop"],
                          snippets=shape["snippets"], words_first=shape["words_first"])
        except Exception as exc:
            out.append([query, shape["name"], [type(exc).__name__, str(exc)]])
            continue
        out.append([query, shape["name"],
                    [[h.row.path, repr(h.score), h.snippet, h.lexical_rank] for h in hits]])
json.dump({"answers": out, "joined": joined[0]}, sys.stdout, ensure_ascii=False)
"""


def shapes(index: Path) -> list[dict[str, Any]]:
    """The ways each query is searched; the category and tag are the store's most common."""
    import sqlite3

    with sqlite3.connect(index) as conn:
        tag = conn.execute(
            "SELECT tag FROM tags GROUP BY tag ORDER BY count(*) DESC, tag LIMIT 1"
        ).fetchone()
        folder = conn.execute(
            "SELECT substr(path, 1, instr(path, '/') - 1) AS f FROM memories "
            "WHERE instr(path, '/') > 0 GROUP BY f ORDER BY count(*) DESC, f LIMIT 1"
        ).fetchone()
    plain = {"drop": False, "snippets": True, "words_first": True}
    found = [
        {"name": "search", "limit": 10, **plain},
        *({"name": f"limit {n}", "limit": n, **plain} for n in (1, 3, 50, 600)),
        {"name": "hybrid side", "limit": 50, "drop": True, "snippets": False, "words_first": False},
        {"name": "expired too", "limit": 10, "expired": True, **plain},
    ]
    if folder:
        found.append({"name": f"category {folder[0]}", "limit": 10, "category": folder[0], **plain})
    if tag:
        found.append({"name": f"tag {tag[0]}", "limit": 10, "tag": tag[0], **plain})
    return found


def build_index(store: Path, home: Path) -> Path:
    """The store's index, built by this checkout's CLI in a tool home of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "MEMORY_ENHANCEMENT_HOME": str(home)}
    cmd = [sys.executable, "-m", "memory_enhancement", "list", "--limit", "1", "--dir", str(store)]
    done = subprocess.run(cmd, env=env, capture_output=True, check=False)
    if done.returncode not in (0, 1):  # 1: some memory has a problem to report, as in a store
        raise SystemExit(f"indexing {store} failed: {done.stderr.decode()[-3000:]}")
    (index,) = (home / "cache" / "indexes").glob("*.db")
    return index


def answers(src: Path, spec_file: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(spec_file)], env=env, capture_output=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"the worker failed with {src}: {done.stderr.decode()[-3000:]}")
    loaded: dict[str, Any] = json.loads(done.stdout)
    return loaded


def compare(
    label: str, store: Path, queries: list[str], versions: dict[str, Path], work: Path
) -> dict[str, Any]:
    """Search every query in every shape with both versions; the differences found."""
    home = work / f"home-{len(list(work.iterdir()))}"
    index = build_index(store, home)
    spec = {"index": str(index), "now": NOW, "queries": queries, "shapes": shapes(index)}
    spec_file = home / "spec.json"
    spec_file.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    got = {name: answers(src, spec_file) for name, src in versions.items()}
    base, current = got["baseline"]["answers"], got["current"]["answers"]
    differ = [[b, c] for b, c in zip(base, current, strict=True) if b != c]
    hits = sum(len(a[2]) for a in current if a[2] and isinstance(a[2][0], list))
    errors = sum(1 for a in current if a[2] and not isinstance(a[2][0], list))
    result = {
        "store": label,
        "queries": len(queries),
        "shapes": [s["name"] for s in spec["shapes"]],
        "searches": len(current),
        "hits compared": hits,
        "errors compared": errors,
        "tiers answered by the joined query (current)": got["current"]["joined"],
        "different": len(differ),
        "examples": differ[:3],
    }
    print(json.dumps(result, ensure_ascii=False)[:2000], flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the other version's src/")
    parser.add_argument("--store", type=Path, action="append", default=[], help="also this store")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    versions = {"baseline": args.baseline.resolve(), "current": ROOT / "src"}
    sets = {name: load(name) for name in ("corpus", "paraphrase", "ja", "zh")}
    every = list(dict.fromkeys(q.query for s in sets.values() for q in s.queries))
    english = [q.query for name in ("corpus", "paraphrase") for q in sets[name].queries]
    results = []
    with tempfile.TemporaryDirectory(prefix="search-identical-") as tmp:
        work = Path(tmp) / "homes"
        work.mkdir()
        corpus = Path(tmp) / "corpus"
        shutil.copytree(CORPUS, corpus, ignore=shutil.ignore_patterns(".*"))
        results.append(compare("corpus", corpus, every + QUICK_READ_QUERIES, versions, work))
        for name in ("ja", "zh"):
            with materialised(sets[name]) as roots:
                pool = next(iter(roots.values())).parent
                queries = [q.query for q in sets[name].queries]
                results.append(compare(f"{name} stores", pool, queries, versions, work))
        for store in args.store:
            queries = english + QUICK_READ_QUERIES
            results.append(compare(str(store), store, queries, versions, work))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, ensure_ascii=False, indent=1), "utf-8")
    different = sum(r["different"] for r in results)
    print(f"{sum(r['searches'] for r in results)} searches, {different} different")
    return 1 if different else 0


if __name__ == "__main__":
    raise SystemExit(main())
