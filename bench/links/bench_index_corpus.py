#!/usr/bin/env python3
"""Indexing the shared corpus from nothing: this checkout against a baseline, side by side.

    .venv/bin/python bench/links/bench_index_corpus.py --baseline OTHER/src [--runs 11]
        [--no-bytecode-cache] [--callgrind]

Issue 12 asks that finding links as people write them (list items, related
sections, repository links) leave indexing the corpus no slower than 1.2x. Each
run is one `python -m memory_enhancement --dir COPY --index NEW.db reindex`
process on a copy of the corpus, alternately baseline then current; CPU time
(user + sys, children included) is reported as medians.

Both versions run with their modules compiled once, as an installed package does
(`--no-bytecode-cache` compiles every module at every start instead, as with
PYTHONDONTWRITEBYTECODE=1). `--callgrind` also counts the instructions of one
run of each under valgrind: a figure that other load on the machine cannot move.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "ai-agents-memories"


def command(store: Path, index: Path) -> list[str]:
    return [sys.executable, "-m", "memory_enhancement", "--dir", str(store), "--index", str(index)]


def environment(src: Path, home: Path, bytecode: bool) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "MEMORY_ENHANCEMENT_HOME": str(home)}
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def cpu(src: Path, store: Path, index: Path, home: Path, bytecode: bool) -> float:
    index.unlink(missing_ok=True)
    proc = subprocess.Popen(
        [*command(store, index), "reindex"],
        stdout=subprocess.DEVNULL,
        env=environment(src, home, bytecode),
    )
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"reindex failed with {src}")
    return usage.ru_utime + usage.ru_stime


def instructions(src: Path, store: Path, index: Path, home: Path, bytecode: bool) -> int:
    index.unlink(missing_ok=True)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         *command(store, index), "reindex"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=environment(src, home, bytecode), check=True,
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind gave no count:\n{done.stderr[-2000:]}")
    return int(found[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="src/ of the baseline")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--no-bytecode-cache", action="store_true")
    parser.add_argument("--callgrind", action="store_true", help="also count instructions")
    args = parser.parse_args()
    bytecode = not args.no_bytecode_cache
    versions = {"baseline": args.baseline.resolve(), "current": ROOT / "src"}
    times: dict[str, list[float]] = {name: [] for name in versions}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "corpus"
        shutil.copytree(CORPUS, store)
        for path in [store, *store.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        for name, src in versions.items():  # warm the file cache (and compile), untimed
            for _ in range(2):
                cpu(src, store, Path(tmp) / f"{name}.db", Path(tmp) / name, bytecode)
        for _ in range(args.runs):
            for name, src in versions.items():
                db, home = Path(tmp) / f"{name}.db", Path(tmp) / name
                times[name].append(cpu(src, store, db, home, bytecode))
        counts = {}
        if args.callgrind:
            for name, src in versions.items():
                db, home = Path(tmp) / f"{name}.db", Path(tmp) / name
                counts[name] = instructions(src, store, db, home, bytecode)
    base, cur = (statistics.median(times[n]) for n in ("baseline", "current"))
    mode = "bytecode cached" if bytecode else "no bytecode cache"
    print(f"corpus reindex ({mode}), CPU median of {args.runs}: baseline {base * 1000:.0f} ms, "
          f"current {cur * 1000:.0f} ms, current/baseline {cur / base:.2f}x")  # fmt: skip
    if counts:
        b, c = counts["baseline"], counts["current"]
        print(f"instructions (callgrind, one run each): baseline {b / 1e9:.3f}G, "
              f"current {c / 1e9:.3f}G, current/baseline {c / b:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
