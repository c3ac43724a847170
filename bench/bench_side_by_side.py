"""Two versions of the tool, side by side in one run: get, verify-all and search as processes.

    .venv/bin/python bench/bench_side_by_side.py --baseline SRC [--runs 11] [--count 10000]
        [--section "## Issue 11: ..."] [--no-write]

`SRC` is the `src/` folder of another checkout (e.g. `git worktree add /tmp/base
<commit>` then `/tmp/base/src`); "current" is this checkout's `src/`. Both run
with this checkout's virtualenv (same Python, same dependencies) through
`python -m memory_enhancement`, with PYTHONPATH pointing at their `src/`, so
the only difference is our code. Each command is run alternately, baseline then
current, `--runs` times; CPU time (user + sys of the process and of its waited-for
children, git included) is reported as medians, wall time beside it. Each
version gets its own index and state (MEMORY_ENHANCEMENT_HOME), warmed by one
untimed run, so the timed runs are warm.

The store is a generated one (`gen_store.py`, frontmatter, 3 citations and 4
links per memory, citing a git copy of the installed `rich` package).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _issue4 import load, machine
from gen_store import cached_store

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks.md"
PYTHON = sys.executable


def cpu_of(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds user+sys including waited-for children, wall seconds) of one process."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed: {err.read().decode()[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def commit_of(src: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(src), "status", "--porcelain", "--", "."], capture_output=True, text=True
    )
    return (out.stdout.strip() or "?") + ("+changes" if dirty.stdout.strip() else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="src/ of the other version")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--section", default="## Issue 11: the package layout, before and after")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    generated = cached_store(args.count, "frontmatter")
    store, repo = Path(generated.root), Path(generated.params.source_tree)
    sample = generated.rows[len(generated.rows) // 2]["path"]
    versions = {"baseline": args.baseline.resolve(), "current": ROOT / "src"}
    commands = {
        "get": ["get", sample],
        "search (lexical)": ["search", "cache invalidation handler", "--json"],
        "verify-all --json": ["verify-all", "--json"],
    }
    homes = {name: tempfile.mkdtemp(prefix=f"bench-{name}-") for name in versions}
    envs = {}
    for name, src in versions.items():
        env = dict(os.environ, PYTHONPATH=str(src), MEMORY_ENHANCEMENT_HOME=homes[name])
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        envs[name] = env
    base = [PYTHON, "-m", "memory_enhancement", "--dir", str(store), "--repo-root", str(repo)]
    results: dict[str, dict[str, list[tuple[float, float]]]] = {c: {} for c in commands}
    for label, argv in commands.items():
        for name in versions:
            cpu_of([*base, *argv], envs[name])  # warm: index built, bytecode compiled
            results[label][name] = []
        for _ in range(args.runs):
            for name in versions:
                results[label][name].append(cpu_of([*base, *argv], envs[name]))
        print(label, {n: round(statistics.median(c for c, _ in r) * 1000) for n, r in
                      results[label].items()}, file=sys.stderr)  # fmt: skip

    lines = [
        args.section,
        "",
        f"`.venv/bin/python bench/bench_side_by_side.py --baseline SRC --runs {args.runs}` "
        f"({datetime.now(UTC):%Y-%m-%d}; {machine()}; load {load()}). Baseline "
        f"{commit_of(versions['baseline'])}, current {commit_of(versions['current'])}; "
        f"a generated store of {args.count:,} frontmatter memories (3 citations, 4 links each) "
        "citing a git copy of `rich`; warm runs, alternating; medians of CPU time "
        "(user+sys, children included), wall time in brackets.",
        "",
        "| command | baseline CPU ms | current CPU ms | current / baseline |",
        "|---|---|---|---|",
    ]
    for label, by_version in results.items():
        cpu = {n: statistics.median(c for c, _ in runs) for n, runs in by_version.items()}
        wall = {n: statistics.median(w for _, w in runs) for n, runs in by_version.items()}
        lines.append(
            f"| `{label}` | {cpu['baseline'] * 1000:.0f} ({wall['baseline'] * 1000:.0f}) | "
            f"{cpu['current'] * 1000:.0f} ({wall['current'] * 1000:.0f}) | "
            f"{cpu['current'] / cpu['baseline']:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        write_section(args.section, text)
    return 0


def write_section(heading: str, text: str) -> None:
    """Replace (or append) one `## ` section of docs/benchmarks.md, leaving the rest."""
    doc = DOCS.read_text(encoding="utf-8")
    start = doc.find(heading + "\n")
    if start == -1:
        doc = doc.rstrip() + "\n\n" + text
    else:
        end = doc.find("\n## ", start + len(heading))
        doc = doc[:start] + text + (doc[end + 1 :] if end != -1 else "")
    DOCS.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
