#!/usr/bin/env python3
"""Score our mention verification against the truth built from git's own diff.

For each repository of repos.yaml (a split at a time: tune on `dev` and
`corpus`, score `test` last and report it apart), this makes a work tree of the
fetched mirror at the truth commit (`git clone --shared`, so the mirror itself
is never written to; origin set to the GitHub URL, as a user's clone has it),
runs `memory-enhancement verify-all --json` on its `.serena/memories` as a whole
process, and compares each mention's verdict with the truth row at the same
place (memory file, line, column).

Figures (issue 17's targets):

- coverage: mentions our grammar detects that get a verdict other than
  `unchecked` (and that are verified at all: a memory file the tool cannot read
  counts against it);
- stale precision and recall, over truth rows labelled valid, moved, renamed or
  stale (rows flagged `exclude` or `history_disagrees` dropped, as README.md
  says), also without whitespace-only and trivial-line rows;
- moved relocated to the exact line: truth moved/renamed rows on which the tool
  says moved to the same file and line;
- the confusion of truth labels and our labels, and how many truth rows our
  grammar detects at all.
- the same figures for the rows whose line numbers are given in words (flag
  `in_words`, matched on memory line + cited file name and lines when the column
  differs) apart: `in_words`, and `not_in_words_judged` for the others.

Usage:
    score.py [--split dev|test|corpus|holdout24|holdout31|all] [--only OWNER/NAME ...]
             [--json-out FILE] [--work DIR] [--show-disagreements]
    score.py --synthetic     # make_synthetic.py's history: every edge case, truth by design
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
STORE = ".serena/memories"
JUDGED = ("valid", "moved", "renamed", "stale")
NOISY = ("whitespace_only_change", "whitespace_only_readded", "trivial_line")


def work_tree(entry: dict[str, Any], work: Path) -> Path:
    """A clone of the mirror at the truth commit (made once, reused when already there)."""
    owner_name = entry["repo"]
    mirror = entry.get("git_dir_hint") or f"/work/.mirror/{owner_name.replace('/', '+')}/repo"
    target = work / owner_name.replace("/", "+")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str, check: bool = True) -> str:
        done = subprocess.run(
            ["git", "-C", str(target), *args], capture_output=True, text=True, env=env
        )
        if check and done.returncode != 0:
            raise SystemExit(f"git {' '.join(args)} failed in {target}: {done.stderr.strip()}")
        return done.stdout

    if not (target / ".git").exists():
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", mirror, str(target)],
            check=True,
            env=env,
        )
    index = target / ".git" / "index"
    if not index.exists() or git("rev-parse", "HEAD", check=False).strip() != entry["commit"]:
        # Objects the snapshot lacks (large files) leave those files out of the tree;
        # the checkout still succeeds for everything else.
        git("checkout", "-q", "--force", entry["commit"], check=False)
    git("remote", "set-url", "origin", f"https://github.com/{owner_name}.git")
    return target


def run_tool(tree: Path, home: Path) -> tuple[list[dict[str, Any]], float]:
    """`verify-all --json` over the tree's Serena store, as a whole process."""
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(home),
        "XDG_CACHE_HOME": str(home),
        "PYTHONPATH": str(ROOT / "src"),
    }
    started = os.times()
    done = subprocess.run(
        [sys.executable, "-P", "-m", "memory_enhancement", "verify-all", "--json", "--dir", STORE],
        cwd=tree,
        capture_output=True,
        text=True,
        env=env,
    )
    ended = os.times()
    cpu = (ended.children_user - started.children_user) + (
        ended.children_system - started.children_system
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"verify-all failed in {tree}: {done.stderr.strip()}")
    return json.loads(done.stdout), cpu


def tool_label(check: dict[str, Any]) -> str:
    status = check["status"]
    if status == "moved" and check.get("renamed_to"):
        return "renamed"
    if status == "missing" and check.get("snippet") is None and not check.get("renamed_to"):
        return "no_file"  # no such file when the memory line was written (nor now)
    if status == "skipped":
        return "other_repo"
    return str(status)


def score_repo(entry: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    truth_file = HERE / "truth" / (entry["repo"].replace("/", "__") + ".jsonl")
    truth = [json.loads(line) for line in truth_file.read_text(encoding="utf-8").splitlines()]
    ours: dict[tuple[str, int, int], dict[str, Any]] = {}
    unreadable = 0
    for result in results:
        if result.get("unreadable"):
            unreadable += 1
            continue
        for check in result.get("mentions", []):
            key = (f"{STORE}/{result['memory_id']}.md", check["memory_line"], check["column"])
            ours[key] = check
    rows = []
    used = set()
    for row in truth:
        key = (row["memory_file"], row["memory_line"], row["col"])
        check = ours.get(key)
        if check is None and "in_words" in row["flags"]:
            # Line numbers in words: where the tool puts the column is its own choice
            # (the path, the word, a list item); match on the cited path and lines instead.
            check, key = _same_citation(row, ours, used)
        if check is not None:
            used.add(key)
        rows.append((row, check))
    # Ours that no truth row pairs with: forms the truth's own pattern does not read
    # (a `**Line:** 12` label under its file's label); listed for checking by hand.
    extra = [
        {"memory": k[0], "line": k[1], "path": c.get("path"), "text": c.get("text"),
         "status": c["status"], "reason": c.get("reason")}
        for k, c in ours.items() if k not in used
    ]  # fmt: skip
    return {"rows": rows, "ours": ours, "unreadable": unreadable, "extra": extra}


def _same_citation(
    row: dict[str, Any], ours: dict[tuple[str, int, int], dict[str, Any]], used: set
) -> tuple[dict[str, Any] | None, Any]:
    """Our mention on the same memory line citing the same file name and lines."""
    name = row["path_as_written"].rsplit("/", 1)[-1]
    for key, check in ours.items():
        if key in used or key[:2] != (row["memory_file"], row["memory_line"]):
            continue
        end = check.get("end_line")
        if (
            str(check.get("path", "")).rsplit("/", 1)[-1] == name
            and check.get("line") == row["line"]
            and (end if end != check.get("line") else None) == row["end_line"]
        ):
            return check, key
    return None, None


def figures(scored: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [pair for s in scored for pair in s["rows"]]
    ours = [c for s in scored for c in s["ours"].values()]
    out: dict[str, Any] = {"truth_rows": len(rows), "our_mentions": len(ours)}
    out["truth_rows_detected"] = sum(c is not None for _, c in rows)
    out["ours_without_truth_row"] = [e for s in scored for e in s["extra"]]
    out["coverage"] = _share(sum(c["status"] != "unchecked" for c in ours), len(ours))
    out["our_verdicts"] = dict(Counter(c["status"] for c in ours).most_common())
    confusion: Counter[tuple[str, str]] = Counter()
    for row, check in rows:
        confusion[(row["truth"], tool_label(check) if check else "not detected")] += 1
    out["confusion"] = {f"{t} -> {o}": n for (t, o), n in sorted(confusion.items())}
    judged = [
        (r, c)
        for r, c in rows
        if r["truth"] in JUDGED
        and "exclude" not in r["flags"]
        and "history_disagrees" not in r["flags"]
    ]
    out["judged"] = _stale_and_moved(judged)
    clean = [(r, c) for r, c in judged if not any(f in r["flags"] for f in NOISY)]
    out["judged_without_whitespace_and_trivial"] = _stale_and_moved(clean)
    # line numbers in words ("`path` lines 28-76", "Line 316 of `path`", "path L12",
    # "path（行12）") apart from the colon/anchor forms
    words = [(r, c) for r, c in rows if "in_words" in r["flags"]]
    out["in_words"] = {
        "truth_rows": len(words),
        "truth_rows_detected": sum(c is not None for _, c in words),
        "forms": dict(Counter(r["form"] for r, _ in words).most_common()),
        "judged": _stale_and_moved([(r, c) for r, c in judged if "in_words" in r["flags"]]),
        "judged_without_whitespace_and_trivial": _stale_and_moved(
            [(r, c) for r, c in clean if "in_words" in r["flags"]]
        ),
    }
    out["not_in_words_judged"] = _stale_and_moved(
        [(r, c) for r, c in judged if "in_words" not in r["flags"]]
    )
    return out


def _stale_and_moved(pairs: list[tuple[dict[str, Any], Any]]) -> dict[str, Any]:
    truly = [(r, c) for r, c in pairs if r["truth"] == "stale"]
    said = [(r, c) for r, c in pairs if c is not None and c["status"] == "stale"]
    hit = sum(r["truth"] == "stale" for r, _ in said)
    moved = [(r, c) for r, c in pairs if r["truth"] in ("moved", "renamed")]
    exact = sum(
        c is not None
        and c["status"] == "moved"
        and c["current_line"] == r["new_line"]
        and c["current_path"] == r["new_path"]
        for r, c in moved
    )
    valid = [(r, c) for r, c in pairs if r["truth"] == "valid"]
    return {
        "rows": len(pairs),
        "stale_truth": len(truly),
        "stale_said": len(said),
        "stale_precision": _share(hit, len(said)),
        "stale_recall": _share(hit, len(truly)),
        "moved_truth": len(moved),
        "moved_exact_line": _share(exact, len(moved)),
        "valid_truth": len(valid),
        "valid_said_valid": _share(
            sum(c is not None and c["status"] == "valid" for _, c in valid), len(valid)
        ),
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def disagreements(scored: list[dict[str, Any]]) -> list[str]:
    lines = []
    for s in scored:
        for row, check in s["rows"]:
            label = tool_label(check) if check else "not detected"
            relocated = (
                check is None
                or row["truth"] not in ("moved", "renamed")
                or (check["current_line"], check["current_path"])
                == (row["new_line"], row["new_path"])
            )
            if label != row["truth"] or not relocated:
                where = f"{row['memory_file']}:{row['memory_line']}"
                got = f"{label} {check['current_path']}:{check['current_line']}" if check else label
                reason = check["reason"][:100] if check else ""
                lines.append(
                    f"{row['repo']} {where} `{row['mention']}` truth={row['truth']} "
                    f"{row['new_path']}:{row['new_line']} flags={row['flags'][:-1]} "
                    f"got={got} | {reason}"
                )
    return lines


def synthetic(work: Path) -> int:
    """Our verdicts on make_synthetic.py's repository against the truth its edits imply."""
    root = Path(tempfile.mkdtemp(prefix="mentions-synth-", dir=work))
    subprocess.run(
        [sys.executable, str(HERE / "make_synthetic.py"), "--dir", str(root)],
        check=True,
        capture_output=True,
    )
    expected = json.loads((root / "expected.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="mentions-home-") as home:
        results, _ = run_tool(root, Path(home))
    ours = [(c, c["mention"]) for r in results for c in r.get("mentions", [])]
    bad = 0
    for row in expected:
        found = [
            c
            for c, text in ours
            if c["memory_line"] == row["memory_line"] and text.endswith(row["mention"])
        ]
        label = tool_label(found[0]) if found else "not detected"
        truth = row["truth"]
        agree = label == truth or (truth == "ambiguous_move" and label == "moved")
        if agree and found and truth in ("moved", "renamed", "valid") and "new_line" in row:
            agree = (found[0]["current_path"], found[0]["current_line"]) == (
                row["new_path"],
                row["new_line"],
            )
        bad += not agree
        print(f"{'ok ' if agree else 'BAD'} {row['mention'][:48]:48} truth={truth:14} ours={label}")
    print(f"{len(expected) - bad}/{len(expected)} synthetic mentions agree")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--split", default="dev", choices=["dev", "test", "corpus", "holdout24", "holdout31", "all"]
    )
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "mentions-bench")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--show-disagreements", action="store_true")
    parser.add_argument("--synthetic", action="store_true", help="score make_synthetic.py")
    args = parser.parse_args(argv)
    if args.synthetic:
        args.work.mkdir(parents=True, exist_ok=True)
        return synthetic(args.work)
    entries = yaml.safe_load((HERE / "repos.yaml").read_text(encoding="utf-8"))["repos"]
    chosen = [
        e
        for e in entries
        if (args.split == "all" or e["split"] == args.split)
        and (not args.only or e["repo"] in args.only)
    ]
    args.work.mkdir(parents=True, exist_ok=True)
    scored, per_repo = [], {}
    for entry in chosen:
        tree = work_tree(entry, args.work)
        with tempfile.TemporaryDirectory(prefix="mentions-home-") as home:
            results, cpu = run_tool(tree, Path(home))
        one = score_repo(entry, results)
        scored.append(one)
        per_repo[entry["repo"]] = {"commit": entry["commit"], "cpu_s": round(cpu, 2)} | figures(
            [one]
        )
        print(f"{entry['repo']}: {len(one['rows'])} truth rows, {cpu:.1f} s CPU", file=sys.stderr)
    report = {"split": args.split, "all": figures(scored), "repos": per_repo}
    text = json.dumps(report, indent=1, ensure_ascii=False)
    if args.json_out:
        args.json_out.write_text(text + "\n", encoding="utf-8")
    print(json.dumps(report["all"], indent=1, ensure_ascii=False))
    if args.show_disagreements:
        print("\n".join(disagreements(scored)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
