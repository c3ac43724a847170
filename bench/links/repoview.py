"""A RepoView over a git tree (`git ls-tree`), for benches on mirrored repositories.

The tool's own view (store/repofiles.py) stats files on disk; a mirror is a bare
git dir, so here the same two questions are answered from the commit's file list.
"""

from __future__ import annotations

import posixpath
import subprocess
from pathlib import Path


class TreeView:
    def __init__(self, git_dir: Path, commit: str, store_at: str) -> None:
        out = subprocess.run(
            ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        self.files = set(out.splitlines())
        self.dirs = {posixpath.dirname(f) for f in self.files}
        for d in list(self.dirs):
            while d:
                d = posixpath.dirname(d)
                self.dirs.add(d)
        self.top = {f.split("/", 1)[0] for f in self.files}
        self.store_at = store_at.rstrip("/")

    def find(self, source: str, target: str) -> str | None:
        path = target.strip().split("#", 1)[0]
        if not path:
            return None
        tries = [posixpath.normpath(path.lstrip("/"))]
        if not path.startswith("/"):
            folder = posixpath.dirname(posixpath.join(self.store_at, source))
            tries.append(posixpath.normpath(posixpath.join(folder, path)))
        for relative in tries:
            if relative.startswith("..") or relative in (".", ""):
                continue
            if relative in self.files or relative in self.dirs:
                return relative
        return None

    def reads_as_path(self, target: str) -> bool:
        first = posixpath.normpath(target.strip().lstrip("/")).split("/", 1)[0]
        return first not in (".", "..") and first in self.top
