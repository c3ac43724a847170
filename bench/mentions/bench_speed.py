#!/usr/bin/env python3
"""What verifying prose mentions from history costs, on the shared corpus's own repository.

Issue 17's targets: `verify-all` with mentions (blaming every memory file that has
any, reading the cited code at each memory line's commit) costs at most 2x
`verify-all --no-mentions`; a second run with nothing changed (answers from the
state database's cache) at most 1.2x a run without mentions.

Three kinds of run of the same tool on the same tree, side by side, alternating
(the machine is shared: never one kind after the other), each a whole process:

- `none`: `verify-all --no-mentions`;
- `cold`: `verify-all` after emptying the mention cache (the index stays warm,
  as it does for any second command);
- `warm`: `verify-all` again with nothing changed.

With `--baseline-src`, the same three kinds of run of the other checkout's code
(`cold_baseline`, `warm_baseline`, `none_baseline`) alternate with them.

CPU = user + system time of the process and its children (git), medians
(`getrusage`: microseconds; `os.times()` counted 10 ms clock ticks, coarse against
a 0.15 s run).
Runs without mentions have a tool home of their own: a whole-store run vouches for
what the last one gave without comparing it only when that run verified the same
things, so `none` runs taking turns with the others in one home would each compare
every memory again (and so would the others), which no user's repeated runs do.

Compiled modules are cached (`PYTHONPYCACHEPREFIX` in the run's temporary home)
as they are for an installed package.

Usage:
    bench_speed.py [--tree DIR] [--runs 5] [--json-out FILE] [--baseline-src DIR]
    (--tree defaults to score.py's clone of rjmurillo/ai-agents at the corpus commit)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from score import work_tree  # noqa: E402  (a sibling script)

STORE = ".serena/memories"


def run(tree: Path, home: Path, *extra: str, src: Path = ROOT / "src") -> tuple[float, float, int]:
    """One whole `verify-all` process: (CPU seconds with children, wall seconds, exit code)."""
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "PYTHONPATH": str(src),
        # Compiled modules are cached, as for any installed package (the warm-up runs
        # write them); outside the source tree.
        "PYTHONPYCACHEPREFIX": str(home / "pycache"),
    }
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-P", "-m", "memory_enhancement", "verify-all", "--json", "--dir", STORE,
         *extra],
        cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"verify-all failed: {done.stderr.strip()}")
    # rusage, not os.times(): microseconds, where os.times() counts 10 ms clock ticks
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, done.returncode


def forget_mentions(home: Path) -> None:
    """Empty the mention cache of every state database under this tool home."""
    for db in (home / "data").rglob("*.db"):
        with sqlite3.connect(db) as conn, contextlib.suppress(sqlite3.OperationalError):
            conn.execute("DELETE FROM mention_history")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json-out", type=Path)
    parser.add_argument(
        "--baseline-src",
        type=Path,
        help="also time first runs of another checkout's src/ (e.g. a git worktree of the "
        "commit before a change), alternating with the others in the same run",
    )
    args = parser.parse_args(argv)
    tree = args.tree
    if tree is None:
        entries = yaml.safe_load((HERE / "repos.yaml").read_text(encoding="utf-8"))["repos"]
        corpus = next(e for e in entries if e["split"] == "corpus")
        work = Path(tempfile.gettempdir()) / "mentions-bench"
        work.mkdir(parents=True, exist_ok=True)
        tree = work_tree(corpus, work)
    baseline_kinds = ["cold_baseline", "warm_baseline", "none_baseline"]
    kinds = ["none", "cold", "warm"] + (baseline_kinds if args.baseline_src else [])
    times: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="mentions-speed-") as tmp:
        home, none_home = Path(tmp) / "mentions", Path(tmp) / "none"
        run(tree, home, "--no-mentions")  # warm-up: builds the index
        run(tree, home)  # and fills the mention cache once
        run(tree, none_home, "--no-mentions")
        run(tree, none_home, "--no-mentions")
        if args.baseline_src:
            base_home, base_none = Path(tmp) / "baseline", Path(tmp) / "baseline-none"
            run(tree, base_home, "--no-mentions", src=args.baseline_src)
            run(tree, base_home, src=args.baseline_src)
            run(tree, base_none, "--no-mentions", src=args.baseline_src)
            run(tree, base_none, "--no-mentions", src=args.baseline_src)
        for n in range(args.runs):
            order = kinds if n % 2 == 0 else kinds[::-1]
            for kind in order:
                if kind == "none":
                    cpu, wall, _ = run(tree, none_home, "--no-mentions")
                elif kind == "cold":
                    forget_mentions(home)
                    cpu, wall, _ = run(tree, home)
                    run(tree, home)  # leave the cache warm for the next `warm` run
                elif kind == "cold_baseline":
                    forget_mentions(base_home)
                    cpu, wall, _ = run(tree, base_home, src=args.baseline_src)
                    run(tree, base_home, src=args.baseline_src)  # warm again, as for `cold`
                elif kind == "warm_baseline":
                    cpu, wall, _ = run(tree, base_home, src=args.baseline_src)
                elif kind == "none_baseline":
                    cpu, wall, _ = run(tree, base_none, "--no-mentions", src=args.baseline_src)
                else:
                    cpu, wall, _ = run(tree, home)
                times[kind].append((cpu, wall))
    medians = {
        kind: {
            "cpu_s": round(statistics.median(c for c, _ in values), 3),
            "wall_s": round(statistics.median(w for _, w in values), 3),
        }
        for kind, values in times.items()
    }
    base = medians["none"]["cpu_s"]
    report = {
        "tree": str(tree),
        "commit": subprocess.run(
            ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "runs": args.runs,
        "load_average": os.getloadavg(),
        "medians": medians,
        "cold_over_none_cpu": round(medians["cold"]["cpu_s"] / base, 2),
        "warm_over_none_cpu": round(medians["warm"]["cpu_s"] / base, 2),
        **(
            {
                "baseline_src": str(args.baseline_src),
                "cold_baseline_over_none_cpu": round(medians["cold_baseline"]["cpu_s"] / base, 2),
                "baseline_cold_over_its_none_cpu": round(
                    medians["cold_baseline"]["cpu_s"] / medians["none_baseline"]["cpu_s"], 2
                ),
                "baseline_warm_over_its_none_cpu": round(
                    medians["warm_baseline"]["cpu_s"] / medians["none_baseline"]["cpu_s"], 2
                ),
            }
            if args.baseline_src
            else {}
        ),
        "all_cpu_s": {kind: [round(c, 3) for c, _ in values] for kind, values in times.items()},
    }
    text = json.dumps(report, indent=1)
    if args.json_out:
        args.json_out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
