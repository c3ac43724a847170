"""Issue 15: every command at the floor. All its figures, side by side with a baseline, in one run.

    .venv/bin/python bench/bench_issue15.py --baseline OTHER/src [--runs 7]
        [--sizes 10000,50000] [--repo PATH] [--long-repo PATH] [--state-runs 100]
        [--only verify,bulk,toolwrite,state,git,reads,serve] [--json-out FILE]

What is measured (CPU time: user + system of the process and of the children it
waited for, git included; medians; every case of a table alternated run by run):

- **verify-all, warm**: `verify-all --json > /dev/null` of a serena store of N
  memories with 3 citations each (`gen_store.py`, seed 0, citing a working copy of
  rjmurillo/ai-agents, 2,624 commits), with this checkout's `src/` ("current"), the
  baseline's, the seed's algorithm (`seed_baseline.py`) and the read floor
  (`read_floor.py`: read every memory file and every cited file once).
- **after a bulk write**: every memory file rewritten with the same bytes through a
  temporary file and a rename (as a checkout or an editor does), then the first
  `verify-all`, then a second one: each against a warm run.
- **after a bulk write through the tool**: `verify-all --write` (every memory file
  rewritten with its confidence and Last Verified), its own cost, then the first and
  the second `verify-all` after it, against warm runs; each version on its own copy.
- **max RSS** of verify-all (from the warm runs).
- **state database growth**: a fresh tool home, `verify-all` of the 10k store run
  100 times with nothing changed; the state file (with its WAL) after 10 and after 100.
- **git time per run**: one `verify-all` in a driver process that reports the CPU
  of its git children (`RUSAGE_CHILDREN`), on the 2,624-commit copy and on a copy
  whose history is 18,000 synthetic commits longer (older commits grafted under the
  real root with `git replace --graft`; the working tree is the same).
- **reads**: `get`, `related`, `graph --depth 3`, `search` (lexical), `list --limit 20`
  on the 10k store, against `python -c pass` and the seed's graph scan
  (`seed_graph.py`) as processes.
- **serve**: process start to the `initialize` answer over stdio (CPU of the server
  process when the answer arrives, from /proc), and `python -c 'import
  mcp.server.mcpserver'` (the SDK's own import) for the split.

The repository copies are made from the mirror (`--mirror`, a bare git directory)
under `bench/.cache/repos/` once; blobs the mirror lacks (large files it was
fetched without) are left out of the working tree with a sparse checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from gen_store import CACHE_DIR, cached_store  # noqa: E402

MIRROR = Path("/work/.mirror/rjmurillo+ai-agents/repo")
PYTHON = sys.executable
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench_issue15", "version": "0"},
    },
}


# -- repositories ----------------------------------------------------------------------------


def git(*args: str, cwd: Path, stdin: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, input=stdin, capture_output=True, check=True
    )  # fmt: skip
    return done.stdout.decode()


def working_copy(mirror: Path, dest: Path) -> Path:
    """A working clone of the mirror, without the blobs the mirror does not hold."""
    if (dest / ".git").is_dir():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    git("clone", "-q", "--no-checkout", str(mirror), str(dest), cwd=dest.parent)
    listing = git("ls-tree", "-r", "HEAD", cwd=dest)
    entries = [line.split("\t", 1) for line in listing.splitlines() if "\t" in line]
    shas = "\n".join(meta.split()[2] for meta, _ in entries) + "\n"
    checked = git("cat-file", "--batch-check", cwd=dest, stdin=shas.encode()).splitlines()
    absent = {line.split()[0] for line in checked if line.endswith(" missing")}
    patterns = ["/*"] + [f"!/{path}" for meta, path in entries if meta.split()[2] in absent]
    git("sparse-checkout", "set", "--no-cone", *patterns, cwd=dest)
    git("checkout", "-q", cwd=dest)
    return dest


def long_copy(repo: Path, dest: Path, extra: int) -> Path:
    """A copy of repo whose history has `extra` older commits (grafted under its root)."""
    if (dest / ".git").is_dir():
        return dest
    working_copy(repo, dest)
    root = git("rev-list", "--max-parents=0", "HEAD", cwd=dest).split()[0]
    first, last = 1420070400, 1577750400  # 2015-01-01 .. 2019-12-31: older than the real root
    stream = []
    for n in range(extra):
        moment = first + (last - first) * n // extra
        data = f"synthetic history line {n}\n".encode()
        message = f"synthetic commit {n}\n".encode()
        stream.append(b"commit refs/heads/synthetic\n" + f"mark :{n + 1}\n".encode())
        who = f"bench <bench@example.invalid> {moment} +0000\n"
        stream.append(f"author {who}committer {who}".encode())
        stream.append(f"data {len(message)}\n".encode() + message)
        if n:
            stream.append(f"from :{n}\n".encode())
        stream.append(f"M 100644 inline synthetic/file{n % 50}.txt\n".encode())
        stream.append(f"data {len(data)}\n".encode() + data + b"\n")
    git("fast-import", "--quiet", cwd=dest, stdin=b"".join(stream))
    git("replace", "--graft", root, "synthetic", cwd=dest)
    return dest


def commits(repo: Path) -> int:
    return int(git("rev-list", "--count", "HEAD", cwd=repo).strip())


# -- timing ----------------------------------------------------------------------------------


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds of the process and its waited-for children, max RSS in MB).

    The RSS comes from `/usr/bin/time` (a small process in between): a child forked
    from this big benchmark process would report this process's pages as its own
    peak. Its own CPU (about a millisecond) is in every figure alike.
    """
    with tempfile.NamedTemporaryFile() as err, tempfile.NamedTemporaryFile("r") as peak:
        timed = ["/usr/bin/time", "-f", "%M", "-o", peak.name, *cmd]
        proc = subprocess.Popen(timed, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed: {err.read().decode()[-2000:]}")
        kilobytes = int(peak.read().split()[-1])
    return usage.ru_utime + usage.ru_stime, kilobytes / 1024


def alternate(
    cases: dict[str, tuple[list[str], dict[str, str]]],
    runs: int,
    before: Callable[[str], None] | None = None,
) -> dict[str, dict[str, float]]:
    """Each case once untimed, then `runs` rounds of all cases; medians of CPU and RSS."""
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    rss: dict[str, list[float]] = {name: [] for name in cases}
    for cmd, env in cases.values():
        run_once(cmd, env)
    for _ in range(runs):
        for name, (cmd, env) in cases.items():
            if before is not None:
                before(name)
            seconds, mb = run_once(cmd, env)
            cpu[name].append(seconds)
            rss[name].append(mb)
    return {
        name: {
            "cpu_ms": statistics.median(cpu[name]) * 1000,
            "min_ms": min(cpu[name]) * 1000,
            "rss_mb": max(rss[name]),
        }
        for name in cases
    }


def version_env(src: Path, home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(src),
        "MEMORY_ENHANCEMENT_HOME": str(home),
        "MEMORY_ENHANCEMENT_SESSION": "bench",
    }


def tool(src: Path, home: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    return [PYTHON, "-m", "memory_enhancement", *args], version_env(src, home)


# -- the measurements ------------------------------------------------------------------------


def bench_verify(
    versions: dict[str, Path], homes: dict[str, Path], store: Path, repo: Path, runs: int
) -> dict[str, dict[str, float]]:
    where = ["--dir", str(store), "--repo-root", str(repo)]
    cases = {
        name: tool(src, homes[name], "verify-all", *where, "--json")
        for name, src in versions.items()
    }
    # Every cited file read and judged again, as on a first run or after a new commit
    # (the plain run takes an unchanged file's verdicts from the last one).
    cases["current --recheck"] = tool(
        versions["current"], homes["current"], "verify-all", *where, "--json", "--recheck"
    )
    plain = {**os.environ}
    cases["seed"] = (
        [PYTHON, str(BENCH / "seed_baseline.py"), "verify-all", *where, "--json"],
        plain,
    )
    cases["floor"] = ([PYTHON, str(BENCH / "read_floor.py"), *where], plain)
    return alternate(cases, runs)


def rewrite_all(store: Path) -> int:
    """Every memory file rewritten with its own bytes, through a temporary file and a rename."""
    count = 0
    for folder, dirs, names in os.walk(store):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.endswith(".md"):
                path = os.path.join(folder, name)
                with open(path, "rb") as handle:
                    data = handle.read()
                temporary = path + ".bench-tmp"
                with open(temporary, "wb") as handle:
                    handle.write(data)
                os.replace(temporary, path)
                count += 1
    return count


def bench_bulk(
    versions: dict[str, Path], homes: dict[str, Path], store: Path, repo: Path, runs: int
) -> dict[str, dict[str, float]]:
    """Per version: the first run after a bulk write, the second one, and warm runs."""
    where = ["--dir", str(store), "--repo-root", str(repo)]
    out: dict[str, dict[str, float]] = {}
    firsts: dict[str, list[float]] = {name: [] for name in versions}
    seconds: dict[str, list[float]] = {name: [] for name in versions}
    warms: dict[str, list[float]] = {name: [] for name in versions}
    for name, src in versions.items():
        run_once(*tool(src, homes[name], "verify-all", *where, "--json"))
    commands = {
        name: tool(src, homes[name], "verify-all", *where, "--json")
        for name, src in versions.items()
    }
    for _ in range(runs):
        # One write for every version (each has its own index, so each sees it first).
        for _ in range(2):
            for name, (cmd, env) in commands.items():
                warms[name].append(run_once(cmd, env)[0])
        rewrite_all(store)
        time.sleep(1.0)  # the runs come a moment after the write, as they would
        for name, (cmd, env) in commands.items():
            firsts[name].append(run_once(cmd, env)[0])
        for name, (cmd, env) in commands.items():
            seconds[name].append(run_once(cmd, env)[0])
    for name in versions:
        warm = statistics.median(warms[name])
        out[name] = {
            "warm_ms": warm * 1000,
            "first_ms": statistics.median(firsts[name]) * 1000,
            "second_ms": statistics.median(seconds[name]) * 1000,
        }
    return out


def bench_tool_write(
    versions: dict[str, Path], store: Path, repo: Path, runs: int, work: Path
) -> dict[str, dict[str, float]]:
    """Per version, on its own copy of the store: `verify-all --write` (the tool rewrites
    every memory file, recording confidence and Last Verified), then the first and the
    second `verify-all` after it, against warm runs."""
    cases: dict[str, dict[str, tuple[list[str], dict[str, str]]]] = {}
    for name, src in versions.items():
        # Per store and version: a copy named by version alone was the first size's, so
        # the 50k figures of a run with both sizes were the 10k store's (found in session 29).
        copy = work / f"toolwrite-{store.name}-{name}"
        if not copy.exists():
            shutil.copytree(store, copy)
        home = work / f"toolwrite-home-{store.name}-{name}"
        where = ["--dir", str(copy), "--repo-root", str(repo)]
        cases[name] = {
            "plain": tool(src, home, "verify-all", *where, "--json"),
            "write": tool(src, home, "verify-all", *where, "--write"),
        }
        run_once(*cases[name]["plain"])
    times: dict[str, dict[str, list[float]]] = {
        name: {"warm": [], "write": [], "first": [], "second": []} for name in versions
    }
    for _ in range(runs):
        for name in versions:
            for _ in range(2):
                times[name]["warm"].append(run_once(*cases[name]["plain"])[0])
        for name in versions:
            times[name]["write"].append(run_once(*cases[name]["write"])[0])
        time.sleep(1.0)
        for name in versions:
            times[name]["first"].append(run_once(*cases[name]["plain"])[0])
        for name in versions:
            times[name]["second"].append(run_once(*cases[name]["plain"])[0])
    return {
        name: {f"{kind}_ms": statistics.median(values) * 1000 for kind, values in kinds.items()}
        for name, kinds in times.items()
    }


def state_size(home: Path) -> int:
    return sum(
        f.stat().st_size for f in (home / "data" / "state").glob("*.db*") if f.is_file()
    )  # fmt: skip


def bench_state(
    versions: dict[str, Path], store: Path, repo: Path, total: int, work: Path
) -> dict[str, dict[str, float]]:
    """Size of the state database after 10 and after `total` runs of an unchanged store."""
    where = ["--dir", str(store), "--repo-root", str(repo)]
    out = {}
    for name, src in versions.items():
        runs = total if name == "current" else min(total, 30)  # the baseline grows: 30 tell
        home = work / f"state-{name}"
        cmd, env = tool(src, home, "verify-all", *where, "--json")
        sizes = {}
        for n in range(1, runs + 1):
            run_once(cmd, env)
            if n in (10, runs):
                sizes[n] = state_size(home)
        out[name] = {"after_10": sizes[10], "after_last": sizes[runs], "runs": runs}
    return out


DRIVER = """
import resource, sys
from pathlib import Path
from memory_enhancement.cli.app import App
app = App()
app.options = {"dir": sys.argv[1], "repo_root": sys.argv[2]}
service = app.service()
if sys.argv[3:] == ["--recheck"]:  # every file judged, with git's history (not recalled)
    from memory_enhancement.core.verdicts import VerifyOptions
    service.verify_all(options=VerifyOptions(recheck=True))
else:
    service.verify_all()
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
calls = service.git.calls if service.git is not None else 0
print(usage.ru_utime + usage.ru_stime, calls)
"""


def bench_git(
    versions: dict[str, Path], store: Path, repos: dict[str, Path], runs: int, work: Path
) -> dict[str, dict[str, float]]:
    """CPU of git per verify-all run (the driver's waited-for children), per repository."""
    out: dict[str, dict[str, float]] = {}
    variants = [(name, src, []) for name, src in versions.items()]
    variants.append(("current --recheck", versions["current"], ["--recheck"]))
    for name, src, extra in variants:
        for label, repo in repos.items():
            env = version_env(src, work / f"git-{name}-{label}")
            cmd = [PYTHON, "-c", DRIVER, str(store), str(repo), *extra]
            samples = []
            calls = 0.0
            for n in range(runs + 1):
                done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
                seconds, count = done.stdout.split()
                if n:  # the first builds the index
                    samples.append(float(seconds))
                    calls = float(count)
            out[f"{name} {label}"] = {
                "git_ms": statistics.median(samples) * 1000,
                "git_calls": calls,
            }
    return out


def bench_reads(
    versions: dict[str, Path],
    homes: dict[str, Path],
    store: Path,
    repo: Path,
    runs: int,
    memory: str,
) -> dict[str, dict[str, float]]:
    """`memory`: a live one (`get` refuses an expired memory) from the middle of the store."""
    where = ["--dir", str(store), "--repo-root", str(repo)]
    commands = {
        "get": ["get", memory],
        "related": ["related", memory],
        "graph --depth 3": ["graph", memory, "--depth", "3"],
        "search": ["search", "redis stale cache"],
        "list --limit 20": ["list", "--limit", "20"],
    }
    cases: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c pass": ([PYTHON, "-c", "pass"], {**os.environ}),
    }
    for label, args in commands.items():
        for name, src in versions.items():
            given = args
            if name == "baseline" and label == "list --limit 20":
                given = ["list"]  # the baseline has no --limit
            cases[f"{label}: {name}"] = tool(src, homes[name], *given, *where)
    seed = [PYTHON, str(BENCH / "seed_graph.py")]
    cases["graph --depth 3: seed scan"] = (
        [*seed, "graph", memory, "--dir", str(store), "--depth", "3"],
        {**os.environ},
    )
    cases["related: seed scan"] = ([*seed, "related", memory, "--dir", str(store)], {**os.environ})
    return alternate(cases, runs)


def _serve_cpu(cmd: list[str], env: dict[str, str]) -> float:
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        assert answer.get("id") == 1 and "result" in answer, answer
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def bench_serve(
    versions: dict[str, Path], homes: dict[str, Path], store: Path, repo: Path, runs: int
) -> dict[str, dict[str, float]]:
    where = ["--dir", str(store), "--repo-root", str(repo)]
    samples: dict[str, list[float]] = {f"serve: {name}": [] for name in versions}
    samples["import mcp.server.mcpserver"] = []
    samples["python -c pass"] = []
    for _ in range(runs + 1):
        for name, src in versions.items():
            cmd, env = tool(src, homes[name], "serve", *where)
            samples[f"serve: {name}"].append(_serve_cpu(cmd, env))
        sdk = run_once([PYTHON, "-c", "import mcp.server.mcpserver"], {**os.environ})[0]
        samples["import mcp.server.mcpserver"].append(sdk * 1000)
        samples["python -c pass"].append(run_once([PYTHON, "-c", "pass"], {**os.environ})[0] * 1000)
    out = {name: {"cpu_ms": statistics.median(values[1:])} for name, values in samples.items()}
    # In one process: the SDK's import, then ours (the CLI, the server module, the server
    # built, the store located), as `serve` does them before it reads `initialize`.
    for name, src in versions.items():
        env = version_env(src, homes[name])
        sdk, ours = [], []
        for _ in range(runs + 1):
            done = subprocess.run(
                [PYTHON, "-c", SPLIT, str(store)], env=env, capture_output=True, text=True,
                check=True,
            )  # fmt: skip
            first, second = done.stdout.split()
            sdk.append(float(first))
            ours.append(float(second))
        out[f"in-process split: {name}"] = {
            "sdk_import_ms": statistics.median(sdk[1:]),
            "ours_ms": statistics.median(ours[1:]),
        }
    return out


SPLIT = """
import sys, time
start = time.process_time()
import mcp.server.mcpserver, mcp.types, pydantic
sdk = time.process_time()
from memory_enhancement.cli import cli
from memory_enhancement.cli.app import App
import memory_enhancement.cli.serve_cmds
from memory_enhancement.mcp.server import build_server
app = App()
app.options = {"dir": sys.argv[1]}
app.location()
build_server(app.service_for)
done = time.process_time()
print((sdk - start) * 1000, (done - sdk) * 1000)
"""


# -- main ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the baseline's src/")
    parser.add_argument("--mirror", type=Path, default=MIRROR)
    parser.add_argument("--repo", type=Path, help="working copy (default: made from --mirror)")
    parser.add_argument("--long-repo", type=Path, help="its copy with a long history")
    parser.add_argument("--long-commits", type=int, default=18_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--state-runs", type=int, default=100)
    parser.add_argument("--only", default="verify,bulk,toolwrite,state,git,reads,serve")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    repos_dir = CACHE_DIR / "repos"
    repo = (args.repo or working_copy(args.mirror, repos_dir / "ai-agents")).resolve()
    versions = {"baseline": args.baseline.resolve(), "current": ROOT / "src"}
    sizes = [int(s) for s in args.sizes.split(",")]
    report: dict[str, Any] = {
        "repo": str(repo),
        "commits": commits(repo),
        "head": git("rev-parse", "--short", "HEAD", cwd=repo).strip(),
        "current": git("rev-parse", "--short", "HEAD", cwd=ROOT).strip(),
        "baseline": str(args.baseline),
        "load_before": os.getloadavg(),
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    print(json.dumps(report))
    with tempfile.TemporaryDirectory(prefix="bench15-") as tmp:
        work = Path(tmp)
        for size in sizes:
            gen = cached_store(size, "serena", source_tree=repo)
            store = work / f"store-{size}"
            shutil.copytree(gen.root, store, ignore=shutil.ignore_patterns(".gen-store.json"))
            homes = {name: work / f"home-{name}-{size}" for name in versions}
            runs = args.runs if size <= 10_000 else max(3, args.runs // 2)
            if "verify" in only:
                report[f"verify {size}"] = bench_verify(versions, homes, store, repo, runs)
                print(f"verify {size}", json.dumps(report[f"verify {size}"]), flush=True)
            if "bulk" in only:
                report[f"bulk {size}"] = bench_bulk(versions, homes, store, repo, max(3, runs // 2))
                print(f"bulk {size}", json.dumps(report[f"bulk {size}"]), flush=True)
            if "toolwrite" in only:
                found = bench_tool_write(versions, store, repo, max(3, runs // 2), work)
                report[f"toolwrite {size}"] = found
                print(f"toolwrite {size}", json.dumps(found), flush=True)
            if size != sizes[0]:
                continue
            if "state" in only:
                report["state"] = bench_state(versions, store, repo, args.state_runs, work)
                print("state", json.dumps(report["state"]), flush=True)
            if "git" in only:
                long = (
                    args.long_repo
                    or long_copy(repo, repos_dir / "ai-agents-long", args.long_commits)
                ).resolve()
                repos = {f"{commits(repo)} commits": repo, f"{commits(long)} commits": long}
                report["git"] = bench_git(versions, store, repos, args.runs, work)
                print("git", json.dumps(report["git"]), flush=True)
            if "reads" in only:
                live = gen.live_paths()
                middle = live[len(live) // 2]
                report["reads"] = bench_reads(versions, homes, store, repo, args.runs * 2, middle)
                print("reads", json.dumps(report["reads"]), flush=True)
            if "serve" in only:
                report["serve"] = bench_serve(versions, homes, store, repo, args.runs)
                print("serve", json.dumps(report["serve"]), flush=True)
    report["load_after"] = os.getloadavg()
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps({"load_after": report["load_after"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
