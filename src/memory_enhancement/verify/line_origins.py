"""Which commit last changed each line of some files: `git blame` for many files at once.

`git blame` walks history once per file; for the 58 memory files with mentions
of a real store (rjmurillo/ai-agents, 2,624 commits) that cost ten times a whole
verification run. Here the `git log -p -U0` of all those files along the
first-parent chain, oldest first (read as one walk of their folder and one
`git diff-tree` of the commits that changed them, folder_log.py), is replayed in
Python: each hunk gives the lines it adds its commit (and their number in that
commit's version), then the uncommitted diff gives its lines no commit. A file
created once and never changed since (most memory files) needs no diff: the walk
names the commit that created it and its object id, and when that is the file on
disk every line is that commit's. A file that got its name from a rename (memories
are reorganized into folders) continues the history of its old name: the rename
commit's diff maps its unchanged lines back to the old file, whose own history is
replayed the same way, up to `MAX_RENAMES` renames back.

A file the replay cannot account for line by line is left out, and the caller
blames it alone: a binary diff, a count that does not match the file on disk,
or a line that a merge brought in (blame follows it into the branch it came
from, where the memory line was written; the replay walks the first-parent line
only). So the replay pays off on linear histories (squash or rebase merges).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence

from memory_enhancement.verify.folder_log import DIFF, QUIET, SHA, FolderLog
from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import run_git
from memory_enhancement.verify.line_maps import Hunk, LineMap, parse_hunk

MAX_RENAMES = 5
_RENAMED = ("--name-status", "-z", "--diff-filter=R")
# The rows of a diff `_replay` reads: most rows are lines a hunk adds or removes, and
# splitting the output into rows to skip them one by one was most of its time.
_NOTED = re.compile(r"\n((?:@@|diff --git |--- |\+\+\+ |Binary files)[^\n]*)")

Origin = tuple[str | None, int]  # (commit, the line's number in that commit's version)


def line_origins(
    git: Git, files: Mapping[str, int], blobs: Mapping[str, str] | None = None
) -> dict[str, list[str | None]]:
    """Per file (a work-tree path, with its number of lines now), the commit that last
    changed each of its lines as the file is on disk now (None: not committed).

    `blobs`, the object id of each file as it is on disk, spares the diffs git need not
    print: none for a file created once and unchanged since, no uncommitted diff for a
    file that is HEAD's."""
    if not files:
        return {}
    names = sorted(files)
    log = FolderLog(git, posixpath.commonpath([posixpath.dirname(n) for n in names]))
    blobs = blobs or {}
    try:
        once = _created_once(log, names, blobs) if log.covers(names) and blobs else {}
        diffed = [n for n in names if n not in once]
        out = log.patches(diffed) if diffed else ""
        edited = [n for n in diffed if not _is_head(log, n, blobs.get(n))]
        pending = run_git(git, *QUIET, "diff", *DIFF, "HEAD", "--", *edited) if edited else ""
    except GitError:
        return {}
    lines: dict[str, list[Origin] | None] = {}
    created: dict[str, str | None] = {}
    merges: set[str] = set()
    for name, sha in once.items():
        lines[name] = [(sha, n) for n in range(1, files[name] + 1)]
        created[name] = sha
    _replay(out, lines, created, merges, committed=True)
    _follow_renames(_Renames(git, log), lines, created, names, 0)
    _replay(pending, lines, {}, merges, committed=False)
    found = {}
    for name in names:
        replayed = lines.get(name)
        if replayed is None or len(replayed) != files[name]:
            continue
        commits = [commit for commit, _ in replayed]
        if merges.isdisjoint(commits):  # a merge's lines came from a branch: blame knows which
            found[name] = commits
    return found


def _created_once(log: FolderLog, names: Sequence[str], blobs: Mapping[str, str]) -> dict[str, str]:
    """The files created by one commit (not a merge) and never changed since, whose object
    id then is the file on disk: each of their lines is that commit's, no diff needed
    (the merges a replay would find among their commits: none)."""
    commits = log.commits()
    once = {}
    for name in names:
        changes = log.changes(name)
        if len(changes) != 1:
            continue
        change = changes[0]
        if change.status == "A" and change.oid == blobs.get(name) and not log.is_merge(change.at):
            once[name] = commits[change.at][0]
    return once


def _is_head(log: FolderLog, name: str, blob: str | None) -> bool:
    """Whether the file on disk is HEAD's (the last change the walk saw left that object),
    so that `git diff HEAD` has nothing to say about it."""
    if blob is None or not log.covers([name]):
        return False
    changes = log.changes(name)
    return bool(changes) and changes[-1].status != "D" and changes[-1].oid == blob


class _Renames:
    """What `git diff-tree -M` says each commit renamed, asked once per run.

    Which creations were renames is asked of git for all of them at once; the old
    names' creations are asked next, then theirs (a memory moved from folder to folder).
    The walk already shows most of those older commits (a file deleted in the folder by
    the commit that created one with the same object id), so they are asked in the
    first process too: one `git diff-tree` instead of one per level."""

    def __init__(self, git: Git, log: FolderLog) -> None:
        self.git, self.log = git, log
        self.said = git.renamed  # commit -> (old, new, exact), shared with deletions.py

    def of(self, commits: list[str], created: Mapping[str, str | None]) -> None:
        """Ask git about these commits (and the older ones the walk suggests)."""
        missing = [c for c in commits if c not in self.said]
        if not missing:
            return
        likely = sorted(self._older(created) - set(self.said) - set(missing))
        if not self._ask(missing + likely) and likely:
            self._ask(missing)

    def _ask(self, commits: list[str]) -> bool:
        stdin = "\n".join(commits) + "\n"
        try:
            out = run_git(self.git, "diff-tree", "--stdin", "-r", "-M", *_RENAMED, stdin=stdin)
        except GitError:
            return False
        said = self.said
        for commit in commits:
            said[commit] = []
        fields = out.split("\0")
        commit = ""
        i = 0
        while i < len(fields):
            field = fields[i].strip()
            if SHA.fullmatch(field):
                commit, i = field, i + 1
            elif field.startswith("R") and i + 2 < len(fields):
                said.setdefault(commit, []).append((fields[i + 1], fields[i + 2], field == "R100"))
                i += 3
            else:
                i += 1
        return True

    def _older(self, created: Mapping[str, str | None]) -> set[str]:
        """The commits that created the files these seem renamed from, and so on back:
        per the walk, a file the creating commit deleted in the folder with the object id
        the created file had."""
        log, found = self.log, set[str]()
        if not log.covers(list(created)):
            return found
        commits = log.commits()
        frontier = [(name, c) for name, c in created.items() if c]
        for _ in range(MAX_RENAMES - 1):
            older = []
            for name, commit in frontier:
                at = log.index(commit)
                made = next((c for c in log.changes(name) if c.at == at), None)
                if made is None or made.status != "A":
                    continue
                for old in log.deleted_at(made.at).get(made.oid, ()):
                    made_old = [c for c in log.changes(old) if c.at < made.at and c.status == "A"]
                    if made_old:  # its last creation: where its replay starts
                        sha = commits[made_old[-1].at][0]
                        found.add(sha)
                        older.append((old, sha))
            frontier = older
        return found


def _follow_renames(
    renames: _Renames,
    lines: dict[str, list[Origin] | None],
    created: Mapping[str, str | None],
    names: Sequence[str],
    depth: int,
) -> None:
    """Give the lines each file had when a rename created it the origins they had
    under the old name (whose own renames are followed first). Only git's own rename
    detection over the whole commit says what it says, so it is asked (see `_Renames`;
    a commit that moves hundreds of files costs git more than the rest of the history
    together)."""
    if depth >= MAX_RENAMES:
        return
    commits = sorted({c for n in names if (c := created.get(n)) and lines.get(n) is not None})
    if not commits:
        return
    renames.of(commits, {n: created.get(n) for n in names} if depth == 0 else {})
    wanted = set(names)
    renamed: dict[str, dict[str, tuple[str, bool]]] = {}
    for commit in commits:
        for old, new, exact in renames.said.get(commit, ()):
            if new in wanted and created.get(new) == commit:
                renamed.setdefault(commit, {})[new] = (old, exact)
    for commit, pairs in renamed.items():
        _before_rename(renames, lines, commit, pairs, depth)


def _before_rename(
    renames: _Renames,
    lines: dict[str, list[Origin] | None],
    commit: str,
    old_of: dict[str, tuple[str, bool]],
    depth: int,
) -> None:
    """Map the lines of the files a commit renamed back to their old names' history."""
    git, log = renames.git, renames.log
    before: dict[str, list[Origin] | None] = {}
    created: dict[str, str | None] = {}
    once = _renamed_unchanged(log, lines, commit, old_of)
    for old, (sha, size) in once.items():
        before[old] = [(sha, n) for n in range(1, size + 1)]
        created[old] = sha
    olds = sorted({old for old, _ in old_of.values()})
    rest = [old for old in olds if old not in once]
    try:
        out = log.patches(rest, before=commit) if rest else ""
    except GitError:
        return
    _replay(out, before, created, set(), committed=True)
    _follow_renames(renames, before, created, olds, depth + 1)
    for new, (old, exact) in old_of.items():
        maps = None if exact else _rename_map(git, commit, old, new)
        then, now = before.get(old), lines.get(new)
        if then is None or now is None or (not exact and maps is None):
            continue
        for n, (origin, at) in enumerate(now):
            if origin != commit:
                continue
            back = at if maps is None else maps.backward(at)
            if back is not None and 0 < back <= len(then):
                now[n] = then[back - 1]


def _renamed_unchanged(
    log: FolderLog,
    lines: Mapping[str, list[Origin] | None],
    commit: str,
    old_of: Mapping[str, tuple[str, bool]],
) -> dict[str, tuple[str, int]]:
    """The old names, renamed unchanged at `commit`, that one commit created and nothing
    changed after it until the rename: their lines are all that commit's, no diff needed.
    Per old name: (that commit, how many of its lines the new name's lines reach back to;
    an unchanged rename keeps every line where it was)."""
    end = log.index(commit) if log.covers([old for old, _ in old_of.values()]) else None
    if end is None:
        return {}
    commits = log.commits()
    once = {}
    for new, (old, exact) in old_of.items():
        changes = [c for c in log.changes(old) if c.at < end]
        if not exact or len(changes) != 1 or changes[0].status != "A":
            continue
        size = max((at for origin, at in lines.get(new) or () if origin == commit), default=0)
        once[old] = (commits[changes[0].at][0], size)
    return once


def _rename_map(git: Git, commit: str, old: str, new: str) -> LineMap | None:
    """How the lines moved between the old file and the new one in a rename with edits."""
    try:
        out = run_git(
            git, *QUIET, "diff", "-M", "-U0", "-w", "--no-color", commit + "^", commit,
            "--", old, new,
        )  # fmt: skip
    except GitError:
        return None
    hunks = [parse_hunk(row) for row in out.split("\n") if row.startswith("@@ ")]
    return LineMap(old, new, tuple(hunks))


def _replay(
    out: str,
    lines: dict[str, list[Origin] | None],
    created: dict[str, str | None],
    merges: set[str],
    *,
    committed: bool,
) -> None:
    """Apply `git log -p -U0` (or `git diff -U0`) output to per-file lists of line
    origins. Headers are read only before a file's first hunk (a deleted line `-- x`
    reads `--- x` inside a hunk); a binary diff makes its file unknown (None). Merge
    commits met are added to `merges`."""
    commit: str | None = None
    path: str | None = None
    hunks: list[Hunk] = []
    headers = False
    new_file = False
    named = ""

    def flush() -> None:
        current = lines.get(path) if path is not None else None
        if path is not None and current is not None:
            for h in reversed(hunks):
                at = h.old_start - 1 if h.old_count else h.old_start
                added = [(commit, h.new_start + i) for i in range(h.new_count)]
                current[at : at + h.old_count] = added
        hunks.clear()

    for match in _NOTED.finditer("\n" + out):  # the rows that may say something
        row = match.group(1)
        first = row[:1]
        if (first == "+" or first == "-") and not headers:
            continue  # a line a hunk adds or removes: its hunk header said all that counts
        if row.startswith("@@@"):
            flush()
            path, headers = None, False
            sha, _, parents = row[3:].partition(" ")
            commit = sha if committed else None
            if " " in parents:
                merges.add(sha)
        elif row.startswith("diff --git "):
            flush()
            path, headers, new_file = None, True, False
            named = row.rpartition(" b/")[2]
        elif headers and row.startswith("--- "):
            new_file = _header_path(row[4:]) is None
        elif headers and row.startswith("+++ "):
            path = _header_path(row[4:])
            if path is not None and (new_file or path not in lines):
                # A new file starts from nothing; one first seen modified came into the
                # log some other way (a shallow history): its lines are unknown.
                lines[path] = [] if new_file else None
                if new_file:
                    created[path] = commit
        elif headers and row.startswith("Binary files"):
            lines[named] = None  # its lines cannot be followed
            path = None
        elif row.startswith("@@ "):
            headers = False
            hunks.append(parse_hunk(row))
    flush()


def _header_path(text: str) -> str | None:
    text = text.rstrip("\t")
    if text == "/dev/null":
        return None
    if len(text) >= 2 and text[0] == text[-1] == '"':
        raw = text[1:-1].encode("ascii", "backslashreplace").decode("unicode_escape")
        text = raw.encode("latin-1", "replace").decode("utf-8", "replace")
    return text[2:] if text[:2] in ("a/", "b/") else text
