#!/usr/bin/env python3
"""Indexing the shared corpus from nothing: this checkout against a baseline, side by side.

    .venv/bin/python bench/links/bench_index_corpus.py --baseline OTHER/src [--runs 11]

Issue 12 asks that finding links as people write them (list items, related
sections, repository links) leave indexing the corpus no slower than 1.2x. Each
run is one `python -m memory_enhancement --dir COPY --index NEW.db reindex`
process on a copy of the corpus, alternately baseline then current; CPU time
(user + sys, children included) is reported as medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "ai-agents-memories"


def cpu(src: Path, store: Path, index: Path, home: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src), "MEMORY_ENHANCEMENT_HOME": str(home)}
    index.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "memory_enhancement", "--dir", str(store), "--index", str(index)]
    proc = subprocess.Popen([*cmd, "reindex"], stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"reindex failed with {src}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="src/ of the baseline")
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    versions = {"baseline": args.baseline.resolve(), "current": ROOT / "src"}
    times: dict[str, list[float]] = {name: [] for name in versions}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "corpus"
        shutil.copytree(CORPUS, store)
        for path in [store, *store.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        for name, src in versions.items():  # warm the file cache, untimed
            cpu(src, store, Path(tmp) / f"{name}.db", Path(tmp) / name)
        for _ in range(args.runs):
            for name, src in versions.items():
                times[name].append(cpu(src, store, Path(tmp) / f"{name}.db", Path(tmp) / name))
    base, cur = (statistics.median(times[n]) for n in ("baseline", "current"))
    print(f"corpus reindex, CPU median of {args.runs}: baseline {base * 1000:.0f} ms, "
          f"current {cur * 1000:.0f} ms, current/baseline {cur / base:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
