"""Issue 4 benchmark: search latency, in-process and as a whole CLI process, against baselines.

    .venv/bin/python bench/bench_search.py [--sizes 10000,100000] [--runs 3] [--quick]
        [--profile] [--no-write]

On generated stores of 10k and 100k memories (frontmatter, `gen_store.cached_store`)
and on the real corpus, each copied to a temporary folder without hidden files
(so grep and rg read exactly the files the tool indexes), over a fixed
set of 20 queries drawn from the generator's vocabulary (technologies, components,
problems, made-up identifiers and function names, as keywords and as questions),
or, on the corpus, the first 20 queries of `bench/queries/corpus_queries.yaml`.
All in one run, side by side, each query `--runs` times after a warm-up:

* `MemoryService.search(q, limit=10)` in-process: open the index, sync it (stat
  every file), BM25 query with snippets, record the use. The index was built
  before timing (warm).
* `index.connect()` alone (open the database and sync it, no query), and
  `search.lexical(...)` alone on an open, synced connection: the query itself.
* `memory-enhancement --dir S --index I search Q -n 10` as a whole process.
* The seed's keyword scan (seed 004 section 4.4.4 `search_with_verification`
  without verification): parse every file with the seed's own
  `Memory.from_serena_file` (`bench/seed_baseline.py`) and keep those where
  `any(term in content_lower)` for the whitespace-split, lowercased query terms.
  Unranked. In-process, and as a process (`python bench/bench_search.py
  --seed-scan STORE QUERY`); `rglob` instead of the seed's one-folder glob, as
  in `seed_baseline.py`.
* `grep -ril -F -e T1 -e T2 ... STORE` and `rg -il -F -e T1 ... STORE` with the
  same terms (same any-term semantics as the seed), output to /dev/null.

Targets at 10k: median under 20 ms in-process and under 200 ms as a process.
`--profile` adds `-X importtime` and cProfile of one CLI search at 10k.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datetime import UTC, datetime

from _issue4 import (
    BENCH,
    CORPUS,
    Samples,
    bench_env,
    code_version,
    function_table,
    import_table,
    load,
    log,
    measured_line,
    ms,
    run_process,
    time_call,
    tool,
    verdict,
    write_subsection,
)
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.index.search import Filters, Hit, lexical
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository

TITLE = "### Search latency"
INPROC_TARGET_MS = 20.0
CLI_TARGET_MS = 200.0
LIMIT = 10

# Realistic queries over the generated vocabulary (gen_store's TECH, COMPONENTS,
# PROBLEMS, IDENTS and the verb_ident_noun function names it writes).
GEN_QUERIES = [
    "redis stale cache",
    "race condition in the job scheduler",
    "kafka duplicate delivery",
    "flaky test playwright",
    "postgres connection exhaustion",
    "how do we avoid deadlock in the connection pool?",
    "retry storm api gateway",
    "timezone bug in the report generator",
    "slow startup cli parser",
    "memory leak notification worker",
    "schema drift alembic",
    "thundering herd cache layer",
    "oauth token expiry",
    "why does the rate limiter time out under load?",
    "unicode normalization search indexer",
    "backpressure event bus",
    "lanashdol",
    "vankadol",
    "lankater",
    "render_selplosi_plan",
]


# -- the seed's keyword scan -------------------------------------------------------------


def seed_keyword_scan(query: str, memories_dir: Path) -> list[object]:
    """Seed 004 section 4.4.4 `search_with_verification(query, dir, verify=False)`."""
    from seed_baseline import Memory

    results = []
    query_terms = set(query.lower().split())
    for path in memories_dir.rglob("*.md"):
        if any(part.startswith(".") for part in path.relative_to(memories_dir).parts):
            continue
        memory = Memory.from_serena_file(path)
        content_lower = memory.content.lower()
        if not any(term in content_lower for term in query_terms):
            continue
        results.append((memory, None))
    return results


def terms(query: str) -> list[str]:
    return sorted(set(query.lower().split()))


# -- measurement ---------------------------------------------------------------------------


def open_service(store: Path, index: Path, state: Path) -> MemoryService:
    return MemoryService(
        Store(store), Repository(store), index_path=index, state=State(state), session="bench"
    )


def lexical_alone(conn: sqlite3.Connection, query: str, limit: int) -> list[Hit]:
    """The BM25 query with snippets and nothing else (filters as the service sets them)."""
    now = format_timestamp(datetime.now(UTC))
    return lexical(conn, query, Filters(now=now), limit)


@dataclass
class Method:
    name: str
    kind: str  # "in-process" or "process"
    samples: Samples = field(default_factory=Samples)
    per_query: dict[str, Samples] = field(default_factory=dict)
    found: dict[str, int] = field(default_factory=dict)  # hits / files listed per query

    def add(self, query: str, samples: Samples, found: int | None) -> None:
        self.samples.extend(samples)
        self.per_query.setdefault(query, Samples()).extend(samples)
        if found is not None:
            self.found[query] = found


@dataclass
class StoreRun:
    label: str
    count: int
    queries: list[str]
    methods: list[Method]
    target: bool
    floor: dict[str, Samples] = field(default_factory=dict)


def measure_store(
    label: str, store: Path, queries: list[str], work: Path, args: argparse.Namespace
) -> StoreRun:
    work.mkdir(parents=True, exist_ok=True)
    index = work / "index.db"
    env = bench_env(work / "home")
    log(f"{label}: building the index ...")
    run_process([tool(), "--dir", str(store), "--index", str(index), "reindex"], env, work)
    service = open_service(store, index, work / "state.db")
    count = len(service.store.scan())
    runs = args.runs
    big = count > 50_000
    seed_queries = queries[: args.seed_queries_big] if big else queries
    seed_proc_queries = queries[: args.seed_process_queries]
    ours = Method("`MemoryService.search()` (open + sync + query + usage)", "in-process")
    alone = Method("BM25 query alone (`search.lexical`, synced connection)", "in-process")
    opened = Method("open + no-change sync alone (`index.connect()`)", "in-process")
    seed = Method("seed keyword scan (parse every file, any term)", "in-process")
    cli = Method("`memory-enhancement search`", "process")
    seed_proc = Method("seed keyword scan as a process", "process")
    grep = Method("`grep -ril`", "process")
    rg = Method("`rg -il`", "process")
    methods = [ours, opened, alone, seed, cli, seed_proc, grep]
    has_rg = shutil.which("rg") is not None
    if has_rg:
        methods.append(rg)
    for n, query in enumerate(queries, start=1):
        samples, results = time_call(lambda q=query: service.search(q, limit=LIMIT), runs)
        ours.add(query, samples, len(results))
        with service.index.connect() as conn:
            samples, hits = time_call(lambda q=query, c=conn: lexical_alone(c, q, LIMIT), runs)
        alone.add(query, samples, len(hits))
        samples, _ = time_call(lambda: _open_and_sync(service), runs)
        opened.add(query, samples, None)
        if query in seed_queries:
            seed_runs = 1 if big else max(1, runs // 2)
            samples, found = time_call(
                lambda q=query: seed_keyword_scan(q, store), seed_runs, warmup=0
            )
            seed.add(query, samples, len(found))
        argv = [tool(), "--dir", str(store), "--index", str(index), "search", query]
        cli.add(query, _time([*argv, "-n", str(LIMIT)], env, work, runs), None)
        if query in seed_proc_queries:
            argv = [sys.executable, str(BENCH / "bench_search.py"), "--seed-scan", str(store)]
            seed_proc.add(query, _time([*argv, query], env, work, 1 if big else runs), None)
        pattern_args = [a for t in terms(query) for a in ("-e", t)]
        argv = ["grep", "-ril", "-F", *pattern_args, str(store)]
        grep.add(query, _time(argv, env, work, runs, ok=(0, 1)), _count_lines(argv, env, work))
        if has_rg:
            argv = ["rg", "-il", "-F", *pattern_args, str(store)]
            rg.add(query, _time(argv, env, work, runs, ok=(0, 1)), _count_lines(argv, env, work))
        log(
            f"  [{n}/{len(queries)}] {query!r}: ours {ms(ours.per_query[query].median)}, "
            f"cli {ms(cli.per_query[query].median)}, grep {ms(grep.per_query[query].median)}"
            + (f", seed {ms(seed.per_query[query].median)}" if query in seed.per_query else "")
        )
    floor = {
        "`python -c pass`": _time([sys.executable, "-c", "pass"], env, work, 10),
        "`memory-enhancement --version`": _time([tool(), "--version"], env, work, 10),
    }
    return StoreRun(label, count, queries, methods, target=count == 10_000, floor=floor)


def _open_and_sync(service: MemoryService) -> None:
    with service.index.connect():
        pass


def _time(argv: list[str], env: dict[str, str], cwd: Path, runs: int, ok=(0,)) -> Samples:  # type: ignore[no-untyped-def]
    samples = Samples()
    run_process(argv, env, cwd, ok=ok)  # warm-up
    for _ in range(runs):
        wall, cpu, _ = run_process(argv, env, cwd, ok=ok)
        samples.add(wall, cpu)
    return samples


def _count_lines(argv: list[str], env: dict[str, str], cwd: Path) -> int:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True)
    return len([line for line in done.stdout.splitlines() if line.strip()])


# -- report ------------------------------------------------------------------------------


def store_table(run: StoreRun) -> list[str]:
    lines = [
        f"**{run.label}** ({run.count:,} memories, {len(run.queries)} queries):",
        "",
        "| Method | Where | Median | p90 | CPU (median) | Results per query (mean) | Target |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for m in run.methods:
        if not m.samples.wall:
            continue
        target = ""
        if run.target and m.name.startswith("`MemoryService"):
            target = f"< 20 ms: {verdict(m.samples.median, INPROC_TARGET_MS)}"
        if run.target and m.name == "`memory-enhancement search`":
            target = f"< 200 ms: {verdict(m.samples.median, CLI_TARGET_MS)}"
        found = (
            f"{sum(m.found.values()) / len(m.found):,.0f}"
            + (" (top 10, ranked)" if m.name.startswith(("`Memory", "BM25")) else " (unranked)")
            if m.found
            else ""
        )
        covered = (
            f" ({len(m.per_query)} of {len(run.queries)} queries)"
            if len(m.per_query) < len(run.queries)
            else ""
        )
        lines.append(
            f"| {m.name}{covered} | {m.kind} | {ms(m.samples.median)} | {ms(m.samples.p90)} "
            f"| {ms(m.samples.cpu_median)} | {found} | {target} |"
        )
    for name, samples in run.floor.items():
        lines.append(
            f"| {name} (start-up floor) | process | {ms(samples.median)} | {ms(samples.p90)} "
            f"| {ms(samples.cpu_median)} | | |"
        )
    return lines


def per_query_details(run: StoreRun) -> list[str]:
    names = {
        "`MemoryService.search()` (open + sync + query + usage)": "in-process",
        "`memory-enhancement search`": "CLI",
        "seed keyword scan (parse every file, any term)": "seed scan",
        "`grep -ril`": "grep",
        "`rg -il`": "rg",
    }
    chosen = [m for m in run.methods if m.name in names]
    header = "| Query | " + " | ".join(names[m.name] for m in chosen) + " | grep files |"
    lines = [
        f"<details><summary>Per query, {run.label} (medians)</summary>",
        "",
        header,
        "|---|" + "---:|" * (len(chosen) + 1),
    ]
    grep = next(m for m in run.methods if m.name == "`grep -ril`")
    for query in run.queries:
        cells = [ms(m.per_query[query].median) if query in m.per_query else "" for m in chosen]
        lines.append(f"| {query} | " + " | ".join(cells) + f" | {grep.found.get(query, '')} |")
    return [*lines, "", "</details>"]


def section(
    runs: list[StoreRun],
    args: argparse.Namespace,
    loads: tuple[str, str],
    code: tuple[str, str],
    profile_text: str,
) -> str:
    rg = shutil.which("rg")
    rg_note = (
        f"ripgrep: `{_version(['rg', '--version'])}`."
        if rg
        else "ripgrep is not installed (`apt-get install -y ripgrep`), so its row is missing."
    )
    parts = [
        f"`bench/bench_search.py{' --quick' if args.quick else ''}`: each query "
        f"{args.runs} times after a warm-up, the median over all runs of all queries "
        f"(the seed scan: fewer runs, and only the first {args.seed_queries_big} queries at "
        f"100k; as a process, the first {args.seed_process_queries}). Each store is copied "
        "to a temporary folder without hidden files, so grep and rg read exactly the memory "
        "files the tool indexes (no generator manifest, no `.obsidian/`, no `.gitignore` "
        "hiding the cached stores from rg). Warm index and page "
        "cache; processes print to /dev/null. The seed's scan and grep/rg apply the seed's "
        "any-term rule to the whitespace-split query, so a question containing `the` or "
        "`in` matches nearly every file; they return unranked file lists, ours returns the "
        f"10 best by BM25 with snippets and citation IDs. {rg_note} "
        f"`{_version(['grep', '--version'])}`.",
        "",
        measured_line(loads, code),
        "",
    ]
    for run in runs:
        parts += [*store_table(run), ""]
    parts += [
        "Generated-store queries: " + ", ".join(f"`{q}`" for q in GEN_QUERIES) + ".",
        "",
    ]
    for run in runs:
        parts += [*per_query_details(run), ""]
    if profile_text:
        parts += [profile_text, ""]
    return "\n".join(parts)


def _version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    return out.splitlines()[0].strip() if out else "unknown"


# -- profiling -------------------------------------------------------------------------------


def profile(store: Path, query: str, work: Path) -> str:
    env = bench_env(work / "home")
    index = work / "index.db"
    args = ["--dir", str(store), "--index", str(index), "search", query, "-n", str(LIMIT)]
    base = [sys.executable, "-X", "importtime", "-m", "memory_enhancement", *args]
    run_process(base, env, work)  # warm (bytecode cached)
    _, _, done = run_process(base, env, work)
    out = [f"Imports of one CLI search at 10k (`-X importtime`, query `{query}`):", ""]
    out += import_table(done.stderr.decode(errors="replace"))
    prof = work / "search.prof"
    argv = [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "memory_enhancement", *args]
    run_process(argv, env, work)
    out += ["", "cProfile of the same CLI search process:", ""]
    out += function_table(pstats.Stats(str(prof), stream=io.StringIO()), 14)
    service = open_service(store, index, work / "state-profile.db")
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(20):
        service.search(query, limit=LIMIT)
    profiler.disable()
    out += ["", f"cProfile of 20 in-process `MemoryService.search({query!r})` calls:", ""]
    out += function_table(pstats.Stats(profiler, stream=io.StringIO()), 12)
    return "\n".join(out)


# -- main --------------------------------------------------------------------------------------


def copy_store(source: Path, dest: Path) -> Path:
    """The memories only, outside any git repository, hidden files left out.

    grep and rg then read exactly what the tool indexes: no generator manifest
    (`.gen-store.json`), no `.obsidian/`, and no `.gitignore` of this repository
    hiding the cached stores from rg.
    """
    shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(".*"))
    return dest


def corpus_queries(n: int) -> list[str]:
    import yaml

    data = yaml.safe_load((BENCH / "queries" / "corpus_queries.yaml").read_text("utf-8"))
    return [q["query"] for q in data["queries"][:n]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per query and method")
    parser.add_argument("--seed-queries-big", type=int, default=5, help="seed scans at 100k")
    parser.add_argument("--seed-process-queries", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 runs per query")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--seed-scan", nargs=2, metavar=("STORE", "QUERY"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.seed_scan:  # the seed's scan as a process, for the process column
        found = seed_keyword_scan(args.seed_scan[1], Path(args.seed_scan[0]))
        print(len(found))
        return 0
    if args.quick:
        args.runs = 2
    from gen_store import cached_store

    sizes = [int(s) for s in args.sizes.split(",") if s]
    before, code_before = load(), code_version()
    runs: list[StoreRun] = []
    profile_text = ""
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp_name:
        tmp = Path(tmp_name)
        for size in sizes:
            generated = cached_store(size, "frontmatter")
            label = f"frontmatter {size // 1000}k"
            work = tmp / f"gen-{size}"
            store = copy_store(generated.root, tmp / f"store-{size}")
            runs.append(measure_store(label, store, GEN_QUERIES, work, args))
            if args.profile and size == 10_000:
                profile_text = profile(store, GEN_QUERIES[0], work)
            shutil.rmtree(store)
        if CORPUS.is_dir():
            store = copy_store(CORPUS, tmp / "corpus")
            n = len(Store(store).scan())
            runs.append(
                measure_store(f"real corpus ({n:,})", store, corpus_queries(20), tmp / "c", args)
            )
    after, code_after = load(), code_version()
    text = section(runs, args, (before, after), (code_before, code_after), profile_text)
    print(text)
    if not args.no_write:
        write_subsection(TITLE, text)
        log("wrote the subsection to docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        raise SystemExit(main())
    os._exit(0)
