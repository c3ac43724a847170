"""When each memory file was last committed: what `recent` orders an undated memory by.

A Serena memory carries no date, so `recent` used to fall back to the file's mtime, which
in a fresh clone is the checkout time: every memory "updated" in the same second, the
order meaningless. A file git tracks and that is unchanged since its last commit was
last changed then; a modified, untracked or ignored one keeps its mtime.

Git is asked once for the whole store: `git status` for the files changed since HEAD,
then one `git log --name-only` of the store folder, read as it comes and stopped once
every file wanted has been seen. The answers are kept in the state database with HEAD
and each file's mtime and size, so a second `recent` asks git nothing: HEAD is read from
the files of `.git` (a process for `git rev-parse` would cost more than the rest).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from memory_enhancement.core.files import MEMORY_SUFFIX
from memory_enhancement.store.locations import find_git_root
from memory_enhancement.store.state import State

if TYPE_CHECKING:
    from memory_enhancement.verify.git import Git

Stamp = tuple[int, int]  # a file's (mtime_ns, size), as the index keeps it
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def committed_times(store_root: Path, state: State, stamps: Mapping[str, Stamp]) -> dict[str, int]:
    """Of these memories (path: stamp), the commit time (seconds) of each that git tracks
    unchanged since its last commit; the others are left out (their mtime stands).
    Without git, outside a repository or before its first commit: nothing."""
    top = find_git_root(store_root) if stamps else None
    if top is None:
        return {}
    head = read_head(top)
    with state.connect() as db:
        kept = {
            path: (str(h), int(m), int(s), t)
            for path, h, m, s, t in db.execute(
                "SELECT path, head, mtime_ns, size, committed FROM commit_times"
            )
        }
    found: dict[str, int] = {}
    asked: dict[str, Stamp] = {}
    for path, stamp in stamps.items():
        known = kept.get(path)
        if head is not None and known is not None and known[:3] == (head, *stamp):
            if known[3] is not None:
                found[path] = int(known[3])
        else:
            asked[path] = stamp
    if not asked:
        return found
    # Only now git (its module and `subprocess` cost a warm `recent` 6 ms to import).
    from memory_enhancement.verify.git import Git, GitError

    git = Git.discover(store_root)
    if git is None:
        return found
    try:
        head = head or git.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
        learned = _ask_git(git, asked)
    except GitError:
        return found  # no commit yet, or git failed: nothing kept, the next call asks again
    found.update(learned)
    rows = [(p, head, m, s, learned.get(p)) for p, (m, s) in asked.items()]
    with state.connect() as db, db:
        db.executemany(
            "INSERT OR REPLACE INTO commit_times(path, head, mtime_ns, size, committed) "
            "VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        gone = [(p,) for p in kept if p not in stamps]
        if gone:  # memories removed, moved or dated since: not worth keeping
            db.executemany("DELETE FROM commit_times WHERE path = ?", gone)
    return found


def _ask_git(git: Git, asked: Mapping[str, Stamp]) -> dict[str, int]:
    """The commit times of the memories asked that git tracks unchanged: one `status`,
    one walk of the store folder's history stopped once each has been seen."""
    folder = git.prefix
    spec = ["--", folder or "."]
    status = git.run(
        "--literal-pathspecs", "status", "-z", "--porcelain", "--untracked-files=all",
        "--ignored", "--no-renames", *spec,
    )  # fmt: skip
    dirty = [entry[3:] for entry in status.split("\0") if len(entry) > 3]
    dirty_files = {e for e in dirty if not e.endswith("/")}
    dirty_folders = tuple(e for e in dirty if e.endswith("/"))  # a whole ignored folder
    head = f"{folder}/" if folder else ""
    wanted: dict[str, str] = {}  # its file as git names it: the memory's path
    for path in asked:
        name = f"{head}{path}{MEMORY_SUFFIX}"
        if name not in dirty_files and not name.startswith(dirty_folders):
            wanted[name] = path
    found: dict[str, int] = {}
    if not wanted:
        return found
    when = 0
    rest = b""
    # `-c`: a merge names the files it changed itself (a conflict resolved), not those it
    # brought from a parent, whose own commits the walk reaches (Fujita0113/
    # game-macro-assistant5's memories came in a merge, and without it were never named).
    walk = git.stream(
        "--literal-pathspecs", "log", "-z", "-c", "--no-renames", "--format=%x01%ct",
        "--name-only", "HEAD", *spec,
    )  # fmt: skip
    try:
        for piece in walk:
            *tokens, rest = (rest + piece).split(b"\0")
            for token in tokens:
                if token.startswith(b"\x01"):
                    when = int(token[1:])
                    continue
                path = wanted.pop(os.fsdecode(token.lstrip(b"\n")), "")
                if path:
                    found[path] = when
            if not wanted:
                break
    finally:
        walk.close()
    return found


def read_head(toplevel: Path) -> str | None:
    """HEAD's commit read from the files of `.git` (a linked work tree's too), or None
    when they say nothing plain (no commit yet, a ref format this does not read): the
    caller asks git then."""
    try:
        gitdir = toplevel / ".git"
        if gitdir.is_file():
            line = gitdir.read_text(encoding="utf-8").strip()
            if not line.startswith("gitdir:"):
                return None
            gitdir = toplevel / line[len("gitdir:") :].strip()
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head if _SHA.fullmatch(head) else None
        ref = head[len("ref:") :].strip()
        common = gitdir
        if (gitdir / "commondir").is_file():
            common = gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()
        for base in dict.fromkeys((gitdir, common)):
            loose = base / ref
            if loose.is_file():
                sha = loose.read_text(encoding="utf-8").strip()
                return sha if _SHA.fullmatch(sha) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                sha, _, name = line.partition(" ")
                if name == ref and _SHA.fullmatch(sha):
                    return sha
    except (OSError, UnicodeDecodeError):
        return None
    return None
