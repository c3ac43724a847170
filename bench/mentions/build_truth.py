#!/usr/bin/env python3
"""Truth for prose mentions of code in Serena memories, from git's own history.

Why this exists: issue 17 asks that a mention such as ``src/app.py:42`` in a
memory be judged against what line 42 said *when the memory line was written*,
then followed to HEAD. To measure a verifier that does this we need labels that
do not come from the verifier. This script derives them from git alone, with its
own mention detector (deliberately broad), and is independent of the project's
``src/`` (standard library + PyYAML only).

For one repository (a git dir, usually a bare mirror) and one "now" commit:

1. Every file under ``.serena/memories/`` at now is scanned for mentions:
   a path-like token whose last segment has an extension, followed by
   ``:L``, ``:L-E``, ``:L:C``, ``#LL``, ``#LL-LE`` (also ``, L2`` lists after a
   colon form), with or without backticks, glued to CJK text or not; and GitHub
   / GitLab blob URLs with ``#L`` anchors.
   Also line numbers given in words (``path lines 28-76``, ``path (L5)``,
   ``Line 316 of path``, ``path（行12）``; flag ``in_words``).
2. ``git blame --porcelain`` of the memory file at now gives, per memory line,
   the commit C that last changed it (``memory_commit``).
3. The mentioned path is resolved in C's tree: exact path from the root, else
   the unique tracked file whose path ends with ``/<path>``; several -> truth
   ``ambiguous`` (candidates listed); none -> ``no_file``; under a submodule
   (gitlink) -> ``in_submodule``.
4. Cited line(s) past the end of the file at C -> ``out_of_range`` (wrong when
   written).
5. ``git diff -U0`` from C to now for that file (``-M`` between the two trees
   when the path is gone at now) maps each cited line through git's hunks:
   ``valid`` (unchanged, same number), ``moved`` (unchanged, new number),
   ``renamed`` (unchanged, file renamed; new path and line), ``stale`` (a cited
   line was changed or deleted by the diff), ``missing`` (file deleted, no
   rename). A stale single line whose exact text was re-added exactly once in
   the same file's diff is ``moved`` with flag ``block_move``; re-added in
   several places -> ``ambiguous_move``. For ranges, all lines must survive for
   valid/moved; a changed range whose exact block occurs once at now (touching
   an added line) is ``moved`` + ``block_move``.

Output: one JSON object per detected mention (none is dropped; see README.md
for the field list). Nothing here reads ``src/``.

Usage:
    build_truth.py --git-dir DIR --head REV --repo OWNER/NAME --out FILE.jsonl
    build_truth.py --all [--only OWNER/NAME ...]   # every repo in repos.yaml
    build_truth.py --worktree DIR --repo OWNER/NAME --out FILE.jsonl
        (the working tree is "now"; memory lines not committed yet are checked
        against the working tree as written)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEMORY_DIR = ".serena/memories/"
UNCOMMITTED = "0" * 40

# --------------------------------------------------------------------------
# git plumbing
# --------------------------------------------------------------------------

_STRIP_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_COMMON_DIR",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_CONFIG_PARAMETERS",
)
# Pinned so a user's config cannot change what git prints (the truth).
_PIN = (
    "core.quotePath=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.algorithm=myers",
    "diff.renames=false",
    "diff.indentHeuristic=true",
    "color.ui=false",
    "core.autocrlf=false",
    "blame.ignoreRevsFile=",
    "diff.relative=false",
    "log.showSignature=false",
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _STRIP_ENV}
    env.update(
        LC_ALL="C",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        HOME=env.get("HOME", "/nonexistent"),
    )
    env["GIT_CONFIG_GLOBAL"] = "/dev/null"
    return env


class Git:
    """Runs git on one repository (bare git dir, or a work tree)."""

    def __init__(self, git_dir: str | None = None, work_tree: str | None = None):
        self.base = ["git"]
        for kv in _PIN:
            self.base += ["-c", kv]
        if work_tree:
            self.base += ["-C", work_tree]
        else:
            self.base += ["--git-dir", git_dir]
        self.env = _env()
        self._cat = None

    def run(self, *args: str, ok_codes: tuple[int, ...] = (0,)) -> bytes:
        p = subprocess.run(self.base + list(args), capture_output=True, env=self.env)
        if p.returncode not in ok_codes:
            raise RuntimeError(
                f"git {' '.join(args)} failed ({p.returncode}): "
                f"{p.stderr.decode(errors='replace').strip()}"
            )
        return p.stdout

    def text(self, *args: str) -> str:
        return self.run(*args).decode("utf-8", errors="replace")

    def blob(self, rev: str, path: str) -> bytes | None:
        """Content of rev:path via one long-lived ``cat-file --batch``."""
        if self._cat is None:
            self._cat = subprocess.Popen(
                [*self.base, "cat-file", "--batch"],
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert self._cat.stdin and self._cat.stdout
        self._cat.stdin.write(f"{rev}:{path}\n".encode())
        self._cat.stdin.flush()
        header = self._cat.stdout.readline().decode(errors="replace").split()
        if len(header) != 3:
            return None
        size = int(header[2])
        data = self._cat.stdout.read(size)
        self._cat.stdout.read(1)
        return data if header[1] == "blob" else None


def split_lines(data: bytes) -> list[str]:
    """Lines as git counts them (a trailing newline does not start a line)."""
    text = data.decode("utf-8", errors="replace")
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


# --------------------------------------------------------------------------
# mention detector (our own grammar, deliberately broad)
# --------------------------------------------------------------------------

_SEG = r"[A-Za-z0-9_.@~+\-]+"
# A folder may also be a web framework's route folder: `[id]`, `[...slug]`, `(auth)`.
_DIR = rf"(?:{_SEG}|\[[A-Za-z0-9_.]+\]|\([A-Za-z0-9_.\-]+\))"
_URL = re.compile(
    r"https?://(?P<host>[A-Za-z0-9.\-]+)/(?P<owner>[A-Za-z0-9_.\-]+)/(?P<name>[A-Za-z0-9_.\-]+)"
    r"/(?:-/)?blob/(?P<ref>[^/\s]+)/(?P<path>[^\s#?)\]>\"'`|]+)"
    r"#L(?P<l1>\d+)(?:C\d+)?(?:-L?(?P<l2>\d+)(?:C\d+)?)?"
)
_MENTION = re.compile(
    r"(?<![A-Za-z0-9_./@~+\-\\])"
    rf"(?P<path>(?:\./|/)?(?:{_DIR}/)*{_SEG})"
    r"(?:"
    r"#L(?P<h1>\d+)(?:C\d+)?(?:[-–]L?(?P<h2>\d+)(?:C\d+)?)?"
    r"|"
    r":(?P<c1>\d+)(?:(?:[-–](?P<c2>\d+))|(?::(?P<col>\d+)))?"
    r"(?P<more>(?:,[ ]?\d+(?:[-–]\d+)?)*)"
    r")(?![0-9])"
)
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")
_MORE = re.compile(r"(\d+)(?:[-–](\d+))?")
_FENCE = re.compile(r"^\s*(```|~~~)")

# Line numbers given in words (the bench's own patterns, written from what the
# stores hold; not the verifier's grammar). Each row gets the flag ``in_words``.
#   words_after:  `path` lines 28-76 | path (line 5) | path: Lines 1-3, 9 | path Line 11
#   l_after:      path L112-113 | path (L125-155) | path (L1-13, L40-66) | path:L42
#   ja_line:      `path`（行1258-1298付近） | path: 3行目
#   words_before: Line 316 of `path` | lines 695-718 in `path`
# A further item of a list ("lines 98, 182", "L5, L104", "lines 255 and 272") is its own row (form
# ``words_list``). Lengths ("path (394 lines)", "path（394行）") have the number
# before the word and are not read.
_WPATH = rf"(?<![A-Za-z0-9_./@~+\-\\])(?P<path>(?:\./|/)?(?:{_DIR}/)*{_SEG})"
_NUM = r"\d+(?:\s?[-–~〜]\s?L?\d+)?"
_WORD_ITEMS = rf"(?P<items>(?:(?:\s?,\s?(?:and\s)?|\sand\s)L?{_NUM})*)"
_WORDS_AFTER = re.compile(
    _WPATH + r"[`*]{0,3}"
    r"(?:\s?[(（]\s?|\s?[:：]\s?|[ ])"
    r"(?:(?P<w>(?:[Ll]ines?|LINES?)\s?)(?P<wn>" + _NUM + r")"
    r"|(?P<l>L)(?P<ln>" + _NUM + r")"
    r"|(?P<g>行)(?P<gn>" + _NUM + r")"
    r"|(?P<mn>\d+)(?P<m>行目))" + _WORD_ITEMS + r"(?![0-9])"
)
_WORDS_BEFORE = re.compile(
    r"(?<![A-Za-z])(?:[Ll]ines?|LINES?)\s(?P<wn>"
    + _NUM
    + r")"
    + _WORD_ITEMS
    + r"\s(?:of|in)\s[`*]{0,3}"
    + _WPATH
    + r"(?![A-Za-z0-9_/@~+\-])"
)
_WORD_RANGE = re.compile(r"L?(\d+)(?:\s?[-–~〜]\s?L?(\d+))?")


def _word_rows(
    raw: str, i: int, busy: list[tuple[int, int]], flags_base: list[str]
) -> list[Mention]:
    """Mentions whose line number is given in words (see the patterns above)."""
    out: list[Mention] = []
    for rx, before in ((_WORDS_AFTER, False), (_WORDS_BEFORE, True)):
        for m in rx.finditer(raw):
            path = m["path"]
            last = path.rsplit("/", 1)[-1]
            if not _EXT.search(last) or ".." in last or "//" in path:
                continue  # ".." also: "base_ref...HEAD (line 150)" is a git range
            if any(a < m.end() and m.start() < b for a, b in busy):
                continue
            if before:
                form, num = "words_before", m["wn"]
            elif m["w"]:
                form, num = "words_after", m["wn"]
            elif m["l"]:
                form, num = "l_after", m["ln"]
            else:
                form, num = "ja_line", m["gn"] or m["mn"]
                if m["mn"] and m["items"]:
                    continue  # "3行目, 5": not a list seen in the stores
            r = _WORD_RANGE.fullmatch(num)
            assert r is not None
            a, b = int(r[1]), (int(r[2]) if r[2] else None)
            col = m.start("path")
            flags = [*flags_base, "in_words"]
            items = m["items"] or ""
            whole = m.group(0)
            first = whole[: len(whole) - len(items)] if items and not before else whole
            end = b if b is not None and b != a else None
            out.append(Mention(i, col, first, path, a, end, form, flags))
            for it in _WORD_RANGE.finditer(items):
                x, y = int(it[1]), (int(it[2]) if it[2] else None)
                out.append(
                    Mention(
                        i,
                        m.start("items") + it.start(),
                        it.group(0),
                        path,
                        x,
                        y if y is not None and y != x else None,
                        "words_list",
                        [*flags, "list_item_of:" + first],
                    )
                )
            busy.append(m.span())
    return out


@dataclass
class Mention:
    memory_line: int  # 1-based line in the memory file (at now)
    col: int  # 0-based character offset of the mention in that line
    mention: str  # as written (the whole matched text)
    path_as_written: str
    line: int
    end_line: int | None
    form: str  # colon | range | col | hash | hash_range | list | url
    flags: list[str] = field(default_factory=list)
    url_repo: str | None = None
    url_ref: str | None = None


def detect(text_lines: list[str]) -> list[Mention]:
    """Every mention in a memory file, in order."""
    out: list[Mention] = []
    in_code = False
    for i, raw in enumerate(text_lines, start=1):
        if _FENCE.match(raw):
            in_code = not in_code
            flags_base = ["code_fence_line"]
        else:
            flags_base = ["code_block"] if in_code else []
        taken: list[tuple[int, int]] = []
        spans: list[tuple[int, int]] = []
        for m in _URL.finditer(raw):
            taken.append(m.span())
            l1 = int(m["l1"])
            l2 = int(m["l2"]) if m["l2"] else None
            flags = list(flags_base)
            if re.fullmatch(r"[0-9a-f]{40}", m["ref"]):
                flags.append("url_permalink")
            out.append(
                Mention(
                    i,
                    m.start(),
                    m.group(0),
                    m["path"],
                    l1,
                    l2 if l2 is not None and l2 != l1 else None,
                    "url",
                    flags,
                    f"{m['owner']}/{m['name']}",
                    m["ref"],
                )
            )
        for m in _MENTION.finditer(raw):
            if any(a <= m.start() < b for a, b in taken):
                continue
            path = m["path"]
            last = path.rsplit("/", 1)[-1]
            if not _EXT.search(last) or last.startswith("..") or "//" in path:
                continue
            flags = list(flags_base)
            if m["h1"]:
                l1, l2 = int(m["h1"]), (int(m["h2"]) if m["h2"] else None)
                form = "hash_range" if l2 else "hash"
            else:
                l1 = int(m["c1"])
                l2 = int(m["c2"]) if m["c2"] else None
                form = "range" if l2 else ("col" if m["col"] else "colon")
            spans.append(m.span())
            whole = m.group(0)
            more = m["more"] or ""
            first_text = whole[: len(whole) - len(more)] if more else whole
            out.append(
                Mention(
                    i,
                    m.start(),
                    first_text,
                    path,
                    l1,
                    l2 if l2 is not None and l2 != l1 else None,
                    form,
                    flags,
                )
            )
            if more:
                # "file.py:12,15-18": each further item is a mention of the same file
                base = m.start() + len(first_text)
                for mm in _MORE.finditer(more):
                    a = int(mm.group(1))
                    b = int(mm.group(2)) if mm.group(2) else None
                    out.append(
                        Mention(
                            i,
                            base + mm.start(),
                            mm.group(0),
                            path,
                            a,
                            b if b is not None and b != a else None,
                            "list",
                            [*flags, "list_item_of:" + first_text],
                        )
                    )
        busy = [*taken, *spans]
        out.extend(_word_rows(raw, i, busy, flags_base))
    return out


# --------------------------------------------------------------------------
# trees, diffs, line mapping
# --------------------------------------------------------------------------


@dataclass
class Tree:
    files: set[str]
    gitlinks: list[str]
    by_base: dict[str, list[str]]


def _tree_from_paths(paths: list[str], gitlinks: list[str]) -> Tree:
    by_base: dict[str, list[str]] = defaultdict(list)
    for p in paths:
        by_base[p.rsplit("/", 1)[-1]].append(p)
    return Tree(set(paths), gitlinks, by_base)


@dataclass
class Hunk:
    a: int
    b: int
    c: int
    d: int
    minus: list[str]
    plus: list[str]


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_hunks(diff: str) -> tuple[list[Hunk], bool]:
    hunks: list[Hunk] = []
    binary = False
    cur: Hunk | None = None
    for ln in diff.split("\n"):
        h = _HUNK.match(ln)
        if h:
            cur = Hunk(
                int(h[1]),
                int(h[2]) if h[2] is not None else 1,
                int(h[3]),
                int(h[4]) if h[4] is not None else 1,
                [],
                [],
            )
            hunks.append(cur)
        elif cur is not None and ln.startswith("-"):
            cur.minus.append(ln[1:])
        elif cur is not None and ln.startswith("+"):
            cur.plus.append(ln[1:])
        elif ln.startswith("Binary files"):
            binary = True
    return hunks, binary


def map_line(n: int, hunks: list[Hunk]) -> tuple[str, int, Hunk | None]:
    """Where old line n is on the new side: ('kept', new, None) or ('deleted', guess, hunk)."""
    offset = 0
    for h in hunks:
        if h.b == 0:  # pure insertion after old line h.a
            if n > h.a:
                offset += h.d
                continue
            break
        if n < h.a:
            break
        if n < h.a + h.b:
            k = n - h.a
            guess = h.c + min(k, h.d - 1) if h.d > 0 else None
            return "deleted", guess, h
        offset += h.d - h.b
    return "kept", n + offset, None


def added_lines(hunks: list[Hunk]) -> dict[int, str]:
    out: dict[int, str] = {}
    for h in hunks:
        for k, t in enumerate(h.plus):
            out[h.c + k] = t
    return out


def trivial(text: str) -> bool:
    return len(re.sub(r"[^A-Za-z0-9]", "", text)) < 4


def clip(lines: list[str]) -> str:
    """Cited text for the table: short blocks whole, long ones first 3 + last line."""
    lines = [x.rstrip("\r") for x in lines]
    if len(lines) <= 5:
        return "\n".join(lines)
    return "\n".join([*lines[:3], f"… ({len(lines) - 4} lines) …", lines[-1]])


# --------------------------------------------------------------------------
# the truth builder
# --------------------------------------------------------------------------


class Builder:
    def __init__(
        self, git: Git, repo: str, head: str | None, worktree: str | None, with_text: bool = True
    ):
        self.git = git
        self.repo = repo
        self.worktree = worktree
        self.with_text = with_text
        self.head = head if worktree is None else None
        self.head_sha = (
            git.text("rev-parse", "--verify", head + "^{commit}").strip()
            if head
            else git.text("rev-parse", "HEAD").strip()
        )
        self._trees: dict[str, Tree] = {}
        self._lines: dict[tuple[str, str], list[str] | None] = {}
        self._diffs: dict[tuple[str, str, str], tuple[list[Hunk], bool]] = {}
        self._renames: dict[str, dict[str, str]] = {}

    # ---- sides -----------------------------------------------------------
    def tree(self, rev: str) -> Tree:
        if rev not in self._trees:
            if rev == "WORKTREE":
                paths = [p for p in self.git.text("ls-files", "-z").split("\0") if p]
                stage = self.git.text("ls-files", "-s", "-z").split("\0")
                links = [e.split("\t", 1)[1] for e in stage if e.startswith("160000 ")]
                paths = [p for p in paths if p not in links]
                self._trees[rev] = _tree_from_paths(paths, links)
            else:
                paths, links = [], []
                for e in self.git.text("ls-tree", "-r", "-z", "--full-tree", rev).split("\0"):
                    if not e:
                        continue
                    meta, p = e.split("\t", 1)
                    (links if meta.split()[1] == "commit" else paths).append(p)
                self._trees[rev] = _tree_from_paths(paths, links)
        return self._trees[rev]

    def lines(self, rev: str, path: str) -> list[str] | None:
        key = (rev, path)
        if key not in self._lines:
            if rev == "WORKTREE":
                f = Path(self.worktree) / path
                self._lines[key] = split_lines(f.read_bytes()) if f.is_file() else None
            else:
                data = self.git.blob(rev, path)
                self._lines[key] = split_lines(data) if data is not None else None
        return self._lines[key]

    @property
    def now(self) -> str:
        return "WORKTREE" if self.worktree else self.head_sha

    def diff(self, c: str, old: str, new: str) -> tuple[list[Hunk], bool]:
        key = (c, old, new)
        if key not in self._diffs:
            args = ["diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv"]
            if old != new:
                args.append("-M")
            args.append(c)
            if not self.worktree:
                args.append(self.head_sha)
            args += ["--", old] + ([new] if new != old else [])
            self._diffs[key] = parse_hunks(self.git.text(*args))
        return self._diffs[key]

    def renames_from(self, c: str) -> dict[str, str]:
        if c not in self._renames:
            args = ["diff", "-M", "--name-status", "-z", "--diff-filter=R", c]
            if not self.worktree:
                args.append(self.head_sha)
            parts = self.git.text(*args).split("\0")
            out: dict[str, str] = {}
            i = 0
            while i + 2 < len(parts):
                if parts[i].startswith("R"):
                    out[parts[i + 1]] = parts[i + 2]
                    i += 3
                else:
                    i += 2
            self._renames[c] = out
        return self._renames[c]

    # ---- blame -----------------------------------------------------------
    def blame(self, path: str) -> dict[int, tuple[str, int]]:
        """memory line (at now) -> (commit that last changed it, its line number there)."""
        args = ["blame", "--porcelain"]
        if not self.worktree:
            args.append(self.head_sha)
        out = self.git.text(*([*args, "--", path]))
        res: dict[int, tuple[str, int]] = {}
        for ln in out.split("\n"):
            if ln.startswith("\t"):
                continue
            parts = ln.split(" ")
            if (
                len(parts) >= 3
                and len(parts[0]) == 40
                and parts[1].isdigit()
                and parts[2].isdigit()
            ):
                res[int(parts[2])] = (parts[0], int(parts[1]))
        return res

    # ---- resolution ------------------------------------------------------
    def resolve(self, tree: Tree, written: str) -> tuple[str, str | None, list[str]]:
        p = written
        while p.startswith("./"):
            p = p[2:]
        p = p.lstrip("/")
        for link in tree.gitlinks:
            if p == link or p.startswith(link + "/"):
                return "in_submodule", link, []
        if p in tree.files:
            return "exact", p, []
        base = p.rsplit("/", 1)[-1]
        cands = sorted(q for q in tree.by_base.get(base, []) if q == p or q.endswith("/" + p))
        if len(cands) == 1:
            return "suffix", cands[0], []
        if cands:
            return "ambiguous", None, cands
        return "no_file", None, []

    # ---- one mention -----------------------------------------------------
    def judge(self, mfile: str, m: Mention, c: str, orig_line: int) -> dict:
        row = {
            "repo": self.repo,
            "head": self.head_sha if not self.worktree else "WORKTREE",
            "memory_file": mfile,
            "memory_line": m.memory_line,
            "col": m.col,
            "mention": m.mention,
            "form": m.form,
            "path_as_written": m.path_as_written,
            "resolved_path": None,
            "line": m.line,
            "end_line": m.end_line,
            "memory_commit": c,
            "memory_line_at_commit": orig_line,
            "truth": None,
            "new_path": None,
            "new_line": None,
            "new_end_line": None,
            "text_then": None,
            "text_now": None,
            "candidates": [],
            "flags": list(m.flags),
        }
        flags = row["flags"]
        if m.form == "url" and m.url_repo and m.url_repo.lower() != self.repo.lower():
            row["truth"] = "other_repo"
            flags.append("url_repo:" + m.url_repo)
            return row
        if m.url_ref:
            flags.append("url_ref:" + m.url_ref)
        then_rev = "WORKTREE" if c == UNCOMMITTED else c
        if c == UNCOMMITTED:
            flags.append("uncommitted_memory_line")
        how, path, cands = self.resolve(self.tree(then_rev), m.path_as_written)
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
            if m.path_as_written.startswith(("~", "/")):
                flags.append("path_outside_repo")
            h2, p2, _ = self.resolve(self.tree(self.now), m.path_as_written)
            if h2 in ("exact", "suffix"):
                flags.append("exists_at_now:" + p2)
            return row
        if how == "suffix":
            flags.append("resolved_by_suffix")
        row["resolved_path"] = path
        then = self.lines(then_rev, path) or []
        start, end = m.line, (m.end_line if m.end_line is not None else m.line)
        if end < start:
            flags.append("reversed_range")
            start, end = end, start
        if start < 1 or end > len(then):
            row["truth"] = "out_of_range"
            flags.append(f"lines_at_commit:{len(then)}")
            return row
        cited = then[start - 1 : end]
        row["text_then"] = clip(cited)
        if len(cited) > 5:
            row["block_sha1_then"] = hashlib.sha1("\n".join(cited).encode()).hexdigest()
        if end == start and trivial(cited[0]):
            flags.append("trivial_line")

        # where is the file now?
        now_tree = self.tree(self.now)
        new_path = path
        if c == UNCOMMITTED:
            # written against the working tree as it is: nothing to follow
            row["new_path"], row["new_line"] = path, start
            row["new_end_line"] = m.end_line
            row["text_now"] = row["text_then"]
            row["truth"] = "valid"
            return row
        if path not in now_tree.files:
            ren = self.renames_from(c).get(path)
            if ren is None:
                row["truth"] = "missing"
                self._elsewhere(cited, flags)
                return row
            new_path = ren
            flags.append("renamed_file")
        hunks, binary = self.diff(c, path, new_path)
        now_lines = self.lines(self.now, new_path) or []
        row["new_path"] = new_path
        if binary:
            flags.append("binary")
        maps = [map_line(n, hunks) for n in range(start, end + 1)]
        if all(k == "kept" for k, _, _ in maps) and not binary:
            ns, ne = maps[0][1], maps[-1][1]
            row["new_line"] = ns
            row["new_end_line"] = ne if m.end_line is not None else None
            if m.end_line is not None and (ne - ns) != (end - start):
                flags.append("range_length_changed")
            row["text_now"] = clip(now_lines[ns - 1 : ne])
            if new_path != path:
                row["truth"] = "renamed"
            elif ns == start and ne == end:
                row["truth"] = "valid"
            else:
                row["truth"] = "moved"
            return row
        # some cited line was changed or deleted by the diff
        kind, guess, hunk = next((x for x in maps if x[0] == "deleted"), maps[0])
        plus = added_lines(hunks)
        if start == end:
            target = cited[0]
            hits = sorted(n for n, t in plus.items() if t == target)
            if not hits and any(t.strip() == target.strip() for t in plus.values()):
                flags.append("whitespace_only_readded")
        else:
            hits = []
            k = len(cited)
            for s in range(1, len(now_lines) - k + 2):
                if now_lines[s - 1 : s - 1 + k] == cited and any((s + j) in plus for j in range(k)):
                    hits.append(s)
        if len(hits) == 1:
            row["truth"] = "renamed" if new_path != path else "moved"
            row["new_line"] = hits[0]
            row["new_end_line"] = hits[0] + (end - start) if m.end_line is not None else None
            row["text_now"] = clip(now_lines[hits[0] - 1 : hits[0] + end - start])
            flags.append("block_move")
            return row
        if len(hits) > 1:
            row["truth"] = "ambiguous_move"
            row["candidates"] = [f"{new_path}:{h}" for h in hits[:20]]
            flags.append("exclude")
            return row
        row["truth"] = "stale"
        ws = []
        for n, (k, _, h) in zip(range(start, end + 1), maps, strict=False):
            if k == "deleted" and h is not None:
                j = n - h.a
                ws.append(j < len(h.plus) and h.plus[j].strip() == cited[n - start].strip())
        if ws and all(ws):
            flags.append("whitespace_only_change")
        if new_path != path:
            flags.append("stale_after_rename")
        if hunk is not None and hunk.d == 0:
            flags.append("deleted")
        else:
            flags.append("changed")
        pos = guess if kind == "deleted" else maps[0][1]
        if pos is not None and 1 <= pos <= len(now_lines):
            row["new_line"] = pos
            row["text_now"] = clip(now_lines[pos - 1 : pos - 1 + (end - start) + 1])
        return row

    def history_kept(self, row: dict) -> bool:
        """Second opinion: does ``git blame --reverse C..now`` see the cited lines at now?

        blame walks the history commit by commit, the direct diff compares C and
        now only; rows where they differ get the flag ``history_disagrees``.
        """
        if row["memory_commit"] == self.head_sha:
            return True  # written at now: no history to walk (`blame --reverse C..C` fails)
        end = row["end_line"] or row["line"]
        out = self.git.text(
            "blame",
            "--reverse",
            "--porcelain",
            "-L",
            f"{row['line']},{end}",
            f"{row['memory_commit']}..{self.head_sha}",
            "--",
            row["resolved_path"],
        )
        last = {
            p[0]
            for p in (ln.split(" ") for ln in out.split("\n"))
            if len(p) >= 3 and len(p[0]) == 40 and p[1].isdigit()
        }
        return last == {self.head_sha}

    def _elsewhere(self, cited: list[str], flags: list[str]) -> None:
        """For a deleted file: is the first cited line's exact text somewhere else now?

        Not part of the truth (git says the file is gone); a hint for analysing
        verifiers that search the tree (e.g. a module split into a package).
        """
        text = cited[0].rstrip("\r")
        if trivial(text) or self.worktree:
            return
        out = self.git.run("grep", "-n", "-F", "-I", "-e", text, self.head_sha, ok_codes=(0, 1))
        hits = []
        for ln in out.decode("utf-8", errors="replace").split("\n"):
            parts = ln.split(":", 3)  # rev:path:line:text
            if len(parts) == 4 and parts[3] == text and not parts[1].startswith(MEMORY_DIR):
                hits.append(f"{parts[1]}:{parts[2]}")
        if len(hits) == 1:
            flags.append("text_elsewhere_at_now:" + hits[0])
        elif hits:
            flags.append(f"text_elsewhere_at_now:{len(hits)}_places")

    # ---- whole repository ------------------------------------------------
    def memory_files(self) -> list[str]:
        """Every file under .serena/memories/, markdown or not (run() skips binary ones)."""
        tree = self.tree(self.now)
        return sorted(p for p in tree.files if p.startswith(MEMORY_DIR))

    def _binary_memories(self) -> set[str]:
        if not hasattr(self, "_bin"):
            self._bin = set()
            for p in self.memory_files():
                if self.worktree:
                    data = (Path(self.worktree) / p).read_bytes()
                else:
                    data = self.git.blob(self.head_sha, p) or b""
                if b"\0" in data[:8000]:
                    self._bin.add(p)
        return self._bin

    def run(self) -> tuple[list[dict], dict]:
        rows: list[dict] = []
        stats = Counter()
        for mfile in self.memory_files():
            if mfile in self._binary_memories():
                stats["binary_memory_files_skipped"] += 1
                continue
            stats["memories"] += 1
            text = self.lines(self.now, mfile) or []
            ments = detect(text)
            if not ments:
                continue
            stats["memories_with_mentions"] += 1
            blame = self.blame(mfile)
            for m in ments:
                c, orig = blame.get(m.memory_line, (UNCOMMITTED, m.memory_line))
                row = self.judge(mfile, m, c, orig)
                if (
                    row["truth"] in ("valid", "moved", "renamed", "stale")
                    and not self.worktree
                    and c != UNCOMMITTED
                ):
                    kept_by_diff = row["truth"] != "stale" and "block_move" not in row["flags"]
                    if self.history_kept(row) != kept_by_diff:
                        row["flags"].append("history_disagrees")
                if not self.with_text:
                    for k in ("text_then", "text_now"):
                        if row[k] is not None:
                            row[k + "_sha1"] = hashlib.sha1(row[k].encode()).hexdigest()
                            row[k] = None
                    row["flags"].append("text_withheld")
                rows.append(row)
        return rows, dict(stats)


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def load_repos() -> list[dict]:
    import yaml  # only needed for --all

    with open(HERE / "repos.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)["repos"]


def git_dir_for(entry: dict) -> str:
    for cand in [
        entry.get("git_dir_hint", ""),
        "/work/.mirror/" + entry["repo"].replace("/", "+") + "/repo",
    ]:
        if cand and Path(cand).exists():
            return cand
    raise SystemExit(
        f"no git dir for {entry['repo']}: fetch it first (hint {entry.get('git_dir_hint')})"
    )


def write_rows(rows: list[dict], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n")


TRUTHS = [
    "valid",
    "moved",
    "renamed",
    "stale",
    "missing",
    "out_of_range",
    "ambiguous",
    "ambiguous_move",
    "no_file",
    "in_submodule",
    "other_repo",
]


def summary(entries: list[dict], results: dict[str, tuple[list[dict], dict, int]]) -> str:
    head = [
        "repo",
        "split",
        "language",
        "commits",
        "memories",
        "with mentions",
        "mentions",
        "block_move",
        *TRUTHS,
    ]
    out = [
        "# Mention truth: summary",
        "",
        "Generated by `build_truth.py --all` (do not edit by hand). `commits` = commits",
        "reachable from the truth commit; `memories` = files under `.serena/memories/` there;",
        "`block_move` = rows labelled moved/renamed only through the re-added-text rule.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    tot = Counter()
    for e in entries:
        if e["repo"] not in results:
            continue
        rows, stats, ncommits = results[e["repo"]]
        dist = Counter(r["truth"] for r in rows)
        bm = sum(1 for r in rows if "block_move" in r["flags"])
        vals = [
            e["repo"],
            e["split"],
            e["language"],
            ncommits,
            stats.get("memories", 0),
            stats.get("memories_with_mentions", 0),
            len(rows),
            bm,
        ] + [dist.get(t, 0) for t in TRUTHS]
        out.append("| " + " | ".join(str(v) for v in vals) + " |")
        for t in TRUTHS:
            tot[t] += dist.get(t, 0)
        tot["mentions"] += len(rows)
        tot["bm"] += bm
        tot["memories"] += stats.get("memories", 0)
        tot["with"] += stats.get("memories_with_mentions", 0)
    out.append(
        "| **all** | | | | "
        + " | ".join(str(tot[k]) for k in ("memories", "with", "mentions", "bm"))
        + " | "
        + " | ".join(str(tot[t]) for t in TRUTHS)
        + " |"
    )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git-dir")
    ap.add_argument("--worktree", help="a work tree: its working files are 'now'")
    ap.add_argument("--head", help="the 'now' commit (default HEAD)")
    ap.add_argument("--repo", help="owner/name (matches blob URLs into this repository)")
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--with-text",
        action="store_true",
        help="store the cited text itself (local debugging only: committed truth files hold "
        "only its sha1, never fetched code)",
    )
    ap.add_argument("--all", action="store_true", help="every repository in repos.yaml")
    ap.add_argument("--only", nargs="*", default=None, help="with --all: these repos only")
    a = ap.parse_args(argv)

    if a.all:
        entries = load_repos()
        results = {}
        tdir = HERE / "truth"
        for e in entries:
            if a.only and e["repo"] not in a.only:
                continue
            gd = git_dir_for(e)
            b = Builder(Git(git_dir=gd), e["repo"], e["commit"], None, with_text=a.with_text)
            rows, stats = b.run()
            n = int(b.git.text("rev-list", "--count", b.head_sha).strip())
            write_rows(rows, tdir / (e["repo"].replace("/", "__") + ".jsonl"))
            results[e["repo"]] = (rows, stats, n)
            print(
                f"{e['repo']}: {len(rows)} mentions in {stats.get('memories_with_mentions', 0)}"
                f"/{stats.get('memories', 0)} memories",
                file=sys.stderr,
            )
        if not a.only:
            (tdir / "SUMMARY.md").write_text(summary(entries, results), encoding="utf-8")
        return 0

    if not a.repo or not a.out or not (a.git_dir or a.worktree):
        ap.error("--repo, --out and --git-dir or --worktree are required (or --all)")
    git = Git(work_tree=a.worktree) if a.worktree else Git(git_dir=a.git_dir)
    b = Builder(
        git,
        a.repo,
        a.head or ("HEAD" if not a.worktree else None),
        a.worktree,
        with_text=a.with_text,
    )
    rows, stats = b.run()
    write_rows(rows, a.out)
    dist = Counter(r["truth"] for r in rows)
    print(json.dumps({"mentions": len(rows), **stats, "truth": dict(dist)}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
