"""What each commit of HEAD's first-parent line changed, read once a run for every reader.

Several questions of a first run read the first-parent line commit by commit: the
commit that deleted a gone file (deletions.py), the earlier versions of a file whose
cited lines were past its end when committed (earlier.py), the file lists of the
mentions' commits (`GitHistory.prefetch_trees`) and the ids the gone files had there
(exact_renames.py). Each asked git its own diffs of the same commits: on
rjmurillo/ai-agents (2,620 commits) the deletions' walk of every commit cost git
0.43 s, the file lists' chained diffs 0.25 s, the ids' 0.14 s, the earlier versions'
0.05 s, the same trees opened each time. When the run's folder walk printed each
commit's root tree (`Git.first_trees`, folder_log.py), one `git diff-tree --stdin -r
--raw` fed the pairs of trees (each commit's tree with its first parent's, as `git log
--first-parent` diffs them: a merge with its first parent, the first commit with the
empty tree) gives every change of every commit, status, modes, ids and path, and each
reader takes what it needs from it (`LineDiffs`). The diffs are read from the oldest
commit a reader asks on, the older ones when a later reader asks for them, each commit
once: a run that asks nothing of the old history does not read it.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence

from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import from_git, run_git

# The empty tree, by the length of the repository's object ids (SHA-1, SHA-256): git
# knows it without storing it.
_EMPTY = {
    40: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    64: "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
}
# A git pathspec that is not the path itself (a glob, a magic word): matched by git only.
_MAGIC = frozenset("*?[\\")


def plain(path: str) -> bool:
    """Whether git's pathspec `path` means that path and everything under it, nothing else."""
    parts = path.removesuffix("/").split("/")
    return not (_MAGIC.intersection(path) or path.startswith(":") or {"", ".", ".."} & set(parts))


Change = tuple[str, str]  # git's raw fields (":old-mode new-mode old-id new-id status"), path


class LineDiffs:
    """The raw diff of each commit of the first-parent line (`shas`, oldest first, with
    their root `trees`) with its first parent, read from git as readers ask for them.
    Paths are as git names them (from the work tree's root)."""

    def __init__(self, git: Git, shas: Sequence[str], trees: Sequence[str]) -> None:
        self.git, self.shas, self.trees = git, shas, trees
        self._read: dict[int, list[Change]] = {}  # place on the line -> its changes

    def read(self, start: int, end: int) -> bool:
        """Make sure the changes of the places `start` to `end - 1` are known: those not
        read yet are asked of one `git diff-tree --stdin`. False when git fails or its
        answer cannot be read (the reader asks git its own way)."""
        return self.read_with(start, end, {}) is not None

    def read_with(
        self, start: int, end: int, commits: Mapping[str, str]
    ) -> dict[str, list[Change]] | None:
        """`read`, and in the same process the diff of each of `commits` (a commit off
        the line -> the commit it is diffed from, `git diff-tree <from> <commit>`): their
        changes, not kept; None when git fails or its answer cannot be read."""
        missing = [n for n in range(max(start, 0), end) if n not in self._read]
        if not missing and not commits:
            return {}
        empty = _EMPTY.get(len(self.trees[0]))
        if missing and missing[0] == 0 and empty is None:
            return None
        trees = self.trees
        pairs = [f"{trees[n - 1] if n else empty} {trees[n]}\n" for n in missing]
        # "C P" is commit C with parent P: the diff from P to C, echoed as "C" (when the
        # diff is not empty).
        asked = "".join(pairs) + "".join(f"{c} {b}\n" for c, b in commits.items())
        try:
            out = run_git(
                self.git, "diff-tree", "--stdin", "-r", "--no-renames", "--raw", "-z",
                stdin=asked,
            )  # fmt: skip
        except GitError:
            return None
        found = _changes(out, pairs, commits)
        if found is None:
            return None
        self._read.update(zip(missing, found[0], strict=True))
        return found[1]

    def at(self, place: int) -> list[Change]:
        """The changes of the commit at `place` (read before, `read`)."""
        return self._read[place]

    def adds_none(self, place: int) -> bool:
        """Whether the commit at `place`, read, adds no file (nor changes one's type): git
        finds no rename in its diff then (nothing asked of git)."""
        changes = self._read.get(place)
        return changes is not None and not any(raw[-1] in "AT" for raw, _ in changes)

    def between(self, older: int, newer: int) -> tuple[list[str], list[str]]:
        """(paths the commit at `older` has and the one at `newer` has not, paths `newer`
        has and `older` has not): what `git diff-tree -r --diff-filter=AD <older>
        <newer>` lists as deleted and added, from the changes of the commits after
        `older` up to `newer` (read before). A path's newest change there says whether
        `newer` has it (added or deleted), its oldest whether `older` had it."""
        newest: dict[str, str] = {}
        oldest: dict[str, str] = {}
        read = self._read
        for place in range(newer, older, -1):
            for raw, path in read[place]:
                status = raw[-1]
                if status == "A" or status == "D":
                    newest.setdefault(path, status)
                    oldest[path] = status
        gone = [p for p, s in oldest.items() if s == "D" and newest[p] == "D"]
        came = [p for p, s in oldest.items() if s == "A" and newest[p] == "A"]
        return gone, came


def _changes(
    out: str, pairs: list[str], commits: Container[str]
) -> tuple[list[list[Change]], dict[str, list[Change]]] | None:
    """Per pair of trees asked, its changes in git's `-z --raw` answer, and per commit of
    `commits` (asked after them) its changes; None when the answer is not what was asked.
    Git echoes each pair of trees ("<old> <new>\\n", whether or not its diff is empty)
    before its changes ("<raw>\\0<path>\\0"): a field that is not a path is the echoes
    of the pairs with nothing (more) to list and of the next pair, then a raw entry or
    (after the last pair) a commit's echo ("<commit>\\0"); the field after a raw entry
    is its path, even one holding a newline."""
    found: list[list[Change]] = [[] for _ in pairs]
    others: dict[str, list[Change]] = {}
    echoes = [*pairs, "\0"]  # no pair after the last: never the start of a field
    n = -1  # the pair whose changes are being read
    fields = iter(out.split("\0"))
    current: list[Change] = []
    for field in fields:
        if field[:1] != ":":
            while field.startswith(echoes[n + 1]):
                field = field[len(echoes[n + 1]) :]
                n += 1
            if n >= 0:
                current = found[n]
            if not field:
                continue  # the last pairs' echoes, with nothing to list
            if field[:1] != ":":  # a commit's echo, after every pair's
                commit = field.lstrip("\n")
                if n != len(pairs) - 1 or commit not in commits or commit in others:
                    return None
                current = others[commit] = []
                continue
            if n < 0:
                return None  # a change before any echo
        path = next(fields, None)
        if path is None:
            return None
        current.append((field, path))
    return (found, others) if n == len(pairs) - 1 else None


def line_diffs(git: Git) -> LineDiffs | None:
    """The run's `LineDiffs`, None when no walk printed the line's root trees (with a
    commit-graph, or no walk yet): readers then ask git their own way."""
    trees = git.first_trees()
    if trees is None or not trees:
        return None
    known = git.line_diffs
    if isinstance(known, LineDiffs) and known.trees is trees:
        return known
    made = LineDiffs(git, git.first_parents(), trees)
    git.line_diffs = made
    return made


def chain(
    git: Git, order: Mapping[str, int], chained: Sequence[str], bases: Mapping[str, str]
) -> dict[str, tuple[list[str], list[str]]] | None:
    """Per commit of `bases` (each with the newer commit it is compared with; those of
    `chained` on the first-parent line, `order` its places, newest first, HEAD's the
    first base), (paths it has and its base has not, paths its base has and it has not),
    as git names them: what `git diff-tree -r --diff-filter=AD` of each pair lists
    (`GitHistory.prefetch_trees`), from the line's diffs, those off the line asked in
    the same process. None when the line's root trees are not known, git fails, or HEAD
    is not the last of the line."""
    diffs = line_diffs(git) if chained else None
    if diffs is None or order.get(bases[chained[0]]) != len(order) - 1:
        return None
    off = {c: b for c, b in bases.items() if c not in order}
    others = diffs.read_with(order[chained[-1]] + 1, len(order), off)
    if others is None:
        return None
    found = {c: diffs.between(order[c], order[bases[c]]) for c in chained}
    for commit in off:
        changes = others.get(commit, [])
        had = [path for raw, path in changes if raw[-1] == "A"]
        found[commit] = (had, [path for raw, path in changes if raw[-1] == "D"])
    return found


def changed(
    git: Git, start: int, end: int, deleted: bool = False,
    paths: Iterable[str] = (), keep: Container[str] | None = None,
) -> list[tuple[int, str]] | None:  # fmt: skip
    """(place, path) of each path the diff of commit `place` with its first parent names,
    for the places `start` to `end - 1` of the first-parent line, in the line's order:
    what `git log --first-parent --no-renames --name-only` lists (only its deletions when
    `deleted`), limited to `paths` (git's pathspecs, as `git log` takes them: a path
    and everything under it); only those of `keep` when given. Paths are
    repository-relative (one outside the repository root is left out).
    None when the diffs cannot be read from the root trees, or a path is a pathspec git
    would match otherwise (a glob): the caller asks `git log`."""
    diffs = line_diffs(git)
    wanted = list(paths)
    if diffs is None or not all(plain(p) for p in wanted):
        return None
    start = max(start, 0)
    if start >= end:
        return []
    if not diffs.read(start, end):
        return None
    limits = frozenset(p for p in wanted if not p.endswith("/"))  # a folder's: under it only
    under = tuple(p if p.endswith("/") else f"{p}/" for p in wanted)
    prefix = git.prefix
    found: list[tuple[int, str]] = []
    for place in range(start, end):
        for raw, name in diffs.at(place):
            if deleted and raw[-1] != "D":
                continue
            if limits and name not in limits and not name.startswith(under):
                continue
            path = from_git(git, name) if prefix else name
            if path and (keep is None or path in keep):
                found.append((place, path))
    return found


def described(git: Git, commits: Iterable[str]) -> dict[str, tuple[str, int]] | None:
    """Per commit, its date (`%cs`, as `git log` prints it) and its number of parents,
    from one `git log --no-walk` (None when git fails)."""
    wanted = sorted(set(commits))
    if not wanted:
        return {}
    try:
        out = run_git(
            git, "log", "--no-walk=unsorted", "--stdin", "--format=%x01%H %cs %P",
            stdin="".join(f"{sha}\n" for sha in wanted),
        )  # fmt: skip
    except GitError:
        return None
    found: dict[str, tuple[str, int]] = {}
    for row in out.split("\x01"):
        sha, _, rest = row.strip().partition(" ")
        date, _, parents = rest.partition(" ")
        if sha:
            found[sha] = (date, len(parents.split()))
    return found if all(sha in found for sha in wanted) else None
