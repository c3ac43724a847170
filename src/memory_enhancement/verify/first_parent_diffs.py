"""What `git log --first-parent` lists as changed, asked of root trees the run already has.

Two reasons of a first run read the first-parent line commit by commit: the commit that
deleted a gone file (deletions.py) and the earlier versions of a file whose cited lines
were past its end when committed (earlier.py). `git log` inflates every commit of the
line for that, which the run's folder walk has just done (folder_log.py): on
rjmurillo/ai-agents, 2,621 commits, 0.34G instructions of the 2.40G the deletions' log
cost, and most of the 0.55G of the earlier versions' log. When that walk printed each
commit's root tree (`Git.first_trees`), the same diffs are asked of one `git diff-tree
--stdin` fed the pairs of trees: each commit's tree with its first parent's, as `git
log --first-parent` diffs them (a merge with its first parent; the first commit with
the empty tree, as `log` shows a root commit).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence

from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import from_git, run_git

# The empty tree, by the length of the repository's object ids (SHA-1, SHA-256): git
# knows it without storing it.
_EMPTY = {
    40: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    64: "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
}


def changed(
    git: Git, trees: Sequence[str], start: int, end: int, options: Sequence[str],
    paths: Iterable[str] = (), keep: Container[str] | None = None,
) -> list[tuple[int, str]] | None:  # fmt: skip
    """(place, path) of each path the diff of commit `place` with its first parent names,
    for the places `start` to `end - 1` of the first-parent line (`trees`: the root tree
    of each, oldest first), in the line's order: `git diff-tree -r --no-renames
    --name-only` with `options`, limited to `paths` (git's pathspecs, as `git log` takes
    them); only those of `keep` when given. Paths are repository-relative (one outside
    the repository root is left out).
    None when git fails or its answer cannot be read (the caller asks `git log`)."""
    start = max(start, 0)
    if start >= end:
        return []
    empty = _EMPTY.get(len(trees[0]))
    if start == 0 and empty is None:
        return None
    pairs = [(trees[n - 1] if n else str(empty), trees[n]) for n in range(start, end)]
    wanted = list(paths)
    try:
        out = run_git(
            git, "diff-tree", "--stdin", "-r", "--no-renames", "--name-only", "-z", *options,
            *(("--", *wanted) if wanted else ()),
            stdin="".join(f"{old} {new}\n" for old, new in pairs),
        )  # fmt: skip
    except GitError:
        return None
    # Git echoes each pair ("<old> <new>\n", whether or not its diff is empty), then
    # each path of its diff ("<path>\0"): a field between NULs is the echoes of the pairs
    # with nothing (more) to list and of the next pair, then a path. Read in the order
    # asked, each echo known: a path holding a newline is still one path.
    echoes = [f"{old} {new}\n" for old, new in pairs]
    echoes.append("\0")  # no pair after the last: never the start of a field
    found: list[tuple[int, str]] = []
    n = -1  # the pair whose paths are being read
    fields = out.split("\0")
    if fields[-1] == "":
        fields.pop()  # after the last NUL
    prefix = git.prefix
    for field in fields:
        if "\n" in field:  # echoes (or, rarely, a path holding a newline)
            while field.startswith(echoes[n + 1]):
                field = field[len(echoes[n + 1]) :]
                n += 1
        if n < 0:
            return None  # git's answer does not start with the first pair asked
        path = from_git(git, field) if prefix else field
        if path and (keep is None or path in keep):
            found.append((start + n, path))
    if n != len(pairs) - 1:
        return None  # an echo missing: not the pairs asked
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
