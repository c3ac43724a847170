"""The first-parent history of the folder holding the memory files, walked once per run.

Which commit last changed each memory line is read from the diffs of the memory files
along the first-parent line (line_origins.py). `git log -p -- <58 files>` spends most of
its time matching each path of each commit against every file named; the same walk
limited to one folder costs a third as much. So the walk lists which files each commit
changed, with their object ids (`git log --raw` of the folder), and the rest is asked
only where it is needed: the diffs of the files changed more than once, in one `git
diff-tree --stdin` limited to those files, put back in the order and form `git log -p`
gives them. A file created once and never changed since has no diff to read at all:
every line it has is its creating commit's, which the walk names. A folder that is the
whole repository (memory files with nothing in common) is not worth walking: `git log
-p` of the files is asked instead.

Without a commit-graph, the walk is the least a first run can cost: git inflates every
commit of the first-parent line to find its parent (on rjmurillo/ai-agents, 2,621
commits holding 11 MB of messages: 0.07 s of the walk's 0.10 s).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import run_git

QUIET = ("-c", "core.quotePath=false")
# `-w`: a commit that only changes a memory line's spaces or line ending (a file turned
# CRLF, trailing spaces stripped) did not write what the line says; the line keeps the
# commit that did (git blame -w, blame.py, agrees).
DIFF = ("-U0", "--no-color", "--no-ext-diff", "--no-renames", "-w")
LOG = ("--first-parent", "-m", "--reverse", "-p", *DIFF, "--format=@@@%H %P")
SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SHA_ROW = re.compile(rf"^{SHA.pattern}$", re.MULTILINE)


class Change(NamedTuple):
    """One commit's change to one file, as `git log --raw` lists it."""

    at: int  # the commit's place on the walked line (oldest first)
    status: str  # A, M, D, T
    oid: str  # the file's object id after the change (zeros when deleted)


class FolderLog:
    """The walk of one folder's first-parent history, read once and asked many times."""

    def __init__(self, git: Git, folder: str) -> None:
        self.git = git
        self.folder = folder
        self._commits: list[tuple[str, str]] | None = None  # (commit, parents), oldest first
        self._bodies: dict[int, str] = {}  # commit index -> its raw listing
        self._changed: dict[str, list[tuple[int, str]]] | None = None  # path -> (at, raw)
        self._at: dict[str, int] | None = None
        self._deleted: dict[int, dict[str, list[str]]] = {}
        self._read: dict[str, list[Change]] = {}  # changes() answers, by path

    def covers(self, paths: Sequence[str]) -> bool:
        return bool(self.folder) and all(p.startswith(self.folder + "/") for p in paths)

    def commits(self) -> list[tuple[str, str]]:
        """The first-parent commits walked (all of them, or without a commit-graph only those
        changing the folder), oldest first, with their parents."""
        if self._commits is None:
            self._walk()
        assert self._commits is not None
        return self._commits

    def is_merge(self, at: int) -> bool:
        return " " in self.commits()[at][1]

    def index(self, sha: str) -> int | None:
        """A commit's place on the walked line (None: not on it)."""
        if self._at is None:
            self._at = {sha: n for n, (sha, _) in enumerate(self.commits())}
        return self._at.get(sha)

    def changes(self, path: str) -> list[Change]:
        """The commits that changed a file of the folder, oldest first."""
        changed = self._changed
        if changed is None:
            self.commits()
            changed = self._changed = {}
            for at, body in self._bodies.items():
                fields = body.split("\0")
                for raw, path in zip(fields[::2], fields[1::2], strict=False):
                    changed.setdefault(path, []).append((at, raw))
        found = self._read.get(path)
        if found is None:
            found = self._read[path] = [_change(at, raw) for at, raw in changed.get(path, ())]
        return found

    def deleted_at(self, at: int) -> dict[str, list[str]]:
        """The files one walked commit deleted from the folder, by the object id they had."""
        found = self._deleted.get(at)
        if found is None:
            self.commits()
            found = self._deleted[at] = {}
            fields = self._bodies.get(at, "").split("\0")
            for n in range(0, len(fields) - 1, 2):
                if fields[n].endswith(" D"):  # ":old_mode new_mode old_id new_id D"
                    found.setdefault(fields[n].split(" ")[2], []).append(fields[n + 1])
        return found

    def patches(self, paths: Sequence[str], before: str | None = None) -> str:
        """What `git log --first-parent -m --reverse -p -U0 <before>^ -- <paths>` prints
        (HEAD when `before` is None), in the form line_origins' replay reads."""
        start = "HEAD" if before is None else before + "^"
        if not self.covers(paths):
            return run_git(self.git, *QUIET, "log", *LOG, start, "--", *paths)
        commits = self.commits()
        end = len(commits)
        if before is not None:
            found = self.index(before)
            if found is None:  # not on the walked line: ask git the long way
                return run_git(self.git, *QUIET, "log", *LOG, start, "--", *paths)
            end = found
        wanted = sorted({c.at for p in paths for c in self.changes(p) if c.at < end})
        if not wanted:
            return ""
        stdin = "".join(
            f"{sha} {parents.split(' ', 1)[0]}\n" if parents else f"{sha}\n"
            for sha, parents in (commits[n] for n in wanted)
        )
        out = run_git(
            self.git, *QUIET, "diff-tree", "--stdin", "--root", "-p", *DIFF, "--", *paths,
            stdin=stdin,
        )  # fmt: skip
        parts = []
        shown = _by_commit(out)
        for sha, parents in (commits[n] for n in wanted):
            parts.append(f"@@@{sha} {parents}")
            parts.extend(shown.get(sha, ()))
        return "\n".join(parts) + "\n"

    def _walk(self) -> None:
        """One `git log --raw` of the folder: the commits changing it, and what they changed.

        The run also needs HEAD's whole first-parent history with commit times. Without a
        commit-graph git parses every commit of the walk anyway, so the walk lists them
        all (`--sparse`) with their times. With one, printing a commit's time makes git
        parse the commit it could otherwise skip (0.09 s instead of 0.03 s for 2,624
        commits): the walk lists only the commits changing the folder, and the times
        come from `git rev-list --timestamp`, which reads them from the graph."""
        graph = has_commit_graph(self.git)
        out = run_git(
            self.git, "log", "--first-parent", "-m", "--reverse", *(() if graph else ("--sparse",)),
            "--raw", "-z", "--no-renames", "--no-abbrev",
            "--format=@@@%H %P" if graph else "--format=@@@%H %ct %T %P", "HEAD", "--",
            self.folder,
        )  # fmt: skip
        # Each commit is "@@@<header>\0", then "\n" and its changes ("<raw>\0<path>\0" each)
        # when it has any: split per commit in C, each listing read only when asked.
        commits: list[tuple[str, str]] = []
        times: list[int] = []
        trees: list[str] = []  # each commit's root tree, for Git.first_trees
        bodies = self._bodies
        for part in out.removeprefix("@@@").split("\0@@@") if out else ():
            header, _, body = part.partition("\0")
            sha, _, rest = header.partition(" ")
            if not graph:
                time, _, rest = rest.partition(" ")
                tree, _, rest = rest.partition(" ")
                times.append(int(time))
                trees.append(tree)
            if len(body) > 1:
                bodies[len(commits)] = body.removeprefix("\n")
            commits.append((sha, rest.strip()))
        self._commits = commits
        # Every first-parent commit is known now: the run's Git needs no walk of its own
        # (Git.first_parents).
        if graph:
            self._learn_first_parents()
        else:
            merges = frozenset(n for n, (_, parents) in enumerate(commits) if " " in parents)
            self.git.learn_first_parents(times, [sha for sha, _ in commits], trees, merges)

    def _learn_first_parents(self) -> None:
        try:
            out = run_git(
                self.git, "rev-list", "--first-parent", "--timestamp", "--reverse", "HEAD"
            )
        except GitError:
            return  # the run's Git walks it itself if asked
        times, shas = [], []
        for row in out.split("\n"):
            time, _, sha = row.partition(" ")
            if sha and time.isdigit():
                times.append(int(time))
                shas.append(sha)
        self.git.learn_first_parents(times, shas)


def _by_commit(out: str) -> dict[str, list[str]]:
    """`git diff-tree --stdin` output cut at the lines naming a commit (git names each
    before its diff): per commit, its rows, as runs of whole lines joined by newlines. Cut
    by a pattern over the whole text: a match of each of its 30,000 rows cost the corpus's
    first run 15 ms."""
    shown: dict[str, list[str]] = {}
    current: list[str] = []  # the rows before the first commit's line go nowhere
    at = 0  # where the rows after the last commit's line start
    for m in _SHA_ROW.finditer(out):
        if m.start() > at:  # rows between (a row is empty when two newlines meet)
            current.append(out[at : m.start() - 1])
        current = shown.setdefault(m.group(), [])
        at = m.end() + 1
    if at <= len(out):
        current.append(out[at:])
    return shown


def _change(at: int, raw: str) -> Change:
    parts = raw.split(" ")  # ":old_mode new_mode old_id new_id status"
    return Change(at, parts[-1], parts[3])


def has_commit_graph(git: Git) -> bool:
    """Whether git has a commit-graph for the repository (`git gc` writes one): in its
    object folder or one it borrows from (`objects/info/alternates`). A work tree whose
    `.git` is a file (a linked worktree, a submodule) is taken as having none."""
    objects = git.toplevel / ".git" / "objects"
    if not objects.is_dir():
        return False
    folders = [objects]
    try:
        borrowed = (objects / "info" / "alternates").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        borrowed = ""
    for line in borrowed.splitlines():
        if line.strip() and not line.startswith("#"):
            folders.append((objects / line.strip()).resolve())
    return any(
        (folder / "info" / "commit-graph").is_file()
        or (folder / "info" / "commit-graphs" / "commit-graph-chain").is_file()
        for folder in folders
    )
