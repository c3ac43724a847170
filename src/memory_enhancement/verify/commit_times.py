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

After HEAD moves (a commit, a pull), the times kept for the old HEAD still hold for every
file no commit since has touched: when the old HEAD is an ancestor of the new one, only
the commits between them are walked (`old..HEAD`), not the whole history again (120 ms
of git on the shared corpus's 2,624 commits, for every new HEAD). A file the walk does
not settle (never asked before, or not committed then) takes the whole walk as before.
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
    earlier = {  # what an older HEAD said of the files asked: that HEAD, the time, and
        # whether the file has the same mtime and size as then
        path: (known[0], int(known[3]), known[1:3] == stamp)
        for path, stamp in asked.items()
        if (known := kept.get(path)) is not None and known[0] != head and known[3] is not None
    }
    # Only now git (its module and `subprocess` cost a warm `recent` 6 ms to import).
    from memory_enhancement.verify.git import Git, GitError

    git = Git.discover(store_root)
    if git is None:
        return found
    try:
        head = head or git.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
        learned = _ask_git(git, asked, earlier)
    except GitError:
        return found  # no commit yet, or git failed: nothing kept, the next call asks again
    found.update(learned)
    # Every row is of this HEAD now: most are only that (a row rewritten costs 20 us, a
    # thousand of them more than the rest of a `recent` after HEAD moved).
    rows = [
        (p, head, m, s, learned.get(p))
        for p, (m, s) in asked.items()
        if (known := kept.get(p)) is None or known[1:] != (m, s, learned.get(p))
    ]
    with state.connect() as db, db:
        db.execute("UPDATE commit_times SET head = ? WHERE head != ?", (head, head))
        db.executemany(
            "INSERT OR REPLACE INTO commit_times(path, head, mtime_ns, size, committed) "
            "VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        gone = [(p,) for p in kept if p not in stamps]
        if gone:  # memories removed, moved or dated since: not worth keeping
            db.executemany("DELETE FROM commit_times WHERE path = ?", gone)
    return found


def _ask_git(
    git: Git, asked: Mapping[str, Stamp], earlier: Mapping[str, tuple[str, int, bool]]
) -> dict[str, int]:
    """The commit times of the memories asked that git tracks unchanged.

    First the commits since an older HEAD the kept times were learned at (`earlier`:
    file -> that HEAD, its time then, whether its mtime and size are as then), when it
    is an ancestor of HEAD: a file no commit since touched, with its mtime and size as
    then, is as it was (clean then, the same bytes now: what a warm `recent` assumes of
    every file), and git need not say more. Then, for the rest, one `status` (the files
    changed since HEAD keep their mtime), one `diff` of the base and HEAD when a clean
    file untouched since has a new mtime or size, and one walk of the store folder's
    history, stopped once each file still unsettled has been seen."""
    folder = git.prefix
    spec = ["--", folder or "."]
    head = f"{folder}/" if folder else ""
    names = {f"{head}{path}{MEMORY_SUFFIX}": path for path in asked}  # as git names them
    found: dict[str, int] = {}
    since: dict[str, int] = {}
    base = _common_base(git, [then[0] for then in earlier.values()])
    if base is not None:
        since = _walk(git, f"{base}..HEAD", spec, dict(names), until_seen=False)
        for name, path in list(names.items()):
            then = earlier.get(path)
            if then is not None and then[0] == base and then[2] and path not in since:
                found[path] = then[1]
                del names[name]
    if not names:
        return found
    status = git.run(
        "--literal-pathspecs", "status", "-z", "--porcelain", "--untracked-files=all",
        "--ignored", "--no-renames", *spec,
    )  # fmt: skip
    dirty = [entry[3:] for entry in status.split("\0") if len(entry) > 3]
    dirty_files = {e for e in dirty if not e.endswith("/")}
    dirty_folders = tuple(e for e in dirty if e.endswith("/"))  # a whole ignored folder
    wanted = {
        name: path
        for name, path in names.items()
        if name not in dirty_files and not name.startswith(dirty_folders)
    }
    # Touched since: its newest commit there, in git's order as the whole walk takes it
    # (not the later date: a clock behind). Untouched since, its mtime or size changed
    # (a checkout): its time at the base if its bytes are the base's (a `merge -s ours`
    # undoing the base's edit touches nothing in `old..HEAD` as git simplifies it, but
    # the file differs from the base's), else the whole walk.
    kept_since: dict[str, int] = {}  # git's name: its time at the base
    for name, path in list(wanted.items()):
        then = earlier.get(path)
        if path in since:
            found[path] = since[path]
            del wanted[name]
        elif then is not None and then[0] == base:
            kept_since[name] = then[1]
    if kept_since and base is not None:
        differ = git.run(
            "--literal-pathspecs", "diff", "-z", "--name-only", "--no-renames", base, "HEAD",
            *spec,
        ).split("\0")  # fmt: skip
        for name in kept_since.keys() - set(differ):
            found[wanted.pop(name)] = kept_since[name]
    if wanted:
        found.update(_walk(git, "HEAD", spec, wanted, until_seen=True))
    return found


def _common_base(git: Git, heads: list[str]) -> str | None:
    """The older HEAD most of the kept times were learned at, when it is an ancestor of
    HEAD (the commits since it are then all that is new); None otherwise (a rebase, a
    reset, another branch: the whole walk)."""
    if not heads:
        return None
    base = max(set(heads), key=heads.count)
    if not _SHA.fullmatch(base):
        return None
    from memory_enhancement.verify.git import GitError

    try:
        git.run("merge-base", "--is-ancestor", base, "HEAD")  # exit 1: not an ancestor
    except GitError:  # not an ancestor, or a commit git no longer has
        return None
    return base


def _walk(
    git: Git, span: str, spec: list[str], wanted: dict[str, str], *, until_seen: bool
) -> dict[str, int]:
    """Of the files wanted (git's name: the memory's path), the time of the first commit
    of `span` touching each in git's order (newest first, a child before its parent
    whatever its date); read as git writes it, and stopped once every file has been
    seen when `until_seen`."""
    found: dict[str, int] = {}
    when = 0
    rest = b""
    # `-c`: a merge names the files it changed itself (a conflict resolved), not those it
    # brought from a parent, whose own commits the walk reaches (Fujita0113/
    # game-macro-assistant5's memories came in a merge, and without it were never named).
    walk = git.stream(
        "--literal-pathspecs", "log", "-z", "-c", "--no-renames", "--format=%x01%ct",
        "--name-only", span, *spec,
    )  # fmt: skip
    try:
        for piece in walk:
            *tokens, rest = (rest + piece).split(b"\0")
            for token in tokens:
                if token.startswith(b"\x01"):
                    when = int(token[1:])
                    continue
                name = os.fsdecode(token.lstrip(b"\n"))
                path = wanted.get(name)
                if path is not None and path not in found:  # the newest, as git orders
                    found[path] = when
                    if until_seen:
                        del wanted[name]
            if until_seen and not wanted:
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
