#!/usr/bin/env python3
"""A tiny git history whose memory mentions end in every verdict, with expected truth.

Why: real repositories give the common cases (moved, stale, valid) in bulk but
rarely the edge cases issue 17 names. This script builds, in a temporary folder
(never committed), a repository with ``.serena/memories/notes.md`` whose
mentions end up, after a few commits, as: valid, moved, renamed, stale, missing,
out_of_range (past the end when written, and the file grew since), ambiguous
bare name, a root file preferred over a deeper one, in a submodule, no such
file, a block move, an ambiguous move, a mention on a memory line not committed
yet (checked against the working tree), mentions glued to CJK, ``#L10-L20``
links, ``path:line:col``, ``path:L1,L2`` lists, blob URLs into this repository
and into another one, and a memory line written after the code moved.

The expected truth is derived from the edits the script makes (each source line
is unique, so the script knows where it went), not from git. ``--check`` then
runs build_truth.py on the result and compares, a self-test of the builder.

Usage:
    make_synthetic.py [--dir DIR] [--check]
Prints the repository path; writes DIR/expected.json (one object per mention).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_NAME = "acme/widget"


def sh(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="Synth",
        GIT_AUTHOR_EMAIL="s@example.invalid",
        GIT_COMMITTER_NAME="Synth",
        GIT_COMMITTER_EMAIL="s@example.invalid",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
    )
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def lines_of(name: str, n: int) -> list[str]:
    stem = name.replace("/", "_").replace(".", "_")
    return [f"{stem}_line_{i:03d} = {i}" for i in range(1, n + 1)]


class Repo:
    def __init__(self, root: Path):
        self.root = root
        self.files: dict[str, list[str]] = {}
        self.t = 0

    def write(self, path: str, content: list[str]) -> None:
        self.files[path] = list(content)
        p = self.root / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(content) + "\n", encoding="utf-8")

    def commit(self, msg: str) -> str:
        self.t += 1
        sh(self.root, "add", "-A")
        env_date = f"2026-01-{self.t:02d}T12:00:00+00:00"
        os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = env_date
        sh(self.root, "commit", "-q", "-m", msg)
        return sh(self.root, "rev-parse", "HEAD").strip()

    def where(self, path: str, text: str) -> int:
        """1-based line of a unique text in the current content of path."""
        hits = [i for i, t in enumerate(self.files[path], 1) if t == text]
        assert len(hits) == 1, (path, text, hits)
        return hits[0]


def build(root: Path) -> list[dict]:
    sh(root, "init", "-q", "-b", "main")
    sh(root, "remote", "add", "origin", f"https://github.com/{REPO_NAME}.git")
    r = Repo(root)
    # ---- commit 1: the code --------------------------------------------------
    for name, n in [
        ("src/app.py", 30),
        ("src/api.py", 30),
        ("lib/old_name.py", 20),
        ("src/gone.py", 10),
        ("pkg_a/util.py", 10),
        ("pkg_b/util.py", 10),
        ("src/cjk.py", 20),
        ("src/links.py", 30),
        ("src/tool.py", 12),
        ("app.py", 5),
        ("src/dup.py", 8),
    ]:
        r.write(name, lines_of(name, n))
    r.commit("code")
    # a submodule entry (gitlink) that is never checked out (an empty folder, as git leaves it)
    (root / "vendor/sub").mkdir(parents=True)
    sh(root, "update-index", "--add", "--cacheinfo", "160000," + "1" * 40 + ",vendor/sub")
    r.commit("submodule gitlink")

    snap = {p: list(c) for p, c in r.files.items()}  # the code as the memory saw it

    def then(path: str, n: int) -> str:
        return snap[path][n - 1]

    # ---- commit 3: the memory ------------------------------------------------
    memory = [
        "# Notes on the widget",
        "",
        "- valid: `src/api.py:5` is the api entry.",
        "- moved: see `src/app.py:10` for the setup.",
        "- renamed: `lib/old_name.py:7` holds the helper.",
        "- stale: `src/app.py:20` sets the flag.",
        "- missing: src/gone.py:3 is the old path.",
        "- out of range when written: `src/api.py:99`.",
        "- ambiguous bare name: `util.py:3`.",
        "- root file wins: `app.py:3`.",
        "- submodule: `vendor/sub/x.py:3`.",
        "- no such file: `src/nowhere.py:3`.",
        "- CJK: src/cjk.py:11以降は処理、ファイルsrc/cjk.py:13を参照。",
        "- link: [the handler](src/links.py#L10-L20) and [top](src/links.py#L3).",
        "- tool output: src/tool.py:7:5: warning: unused",
        "- list: `src/app.py:10,20` and range `src/api.py:8-9`.",
        f"- url: https://github.com/{REPO_NAME}/blob/main/src/app.py#L25 and "
        "https://github.com/other/thing/blob/main/x.py#L3",
        "- block move: `src/app.py:15` is the target.",
        "- ambiguous move: `src/dup.py:4`.",
    ]
    r.write(".serena/memories/notes.md", memory)
    r.commit("memory")

    # ---- commit 4: the code moves on -----------------------------------------
    app = r.files["src/app.py"]
    target = app[14]  # line 15, moved to the end
    app = ["# header 1", "# header 2", "# header 3", *app]
    app.remove(target)
    app[app.index(then("src/app.py", 20))] = "src_app_py_line_020 = 'changed'"
    app.append(target)
    r.write("src/app.py", app)
    r.write("src/api.py", r.files["src/api.py"] + [f"tail_{i:03d} = {i}" for i in range(100)])
    r.write("src/cjk.py", ["# 日本語 1", "# 日本語 2"] + r.files["src/cjk.py"])
    links = r.files["src/links.py"]
    r.write("src/links.py", links[:5] + [f"# inserted {i}" for i in range(5)] + links[5:])
    tool = r.files["src/tool.py"]
    r.write("src/tool.py", tool[:1] + tool[2:])  # delete line 2
    dup = r.files["src/dup.py"]
    d4 = dup[3]
    r.write("src/dup.py", dup[:3] + dup[4:6] + [d4] + dup[6:] + [d4])
    (root / "src/gone.py").unlink()
    del r.files["src/gone.py"]
    r.commit("refactor")
    sh(root, "mv", "lib/old_name.py", "lib/new_name.py")
    r.files["lib/new_name.py"] = r.files.pop("lib/old_name.py")
    r.commit("rename")

    # ---- commit 6: a memory line written after the move ----------------------
    memory.append("- written after the move: `src/app.py:13` (already current).")
    r.write(".serena/memories/notes.md", memory)
    r.commit("memory: later line")

    # ---- uncommitted memory lines (working tree only) --------------------------
    memory += ["- pending, not committed: `src/api.py:6` and `src/api.py:500`."]
    r.write(".serena/memories/notes.md", memory)

    W = r.where
    exp = [
        dict(mention="src/api.py:5", truth="valid", new_path="src/api.py", new_line=5),
        dict(
            mention="src/app.py:10",
            truth="moved",
            new_path="src/app.py",
            new_line=W("src/app.py", then("src/app.py", 10)),
        ),
        dict(mention="lib/old_name.py:7", truth="renamed", new_path="lib/new_name.py", new_line=7),
        dict(mention="src/app.py:20", truth="stale", new_path="src/app.py"),
        dict(mention="src/gone.py:3", truth="missing"),
        dict(mention="src/api.py:99", truth="out_of_range"),
        dict(mention="util.py:3", truth="ambiguous", candidates=["pkg_a/util.py", "pkg_b/util.py"]),
        dict(mention="app.py:3", truth="valid", new_path="app.py", new_line=3),
        dict(mention="vendor/sub/x.py:3", truth="in_submodule"),
        dict(mention="src/nowhere.py:3", truth="no_file"),
        dict(mention="src/cjk.py:11", truth="moved", new_path="src/cjk.py", new_line=13),
        dict(mention="src/cjk.py:13", truth="moved", new_path="src/cjk.py", new_line=15),
        dict(
            mention="src/links.py#L10-L20",
            truth="moved",
            new_path="src/links.py",
            new_line=15,
            new_end_line=25,
        ),
        dict(mention="src/links.py#L3", truth="valid", new_path="src/links.py", new_line=3),
        dict(mention="src/tool.py:7:5", truth="moved", new_path="src/tool.py", new_line=6),
        dict(
            mention="src/app.py:10",
            form="list_head",
            truth="moved",
            new_path="src/app.py",
            new_line=W("src/app.py", then("src/app.py", 10)),
            memory_line=16,
        ),
        dict(mention="20", form="list", truth="stale", new_path="src/app.py", memory_line=16),
        dict(
            mention="src/api.py:8-9",
            truth="valid",
            new_path="src/api.py",
            new_line=8,
            new_end_line=9,
        ),
        dict(
            mention=f"https://github.com/{REPO_NAME}/blob/main/src/app.py#L25",
            truth="moved",
            new_path="src/app.py",
            new_line=W("src/app.py", then("src/app.py", 25)),
        ),
        dict(mention="https://github.com/other/thing/blob/main/x.py#L3", truth="other_repo"),
        dict(
            mention="src/app.py:15",
            truth="moved",
            new_path="src/app.py",
            new_line=W("src/app.py", target),
            flags=["block_move"],
        ),
        dict(mention="src/dup.py:4", truth="ambiguous_move", flags=["exclude"]),
        dict(
            mention="src/app.py:13",
            truth="valid",
            new_path="src/app.py",
            new_line=13,
            memory_line=20,
        ),
        dict(
            mention="src/api.py:6",
            truth="valid",
            new_path="src/api.py",
            new_line=6,
            flags=["uncommitted_memory_line"],
        ),
        dict(mention="src/api.py:500", truth="out_of_range", flags=["uncommitted_memory_line"]),
    ]
    # the same text occurs twice in line 16 / elsewhere: pin those by memory line
    for e in exp:
        e.setdefault("memory_line", next(i for i, t in enumerate(memory, 1) if e["mention"] in t))
    return exp


def check(root: Path, exp: list[dict]) -> int:
    out = root / "truth.jsonl"
    subprocess.run(
        [
            sys.executable,
            str(HERE / "build_truth.py"),
            "--worktree",
            str(root),
            "--repo",
            REPO_NAME,
            "--out",
            str(out),
        ],
        check=True,
    )
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    bad = 0
    used: set[int] = set()
    for e in exp:
        cand = [
            i
            for i, r in enumerate(rows)
            if i not in used
            and r["memory_line"] == e["memory_line"]
            and (r["mention"] == e["mention"] or r["mention"].endswith(e["mention"]))
        ]
        if not cand:
            print(f"MISSING ROW  {e['mention']!r} (memory line {e['memory_line']})")
            bad += 1
            continue
        i = cand[0]
        used.add(i)
        r = rows[i]
        diffs = [
            k
            for k in ("truth", "new_path", "new_line", "new_end_line", "candidates")
            if k in e and r.get(k) != e[k]
        ]
        diffs += [f"flag {f}" for f in e.get("flags", []) if f not in r["flags"]]
        status = "ok " if not diffs else "BAD"
        bad += bool(diffs)
        print(
            f"{status} {e['mention'][:50]:50} expected {e['truth']:14} got {r['truth']:14}"
            + (
                f"  {diffs} got={[r.get(k) for k in ('new_path', 'new_line', 'new_end_line')]}"
                if diffs
                else ""
            )
        )
    extra = [r for i, r in enumerate(rows) if i not in used]
    for r in extra:
        print(f"EXTRA ROW    {r['mention']!r} line {r['memory_line']} -> {r['truth']}")
    print(f"{len(exp) - bad}/{len(exp)} expected rows match; {len(extra)} unexpected rows")
    return 1 if bad or extra else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, help="where to build (default: a new temp folder)")
    ap.add_argument("--check", action="store_true", help="run build_truth.py and compare")
    a = ap.parse_args()
    root = a.dir or Path(tempfile.mkdtemp(prefix="mentions-synth-"))
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        ap.error(f"{root} is not empty")
    exp = build(root)
    (root / "expected.json").write_text(
        json.dumps(exp, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    print(root)
    return check(root, exp) if a.check else 0


if __name__ == "__main__":
    sys.exit(main())
