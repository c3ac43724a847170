"""Helpers of the link and graph tests: memories written by hand, links read back.

Memories are written the way a person (or `git pull`) writes them, straight to
disk, in any link style, and dated an hour in the past so the index's "changed
within two seconds of the last sync" re-check does not blur what a test counts.
What a link resolved to is read through the service's public operations: a
one-step traversal gives the resolved edges and the broken links of a memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from index_support import age
from memory_enhancement.service import MemoryService

# A small crafted store with known answers (test_graph, test_graph_mcp):
#     f -> a;  a -> b, c;  b -> d, a (a cycle);  c -depends_on-> e;
#     d -> d (a self-link) and -> gone (dangling);  g links nowhere, nothing links to it.
STORE = {
    "a": "# A\n\nStart at [[b]], then [C](c.md).\n",
    "b": "# B\n\n## Links\n\n- d\n- a - back to the start\n",
    "c": "# C\n\n[link:depends_on](e)\n",
    "d": "# D\n\nItself: [[d]]. Broken: [[gone]].\n",
    "e": "# E\n",
    "f": "# F\n\n## Related\n\n- [[a]]\n",
    "g": "# G, alone\n",
}

FULL: dict[str, Any] = {
    "root": "a",
    "nodes": {"a": ["b", "c"], "b": ["d", "a"], "c": ["e"], "d": ["d"], "e": []},
    "visited_count": 5,
    "max_depth_reached": 2,
    "edges": [
        {"source": "a", "target": "b", "type": "link", "depth": 1},
        {"source": "a", "target": "c", "type": "link", "depth": 1},
        {"source": "b", "target": "d", "type": "link", "depth": 2},
        {"source": "b", "target": "a", "type": "link", "depth": 2},
        {"source": "c", "target": "e", "type": "depends_on", "depth": 2},
        {"source": "d", "target": "d", "type": "link", "depth": 3},
    ],
    "cycles": [["d", "d"], ["a", "b", "a"]],
    "depths": {"a": 0, "b": 1, "c": 1, "d": 2, "e": 2},
    "dangling": [{"source": "d", "target": "gone"}],
}


def write(store: Path, path: str, text: str) -> Path:
    """The memory file for path (`notes/a` -> store/notes/a.md) with exactly this text."""
    file = store / f"{path}.md"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(text.encode("utf-8"))
    age(file)
    return file


def write_all(store: Path, memories: dict[str, str]) -> None:
    for path, text in memories.items():
        write(store, path, text)


def out_links(service: MemoryService, path: str) -> list[tuple[str, str]]:
    """(resolved target, type) of each resolved link out of path, in written order."""
    result = service.graph(path, depth=1)
    return [(e.target, e.type) for e in result.edges]


def broken(service: MemoryService) -> list[tuple[str, int | None, str, str, str | None]]:
    """(memory, line, target as written, status, offered fix) of every broken link."""
    return [(b.source, b.line, b.target, b.status, b.suggestion) for b in service.broken_links()]
