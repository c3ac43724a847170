"""The link graph between memories: traversal, backlinks, roots, orphans, broken links."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from memory_enhancement.core.model import MEMORY_SUFFIX
from memory_enhancement.service.inputs import choice
from memory_enhancement.service.memories import Memories

if TYPE_CHECKING:
    from memory_enhancement.core.model import Fix
    from memory_enhancement.graph.broken import BrokenLink
    from memory_enhancement.graph.traverse import Algorithm, Backlink, Direction, GraphResult


class Graph(Memories):
    """Follow links from a memory, find what links to it, and what is broken."""

    def graph(
        self,
        root: str,
        *,
        depth: int = 3,
        direction: Direction | str = "out",
        algorithm: Algorithm | str = "bfs",
        types: Iterable[str] = (),
    ) -> GraphResult:
        """Follow links from a memory (seed 004 US-4), BFS or DFS, out, in or both ways."""
        from memory_enhancement.graph.traverse import Algorithm, Direction, traverse

        start = self.find(root)
        with self.index.connect() as conn:
            return traverse(
                conn, start, depth=depth, direction=choice(Direction, direction, "direction"),
                algorithm=choice(Algorithm, algorithm, "algorithm"), types=tuple(types),
            )  # fmt: skip

    def related(self, path: str) -> list[Backlink]:
        """Memories that link to this one (the seed's `related`)."""
        from memory_enhancement.graph.traverse import backlinks

        target = self.find(path)
        with self.index.connect() as conn:
            return backlinks(conn, target)

    def roots(self) -> list[str]:
        from memory_enhancement.graph.traverse import roots

        with self.index.connect() as conn:
            return roots(conn)

    def orphans(self) -> list[str]:
        from memory_enhancement.graph.traverse import orphans

        with self.index.connect() as conn:
            return orphans(conn)

    def broken_links(self) -> list[BrokenLink]:
        """Dangling and ambiguous links, each with the fix offered when there is one."""
        from memory_enhancement.graph.broken import broken_links

        return broken_links(self.index, self.repo.root, self._memory_renames)

    def fix_links(self, *, dry_run: bool = False) -> tuple[list[BrokenLink], list[Fix], list[str]]:
        """The broken links, the fixes made, and why a memory's fixes were not (its header
        does not parse: the tool does not edit it)."""
        from memory_enhancement.graph.broken import fix_links

        broken = self.broken_links()
        return broken, *fix_links(self.store, broken, dry_run=dry_run)

    def _memory_renames(self) -> dict[str, str]:
        """Memory path -> the path git says its file was renamed to (within the store)."""
        from memory_enhancement.verify.git import Git

        git = Git.discover(self.store.root)
        if git is None:
            return {}
        renames = {}
        for old, new in git.renames.items():
            if old.endswith(MEMORY_SUFFIX) and new.endswith(MEMORY_SUFFIX):
                renames[old[: -len(MEMORY_SUFFIX)]] = new[: -len(MEMORY_SUFFIX)]
        return renames
