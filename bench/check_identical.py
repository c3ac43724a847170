"""Issue 15's behaviour check: two versions print byte-identical JSON on the shared corpus.

    .venv/bin/python bench/check_identical.py --baseline OTHER/src [--repo-root REPO]

Runs `verify-all`, `search` (lexical), `graph --depth 3`, `related`, `list` and `get`,
each with `--json`, with the baseline's `src/` and with this checkout's, on a
copy of `corpus/ai-agents-memories/` (1,026 real memories), each version with
its own fresh `MEMORY_ENHANCEMENT_HOME` (so each builds its own index), and
compares the outputs byte for byte. `verify-all` cites files of the repository
the corpus came from (rjmurillo/ai-agents): pass a working copy of it as
`--repo-root` (without one, every citation is missing, which still compares
the rest). Exit code 0 when every output is identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus" / "ai-agents-memories"

# (name, arguments after the store options); paths are real memories of the corpus.
COMMANDS = [
    ("verify-all", ["verify-all", "--json"]),
    ("search", ["search", "git worktree merge conflict", "--json", "--limit", "20"]),
    ("search-ja", ["search", "セッション プロトコル", "--json"]),
    ("graph", ["graph", "memory-index", "--depth", "3", "--json"]),
    ("related", ["related", "memory-index", "--json"]),
    ("list", ["list", "--json"]),
    ("get", ["get", "memory-index", "--json"]),
    ("get-text", ["get", "memory-index"]),
]


def run(src: Path, home: Path, store: Path, repo: Path, args: list[str]) -> bytes:
    env = {"PYTHONPATH": str(src), "MEMORY_ENHANCEMENT_HOME": str(home), "PATH": "/usr/bin:/bin"}
    cmd = [sys.executable, "-m", "memory_enhancement", *args]
    cmd += ["--dir", str(store), "--repo-root", str(repo)]
    done = subprocess.run(cmd, capture_output=True, env=env, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed ({src}): {done.stderr.decode()[-2000:]}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the other version's src/")
    parser.add_argument("--repo-root", type=Path, help="a working copy of rjmurillo/ai-agents")
    parser.add_argument(
        "--store",
        type=Path,
        action="append",
        default=[],
        help="also compare verify-all --json on this store (e.g. a generated one citing "
        "--repo-root); repeatable",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="identical-") as tmp:
        work = Path(tmp)
        store = work / "store"
        shutil.copytree(CORPUS, store)
        repo = args.repo_root or work
        different = 0
        for name, command in COMMANDS:
            outputs = []
            for label, src in (("baseline", args.baseline), ("current", ROOT / "src")):
                outputs.append(run(src, work / f"home-{label}", store, repo, command))
            same = outputs[0] == outputs[1]
            different += not same
            size = len(outputs[1])
            print(f"{name:<11} {'identical' if same else 'DIFFERENT'} ({size:,} bytes)")
        for extra in args.store:
            outputs = [
                run(src, work / f"home-{label}", extra, repo, ["verify-all", "--json"])
                for label, src in (("baseline", args.baseline), ("current", ROOT / "src"))
            ]
            same = outputs[0] == outputs[1]
            different += not same
            state = "identical" if same else "DIFFERENT"
            print(f"verify-all {extra.name}: {state} ({len(outputs[1]):,} bytes)")
    return 1 if different else 0


if __name__ == "__main__":
    raise SystemExit(main())
