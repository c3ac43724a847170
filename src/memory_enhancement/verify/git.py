"""What verification asks git, asked a bounded number of times per run.

Verification needs three facts from history: which files were renamed (to
follow a citation whose file moved), how lines moved since a citation was last
verified (to pick the occurrence the code actually moved to), and which files
changed since a ref (the fast path for pull requests). Each is one git call for
the whole run (diffs: one per distinct base commit), never one per citation.
Without git, or outside a repository, every method answers "no history".
The line maps, and the reading of git's diff into them, are line_maps.py.
"""

from __future__ import annotations

import bisect
import os
import shutil
import subprocess
from collections.abc import Generator, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.verify.line_maps import LineMap, parse_diff

_EPOCH = datetime.fromtimestamp(0, UTC)  # a window from here is the whole history

_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}


class GitError(Exception):
    """A git command that failed; callers fall back to "no history"."""


class Git:
    """Read-only questions to the git repository holding the cited code.

    `prefix` is the repository root's path inside the git work tree, for a
    `--repo-root` that is a subfolder; paths in and out are relative to the
    repository root, as citations are.
    """

    def __init__(self, toplevel: Path, prefix: str = "") -> None:
        self.toplevel = toplevel
        self.prefix = prefix.strip("/")
        self.calls = 0
        # The oldest moment a run will ask about (the verifier sets it from the stamps in
        # play): history is walked back to it, and renames are looked for since then.
        self.horizon: datetime | None = None
        self._walked: tuple[int, tuple[list[int], list[str], str | None]] | None = None
        self._parsed_head: str | None = None  # HEAD from `rev-parse` ("" when there is none)
        self._trees: list[str] | None = None  # root trees of `first_parents`, when a walk read them
        self._merges: frozenset[int] = frozenset()  # the merges among them, with the trees
        self.line_diffs: object = None  # what each of those commits changed (first_parent_diffs)
        # What `git diff-tree -M <commit>` renamed, per commit asked: (old, new, exact).
        self.renamed: dict[str, list[tuple[str, str, bool]]] = {}

    @classmethod
    def discover(cls, repo_root: Path) -> Git | None:
        """The git repository around repo_root, or None without git or outside one."""
        if shutil.which("git") is None:
            return None
        probe = Path(os.path.abspath(repo_root))
        for folder in (probe, *probe.parents):
            if (folder / ".git").exists():
                prefix = os.path.relpath(probe, folder)
                return cls(folder, "" if prefix == "." else prefix.replace(os.sep, "/"))
        return None

    # -- plumbing ---------------------------------------------------------------

    def run(self, *args: str) -> str:
        self.calls += 1
        try:
            done = subprocess.run(
                ["git", "-C", str(self.toplevel), *args],
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

    def stream(self, *args: str) -> Generator[bytes]:
        """git's output in pieces as it comes, for a walk its reader may stop early: the
        process is ended when the reader stops (a walk of the whole history would run on)."""
        self.calls += 1
        try:
            proc = subprocess.Popen(
                ["git", "-C", str(self.toplevel), *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={**os.environ, **_ENV},
                bufsize=0,  # each read takes what the pipe holds, no waiting for a full buffer
            )
        except OSError as exc:
            raise GitError(str(exc)) from None
        assert proc.stdout is not None
        try:
            while piece := proc.stdout.read(1 << 16):
                yield piece
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.stdout.close()
            if proc.wait() not in (0, -9):
                raise GitError(f"git {args[0]} failed")

    def _to_git(self, path: str) -> str:
        return f"{self.prefix}/{path}" if self.prefix else path

    def _from_git(self, path: str) -> str | None:
        if not self.prefix:
            return path
        head = self.prefix + "/"
        return path[len(head) :] if path.startswith(head) else None

    # -- history ----------------------------------------------------------------

    @cached_property
    def _head(self) -> tuple[int, str] | None:
        """HEAD's commit time and sha (None in a repository without commits)."""
        try:
            out = self.run("log", "-1", "--format=%ct %H", "HEAD").split()
        except GitError:
            return None
        return (int(out[0]), out[1]) if len(out) == 2 else None

    def first_parents(self) -> list[str]:
        """HEAD's whole first-parent history, oldest first (prose mentions need it: their
        memory files' history is read along it; see verify/line_origins.py)."""
        return self._window(_EPOCH)[1]

    def learn_first_parents(
        self,
        times: list[int],
        shas: list[str],
        trees: list[str] | None = None,
        merges: frozenset[int] = frozenset(),
    ) -> None:
        """HEAD's whole first-parent history (commit times and ids, oldest first) as another
        walk of it read it, so that this run does not walk it again; with each commit's
        root tree when that walk printed them (`first_trees`), and the places of the
        merges among them (`first_merges`)."""
        if shas and (self._walked is None or self._walked[0] > 0):
            self._walked = (0, (times, shas, None))
            self._trees = trees if trees is not None and len(trees) == len(shas) else None
            self._merges = merges

    def first_merges(self) -> frozenset[int] | None:
        """The places in `first_parents` of its merges, known with `first_trees` only."""
        return self._merges if self.first_trees() is not None else None

    def first_trees(self) -> list[str] | None:
        """The root tree of each commit of `first_parents` (same order), None when no walk
        of this run printed them: the folder walk does when git has no commit-graph
        (folder_log.py). Diffing these trees pair by pair (`git diff-tree --stdin`) asks
        what `git log --first-parent` would without inflating every commit again (on
        rjmurillo/ai-agents, 2,621 commits: 0.34G instructions of git's 2.40G for the
        deletions' log; deletions.py, earlier.py)."""
        shas = self.first_parents()
        trees = self._trees
        return trees if trees is not None and len(trees) == len(shas) else None

    def current_commit(self) -> str | None:
        """HEAD's commit: from the first-parent history once read, or from its time and
        sha once asked (`_head`), else `git rev-parse` (once per run)."""
        if self._walked is not None:
            _, (_, shas, before) = self._walked
            return shas[-1] if shas else before
        if "_head" in self.__dict__:  # the cached_property was read: no second git process
            asked = self._head
            return asked[1] if asked else None
        if self._parsed_head is None:
            try:
                found = self.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
            except GitError:
                found = ""
            self._parsed_head = found
        return self._parsed_head or None

    def head(self) -> str | None:
        """HEAD's commit, None in a repository without commits (`current_commit`)."""
        return self.current_commit()

    def _window(self, moment: datetime) -> tuple[list[int], list[str], str | None]:
        """The first-parent commits made at or after a time, oldest first, and the commit
        before them (None when history starts inside the window), walked once per run.

        The walk goes back only as far as the oldest moment the run asks about
        (`horizon`, set by the verifier from the stamps in play), so its cost is
        the history since then, not the whole history; a HEAD older than every
        stamp costs one commit.
        """
        since = int(moment.timestamp())
        if self.horizon is not None:
            since = min(since, int(self.horizon.timestamp()))
        known = self._walked
        if known is not None and known[0] <= since:
            return known[1]
        try:
            out = self.run(
                "log", "--first-parent", f"--max-age={since}", "--format=%ct %H %P", "HEAD"
            )
        except GitError:
            out = ""
        rows = [line.split() for line in reversed(out.splitlines()) if line]
        times = [int(row[0]) for row in rows]
        shas = [row[1] for row in rows]
        if rows:
            before = rows[0][2] if len(rows[0]) > 2 else None
        else:
            head = self._head
            before = head[1] if head else None  # HEAD itself is older than the window
        window = (times, shas, before)
        self._walked = (since, window)
        return window

    def commit_at(self, moment: datetime) -> str | None:
        """The commit HEAD was at, at a given time (the last commit made before it)."""
        times, shas, before = self._window(moment)
        index = bisect.bisect_right(times, int(moment.timestamp()))
        return shas[index - 1] if index else before

    def commit_before(self, moment: datetime) -> str | None:
        """The last commit made strictly before a given second: a commit of that very
        second may have come after the moment (commit times are whole seconds)."""
        times, shas, before = self._window(moment)
        index = bisect.bisect_left(times, int(moment.timestamp()))
        return shas[index - 1] if index else before

    def commit_after(self, moment: datetime) -> str | None:
        """The first commit made after a given time, if any."""
        times, shas, _ = self._window(moment)
        index = bisect.bisect_right(times, int(moment.timestamp()))
        return shas[index] if index < len(shas) else None

    def resolve(self, ref: str) -> str:
        """The commit a ref names; an unknown ref is the caller's mistake."""
        try:
            return self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
        except GitError:
            raise InvalidInputError(f"unknown git ref {ref!r} in {self.toplevel}") from None

    @cached_property
    def tracked(self) -> frozenset[str]:
        try:
            out = self.run("ls-files", "-z")
        except GitError:
            return frozenset()
        paths = (self._from_git(p) for p in out.split("\0") if p)
        return frozenset(p for p in paths if p)

    @cached_property
    def renames(self) -> dict[str, str]:
        """old path -> newest path, from history and from uncommitted (staged) renames.

        Asked only when a cited file is missing. With a `horizon`, only renames made
        since the commit of the oldest stamp in play are read (a citation verified
        after a rename already names the new path), so the cost does not grow with
        the history before it. A rename committed in the stamp's own second is read
        too: which of the two came first, the second does not tell.
        """
        chain: dict[str, str] = {}
        since = self.commit_before(self.horizon) if self.horizon is not None else None
        span = f"{since}..HEAD" if since else "HEAD"
        # Only renames inside the prefix are kept (_from_git), so git diffs only it: the
        # links of a store in `.serena/memories/` asked 0.63 s of rjmurillo/ai-agents'
        # whole history, 0.12 s of the folder's, for the same 1,019 renames.
        spec = ["--", f":(literal){self.prefix}"] if self.prefix else []
        try:
            history = self.run(
                "log", "-M", "--diff-filter=R", "--name-status", "--format=", "-z", span, *spec
            )
            pending = self.run(
                "diff", "-M", "--diff-filter=R", "--name-status", "-z", "HEAD", *spec
            )
        except GitError:
            return {}
        # log is newest first: apply the oldest renames first, then uncommitted ones.
        for old, new in [*_rename_pairs(history)[::-1], *_rename_pairs(pending)]:
            old_rel, new_rel = self._from_git(old), self._from_git(new)
            if old_rel and new_rel:
                chain[old_rel] = new_rel
        resolved = {}
        for old in chain:
            seen, current = {old}, chain[old]
            while current in chain and chain[current] not in seen:
                seen.add(current)
                current = chain[current]
            resolved[old] = current
        return resolved

    def will_ask(self, wanted: Mapping[str, Iterable[str]]) -> None:
        """A hint: the line maps about to be asked (paths per base commit). A Git that
        can learn many at once does (mention_maps.MentionGit); this one asks each."""

    def line_maps(self, base: str, paths: Iterable[str]) -> dict[str, LineMap]:
        """For each path (as at base), how its lines moved from base to the working tree.

        One `git diff` for all paths. A path missing from the result did not
        change (or is not tracked; check `tracked`).
        """
        paths = set(paths)
        wanted = sorted({self._to_git(p) for p in paths})
        if not wanted:
            return {}
        gone = [p for p in paths if not os.path.lexists(self.toplevel / self._to_git(p))]
        renamed = [self._to_git(self.renames[p]) for p in gone if p in self.renames]
        # Only files that existed at base have a map. Asking the tree first (it reads no
        # file) spares a diff that would hash every cited file when base is a commit from
        # before they were written (a stamp older than the code it cites).
        try:
            listed = self.run("ls-tree", "-r", "-z", "--name-only", base, "--", *wanted)
        except GitError:
            return {}
        wanted = [p for p in listed.split("\0") if p]
        if not wanted:
            return {}
        try:
            # Files added since base have no map; leaving them (and deleted ones) out of the
            # output spares printing whole files (a base from long ago, a new file).
            out = self.run(
                "diff", "-M", "-U0", "--no-color", "--no-ext-diff", "--diff-filter=ad", base,
                "--", *wanted, *renamed,
            )  # fmt: skip
        except GitError:
            return {}
        maps = {}
        for line_map in parse_diff(out):
            old, new = self._from_git(line_map.old_path), self._from_git(line_map.new_path)
            if old and new:
                maps[old] = LineMap(old, new, line_map.hunks, line_map.removed)
        return maps

    def changed_since(self, ref: str) -> set[str]:
        """Files changed between ref and the working tree (both sides of renames) and new ones.

        Without rename detection: a rename's two sides are a deletion and an addition,
        the same two paths, and no blob is read. With `-M` git read every added and
        deleted file to pair them, and failed outright ("unable to read <sha>") when one
        of those blobs was not in the repository (a partial or damaged clone): a traceback.
        """
        commit = self.resolve(ref)
        try:
            out = self.run("diff", "--no-renames", "--name-only", "-z", commit)
            untracked = self.run("ls-files", "--others", "--exclude-standard", "-z")
        except GitError as exc:
            raise InvalidInputError(
                f"cannot list the files changed since {ref!r} in {self.toplevel}: {exc}"
            ) from None
        changed = {f for f in out.split("\0") if f}
        changed.update(p for p in untracked.split("\0") if p)
        return {rel for rel in (self._from_git(p) for p in changed) if rel}


def _rename_pairs(out: str) -> list[tuple[str, str]]:
    """(old, new) pairs from `--name-status -z` output, in output order."""
    return [(path, new) for status, path, new in name_status(out.split("\0")) if status == "R"]


def name_status(fields: Sequence[str]) -> list[tuple[str, str, str]]:
    """`--name-status -z` entries as (status letter, path, new path), the new path "" but
    for a rename or a copy (`R100 old new`, `C75 old new`). Stepped through entry by entry
    as git writes them: a path that starts with R (`README.md`) is a path, not a status.
    A field of `git log` output may open with the newline that ends a commit's entries."""
    found: list[tuple[str, str, str]] = []
    at = 0
    while at + 1 < len(fields):
        status = fields[at].strip()
        if not status:  # between commits (`--format=`), or the end
            at += 1
            continue
        if status[0] in "RC" and at + 2 < len(fields):
            found.append((status[0], fields[at + 1], fields[at + 2]))
            at += 3
        else:
            found.append((status[0], fields[at + 1], ""))
            at += 2
    return found
