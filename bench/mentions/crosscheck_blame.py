#!/usr/bin/env python3
"""Cross-check the truth files with a second git algorithm: ``git blame --reverse``.

Why: build_truth.py labels a cited line by one direct ``git diff`` from the
memory's commit C to now. ``git blame --reverse C..now`` instead walks the
history commit by commit and says in which commit each line of C was last seen.
A line the direct diff keeps (valid/moved/renamed) should be last seen at now; a
line it drops (stale, or moved only as a block move) should not. Disagreements
are the cases where the two views of history differ (a line deleted and later
re-added identically, a block move that blame sees as kept); they are listed for
reading, not "fixed".

Usage: crosscheck_blame.py [--out disagreements.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import build_truth as bt  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    entries = {e["repo"]: e for e in bt.load_repos()}
    table: collections.Counter = collections.Counter()
    dis = []
    for f in sorted((HERE / "truth").glob("*.jsonl")):
        rows = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]
        if not rows:
            continue
        e = entries[rows[0]["repo"]]
        b = bt.Builder(bt.Git(git_dir=bt.git_dir_for(e)), e["repo"], e["commit"], None)
        for r in rows:
            if r["truth"] not in ("valid", "moved", "renamed", "stale"):
                continue
            seen = "kept" if b.history_kept(r) else "gone"
            kept_by_diff = r["truth"] != "stale" and "block_move" not in r["flags"]
            table[(r["truth"] + ("+block_move" if "block_move" in r["flags"] else ""), seen)] += 1
            if kept_by_diff != (seen == "kept"):
                dis.append(dict(r, blame_reverse=seen))
    n = sum(table.values())
    print(f"{n} rows checked; {n - len(dis)} agree, {len(dis)} disagree")
    for (truth, seen), k in sorted(table.items()):
        print(f"  {truth:22} blame says {seen:5} {k}")
    for r in dis:
        print(
            f"  {r['repo']} {r['memory_file'].rsplit('/', 1)[-1]}:{r['memory_line']} "
            f"{r['resolved_path']}:{r['line']} truth={r['truth']} "
            f"blame_reverse={r['blame_reverse']}"
        )
    if a.out:
        a.out.write_text(json.dumps(dis, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
