"""Shared helpers of the issue 4 benchmarks (index, search, retrieval, changed-since).

Each script of issue 4 writes one subsection of the section "## Issue 4: index,
search and retrieval" of `docs/benchmarks.md`, and leaves every other section
and subsection as it finds them (colleagues write theirs concurrently). Timing
helpers report wall time and, for child processes, CPU time (user + system):
the machine is shared, and CPU time shows what the work costs when wall time is
inflated by other processes.
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DOCS = ROOT / "docs" / "benchmarks.md"
CORPUS = ROOT / "corpus" / "ai-agents-memories"
SECTION = "## Issue 4: index, search and retrieval"
PYCACHE = BENCH / ".cache" / "pycache"

# Subsections in the order they appear; a script only ever rewrites its own.
SUBSECTIONS = [
    "### Index: cold build and sync",
    "### Search latency",
    "### Retrieval quality",
    "### verify-all --changed-since",
    "### Where the time goes, and what to change in src",
]

RERUN = """\
Rerun from the repository root (each script rewrites only its own subsection below;
`--no-write` prints without touching this file, `--quick` does fewer runs; the last
subsection is written by hand from the profiles):

- `.venv/bin/python bench/bench_index.py [--sizes 10000,100000] [--profile]`
- `.venv/bin/python bench/bench_search.py [--sizes 10000,100000] [--profile]`
- `.venv/bin/python bench/bench_retrieval.py` (queries: `bench/queries/corpus_queries.yaml`)
- `.venv/bin/python bench/bench_changed_since.py [--profile]`

Generated stores come from `bench/gen_store.py` (seed 0, 3 citations and 4 links per
memory, citing a git copy of the installed `rich` package), cached under
`bench/.cache/stores/`; the real corpus is `corpus/ai-agents-memories/`
(1,026 Serena memories, vendored in this repository), copied to a temporary folder
where a writable store is needed.
Indexes, state and `MEMORY_ENHANCEMENT_HOME` live in temporary folders, never in the
user's own cache."""


# -- machine ---------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def memory_gb() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.0f} GB RAM"
    except (OSError, ValueError):
        pass
    return "RAM unknown"


def machine() -> str:
    import sqlite3

    return (
        f"{os.cpu_count()} CPUs ({cpu_model()}), {memory_gb()}, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}"
    )


def load() -> str:
    try:
        return "{:.1f}/{:.1f}/{:.1f}".format(*os.getloadavg())
    except OSError:
        return "unknown"


def stamp() -> str:
    return f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"


def code_version() -> str:
    """The last commit that changed src/, and whether src/ had uncommitted changes."""
    try:
        commit = subprocess.run(
            ["git", "log", "-1", "--format=%h", "--", "src"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "commit unknown"
    version = f"src/ at commit {commit or 'unknown'}"
    return version + (" with uncommitted changes" if dirty else "")


def measured_line(loads: tuple[str, str], code: tuple[str, str] | None = None) -> str:
    """When and where, with the load before and after; `code` = code_version() at start, end."""
    if code is None:
        version = ""
    elif code[0] == code[1]:
        version = f", {code[0]},"
    else:
        version = f", code changed during the run ({code[0]} at the start, {code[1]} at the end),"
    return (
        f"Measured {stamp()}{version} on {machine()}; load average (1/5/15 min) {loads[0]} "
        f"before, {loads[1]} after (the machine is shared with other agents' test runs, so "
        "wall times carry noise; CPU times are steadier)."
    )


# -- the tool ----------------------------------------------------------------------


def tool() -> str:
    """The `memory-enhancement` console script next to this Python."""
    script = Path(sys.executable).parent / "memory-enhancement"
    if not script.exists():
        raise SystemExit(f"memory-enhancement is not installed next to {sys.executable}")
    return str(script)


def bench_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of every timed process: a private home, cached bytecode, offline."""
    env = dict(os.environ)
    env["MEMORY_ENHANCEMENT_HOME"] = str(home)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled modules cached, as when installed
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    env.update(extra)
    return env


# -- timing ------------------------------------------------------------------------


@dataclass
class Samples:
    """Wall and CPU times of repeated runs, in milliseconds."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, wall_ms: float, cpu_ms: float) -> None:
        self.wall.append(wall_ms)
        self.cpu.append(cpu_ms)

    def extend(self, other: Samples) -> None:
        self.wall += other.wall
        self.cpu += other.cpu

    @property
    def median(self) -> float:
        return statistics.median(self.wall) if self.wall else float("nan")

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu) if self.cpu else float("nan")

    @property
    def p90(self) -> float:
        return quantile(self.wall, 0.9)

    @property
    def minimum(self) -> float:
        return min(self.wall) if self.wall else float("nan")


def quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_process(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    *,
    ok: tuple[int, ...] = (0,),
    stdout: Any = subprocess.DEVNULL,
) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    """Run one process; (wall ms, CPU ms of the process and its children, result)."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(list(argv), env=env, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - started) * 1000
    cpu = (_children_cpu() - cpu_before) * 1000
    if done.returncode not in ok:
        raise SystemExit(
            f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr.decode(errors='replace')}"
        )
    return wall, cpu, done


def time_process(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    runs: int,
    *,
    warmup: int = 1,
    ok: tuple[int, ...] = (0,),
    before: Callable[[], None] | None = None,
) -> Samples:
    """Time `runs` runs of a process after `warmup` untimed ones; `before` runs untimed first."""
    samples = Samples()
    for n in range(warmup + runs):
        if before is not None:
            before()
        wall, cpu, _ = run_process(argv, env, cwd, ok=ok)
        if n >= warmup:
            samples.add(wall, cpu)
    return samples


def time_call(func: Callable[[], Any], runs: int, *, warmup: int = 1) -> tuple[Samples, Any]:
    """Time an in-process call; returns the samples and the last result.

    CPU time includes worker processes the call started and waited for (the index
    parses files in a process pool on cold builds).
    """
    samples = Samples()
    result = None
    for n in range(warmup + runs):
        cpu0 = time.process_time() + _children_cpu()
        t0 = time.perf_counter()
        result = func()
        wall = (time.perf_counter() - t0) * 1000
        cpu = (time.process_time() + _children_cpu() - cpu0) * 1000
        if n >= warmup:
            samples.add(wall, cpu)
    return samples, result


def ms(value: float) -> str:
    """A duration in milliseconds, readable at any scale."""
    if value != value:  # NaN
        return "n/a"
    if value >= 10_000:
        return f"{value / 1000:.1f} s"
    if value >= 1000:
        return f"{value / 1000:.2f} s"
    if value >= 100:
        return f"{value:.0f} ms"
    if value >= 10:
        return f"{value:.1f} ms"
    return f"{value:.2f} ms"


def verdict(value: float, target: float | None) -> str:
    if target is None:
        return ""
    return "ok" if value < target else "**missed**"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- docs/benchmarks.md ------------------------------------------------------------


def intro() -> str:
    return (
        f"{SECTION}\n\n"
        "Issue 4's targets: cold index build of 10k memories under 5 s, no-change sync under "
        "50 ms and sync after one changed file under 100 ms at 10k, search under 20 ms "
        "in-process and 200 ms as a whole CLI process at 10k, `verify-all --changed-since` "
        "with one changed source file on a 10k store under 0.5 s, and Recall@5/MRR of "
        "lexical, semantic and hybrid search on a labelled query set over the real corpus.\n\n"
        f"{RERUN}\n\n"
        f"Machine: {machine()}.\n"
    )


def write_subsection(title: str, body: str) -> None:
    """Replace (or add) one subsection of the issue 4 section, leaving all else untouched."""
    assert title in SUBSECTIONS, title
    DOCS.parent.mkdir(parents=True, exist_ok=True)
    text = DOCS.read_text(encoding="utf-8") if DOCS.exists() else "# Benchmarks\n"
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == SECTION), None)
    if start is None:
        lines = [*_strip_trailing(lines), "", *intro().splitlines()]
        start = next(i for i, line in enumerate(lines) if line.strip() == SECTION)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    section = lines[start:end]
    # The intro (everything before the first subsection) is regenerated each time.
    first_sub = next((i for i, line in enumerate(section) if line.startswith("### ")), None)
    subs = _split_subsections(section[first_sub:] if first_sub is not None else [])
    subs[title] = body.strip("\n").splitlines()
    ordered = [t for t in SUBSECTIONS if t in subs] + [t for t in subs if t not in SUBSECTIONS]
    new_section = intro().rstrip("\n").splitlines()
    for t in ordered:
        new_section += ["", t, "", *_strip_trailing(subs[t])]
    tail = lines[end:]
    out = [*lines[:start], *new_section]
    if tail:
        out += ["", *tail]
    DOCS.write_text("\n".join(_strip_trailing(out)) + "\n", encoding="utf-8")


def _split_subsections(lines: list[str]) -> dict[str, list[str]]:
    subs: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        if line.startswith("### "):
            current = line.strip()
            subs[current] = []
        elif current is not None:
            subs[current].append(line)
    for key, body in subs.items():
        while body and not body[0].strip():
            body.pop(0)
        subs[key] = _strip_trailing(body)
    return subs


def _strip_trailing(lines: list[str]) -> list[str]:
    out = list(lines)
    while out and not out[-1].strip():
        out.pop()
    return out


# -- profiles --------------------------------------------------------------------------


def function_table(stats: Any, top: int = 14) -> list[str]:
    """A markdown table of the functions with most cumulative time in a `pstats.Stats`."""
    total = stats.total_tt
    rows = []
    for (file, line, name), (_, calls, own, cumulative, _) in stats.stats.items():
        where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if line else file
        rows.append((cumulative * 1000, own * 1000, calls, f"{name} ({where})"))
    rows.sort(reverse=True)
    skip = ("builtins.exec", "<module>", "<frozen runpy>", "core.py:", "lambda")
    shown = [r for r in rows if not any(s in r[3] for s in skip)][:top]
    lines = [
        f"| Function (total {ms(total * 1000)} under the profiler) | Calls | Cumulative | Self |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| `{n}` | {c:,} | {ms(cum)} | {ms(own)} |" for cum, own, c, n in shown]
    by_self = sorted(rows, key=lambda r: r[1], reverse=True)[:6]
    most = "; ".join(f"`{n}` {ms(own)}" for _, own, _, n in by_self)
    return [*lines, "", f"Most self time: {most}."]


def import_table(stderr: str, top: int = 12) -> list[str]:
    """A markdown table of the slowest imports from `python -X importtime` output."""
    rows = []
    total = 0
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, cumulative, raw = line[len("import time:") :].split("|")
        if len(raw) - len(raw.lstrip()) <= 1:  # a top-level import: counted once
            total += int(cumulative)
        rows.append((int(cumulative), int(own), raw.strip()))
    rows.sort(reverse=True)
    lines = [
        f"{total / 1000:.0f} ms of imports in all (cumulative includes sub-imports).",
        "",
        "| Module | Cumulative | Self |",
        "|---|---:|---:|",
    ]
    return lines + [f"| `{n}` | {c / 1000:.1f} ms | {o / 1000:.1f} ms |" for c, o, n in rows[:top]]
