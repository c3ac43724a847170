"""The repository's files, as seen by links that point at them rather than at memories.

Memories link to `README.md`, `docs/guide.md` or `CLAUDE.md` as often as to
each other, written from the repository root or relative to the memory file.
Such a link is a repository link, never a dangling memory link, and it is
checked to exist. Only existence is asked (a stat, never a read), paths that
would leave the repository are never looked at, and a FIFO or a device is not
a file.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path


class RepoFiles:
    """Existence of repository files, for one store inside (or outside) one repository."""

    def __init__(self, repo_root: Path, store_root: Path) -> None:
        self.root = repo_root.resolve()
        try:
            self.store_at: str | None = store_root.resolve().relative_to(self.root).as_posix()
        except ValueError:
            self.store_at = None  # a store outside the repository (global): root-relative only

    @cached_property
    def top(self) -> frozenset[str]:
        """The entries of the repository's top folder (what a root-relative path starts with)."""
        try:
            return frozenset(os.listdir(self.root))
        except OSError:
            return frozenset()

    def find(self, source: str, target: str) -> str | None:
        """The repository path of target, read from the root, then from the memory's folder."""
        path = target.strip().split("#", 1)[0]
        if not path or "\0" in path or len(path) > 1024:
            return None
        tries = [posixpath.normpath(path.lstrip("/"))]
        if self.store_at is not None and not path.startswith("/"):
            folder = posixpath.dirname(posixpath.join(self.store_at, source))
            tries.append(posixpath.normpath(posixpath.join(folder, path)))
        for relative in tries:
            if relative in (".", "") or relative == ".." or relative.startswith("../"):
                continue
            if self._exists(relative):
                return relative
        return None

    def reads_as_path(self, target: str) -> bool:
        """Whether target starts with an entry of the repository's top folder (`docs/x.md`)."""
        first = posixpath.normpath(target.strip().lstrip("/")).split("/", 1)[0]
        return first not in (".", "..") and first in self.top

    @cached_property
    def _top_folded(self) -> frozenset[str]:
        return frozenset(name.casefold() for name in self.top)

    def _exists(self, relative: str) -> bool:
        # Most names a store's lists hold are not files: a path whose first part is not
        # in the top folder (in any case, for case-insensitive file systems) needs no stat.
        if relative.split("/", 1)[0].casefold() not in self._top_folded:
            return False
        try:
            mode = os.stat(os.path.join(self.root, relative)).st_mode
        except (OSError, ValueError):
            return False
        return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


MAX_WALKED_FILES = 50_000


def walk_files(root: os.PathLike[str] | str) -> Iterator[str]:
    """The files under a folder that is not a git repository (hidden folders and
    node_modules skipped, at most MAX_WALKED_FILES): what mentions resolve against there."""
    count = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        for name in names:
            yield name if rel == "." else f"{rel}/{name}"
            count += 1
            if count >= MAX_WALKED_FILES:
                return
