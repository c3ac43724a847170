"""Issue 14: what the hostile-input checks cost, baseline and current side by side.

    .venv/bin/python bench/bench_hostile.py --baseline SRC [--runs 7] [--no-write]

`SRC` is the `src/` of another checkout (`git worktree add /tmp/base 3dce8f3`,
then `/tmp/base/src`). The checks sit on the paths every command takes: reading
a memory file (regular files only, non-blocking), loading its YAML (nesting
and alias limits), and writing (size, stale temporaries, the Serena read-back).
So this times, as whole processes with this checkout's virtualenv and each
version's `src/` on PYTHONPATH, alternating baseline and current:

- `reindex` (a cold build: every file read and parsed) of the real corpus
  (`corpus/ai-agents-memories`, 1,026 real memories, nearly all plain markdown) and of a
  generated store of 2,000 frontmatter memories (`gen_store.py`);
- `list --json` on the warm corpus index;
- 20 `add`s into a Serena store (each a render, the read-back parse and a write).

CPU time (user+sys, children included), medians; written to docs/benchmarks.md
under "## Issue 14: ...".
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _issue4 import load, machine
from bench_side_by_side import commit_of, cpu_of, write_section
from gen_store import cached_store

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus" / "ai-agents-memories"
SECTION = "## Issue 14: the cost of the hostile-input checks"
PYTHON = sys.executable


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="src/ of the other version")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    versions = {"baseline": args.baseline.resolve(), "current": ROOT / "src"}
    generated = cached_store(2000, "frontmatter")
    homes = {n: Path(tempfile.mkdtemp(prefix=f"bench14-{n}-")) for n in versions}
    envs = {
        n: dict(os.environ, PYTHONPATH=str(src), MEMORY_ENHANCEMENT_HOME=str(homes[n]))
        for n, src in versions.items()
    }
    tool = [PYTHON, "-m", "memory_enhancement"]
    corpus = ["--dir", str(CORPUS), "--repo-root", str(CORPUS)]
    gen = ["--dir", str(generated.root), "--repo-root", str(generated.params.source_tree)]
    cases: dict[str, list[str]] = {
        "reindex, corpus (1,026 memories)": [*tool, "reindex", *corpus],
        "reindex, generated (2,000 memories)": [*tool, "reindex", *gen],
        "list --json, corpus (warm)": [*tool, "list", "--json", *corpus],
    }
    results: dict[str, dict[str, list[float]]] = {c: {n: [] for n in versions} for c in cases}
    for label, cmd in cases.items():
        for name in versions:
            cpu_of(cmd, envs[name])  # warm: bytecode compiled, index present
        for _ in range(args.runs):
            for name in versions:
                results[label][name].append(cpu_of(cmd, envs[name])[0])
        log(label, results[label])

    label = "20 adds, Serena store"
    results[label] = {n: [] for n in versions}
    for _ in range(args.runs):
        for name in versions:
            store = Path(tempfile.mkdtemp(prefix="bench14-serena-")) / ".serena" / "memories"
            store.mkdir(parents=True)
            total = 0.0
            for n in range(20):
                cmd = [*tool, "add", f"notes/m{n}", "-c", f"Memory {n}.", "-t", "bench",
                       "--dir", str(store), "--repo-root", str(CORPUS)]  # fmt: skip
                total += cpu_of(cmd, envs[name])[0]
            results[label][name].append(total)
            shutil.rmtree(store.parent.parent)
    log(label, results[label])

    lines = [
        SECTION,
        "",
        f"`.venv/bin/python bench/bench_hostile.py --baseline SRC --runs {args.runs}` "
        f"({datetime.now(UTC):%Y-%m-%d}; {machine()}; load {load()}). Baseline "
        f"{commit_of(versions['baseline'])}, current {commit_of(versions['current'])}; "
        "whole processes, alternating; medians of CPU time (user+sys, children included). "
        "The checks: regular files only and non-blocking reads, YAML nesting and alias "
        "limits, sizes before writing, stale temporaries, the Serena read-back parse.",
        "",
        "| case | baseline CPU ms | current CPU ms | current / baseline |",
        "|---|---|---|---|",
    ]
    for label, by_version in results.items():
        cpu = {n: statistics.median(v) for n, v in by_version.items()}
        lines.append(
            f"| {label} | {cpu['baseline'] * 1000:.0f} | {cpu['current'] * 1000:.0f} | "
            f"{cpu['current'] / cpu['baseline']:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


def log(label: str, by_version: dict[str, list[float]]) -> None:
    medians = {n: round(statistics.median(v) * 1000) for n, v in by_version.items()}
    print(label, medians, file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
