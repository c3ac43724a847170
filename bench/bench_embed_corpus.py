#!/usr/bin/env python3
"""Issue 13 benchmark: embedding the shared corpus as a process, this checkout against a baseline.

    git worktree add /tmp/base BASELINE_COMMIT
    .venv/bin/python bench/bench_embed_corpus.py --baseline /tmp/base/src [--rounds 2]

The target is "embedding the shared corpus <= 60 s on 2 cores": `memory-enhancement
reindex --semantic` on a copy of `../shared/corpus/ai-agents-memories/` (1,026 memories),
each run in a tool home of its own (nothing embedded before, the int8 copy of the model
derived again where this CPU gets one), the two sides alternating round by round (the
machine is shared). Reported per side: CPU time (user + system of the process and its
children, `getrusage`) and wall time, medians. The integer kernel the current checkout's
int8 copy is written for here (`int8_model.kernel`: u8s8 with VNNI, u8u8 with AVX2 alone,
none otherwise) is printed with the figures: the kinds of machine differ.

Each side's code is chosen by PYTHONPATH; the interpreter is this one.
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
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
HERE = BENCH.parent / "src"
CORPUS = BENCH.parent.parent / "shared" / "corpus" / "ai-agents-memories"


def embed(store: Path, home: Path, src: Path) -> dict[str, float]:
    """One `reindex --semantic` as a process in a fresh tool home: CPU and wall seconds."""
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "PYTHONPATH": str(src),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "PYTHONPYCACHEPREFIX": str(home.parent / f"pycache-{abs(hash(str(src)))}"),
    }
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-P", "-m", "memory_enhancement", "--dir", str(store), "reindex",
         "--semantic", "--json"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"reindex --semantic failed ({src}): {done.stderr.strip()[-2000:]}")
    return {
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "wall_s": wall,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout's src/")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from memory_enhancement.index import int8_model

    sides = {"current": HERE, **({"baseline": args.baseline} if args.baseline else {})}
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="embed-corpus-") as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(args.corpus, store, ignore=shutil.ignore_patterns(".obsidian"))
        for n in range(args.rounds):
            order = list(sides) if n % 2 == 0 else list(sides)[::-1]
            for side in order:
                home = Path(tmp) / f"home-{side}-{n}"
                runs[side].append(embed(store, home, sides[side]))
                print(side, n, json.dumps(runs[side][-1]), file=sys.stderr, flush=True)
    report = {
        "kernel": int8_model.kernel() or "none (the shipped float graph)",
        "rounds": args.rounds,
        "load_average": os.getloadavg(),
        **{
            side: {
                "cpu_s": round(statistics.median(r["cpu_s"] for r in values), 1),
                "wall_s": round(statistics.median(r["wall_s"] for r in values), 1),
                "all_cpu_s": [round(r["cpu_s"], 1) for r in values],
            }
            for side, values in runs.items()
        },
    }
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
