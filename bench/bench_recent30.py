"""`recent` as a process, before and after it asked git when undated memories were committed.

Session 30: in a fresh clone every Serena memory's mtime is the checkout's, so `recent`
now orders an undated memory by its last commit (verify/commit_times.py), kept in the
state database per HEAD. This times, alternated run by run (CPU of the process and its
git children, median):

- `recent` warm, this version against a baseline source tree, on each store given;
- `get`, `list --limit 20` and `search` on a store given (`--reads`), to see they are
  not slower (issue 15: <= 3x `python -c pass`);
- this version's `recent` with the commit times forgotten before each run (the first
  `recent` after a clone): one `git status` and one walk of the store folder's log;
- both versions' `recent` after HEAD moved by one commit (session 31: the times kept
  are made those of HEAD's parent before each run): the baseline walks the whole log
  again, this version the commits since the old HEAD.

    .venv/bin/python bench/bench_recent30.py --baseline /work/base30c/src \\
        --store /tmp/s30c-fundflow/.serena/memories \\
        --store /tmp/mentions-bench/rjmurillo+ai-agents/.serena/memories [--runs 9]

Stores are only read (each version has a tool home of its own in a temporary folder).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_issue15 import PYTHON, alternate  # noqa: E402

SRC = BENCH.parent / "src"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a baseline's src folder")
    parser.add_argument("--store", type=Path, action="append", required=True)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--reads", type=Path, help="a (10k) store to time get, list, search on")
    parser.add_argument("--memory", default="", help="the memory `get` reads from --reads")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-recent30-"))
    versions = {"this": SRC, "baseline": args.baseline}
    cases: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c pass": ([PYTHON, "-c", "pass"], {**os.environ}),
    }
    forget: dict[str, Path] = {}
    moved: dict[str, tuple[Path, str]] = {}  # case: its home, the HEAD the times are made of
    # Byte code written once (the untimed first run): with PYTHONDONTWRITEBYTECODE each run
    # compiles every module it imports, and the version importing more would pay for it.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for number, store in enumerate(args.store):
        label = store.parent.parent.name or str(store)
        parent = subprocess.run(
            ["git", "-C", str(store), "rev-parse", "HEAD~1"], capture_output=True, text=True
        ).stdout.strip()
        runs = [*versions.items(), ("this, commit times forgotten", SRC)]
        if parent:
            runs += [(f"{name}, HEAD moved one commit", src) for name, src in versions.items()]
        for name, src in runs:
            home = work / f"home-{number}-{len(cases)}"
            env = {**clean, "PYTHONPATH": str(src), "MEMORY_ENHANCEMENT_HOME": str(home)}
            command = [PYTHON, "-P", "-m", "memory_enhancement", "--dir", str(store), "recent"]
            case = f"recent {label}: {name}"
            cases[case] = (command, env)
            if "forgotten" in name:
                forget[case] = home
            elif "moved" in name:
                moved[case] = (home, parent)

    if args.reads is not None:
        reads = {
            "get": ["get", args.memory],
            "list --limit 20": ["list", "--limit", "20"],
            "search": ["search", "redis stale cache"],
        }
        for label, given in reads.items():
            for name, src in versions.items():
                home = work / f"home-reads-{name}"
                env = {**clean, "PYTHONPATH": str(src), "MEMORY_ENHANCEMENT_HOME": str(home)}
                command = [PYTHON, "-P", "-m", "memory_enhancement", *given]
                cases[f"{label} (10k): {name}"] = ([*command, "--dir", str(args.reads)], env)

    def before(case: str) -> None:
        """Drop the kept commit times of the case's state database (found under its home),
        or make them those of HEAD's parent."""
        if case in forget:
            for state in forget[case].glob("data/state/*.db"):
                with sqlite3.connect(state) as db:
                    db.execute("DELETE FROM commit_times")
        if case in moved:
            home, parent = moved[case]
            for state in home.glob("data/state/*.db"):
                with sqlite3.connect(state) as db:
                    db.execute("UPDATE commit_times SET head = ?", (parent,))

    results = alternate(cases, args.runs, before)
    for case, figures in results.items():
        print(f"{case:<60} {figures['cpu_ms']:8.1f} ms  (min {figures['min_ms']:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
