"""Which file a path as written names, in one version of the repository.

A prose mention (core/mentions.py) or a link names a file the way its author wrote it: a
bare name (`redis.py`), a partial path (`core/redis.py`), a path from another root
(`/home/me/repo/src/x.py`, `~/www/app/src/x.py`), a link relative to the memory
(`../src/x.py`). `FileList` holds the files of one version of the repository and says
which of them such a path names; `normalize` makes the path repository-relative first.
Nothing here does I/O.
"""

from __future__ import annotations

import bisect
import posixpath
from collections.abc import Container, Iterable
from dataclasses import dataclass

from memory_enhancement.core.folder_index import Changed, Folders


@dataclass(frozen=True)
class Resolution:
    """What a path as written names in one version of the repository."""

    path: str | None = None  # the file (repository-relative)
    candidates: tuple[str, ...] = ()  # several files end with it: ambiguous
    submodule: str | None = None  # it lies inside this submodule (gitlink)
    outside: bool = False  # it leaves the repository (`~/x.py`, `../../x.py`)

    @property
    def found(self) -> bool:
        return self.path is not None


class FileList:
    """The files of one version of the repository, for resolving paths as written.

    Rules (issue 17): the file at that path from the root when one exists; else
    the unique file whose path ends with it (`app/core/redis.py` for
    `admin-module/app/core/redis.py`); several are ambiguous; a path inside a
    submodule says so; one naming nothing under a folder named as the repository is
    (`clones`, lowercased), the author's clone: its tail below it; an absolute one naming
    nothing, its longest tail from the root; one in the author's home
    (`~/www/app/src/x.py`), its longest tail under a folder named as the repository (any
    folder when not known).
    """

    def __init__(
        self,
        files: Iterable[str],
        submodules: Iterable[str] = (),
        clones: Iterable[str] = (),
    ) -> None:
        listed = frozenset(files)
        self.files: Container[str] = listed
        self.submodules = tuple(sorted(submodules))
        self.clones = frozenset(clones)
        self._by_name: dict[str, list[str]] = {}
        for path in listed:
            self._by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        self._added: frozenset[str] = frozenset()
        self._deleted: dict[str, list[str]] = {}
        self._names: list[str] | None = None
        self._endings: frozenset[str] | None = None
        self._folders: frozenset[str] | None = None
        self._index: Folders | Changed | None = None  # the folders, when first asked (`folder`)
        self._base: FileList | None = None  # the list `changed` made this one from

    def changed(self, added: Iterable[str], deleted: Iterable[str]) -> FileList:
        """This list with some files added and some deleted: another version of the
        repository, sharing this one's index (built once for the work tree, reused for
        every past commit a run looks at)."""
        other = FileList.__new__(FileList)
        other.submodules = self.submodules
        other.clones = self.clones
        other._by_name = self._by_name
        other._names = self._names
        other._endings = None
        other._folders = None
        other._index = None
        other._base = self if self._base is None else None  # one level: `folder` reads it
        other._added = frozenset(added)
        gone = [p for p in deleted if p not in self.files]
        other._deleted = {}
        for path in gone:
            other._deleted.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        other.files = _Overlay(self.files, other._added, frozenset(gone))
        return other

    def _named(self, name: str) -> list[str]:
        found = [p for p in self._by_name.get(name, ()) if p not in self._added]
        return found + self._deleted.get(name, [])

    def resolve(self, written: str, folder: str = "") -> Resolution:
        """`folder` is the memory file's folder, for `../x.py` relative links."""
        path = normalize(written[1:] if written.startswith("~/") else written, folder)
        if path is None:
            return Resolution(outside=True)
        if written.startswith("~/"):  # `~/www/app/src/x.py`: the author's clone, perhaps
            return self._in_clone(path.split("/"))
        link = self.submodule_of(path)
        if link is not None:
            return Resolution(submodule=link)
        if path in self.files:
            return Resolution(path)
        found = self.by_suffix(path)
        if found.found or found.candidates:
            return found
        if "..." in path.split("/"):  # `backend/src/main/java/.../advice/Handler.java`
            return self.elided(path)
        if self.clones:  # `/workspaces/<name>/src/x.py`, `/home/me/<name>/x.md`: a clone's
            clone = self._under_clone(path.split("/"))
            if clone is not None:
                return Resolution(clone)
        if not written.startswith("/"):
            return found
        parts = path.split("/")  # `/home/me/repo/src/x.py`: a path on the author's machine
        tails = ("/".join(parts[n:]) for n in range(1, len(parts) - 1))
        return next((Resolution(t) for t in tails if t in self.files), found)

    def _in_clone(self, parts: list[str]) -> Resolution:
        """A home path's longest tail (with a folder) that is a file here, under a folder
        named as the repository: any Rust crate has `src/lib.rs`, and `~/.cargo/registry/
        src/.../tokio-1.38.0/src/lib.rs` or a sibling project's is not this one's."""
        for n in range(len(parts) - 1):
            tail = "/".join(parts[n:])
            if self.clones and (n == 0 or parts[n - 1].lower() not in self.clones):
                continue
            if tail in self.files:
                return Resolution(tail)
        return Resolution(outside=True)

    def _under_clone(self, parts: list[str]) -> str | None:
        """The file a path names below a folder named as the repository (its longest such
        tail): the author's clone, from their machine's root (`/home/me/<name>/src/x.py`,
        a file mention written from the root, its `/` left out) or from the clone's parent
        (`<name>/src/x.py`); a file at the repository's root too (`<name>/README.md`)."""
        for n in range(1, len(parts)):
            if parts[n - 1].lower() in self.clones and "/".join(parts[n:]) in self.files:
                return "/".join(parts[n:])
        return None

    def submodule_of(self, path: str) -> str | None:
        """The submodule a (normalized) path lies in, if any."""
        for link in self.submodules:
            if path == link or path.startswith(link + "/"):
                return link
        return None

    def named_like(self, stem: str) -> list[str]:
        """The files whose name starts with this stem, in any folder."""
        ordered = self._names
        if ordered is None:
            ordered = self._names = sorted(self._by_name)  # once: asked for many stems
        names = {name for name in self._deleted if name.startswith(stem)}
        for at in range(bisect.bisect_left(ordered, stem), len(ordered)):
            if not ordered[at].startswith(stem):
                break
            names.add(ordered[at])
        return [p for name in names for p in self._named(name)]

    def has_ending(self, ending: str) -> bool:
        """Whether a file's name ends in `.ending` (any case): no file's ends in `.main`."""
        if self._endings is None:
            names = [*self._by_name, *self._deleted]
            self._endings = frozenset(n.rpartition(".")[2].lower() for n in names if "." in n)
        return ending.lower() in self._endings

    def has_folder(self, name: str) -> bool:
        """Whether a file of this list lies under this first folder."""
        if self._folders is None:
            self._folders = frozenset(p.split("/", 1)[0] for p in self._paths() if "/" in p)
        return name in self._folders

    def has_folder_named(self, name: str) -> bool:
        """Whether a file of the list lies under a folder of this name, at any depth (a
        partial path may start at any folder: `api/venue.js` for `server/api/venue.js`),
        from the folders' index (listing every file's folders, for each list asked, cost
        the corpus's first run 16 ms)."""
        index = self._folder_index()
        return any(index.holds_file(f) for f in index.candidates(name))

    def folder(self, path: str, rooted: bool = False) -> Resolution:
        """The folder a (normalized) folder path names, by the files under it: that folder
        from the root when a file lies under it, else (unless written from the root,
        `rooted`) the one folder whose path ends with it (`handlers` for `src/api/handlers`),
        else the candidates; a submodule's folder (or one inside it) says so. Folders are
        listed once per list, when first asked."""
        link = self.submodule_of(path)
        if link is not None:
            return Resolution(submodule=link)
        index = self._folder_index()
        named = index.named(path.rpartition("/")[2])
        if path in named or rooted:
            return Resolution(path if path in named else None)
        tail = "/" + path
        found = sorted(f for f in named if f.endswith(tail))
        return Resolution(found[0]) if len(found) == 1 else Resolution(candidates=tuple(found))

    def _folder_index(self) -> Folders | Changed:
        """This list's folders. A list `changed` made from the work tree's reads that one's
        (built once) and only its own changes: building every past commit's whole index
        cost a first run of the corpus a second."""
        if self._index is None:
            base = self._base
            if base is None:
                listed = self.files  # the work tree's set, or a generator of a version's
                paths = listed if isinstance(listed, frozenset) else self._paths()
                self._index = Folders(paths, self.submodules)
            else:
                gone = [p for found in self._deleted.values() for p in found]
                index = base._folder_index()
                assert isinstance(index, Folders)  # `changed` makes lists one level deep
                self._index = index.changed(self._added, gone)
        return self._index

    def under(self, prefix: str) -> list[str]:
        """The files whose path starts with this prefix (a folder's, `src/api/`), read from
        the folders' sorted files (a scan of every file per folder asked cost the corpus's
        first run 70 ms)."""
        return self._folder_index().under(prefix)

    def _paths(self) -> Iterable[str]:
        """The files of this version: a list made by `changed` shares its base's index,
        so the files added since are left out and the ones deleted since put back."""
        added = self._added
        for found in self._by_name.values():
            yield from (p for p in found if p not in added)
        for gone in self._deleted.values():
            yield from gone

    def elided(self, path: str) -> Resolution:
        """The files a path with folders left out names (`src/main/java/.../x/Y.java`, as
        Java memories write a package's long path; loveu8/TravelPlanWithAccounting's): each
        `...` stands for one folder or more, and what is written around it is kept, from
        the root or, as any partial path, at a folder's start."""
        parts = path.split("/")
        if parts[-1] == "...":
            return Resolution()
        found = sorted(p for p in self._named(parts[-1]) if _fits(parts, p.split("/")))
        if len(found) == 1:
            return Resolution(found[0])
        return Resolution(candidates=tuple(found))

    def by_suffix(self, path: str) -> Resolution:
        name = path.rsplit("/", 1)[-1]
        tail = "/" + path
        found = sorted(p for p in self._named(name) if p.endswith(tail))
        if len(found) == 1:
            return Resolution(found[0])
        return Resolution(candidates=tuple(found))


class _Overlay:
    """Membership in a set of files with some added and some removed, without a copy."""

    def __init__(self, base: Container[str], minus: frozenset[str], plus: frozenset[str]) -> None:
        self.base, self.minus, self.plus = base, minus, plus

    def __contains__(self, path: object) -> bool:
        return path in self.plus or (path in self.base and path not in self.minus)


def normalize(written: str, folder: str = "") -> str | None:
    """A path as written made repository-relative; None when it leaves the repository.

    A leading `/` or `./` is the repository root (as in GitHub links and in
    prose); `../` climbs from the memory's folder (a markdown link in the memory
    file); `~` leaves the repository; a leading `@` (an editor's file reference)
    is dropped.
    """
    path = written.removeprefix("@")
    if path.startswith("~"):
        return None
    while path.startswith("./"):
        path = path[2:]
    if path.startswith("/"):
        path = path.lstrip("/")
    elif path.startswith("../"):
        path = posixpath.join(folder, path)
    if ".." in path.split("/") or path.startswith("./"):
        path = posixpath.normpath(path)
        if path.startswith("../") or path == "..":
            return None
    return path or None


def _fits(parts: list[str], folders: list[str]) -> bool:
    """Whether a file's path (its parts) fits a path written with `...` for one folder or
    more. Each run of parts between them is taken where it first fits (leaving the most
    room for the rest), the first at any folder's start, the last at the end: a regular
    expression tried every split of the folders, and a dozen `...` hung a run."""
    runs: list[list[str]] = [[]]
    for part in parts:
        if part == "...":
            runs.append([])
        else:
            runs[-1].append(part)
    last = runs.pop()
    end = len(folders) - len(last)
    if end < 0 or folders[end:] != last:
        return False
    at = 0  # where the next run may start
    for n, run in enumerate(runs):
        start = at if n == 0 else at + 1  # after the first, one folder left out at least
        while start + len(run) <= end and folders[start : start + len(run)] != run:
            start += 1
        if start + len(run) > end:
            return False
        at = start + len(run)
    return end >= at + 1  # one folder at least before the last run
