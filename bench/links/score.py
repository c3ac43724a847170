#!/usr/bin/env python3
"""Link recall and precision on hand-labelled real Serena stores (issue 12).

    python bench/links/score.py [--split dev|test|all] [--labels DIR] [--show]

For each store of stores.yaml with a label file (labels/OWNER+NAME.yaml, made by
reading the memories; see LABELLING.md), the store's memories at the pinned
commit are extracted from the mirror git dir into a temporary folder, indexed
by the tool (memory links resolved against the whole store, repository links
against the commit's file list), and the links it reports for the labelled
files are compared with the labels:

- memory links: an edge (file, line, target memory). Found = the tool resolved
  a link on that line to that memory. Precision counts every resolved edge the
  tool reports in a labelled file; recall every labelled edge.
- dangling: labelled references to memories that do not exist, against the
  tool's dangling/ambiguous links (a broken link the labels do not have is a
  false alarm).
- repository links: labelled links to repository files the tool reports as a
  dangling memory link (must be 0).
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
STORE = ".serena/memories"


def extract(git_dir: Path, commit: str, into: Path) -> None:
    """The store folder at commit, written under into (nothing of it is kept)."""
    data = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit, STORE],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")


def memory_path(path: str) -> str:
    path = path.removeprefix(STORE + "/")
    return path[:-3] if path.endswith(".md") else path


def tool_links(git_dir: Path, commit: str) -> list[tuple[str, int, str, str, str | None, str]]:
    from repoview import TreeView

    from memory_enhancement.service import MemoryService
    from memory_enhancement.store.disk import Store
    from memory_enhancement.verify.repo import Repository

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        extract(git_dir, commit, root)
        service = MemoryService(Store(root / STORE), Repository(root))
        service.index.repo = TreeView(git_dir, commit, STORE)
        with service.index.connect() as conn:
            return conn.execute(
                "SELECT m.path, l.line, l.target, l.status, l.resolved, l.kind FROM links l "
                "JOIN memories m ON m.id = l.memory_id"
            ).fetchall()


def score_store(entry: dict, labels: dict, show: bool) -> Counter[str]:
    git_dir = Path("/work/.mirror") / entry["repo"].replace("/", "+") / "repo"
    if not git_dir.is_dir():  # named, not a traceback from `git archive`
        raise SystemExit(
            f"{entry['repo']} is not mirrored at {git_dir}: fetch github:{entry['repo']}"
        )
    rows = tool_links(git_dir, labels["commit"])
    files = {memory_path(f): spec or {} for f, spec in (labels.get("files") or {}).items()}
    c: Counter[str] = Counter()
    found_edges = {
        (src, line, res)
        for src, line, _, status, res, _ in rows
        if status == "resolved" and src in files
    }
    broken = {
        (src, line, t)
        for src, line, t, status, _, _ in rows
        if status in ("dangling", "ambiguous") and src in files
    }
    truth_edges: set[tuple[str, int, str]] = set()
    truth_dangling: set[tuple[str, int]] = set()
    repo_lines: set[tuple[str, int]] = set()
    forms: dict[tuple[str, int, str], str] = {}
    for src, spec in files.items():
        for link in spec.get("links") or []:
            line = int(link["line"])
            if link.get("repo"):
                repo_lines.add((src, line))
            elif link.get("dangling"):
                truth_dangling.add((src, line))
            elif link.get("to"):
                edge = (src, line, memory_path(str(link["to"])))
                truth_edges.add(edge)
                forms[edge] = str(link.get("form", "?"))
    hit = found_edges & truth_edges
    c["labelled links"] += len(truth_edges)
    c["found links"] += len(found_edges)
    c["true positives"] += len(hit)
    for edge in truth_edges:
        c[f"labelled {forms[edge]}"] += 1
        if edge in hit:
            c[f"found {forms[edge]}"] += 1
    c["labelled dangling"] += len(truth_dangling)
    broken_lines = {(s, line) for s, line, _ in broken}
    c["dangling found"] += len(truth_dangling & broken_lines)
    c["broken reported"] += len(broken)
    c["broken false alarms"] += sum((s, line) not in truth_dangling for s, line, _ in broken)
    c["repository links reported dangling"] += sum((s, line) in repo_lines for s, line, _ in broken)
    if show:
        for edge in sorted(truth_edges - found_edges):
            print(f"  MISSED {entry['repo']} {edge} form={forms[edge]}")
        for edge in sorted(found_edges - truth_edges):
            print(f"  EXTRA  {entry['repo']} {edge}")
        for item in sorted(broken):
            if (item[0], item[1]) not in truth_dangling:
                print(f"  FALSE BROKEN {entry['repo']} {item}")
    return c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=["dev", "test", "all"], default="all")
    parser.add_argument("--labels", type=Path, default=HERE / "labels")
    parser.add_argument("--show", action="store_true", help="list every miss and false link")
    args = parser.parse_args()
    stores = yaml.safe_load((HERE / "stores.yaml").read_text())["stores"]
    total: Counter[str] = Counter()
    print(
        "| store | split | labelled links | found | recall | precision | dangling found "
        "| false broken | repo links reported dangling |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for entry in stores:
        if args.split != "all" and entry["split"] != args.split:
            continue
        label_file = args.labels / (entry["repo"].replace("/", "+") + ".yaml")
        if not label_file.exists():
            continue
        c = score_store(entry, yaml.safe_load(label_file.read_text()), args.show)
        total += c
        print(_row(entry["repo"], entry["split"], c))
    print(_row("**all**", args.split, total))
    forms = sorted(
        {
            k.removeprefix("labelled ")
            for k in total
            if k.startswith("labelled ") and k not in ("labelled links", "labelled dangling")
        }
    )
    print(
        "\nRecall by form: "
        + ", ".join(f"{f} {total['found ' + f]}/{total['labelled ' + f]}" for f in forms)
    )


def _row(name: str, split: str, c: Counter[str]) -> str:
    recall = c["true positives"] / c["labelled links"] if c["labelled links"] else float("nan")
    precision = c["true positives"] / c["found links"] if c["found links"] else float("nan")
    return (
        f"| {name} | {split} | {c['labelled links']} | {c['true positives']} "
        f"| {recall:.3f} | {precision:.3f} "
        f"| {c['dangling found']}/{c['labelled dangling']} | {c['broken false alarms']} "
        f"| {c['repository links reported dangling']} |"
    )


if __name__ == "__main__":
    main()
