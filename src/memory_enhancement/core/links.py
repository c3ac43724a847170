"""Resolving the links memories make to each other, however they were written.

Real stores link in many ways (see formats/markdown.py). Each style resolves
the way its authors meant it:

- `[text](other.md)` against the linking file's folder, then the store root,
  then a unique memory of that file name (links are often copied between
  folders); a link that leaves the store and matches nothing is external (a
  repository document), not dangling.
- `[[other]]`, bare ids, `[link:TYPE](other)` and frontmatter `related:` by
  path from the store root, then by unique name; `store:path` points into
  another store and is external.
- `[mem:a7Bc3x]` through the citation IDs.

A link that matches nothing is dangling; one that matches several memories is
ambiguous. This module is pure: it is given the memories that exist.
"""

from __future__ import annotations

import difflib
import enum
import posixpath
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memory_enhancement.core.model import MEMORY_SUFFIX, Link, LinkKind

STORE_PREFIXES = frozenset({"global", "project"})


class LinkStatus(enum.Enum):
    RESOLVED = "resolved"
    DANGLING = "dangling"
    AMBIGUOUS = "ambiguous"
    EXTERNAL = "external"


@dataclass(frozen=True)
class Resolution:
    status: LinkStatus
    target: str | None = None
    candidates: tuple[str, ...] = ()


class Resolver:
    """Resolves links against the memories of one store."""

    def __init__(
        self,
        paths: Iterable[str],
        ids: Mapping[str, str] | None = None,
        stores: Iterable[str] = STORE_PREFIXES,
    ) -> None:
        self.paths = set(paths)
        self.ids = dict(ids or {})
        self.stores = frozenset(stores)
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.by_folded: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self.paths):
            name = path.rpartition("/")[2]
            self.by_name[name].append(path)
            self.by_folded[name.casefold()].append(path)

    def resolve(self, source: str, link: Link) -> Resolution:
        """By path (see by_path), else by a unique name; `[mem:ID]` through the IDs.

        A markdown link is external (a file outside the store, not a broken memory
        link) only when, read from the linking file's folder as markdown means it,
        it leaves the store: `../ops/x.md` from `misc/` stays inside, and dangles
        when `ops/x` is gone.
        """
        target = link.target.strip()
        if link.kind is LinkKind.MEM_ID:
            found = self.ids.get(target.removeprefix("mem:"))
            return Resolution(LinkStatus.RESOLVED, found) if found else _DANGLING
        if self._into_store(link):
            return Resolution(LinkStatus.EXTERNAL, target)
        named = self._named(source, link)
        if named is not None:
            return Resolution(LinkStatus.RESOLVED, named)
        if link.kind is not LinkKind.MARKDOWN:
            return self._by_name(strip_md(target.lstrip("/")))
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
        target = link.target.strip()
        if link.kind is LinkKind.MARKDOWN:
            path = strip_md(target)
            first, second = _join(source, path), posixpath.normpath(path.lstrip("/"))
        else:
            path = strip_md(target.lstrip("/"))
            first, second = path, _join(source, path)
        if first in self.paths:
            return first
        return second if second in self.paths else None

    def _into_store(self, link: Link) -> bool:
        """`global:notes/x`: a link into another store (markdown links never are)."""
        if link.kind is LinkKind.MARKDOWN:
            return False
        head, sep, rest = link.target.strip().partition(":")
        return bool(sep) and head in self.stores and bool(rest)

    def _by_name(self, path: str) -> Resolution:
        name = path.rpartition("/")[2]
        matches = self.by_name.get(name) or self.by_folded.get(name.casefold()) or []
        if len(matches) == 1:
            return Resolution(LinkStatus.RESOLVED, matches[0])
        if matches:
            return Resolution(LinkStatus.AMBIGUOUS, None, tuple(matches))
        return _DANGLING

    def suggest(
        self, source: str, link: Link, resolution: Resolution, renames: Mapping[str, str]
    ) -> str | None:
        """The one memory a broken link most likely meant, or None when there is no single one.

        In order: the file git says the target was renamed to; for an ambiguous
        link, the only candidate in the linking memory's folder; for a dangling
        one, the only memory with a nearly identical name.
        """
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
            close = difflib.get_close_matches(name, list(self.by_name), n=2, cutoff=0.85)
            if len(close) == 1 and len(self.by_name[close[0]]) == 1:
                return self.by_name[close[0]][0]
        return None


_DANGLING = Resolution(LinkStatus.DANGLING)


def strip_md(target: str) -> str:
    return target[: -len(MEMORY_SUFFIX)] if target.lower().endswith(MEMORY_SUFFIX) else target


def lookup_name(target: str) -> str | None:
    """The case-folded name of the memories a link target can match.

    None when the name depends on the linking memory's folder (`..`, `.`), so
    such a link is resolved again whenever any memory comes or goes.
    """
    path = strip_md(target.strip().lstrip("/"))
    name = posixpath.normpath(path or ".").rpartition("/")[2]
    return None if name in {".", ".."} else name.casefold()


def _join(source: str, target: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(source), target))


def link_text_for(source: str, target: str, link: Link) -> str:
    """How to write a link to target in the style of the original link."""
    if link.kind is LinkKind.MARKDOWN:
        relative = posixpath.relpath(target, posixpath.dirname(source) or ".")
        return relative + MEMORY_SUFFIX
    if link.kind is LinkKind.MEM_ID:
        return link.target
    return target
