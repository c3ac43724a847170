"""Resolving the links memories make to each other, however they were written.

Real stores link in many ways (see formats/markdown.py). Each style resolves
the way its authors meant it:

- `[text](other.md)` against the linking file's folder, then the store root,
  then a unique memory of that file name (links are often copied between
  folders); a link that leaves the store and matches nothing is external (a
  repository document), not dangling.
- `[[other]]`, bare ids, `[link:TYPE](other)` and frontmatter `related:` by
  path from the store root, then by unique name, then by the unique name a
  memory declares (frontmatter `name:`, as Claude Code's memories do: its
  `[[project-logo]]` means the memory whose header says `name: project-logo`,
  kept in `project_logo.md`); `store:path` points into another store and is
  external.
- `[mem:a7Bc3x]` through the citation IDs; `mem:beta` (Serena's convention)
  by path, then by unique name, then as a citation ID.
- candidates (a list item's lead, a name in related material; see
  store/formats/links.py) by path or unique name like the rest, but a
  candidate that names no memory is simply not a link (UNMATCHED); a plain
  word matches only a memory of exactly that name, never another case. A
  path into the store's own folder (`.serena/memories/x.md`) reads as the name
  `x`; one into another `memories/` folder of the repository is that folder's.

A target that is a file of the repository, not a memory (`[README](README.md)`,
`- docs/guide.md`), or a folder (`[tools](../tools/)`), is a repository link: REPOSITORY
when the file is there, MISSING when a link that reads as a repository path finds no file
(but for a memory file of the store's folder). Otherwise an explicit link that matches nothing is
dangling; one that matches several is ambiguous. This module is pure: it is given the
memories that exist, and a view of the repository's files (`RepoView`) when there is one.
"""

from __future__ import annotations

import difflib
import enum
import posixpath
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from memory_enhancement.core.memory_paths import composed
from memory_enhancement.core.model import MEMORY_SUFFIX, Link, LinkKind

STORE_PREFIXES = frozenset({"global", "project"})


class LinkStatus(enum.Enum):
    RESOLVED = "resolved"
    DANGLING = "dangling"
    AMBIGUOUS = "ambiguous"
    EXTERNAL = "external"  # another store's memory (`global:notes/x`)
    REPOSITORY = "repository"  # a file of the repository that is there
    MISSING = "missing"  # a repository path with no file there
    UNMATCHED = "unmatched"  # a candidate naming no memory: not a link at all

    @property
    def broken(self) -> bool:
        return self in (LinkStatus.DANGLING, LinkStatus.AMBIGUOUS, LinkStatus.MISSING)

    @property
    def to_file(self) -> bool:
        """A link to a file of the repository (there or not), not to a memory."""
        return self in (LinkStatus.REPOSITORY, LinkStatus.MISSING)


class RepoView(Protocol):
    """The repository's files, as link resolution needs them (see store/repofiles.py)."""

    store_at: str | None  # the store's folder in the repository; None when outside it

    def find(self, source: str, target: str) -> str | None:
        """The repository path of the file target names from the memory source, if any
        (read from the root or from source's folder: only its folder matters)."""

    def reads_as_path(self, target: str) -> bool:
        """Whether target starts where the repository has something (`docs/`, `README.md`)."""


@dataclass(frozen=True)
class Resolution:
    status: LinkStatus
    target: str | None = None
    candidates: tuple[str, ...] = ()


class Resolver:
    """Resolves links against the memories of one store."""

    def __init__(
        self, paths: Iterable[str], ids: Mapping[str, str] | None = None,
        stores: Iterable[str] = STORE_PREFIXES, repo: RepoView | None = None,
        declared: Mapping[str, str] | None = None,
    ) -> None:  # fmt: skip
        """`declared`: the names memories declare (path -> name), not their file names."""
        self.repo = repo
        self.paths = set(paths)
        self.ids = dict(ids or {})
        self.stores = frozenset(stores)
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.by_folded: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self.paths):
            name = path.rpartition("/")[2]
            self.by_name[name].append(path)
            if (spelled := composed(name)) != name:  # a Mac's `가게.md`, linked to as typed
                self.by_name[spelled].append(path)
            self.by_folded[name_key(name)].append(path)
        # Declared names are asked only when no file name matches, so most stores (none
        # declared) pay nothing for them.
        self.declared: dict[str, list[str]] = defaultdict(list)
        self.declared_folded: dict[str, list[str]] = defaultdict(list)
        for path, name in sorted((declared or {}).items()):
            if path in self.paths:
                self.declared[name].append(path)
                self.declared_folded[name_key(name)].append(path)
        self._by_slug: dict[str, list[str]] | None = None  # made by suggest, when first asked
        self._close: dict[str, list[str]] = {}  # suggest's near names, by name asked

    def resolve(self, source: str, link: Link) -> Resolution:
        """A memory first (see _memory); failing that, a file of the repository."""
        if link.kind is LinkKind.MARKDOWN and link.target.strip().endswith("/"):
            return self._folder(source, link.target.strip())
        if link.kind.candidate and not _path_like(link.target):
            name = link.target.strip()
            if name_key(name) not in self.by_folded and "memories/" not in name:
                return _UNMATCHED  # the common case: a list item naming no memory
        found = self._memory(source, link)
        if link.kind.candidate and found.target == source:
            return _UNMATCHED  # a memory naming itself (`| Server key | `x` |` in x): no link
        if found.status in (LinkStatus.DANGLING, LinkStatus.EXTERNAL) and self.repo is not None:
            target = link.target.strip()
            if link.kind in (LinkKind.MEM_ID, LinkKind.MEM_REF) or self._into_store(link):
                return found
            if link.kind.candidate and not _path_like(target):
                return _UNMATCHED  # a bare word: a memory's name or nothing
            in_repo = self.repo.find(source, target)
            if in_repo is not None:
                return Resolution(LinkStatus.REPOSITORY, in_repo)
            if link.kind.candidate:
                return _DANGLING if self._store_file(link) else _UNMATCHED
            if found.status is LinkStatus.EXTERNAL and self.repo.store_at is None:
                return found  # leaves a store that is not in the repository: unknowable
            if found.status is LinkStatus.DANGLING and self._store_path(target):
                return found  # `[x](.serena/memories/gone.md)`, a memory since removed
            if found.status is LinkStatus.EXTERNAL or self.repo.reads_as_path(target):
                return Resolution(LinkStatus.MISSING, target)
        if found.status is LinkStatus.DANGLING and link.kind.candidate:
            return _DANGLING if self._store_file(link) else _UNMATCHED
        return found

    def _folder(self, source: str, target: str) -> Resolution:
        """`[profiler](../tools/profiler/)`: a folder of the repository, never a memory (not
        `api.md` for `[api](api/)`), checked as a repository file is: REPOSITORY when it is
        there, else MISSING; from a store outside the repository, a relative one that
        names nothing from the root is unknowable (external), as a file link leaving it."""
        if self.repo is None:
            return Resolution(LinkStatus.EXTERNAL, target)
        found = self.repo.find(source, target)
        if found is not None:
            return Resolution(LinkStatus.REPOSITORY, found)
        if self.repo.store_at is None and not (
            target.startswith("/") or self.repo.reads_as_path(target)
        ):
            return Resolution(LinkStatus.EXTERNAL, target)
        return Resolution(LinkStatus.MISSING, target)

    def _store_file(self, link: Link) -> bool:
        """`- .serena/memories/x.md - why`: an item naming a memory file of the store's own
        folder, which no word merely looks like; naming none, a broken link (andreathar/ml).
        In a sentence, a file to be written or a probe (rjmurillo/ai-agents): a candidate."""
        return link.kind is LinkKind.ITEM and self._store_path(link.target.strip())

    def _store_path(self, target: str) -> bool:
        """Whether a path from the root names a memory file of this store's own folder
        (`.serena/memories/x.md`), not another project's (`frontend/.serena/memories/`)."""
        path = strip_md(target.lstrip("/"))
        if not target.lower().endswith(MEMORY_SUFFIX) or self._in_store(path) is None:
            return False
        head, at = path.rpartition(STORE_MARK)[0], getattr(self.repo, "store_at", None)
        if not head or at in ("", ".") or posixpath.normpath(head + STORE_MARK) == at:
            return True
        return self.repo is None or not self.repo.reads_as_path(target)  # `/home/me/...`

    def _memory(self, source: str, link: Link) -> Resolution:
        """By path (see by_path), else by a unique name; `[mem:ID]` through the IDs. A
        markdown link is external (a file outside the store, not a broken memory link) only
        when, read from the linking file's folder as markdown means it, it leaves the store:
        `../ops/x.md` from `misc/` stays inside, and dangles when `ops/x` is gone."""
        target = link.target.strip()
        if link.kind is LinkKind.MEM_ID:
            found = self.ids.get(target.removeprefix("mem:"))
            return Resolution(LinkStatus.RESOLVED, found) if found else _DANGLING
        if self._into_store(link):
            return Resolution(LinkStatus.EXTERNAL, target)
        named = self._named(source, link)
        if named is not None:
            return Resolution(LinkStatus.RESOLVED, named)
        if link.kind.candidate and "/" in target:
            inside = self._in_store(strip_md(target.lstrip("/")))
            if inside is None or "/" in inside:
                return _DANGLING  # `docs/x.md` names a place: only its path (above) can match
            if self.repo is not None and self.repo.find(source, target) is not None:
                return _DANGLING  # `memories/x.md`, a file of the repository: a link to it
            # `.serena/memories/x.md` names the store's own folder, where `x` was: a memory
            # since moved into a folder is found by its unique name, as `x` would be.
            return self._by_name(inside, strict=True)
        if link.kind is not LinkKind.MARKDOWN:
            name = strip_md(target.lstrip("/"))
            by_name = self._by_name(name, strict=link.kind.candidate)
            if by_name is _DANGLING and self.declared and not link.kind.candidate:
                by_name = self._by_declared(name)
            if by_name.status is LinkStatus.DANGLING and link.kind is LinkKind.MEM_REF:
                found = self.ids.get(target)
                return Resolution(LinkStatus.RESOLVED, found) if found else _DANGLING
            return by_name
        path = strip_md(target)
        by_name = self._by_name(path)
        relative = _join(source, path)
        escapes = relative.startswith("../") or relative == ".."
        if escapes and by_name.status is LinkStatus.DANGLING:
            return Resolution(LinkStatus.EXTERNAL, target)
        return by_name

    def by_path(self, source: str, link: Link) -> str | None:
        """The memory a link names by its path, without falling back on a unique name:
        a markdown link from the linking file's folder, then from the store root; any
        other link from the store root, then from the linking file's folder. None for
        `[mem:ID]` and `store:path` links."""
        if link.kind is LinkKind.MEM_ID or self._into_store(link):
            return None
        return self._named(source, link)

    def _named(self, source: str, link: Link) -> str | None:
        """The memory at the path a link writes: tried in the order its kind reads it
        (a store resolves thousands of links, so each try is made only when needed)."""
        target = link.target.strip()
        paths = self.paths
        if link.kind is LinkKind.MARKDOWN:
            path = strip_md(target)
            found = _join(source, path)
            if found in paths:
                return found
            found = _normpath(path.lstrip("/"))
        else:
            path = strip_md(target.lstrip("/"))
            found = _normpath(path or ".")
            if found in paths:
                return found
            found = _join(source, path)
        if found in paths:
            return found
        inside = self._in_store(path)  # `.serena/memories/beta.md`
        return inside if inside in paths else None

    def _in_store(self, path: str) -> str | None:
        """The store path a path from the repository root names (`.serena/memories/x` ->
        `x`), None when it does not enter the store: no `memories/` in it, or one that is
        another folder of the repository than the store's (`.claude-mem/memories/x`)."""
        head, marker, rest = path.rpartition(STORE_MARK)
        if not marker or not (not head or head.endswith("/") or head.endswith(".")):
            return None
        store_at = self.repo.store_at if self.repo is not None else None
        if head and store_at not in (None, "", "."):
            written = posixpath.normpath(head + STORE_MARK)
            if written != store_at and not written.endswith(f"/{store_at}"):
                return None
        return posixpath.normpath(rest or ".")

    def _into_store(self, link: Link) -> bool:
        """`global:notes/x`: a link into another store (markdown links never are)."""
        if link.kind is LinkKind.MARKDOWN:
            return False
        head, sep, rest = link.target.strip().partition(":")
        return bool(sep) and head in self.stores and bool(rest)

    def _by_name(self, path: str, *, strict: bool = False) -> Resolution:
        """The one memory of this file name; strict (candidates) matches a name of
        plain letters only in its own case, so the word `Testing` is not `testing`."""
        name = path.rpartition("/")[2]
        matches = self.by_name.get(name) or self.by_name.get(composed(name))
        if not matches and not (strict and name.isalpha()):
            matches = self.by_folded.get(name_key(name))
        if matches and len(matches) == 1:
            return Resolution(LinkStatus.RESOLVED, matches[0])
        if matches:
            return Resolution(LinkStatus.AMBIGUOUS, None, tuple(matches))
        return _DANGLING

    def _by_declared(self, name: str) -> Resolution:
        """The one memory declaring this name (`[[project-logo]]` for `name: project-logo`),
        as written, else case-folded like file names; a name that is a path is none."""
        if "/" in name:
            return _DANGLING
        matches = self.declared.get(name) or self.declared_folded.get(name_key(name))
        if matches and len(matches) == 1:
            return Resolution(LinkStatus.RESOLVED, matches[0])
        if matches:
            return Resolution(LinkStatus.AMBIGUOUS, None, tuple(matches))
        return _DANGLING

    def suggest(
        self, source: str, link: Link, resolution: Resolution, renames: Mapping[str, str]
    ) -> str | None:
        """The one memory a broken link most likely meant, or None when there is no single one.

        In order: the file git says the target was renamed to; for an ambiguous link, the
        only candidate in the linking memory's folder; for a dangling one, the only memory
        whose name it is once case and separators are set aside (`[[Cache Settings]]`,
        `[[캐시 설정]]` for `cache-settings`, `캐시-설정`), else the only one with a nearly
        identical name (asked once per name: the corpus's 427 dangling links name 67)."""
        path = strip_md(link.target.strip()).lstrip("/")
        for guess in (path, _join(source, path)):
            renamed = renames.get(guess)
            if renamed and renamed in self.paths:
                return renamed
        if resolution.status is LinkStatus.AMBIGUOUS:
            folder = source.rpartition("/")[0]
            near = [c for c in resolution.candidates if c.rpartition("/")[0] == folder]
            return near[0] if len(near) == 1 else None
        if resolution.status is LinkStatus.DANGLING and link.kind is not LinkKind.MEM_ID:
            name = path.rpartition("/")[2]
            if self._by_slug is None:
                self._by_slug = defaultdict(list)
                for known, found in self.by_name.items():
                    self._by_slug[_slug(known)] += found
            same = self._by_slug.get(_slug(name), [])
            if len(same) == 1:
                return same[0]
            if name not in self._close:  # difflib: 1.2 s for the corpus's links, asked each
                self._close[name] = difflib.get_close_matches(name, [*self.by_name], 2, 0.85)
            close = self._close[name]
            if len(close) == 1 and len(self.by_name[close[0]]) == 1:
                return self.by_name[close[0]][0]
        return None


_DANGLING = Resolution(LinkStatus.DANGLING)
_UNMATCHED = Resolution(LinkStatus.UNMATCHED)
STORE_MARK = "memories/"  # where a path from the repository root enters a store


def _slug(name: str) -> str:
    """A name with case and separators set aside: `Cache Settings` -> `cache-settings`."""
    return "-".join(name.casefold().replace("_", " ").replace("-", " ").split())


def _path_like(target: str) -> bool:
    """`docs/guide.md`, `CLAUDE.md`, `scripts/`: what can name a repository file."""
    return "/" in target or "." in target.lstrip(".")


def strip_md(target: str) -> str:
    return target[: -len(MEMORY_SUFFIX)] if target.lower().endswith(MEMORY_SUFFIX) else target


def lookup_name(target: str) -> str | None:
    """The name key (see name_key) of the memories a link target can match.

    None when the name depends on the linking memory's folder (`..`, `.`), so
    such a link is resolved again whenever any memory comes or goes.
    """
    path = strip_md(target.strip().lstrip("/"))
    if path and "/" not in path and path not in (".", ".."):
        return name_key(path)  # a plain name, most links: no path to normalise
    name = posixpath.normpath(path or ".").rpartition("/")[2]
    return None if name in {".", ".."} else name_key(name)


def name_key(name: str) -> str:
    """The key memories and link targets are matched by: a name composed and case-folded
    (a link typed `[[가게]]` named no memory a Mac had written as `가게.md`)."""
    return composed(name).casefold()


def _join(source: str, target: str) -> str:
    """target read from source's folder, normalised (source is a memory path: normal)."""
    folder = source.rpartition("/")[0]
    if _is_normal(target):
        return f"{folder}/{target}" if folder else target
    return posixpath.normpath(posixpath.join(folder, target))


def _normpath(path: str) -> str:
    """posixpath.normpath, without its cost for a path with nothing to normalise."""
    return path if _is_normal(path) else posixpath.normpath(path)


def _is_normal(path: str) -> bool:
    """A relative path with no empty, `.` or `..` segment: normpath leaves it as it is.

    Resolving the links of a store normalises thousands of link targets, most of
    them plain names, and posixpath.normpath is Python code.
    """
    if not path or path[0] == "/":
        return False
    if "/" not in path:
        return path != "." and path != ".."
    segments = path.split("/")
    return "" not in segments and "." not in segments and ".." not in segments
