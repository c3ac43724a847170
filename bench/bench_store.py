"""Issue 2 benchmark: `get` and `list --json` as whole processes.

    python bench/bench_store.py [--quick] [--profile] [--no-write]

Generates (or reuses, from `bench/.cache/stores/`) stores of 1k and 10k memories
in each format with `gen_store.py`, then times whole CLI processes, as a user or
an agent runs them: `memory-enhancement --dir STORE get PATH` and
`memory-enhancement --dir STORE list --json` (output to /dev/null), the same on
the real corpus (read-only), and Python start-up alone for reference. Uses
hyperfine when it is installed, else `time.perf_counter` around `subprocess.run`.

Prints a markdown table and writes it as the section "## Issue 2: store
operations (get, list)" of `docs/benchmarks.md`. `--profile` adds where the time
goes: the slowest imports of a `get` process (`-X importtime`) and the top
functions of `list --json` on the largest store (cProfile).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import pstats
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _issue4 import cpu_model
from gen_store import cached_store, default_source_tree

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks.md"
CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "ai-agents-memories"
SECTION = "## Issue 2: store operations (get, list)"
GET_TARGET_MS = 120.0
LIST_TARGET_MS = 1000.0  # at 10k
BASELINE = (
    "Cortex (seed baseline, quoted from the issue, not re-runnable here): about 170 ms to "
    "show one memory and about 200 ms to list 100."
)


@dataclass(frozen=True)
class Case:
    what: str
    store: str
    argv: list[str]
    runs: int
    target_ms: float | None = None
    note: str = ""
    bytecode: bool = True  # False: the package compiled from source at every start
    cold: bool = False  # every run in a new tool home: no index yet


@dataclass(frozen=True)
class Result:
    case: Case
    times_ms: list[float]
    cpu_ms: list[float]  # user + system time of each run

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_ms)

    @property
    def median(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def p90(self) -> float:
        ordered = sorted(self.times_ms)
        return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]

    @property
    def verdict(self) -> str:
        if self.case.target_ms is None:
            return ""
        return "ok" if self.median < self.case.target_ms else "**over**"


def tool_paths() -> tuple[str, str]:
    """The venv's python and the `memory-enhancement` script next to it."""
    python = sys.executable
    script = Path(python).parent / "memory-enhancement"
    found = str(script) if script.exists() else shutil.which("memory-enhancement")
    if not found:
        raise SystemExit("memory-enhancement is not installed next to this python")
    return python, found


def corpus_get_path(corpus: Path) -> str:
    """A typical real memory: the file of median size (ties broken by path)."""
    files = sorted(corpus.rglob("*.md"), key=lambda p: (p.stat().st_size, str(p)))
    files = [f for f in files if not any(part.startswith(".") for part in f.parts)]
    return files[len(files) // 2].relative_to(corpus).with_suffix("").as_posix()


def build_cases(quick: bool) -> list[Case]:
    python, tool = tool_paths()
    get_runs, list_runs, cold_runs = (15, 5, 1) if quick else (30, 10, 2)
    cases = [
        Case("python -c pass", "-", [python, "-c", "pass"], get_runs),
        Case(
            "python -c 'import memory_enhancement.cli'",
            "-",
            [python, "-c", "import memory_enhancement.cli"],
            get_runs,
        ),
        Case("memory-enhancement --version", "-", [tool, "--version"], get_runs),
    ]
    for count in (1000, 10_000):
        for fmt in ("frontmatter", "serena"):
            store = cached_store(count, fmt)
            live = store.live_paths()
            target = live[len(live) // 2]
            label = f"{fmt} {count // 1000}k"
            root = str(store.root)
            cases.append(
                Case("get", label, [tool, "--dir", root, "get", target], get_runs, GET_TARGET_MS)
            )
            list_target = LIST_TARGET_MS if count >= 10_000 else None
            argv = [tool, "--dir", root, "list", "--json"]
            cases.append(
                Case(
                    "list --json, first call",
                    label,
                    argv,
                    cold_runs,
                    note="no index yet: builds it (new tool home each run)",
                    cold=True,
                )
            )
            cases.append(
                Case(
                    "list --json",
                    label,
                    [tool, "--dir", root, "list", "--json"],
                    list_runs,
                    list_target,
                )
            )
    if CORPUS.is_dir():
        n = sum(1 for _ in CORPUS.rglob("*.md"))
        label = f"real corpus ({n})"
        path = corpus_get_path(CORPUS)
        cases.append(
            Case("get", label, [tool, "--dir", str(CORPUS), "get", path], get_runs, GET_TARGET_MS)
        )
        argv = [tool, "--dir", str(CORPUS), "list", "--json"]
        cases.append(
            Case(
                "list --json, first call",
                label,
                argv,
                cold_runs,
                note="no index yet: builds it (new tool home each run)",
                cold=True,
            )
        )
        cases.append(Case("list --json", label, argv, list_runs))
        cases.append(
            Case(
                "get, no bytecode cache",
                label,
                [tool, "--dir", str(CORPUS), "get", path],
                get_runs,
                bytecode=False,
            )
        )
    return cases


PYCACHE = ROOT / "bench" / ".cache" / "pycache"


def bench_env(home: Path, *, bytecode: bool = True) -> dict[str, str]:
    """The environment of every timed process.

    With `bytecode`, compiled modules are cached (under `bench/.cache/pycache/`,
    never in src/), as for any installed package; without it, the package is
    compiled from source at every start, as when PYTHONDONTWRITEBYTECODE=1 meets
    an editable install that has no `__pycache__` yet.
    """
    env = dict(os.environ)
    env["MEMORY_ENHANCEMENT_HOME"] = str(home)  # never touch the user's own stores
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def check_run(case: Case, env: dict[str, str], cwd: Path) -> str:
    """Run once (a warm-up), insist on success, and say what the output held."""
    done = subprocess.run(case.argv, capture_output=True, text=True, env=env, cwd=cwd)
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(case.argv)} failed ({done.returncode}):\n{done.stderr}")
    if case.what == "list --json":
        return f"{len(json.loads(done.stdout))} listed"
    if case.what.startswith("get"):
        return case.argv[-1].rsplit("/", 1)[-1][:40]
    return ""


def time_case(case: Case, env: dict[str, str], cwd: Path) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of each run."""
    if shutil.which("hyperfine"):
        return _hyperfine(case, env, cwd)
    walls, cpus = [], []
    for _ in range(case.runs):
        wall, cpu, _ = timed_run(case.argv, env, cwd)
        walls.append(wall)
        cpus.append(cpu)
    return walls, cpus


def timed_run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """One process: wall ms, CPU ms (user + system, from wait4), and stderr when it failed."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = (time.perf_counter() - started) * 1000
        proc.returncode = os.waitstatus_to_exitcode(status)
        failed = ""
        if proc.returncode != 0:
            err.seek(0)
            failed = f"exit {proc.returncode}: " + err.read().decode(errors="replace")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, failed


def _hyperfine(case: Case, env: dict[str, str], cwd: Path) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "h.json"
        command = ["hyperfine", "-N", "--warmup", "2", "--runs", str(case.runs)]
        command += ["--output", "null", "--export-json", str(out), shlex.join(case.argv)]
        subprocess.run(command, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
        found = json.loads(out.read_text())["results"][0]
    walls = [t * 1000 for t in found["times"]]
    cpu = (found["user"] + found["system"]) * 1000  # hyperfine keeps only the mean
    return walls, [cpu] * len(walls)


def run(cases: list[Case], work: Path) -> list[Result]:
    """Time every case; `work` holds the tool home (its indexes) and is the working folder."""
    results = []
    for case in cases:
        if case.cold:
            walls, cpus = [], []
            for n in range(case.runs):
                home = work / f"cold-{n}"  # a tool home of its own: the store has no index
                wall, cpu, failed = timed_run(case.argv, bench_env(home), work)
                if failed:
                    raise SystemExit(f"{shlex.join(case.argv)} failed ({failed})")
                shutil.rmtree(home, ignore_errors=True)
                walls.append(wall)
                cpus.append(cpu)
            result = Result(case, walls, cpus)
        else:
            env = bench_env(work / "home", bytecode=case.bytecode)
            note = check_run(case, env, work)
            check_run(case, env, work)
            walls, cpus = time_case(case, env, work)
            result = Result(Case(**{**case.__dict__, "note": note}), walls, cpus)
        results.append(result)
        print(
            f"  {case.what:<44} {case.store:<22} median {result.median:8.1f} ms"
            f"  p90 {result.p90:8.1f} ms  cpu {result.cpu:8.1f} ms  ({len(walls)} runs)",
            file=sys.stderr,
            flush=True,
        )
    return results


def table(results: list[Result]) -> str:
    lines = [
        "| Command | Store | Runs | Median | p90 | Min | CPU | Target | | Notes |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        target = f"< {r.case.target_ms:.0f} ms" if r.case.target_ms else ""
        lines.append(
            f"| `{r.case.what}` | {r.case.store} | {len(r.times_ms)} | {_ms(r.median)} "
            f"| {_ms(r.p90)} | {_ms(min(r.times_ms))} | {_ms(r.cpu)} | {target} | {r.verdict} "
            f"| {r.case.note} |"
        )
    return "\n".join(lines)


def _ms(value: float) -> str:
    return f"{value / 1000:.2f} s" if value >= 10_000 else f"{value:.1f} ms"


def breakdown(results: list[Result]) -> str:
    """Start-up, imports and the command's own work, from the CPU medians."""
    by = {(r.case.what, r.case.store): r.cpu for r in results}
    python = by.get(("python -c pass", "-"))
    imported = by.get(("python -c 'import memory_enhancement.cli'", "-"))
    version = by.get(("memory-enhancement --version", "-"))
    gets = [r for r in results if r.case.what == "get"]
    if python is None or imported is None or version is None or not gets:
        return ""
    real = [r for r in gets if r.case.store.startswith("real")]
    chosen = (real or gets)[-1]
    return (
        f"Where a warm `get` on the {chosen.case.store} goes (CPU medians): Python start-up "
        f"{python:.0f} ms; importing the CLI {imported - python:+.0f} ms; the console script "
        f"and click dispatch {version - imported:+.0f} ms; the command itself (the imports "
        f"it makes, finding, reading and parsing the memory, the index and usage databases, "
        f"output) {chosen.cpu - version:+.0f} ms; {chosen.cpu:.0f} ms in all."
    )


def code_state() -> str:
    """The commit measured, and whether src/ had uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "code version unknown"
    return f"commit {head}" + (" with uncommitted changes in src/" if dirty else "")


def machine() -> str:
    return (
        f"{os.cpu_count()} CPUs ({cpu_model()}), {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def load() -> str:
    try:
        return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        return "load average unknown"


def section(results: list[Result], quick: bool, profile_text: str, loads: tuple[str, str]) -> str:
    method = (
        "hyperfine" if shutil.which("hyperfine") else "`time.perf_counter` around `subprocess.run`"
    )
    tree = default_source_tree()
    parts = [
        SECTION,
        "",
        f"Rerun: `.venv/bin/python bench/bench_store.py{' --quick' if quick else ''}` "
        "(`--quick` for fewer runs, `--profile` to add the profile below).",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {code_state()}, on {machine()} "
        f"({loads[0]} before, {loads[1]} after). Every figure is a whole process (Python "
        f"start-up included), output to /dev/null, timed with {method}; *CPU* is the "
        "median user + system time of the process, which other load on the machine "
        "disturbs much less than wall time (verdicts compare the wall-clock median with the "
        "target; with a load average above the CPU count, read the CPU column). Rows marked "
        "*first call* run in a new tool home each time, so the store has no index yet and "
        "the call builds it; every other row follows two warm-up runs, so the index exists "
        "and compiled modules are cached as for any installed package (the *no bytecode "
        "cache* row shows the cost without). Stores: generated by `bench/gen_store.py` "
        "(seed 0; 3 citations and 4 links per memory; about 3% expired, which `list` "
        "hides), citing "
        f"`{tree.name}` (a git copy of the installed package), cached in "
        "`bench/.cache/stores/`. `get` reads a live memory from the middle of the store; on "
        "the real corpus, the memory of median file size.",
        "",
        table(results),
        "",
        BASELINE,
        "",
    ]
    text = breakdown(results)
    if text:
        parts += [text, ""]
    if profile_text:
        parts += [profile_text, ""]
    return "\n".join(parts)


def intro() -> str:
    nproc = os.cpu_count()
    version = platform.python_version()
    return (
        "# Benchmarks\n\n"
        "Figures for the performance targets of the issues, measured on the machine below "
        "and rerunnable from the repository root. Each section starts with its command.\n\n"
        f"Machine: `nproc` = {nproc}, {cpu_model()}, Python {version}; "
        f"first written {datetime.now(UTC):%Y-%m-%d}.\n\n"
        "How to rerun:\n\n"
        "- Issue 2, store operations: `.venv/bin/python bench/bench_store.py [--quick]`\n"
        "- Generated stores for any benchmark: `.venv/bin/python bench/gen_store.py OUT "
        "--count 10000 --format frontmatter|serena [--citations-per-memory 3] "
        "[--links-per-memory 4] [--source-tree PATH] [--seed 0]`\n\n"
    )


def write_docs(text: str) -> None:
    DOCS.parent.mkdir(parents=True, exist_ok=True)
    current = DOCS.read_text(encoding="utf-8") if DOCS.exists() else intro()
    lines = current.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == SECTION), None)
    block = text.rstrip("\n") + "\n"
    if start is None:
        joined = "".join(lines).rstrip("\n")
        new = f"{joined}\n\n{block}"
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        tail = "".join(lines[end:])
        new = "".join(lines[:start]) + block + ("\n" + tail if tail else "")
    DOCS.write_text(new, encoding="utf-8")


# -- profiling ------------------------------------------------------------------


def profile(cases: list[Case], work: Path) -> str:
    """What a warm `get` imports, and the top functions of the largest warm `list --json`."""
    python, _ = tool_paths()
    gets = [c for c in cases if c.what == "get"]
    lists = [c for c in cases if c.what == "list --json" and c.target_ms]
    out = ["Profile (`--profile`, warm index):", ""]
    env = bench_env(work / "home")
    if gets:
        argv = [python, "-X", "importtime", "-m", "memory_enhancement", *gets[-1].argv[1:]]
        subprocess.run(argv, capture_output=True, env=env, cwd=work)  # compile, warm caches
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=work)
        out += _import_table(done.stderr, gets[-1].store)
    if lists:
        prof = work / "list.prof"
        argv = [python, "-m", "cProfile", "-o", str(prof), "-m", "memory_enhancement"]
        argv += lists[-1].argv[1:]
        subprocess.run(argv, stdout=subprocess.DEVNULL, env=env, cwd=work, check=True)
        out += _function_table(prof, lists[-1].store)
    return "\n".join(out)


def _import_table(stderr: str, store: str, top: int = 14) -> list[str]:
    """Modules the package pulls in, by cumulative import time, and the package's own share.

    `-X importtime` prints a module after its sub-imports, indented by depth; the
    parent of a line is the next line that is less indented.
    """
    nodes = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, cumulative, raw = line[len("import time:") :].split("|")
        depth = (len(raw) - len(raw.lstrip())) // 2
        nodes.append((depth, raw.strip(), int(own), int(cumulative)))
    total = sum(cum for depth, _, _, cum in nodes if depth == 0)
    ours = sum(own for _, name, own, _ in nodes if name.startswith("memory_enhancement"))
    pulled = []
    for i, (depth, name, _, cumulative) in enumerate(nodes):
        parent = next((nodes[j][1] for j in range(i + 1, len(nodes)) if nodes[j][0] < depth), "")
        if parent.startswith("memory_enhancement") and not name.startswith("memory_enhancement"):
            pulled.append((cumulative, name, parent))
    pulled.sort(reverse=True)
    lines = [
        f"Imports of one warm `get` on {store} (`-X importtime`, one run, which inflates "
        f"times): {total / 1000:.0f} ms of imports in all, of which {ours / 1000:.0f} ms in "
        "the package's own module bodies (class and dataclass creation, regex compiles). "
        "The heaviest modules it pulls in:",
        "",
        "| Module | Cumulative | Imported by |",
        "|---|---:|---|",
    ]
    lines += [f"| `{name}` | {cum / 1000:.1f} ms | `{by}` |" for cum, name, by in pulled[:top]]
    return [*lines, ""]


def _function_table(prof: Path, store: str, top: int = 15) -> list[str]:
    stats = pstats.Stats(str(prof))
    total = stats.total_tt  # type: ignore[attr-defined]
    entries = []
    for (file, line, name), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{Path(file).name}:{line}" if line else file
        entries.append((cumulative, own, calls, f"{name} ({where})"))
    entries.sort(reverse=True)
    lines = [
        f"Functions of one `list --json` on {store} (cProfile, {total:.2f} s under the profiler):",
        "",
        "| Function | Calls | Cumulative | Self |",
        "|---|---:|---:|---:|",
    ]
    wrappers = ("<built-in method builtins.exec", "<module>", "<frozen runpy>", "core.py:")
    shown = [e for e in entries if not any(w in e[3] for w in wrappers)]
    lines += [
        f"| `{name}` | {calls} | {cum:.3f} s | {own:.3f} s |"
        for cum, own, calls, name in shown[:top]
    ]
    by_self = sorted(entries, key=lambda e: e[1], reverse=True)[:8]
    lines += [
        "",
        "Most self time: " + "; ".join(f"`{n}` {o:.3f} s" for _, o, _, n in by_self) + ".",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="15 runs per get, 5 per list")
    parser.add_argument("--profile", action="store_true", help="add imports and a cProfile")
    parser.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = parser.parse_args(argv)
    print("preparing stores (cached in bench/.cache/stores/) ...", file=sys.stderr, flush=True)
    cases = build_cases(args.quick)
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        before = load()
        results = run(cases, Path(tmp))
        after = load()
        profile_text = profile(cases, Path(tmp)) if args.profile else ""
    text = section(results, args.quick, profile_text, (before, after))
    print(text)
    if not args.no_write:
        write_docs(text)
        print(f"wrote the section to {DOCS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
