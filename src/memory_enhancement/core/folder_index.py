"""The folders of one version of the repository, for resolving folder mentions (`src/api/`).

`FileList.folder` asks which folders of a name hold a file in a version, and `under`
which files a folder holds. The work tree's folders are listed once (`Folders`); a past
commit's are read as the work tree's with the files added and gone since (`Changed`):
a first run of the shared corpus looks at 45 past commits, each differing from the work
tree in about 3,800 files added since and 470 gone, and counting every file's folders
for each of them, then sorting the added files, cost it about 0.1 s of its Python.
Nothing here does I/O.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable


class Folders:
    """The folders of one version: its files sorted (how many lie under a folder, at any
    depth, is a bisection) and the folders of each name."""

    def __init__(self, files: Iterable[str], submodules: Iterable[str] = ()) -> None:
        self.paths = sorted(files)
        self.held = frozenset(self.paths)
        self.submodules = Counter(submodules)  # a submodule is a folder of the repository too
        self.by_name = _by_name(_folders(self.paths).union(self.submodules))

    def named(self, name: str) -> list[str]:
        """The folders of this name that hold a file (or are a submodule)."""
        return self.by_name.get(name, [])

    candidates = named  # every folder of a name holds a file here, but a submodule

    def holds_file(self, folder: str) -> bool:
        """Whether a file lies under the folder (a submodule holds none of the list's)."""
        return _within(self.paths, folder) > 0

    def under(self, prefix: str) -> list[str]:
        """The files whose path starts with this prefix."""
        paths = self.paths
        start = end = bisect.bisect_left(paths, prefix)
        while end < len(paths) and paths[end].startswith(prefix):
            end += 1
        return paths[start:end]

    def changed(self, added: frozenset[str], gone: list[str]) -> Changed:
        return Changed(self, added, gone)


class Changed:
    """Another version's folders: `base`'s less the files `added` since, plus those `gone`.
    Only the gone files' folders are listed; a folder of the base holds a file in this
    version unless the files added since are all it holds, checked when it is asked."""

    def __init__(self, base: Folders, added: frozenset[str], gone: list[str]) -> None:
        self.base, self.added, self.gone = base, added, gone
        self.folders = _folders(gone)
        self.by_name = _by_name(self.folders)
        self._extra: list[str] | None = None

    def named(self, name: str) -> list[str]:
        """The folders of this name that hold a file in this version (by the count)."""
        return [f for f in self.candidates(name) if self._holds(f)]

    def holds_file(self, folder: str) -> bool:
        """Whether a file of this version lies under the folder: a gone one, or one of the
        base's not added since."""
        return folder in self.folders or self._kept_beyond(folder, 0)

    def candidates(self, name: str) -> list[str]:
        """The folders of this name in the base or among the gone files' (some may hold
        no file in this version)."""
        base = self.base
        return [*dict.fromkeys([*base.by_name.get(name, ()), *self.by_name.get(name, ())])]

    def under(self, prefix: str) -> list[str]:
        """The files of this version whose path starts with this prefix."""
        added = self.added
        kept = [path for path in self.base.under(prefix) if path not in added]
        return kept + [path for path in self.gone if path.startswith(prefix)]

    def _holds(self, folder: str) -> bool:
        """Whether the base's count of files under the folder, less the files added since
        under it, plus the gone ones, is above nothing: an added file the base does not
        hold (a list of some names only, an index apart from HEAD) is taken off too."""
        base = self.base
        need = _within(self._added_elsewhere(), folder) - base.submodules[folder]
        if folder in self.folders:  # a gone file lies under it: one is enough, as a rule
            need -= 1 if need < 1 else sum(1 for p in self.gone if p.startswith(folder + "/"))
        return need < 0 or self._kept_beyond(folder, need)

    def _kept_beyond(self, folder: str, need: int) -> bool:
        """Whether more than `need` of the base's files under the folder were not added
        since: the first such file is usually enough."""
        paths, added, inside = self.base.paths, self.added, folder + "/"
        kept = 0
        for at in range(bisect.bisect_left(paths, inside), len(paths)):
            path = paths[at]
            if not path.startswith(inside):
                break
            if path not in added:
                kept += 1
                if kept > need:
                    return True
        return False

    def _added_elsewhere(self) -> list[str]:
        """The added files the base does not hold, sorted (usually none)."""
        if self._extra is None:
            self._extra = sorted(self.added.difference(self.base.held))
        return self._extra


def _within(paths: list[str], folder: str) -> int:
    """How many of these sorted paths lie under a folder: `0` follows `/`, so they are
    the ones from `folder/` up to `folder0`."""
    return bisect.bisect_left(paths, folder + "0") - bisect.bisect_left(paths, folder + "/")


def _folders(paths: Iterable[str]) -> set[str]:
    """Every folder a file lies under, at any depth: each file's own folder once, climbing
    only to a folder not yet seen (its parents were seen with it)."""
    known: set[str] = set()
    for folder in {path.rpartition("/")[0] for path in paths}:
        while folder and folder not in known:
            known.add(folder)
            folder = folder.rpartition("/")[0]
    return known


def _by_name(folders: Iterable[str]) -> dict[str, list[str]]:
    named: dict[str, list[str]] = {}
    for folder in folders:
        named.setdefault(folder.rpartition("/")[2], []).append(folder)
    return named
