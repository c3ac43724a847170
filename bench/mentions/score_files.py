#!/usr/bin/env python3
"""Score our file-mention verdicts (a backticked path, no line) against build_file_truth.py.

For each repository of repos.yaml in the chosen split, this makes a work tree of
the fetched mirror at the truth commit (`score.work_tree`: `git clone --shared`,
origin set to the GitHub URL as a user's clone has it), runs
`python -m memory_enhancement verify-all --json --dir .serena/memories` as a
whole process with a fresh `MEMORY_ENHANCEMENT_HOME` and the chosen `src/` on
PYTHONPATH, and pairs each file-mention verdict (`form` == "file", read from
`mentions` and, should they be put there, `citations`) with the truth row at the
same place (memory file, memory line, column of the path's first character);
when the column differs, the unused verdict on the same memory line naming the
same path.

Figures (`all`, and per repository):

- detection: truth rows that get a verdict; our file verdicts with no truth row
  (`ours_without_truth_row`, listed for reading by hand);
- drift precision and recall over truth rows labelled valid, renamed or missing
  (drifted = truth renamed|missing; said drifted = ours moved|missing|stale), also
  without rows whose commit-by-commit history disagrees with the direct diff
  (`history_disagrees`, see build_file_truth.py);
- rename target exact: truth renamed rows on which we say moved to the same path;
- valid agreement: truth valid rows on which we say valid;
- what we say for `no_file` rows (apart: those whose path was added later), and
  for ambiguous and submodule rows; the confusion of truth and our labels.

Usage:
    score_files.py [--split dev|test|corpus|holdout24|holdout31|all] [--only OWNER/NAME ...]
                   [--src PATH] [--work DIR] [--json-out FILE] [--show-disagreements]
    score_files.py --oracle --split all   # the truth's own verdicts: every figure 1.0
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
from score import _share, work_tree

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
STORE = ".serena/memories"
TRUTH = HERE / "file_truth"
JUDGED = ("valid", "renamed", "missing")
DRIFTED = ("renamed", "missing")
SAID_DRIFTED = ("moved", "missing", "stale")
VERIFY_ALL = ("verify-all", "--json", "--dir", STORE)
FORM = "file"  # the mentions scored (score_folders.py scores "folder" ones the same way)


def run_tool(tree: Path, src: Path) -> list[dict[str, Any]]:
    """`verify-all --json` over the tree's Serena store, as a whole process, fresh home."""
    with tempfile.TemporaryDirectory(prefix="file-mentions-home-") as home:
        env = {**os.environ, "MEMORY_ENHANCEMENT_HOME": home, "PYTHONPATH": str(src)}
        done = subprocess.run(
            [sys.executable, "-P", "-m", "memory_enhancement", *VERIFY_ALL],
            cwd=tree,
            capture_output=True,
            text=True,
            env=env,
        )
    try:
        if done.returncode not in (0, 1):
            raise ValueError(f"exit code {done.returncode}")
        return list(json.loads(done.stdout))
    except ValueError as e:  # a crash (exit 1 too) leaves no JSON: its rows count as undetected
        raise ToolFailed(f"verify-all failed in {tree} ({e}): {done.stderr.strip()[-600:]}") from e


class ToolFailed(Exception):
    """verify-all gave no JSON for one repository (scored as no verdicts, reported)."""


def label(check: dict[str, Any] | None) -> str:
    """Our verdict in the truth's words (`moved` with a new path is a rename)."""
    if check is None:
        return "not detected"
    status = str(check["status"])
    if status == "moved" and (check.get("renamed_to") or check.get("current_path")):
        return "renamed"
    if status == "skipped":
        return "no_file"
    return status


def file_verdicts(results: list[dict[str, Any]]) -> dict[tuple[str, int, int], dict[str, Any]]:
    ours: dict[tuple[str, int, int], dict[str, Any]] = {}
    for result in results:
        mid = str(result.get("memory_id", ""))
        mfile = f"{STORE}/{mid}" if mid.endswith(".md") else f"{STORE}/{mid}.md"
        for kind in ("mentions", "citations"):
            for check in result.get(kind) or []:
                if check.get("form") == FORM:
                    ours[(mfile, check.get("memory_line"), check.get("column"))] = check
    return ours


def load_truth(entry: dict[str, Any]) -> list[dict[str, Any]]:
    path = TRUTH / (entry["repo"].replace("/", "__") + ".jsonl")
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]


def oracle(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """verify-all's shape with the verdict the truth implies for each row (every 5th
    one a column off, to try the fallback), so that the scorer itself can be checked:
    every figure must come out perfect."""
    status = {"valid": "valid", "renamed": "moved", "missing": "missing", "no_file": "skipped",
              "ambiguous": "ambiguous", "in_submodule": "in_submodule"}  # fmt: skip
    by_memory: dict[str, list[dict[str, Any]]] = {}
    for k, row in enumerate(load_truth(entry)):
        mid = row["memory_file"][len(STORE) + 1 :].removesuffix(".md")
        by_memory.setdefault(mid, []).append(
            {"mention": row["path_as_written"], "path": row["resolved_path"], "line": None,
             "memory_line": row["memory_line"], "column": row["col"] + (k % 5 == 4),
             "form": FORM, "status": status[row["truth"]], "current_path": row["new_path"],
             "renamed_to": row["new_path"] if row["truth"] == "renamed" else None,
             "candidates": row["candidates"], "reason": "oracle"}
        )  # fmt: skip
    return [{"memory_id": m, "citations": [], "mentions": v} for m, v in by_memory.items()]


def pair(entry: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    truth = load_truth(entry)
    ours = file_verdicts(results)
    other = sum(
        1
        for r in results
        for kind in ("mentions", "citations")
        for c in r.get(kind) or []
        if c.get("form") != FORM
    )
    used: set[tuple[str, int, int]] = set()
    rows = []
    by_column = 0
    for row in truth:
        key = (row["memory_file"], row["memory_line"], row["col"])
        check = ours.get(key) if key not in used else None
        if check is None:
            key, check = _same_path(row, ours, used)
            by_column += check is not None
        if check is not None:
            used.add(key)
        rows.append((row, check))
    extra = [
        {"memory": k[0], "line": k[1], "column": k[2], "mention": c.get("mention"),
         "status": c.get("status"), "reason": str(c.get("reason", ""))[:120]}
        for k, c in ours.items() if k not in used
    ]  # fmt: skip
    return {"rows": rows, "ours": len(ours), "extra": extra, "matched_off_column": by_column,
            "memories_verified": len(results), "other_verdicts": other}  # fmt: skip


def _same_path(
    row: dict[str, Any], ours: dict[tuple[str, int, int], dict[str, Any]], used: set
) -> tuple[Any, dict[str, Any] | None]:
    """Our unused verdict on the same memory line naming the same path."""
    want = {row["path_as_written"], _strip(row["path_as_written"])}
    for key, check in ours.items():
        if key in used or key[:2] != (row["memory_file"], row["memory_line"]):
            continue
        said = {str(check.get("mention") or ""), str(check.get("path") or "")}
        if want & ({_strip(s) for s in said} | said):
            return key, check
    return None, None


def _strip(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def figures(paired: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [p for s in paired for p in s["rows"]]
    out: dict[str, Any] = {
        "truth_rows": len(rows),
        "truth_labels": dict(Counter(r["truth"] for r, _ in rows).most_common()),
        "memories_verified": sum(s["memories_verified"] for s in paired),
        "our_other_verdicts": sum(s["other_verdicts"] for s in paired),  # a run that ran
        "our_file_verdicts": sum(s["ours"] for s in paired),
        "detected": sum(c is not None for _, c in rows),
        "detection": _share(sum(c is not None for _, c in rows), len(rows)),
        "matched_off_column": sum(s["matched_off_column"] for s in paired),
    }
    judged = [(r, c) for r, c in rows if r["truth"] in JUDGED]
    out["judged"] = _drift(judged)
    agreed = [(r, c) for r, c in judged if not any(f.startswith("history_dis") for f in r["flags"])]
    out["judged_history_agrees"] = _drift(agreed)
    for name, keep in (
        ("no_file", lambda r: r["truth"] == "no_file"),
        ("no_file_added_later", lambda r: r["truth"] == "no_file" and "added_later" in r["flags"]),
        ("ambiguous", lambda r: r["truth"] == "ambiguous"),
        ("in_submodule", lambda r: r["truth"] == "in_submodule"),
    ):
        out["we_say_for_" + name] = dict(
            Counter(label(c) for r, c in rows if keep(r)).most_common()
        )
    confusion = Counter((r["truth"], label(c)) for r, c in rows)
    out["confusion"] = {f"{t} -> {o}": n for (t, o), n in sorted(confusion.items())}
    out["ours_without_truth_row"] = [e for s in paired for e in s["extra"]]
    return out


def _drift(pairs: list[tuple[dict[str, Any], Any]]) -> dict[str, Any]:
    truly = [(r, c) for r, c in pairs if r["truth"] in DRIFTED]
    said = [(r, c) for r, c in pairs if c is not None and c["status"] in SAID_DRIFTED]
    hit = sum(r["truth"] in DRIFTED for r, _ in said)
    renamed = [(r, c) for r, c in pairs if r["truth"] == "renamed"]
    exact = sum(c is not None and c["status"] == "moved" and _new_path(c) == r["new_path"]
                for r, c in renamed)  # fmt: skip
    missing = [(r, c) for r, c in pairs if r["truth"] == "missing"]
    valid = [(r, c) for r, c in pairs if r["truth"] == "valid"]
    return {
        "rows": len(pairs),
        "drifted_truth": len(truly),
        "drifted_said": len(said),
        "drift_precision": _share(hit, len(said)),
        "drift_recall": _share(hit, len(truly)),
        "renamed_truth": len(renamed),
        "rename_target_exact": _share(exact, len(renamed)),
        "missing_truth": len(missing),
        "missing_said_missing": _share(
            sum(c is not None and c["status"] == "missing" for _, c in missing), len(missing)
        ),
        "valid_truth": len(valid),
        "valid_said_valid": _share(
            sum(c is not None and c["status"] == "valid" for _, c in valid), len(valid)
        ),
    }


def _new_path(check: dict[str, Any]) -> Any:
    return check.get("renamed_to") or check.get("current_path")


def disagreements(paired: list[dict[str, Any]]) -> list[str]:
    lines = []
    for s in paired:
        for row, check in s["rows"]:
            ours = label(check)
            agree = ours == row["truth"] and (
                row["truth"] != "renamed" or _new_path(check or {}) == row["new_path"]
            )
            if agree:
                continue
            got = ours + (f" {_new_path(check)}" if check and ours == "renamed" else "")
            reason = str(check.get("reason", ""))[:100] if check else ""
            lines.append(
                f"{row['repo']} {row['memory_file']}:{row['memory_line']}:{row['col']} "
                f"`{row['path_as_written']}` truth={row['truth']} {row['new_path'] or ''} "
                f"flags={row['flags']} got={got} | {reason}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--split", default="dev", choices=["dev", "test", "corpus", "holdout24", "holdout31", "all"]
    )
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the src/ that runs")
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "file-mentions-bench"
    )
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--show-disagreements", action="store_true")
    parser.add_argument(
        "--oracle", action="store_true", help="score the truth's own verdicts (checks the scorer)"
    )
    args = parser.parse_args(argv)
    entries = yaml.safe_load((HERE / "repos.yaml").read_text(encoding="utf-8"))["repos"]
    chosen = [
        e
        for e in entries
        if (args.split == "all" or e["split"] == args.split)
        and (not args.only or e["repo"] in args.only)
    ]
    args.work.mkdir(parents=True, exist_ok=True)
    src = args.src.resolve()
    paired, per_repo, tool_failed = [], {}, []
    for entry in chosen:
        failed = None
        if args.oracle:
            one = pair(entry, oracle(entry))
        else:
            try:
                one = pair(entry, run_tool(work_tree(entry, args.work), src))
            except ToolFailed as e:
                failed = str(e)
                print(failed, file=sys.stderr)
                one = pair(entry, [])
        paired.append(one)
        per_repo[entry["repo"]] = {"split": entry["split"], "commit": entry["commit"]}
        per_repo[entry["repo"]] |= figures([one]) | ({"tool_failed": failed} if failed else {})
        if failed:
            tool_failed.append(entry["repo"])
        print(
            f"{entry['repo']}: {len(one['rows'])} truth rows, {one['ours']} {FORM} verdicts",
            file=sys.stderr,
        )
    report = {"split": args.split, "src": str(src), "all": figures(paired), "repos": per_repo}
    report["all"]["tool_failed"] = tool_failed
    text = json.dumps(report, indent=1, ensure_ascii=False)
    if args.json_out:
        args.json_out.write_text(text + "\n", encoding="utf-8")
    print(json.dumps(report["all"], indent=1, ensure_ascii=False))
    if args.show_disagreements:
        print("\n".join(disagreements(paired)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
