"""Line maps from many commits at once, for the mentions the Verifier cannot settle from
their text alone.

The Verifier asks `line_maps` once per commit, a `git diff` process each (a store's
mentions are written at dozens of commits). Most cited files are the same in the
work tree as at HEAD; for those the diff from a commit to the work tree is the diff
between two trees, and `git diff-tree --stdin` takes many pairs of trees in one
process: each pair is the cited file's folder at the commit and at HEAD, limited to
the cited files' names. Git diffs every name of a process in every pair of it, so
the pairs are split between a few processes such that none diffs a file nobody asked
for where that can be avoided (a folder cited at many commits, a different file at
each). A file changed in the work tree, gone, or renamed is left to `git diff`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from memory_enhancement.verify.blame import GitHistory
from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import Tree, blob_hash, run_git
from memory_enhancement.verify.git_objects import to_git as _to_git
from memory_enhancement.verify.line_maps import Hunk, LineMap, parse_diff
from memory_enhancement.verify.repo import Repository

MAX_DIFF_BATCHES = 5
# In the hunks of a zero-context diff: a hunk's header, or a line it removes.
_HUNK_OR_REMOVED = re.compile(r"^(?:@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@.*|-(.*))$", re.M)


class MentionGit(Git):
    """The Git the Verifier asks about mentions: renames since each mention's commit
    (found by mention_diffs.mention_git), and line maps from many commits learned at
    once (see the module's docstring)."""

    def __init__(
        self,
        git: Git,
        renames: dict[str, str],
        tracked: frozenset[str] | None,
        history: GitHistory,
        repo: Repository,
    ) -> None:
        super().__init__(git.toplevel, git.prefix)
        self._history, self._repo = history, repo
        self.__dict__["renames"] = renames  # seeds the cached properties (see Git)
        if tracked is not None:
            self.__dict__["tracked"] = tracked
        self._known: dict[tuple[str, str], LineMap | None] = {}
        self._same: dict[str, bool] = {}  # path -> the work tree's file is HEAD's
        self._expected: dict[str, set[str]] = {}  # maps likely asked later, per commit

    def expect(self, wanted: Mapping[str, Iterable[str]]) -> None:
        """Line maps likely to be asked after the Verifier's (mention_diffs.follow_line_maps):
        learned with the Verifier's own, in the same processes."""
        for commit, paths in wanted.items():
            self._expected.setdefault(commit, set()).update(paths)

    def also_renamed(self, found: Mapping[str, str]) -> None:
        """Renames learned after the Verifier asked (deletions.renamed_by): the maps it
        learned of the old paths, as files deleted, are forgotten."""
        self.renames.update(found)
        self._known = {k: m for k, m in self._known.items() if k[1] not in found}

    def line_maps(self, base: str, paths: Iterable[str]) -> dict[str, LineMap]:
        wanted = set(paths)
        if wanted and all((base, p) in self._known for p in wanted):
            return {p: m for p in wanted if (m := self._known[(base, p)]) is not None}
        found = super().line_maps(base, wanted)
        for path in wanted:
            if path not in self.renames:  # its map does not depend on the other paths
                self._known[(base, path)] = found.get(path)
        return found

    def will_ask(self, wanted: Mapping[str, Iterable[str]]) -> None:
        """Learn at once the line maps of these files (per commit) that are the same in
        the work tree as at HEAD."""
        history, repo = self._history, self._repo
        merged = {c: set(paths) for c, paths in wanted.items()}
        for commit, paths in self._expected.items():
            merged.setdefault(commit, set()).update(paths)
        self._expected = {}
        asked = [
            (commit, path)
            for commit, paths in merged.items()
            for path in sorted(paths)
            if (commit, path) not in self._known and path not in self.renames and "\n" not in path
        ]
        folders = {(commit, _to_git(self, path).rpartition("/")[0]) for commit, path in asked}
        history.fetch(spec for c, f in folders for spec in (f"HEAD:{f}", f"{c}:{f}"))
        pairs: dict[str, list[tuple[str, str, str]]] = {}  # "old new" -> (commit, path, name)
        trees: dict[str, tuple[Tree, Tree]] = {}  # "old new" -> the two folders
        for commit, path in asked:
            folder, _, name = _to_git(self, path).rpartition("/")
            now, then = history.tree(f"HEAD:{folder}"), history.tree(f"{commit}:{folder}")
            if now is None or then is None:
                continue
            at_head, at_commit = now.get(name), then.get(name)
            if not _plain_file(at_head) or not _plain_file(at_commit):
                continue
            assert at_head is not None and at_commit is not None
            same = self._same.get(path)
            if same is None:  # read and hashed once, whatever the commits asked
                same = self._same[path] = _same_in_work_tree(repo, path, at_head[1])
            if not same:
                continue  # changed since HEAD: `git diff` from the commit says how
            if at_commit[1] == at_head[1]:
                self._known[(commit, path)] = None  # the same file: nothing moved
                continue
            line = f"{then.oid} {now.oid}"
            pairs.setdefault(line, []).append((commit, path, name))
            trees[line] = (then, now)
        names = {n.encode("utf-8", "surrogateescape"): n for a in pairs.values() for *_, n in a}
        changed = {}
        for line, (then, now) in trees.items():
            before, after = then.entries(), now.entries()
            common = before.keys() & after.keys() & names.keys()  # in C: few names are there
            changed[line] = {names[raw] for raw in common if before[raw] != after[raw]}
        for batch in _batches(pairs, changed):
            self._learn_pairs(batch)

    def _learn_pairs(self, pairs: dict[str, list[tuple[str, str, str]]]) -> None:
        """Diff these pairs of folders (limited to the names asked) in one process."""
        names = sorted({name for asked in pairs.values() for _, _, name in asked})
        stdin = "".join(line + "\n" for line in pairs)
        try:
            out = run_git(
                self, "--literal-pathspecs", "diff-tree", "--stdin", "-p", "-U0",
                "--no-renames", "--no-color", "--no-ext-diff", "--diff-filter=M", "--",
                *names, stdin=stdin,
            )  # fmt: skip
        except GitError:
            return
        # Git echoes each pair before its diff, which may hold other files of the folder
        # cited at other commits: only the files asked of this pair are read.
        starts = sorted((at, line) for line in pairs if (at := _line_at(out, line)) >= 0)
        sections: dict[str, str] = {}
        for (at, line), (end, _) in zip(starts, [*starts[1:], (len(out), "")], strict=True):
            headers = {f"a/{name} b/{name}" for _, _, name in pairs[line]}
            chunks = ("\n" + out[at + len(line) + 1 : end]).split("\ndiff --git ")
            sections[line] = "\n".join(
                "diff --git " + chunk
                for chunk in chunks[1:]
                if chunk.partition("\n")[0] in headers or chunk.startswith('"')
            )  # a quoted name is read to be sure
        for line, asked in pairs.items():
            if line not in sections:
                continue  # not echoed: left to `git diff`
            maps = _read_maps(sections[line])
            for commit, path, name in asked:
                found = maps.get(name)
                self._known[(commit, path)] = (
                    LineMap(path, path, found.hunks, found.removed) if found is not None else None
                )


def _read_maps(section: str) -> dict[str, LineMap]:
    """What `line_maps.parse_diff` reads of these files' diffs, by old path: each file's header
    read by it, its hunks by one regular expression in C (the lines a diff adds, half of
    a long diff, are not looked at one by one)."""
    maps: dict[str, LineMap] = {}
    for chunk in section.split("\ndiff --git "):
        header, sep, body = chunk.partition("\n@@ ")
        found = parse_diff(header)
        if not found:
            continue
        hunks: list[Hunk] = []
        removed: dict[int, str] = {}
        at = 0
        for match in _HUNK_OR_REMOVED.finditer("@@ " + body if sep else ""):
            if match.group(5) is None:
                old_start, old_count, new_start, new_count = match.group(1, 2, 3, 4)
                hunks.append(
                    Hunk(int(old_start), int(old_count or 1), int(new_start), int(new_count or 1))
                )
                at = hunks[-1].old_start
            else:
                removed[at] = match.group(5)
                at += 1
        head = found[-1]
        maps[head.old_path] = LineMap(head.old_path, head.new_path, tuple(hunks), removed)
    return maps


def _batches(
    pairs: dict[str, list[tuple[str, str, str]]],
    changed: Mapping[str, set[str]],
    most: int = MAX_DIFF_BATCHES,
) -> list[dict[str, list[tuple[str, str, str]]]]:
    """The pairs split so that git diffs no file nobody asked for: git diffs every name
    asked in a process in every pair of it, and a folder cited at many commits (one file
    at each) would have each of its cited files diffed at every one of those commits.
    `changed`: per pair, the names asked anywhere whose file differs between its two
    folders. A pair goes to the first process where it costs no such diff, else to a
    new one, else (past `most`) to the one where it costs the fewest."""
    batches: list[tuple[dict[str, list[tuple[str, str, str]]], set[str]]] = []

    def waste(batch: tuple[dict[str, list[tuple[str, str, str]]], set[str]], line: str) -> int:
        asked, names = batch
        mine = {name for _, _, name in pairs[line]}
        cost = len((names - mine) & changed[line])
        for other, wanted in asked.items():
            cost += len((mine - {name for _, _, name in wanted}) & changed[other])
        return cost

    for line in pairs:
        costs = [waste(batch, line) for batch in batches]
        if 0 in costs:
            n = costs.index(0)
        elif len(batches) < most:
            n = len(batches)
            batches.append(({}, set()))
        else:
            n = costs.index(min(costs))
        batches[n][0][line] = pairs[line]
        batches[n][1].update(name for _, _, name in pairs[line])
    return [asked for asked, _ in batches]


def _line_at(text: str, line: str) -> int:
    """Where a whole line of the text starts (-1: nowhere)."""
    at = text.find(line + "\n")
    while at > 0 and text[at - 1] != "\n":
        at = text.find(line + "\n", at + 1)
    return at


def _plain_file(entry: tuple[str, str] | None) -> bool:
    return entry is not None and entry[0] in ("100644", "100755")


def _same_in_work_tree(repo: Repository, path: str, oid: str) -> bool:
    """Whether the work tree's file has exactly the bytes of that blob."""
    file = repo.resolve(path)
    if file is None or os.path.islink(file):
        return False
    try:
        with open(file, "rb") as handle:
            return blob_hash(handle.read()) == oid
    except OSError:
        return False
