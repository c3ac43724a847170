"""What git remembers about a memory line: who last changed it, and the code then.

A prose mention (`src/app.py:42`) carries no snippet, but git knows the commit
that last changed the memory line holding it, and that commit's tree holds what
line 42 said when the mention was written. `GitHistory` asks git what the replay
of the memory files' history (line_origins.py) cannot tell: `git blame` of a
memory file whose lines a merge brought in (only the lines holding mentions), the
files of past commits, for a path written as a bare name or a partial path (the
work tree's list changed by chained diffs, not one `git ls-tree` per commit), and
reads files and folders at past commits through git_objects.GitObjects.

The answers do not change while the memory file does not, so
`mention_cache.MentionCache` keeps them in the state database keyed by the
file's blob hash: a rerun asks git nothing here.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath

from memory_enhancement.core.file_list import FileList
from memory_enhancement.core.remotes import remote_repository
from memory_enhancement.verify import first_parent_diffs
from memory_enhancement.verify.git import GitError
from memory_enhancement.verify.git_objects import GitObjects, from_git, run_git, to_git
from memory_enhancement.verify.staged import Staged

_UNCOMMITTED = "0" * 40
_BLAME_WORKERS = 8  # at most this many blames at once, however many cores


def _lines(lines: Iterable[str]) -> Counter[str]:
    """The lines of a memory file that say something, counted (blank ones are alike)."""
    return Counter(line.strip() for line in lines if line.strip())


@dataclass
class GitHistory(GitObjects):
    """Blame, file lists and reads at past commits, for one run. Close it (or use `with`)."""

    _lists: dict[str, FileList] = field(default_factory=dict, repr=False)
    _names: dict[str, frozenset[str] | None] = field(default_factory=dict, repr=False)
    # the names of the files a learned list holds (None: all)
    _now: FileList | None = field(default=None, repr=False)
    _index: str = field(default="", repr=False)  # `git ls-files -s -z` as read
    _origin: str | None = field(default=None, repr=False)
    _origin_read: bool = field(default=False, repr=False)
    _ever: dict[str, bool] = field(default_factory=dict, repr=False)  # ever_named's answers
    _ever_known: frozenset[str] = field(default=frozenset(), repr=False)  # of them, from before
    _clones: frozenset[str] | None = field(default=None, repr=False)

    @cached_property
    def staged(self) -> Staged:
        """What git's index holds apart from HEAD (verify/staged.py), asked once a run."""
        return Staged(self.git)

    # -- the memory file ------------------------------------------------------------

    def blame(
        self, file: str, lines: Iterable[int], moved_from: str | None = None
    ) -> dict[int, str | None] | None:
        """For each wanted line of the memory file (relative to the git work tree, as
        it is on disk now), the commit that last changed it; None for a line not
        committed yet. None when git cannot blame the file (untracked, no commits).
        `moved_from`: the memory file of HEAD this one was moved from (see `moved_from`):
        its lines, as they are on disk, are blamed in that file's history."""
        wanted = sorted(set(lines))
        if not wanted:
            return {}
        ranges = [arg for n in wanted for arg in ("-L", f"{n},{n}")]
        where = ["--", file]
        if moved_from is not None:
            where = ["--contents", str(self.git.toplevel / file), "--", moved_from]
        try:
            # -w: as the replay of the diffs (folder_log.DIFF), a change of spaces or line
            # ending alone leaves a line the commit that wrote it
            out = run_git(self.git, "blame", "-w", "--porcelain", *ranges, *where)
        except GitError:
            return None
        found: dict[int, str | None] = {}
        for row in out.split("\n"):
            parts = row.split(" ")
            if len(parts) >= 3 and len(parts[0]) == 40 and parts[1].isdigit():
                sha = parts[0]
                found[int(parts[2])] = None if sha == _UNCOMMITTED else sha
        return found

    def blame_all(
        self, jobs: Sequence[tuple[str, Iterable[int], str | None]]
    ) -> list[dict[int, str | None] | None]:
        """`blame(file, lines, moved_from)` of each job, in order, several at once.

        Each blame is a git process of its own walking one file's history, sharing nothing
        with the others, so they run side by side on the machine's cores. A store whose
        memory lines came in by merge commits (a pull request per memory) blames one file
        per memory on a first run: 129 on amitcjmu/Stock-Analysis, where one at a time
        they were most of the run's wall time."""
        workers = min(len(jobs), os.cpu_count() or 1, _BLAME_WORKERS)
        if workers < 2:
            return [self.blame(*job) for job in jobs]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(lambda job: self.blame(*job), jobs))

    def moved_from(self, files: Iterable[str], tracked: set[str], within: str) -> dict[str, str]:
        """Per memory file (work-tree paths) git has no history for at its path, untracked
        or only staged, the memory file of HEAD it was moved from: one under `within`,
        gone from the work tree, most of whose lines that say something it holds
        (`move` renames a memory file and adds a line or two of metadata, `git mv`
        stages a rename: neither is history until committed, and the mentions of the
        moved memory were judged by the work tree alone). A `git diff` of the work tree
        under `within`, asked only when such a file is there (git's index tells)."""
        staged = self.staged.changes()[0]
        new = sorted(f for f in files if f not in tracked or f in staged)
        if not new:
            return {}
        try:
            out = run_git(
                self.git, "diff", "--no-renames", "--name-status", "-z", "--diff-filter=D",
                "HEAD", "--", within or ".",
            )  # fmt: skip
        except GitError:
            return {}
        fields = out.split("\0")
        changed = list(zip(fields[::2], fields[1::2], strict=False))
        gone = [path for status, path in changed if status == "D" and path.endswith(".md")]
        old = {}
        for path in gone:  # as git names them (blame's `--`)
            rel = from_git(self.git, path) if self.git.prefix else path
            if rel:
                old[path] = _lines(self.read("HEAD", rel) or ())
        found: dict[str, str] = {}
        for file in new:
            if not old:
                break
            try:
                text = (self.git.toplevel / file).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            lines = _lines(text.splitlines())
            shared = {path: sum((was & lines).values()) for path, was in old.items()}
            best = max(shared, key=lambda path: (shared[path], path))
            if 2 * shared[best] > sum(old[best].values()):  # most of the old file lives on
                found[file] = best
                del old[best]
        return found

    def prefetch_trees(self, commits: Iterable[str], names: Iterable[str] | None = None) -> None:
        """Learn the file lists of several commits at once, applied to the work tree's list
        as the files added and deleted since each, from one `git diff-tree --stdin`.

        Commits on HEAD's first-parent line are chained, newest first: each is diffed
        with the next newer one, not with HEAD, and the changes are summed on the way
        back. An old commit differs from HEAD in thousands of files; from its neighbour
        in a few, so git diffs (and the run reads) a fraction of what a diff of each
        with HEAD would give, for the same lists. Cheaper still than one `git ls-tree`
        of the whole tree each.

        Summed from each commit's own diff when the run reads those (first_parent_diffs).
        With `names`, the lists hold only the files of those names (the run asks
        nothing else of them; `files_at` reads a whole tree for any other name)."""
        wanted = sorted(set(commits) - set(self._lists))
        keep = frozenset(names) if names is not None else None
        if not wanted:
            return
        head = self.git.head()
        if head is None:
            return
        order = {sha: n for n, sha in enumerate(self.git.first_parents())}
        chained = sorted((c for c in wanted if c in order), key=order.__getitem__, reverse=True)
        # Commits off that line (a merged branch's) are each diffed with HEAD; there may
        # be nothing but those, so the chain's bases are cut to its length.
        bases = dict(zip(chained, [head, *chained][: len(chained)], strict=True))
        bases.update((c, head) for c in wanted if c not in order)
        steps: dict[str, tuple[list[str], list[str]]] = {c: ([], []) for c in bases}
        # per commit: (files it has that its base has not, files its base has that it has not)
        prefix = self.git.prefix

        def take(side: list[str], raws: Iterable[str]) -> None:
            """The paths (as git writes them) of a side that the lists keep, a list at a time."""
            paths = [from_git(self.git, raw) for raw in raws] if prefix else raws
            side.extend(p for p in paths if p and (keep is None or p.rpartition("/")[2] in keep))

        # The chain's steps from the line's own diffs when the run reads them; git diffs
        # the rest.
        line = first_parent_diffs.chain(self.git, order, chained, bases)
        for commit, sides in (line or {}).items():
            for side, got in zip(steps[commit], sides, strict=True):
                take(side, got)
        asked = bases if line is None else {}
        # A line "C P" is read as commit C with parent P: the diff goes from P to C, so "A"
        # is a file C has and P has not, "D" one P has and C has not.
        stdin = "".join(f"{commit} {base}\n" for commit, base in asked.items())
        try:
            out = run_git(
                self.git, "diff-tree", "--stdin", "-r", "--no-renames", "--name-status", "-z",
                "--diff-filter=AD", stdin=stdin,
            ) if stdin else ""  # fmt: skip
        except GitError:
            return
        current: tuple[list[str], list[str]] = ([], [])
        fields = iter(out.split("\0"))  # a status and its path taken in turn
        for item in fields:
            raw = next(fields, None) if item == "A" or item == "D" else None
            if raw is None:
                first = item.strip().split(" ", 1)[0]  # a commit: the diffs of its line follow
                current = steps.get(first, ([], []))
                continue
            take(current[0 if item == "A" else 1], (raw,))
        now = self.files_now()
        since: dict[str, tuple[set[str], set[str]]] = {head: self._staged(keep)}
        # per commit: (files added since it, files deleted since it), as HEAD sees them
        for commit, base in bases.items():  # chained ones newest first: the base is known
            gained, lost = steps[commit]
            if base not in since:  # not expected: summed from HEAD only
                base = head
            added, deleted = (set(x) for x in since[base])
            for path in gained:  # at this commit, not at the newer one
                if path in added:
                    added.discard(path)  # at HEAD too
                else:
                    deleted.add(path)
            for path in lost:  # at the newer one, not at this commit
                if path in deleted:
                    deleted.discard(path)
                else:
                    added.add(path)
            since[commit] = (added, deleted)
            self._lists[commit] = now.changed(added, deleted)
            self._names[commit] = keep

    def _staged(self, keep: frozenset[str] | None) -> tuple[set[str], set[str]]:
        """(files git's index has and HEAD has not, files HEAD has and the index has not):
        the lists start from the index, which a staged `git mv`, add or delete (what a
        pre-commit hook sees, a merge in progress) sets apart from HEAD. Without this, a
        file only staged was taken as there at every past commit (found on 2sem/talktrans:
        a bare name resolved at an old commit to the path its file was being moved to)."""
        staged: tuple[set[str], set[str]] = (set(), set())
        for n, paths in enumerate(self.staged.changes()):
            for path in paths:
                rel = from_git(self.git, path) if self.git.prefix else path
                if rel and (keep is None or rel.rpartition("/")[2] in keep):
                    staged[n].add(rel)
        return staged

    def files_at(self, commit: str, name: str | None = None) -> FileList:
        """The repository's files and submodules at a commit (one `git ls-tree`, unless
        `prefetch_trees` learned it), for resolving a path whose file has this name
        (None: any)."""
        known = self._lists.get(commit)
        names = self._names.get(commit)
        if known is None or (names is not None and name not in names):
            self._names.pop(commit, None)
            try:
                out = run_git(self.git, "ls-tree", "-r", "-z", "--full-tree", commit)
            except GitError:
                out = ""
            known = self._lists[commit] = self._file_list(_ls_tree(out))
        return known

    def files_now(self) -> FileList:
        """The tracked files and submodules of the work tree (one `git ls-files`)."""
        if self._now is None:
            try:
                out = run_git(self.git, "ls-files", "-s", "-z")
            except GitError:
                out = ""
            self._index = out
            self._now = self._file_list(_ls_files(out))
        return self._now

    def indexed_as(self, oids: Iterable[str]) -> list[str]:
        """The files of the work tree's list (git's index) whose content is one of these
        objects, read in one pass over the list as git printed it (a search of it per
        object cost 20 ms for the 130 gone files of rjmurillo/ai-agents' first run)."""
        wanted = set(oids)
        self.files_now()
        found: list[str] = []
        if not wanted:
            return found
        sizes = {len(oid) for oid in wanted}
        end = 7 + sizes.pop() if len(sizes) == 1 else 0  # where the id ends after a mode of 6
        for entry in self._index.split("\0"):
            if end and entry[6:7] == " " and entry[7:end] not in wanted:
                continue  # told by a slice: most files are not asked for
            meta, tab, path = entry.partition("\t")  # "<mode> <id> <stage>\t<path>"
            if tab and meta[meta.find(" ") + 1 : meta.rfind(" ")] in wanted:
                rel = from_git(self.git, path) if self.git.prefix else path
                if rel:
                    found.append(rel)
        return found

    def _file_list(self, listed: tuple[list[str], list[str]]) -> FileList:
        files, links = listed
        if not self.git.prefix:
            return FileList(files, links, self.clone_names())
        return FileList(
            [r for p in files if (r := from_git(self.git, p))],
            [r for p in links if (r := from_git(self.git, p))],
            self.clone_names(),
        )

    def clone_names(self) -> frozenset[str]:
        """What an author's clone of the repository root is called, lowercased, for a path
        in their home (`~/www/<name>/src/x.py`): the root's folder here, and when the root is
        the work tree's top, the origin remote's repository name."""
        if self._clones is None:
            git = self.git
            names = {(PurePosixPath(git.prefix).name if git.prefix else git.toplevel.name)}
            found = None if git.prefix else remote_repository(self.origin() or "")
            if found:
                names.add(found.rpartition("/")[2])
            self._clones = frozenset(name.lower() for name in names if name)
        return self._clones

    def added_after(self, commit: str, path: str) -> str | None:
        """The first commit after `commit` (on the way to HEAD) that touched the path."""
        try:
            out = self.git.run(
                "rev-list", "--reverse", "--first-parent", f"{commit}..HEAD", "--",
                to_git(self.git, path),
            )  # fmt: skip
        except GitError:
            return None
        first = out.split("\n", 1)[0].strip()
        return first or None

    def knowing(self, answers: Mapping[str, bool]) -> None:
        """Take `ever_named`'s answers a run before this one gave at the same HEAD."""
        self._ever.update(answers)
        self._ever_known = frozenset(answers)

    def names_learned(self) -> dict[str, bool]:
        """`ever_named`'s answers this run asked git for (to keep for the next run)."""
        return {k: v for k, v in self._ever.items() if k not in self._ever_known}

    def ever_named(self, name: str) -> bool:
        """Whether a file of this name (in any folder, any case) was ever in the history of
        HEAD: one `git log` that stops at the first commit touching one, asked only of a
        name no file of the lists at hand ends like (mention_checks.absent), once a run:
        for a name no file ever had it reads the whole history (a second on 2,600 commits)."""
        key = name.lower()
        if key not in self._ever:
            try:
                out = run_git(
                    self.git, "log", "-1", "--full-history", "--format=%H", "HEAD", "--",
                    f":(top,glob,icase)**/{name}",
                )  # fmt: skip
            except GitError:
                out = ""
            self._ever[key] = bool(out.strip())
        return self._ever[key]

    def origin(self) -> str | None:
        """The URL of the `origin` remote, read once."""
        if not self._origin_read:
            self._origin_read = True
            try:
                self._origin = self.git.run("config", "--get", "remote.origin.url").strip() or None
            except GitError:
                self._origin = None
        return self._origin


def _ls_tree(out: str) -> tuple[list[str], list[str]]:
    files: list[str] = []
    links: list[str] = []
    for entry in out.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split(" ")
        if path and len(parts) == 3 and parts[1] in ("blob", "commit"):
            (links if parts[1] == "commit" else files).append(path)
    return files, links


def _ls_files(out: str) -> tuple[list[str], list[str]]:
    """The files and the submodules (gitlinks) of `git ls-files -s -z` output, each
    once (an unmerged file is listed once per stage)."""
    entries = out.split("\0")
    if " 1\t" in out or " 2\t" in out or " 3\t" in out:
        seen: set[str] = set()
        unique = []
        for entry in entries:
            path = entry.partition("\t")[2]
            if path and path not in seen:
                seen.add(path)
                unique.append(entry)
        entries = unique
    # Two passes in C-speed comprehensions: a whole work tree's list (9,000 entries) is
    # read on every first run, and a loop appending each entry costs twice as much.
    links = [e[e.find("\t") + 1 :] for e in entries if e[:7] == "160000 "]
    files = [e[t + 1 :] for e in entries if (t := e.find("\t")) > 0 and e[:7] != "160000 "]
    return [f for f in files if f], [f for f in links if f]
