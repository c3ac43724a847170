#!/usr/bin/env python3
"""Truth for file mentions (a backticked path, no line) in Serena memories, from git alone.

Why this exists: memories name files by path far more often than by path and
line (`` `src/app/handler.py` ``), and many of those files have since been
renamed or deleted. To measure a verifier of such "file mentions" we need labels
that do not come from the verifier. This script derives them from git's own
history with its own, deliberately simple detector, and is independent of the
project's ``src/`` (standard library + PyYAML only; it reuses the git plumbing,
tree listing, blame and path resolution of ``build_truth.py`` next to it).

A file mention (the detector): an inline code span on one line, `` `…` `` with
single backticks, whose whole content is a path: segments of
word characters (any script), ``.@+-`` (or a route folder ``[id]`` / ``(auth)``) joined by ``/``,
at least one ``/``, optional leading ``./``, the last segment with an extension
(``.`` + letter + up to 9 alphanumerics). Not: inside fenced code blocks
(`````` ``` `````` / ``~~~``), with a line (``a.py:12`` is a line mention; ``:``
is not a path character), without ``/`` (``package.json``), URLs (``:``),
a machine's absolute paths (``/etc/x.conf``; a path rooted elsewhere, ``/docs/x.md``, is
read from the repository root, flag ``rooted``) or home (``~/x``) paths, ``..`` segments, git
ranges (``origin/main...HEAD``: a last segment holding ``..``; added in session 34), globs
(``*``), spaces; nor a span followed by a line in words (`` `a.py` line 64 ``,
`` `a.py` (lines 9-12) ``): build_truth.py's detector reads those as line mentions.
Kept but flagged: ``host_like`` (``github.com/x/go-llama.cpp``, a Go module),
``scoped_package_like`` (``@scope/pkg.js``), ``dotfile`` (``config/.env``).

For each mention, the commit C that last changed its memory line (``git blame
--porcelain`` at now) and the path resolved in C's tree (exact from the root,
else the unique file whose path ends with ``/<path>``) give the label:

- ``valid``: the file resolved at C is at now at the same path;
- ``renamed``: gone at now, ``git diff -M -l0 --name-status C now`` renames it
  (``new_path``; flag ``similarity:N``);
- ``missing``: gone at now, no rename (flags ``same_name_at_now:P`` or
  ``same_name_at_now:N_places`` when files of that name exist at now);
- ``no_file``: not in C's tree (flag ``added_later`` + ``exists_at_now:P`` when
  the written path resolves at now; ``is_dir_at_commit`` when it names a folder);
- ``ambiguous``: several files end with ``/<path>`` at C (``candidates``);
- ``in_submodule``: under a gitlink at C.

For ``renamed`` and ``missing`` rows, ``written_path_resolves_at_now:P`` when
the path as written names a file at now (exact or unique suffix): a verifier
that resolves at now rather than at C would call it valid.

Second opinion for ``renamed`` and ``missing``: the first-parent history from
C to now, commit by commit (``git log --first-parent --diff-merges=first-parent
-M``), followed for the resolved path; flag ``history_agrees`` or
``history_disagrees:LABEL[:PATH]`` (``history_via_merge`` when C is not on
now's first-parent chain, so the walk starts at the merge that brought it).

Usage:
    build_file_truth.py --all [--only OWNER/NAME ...]   # every repo in repos.yaml
    build_file_truth.py --git-dir DIR --head REV --repo OWNER/NAME --out FILE.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from build_truth import Builder, Git, git_dir_for, load_repos, write_rows
from build_truth import detect as line_mentions

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "file_truth"

# --------------------------------------------------------------------------
# detector
# --------------------------------------------------------------------------

_SEG = r"[\w.@+\-]+"  # \w: a file name may be in any script (`docs/要件定義書.md`)
_DIR = rf"(?:{_SEG}|\[[A-Za-z0-9_.]+\]|\([A-Za-z0-9_.\-]+\))"
_PATH = re.compile(rf"(?:\./)?(?:{_DIR}/)+{_SEG}")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")
_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_FENCE = re.compile(r"^\s*(```|~~~)")
# A rooted path (`/docs/PRD.md`) is read from the repository root (flag `rooted`, added in
# session 28 after a QA round found memories writing paths so), unless its first folder is
# one of a machine's own.
_MACHINE = frozenset({
    "etc", "usr", "var", "tmp", "opt", "home", "Users", "root", "proc", "sys", "dev", "mnt",
    "media", "srv", "run", "private", "Library", "System", "Applications", "Volumes", "nix",
    "snap", "bin", "sbin", "boot",
})  # fmt: skip
_HOST = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|es|gg|co|in)")


def is_file_path(text: str) -> bool:
    """The whole span is a repository-relative path to a file (see the module docstring)."""
    if not _PATH.fullmatch(text):
        return False
    segs = text.split("/")
    if any(s in ("", "..") for s in segs) or ".." in segs[-1]:  # `origin/main...HEAD`: a range
        return False
    return bool(_EXT.search(segs[-1]))


def _strip(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def detect(lines: list[str]) -> list[tuple[int, int, str, list[str]]]:
    """(memory line 1-based, column of the path's first character, path, flags)."""
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
        for m in _SPAN.finditer(raw):
            path, at, flags = m.group(1), m.start(1), []
            rest = path[1:]
            if (
                path.startswith("/")
                and rest.split("/", 1)[0] not in _MACHINE
                and is_file_path(rest)
            ):
                path, at = rest, at + 1  # `/app/globals.css`: from the repository root
                flags.append("rooted")
            if not is_file_path(path):
                continue
            last = path.rsplit("/", 1)[-1]
            if last.startswith(".") and last.count(".") == 1:
                flags.append("dotfile")  # `config/.env`: an extension or a name?
            first = path.split("/", 1)[0]
            if _HOST.fullmatch(first):
                flags.append("host_like")  # `github.com/x/go-llama.cpp`: a module, not a file
            elif first.startswith("@"):
                flags.append("scoped_package_like")  # `@huggingface/transformers.js`
            out.append((i, at, path, flags))
    return out


# --------------------------------------------------------------------------
# the truth builder
# --------------------------------------------------------------------------


class FileBuilder(Builder):
    def __init__(self, git: Git, repo: str, head: str):
        super().__init__(git, repo, head, None, with_text=False)
        self._ren: dict[str, dict[str, tuple[str, int]]] = {}
        self._dirs: dict[str, set[str]] = {}
        self._chain: set[str] | None = None
        self._logs: dict[str, list[list[tuple[str, str, str | None]]]] = {}
        self.lacking: set[str] = set()  # paths whose blobs the snapshot lacks
        self.blame_fallback: set[str] = set()

    def renames(self, c: str) -> dict[str, tuple[str, int]]:
        """old path -> (new path, similarity) between C and now, no rename limit."""
        if c not in self._ren:
            parts = self.git_lacking(
                "diff", "-M", "-l0", "--name-status", "-z", "--diff-filter=R", c, self.head_sha
            ).split("\0")
            out: dict[str, tuple[str, int]] = {}
            i = 0
            while i + 2 < len(parts):
                if parts[i].startswith("R"):
                    out[parts[i + 1]] = (parts[i + 2], int(parts[i][1:] or 0))
                    i += 3
                else:
                    i += 2
            self._ren[c] = out
        return self._ren[c]

    def git_lacking(self, *args: str) -> str:
        """git diff/log over the whole tree, leaving out files whose blobs the snapshot lacks.

        A fetched mirror leaves out large files (LoRAIro's `.brv/blobs/storage.db-wal`);
        git then fails to diff at all. The path of the unreadable object is excluded
        (by pathspec) and the command run again, up to 20 times.
        """
        for _ in range(20):
            spec = ["--", ".", *(f":(exclude){p}" for p in sorted(self.lacking))]
            try:
                return self.git.text(*args, *(spec if self.lacking else []))
            except RuntimeError as e:
                m = re.search(r"unable to read ([0-9a-f]{40})", str(e))
                if not m:
                    raise
                path = self._path_of(m.group(1), args)
                if path is None or path in self.lacking:
                    raise
                self.lacking.add(path)
        raise RuntimeError("too many unreadable objects")

    def _path_of(self, oid: str, args: tuple[str, ...]) -> str | None:
        shas = [a for a in args if re.fullmatch(r"[0-9a-f]{40}(\.\.[0-9a-f]{40})?", a)]
        revs = [a.split("..")[-1] for a in shas] + [a.split("..")[0] for a in shas if ".." in a]
        for rev in revs:
            for e in self.git.text("ls-tree", "-r", "-z", "--full-tree", rev).split("\0"):
                if e and e.split("\t", 1)[0].split()[-1] == oid:
                    return e.split("\t", 1)[1]
        # an object of some commit between: ask the history which path had it
        out = self.git.text("log", "--all", "--raw", "--no-abbrev", "--format=", *revs[:1])
        for ln in out.split("\n"):
            if oid in ln and "\t" in ln:
                return ln.split("\t")[-1]
        return None

    def blame(self, path: str) -> dict[int, tuple[str, int]]:
        """`Builder.blame`; when git cannot blame (blame looks for renames in the commit
        that added the file, and a blob of another file there is missing from the
        snapshot), the blame of `K..now` with K the oldest commit that touched this
        path: lines from K are given K (memory files flagged `blame_from_first_commit`)."""
        try:
            return super().blame(path)
        except RuntimeError:
            pass
        first = self.git.text("log", "--format=%H", self.head_sha, "--", path).split()[-1]
        self.blame_fallback.add(path)
        out = self.git.text("blame", "--porcelain", f"{first}..{self.head_sha}", "--", path)
        res: dict[int, tuple[str, int]] = {}
        for ln in out.split("\n"):
            p = ln.split(" ")
            if len(p) >= 3 and len(p[0]) == 40 and p[1].isdigit() and p[2].isdigit():
                res[int(p[2])] = (p[0], int(p[1]))
        return res

    def dirs(self, rev: str) -> set[str]:
        if rev not in self._dirs:
            d: set[str] = set()
            for p in self.tree(rev).files:
                parts = p.split("/")
                for k in range(1, len(parts)):
                    d.add("/".join(parts[:k]))
            self._dirs[rev] = d
        return self._dirs[rev]

    # ---- history walk (second opinion) -----------------------------------
    def _log(self, c: str) -> list[list[tuple[str, str, str | None]]]:
        """Each first-parent commit after C up to now: its (status, path, new path) entries."""
        if c not in self._logs:
            raw = self.git_lacking(
                "log", "--first-parent", "--diff-merges=first-parent", "-M", "--reverse",
                "--name-status", "-z", "--format=%x01%H", f"{c}..{self.head_sha}",
            )  # fmt: skip
            commits = []
            for chunk in raw.split("\x01")[1:]:
                # "SHA\0\nM\0path\0R100\0old\0new\0": the status after the sha has a newline
                parts = [p.lstrip("\n") for p in chunk.split("\0")[1:]]
                entries = []
                i = 0
                while i < len(parts):
                    st = parts[i]
                    if not st:
                        i += 1
                        continue
                    if st[0] in "RC" and i + 2 < len(parts):
                        entries.append((st[0], parts[i + 1], parts[i + 2]))
                        i += 3
                    elif i + 1 < len(parts):
                        entries.append((st[0], parts[i + 1], None))
                        i += 2
                    else:
                        break
                commits.append(entries)
            self._logs[c] = commits
        return self._logs[c]

    def history(self, c: str, path: str) -> tuple[str, str]:
        """Follow path from C to now commit by commit: ('valid'|'renamed'|'missing', path)."""
        p, gone = path, False
        for entries in self._log(c):
            for st, old, new in entries:
                if st == "R" and old == p and not gone:
                    p = new or p
                elif st == "D" and old == p:
                    gone = True
                elif st == "A" and old == p and gone:
                    gone = False
        if gone:
            return "missing", p
        return ("valid" if p == path else "renamed"), p

    def on_chain(self, c: str) -> bool:
        if self._chain is None:
            out = self.git.text("rev-list", "--first-parent", self.head_sha)
            self._chain = set(out.split())
        return c in self._chain

    # ---- one mention -----------------------------------------------------
    def judge_file(self, mfile: str, line: int, col: int, written: str, c: str) -> dict:
        row: dict = {
            "repo": self.repo,
            "head": self.head_sha,
            "memory_file": mfile,
            "memory_line": line,
            "col": col,
            "path_as_written": written,
            "memory_commit": c,
            "resolved_path": None,
            "truth": None,
            "new_path": None,
            "candidates": [],
            "flags": [],
        }
        flags = row["flags"]
        if not mfile.endswith(".md"):
            flags.append("not_markdown_memory")
        how, path, cands = self.resolve(self.tree(c), written)
        now_tree = self.tree(self.now)
        if how == "in_submodule":
            row["truth"] = "in_submodule"
            flags.append("submodule:" + (path or ""))
            return row
        if how == "ambiguous":
            row["truth"] = "ambiguous"
            row["candidates"] = cands
            return row
        if how == "no_file":
            row["truth"] = "no_file"
            if _strip(written) in self.dirs(c):
                flags.append("is_dir_at_commit")
            h2, p2, c2 = self.resolve(now_tree, written)
            if h2 in ("exact", "suffix"):
                flags += ["added_later", "exists_at_now:" + (p2 or "")]
            elif h2 == "ambiguous":
                flags.append(f"ambiguous_at_now:{len(c2)}")
            return row
        if how == "suffix":
            flags.append("resolved_by_suffix")
        row["resolved_path"] = path
        assert path is not None
        if path in now_tree.files:
            row["truth"] = "valid"
            row["new_path"] = path
            if how == "suffix":
                h2, _, c2 = self.resolve(now_tree, written)
                if h2 == "ambiguous":
                    flags.append(f"ambiguous_at_now:{len(c2)}")
            return row
        ren = self.renames(c).get(path)
        if ren is None:
            row["truth"] = "missing"
            base = path.rsplit("/", 1)[-1]
            same = now_tree.by_base.get(base, [])
            if len(same) == 1:
                flags.append("same_name_at_now:" + same[0])
            elif same:
                flags.append(f"same_name_at_now:{len(same)}_places")
        else:
            row["truth"] = "renamed"
            row["new_path"] = ren[0]
            flags.append(f"similarity:{ren[1]}")
        h2, p2, _ = self.resolve(now_tree, written)
        if h2 in ("exact", "suffix"):
            flags.append("written_path_resolves_at_now:" + (p2 or ""))
        self._second_opinion(row, c, path)
        return row

    def _second_opinion(self, row: dict, c: str, path: str) -> None:
        flags = row["flags"]
        if not self.on_chain(c):
            flags.append("history_via_merge")
        try:
            label, p = self.history(c, path)
        except RuntimeError:  # an object the snapshot lacks (large files are left out)
            flags.append("history_not_checked")
            return
        if label == row["truth"] and (label != "renamed" or p == row["new_path"]):
            flags.append("history_agrees")
        else:
            flags.append(f"history_disagrees:{label}" + (f":{p}" if label == "renamed" else ""))

    # ---- whole repository ------------------------------------------------
    def run_files(self) -> tuple[list[dict], Counter]:
        rows: list[dict] = []
        stats: Counter = Counter()
        binary = self._binary_memories()
        for mfile in self.memory_files():
            if mfile in binary:
                continue
            stats["memories"] += 1
            text = self.lines(self.now, mfile) or []
            found = detect(text)
            # `path` (lines 100, 147) / `path` line 64: a line mention in words (build_truth's
            # own rows), not a file mention
            lined = {(m.memory_line, m.col) for m in line_mentions(text)} if found else set()
            kept = [f for f in found if (f[0], f[1]) not in lined]
            stats["left_out_line_in_words"] += len(found) - len(kept)
            found = kept
            if not found:
                continue
            stats["memories_with_file_mentions"] += 1
            blame = self.blame(mfile)
            for line, col, path, flags in found:
                c = blame[line][0]
                row = self.judge_file(mfile, line, col, path, c)
                row["flags"] = flags + row["flags"]
                if mfile in self.blame_fallback:
                    row["flags"].append("blame_from_first_commit")
                rows.append(row)
        return rows, stats


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------

LABELS = ["valid", "renamed", "missing", "no_file", "ambiguous", "in_submodule"]


def summary(entries: list[dict], results: dict[str, tuple[list[dict], Counter]]) -> str:
    head = ["repo", "split", "memories", "with file mentions", "file mentions", *LABELS]
    head += ["added_later", "history_disagrees", "left out: line in words"]
    out = [
        "# File-mention truth: summary",
        "",
        "Generated by `build_file_truth.py --all` (the table; the hand check below it is",
        "kept by hand in `HANDCHECK_FILES.md` and appended here). `memories` = files",
        "under `.serena/memories/` at the truth commit; `added_later` = `no_file` rows whose",
        "written path resolves at now; `history_disagrees` = renamed/missing rows the",
        "commit-by-commit walk labels otherwise; `left out: line in words` = backticked",
        "paths followed by a line in words (`` `a.py` line 64 ``, `` `a.py` (lines 9-12) ``),",
        "which are line mentions (build_truth.py's rows), not file mentions.",
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
        dis = sum(any(f.startswith("history_disagrees") for f in r["flags"]) for r in rows)
        vals = [stats["memories"], stats["memories_with_file_mentions"], len(rows)]
        vals += [dist.get(t, 0) for t in LABELS] + [later, dis, stats["left_out_line_in_words"]]
        keys = ["memories", "with", "rows", *LABELS, "later", "dis", "words"]
        for k, v in zip(keys, vals, strict=True):
            tot[k] += v
        tot[e["split"]] += len(rows)
        out.append("| " + " | ".join([e["repo"], e["split"], *map(str, vals)]) + " |")
    keys = ["memories", "with", "rows", *LABELS, "later", "dis", "words"]
    out.append("| **all** | | " + " | ".join(str(tot[k]) for k in keys) + " |")
    splits = ", ".join(f"{s} {tot[s]}" for s in ("dev", "test", "corpus", "holdout24", "holdout31"))
    out += ["", f"Rows per split: {splits}.", ""]
    hand = HERE / "HANDCHECK_FILES.md"
    if hand.exists():
        out += ["", hand.read_text(encoding="utf-8").rstrip(), ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git-dir")
    ap.add_argument("--head", default="HEAD")
    ap.add_argument("--repo")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--all", action="store_true", help="every repository in repos.yaml")
    ap.add_argument("--only", nargs="*", default=None, help="with --all: these repos only")
    a = ap.parse_args(argv)
    if a.all:
        entries = load_repos()
        results = {}
        for e in entries:
            name = e["repo"].replace("/", "__") + ".jsonl"
            if a.only and e["repo"] not in a.only:
                continue
            b = FileBuilder(Git(git_dir=git_dir_for(e)), e["repo"], e["commit"])
            rows, stats = b.run_files()
            write_rows(rows, OUT_DIR / name)
            if b.lacking:
                print(f"{e['repo']}: left out of diffs (blobs lacking): {sorted(b.lacking)}")
            results[e["repo"]] = (rows, stats)
            dist = dict(Counter(r["truth"] for r in rows))
            print(f"{e['repo']}: {len(rows)} file mentions {dist}", file=sys.stderr)
        if not a.only:
            (OUT_DIR / "SUMMARY.md").write_text(summary(entries, results), encoding="utf-8")
        return 0
    if not (a.git_dir and a.repo and a.out):
        ap.error("--git-dir, --repo and --out are required (or --all)")
    b = FileBuilder(Git(git_dir=a.git_dir), a.repo, a.head)
    rows, stats = b.run_files()
    write_rows(rows, a.out)
    print(json.dumps({"rows": len(rows), **stats}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
