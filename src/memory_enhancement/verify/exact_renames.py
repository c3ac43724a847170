"""The gone files renamed unchanged since each mention's commit: what `git diff -M100%
<commit> HEAD`, limited to the gone files and the files now holding their content, says.

An unchanged file keeps its object id, so the only files a gone file can have become
unchanged are those of the work tree's list with the id it had at its commit
(`mention_diffs.mention_git` asks this first, for every commit at once, then looks for
renames with edits among files named like the gone ones).

Git's answer for a commit depends only on which of those paths (the gone files and the
candidates) each tree has, and with which id and mode: a path the commit has and HEAD
has not is a deleted file, one HEAD has and the commit has not an added file, and an
added file of a deleted file's id is its rename. So the paths' ids at every commit are
read from one chained `git diff-tree` (each commit diffed with the next newer one on
HEAD's first-parent line, as `GitHistory.prefetch_trees` reads file lists), and the
pairs are made here. Git's diff limited to the paths (one process for all the commits)
cost git 0.21 s of a first run on rjmurillo/ai-agents (68 commits, 120 paths: git compares
every entry of every folder it opens with each path given), the chained diff 0.07 s. When
the run reads each first-parent commit's own diff (first_parent_diffs.LineDiffs, shared with
the file lists and the deletions), the ids come from it: no process of their own.

Several deleted or added files of one id (a session log archived to two folders) are
paired as git pairs them (`_pairs`). Git is asked as before (`_diffed`) for the commits
whose pairs are not made here: a file that changed type, a commit off the
first-parent line; and for every commit when one of the paths is a folder in some tree
(a path given to git stands for everything under it).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

from memory_enhancement.verify import first_parent_diffs
from memory_enhancement.verify.blame import GitHistory
from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import from_git, run_git, to_git
from memory_enhancement.verify.mention_renames import RENAMES, rename_fields

State = tuple[int, str] | None  # (mode, object id) of a path in a tree; None: not there
_TYPE = 0o170000
_FILE, _FOLDER = 0o100000, 0o040000
_ALTERNATIVES = 100  # sources of one id git weighs for an added file


def exact_renames(
    git: Git, history: GitHistory, gone: Mapping[str, set[str]]
) -> dict[str, list[tuple[str, str]]]:
    """Per commit, the gone files renamed unchanged between it and HEAD: (old, new) as
    git's diff of the commit's root tree with HEAD's would give them, limited to the gone
    files and the files of the work tree's list with an id one of them had at its own
    commit. A commit missing from the answer (its tree unreadable, or another commit of
    the same tree answered for it): the caller asks git's whole diff."""
    commits = sorted(gone)
    olds = sorted({path for paths in gone.values() for path in paths})
    if any("\n" in path for path in olds):
        return {}  # not a name the object lookup can ask: git diffs the whole trees
    history.fetch(["HEAD:", *(f"{c}:" for c in commits)])
    # Each gone file's id at its own mention's commit (every file at every commit was
    # 10,000 requests for the file mentions of rjmurillo/ai-agents: 5 s of a first run).
    history.fetch(history.spec(c, p) for c in commits for p in gone[c])
    head = history.tree("HEAD:") if commits else None
    if head is None:
        return {}
    pairs: dict[str, str] = {}  # "tree then, tree of HEAD" -> the commit
    for commit in commits:
        then = history.tree(f"{commit}:")
        if then is not None:
            pairs[f"{then.oid} {head.oid}"] = commit
    if not pairs:
        return {}
    ids = {oid for c in pairs.values() for p in gone[c] if (oid := history.object_id(c, p))}
    news = sorted(set(history.indexed_as(ids)) - set(olds))
    if not news:
        return {commit: [] for commit in pairs.values()}
    paths = [to_git(git, p) for p in [*olds, *news]]
    found = _paired(git, history, paths, set(pairs.values()))
    rest = {line: commit for line, commit in pairs.items() if commit not in found}
    if rest:
        diffed = _diffed(git, paths, rest)
        if diffed is None:
            return {}
        found.update(diffed)
    return found


def _paired(
    git: Git, history: GitHistory, paths: list[str], commits: set[str]
) -> dict[str, list[tuple[str, str]]]:
    """The renames of the commits whose pairs need no choice of git's, made from the
    paths' ids at each commit (one chained `git diff-tree`); the other commits are left
    out. `paths` as git names them."""
    at_head = _at_head(history, paths)
    if at_head is None:
        return {}
    order = {sha: n for n, sha in enumerate(git.first_parents())}
    top = git.head()
    chained = sorted((c for c in commits if c in order), key=order.__getitem__, reverse=True)
    if top is None or not chained:
        return {}
    bases = [top, *chained][: len(chained)]
    wanted = set(paths)
    diffs = first_parent_diffs.line_diffs(git)
    at = [order.get(top, -1), *(order[c] for c in chained)]  # the chain's places, HEAD's first
    if diffs is not None and at[0] == len(order) - 1 and diffs.read(at[-1] + 1, len(order)):
        line = _from_line(diffs, wanted, at)
        return {} if line is None else _found(git, chained, line, at_head)
    # A line "C P" is commit C with parent P: the diff goes from P to C, so the new side
    # of each entry is what C has.
    stdin = "".join(f"{c} {b}\n" for c, b in zip(chained, bases, strict=True))
    try:
        out = run_git(
            git, "--literal-pathspecs", "diff-tree", "--stdin", "-r", "--no-renames", "--raw",
            "-z", *_limits(git, history, paths), stdin=stdin,
        )  # fmt: skip
    except GitError:
        return {}
    changes: dict[str, list[tuple[str, State]]] = {c: [] for c in chained}
    current: list[tuple[str, State]] = []
    folders = _Folders(wanted)
    fields = iter(out.split("\0"))  # an entry's two fields taken in turn: no index to count
    for field in fields:
        path = next(fields, None) if field[:1] == ":" else None
        if path is None:  # a commit's id: its entries follow
            current = changes.get(field.strip(), [])
        elif path in wanted:
            meta = field.split(" ")  # :old-mode new-mode old-id new-id status
            mode = int(meta[1], 8)
            current.append((path, (mode, meta[3]) if mode else None))
        elif (folder := path.rpartition("/")[0]) != folders.seen and folders.wanted(folder):
            return {}  # a folder at some commit: everything under it is in git's diff
    return _found(git, chained, [changes[c] for c in chained], at_head)


def _from_line(
    diffs: first_parent_diffs.LineDiffs, wanted: set[str], places: list[int]
) -> list[list[tuple[str, State]]] | None:
    """What the chained diff says of the wanted paths, from the line's own diffs (read
    before): per step of the chain (`places`: HEAD's, then each commit's, newest first),
    each wanted path's (mode, id) at the older commit where one commit between them
    changed it, the oldest such change's old side. None where a wanted path is a folder
    in some tree (as `_paired` tells from the chained diff)."""
    steps: list[list[tuple[str, State]]] = []
    folders = _Folders(wanted)
    for newer, older in pairwise(places):
        step: dict[str, State] = {}
        for place in range(newer, older, -1):
            for raw, path in diffs.at(place):
                if path in wanted:
                    meta = raw.split(" ")  # :old-mode new-mode old-id new-id status
                    mode = int(meta[0][1:], 8)
                    step[path] = (mode, meta[2]) if mode else None
                elif (folder := path.rpartition("/")[0]) != folders.seen and folders.wanted(folder):
                    return None
        steps.append(list(step.items()))
    return steps


def _found(
    git: Git, chained: list[str], changes: list[list[tuple[str, State]]], at_head: dict[str, State]
) -> dict[str, list[tuple[str, str]]]:
    """The renames of each commit of the chain (newest first; `changes`: the wanted paths
    its step changed, as they are at it), from HEAD's state back."""
    state = dict(at_head)
    found: dict[str, list[tuple[str, str]]] = {}
    for commit, changed in zip(chained, changes, strict=True):
        for path, now in changed:  # newest first: each applies its diff to the newer state
            state[path] = now
        renamed = _renamed(state, at_head)
        if renamed is not None:
            found[commit] = [
                (old, new)
                for was, now in renamed
                if (old := from_git(git, was)) and (new := from_git(git, now))
            ]
    return found


def _limits(git: Git, history: GitHistory, paths: list[str]) -> list[str]:
    """The chained diff's pathspec: the paths' top folders, or none when those hold most of
    the work tree's files. A pathspec costs git a comparison per entry it meets per folder
    given: on rjmurillo/ai-agents, the 13 top folders of 120 paths cost 785M instructions
    and the whole tree 497M, for an answer 4% longer."""
    tops = {p.split("/", 1)[0] for p in paths}
    files = history.files_now().files
    if git.prefix or not isinstance(files, frozenset):
        return ["--", *sorted(tops)]
    inside = sum(f.partition("/")[0] in tops for f in files)
    return [] if 2 * inside > len(files) else ["--", *sorted(tops)]


def _at_head(history: GitHistory, paths: list[str]) -> dict[str, State] | None:
    """Each path's (mode, id) in HEAD's tree; None when one is a folder there."""
    folders = {p.rpartition("/")[0] for p in paths}
    history.fetch(f"HEAD:{folder}" for folder in folders)
    found: dict[str, State] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        tree = history.tree(f"HEAD:{folder}")
        entry = tree.get(name) if tree is not None else None
        state = (int(entry[0], 8), entry[1]) if entry is not None else None
        if state is not None and state[0] & _TYPE == _FOLDER:
            return None
        found[path] = state
    return found


def _renamed(state: Mapping[str, State], head: Mapping[str, State]) -> list[tuple[str, str]] | None:
    """(old, new) of the exact renames between a commit (`state`) and HEAD, among these
    paths, paired as git pairs them; None where git's pairing is not followed here (see
    the module's docstring)."""
    sources: dict[str, list[tuple[bytes, str, int]]] = {}  # id -> its deleted files
    added: dict[str, list[tuple[bytes, str, int]]] = {}  # id -> its added files
    for path, then in state.items():
        now = head[path]
        if then is not None and now is not None:
            if then[0] & _TYPE != now[0] & _TYPE:
                return None  # a type change: git's pairs of it are not ours to guess
            continue
        side, entry = (sources, then) if then is not None else (added, now)
        if entry is not None:
            key = path.encode("utf-8", "surrogateescape")
            side.setdefault(entry[1], []).append((key, path, entry[0]))
    renamed = []
    for oid in sources.keys() & added.keys():  # empty files too: git pairs them alike
        renamed += _pairs(sorted(sources[oid]), sorted(added[oid]))
    return renamed


def _pairs(
    sources: list[tuple[bytes, str, int]], added: list[tuple[bytes, str, int]]
) -> list[tuple[str, str]]:
    """Files deleted and added with one id, paired as git's exact rename detection pairs
    them (`find_identical_files`, diffcore-rename.c): each added file in git's order (the
    paths' bytes) takes the first source in that order not taken yet, one of the same
    name first, among at most 100; a source of another kind than a plain file pairs only
    with its own kind."""
    taken: set[bytes] = set()
    found = []
    for _key, new, mode in added:
        best, score, tries = None, 0, _ALTERNATIVES
        for was, old, old_mode in sources:
            plain = mode & _TYPE == _FILE and old_mode & _TYPE == _FILE
            if not plain and mode != old_mode:
                continue
            if was in taken:
                continue
            same = old.rpartition("/")[2] == new.rpartition("/")[2]
            if 1 + same > score:
                best, score = (was, old), 1 + same
                if same:
                    break
            tries -= 1
            if not tries:
                break
        if best is not None:
            taken.add(best[0])
            found.append((best[1], new))
    return found


class _Folders:
    """The folders of the paths a diff lists, each told once whether it is a wanted path
    or lies under one (a wanted path that is a folder at some commit: then git pairs the
    renames, not this module). A folder's entries come together, so only a change of
    folder (`seen`) is asked about, and a folder met at another commit is known clear."""

    def __init__(self, wanted: set[str]) -> None:
        self.paths, self.seen, self._clear = wanted, "", set[str]()

    def wanted(self, folder: str) -> bool:
        """Whether `folder` (not `seen`) is or lies under a wanted path; it is `seen` now."""
        self.seen = folder
        if folder in self._clear:
            return False
        if _under(folder, self.paths):
            return True
        self._clear.add(folder)
        return False


def _under(folder: str, wanted: set[str]) -> bool:
    """Whether a folder is one of the wanted paths or lies under one (a folder there)."""
    while folder:
        if folder in wanted:
            return True
        folder = folder.rpartition("/")[0]
    return False


def _diffed(
    git: Git, paths: list[str], pairs: Mapping[str, str]
) -> dict[str, list[tuple[str, str]]] | None:
    """What git's diff limited to the paths says of these commits ("tree then, tree of
    HEAD" -> commit), all in one `git diff-tree --stdin` (git echoes each pair of trees
    before its answer); None when git fails."""
    try:
        out = run_git(
            git, "--literal-pathspecs", "diff-tree", "--stdin", "-r", "-M100%", *RENAMES,
            "--", *paths, stdin="".join(line + "\n" for line in pairs),
        )  # fmt: skip
    except GitError:
        return None
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for field in out.split("\0"):
        # A pair of trees whose diff is empty is echoed too: the next one's echo follows
        # in the same field (read as one, it gave that commit's renames to this one).
        line, newline, rest = field.partition("\n")
        while newline and line in pairs:
            current = sections.setdefault(pairs[line], [])
            field = rest
            line, newline, rest = field.partition("\n")
        current.append(field)
    return {commit: rename_fields(git, sections.get(commit, [])) for commit in pairs.values()}
