"""Issue 4 benchmark: `verify-all --changed-since` with one changed source file, 10k memories.

    .venv/bin/python bench/bench_changed_since.py [--count 10000] [--format serena]
        [--runs 7] [--profile] [--no-write]

1. The cited code is a git repository: a copy of `gen_store.default_source_tree()`
   (the installed `rich` package, committed once), in a temporary folder.
2. The store is `gen_store.cached_store(count, format, source_tree=...)`: every
   memory cites 3 real lines of that tree. It is copied next to the repository
   (outside it), so the store itself never shows up in `git diff`.
3. The index is warmed once (`reindex`). Then one source file is edited in the
   working tree (a line inserted after its first line, so every citation below
   it moves), and this is timed as a whole process, output to /dev/null:

       memory-enhancement verify-all --changed-since HEAD --dir S --repo-root R --index I

   (exit code 1 is accepted: moved citations are reported). Cases: no change at
   all (the fixed cost), the file cited by the median number of memories, and
   the most cited file. For reference, a full `verify-all` (no --changed-since)
   on the same store with the same edit in place.

Target: under 0.5 s with a warm index, because the index knows which memories
cite which files. `--profile` adds cProfile and `-X importtime` of the median case.
"""

from __future__ import annotations

import argparse
import io
import json
import pstats
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _issue4 import (
    Samples,
    bench_env,
    code_version,
    function_table,
    import_table,
    load,
    log,
    measured_line,
    ms,
    run_process,
    time_process,
    tool,
    verdict,
    write_subsection,
)
from gen_store import cached_store, default_source_tree

TITLE = "### verify-all --changed-since"
TARGET_MS = 500.0


@dataclass
class Case:
    name: str
    changed: str | None  # the edited source file
    citing: int  # memories citing it (from the index)
    samples: Samples
    verified: int  # memories verified by the run
    verdicts: dict[str, int]
    full: bool = False


def citing_counts(index: Path) -> list[tuple[str, int]]:
    """(file, memories citing it), fewest first, for files actually cited."""
    with sqlite3.connect(index) as conn:
        rows = conn.execute(
            "SELECT target, count(DISTINCT memory_id) FROM citations WHERE is_url = 0 "
            "GROUP BY target ORDER BY 2, 1"
        ).fetchall()
    return [(str(t), int(n)) for t, n in rows]


def edit(repo: Path, rel: str) -> None:
    """Insert a line after the first line: everything cited below it moves down by one."""
    file = repo / rel
    lines = file.read_text(encoding="utf-8").split("\n")
    lines[1:1] = ["# edited by bench_changed_since" if rel.endswith(".py") else ""]
    file.write_text("\n".join(lines), encoding="utf-8")


def restore(repo: Path, rel: str) -> None:
    subprocess.run(["git", "checkout", "-q", "--", rel], cwd=repo, check=True)


def summary(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, dict[str, int]]:
    """Memories verified and the verdict counts, from one untimed `--json` run."""
    _, _, done = run_process([*argv, "--json"], env, cwd, ok=(0, 1), stdout=subprocess.PIPE)
    results = json.loads(done.stdout or b"[]")
    verdicts: dict[str, int] = {}
    for result in results:
        for check in result.get("citations", result.get("checks", [])):
            status = str(check.get("status", "?"))
            verdicts[status] = verdicts.get(status, 0) + 1
    return len(results), verdicts


def run_case(
    name: str,
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    runs: int,
    changed: str | None,
    citing: int,
    *,
    full: bool = False,
) -> Case:
    verified, verdicts = summary(argv, env, cwd)
    samples = time_process(argv, env, cwd, runs, warmup=1, ok=(0, 1))
    log(
        f"  {name}: median {ms(samples.median)} (cpu {ms(samples.cpu_median)}), "
        f"{verified} memories verified, {verdicts}"
    )
    return Case(name, changed, citing, samples, verified, verdicts, full)


# -- report ----------------------------------------------------------------------------------


def table(cases: list[Case]) -> list[str]:
    lines = [
        "| Case | Changed file | Memories citing it | Memories verified | Verdicts | Median "
        "| p90 | CPU | Target |",
        "|---|---|---:|---:|---|---:|---:|---:|---|",
    ]
    for c in cases:
        target = "" if c.full else f"< 0.5 s: {verdict(c.samples.median, TARGET_MS)}"
        verdicts = ", ".join(f"{k} {v:,}" for k, v in sorted(c.verdicts.items())) or "-"
        lines.append(
            f"| {c.name} | {f'`{c.changed}`' if c.changed else '-'} | "
            f"{c.citing:,} | {c.verified:,} | {verdicts} | {ms(c.samples.median)} "
            f"| {ms(c.samples.p90)} | {ms(c.samples.cpu_median)} | {target} |"
        )
    return lines


def section(
    cases: list[Case],
    args: argparse.Namespace,
    loads: tuple[str, str],
    code: tuple[str, str],
    floor: Samples,
    profile_text: str,
) -> str:
    parts = [
        f"`bench/bench_changed_since.py`: a {args.count:,}-memory {args.format} store "
        "(3 citations each) citing a git copy of the installed `rich` package; the store "
        "lives outside the repository; warm index; one source file edited in the working "
        "tree (a line inserted after its first line, so the citations below it move); "
        f"`memory-enhancement verify-all [--changed-since HEAD] --dir S --repo-root R "
        f"--index I` as a whole process, output to /dev/null, {args.runs} runs after a "
        "warm-up (the full `verify-all`: fewer). Exit code 1 (moved citations) is expected.",
        "",
        measured_line(loads, code),
        "",
        *table(cases),
        "",
        f"Start-up floor: `memory-enhancement --version` takes {ms(floor.median)} "
        f"(CPU {ms(floor.cpu_median)}) on the same machine.",
    ]
    if profile_text:
        parts += ["", profile_text]
    return "\n".join(parts)


def profile(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    prof = cwd / "changed.prof"
    py = [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "memory_enhancement"]
    run_process([*py, *argv[1:]], env, cwd, ok=(0, 1))
    stats = pstats.Stats(str(prof), stream=io.StringIO())
    importtime = [sys.executable, "-X", "importtime", "-m", "memory_enhancement", *argv[1:]]
    _, _, done = run_process(importtime, env, cwd, ok=(0, 1))
    return "\n".join(
        [
            "cProfile of the median case (one process):",
            "",
            *function_table(stats),
            "",
            "Imports of the same process (`-X importtime`):",
            "",
            *import_table(done.stderr.decode(errors="replace")),
        ]
    )


# -- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--format", default="serena", choices=("serena", "frontmatter"))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--full-runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="3 runs, 1 full run")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.full_runs = 3, 1
    tree = default_source_tree()
    log(f"store: {args.count} {args.format} memories citing {tree} (cached) ...")
    generated = cached_store(args.count, args.format, source_tree=tree)
    before, code_before = load(), code_version()
    profile_text = ""
    with tempfile.TemporaryDirectory(prefix="bench-changed-") as tmp_name:
        tmp = Path(tmp_name)
        repo, store, index = tmp / "repo", tmp / "store", tmp / "index.db"
        shutil.copytree(tree, repo, symlinks=True)
        shutil.copytree(generated.root, store, symlinks=True)
        env = bench_env(tmp / "home")
        common = ["--dir", str(store), "--repo-root", str(repo), "--index", str(index)]
        run_process([tool(), *common, "reindex"], env, tmp)
        counts = citing_counts(index)
        median_file, median_n = counts[len(counts) // 2]
        top_file, top_n = counts[-1]
        log(f"{len(counts)} cited files; median {median_file} ({median_n}), top {top_file}")
        changed = [tool(), "verify-all", "--changed-since", "HEAD", *common]
        cases = [run_case("no file changed", changed, env, tmp, args.runs, None, 0)]
        edit(repo, median_file)
        cases.append(
            run_case("one file, median citing", changed, env, tmp, args.runs, median_file, median_n)
        )
        if args.profile:
            profile_text = profile(changed, env, tmp)
        full = [tool(), "verify-all", *common]
        cases.append(
            run_case(
                "full `verify-all` (reference)",
                full,
                env,
                tmp,
                args.full_runs,
                median_file,
                median_n,
                full=True,
            )
        )
        restore(repo, median_file)
        edit(repo, top_file)
        cases.append(
            run_case("one file, most cited", changed, env, tmp, args.runs, top_file, top_n)
        )
        restore(repo, top_file)
        floor = time_process([tool(), "--version"], env, tmp, 10)
    after, code_after = load(), code_version()
    text = section(cases, args, (before, after), (code_before, code_after), floor, profile_text)
    print(text)
    if not args.no_write:
        write_subsection(TITLE, text)
        log("wrote the subsection to docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
