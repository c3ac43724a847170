"""Speed of `verify-all` on 10k memories / 30k citations, against the seed's algorithm.

Issue 3, benchmark 2. In one run, on one store and one repository:

1. The source tree is a git copy of an installed package (`gen_store.default_source_tree`,
   `rich`), copied to a temporary folder: commit A.
2. `gen_store.generate_store` writes 10,000 serena memories with 3 citations
   each (30,000), citing real lines of that tree at A with their text as
   snippet; the Verified stamps (2024-2025) are after commit A's date.
3. A second commit B edits the tree deterministically so that a share of the
   citations is moved or stale: lines inserted (shifts), blocks of lines cut and
   pasted elsewhere (block moves), lines changed in the middle (stale), files
   renamed (moved to another path) and deleted (missing). B is dated after every
   Verified stamp, so history maps each citation from A forward.
4. Both tools run as whole processes, alternately, `--runs` times after one
   untimed warm-up each (page cache warm for both), twice: on the tree at A
   before B is committed (every citation valid, the state a CI run finds most
   days), then at B. The tool gets a fresh MEMORY_ENHANCEMENT_HOME: its first
   run builds the index there (reported apart, as "first run"), the timed runs
   find it warm, as a user's do.

       memory-enhancement verify-all --dir STORE --repo-root REPO --json > /dev/null
       python bench/seed_baseline.py verify-all --dir STORE --repo-root REPO --json > /dev/null

   (exit code 1 is expected from ours: some memories are stale). The figures
   are the medians, of wall time and of CPU time (user+sys, steadier on a
   loaded machine); the speedup is median(seed) / median(ours).
5. The verdicts are compared per citation (one more untimed run of each), with
   the truth from git's own diff (`accuracy/truth.py`): where the seed says valid,
   ours must say valid; where the seed says stale or missing and the truth
   agrees, ours must say stale or missing. Every other combination is
   summarised (that is where the seed's rule is wrong).

The seed's `verify_all_memories` globs `*.md` in one folder; the baseline globs
recursively (`rglob`) because the generated store has category folders.

    .venv/bin/python bench/bench_verify_speed.py [--memories 10000] [--citations 3]
        [--runs 5] [--seed 0] [--keep] [--show 10]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "accuracy"))

from _git import diff_pairs, git, rev_parse  # noqa: E402
from _tool import default_cli, tool_env, tool_version  # noqa: E402
from truth import compute_population, map_old_lines  # noqa: E402

from gen_store import default_source_tree, generate_store  # noqa: E402

COMMIT_B_DATE = "2026-06-01T12:00:00+00:00"  # after every Verified stamp gen_store writes
SPEEDUP_TARGET = 3.0


# -- commit B: edits that move and break a share of the citations -----------------


@dataclass
class Edits:
    inserted: int = 0  # files with lines inserted (everything below shifts)
    block_moves: int = 0
    changed_lines: int = 0
    renamed: int = 0
    deleted: int = 0


def _git_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def edit_tree(repo: Path, seed: int) -> Edits:
    """Commit B: deterministic edits of the tracked text files (see the module docstring)."""
    rng = random.Random(f"verify-speed:{seed}")
    edits = Edits()
    files = sorted(git(repo, "ls-files", "-z").decode().split("\0"))
    for rel in (f for f in files if f):
        path = repo / rel
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        roll = rng.random()
        if roll < 0.03:
            git(repo, "rm", "--quiet", rel)
            edits.deleted += 1
            continue
        lines = _git_lines(text)
        if len(lines) < 20:
            continue
        if rng.random() < 0.6:  # insert a few lines somewhere in the first half
            at = rng.randrange(len(lines) // 2)
            lines[at:at] = [f"# inserted by commit B ({n})" for n in range(rng.randint(1, 6))]
            edits.inserted += 1
        if rng.random() < 0.35:  # cut a block and paste it further down
            size = rng.randint(3, 15)
            start = rng.randrange(len(lines) - size)
            block = lines[start : start + size]
            del lines[start : start + size]
            to = rng.randrange(len(lines) + 1)
            lines[to:to] = block
            edits.block_moves += 1
        if rng.random() < 0.5:  # change ~3% of the non-blank lines in the middle
            filled = [n for n, line in enumerate(lines) if len(line.strip()) >= 8]
            for n in rng.sample(filled, max(1, len(filled) * 3 // 100)):
                line = lines[n]
                body = line.lstrip()
                mid = len(line) - len(body) + len(body) // 2
                lines[n] = line[:mid] + "EDITED" + line[mid:]
                edits.changed_lines += 1
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        if roll > 0.95:  # rename (content edits above are kept)
            new = f"{rel[: -len(path.suffix)] if path.suffix else rel}_v2{path.suffix}"
            git(repo, "mv", rel, new)
            edits.renamed += 1
    env = {
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        "GIT_AUTHOR_DATE": COMMIT_B_DATE,
        "GIT_COMMITTER_DATE": COMMIT_B_DATE,
    }
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--no-verify", "-m", "B: edits for the benchmark", env=env)
    return edits


# -- the truth for every citation -----------------------------------------------


class Truth:
    """What git's diff A..B says about a citation: valid, moved, stale or missing.

    Single lines come from `truth.compute_population` (the accuracy benchmark's
    labels). A range is valid when every line of it stayed in place, missing
    when the file is gone, otherwise "changed" (moved or stale: the seed checks
    no line of a range, so only valid and missing matter for the comparison).
    """

    def __init__(self, repo: Path, old: str, new: str, old_lines: dict[str, int]) -> None:
        every = frozenset({"", *(Path(p).suffix.lower() for p in old_lines)})
        population = compute_population(repo, old, new, suffixes=every, min_chars=1)
        self.lines = {(c.path, c.line): c.truth for c in population.cases}
        self.pairs = {p.old_path: p for p in diff_pairs(repo, old, new, "myers") if p.old_path}
        self.old_lines = old_lines
        self._maps: dict[str, list[int | None]] = {}

    def of(self, path: str, line: int | None, end_line: int | None) -> str:
        pair = self.pairs.get(path)
        if path not in self.old_lines:
            return "unknown"
        if pair is not None and pair.new_path is None:
            return "missing"
        if line is None:
            return "valid"
        if end_line is None:
            return self.lines.get((path, line), "unknown")
        if end_line > self.old_lines[path]:
            return "past-eof"  # already wrong at A (gen_store can write such ranges)
        if pair is None:
            return "valid"
        mapped = self._maps.get(path)
        if mapped is None:
            mapped = self._maps[path] = map_old_lines(self.old_lines[path], pair.hunks)[0]
        span = range(line, end_line + 1)
        if pair.new_path == path and all(mapped[n] == n for n in span):
            return "valid"
        return "changed"


# -- running the two tools ------------------------------------------------------


def timed(cmd: list[str], ok: tuple[int, ...], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+sys) of one whole process, stdout to /dev/null.

    CPU time is reported next to wall time because a shared machine's load
    makes wall time noisy; the process is single-threaded (git aside: its
    children's CPU is not counted, their wall time is).
    """
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        if code not in ok:
            err.seek(0)
            raise SystemExit(f"{cmd[0]} exited {code}: {err.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


@dataclass
class Timing:
    """Alternating runs of both tools on one state of the tree."""

    runs: dict[str, list[tuple[float, float]]]

    @property
    def median(self) -> dict[str, tuple[float, float]]:
        return {
            name: (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
            for name, runs in self.runs.items()
        }

    @property
    def speedup(self) -> float:
        return self.median["seed"][0] / self.median["ours"][0]

    @property
    def cpu_speedup(self) -> float:
        return self.median["seed"][1] / self.median["ours"][1]

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "median_wall_cpu": self.median,
            "speedup": self.speedup,
            "cpu_speedup": self.cpu_speedup,
        }


def time_both(ours_cmd: list[str], seed_cmd: list[str], env: dict[str, str], runs: int) -> Timing:
    timing = Timing({"ours": [], "seed": []})
    for _ in range(max(3, runs)):
        timing.runs["ours"].append(timed(ours_cmd, (0, 1), env))
        timing.runs["seed"].append(timed(seed_cmd, (0,), env))
    return timing


def ours_verdicts(
    cli: list[str], store: Path, repo: Path, env: dict[str, str]
) -> dict[str, list[dict[str, Any]]]:
    cmd = [*cli, "verify-all", "--dir", str(store), "--repo-root", str(repo), "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if done.returncode not in (0, 1):
        raise SystemExit(f"verify-all exited {done.returncode}: {done.stderr[-2000:]}")
    return {item["memory_id"]: item["citations"] for item in json.loads(done.stdout)}


def seed_verdicts(store: Path, repo: Path, out: Path) -> dict[str, list[dict[str, Any]]]:
    cmd = [sys.executable, str(BENCH / "seed_baseline.py"), "verify-all", "--dir", str(store)]
    cmd += ["--repo-root", str(repo), "--json", "--citations-json", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"seed baseline exited {done.returncode}: {done.stderr[-2000:]}")
    by_memory: dict[str, list[dict[str, Any]]] = {}
    for row in json.loads(out.read_text(encoding="utf-8")):
        memory = Path(row["file"]).relative_to(store).with_suffix("").as_posix()
        by_memory.setdefault(memory, []).append(row)
    warnings = [line for line in done.stdout.splitlines() if line.startswith("Warning:")]
    by_memory["\0warnings"] = [{"text": w} for w in warnings]
    return by_memory


def seed_status(row: dict[str, Any]) -> str:
    if row["valid"]:
        return "valid"
    return "missing" if (row["reason"] or "").startswith("File not found") else "stale"


# -- the comparison -------------------------------------------------------------


@dataclass
class Comparison:
    triples: Counter  # (seed, ours, truth) -> citations
    mangled: Counter  # same key, citations whose snippet the seed's row parser changed
    compared: int
    skipped_memories: int  # the seed could not read them (or read another table)
    seed_warnings: int
    valid_violations: list[tuple[str, dict[str, Any], dict[str, Any], str]]
    stale_violations: list[tuple[str, dict[str, Any], dict[str, Any], str]]


def compare(
    ours: dict[str, list[dict[str, Any]]],
    seed: dict[str, list[dict[str, Any]]],
    truth: Truth,
) -> Comparison:
    triples: Counter = Counter()
    mangled: Counter = Counter()
    skipped = compared = 0
    valid_bad, stale_bad = [], []
    for memory, checks in sorted(ours.items()):
        rows = seed.get(memory)
        if rows is None or len(rows) != len(checks):
            skipped += 1
            continue
        for check, row in zip(checks, rows, strict=True):
            if row["path"] != check["path"]:
                skipped += 1
                break
            compared += 1
            s, o = seed_status(row), check["status"]
            t = truth.of(check["path"], check["line"], check["end_line"])
            triples[(s, o, t)] += 1
            if row["snippet"] != check["snippet"]:
                mangled[(s, o, t)] += 1
            if s == "valid" and o != "valid":
                valid_bad.append((memory, row, check, t))
            flagged = s in ("stale", "missing") and t in ("stale", "missing")
            if flagged and o not in ("stale", "missing"):
                stale_bad.append((memory, row, check, t))
    warnings = len(seed.get("\0warnings", []))
    return Comparison(triples, mangled, compared, skipped, warnings, valid_bad, stale_bad)


def print_comparison(c: Comparison, show: int) -> None:
    print(
        f"\n## Verdicts: {c.compared} citations compared "
        f"({c.skipped_memories} memories skipped: the seed parsed a different table; "
        f"{c.seed_warnings} seed parse warnings)"
    )
    seed_valid = sum(n for (s, _o, _t), n in c.triples.items() if s == "valid")
    seed_valid_right = sum(
        n for (s, _o, t), n in c.triples.items() if s == "valid" and t == "valid"
    )
    seed_stale_right = sum(
        n
        for (s, _o, t), n in c.triples.items()
        if s in ("stale", "missing") and t in ("stale", "missing")
    )
    print(
        f"seed valid: {seed_valid} (truth valid {seed_valid_right}); ours not valid there: "
        f"{len(c.valid_violations)}"
        + (
            f" (of which truth valid: {sum(v[3] == 'valid' for v in c.valid_violations)})"
            if c.valid_violations
            else ""
        )
    )
    print(
        f"seed stale/missing and truth stale/missing: {seed_stale_right}; "
        f"ours not stale/missing there: {len(c.stale_violations)}"
    )
    print("\nseed verdict x ours x truth (citations):")
    print(f"  {'seed':<8} {'ours':<8} {'truth':<8} {'count':>7} {'mangled':>8}  note")
    for (s, o, t), n in sorted(c.triples.items(), key=lambda kv: (-kv[1], kv[0])):
        bad = c.mangled[(s, o, t)]
        print(f"  {s:<8} {o:<8} {t:<8} {n:>7} {bad:>8}  {_note(s, o, t)}")
    print("  (mangled: the seed's row parser read another snippet: a `|` or a backtick in it)")
    for title, rows in (
        ("seed valid, ours not valid", c.valid_violations),
        ("seed and truth stale, ours not", c.stale_violations),
    ):
        if rows:
            print(f"\n{title} (first {min(show, len(rows))} of {len(rows)}):")
            for memory, row, check, t in rows[:show]:
                print(
                    f"  {memory}: {check['path']}:{check['line']}"
                    + (f"-{check['end_line']}" if check["end_line"] else "")
                    + f" truth={t} ours={check['status']} ({check['reason']}) "
                    f"seed snippet `{row['snippet']}`"
                )


def _note(seed: str, ours: str, truth: str) -> str:
    if seed == ours == truth:
        return "all agree"
    if seed == "valid" and ours == "valid" and truth == "moved":
        return "both valid; git moved the cited copy, an identical line took its place"
    if seed == "valid" and ours == "valid":
        return "both valid; a range whose other lines changed (the snippet is its first line)"
    if seed == "stale" and ours == truth == "valid":
        return "seed false alarm: the line has runs of spaces (`x  # c`), the snippet one"
    if seed in ("stale", "missing") and truth == "moved" and ours == "moved":
        return "seed false alarm; ours relocates"
    if seed in ("stale", "missing") and truth in ("stale", "missing"):
        return "both flag it" if ours in ("stale", "missing") else "CHECK: ours misses it"
    if seed == "valid" and truth == "changed":
        return "range: the seed checks no line of a range"
    if truth == "past-eof":
        return "range ends past the end of the file at A (generator quirk)"
    if truth in ("unknown", "changed"):
        return "no single-line truth"
    return ""


# -- main -------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--citations", type=int, default=3, help="citations per memory")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each tool (>= 3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=10, help="violations to list")
    ap.add_argument("--keep", action="store_true", help="keep the temporary repo and store")
    ap.add_argument("--json-out", type=Path, help="write the figures as JSON")
    ap.add_argument("--cli", help="command to run instead of the venv's memory-enhancement")
    args = ap.parse_args(argv)
    cli = args.cli.split() if args.cli else default_cli()

    work = Path(tempfile.mkdtemp(prefix="verify-speed-"))
    repo, store = work / "repo", work / "store"
    try:
        t0 = time.perf_counter()
        shutil.copytree(default_source_tree(), repo, symlinks=True)
        old = rev_parse(repo, "HEAD")
        old_lines = {}
        for rel in git(repo, "ls-files", "-z").decode().split("\0"):
            if rel:
                data = (repo / rel).read_bytes().decode("utf-8", "replace")
                old_lines[rel] = len(_git_lines(data))
        generated = generate_store(
            store, args.memories, "serena", citations_per_memory=args.citations, seed=args.seed,
            source_tree=repo,
        )  # fmt: skip
        ours_cmd = [*cli, "verify-all", "--dir", str(store), "--repo-root", str(repo), "--json"]
        seed_cmd = [sys.executable, str(BENCH / "seed_baseline.py"), "verify-all"]
        seed_cmd += ["--dir", str(store), "--repo-root", str(repo), "--json"]
        # The tool's index and state go to a fresh MEMORY_ENHANCEMENT_HOME: the first
        # run starts from nothing (it builds the index), later runs find it warm.
        env = tool_env(work / "home")
        setup = time.perf_counter() - t0
        first = timed(ours_cmd, (0, 1), env)  # also the warm-up: page cache, .pyc files
        timed(seed_cmd, (0,), env)
        # Scenario 1: the code has not changed since the citations were written.
        unchanged = time_both(ours_cmd, seed_cmd, env, args.runs)
        # Scenario 2: commit B edits the tree; most of what follows is about it.
        t1 = time.perf_counter()
        edits = edit_tree(repo, args.seed)
        new = rev_parse(repo, "HEAD")
        truth = Truth(repo, old, new, old_lines)
        setup += time.perf_counter() - t1
        citations = args.memories * args.citations
        print(f"# verify-all speed: {args.memories} memories, {citations} citations")
        print(f"repo  {repo} ({len(old_lines)} files of {default_source_tree().name})")
        print(f"      A={old[:12]} -> B={new[:12]}: {edits}")
        print(f"store {store} (serena, generated in {generated.seconds:.1f} s)")
        print(f"tool  {tool_version(cli)}")
        print(f"setup {setup:.1f} s; python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
        timed(ours_cmd, (0, 1), env)  # warm-up after the edit (git history is new)
        timed(seed_cmd, (0,), env)
        edited = time_both(ours_cmd, seed_cmd, env, args.runs)
        load = os.getloadavg()[0]
        print(
            f"\n## Timing ({args.runs} runs each, alternating, after one warm-up each; "
            f"load average {load:.1f} on {os.cpu_count()} CPUs)"
        )
        print(f"  {'tool':<40} {'wall med':>9} {'min':>6} {'max':>6} {'CPU med':>8}   wall runs")
        for scenario, timing in (
            ("tree at A (all valid)", unchanged),
            ("tree at B (edited)", edited),
        ):
            print(f"  {scenario}:")
            for name, key in (
                ("memory-enhancement verify-all", "ours"),
                ("seed baseline (seed_baseline.py)", "seed"),
            ):
                walls = [r[0] for r in timing.runs[key]]
                wall, cpu = timing.median[key]
                print(
                    f"    {name:<38} {wall:>8.2f}s {min(walls):>5.2f}s {max(walls):>5.2f}s "
                    f"{cpu:>7.2f}s   " + " ".join(f"{w:.2f}" for w in walls)
                )
            verdict = "met" if timing.speedup >= SPEEDUP_TARGET else "MISSED"
            print(
                f"    speedup, median seed / median ours: wall {timing.speedup:.2f}x, "
                f"CPU {timing.cpu_speedup:.2f}x (target >= 3x: {verdict})"
            )
        print(
            f"  {'ours, first run (empty home, tree at A)':<40} {first[0]:>8.2f}s {'':>6} {'':>6} "
            f"{first[1]:>7.2f}s   (index built from the files; not in the medians)"
        )

        ours = ours_verdicts(cli, store, repo, env)
        seed = seed_verdicts(store, repo, work / "seed-citations.json")
        counts = Counter(c["status"] for checks in ours.values() for c in checks)
        print("\nours:  " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
        seed_counts = Counter(
            seed_status(r) for k, rows in seed.items() if k != "\0warnings" for r in rows
        )
        print("seed:  " + ", ".join(f"{k} {v}" for k, v in seed_counts.most_common()))
        comparison = compare(ours, seed, truth)
        print_comparison(comparison, args.show)
        if args.json_out:
            payload = {
                "memories": args.memories,
                "citations": citations,
                "ours_first": first,
                "unchanged": unchanged.as_dict(),
                "edited": edited.as_dict(),
                "load": load,
                "edits": edits.__dict__,
                "ours_counts": dict(counts),
                "seed_counts": dict(seed_counts),
                "triples": [[*k, v] for k, v in comparison.triples.items()],
                "valid_violations": len(comparison.valid_violations),
                "stale_violations": len(comparison.stale_violations),
            }
            args.json_out.parent.mkdir(parents=True, exist_ok=True)
            args.json_out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        return 0
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
