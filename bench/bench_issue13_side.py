"""Issue 13 benchmark: hybrid search at 10k, this checkout against a baseline, alternated.

    git worktree add /tmp/base13 BASELINE_COMMIT
    .venv/bin/python bench/bench_issue13_side.py --baseline /tmp/base13/src [--runs 5]

Each side gets its own copy of the generated store (`gen_store.cached_store(10000,
"frontmatter")`) and its own index, built by its own code, with one random unit
vector per chunk (as bench_search_speed13.py: the cost does not depend on the
values). Then, alternating the two sides run by run (this machine is shared), CPU
time (user + sys, children included), medians:

* in-process `MemoryService.search(q, mode=...)`, lexical and hybrid, warm, over the
  20 queries of bench_search.py: a child process per side and round;
* `memory-enhancement search Q` as a whole process (auto mode: hybrid, the store being
  embedded) and `--mode lexical`, five queries, each asked once before (its vector
  is then cached in the index: no model loads).

Each side's code is chosen by PYTHONPATH; the console script is this venv's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
HERE = BENCH.parent / "src"

_CHILD = """
import json, os, statistics, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, {bench!r})
from pathlib import Path
from bench_search import GEN_QUERIES
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository
work, action = Path(sys.argv[1]), sys.argv[2]
service = MemoryService(Store(work / "store"), Repository(work / "store"),
    index_path=work / "index.db", state=State(work / "state.db"), session="bench")
if action == "build":
    from bench_search_speed13 import fill_vectors
    service.reindex()
    print(json.dumps({{"chunks": fill_vectors(work / "index.db")}}))
    sys.exit(0)
for q in GEN_QUERIES:
    service.search(q, mode="hybrid")
out = {{}}
for mode in ("lexical", "hybrid"):
    per_query = []
    for q in GEN_QUERIES:
        samples = []
        for _ in range(5):
            started = time.process_time()
            service.search(q, mode=mode)
            samples.append(time.process_time() - started)
        per_query.append(statistics.median(samples) * 1000)
    out[mode] = statistics.median(per_query)
print(json.dumps(out))
"""


def _env(src: Path, home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        PYTHONPATH=str(src),
        MEMORY_ENHANCEMENT_HOME=str(home),
        OPENBLAS_NUM_THREADS="1",
        PYTHONPYCACHEPREFIX=str(BENCH / ".cache" / "pycache13" / src.parent.name),
    )
    return env


def _child(src: Path, work: Path, action: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(bench=str(BENCH)), str(work), action],
        env=_env(src, work / "home"),
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _process_cpu(src: Path, work: Path, args: list[str]) -> float:
    tool = Path(sys.executable).parent / "memory-enhancement"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [str(tool), "--dir", str(work / "store"), "--index", str(work / "index.db"), *args],
        env=_env(src, work / "home"),
        stdout=subprocess.DEVNULL,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the baseline's src/")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2, help="in-process child runs per side")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(BENCH))
    from bench_search import GEN_QUERIES
    from gen_store import cached_store

    generated = cached_store(10000, "frontmatter")
    root = Path(tempfile.mkdtemp(prefix="side13-"))
    sides = {"current": HERE, "baseline": args.baseline.resolve()}
    works = {}
    for side, src in sides.items():
        work = works[side] = root / side
        shutil.copytree(generated.root, work / "store", ignore=shutil.ignore_patterns(".*"))
        built = _child(src, work, "build")
        print(f"{side}: {built['chunks']:.0f} chunk vectors", flush=True)
    inproc: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for side, src in sides.items():
            for mode, value in _child(src, works[side], "search").items():
                inproc.setdefault((side, mode), []).append(value)
    for mode in ("lexical", "hybrid"):
        for side in sides:
            values = inproc[(side, mode)]
            print(f"in-process {mode:8} {side:8}: CPU {statistics.median(values):.1f} ms "
                  f"(rounds: {', '.join(f'{v:.1f}' for v in values)})", flush=True)  # fmt: skip
    for label, extra in (("hybrid (auto)", []), ("lexical", ["--mode", "lexical"])):
        samples: dict[tuple[str, str], list[float]] = {}
        for query in GEN_QUERIES[:5]:
            for side, src in sides.items():
                _process_cpu(src, works[side], ["search", query, *extra])  # its vector cached
            for _ in range(args.runs):
                for side, src in sides.items():
                    cpu = _process_cpu(src, works[side], ["search", query, *extra])
                    samples.setdefault((side, query), []).append(cpu)
        for side in sides:
            medians = [statistics.median(samples[(side, q)]) for q in GEN_QUERIES[:5]]
            print(f"process {label:14} {side:8}: CPU {statistics.median(medians):.0f} ms",
                  flush=True)  # fmt: skip
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
