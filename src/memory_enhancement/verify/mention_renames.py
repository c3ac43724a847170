"""Renames since a prose mention's commit that no single diff from it shows: a file
renamed in one commit and edited for months after (each commit's own diff pairs it), or
moved twice, through a folder that is neither its first nor its last name.

`mention_diffs.mention_git` asks these only for the gone files the direct diff from the
mention's commit did not pair with a file named like them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from memory_enhancement.verify import first_parent_diffs
from memory_enhancement.verify.git import Git, GitError, name_status
from memory_enhancement.verify.git_objects import from_git as _from_git
from memory_enhancement.verify.git_objects import run_git
from memory_enhancement.verify.git_objects import to_git as _to_git

RENAMES = ("--name-status", "-z", "--diff-filter=R")


def renames(git: Git, args: list[str]) -> list[tuple[str, str]]:
    """(old, new) renames `git diff <args>` finds."""
    try:
        out = run_git(git, "diff", *args)
    except GitError:
        return []
    return rename_fields(git, out.split("\0"))


def renamed_since(
    git: Git, unpaired: Mapping[str, tuple[set[str], set[str]]]
) -> list[tuple[str, str]]:
    """(old, new) for the gone files that commits since their mention's commit renamed,
    one commit at a time, into a file of the work tree named like them; `unpaired` gives
    per commit the gone files and the names offered for them.

    A package renamed in one commit (`pause_monitor/` -> `rogue_hunter/`, every file
    unchanged) and edited for months after is no rename to the direct diff from an old
    commit: the files differ too much by then. Each commit's own diff pairs them. One
    log, limited to the gone files and those named like them, reads only their history
    since the commit all the mentions' commits come from (then, for a gone file still
    unpaired, `--follow` of each file named like it); whether a rename came after a
    mention's own commit is asked only of the renames found."""
    if not unpaired:
        return []
    olds = {p for paths, _ in unpaired.values() for p in paths}
    offered = {p for _, names in unpaired.values() for p in names}
    spec = [_to_git(git, p) for p in sorted(olds | offered)]
    commits = sorted(unpaired)
    try:  # the history since the commit they all come from, not all of it
        base = run_git(git, "merge-base", "--octopus", *commits).strip() if commits[1:] else ""
    except GitError:
        base = ""
    since = [f"^{base or commits[0]}"] if base or not commits[1:] else []
    # Copies too (`-C -C`, among these paths only): filter_mate copied its module into
    # core/tasks/, kept working there, then moved the old file to a backup folder and
    # deleted it; the copy is where the code lives.
    flags = ["-M", "-C", "-C", "--name-status", "-z", "--diff-filter=RC"]
    found = _moves(git, flags, since, spec)
    before: dict[tuple[str, str], bool] = {}
    renames = _paired(git, unpaired, found, before)
    # A file moved twice goes through a folder that is neither its first nor its last
    # (found on aoxiansheng/stock-api: receiver/ to restapi/receiver/ to 01-entry/
    # receiver/), and a commit shows a rename only when both its sides are in the log's
    # paths: from the commit that deleted a gone file, its own diff says where it went.
    # (A log of every file of that name, in any folder, costs 8x: git cannot skip
    # folders then; `--follow` of each file named like it, more still.)
    left = sorted(olds - {old for old, _ in renames})
    more = [move for old in left for move in _moved_on(git, old, since)]
    return _paired(git, unpaired, found + more, before) if more else renames


def _moved_on(git: Git, old: str, since: list[str]) -> list[tuple[str, str, str, str]]:
    """(commit, "R", from, to): the renames of `old` one commit at a time, each found in
    the diff of the commit that deleted the file's name of the moment (a few steps)."""
    moves: list[tuple[str, str, str, str]] = []
    path = old
    for _ in range(_STEPS):
        try:
            # --full-history: a name that lived on a merged branch only (stock-api's
            # restapi/) is simplified away otherwise, its deletion with it
            gone = _deleted_on_line(git, path, since)
            gone = run_git(
                git, "log", "--full-history", "--format=%H", "--diff-filter=D", "--reverse",
                "HEAD", *since, "--", _to_git(git, path),
            ).split() if gone is None else gone  # fmt: skip
            found = renames(git, ["-M", *RENAMES, f"{gone[0]}^", gone[0]]) if gone else []
        except GitError:
            break
        went = [new for was, new in found if was == path]
        if not went:
            break
        moves.append((gone[0], "R", path, went[0]))
        path = went[0]
    return moves


_STEPS = 5  # renames of one file followed, at most


def _deleted_on_line(git: Git, path: str, since: list[str]) -> list[str] | None:
    """The commits `_moved_on`'s `git log` names as deleting `path` since `since`, oldest
    first, from the run's diffs of the first-parent line (first_parent_diffs.LineDiffs)
    when that line holds every commit since (no merge after `since`: nothing off the
    line) and no commit since changed anything under `path` but `path` itself (then
    each commit's diff of the path is the log's, renames or not). None otherwise: the
    log is asked (on rjmurillo/ai-agents 0.12 s of git's CPU, for one path)."""
    merges, diffs = git.first_merges(), first_parent_diffs.line_diffs(git)
    named = _to_git(git, path)
    if merges is None or diffs is None or not first_parent_diffs.plain(named):
        return None
    shas = git.first_parents()
    start = 0
    if since:
        start = next((n + 1 for n, sha in enumerate(shas) if f"^{sha}" == since[0]), -1)
    if start < 0 or since[1:] or any(place >= start for place in merges):
        return None
    if not diffs.read(start, len(shas)):
        return None
    under = named + "/"
    gone = []
    for place in range(start, len(shas)):
        for raw, name in diffs.at(place):
            if name == named and raw[-1] == "D":
                gone.append(shas[place])
            elif name.startswith(under) or (name == named and raw[-1] not in "DAM"):
                return None
    return gone


def named_now(git: Git, path: str, since: str, present: Callable[[str], bool]) -> str | None:
    """`path`, a file's name after commit `since` renamed it, if the work tree has it
    (`present`), else its last name if later commits renamed it on into one there now,
    each from the diff of the commit deleting the name before (Alpha.java renamed with an
    edit to Beta.java, then to Gamma.java: the deleting commit of Alpha.java pairs it
    with Beta.java, which is gone too); None when neither is there."""
    if present(path):
        return path
    moves = _moved_on(git, path, [f"^{since}"])
    return moves[-1][3] if moves and present(moves[-1][3]) else None


def _moves(
    git: Git, flags: list[str], since: list[str], spec: list[str]
) -> list[tuple[str, str, str, str]]:
    """(commit, R or C, old, new) of the renames and copies `git log` shows, newest first."""
    try:
        out = run_git(git, "log", "--format=%x01%H", *flags, "HEAD", *since, "--", *spec)
    except GitError:
        return []
    found: list[tuple[str, str, str, str]] = []
    at, i, fields = "", 0, out.split("\0")
    while i < len(fields):
        field = fields[i].lstrip("\n")
        if field.startswith("\x01"):
            at = field[1:]
        elif field[:1] in ("R", "C") and i + 2 < len(fields):
            old, new = _from_git(git, fields[i + 1]), _from_git(git, fields[i + 2])
            if old and new:
                found.append((at, field[0], old, new))
            i += 2
        i += 1
    return found


def _paired(
    git: Git,
    unpaired: Mapping[str, tuple[set[str], set[str]]],
    found: list[tuple[str, str, str, str]],
    before: dict[tuple[str, str], bool],
) -> list[tuple[str, str]]:
    """(old, new) for the gone files whose moves after their mention's commit lead to one
    file named like them (`before`: which commit came before which, asked once)."""
    renames = []
    for commit, (paths, names) in sorted(unpaired.items()):
        moves: dict[str, dict[str, list[str]]] = {"R": {}, "C": {}}
        for at, kind, old, new in reversed(found):  # oldest first
            if (at, commit) not in before:
                before[at, commit] = _ancestor(git, at, commit)
            if not before[at, commit]:
                moves[kind].setdefault(old, []).append(new)
        with_copies = {**moves["C"]}
        for old, news in moves["R"].items():
            with_copies[old] = [*news, *with_copies.get(old, [])]
        for old in sorted(paths):  # renames first; copies when those lead to no such file
            ends = _reached(old, moves["R"], names) or _reached(old, with_copies, names)
            if len(ends) == 1:
                renames.append((old, ends.pop()))
    return renames


def _reached(old: str, moves: Mapping[str, list[str]], names: set[str]) -> set[str]:
    """The files named like `old` that its moves lead to, one after another."""
    seen, todo, ends = {old}, [old], set()
    while todo:
        for new in moves.get(todo.pop(), ()):
            if new not in seen:
                seen.add(new)
                todo.append(new)
                ends |= {new} & names
    return ends


def _ancestor(git: Git, commit: str, of: str) -> bool:
    """Whether `commit` is `of` or came before it."""
    try:
        run_git(git, "merge-base", "--is-ancestor", commit, of)
    except GitError:
        return False
    return True


def rename_fields(git: Git, fields: list[str]) -> list[tuple[str, str]]:
    """(old, new) renames of `--name-status -z` fields, relative to the repository root."""
    found = []
    for status, path, renamed in name_status(fields):
        if status != "R":
            continue
        old, new = _from_git(git, path), _from_git(git, renamed)
        if old and new:
            found.append((old, new))
    return found
