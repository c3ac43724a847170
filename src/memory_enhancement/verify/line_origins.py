"""Which commit last changed each line of some files: `git blame` for many files at once.

`git blame` walks history once per file; for the 58 memory files with mentions
of a real store (rjmurillo/ai-agents, 2,624 commits) that cost ten times a whole
verification run. Here the `git log -p -U0` of all those files along the
first-parent chain, oldest first (read as one walk of their folder and one
`git diff-tree` of the commits that changed them), is replayed in Python: each hunk gives the
lines it adds its commit (and their number in that commit's version), then the
uncommitted diff gives its lines no commit. A file that got its name from a
rename (memories are reorganized into folders) continues the history of its old
name: the rename commit's diff maps its unchanged lines back to the old file,
whose own history is replayed the same way, up to `MAX_RENAMES` renames back.

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

from memory_enhancement.verify.blame import run_with_input
from memory_enhancement.verify.git import Git, GitError, Hunk, LineMap

MAX_RENAMES = 5
_QUIET = ("-c", "core.quotePath=false")
_DIFF = ("-U0", "--no-color", "--no-ext-diff", "--no-renames")
_RENAMED = ("--name-status", "-z", "--diff-filter=R")
_SHA = re.compile(r"[0-9a-f]{40}")

Origin = tuple[str | None, int]  # (commit, the line's number in that commit's version)


def line_origins(git: Git, files: Mapping[str, int]) -> dict[str, list[str | None]]:
    """Per file (a work-tree path, with its number of lines now), the commit that last
    changed each of its lines as the file is on disk now (None: not committed)."""
    if not files:
        return {}
    names = sorted(files)
    log = _FolderLog(git, posixpath.commonpath([posixpath.dirname(n) for n in names]))
    try:
        out = log.patches(names)
        pending = git.run(*_QUIET, "diff", *_DIFF, "HEAD", "--", *names)
    except GitError:
        return {}
    lines: dict[str, list[Origin] | None] = {}
    created: dict[str, str | None] = {}
    merges: set[str] = set()
    _replay(out, lines, created, merges, committed=True)
    _follow_renames(git, log, lines, created, names, 0)
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


class _FolderLog:
    """The first-parent history of the folder holding the memory files, read once.

    `git log -p -- <58 files>` spends most of its time matching each path of each
    commit against every file named; the same walk limited to one folder costs a
    third as much. So the walk lists which files each commit changed (`git log
    --raw` of the folder), and only the commits that changed the wanted files are
    diffed, in one `git diff-tree --stdin` limited to those files: the same diffs,
    put back in the order and form `git log -p` gives them. A folder that is the
    whole repository (memory files with nothing in common) is not worth walking:
    `git log -p` of the files is asked instead.
    """

    def __init__(self, git: Git, folder: str) -> None:
        self.git = git
        self.folder = folder
        self._commits: list[tuple[str, str]] | None = None  # (commit, parents), oldest first
        self._changed: dict[str, list[int]] = {}  # path -> indexes of the commits changing it

    def covers(self, paths: Sequence[str]) -> bool:
        return bool(self.folder) and all(p.startswith(self.folder + "/") for p in paths)

    def patches(self, paths: Sequence[str], before: str | None = None) -> str:
        """What `git log --first-parent -m --reverse -p -U0 <before>^ -- <paths>` prints
        (HEAD when `before` is None), in the form `_replay` reads."""
        start = "HEAD" if before is None else before + "^"
        if not self.covers(paths):
            return self.git.run(*_QUIET, "log", *_LOG, start, "--", *paths)
        commits = self._walk()
        end = len(commits)
        if before is not None:
            end = next((n for n, (sha, _) in enumerate(commits) if sha == before), -1)
            if end < 0:  # not on the walked line: ask git the long way
                return self.git.run(*_QUIET, "log", *_LOG, start, "--", *paths)
        wanted = sorted({n for p in paths for n in self._changed.get(p, ()) if n < end})
        if not wanted:
            return ""
        stdin = "".join(
            f"{sha} {parents.split(' ', 1)[0]}\n" if parents else f"{sha}\n"
            for sha, parents in (commits[n] for n in wanted)
        )
        out = run_with_input(
            self.git, *_QUIET, "diff-tree", "--stdin", "--root", "-p", *_DIFF, "--", *paths,
            stdin=stdin,
        )  # fmt: skip
        shown: dict[str, list[str]] = {}
        current: list[str] = []
        for row in out.split("\n"):
            if _SHA.fullmatch(row):
                current = shown.setdefault(row, [])  # git names each commit before its diff
            else:
                current.append(row)
        parts = []
        for sha, parents in (commits[n] for n in wanted):
            parts.append(f"@@@{sha} {parents}")
            parts.extend(shown.get(sha, ()))
        return "\n".join(parts) + "\n"

    def _walk(self) -> list[tuple[str, str]]:
        """One `git log --raw` of the folder: the commits changing it, and what they changed.

        The run also needs HEAD's whole first-parent history with commit times. Without a
        commit-graph git parses every commit of the walk anyway, so the walk lists them
        all (`--sparse`) with their times. With one, printing a commit's time makes git
        parse the commit it could otherwise skip (0.09 s instead of 0.03 s for 2,624
        commits): the walk lists only the commits changing the folder, and the times
        come from `git rev-list --timestamp`, which reads them from the graph."""
        if self._commits is None:
            graph = _has_commit_graph(self.git)
            out = self.git.run(
                "log", "--first-parent", "-m", "--reverse", *(() if graph else ("--sparse",)),
                "--raw", "-z", "--no-renames", "--no-abbrev",
                "--format=@@@%H %P" if graph else "--format=@@@%H %ct %P", "HEAD", "--",
                self.folder,
            )  # fmt: skip
            commits: list[tuple[str, str]] = []
            times: list[int] = []
            fields = out.split("\0")
            changed = self._changed
            i, count = 0, len(fields)
            while i < count:
                field = fields[i]
                if field[:1] == ":" or field[:2] == "\n:":  # a change, then its path
                    if commits and i + 1 < count:
                        changed.setdefault(fields[i + 1], []).append(len(commits) - 1)
                    i += 2
                    continue
                field = field.lstrip("\n")
                if field.startswith("@@@"):
                    sha, _, rest = field[3:].partition(" ")
                    if not graph:
                        time, _, rest = rest.partition(" ")
                        times.append(int(time))
                    commits.append((sha, rest.strip()))
                i += 1
            self._commits = commits
            # Every first-parent commit is known now: the run's Git needs no walk of its
            # own (Git.first_parents).
            if graph:
                self._learn_first_parents()
            else:
                self.git.learn_first_parents(times, [sha for sha, _ in commits])
        return self._commits

    def _learn_first_parents(self) -> None:
        try:
            out = self.git.run("rev-list", "--first-parent", "--timestamp", "--reverse", "HEAD")
        except GitError:
            return  # the run's Git walks it itself if asked
        times, shas = [], []
        for row in out.split("\n"):
            time, _, sha = row.partition(" ")
            if sha and time.isdigit():
                times.append(int(time))
                shas.append(sha)
        self.git.learn_first_parents(times, shas)


def _has_commit_graph(git: Git) -> bool:
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


_LOG = ("--first-parent", "-m", "--reverse", "-p", *_DIFF, "--format=@@@%H %P")


def _follow_renames(
    git: Git,
    log: _FolderLog,
    lines: dict[str, list[Origin] | None],
    created: Mapping[str, str | None],
    names: Sequence[str],
    depth: int,
) -> None:
    """Give the lines each file had when a rename created it the origins they had
    under the old name (whose own renames are followed first). Which creations were
    renames is asked of git once for all of them (`git diff-tree --stdin`)."""
    if depth >= MAX_RENAMES:
        return
    commits = sorted({c for n in names if (c := created.get(n)) and lines.get(n) is not None})
    if not commits:
        return
    stdin = "\n".join(commits) + "\n"
    try:
        out = run_with_input(git, "diff-tree", "--stdin", "-r", "-M", *_RENAMED, stdin=stdin)
    except GitError:
        return
    wanted = set(names)
    renamed: dict[str, dict[str, tuple[str, bool]]] = {}
    fields = out.split("\0")
    commit = ""
    i = 0
    while i < len(fields):
        field = fields[i].strip()
        if _SHA.fullmatch(field):
            commit, i = field, i + 1
        elif field.startswith("R") and i + 2 < len(fields):
            old, new = fields[i + 1], fields[i + 2]
            if new in wanted and created.get(new) == commit:
                renamed.setdefault(commit, {})[new] = (old, field == "R100")
            i += 3
        else:
            i += 1
    for commit, pairs in renamed.items():
        _before_rename(git, log, lines, commit, pairs, depth)


def _before_rename(
    git: Git,
    log: _FolderLog,
    lines: dict[str, list[Origin] | None],
    commit: str,
    old_of: dict[str, tuple[str, bool]],
    depth: int,
) -> None:
    """Map the lines of the files a commit renamed back to their old names' history."""
    olds = sorted({old for old, _ in old_of.values()})
    try:
        out = log.patches(olds, before=commit)
    except GitError:
        return
    before: dict[str, list[Origin] | None] = {}
    created: dict[str, str | None] = {}
    _replay(out, before, created, set(), committed=True)
    _follow_renames(git, log, before, created, olds, depth + 1)
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


def _rename_map(git: Git, commit: str, old: str, new: str) -> LineMap | None:
    """How the lines moved between the old file and the new one in a rename with edits."""
    try:
        out = git.run(
            *_QUIET, "diff", "-M", "-U0", "--no-color", commit + "^", commit, "--", old, new
        )
    except GitError:
        return None
    hunks = [_hunk(row) for row in out.split("\n") if row.startswith("@@ ")]
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

    for row in out.split("\n"):
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
            hunks.append(_hunk(row))
    flush()


def _hunk(row: str) -> Hunk:
    old_part, new_part = row.split(" ")[1:3]
    old_start, _, old_count = old_part[1:].partition(",")
    new_start, _, new_count = new_part[1:].partition(",")
    return Hunk(
        int(old_start),
        int(old_count) if old_count else 1,
        int(new_start),
        int(new_count) if new_count else 1,
    )


def _header_path(text: str) -> str | None:
    text = text.rstrip("\t")
    if text == "/dev/null":
        return None
    if len(text) >= 2 and text[0] == text[-1] == '"':
        raw = text[1:-1].encode("ascii", "backslashreplace").decode("unicode_escape")
        text = raw.encode("latin-1", "replace").decode("utf-8", "replace")
    return text[2:] if text[:2] in ("a/", "b/") else text
