"""Speed of `memory-enhancement health` on 10k memories / 30k citations (issue 7).

Target: under 2 s as a whole process, with a warm index, for each of the three
formats (median of `--runs`, at least 3).

In one run:

1. The store is `gen_store.cached_store(10000, FORMAT)`: 10,000 memories with 3
   citations each (30,000), citing real lines of a git copy of an installed
   package (`gen_store.default_source_tree()`), about 3% expired, 2% of links
   dangling. Every citation holds at HEAD, so the report is the everyday one
   (mostly healthy; dangling links and expired memories on top). The store is
   only read: `health` writes its index and history into the tool home.
2. A fresh MEMORY_ENHANCEMENT_HOME. The first `health` builds the index (timed,
   reported apart); two more runs warm the page cache and compiled modules.
3. For each format, `--runs` timed processes (the formats in turn, round robin):

       memory-enhancement health --dir STORE --repo-root TREE --format F > /dev/null

   wall time (`time.perf_counter` around the process) and CPU time (user + system
   of the child, steadier than wall time on a loaded machine).
4. Every `health` is also a verification run, recorded in the history (30,000
   rows a run), so the history grows while the benchmark runs. `--history N`
   then adds N more past runs (copies of the last one, a day apart, straight
   into the state database, as N nightly CI runs would leave) and times the
   JSON report again, to show what a long history costs.
5. `--profile` (before step 4) runs one report per format in this process with
   timers around its phases (index sync, verification, recording the history,
   reading it back, assessing memories, rendering) and prints the 25 most
   expensive functions of a JSON report (cProfile).

    .venv/bin/python bench/bench_health.py [--memories 10000] [--citations 3]
        [--format frontmatter|serena] [--runs 5] [--history 30] [--profile]

Results go to stdout (a markdown section for docs/benchmarks.md) and to
bench/out/health.json.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import platform
import pstats
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from gen_store import cached_store, default_source_tree  # noqa: E402

TARGET_S = 2.0
FORMATS = ("markdown", "json", "html")
OUT = BENCH / "out" / "health.json"


def tool() -> str:
    script = Path(sys.executable).parent / "memory-enhancement"
    found = str(script) if script.exists() else shutil.which("memory-enhancement")
    if not found:
        raise SystemExit("memory-enhancement is not installed next to this python")
    return found


def env_for(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["MEMORY_ENHANCEMENT_HOME"] = str(home)  # never the user's own index or history
    env["PYTHONPYCACHEPREFIX"] = str(BENCH / ".cache" / "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process, its output thrown away."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tempfile.gettempdir()
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode() if process.stderr else ""
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {process.returncode}: {errors}")
    return wall, usage.ru_utime + usage.ru_stime


def summary(samples: list[tuple[float, float]]) -> dict[str, Any]:
    walls = [w for w, _ in samples]
    return {
        "runs": len(samples),
        "median_s": round(statistics.median(walls), 3),
        "min_s": round(min(walls), 3),
        "max_s": round(max(walls), 3),
        "cpu_s": round(statistics.median(c for _, c in samples), 3),
    }


def state_file(home: Path) -> Path:
    [found] = (home / "data" / "state").glob("*.db")
    return found


def history_size(home: Path) -> tuple[int, int]:
    """(memory verdict rows, runs) in the state database."""
    with contextlib.closing(sqlite3.connect(state_file(home))) as conn:
        rows = conn.execute("SELECT count(*) FROM verdicts").fetchone()[0]
        runs = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
    return int(rows), int(runs)


def add_history(home: Path, runs: int) -> None:
    """Copy the last recorded run `runs` times into the past, a day apart (as nightly CI
    runs would leave them); the per-memory summaries are left as the last run made them."""
    with contextlib.closing(sqlite3.connect(state_file(home))) as conn:
        last, commit = conn.execute(
            "SELECT run_id, commit_sha FROM runs ORDER BY verified_at DESC LIMIT 1"
        ).fetchone()
        start = datetime.now(UTC) - timedelta(days=runs + 1)
        conn.execute("BEGIN")
        for n in range(runs):
            moment = (start + timedelta(days=n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            run_id = f"bench-{n:04d}"
            conn.execute(
                "INSERT INTO runs(run_id, verified_at, commit_sha) VALUES (?, ?, ?)",
                (run_id, moment, commit),
            )
            conn.execute(
                "INSERT INTO verdicts(citation_id, run_id, path, checks, failing) "
                "SELECT citation_id, ?, path, checks, failing FROM verdicts WHERE run_id = ?",
                (run_id, last),
            )
            conn.execute(
                "INSERT INTO verdict_days(day, status, count) "
                "SELECT ?, status, count FROM verdict_days WHERE day = (SELECT max(day) "
                "FROM verdict_days) "
                "ON CONFLICT(day, status) DO UPDATE SET count = count + excluded.count",
                (moment[:10],),
            )
        conn.execute("COMMIT")


# -- in-process profile ------------------------------------------------------------------------


@contextlib.contextmanager
def phase_timers(spent: dict[str, float]) -> Iterator[None]:
    """Accumulate the time spent in a few functions of the library while inside."""
    from memory_enhancement.health import html as health_html
    from memory_enhancement.health import render as health_render
    from memory_enhancement.health import report as health
    from memory_enhancement.index.index import Index
    from memory_enhancement.verify import history
    from memory_enhancement.verify import verifier as verify

    targets: list[tuple[Any, str, str]] = [
        (Index, "sync", "index sync (stat the store), per connection"),
        (verify.Verifier, "verify_memories", "verify 30k citations"),
        (history, "record", "record the run in the history"),
        (history, "evidence", "read the history back (evidence)"),
        (history, "verdict_days", "verdicts per day"),
        (health, "_assess", "assess each memory (status, confidence)"),
        (health_render, "as_markdown", "render markdown"),
        (health_render, "as_json", "build the JSON document"),
        (json, "dumps", "json.dumps (indent=2)"),
        (health_html, "render", "render HTML"),
    ]
    saved = []
    for owner, name, label in targets:
        original = getattr(owner, name)
        saved.append((owner, name, original))
        setattr(owner, name, _timer(original, label, spent))
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def _timer(func: Callable[..., Any], label: str, spent: dict[str, float]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            spent[label] += time.perf_counter() - started

    return wrapper


def run_in_process(argv: list[str]) -> None:
    from memory_enhancement.cli import cli

    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        cli.main(argv, prog_name="memory-enhancement", standalone_mode=True)


def profile(store: Path, tree: Path, home: Path) -> dict[str, Any]:
    os.environ["MEMORY_ENHANCEMENT_HOME"] = str(home)
    started = time.perf_counter()
    import memory_enhancement.cli  # noqa: F401

    imports = time.perf_counter() - started
    phases: dict[str, Any] = {}
    for fmt in FORMATS:
        spent: dict[str, float] = defaultdict(float)
        argv = ["health", "--dir", str(store), "--repo-root", str(tree), "--format", fmt]
        started = time.perf_counter()
        with phase_timers(spent):
            run_in_process(argv)
        total = time.perf_counter() - started
        phases[fmt] = {"total_s": round(total, 3), **{k: round(v, 3) for k, v in spent.items()}}
    profiler = cProfile.Profile()
    argv = ["health", "--dir", str(store), "--repo-root", str(tree), "--format", "json"]
    profiler.enable()
    run_in_process(argv)
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
    return {"imports_s": round(imports, 3), "phases": phases, "cprofile_json": text.getvalue()}


# -- main ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--citations", type=int, default=3)
    parser.add_argument("--format", choices=("frontmatter", "serena"), default="frontmatter")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--history", type=int, default=30, help="past runs to add (0: none)")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    if args.runs < 3:
        parser.error("--runs must be at least 3 (the figure is a median)")

    tree = default_source_tree()
    store = cached_store(args.memories, args.format, citations_per_memory=args.citations)
    exe = tool()
    home = Path(tempfile.mkdtemp(prefix="bench-health-"))
    env = env_for(home)
    base = [exe, "health", "--dir", str(store.root), "--repo-root", str(tree)]
    results: dict[str, Any] = {
        "measured": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "machine": _machine(),
        "store": f"{args.format}, {args.memories} memories, {args.citations} citations each",
        "source_tree": tree.name,
        "target_s": TARGET_S,
    }
    try:
        print(f"first run (builds the index) on {results['store']} ...", file=sys.stderr)
        results["first_run"] = summary([timed([*base, "--format", "json"], env)])
        for _ in range(2):
            timed([*base, "--format", "json"], env)
        # Round robin, so that every format meets the same history depth (each run adds one).
        samples: dict[str, list[tuple[float, float]]] = {fmt: [] for fmt in FORMATS}
        for _ in range(args.runs):
            for fmt in FORMATS:
                samples[fmt].append(timed([*base, "--format", fmt], env))
        rows = {fmt: summary(found) for fmt, found in samples.items()}
        print(rows, file=sys.stderr)
        results["formats"] = rows
        results["history_after"] = history_size(home)
        results["state_mb_after"] = round(state_file(home).stat().st_size / 1e6, 1)
        if args.profile:
            results["profile"] = profile(store.root, tree, home)
        if args.history:
            add_history(home, args.history)
            samples = [timed([*base, "--format", "json"], env) for _ in range(args.runs)]
            results["long_history"] = {
                "added_runs": args.history,
                "history": history_size(home),
                "state_mb": round(state_file(home).stat().st_size / 1e6, 1),
                **summary(samples),
            }
        results["python_start"] = summary(
            [timed([sys.executable, "-c", "import memory_enhancement.cli"], env) for _ in range(5)]
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(render(results))
    return 0


def render(results: dict[str, Any]) -> str:
    lines = [
        "| Command | Runs | Median | Min | Max | CPU | Target | |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]

    def row(label: str, r: dict[str, Any], target: bool = True) -> str:
        verdict = ("ok" if r["median_s"] < TARGET_S else "**over**") if target else ""
        goal = f"< {TARGET_S:g} s" if target else ""
        return (
            f"| {label} | {r['runs']} | {r['median_s']:.2f} s | {r['min_s']:.2f} s | "
            f"{r['max_s']:.2f} s | {r['cpu_s']:.2f} s | {goal} | {verdict} |"
        )

    lines.append(
        row("`health --format json`, first call (builds the index)", results["first_run"], False)
    )
    for fmt, r in results["formats"].items():
        lines.append(row(f"`health --format {fmt}`", r, True))
    if "long_history" in results:
        h = results["long_history"]
        verdicts, _ = h["history"]
        label = (
            f"`health --format json` after {h['added_runs']} more runs of history "
            f"({verdicts / 1e6:.2f}M verdicts, state {h['state_mb']:.0f} MB)"
        )
        lines.append(row(label, h, True))
    lines.append(row("`python -c 'import memory_enhancement.cli'`", results["python_start"], False))
    text = "\n".join(lines)
    if "profile" in results:
        p = results["profile"]
        text += f"\n\nImports: {p['imports_s']:.2f} s. Phases (in one process, seconds):\n\n"
        keys = sorted({k for v in p["phases"].values() for k in v if k != "total_s"})
        text += "| Phase | " + " | ".join(p["phases"]) + " |\n|---|" + "---:|" * len(p["phases"])
        for key in keys:
            cells = " | ".join(f"{v.get(key, 0):.2f}" for v in p["phases"].values())
            text += f"\n| {key} | {cells} |"
        totals = " | ".join(f"{v['total_s']:.2f}" for v in p["phases"].values())
        text += f"\n| **total** | {totals} |\n\n```\n{p['cprofile_json']}\n```"
    return text


def _commit() -> str:
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{sha} with uncommitted changes in src/" if dirty else sha


def _machine() -> str:
    cpu = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs ({cpu}), {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, load average {load}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
