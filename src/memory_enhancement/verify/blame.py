"""What git remembers about a memory line: who last changed it, and the code then.

A prose mention (`src/app.py:42`) carries no snippet, but git knows the commit
that last changed the memory line holding it (`git blame`), and that commit's
tree holds what line 42 said when the mention was written. This module asks
git those questions, a bounded number of times per run: one `git blame` per
memory file that has mentions (only the lines holding them), one long-lived
`git cat-file --batch` for every file read at a commit, at most one `git
ls-tree` per commit whose tree must be searched for a partial path.

The answers do not change while the memory file does not, so
`mention_cache.MentionCache` keeps them in the state database keyed by the
file's blob hash: a rerun asks git nothing here.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO

from memory_enhancement.core.mentions import FileList
from memory_enhancement.verify.git import Git, GitError

_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
_UNCOMMITTED = "0" * 40
_BINARY_PROBE = 8192
MAX_BLOB_BYTES = 20 * 1024 * 1024
# The files read at past commits are kept for the run up to this many (and bytes): a
# run asks whether each mention's file was there, then reads it, then the Verifier
# reads it again; a store's first run reads a few hundred, mostly small.
_KEPT_BLOBS = 1024
_KEPT_BLOB_BYTES = 64 * 1024 * 1024


def blob_hash(data: bytes) -> str:
    """The git blob hash of these bytes (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class Tree:
    """One folder of one commit, as git stores it."""

    oid: str
    entries: dict[str, tuple[str, str]]  # name -> (mode, object id)


@dataclass
class GitHistory:
    """Blame and reads at past commits, for one run. Close it (or use `with`)."""

    git: Git
    _cat: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _trees: dict[str, FileList] = field(default_factory=dict, repr=False)
    _names: dict[str, frozenset[str] | None] = field(default_factory=dict, repr=False)
    # the names of the files a learned list holds (None: all)
    _blobs: dict[tuple[str, str], bytes | None] = field(default_factory=dict, repr=False)
    _blob_bytes: int = field(default=0, repr=False)  # the size of those kept
    _ids: dict[tuple[str, str], str | None] = field(default_factory=dict, repr=False)
    _sizes: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    # (commit, path) -> the file's object id there (None: no file), kept for the run
    _now: FileList | None = field(default=None, repr=False)
    _index: str = field(default="", repr=False)  # `git ls-files -s -z` as read
    _origin: str | None = field(default=None, repr=False)
    _origin_read: bool = field(default=False, repr=False)

    def __enter__(self) -> GitHistory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._cat is not None:
            for stream in (self._cat.stdin, self._cat.stdout):
                if stream is not None:
                    stream.close()
            self._cat.wait()
            self._cat = None

    # -- the memory file ------------------------------------------------------------

    def blame(self, file: str, lines: Iterable[int]) -> dict[int, str | None] | None:
        """For each wanted line of the memory file (relative to the git work tree, as
        it is on disk now), the commit that last changed it; None for a line not
        committed yet. None when git cannot blame the file (untracked, no commits)."""
        wanted = sorted(set(lines))
        if not wanted:
            return {}
        ranges = [arg for n in wanted for arg in ("-L", f"{n},{n}")]
        try:
            out = self.git.run("blame", "--porcelain", *ranges, "--", file)
        except GitError:
            return None
        found: dict[int, str | None] = {}
        for row in out.split("\n"):
            parts = row.split(" ")
            if len(parts) >= 3 and len(parts[0]) == 40 and parts[1].isdigit():
                sha = parts[0]
                found[int(parts[2])] = None if sha == _UNCOMMITTED else sha
        return found

    # -- the code at a commit -------------------------------------------------------

    def exists(self, commit: str, path: str) -> bool:
        """Whether the repository had a file at that path at that commit."""
        self.object_id(commit, path)
        return self._sizes.get((commit, path), MAX_BLOB_BYTES + 1) <= MAX_BLOB_BYTES

    def read(self, commit: str, path: str) -> list[str] | None:
        """The lines of a repository file at a commit; None when it was not a text file there."""
        data = self._blob(commit, path)
        if data is None or b"\0" in data[:_BINARY_PROBE]:
            return None
        text = data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if "\r" not in text:  # most files: nothing to strip, no second pass over the lines
            return lines
        return [line.rstrip("\r") for line in lines]

    def _blob(self, commit: str, path: str) -> bytes | None:
        """A file's bytes at a commit (kept within `_KEPT_BLOBS` and `_KEPT_BLOB_BYTES`: a
        mention's file is asked for again when it is read)."""
        key = (commit, path)
        if key in self._blobs:
            return self._blobs[key]
        found = self._cat_object(f"{commit}:{to_git(self.git, path)}")
        data = None
        if found is not None and found[0] == b"blob" and len(found[1]) <= MAX_BLOB_BYTES:
            data = found[1]
        self._remember(key, found)
        self._blob_bytes += len(data or b"")
        while self._blobs and (
            len(self._blobs) >= _KEPT_BLOBS or self._blob_bytes > _KEPT_BLOB_BYTES
        ):
            self._blob_bytes -= len(self._blobs.pop(next(iter(self._blobs))) or b"")
        self._blobs[key] = data
        return data

    def tree(self, spec: str) -> Tree | None:
        """A tree (`<commit>:<folder>`, `<commit>:` for the root): its id and its entries
        (name -> (mode, object id)). None when there is no such tree."""
        found = self._cat_object(spec)
        if found is None or found[0] != b"tree":
            return None
        _, data, oid = found
        entries: dict[str, tuple[str, str]] = {}
        width, at = len(oid) // 2, 0  # bytes per object id (SHA-1 or SHA-256)
        while at < len(data):
            space = data.index(b" ", at)
            nul = data.index(b"\0", space)
            name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
            mode = data[at:space].decode("ascii").zfill(6)
            entries[name] = (mode, data[nul + 1 : nul + 1 + width].hex())
            at = nul + 1 + width
        return Tree(oid, entries)

    def _cat_object(self, spec: str) -> tuple[bytes, bytes, str] | None:
        """(type, content, id) of an object, from the run's `git cat-file --batch`."""
        if "\n" in spec:
            return None
        if self._cat is None:
            self._cat = subprocess.Popen(
                ["git", "-C", str(self.git.toplevel), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={**os.environ, **_ENV},
            )
            self.git.calls += 1
        stdin, stdout = self._cat.stdin, self._cat.stdout
        assert stdin is not None and stdout is not None
        stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
        stdin.flush()
        header = stdout.readline().split()
        if len(header) != 3:  # "<spec> missing" (or ambiguous)
            return None
        size = int(header[2])
        data = _read_exactly(stdout, size)
        stdout.read(1)  # the newline after the object
        return header[1], data, header[0].decode("ascii")

    def prefetch_trees(self, commits: Iterable[str], names: Iterable[str] | None = None) -> None:
        """Learn the file lists of several commits at once, applied to the work tree's list
        as the files added and deleted since each, from one `git diff-tree --stdin`.

        Commits on HEAD's first-parent line are chained, newest first: each is diffed
        with the next newer one, not with HEAD, and the changes are summed on the way
        back. An old commit differs from HEAD in thousands of files; from its neighbour
        in a few, so git diffs (and the run reads) a fraction of what a diff of each
        with HEAD would give, for the same lists. Cheaper still than one `git ls-tree`
        of the whole tree each.

        With `names`, the lists hold only the files of those names (the run asks
        nothing else of them; `files_at` reads a whole tree for any other name)."""
        wanted = sorted(set(commits) - set(self._trees))
        keep = frozenset(names) if names is not None else None
        if not wanted:
            return
        head = self.git.head()
        if head is None:
            return
        order = {sha: n for n, sha in enumerate(self.git.first_parents())}
        chained = sorted((c for c in wanted if c in order), key=order.__getitem__, reverse=True)
        bases = dict(zip(chained, [head, *chained[:-1]], strict=True))
        bases.update((c, head) for c in wanted if c not in order)
        # A line "C P" is read as commit C with parent P: the diff goes from P to C, so "A"
        # is a file C has and P has not, "D" one P has and C has not.
        stdin = "".join(f"{commit} {base}\n" for commit, base in bases.items())
        try:
            out = run_with_input(
                self.git, "diff-tree", "--stdin", "-r", "--no-renames", "--name-status", "-z",
                "--diff-filter=AD", stdin=stdin,
            )  # fmt: skip
        except GitError:
            return
        steps: dict[str, tuple[list[str], list[str]]] = {c: ([], []) for c in bases}
        # per commit: (files it has that its base has not, files its base has that it has not)
        current: tuple[list[str], list[str]] = ([], [])
        fields = out.split("\0")
        prefix = self.git.prefix
        i, count = 0, len(fields)
        while i < count:
            field = fields[i]
            if (field == "A" or field == "D") and i + 1 < count:  # a status, then its path
                path = fields[i + 1] if not prefix else from_git(self.git, fields[i + 1])
                if path and (keep is None or path.rpartition("/")[2] in keep):
                    current[0 if field == "A" else 1].append(path)
                i += 2
                continue
            first = field.strip().split(" ", 1)[0]  # a commit: the diffs of its line follow
            current = steps.get(first, ([], []))
            i += 1
        now = self.files_now()
        since: dict[str, tuple[set[str], set[str]]] = {head: (set(), set())}
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
            self._trees[commit] = now.changed(added, deleted)
            self._names[commit] = keep

    def files_at(self, commit: str, name: str | None = None) -> FileList:
        """The repository's files and submodules at a commit (one `git ls-tree`, unless
        `prefetch_trees` learned it), for resolving a path whose file has this name
        (None: any)."""
        known = self._trees.get(commit)
        names = self._names.get(commit)
        if known is None or (names is not None and name not in names):
            self._names.pop(commit, None)
            try:
                out = self.git.run("ls-tree", "-r", "-z", "--full-tree", commit)
            except GitError:
                out = ""
            known = self._trees[commit] = self._file_list(_ls_tree(out))
        return known

    def files_now(self) -> FileList:
        """The tracked files and submodules of the work tree (one `git ls-files`)."""
        if self._now is None:
            try:
                out = self.git.run("ls-files", "-s", "-z")
            except GitError:
                out = ""
            self._index = out
            self._now = self._file_list(_ls_files(out))
        return self._now

    def indexed_as(self, oid: str) -> list[str]:
        """The files of the work tree's list (git's index) whose content is this object
        (a search of the list as git printed it, not a map of all 9,000 entries)."""
        self.files_now()
        out, found = self._index, []
        needle = f" {oid} "
        at = out.find(needle)
        while at >= 0:
            tab, end = out.find("\t", at), out.find("\0", at)
            if 0 <= tab < (end if end >= 0 else len(out)):
                path = out[tab + 1 : end if end >= 0 else len(out)]
                rel = from_git(self.git, path) if self.git.prefix else path
                if rel:
                    found.append(rel)
            at = out.find(needle, at + 1)
        return found

    def object_id(self, commit: str, path: str) -> str | None:
        """The id of the file at that path at that commit (None: no such file); asked
        of git once per run, whether the file was read or not."""
        key = (commit, path)
        if key not in self._ids:
            self._blob(commit, path)  # kept too: a file asked about is usually read next
        return self._ids[key]

    def _remember(self, key: tuple[str, str], found: tuple[bytes, bytes, str] | None) -> None:
        if found is not None and found[0] == b"blob":
            self._ids[key] = found[2]
            self._sizes[key] = len(found[1])
        else:
            self._ids[key] = None

    def _file_list(self, entries: Iterable[tuple[str, bool]]) -> FileList:
        files: list[str] = []
        links: list[str] = []
        if not self.git.prefix:
            for path, is_link in entries:
                (links if is_link else files).append(path)
            return FileList(files, links)
        for path, is_link in entries:
            rel = from_git(self.git, path)
            if rel:
                (links if is_link else files).append(rel)
        return FileList(files, links)

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

    def origin(self) -> str | None:
        """The URL of the `origin` remote, read once."""
        if not self._origin_read:
            self._origin_read = True
            try:
                self._origin = self.git.run("config", "--get", "remote.origin.url").strip() or None
            except GitError:
                self._origin = None
        return self._origin


def run_with_input(git: Git, *args: str, stdin: str) -> str:
    """`Git.run` with text on standard input (`git diff-tree --stdin`: many commits,
    one process)."""
    git.calls += 1
    try:
        done = subprocess.run(
            ["git", "-C", str(git.toplevel), *args],
            input=stdin.encode("utf-8", "surrogateescape"),
            capture_output=True,
            check=False,
            env={**os.environ, **_ENV},
        )
    except OSError as exc:
        raise GitError(str(exc)) from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(message[-1] if message else f"git {args[0]} failed")
    return done.stdout.decode("utf-8", "surrogateescape")


def to_git(git: Git, path: str) -> str:
    return f"{git.prefix}/{path}" if git.prefix else path


def from_git(git: Git, path: str) -> str | None:
    """A work-tree path made repository-relative; None outside the repository root."""
    if not git.prefix:
        return path
    head = git.prefix + "/"
    return path[len(head) :] if path.startswith(head) else None


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks, left = [], size
    while left > 0:
        chunk = stream.read(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _ls_tree(out: str) -> Iterable[tuple[str, bool]]:
    for entry in out.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split(" ")
        if path and len(parts) == 3 and parts[1] in ("blob", "commit"):
            yield path, parts[1] == "commit"


def _ls_files(out: str) -> Iterable[tuple[str, bool]]:
    if " 1\t" not in out and " 2\t" not in out and " 3\t" not in out:
        # Nothing unmerged (no entry at stage 1-3), the usual case: each path is listed
        # once, and a whole work tree's list is read without keeping a set of the seen.
        for entry in out.split("\0"):
            tab = entry.find("\t")
            if tab > 0 and tab + 1 < len(entry):
                yield entry[tab + 1 :], entry.startswith("160000 ")
        return
    seen: set[str] = set()
    for entry in out.split("\0"):
        meta, _, path = entry.partition("\t")
        if path and path not in seen:  # an unmerged file is listed once per stage
            seen.add(path)
            yield path, meta.startswith("160000 ")
