#!/usr/bin/env python3
"""Truth for folder mentions (a backticked path ending with `/`) in Serena memories, from git.

Why this exists: memories describe a project's layout with folders ("handlers live in
`src/api/handlers/`"), and a reorganisation that moves or removes a folder leaves them
wrong. To measure the verifier's folder verdicts we need labels that do not come from it:
this script derives them from git's history with its own simple detector, independent of
the project's ``src/`` (standard library + PyYAML; it reuses build_file_truth.py's and
build_truth.py's git plumbing, blame and tree listing).

A folder mention (the detector): an inline code span on one line (single backticks), or a
bold span (``**…**``), whose whole content is a path ending with ``/``: segments of word
characters (any script) and ``.@+-`` (or a route folder ``[id]`` / ``(auth)``) each followed
by ``/``, an optional leading ``./``. Not: in fenced code blocks, globs (``*``), URLs
(``:``), ``..`` or ``.`` segments, home paths (``~``), hosts (``github.com/owner/``, left
out), a machine's absolute paths (``/usr/local/``); a path from the root (``/templates/``)
is read from the repository root, and only there (flag ``rooted``: no folder ending with
it elsewhere, a hand check found `/pane/`, pane-fs's namespace, taken for the store's own
``.serena/memories/pane/``).

For each mention, the commit C that last changed its memory line (``git blame``) and the
folder the path names in C's tree (a folder is a path some tracked file lies under: exact
from the root, else the unique folder whose path ends with ``/<path>``) give the label
(the vocabulary of build_file_truth.py, so that score_files.py scores both):

- ``valid``: the folder resolved at C holds files at now;
- ``renamed``: it holds none at now, and of the files it held at C more than half are
  paired by ``git diff -M -l0 --name-status C now`` with a new path that keeps what lay
  below the folder (``src/tools/a/b.py`` -> ``lib/tools/a/b.py``), all under one folder
  that holds files at now (``new_path``; flag ``moved:K/N``);
- ``missing``: it holds none at now, otherwise (flag ``renamed_elsewhere:K/N:F`` when some
  went under one folder F);
- ``no_file``: no folder of that path at C (flag ``added_later`` + ``exists_at_now:F`` when
  the path names a folder at now);
- ``ambiguous``: several folders end with ``/<path>`` at C (``candidates``);
- ``in_submodule``: the path is under a gitlink at C (or is one).

Usage:
    build_folder_truth.py --all [--only OWNER/NAME ...]   # every repo in repos.yaml
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from build_file_truth import _FENCE, _HOST, _MACHINE, FileBuilder
from build_truth import Git, git_dir_for, load_repos, write_rows

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "folder_truth"

_SEG = r"(?:[\w.@+\-]+|\[[A-Za-z0-9_.]+\]|\([A-Za-z0-9_.\-]+\))"
_FOLDER = re.compile(rf"(/)?((?:\./)?(?:{_SEG}/)+)")
_SPANS = re.compile(r"(?<!`)`([^`\n]+)`(?!`)|\*\*([^*`\n]+)\*\*")


def detect(lines: list[str]) -> list[tuple[int, int, str, list[str]]]:
    """(memory line 1-based, column of the path's first character, path without its last
    `/`, flags)."""
    out = []
    fence: str | None = None
    for i, raw in enumerate(lines, start=1):
        f = _FENCE.match(raw)
        if f:
            if fence is None:
                fence = f.group(1)
            elif f.group(1) == fence:
                fence = None
            continue
        if fence is not None:
            continue
        for m in _SPANS.finditer(raw):
            group = 1 if m.group(1) is not None else 2
            if group == 2 and raw.count("`", 0, m.start()) % 2:
                continue  # bold inside a code span
            found = _FOLDER.fullmatch(m.group(group))
            if found is None:
                continue
            path = found.group(2)[:-1]
            at = m.start(group) + (1 if found.group(1) else 0)
            parts = path.removeprefix("./").split("/")
            if any(p in (".", "..", "...") or not re.search(r"[^\W_]", p) for p in parts):
                continue
            flags = ["bold"] if group == 2 else []
            if found.group(1):
                if parts[0] in _MACHINE:
                    continue
                flags.append("rooted")
            if _HOST.fullmatch(parts[0]):
                continue
            out.append((i, at, path, flags))
    return out


class FolderBuilder(FileBuilder):
    def folder_at(
        self, rev: str, written: str, rooted: bool = False
    ) -> tuple[str, str | None, list[str]]:
        """What a folder path names at a revision; written from the root (`rooted`), only
        that folder from the root (`/pane/` is no `.serena/memories/pane/`)."""
        p = written.removeprefix("./")
        tree = self.tree(rev)
        for link in tree.gitlinks:
            if p == link or p.startswith(link + "/"):
                return "in_submodule", link, []
        dirs = self.dirs(rev) | set(tree.gitlinks)
        if p in dirs:
            return "exact", p, []
        if rooted:
            return "no_file", None, []
        cands = sorted(d for d in dirs if d.endswith("/" + p))
        if len(cands) == 1:
            return "suffix", cands[0], []
        return ("ambiguous", None, cands) if cands else ("no_file", None, [])

    def judge_folder(
        self, mfile: str, line: int, col: int, written: str, c: str, rooted: bool = False
    ) -> dict:
        row: dict = {
            "repo": self.repo, "head": self.head_sha, "memory_file": mfile,
            "memory_line": line, "col": col, "path_as_written": written, "memory_commit": c,
            "resolved_path": None, "truth": None, "new_path": None, "candidates": [],
            "flags": [],
        }  # fmt: skip
        flags = row["flags"]
        how, path, cands = self.folder_at(c, written, rooted)
        if how in ("in_submodule", "ambiguous"):
            row["truth"] = how
            row["candidates"] = cands
            return row
        if how == "no_file":
            row["truth"] = "no_file"
            h2, p2, _ = self.folder_at(self.now, written, rooted)
            if h2 in ("exact", "suffix"):
                flags += ["added_later", "exists_at_now:" + (p2 or "")]
            return row
        assert path is not None
        if how == "suffix":
            flags.append("resolved_by_suffix")
        row["resolved_path"] = path
        if path in self.dirs(self.now) or path in self.tree(self.now).gitlinks:
            row["truth"] = "valid"
            row["new_path"] = path
            return row
        held = [f for f in self.tree(c).files if f.startswith(path + "/")]
        went: Counter = Counter()
        renames = self.renames(c)
        for old in held:
            new = renames.get(old, (None,))[0]
            rest = old[len(path) + 1 :]
            if new is not None and new.endswith("/" + rest):
                went[new[: -len(rest) - 1]] += 1
        best, count = went.most_common(1)[0] if went else ("", 0)
        if 2 * count > len(held) and best in self.dirs(self.now):
            row["truth"] = "renamed"
            row["new_path"] = best
            flags.append(f"moved:{count}/{len(held)}")
        else:
            row["truth"] = "missing"
            if count:
                flags.append(f"renamed_elsewhere:{count}/{len(held)}:{best}")
        return row

    def run_folders(self) -> tuple[list[dict], Counter]:
        rows: list[dict] = []
        stats: Counter = Counter()
        binary = self._binary_memories()
        for mfile in self.memory_files():
            if mfile in binary:
                continue
            stats["memories"] += 1
            found = detect(self.lines(self.now, mfile) or [])
            if not found:
                continue
            stats["memories_with_folder_mentions"] += 1
            blame = self.blame(mfile)
            for line, col, path, flags in found:
                rooted = "rooted" in flags
                row = self.judge_folder(mfile, line, col, path, blame[line][0], rooted)
                row["flags"] = flags + row["flags"]
                rows.append(row)
        return rows, stats


LABELS = ["valid", "renamed", "missing", "no_file", "ambiguous", "in_submodule"]


def summary(entries: list[dict], results: dict[str, tuple[list[dict], Counter]]) -> str:
    head = ["repo", "split", "memories", "with folder mentions", "folder mentions", *LABELS]
    head += ["added_later"]
    out = [
        "# Folder-mention truth: summary",
        "",
        "Generated by `build_folder_truth.py --all`. `no_file`: no folder of that path when",
        "the memory line was written; `added_later`: of those, the ones naming a folder now.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    tot: Counter = Counter()
    for e in entries:
        if e["repo"] not in results:
            continue
        rows, stats = results[e["repo"]]
        dist = Counter(r["truth"] for r in rows)
        later = sum("added_later" in r["flags"] for r in rows)
        vals = [stats["memories"], stats["memories_with_folder_mentions"], len(rows)]
        vals += [dist.get(t, 0) for t in LABELS] + [later]
        for k, v in zip(["memories", "with", "rows", *LABELS, "later"], vals, strict=True):
            tot[k] += v
        tot[e["split"]] += len(rows)
        out.append("| " + " | ".join([e["repo"], e["split"], *map(str, vals)]) + " |")
    keys = ["memories", "with", "rows", *LABELS, "later"]
    out.append("| **all** | | " + " | ".join(str(tot[k]) for k in keys) + " |")
    splits = ", ".join(f"{s} {tot[s]}" for s in ("dev", "test", "corpus", "holdout24", "holdout31"))
    out += ["", f"Rows per split: {splits}.", ""]
    hand = HERE / "HANDCHECK_FOLDERS.md"
    if hand.exists():
        out += ["", hand.read_text(encoding="utf-8").rstrip(), ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true", help="every repository in repos.yaml")
    ap.add_argument("--only", nargs="*", default=None, help="these repos only")
    a = ap.parse_args(argv)
    if not a.all:
        ap.error("--all is required")
    entries = load_repos()
    results = {}
    for e in entries:
        if a.only and e["repo"] not in a.only:
            continue
        b = FolderBuilder(Git(git_dir=git_dir_for(e)), e["repo"], e["commit"])
        rows, stats = b.run_folders()
        write_rows(rows, OUT_DIR / (e["repo"].replace("/", "__") + ".jsonl"))
        results[e["repo"]] = (rows, stats)
        dist = dict(Counter(r["truth"] for r in rows))
        print(f"{e['repo']}: {len(rows)} folder mentions {dist}", file=sys.stderr)
    if not a.only:
        (OUT_DIR / "SUMMARY.md").write_text(summary(entries, results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
