"""The memory graph: traversal, backlinks, roots, orphans and broken links.

Everything reads the links the index resolved (see links.py and
index/linking.py), so a traversal touches a handful of rows instead of parsing
files on every visit, and a backlink query is one indexed lookup instead of a
scan of every file (the seed's `find_related_memories`).
"""

from __future__ import annotations

import enum
import sqlite3
from collections import deque
from collections.abc import Iterable, Iterator

from memory_enhancement.core.errors import InvalidInputError

MAX_CYCLES = 100


class Direction(enum.Enum):
    OUT = "out"
    IN = "in"
    BOTH = "both"


class Algorithm(enum.Enum):
    BFS = "bfs"
    DFS = "dfs"


class _Value:
    """A small immutable value compared by its fields. Not a dataclass nor a NamedTuple:
    `related` and `graph` import this module on the quick read path (service/quick.py),
    where importing `dataclasses` or `typing` costs a third of a bare Python start."""

    __slots__: tuple[str, ...] = ()

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()  # type: ignore[attr-defined,unused-ignore]

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(self.__slots__, self._fields(), strict=True))
        return f"{type(self).__name__}({shown})"


class Edge(_Value):
    __slots__ = ("depth", "source", "target", "type")

    def __init__(self, source: str, target: str, type: str, depth: int) -> None:
        set_ = object.__setattr__
        set_(self, "source", source)
        set_(self, "target", target)
        set_(self, "type", type)
        set_(self, "depth", depth)  # depth of the node reached through this edge

    source: str
    target: str
    type: str
    depth: int


class GraphResult:
    """The seed's GraphResult (adjacency, visited_count, max_depth_reached) and more
    (a plain class for the reason _Value gives)."""

    def __init__(
        self,
        root: str,
        nodes: dict[str, list[str]],
        visited_count: int,
        max_depth_reached: int,
        edges: list[Edge] | None = None,
        cycles: list[list[str]] | None = None,
        depths: dict[str, int] | None = None,
        dangling: list[tuple[str, str]] | None = None,  # (source, target as written)
    ) -> None:
        self.root = root
        self.nodes = nodes
        self.visited_count = visited_count
        self.max_depth_reached = max_depth_reached
        self.edges = edges if edges is not None else []
        self.cycles = cycles if cycles is not None else []
        self.depths = depths if depths is not None else {}
        self.dangling = dangling if dangling is not None else []

    def __repr__(self) -> str:
        return f"GraphResult({self.root!r}, {self.visited_count} nodes, {len(self.edges)} edges)"


class Backlink(_Value):
    __slots__ = ("line", "source", "type")

    def __init__(self, source: str, type: str, line: int | None) -> None:
        set_ = object.__setattr__
        set_(self, "source", source)
        set_(self, "type", type)
        set_(self, "line", line)

    source: str
    type: str
    line: int | None


def traverse(
    conn: sqlite3.Connection,
    root: str,
    *,
    depth: int = 3,
    direction: Direction = Direction.OUT,
    algorithm: Algorithm = Algorithm.BFS,
    types: Iterable[str] = (),
) -> GraphResult:
    """Walk the graph from root up to depth, in the given direction, BFS or DFS.

    Both algorithms visit the same memories at the same (shortest) depths; only
    the order differs. DFS follows a memory's links in the order they are
    written, deep along the first before the next, and expands a memory again
    when it is later reached by a shorter path: expanding it only once left a
    memory first met at the depth limit unexpanded although `depths` gave it a
    smaller depth, so DFS missed memories BFS found.
    """
    if depth < 0:
        raise InvalidInputError(f"invalid depth {depth}: it must be 0 or more")
    wanted = frozenset(types)
    nodes: dict[str, list[str]] = {}
    depths = {root: 0}
    expanded: dict[str, int] = {}  # memory -> the depth it was last expanded at
    seen: dict[str, list[tuple[str, str, bool]]] = {}  # each memory's neighbours, read once
    edges: dict[tuple[str, str, str], int] = {}
    dangling: list[tuple[str, str]] = []
    frontier: deque[tuple[str, int]] = deque([(root, 0)])
    while frontier:
        current, level = frontier.popleft() if algorithm is Algorithm.BFS else frontier.pop()
        if level > depths[current] or expanded.get(current, level + 1) <= level:
            continue  # reached since by a shorter path, or already expanded at this depth
        expanded[current] = level
        if current not in seen:
            seen[current] = _neighbours(conn, current, direction, wanted, dangling)
        listed: list[str] = []
        children: list[tuple[str, int]] = []
        for other, kind, outgoing in seen[current]:
            if other not in listed:
                listed.append(other)
            if level >= depth:
                continue
            key = (current, other, kind) if outgoing else (other, current, kind)
            edges[key] = min(edges.get(key, level + 1), level + 1)
            if other not in depths or depths[other] > level + 1:
                depths[other] = level + 1
                children.append((other, level + 1))
        nodes[current] = listed if level < depth else []  # at the limit: listed, not expanded
        frontier.extend(children if algorithm is Algorithm.BFS else reversed(children))
    edge_list = [Edge(s, t, kind, d) for (s, t, kind), d in edges.items()]
    directed = [(e.source, e.target) for e in edge_list]
    return GraphResult(
        root,
        nodes,
        len(nodes),
        max(depths[n] for n in nodes),
        edge_list,
        find_cycles(directed),
        {n: depths[n] for n in nodes},
        dangling,
    )


def _neighbours(
    conn: sqlite3.Connection,
    path: str,
    direction: Direction,
    types: frozenset[str],
    dangling: list[tuple[str, str]],
) -> list[tuple[str, str, bool]]:
    """(other memory, link type, whether the link goes out of path) for each link.

    The flag keeps edges pointing the way each link was written: with
    `--direction both` an incoming link used to come out as an edge from path.
    """
    found: list[tuple[str, str, bool]] = []
    if direction in (Direction.OUT, Direction.BOTH):
        for target, kind, status, written in conn.execute(
            "SELECT l.resolved, l.type, l.status, l.target FROM links l "
            "JOIN memories m ON m.id = l.memory_id WHERE m.path = ? ORDER BY l.ord",
            (path,),
        ):
            if types and kind not in types:
                continue
            if status == "resolved":
                found.append((target, kind, True))
            elif status in ("dangling", "ambiguous"):
                dangling.append((path, written))
    if direction in (Direction.IN, Direction.BOTH):
        for source, kind in conn.execute(
            "SELECT m.path, l.type FROM links l JOIN memories m ON m.id = l.memory_id "
            "WHERE l.resolved = ? AND l.status = 'resolved' ORDER BY m.path, l.ord",
            (path,),
        ):
            if not types or kind in types:
                found.append((source, kind, False))
    return found


def find_cycles(edges: Iterable[tuple[str, str]], limit: int = MAX_CYCLES) -> list[list[str]]:
    """Cycles among the edges (self-links included), one per back edge, each closed on itself."""
    graph: dict[str, list[str]] = {}
    for source, target in edges:
        graph.setdefault(source, []).append(target)
        graph.setdefault(target, [])
    colour: dict[str, int] = dict.fromkeys(graph, 0)  # 0 new, 1 on the stack, 2 done
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if colour[start]:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(graph[start]))]
        path = [start]
        colour[start] = 1
        while stack and len(cycles) < limit:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                colour[node] = 2
            elif colour[child] == 1:
                cycles.append([*path[path.index(child) :], child])
            elif colour[child] == 0:
                colour[child] = 1
                path.append(child)
                stack.append((child, iter(graph[child])))
    return cycles


def backlinks(conn: sqlite3.Connection, path: str) -> list[Backlink]:
    """Memories that link to path (the seed's `related`), with the link's type and line."""
    return [
        Backlink(source, kind, line)
        for source, kind, line in conn.execute(
            "SELECT m.path, l.type, l.line FROM links l JOIN memories m ON m.id = l.memory_id "
            "WHERE l.resolved = ? AND l.status = 'resolved' AND m.path != ? "
            "ORDER BY m.path, l.line",
            (path, path),
        )
    ]


def incoming(conn: sqlite3.Connection, path: str) -> list[tuple[str, int]]:
    """The links of other memories that find path, as (source, ord): what a removal asks
    again after it (`lost`)."""
    query = (
        "SELECT m.path, l.ord FROM links l JOIN memories m ON m.id = l.memory_id "
        "WHERE l.resolved = ? AND l.status = 'resolved' AND m.path != ? ORDER BY m.path, l.ord"
    )
    return list(conn.execute(query, (path, path)))


def lost(conn: sqlite3.Connection, held: list[tuple[str, int]]) -> list[str]:
    """The memories among held's whose link there now finds no memory alone: a name may
    find another memory once the one it found is gone (`[[x]]` its sibling `notes/x`,
    then `archive/x`), and that link still works."""
    import json  # not at the top: the quick read path (`related`) imports this module

    found = set(
        conn.execute(
            "SELECT m.path, l.ord FROM links l JOIN memories m ON m.id = l.memory_id "
            "WHERE l.status = 'resolved'"
            " AND m.path IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted({source for source, _ in held})),),
        )
    )
    return list(dict.fromkeys(source for source, ord_ in held if (source, ord_) not in found))


# Self-links do not count: a memory that only links to itself is still a root, an orphan.
_NO_INCOMING = (
    "NOT EXISTS (SELECT 1 FROM links l JOIN memories s ON s.id = l.memory_id"
    " WHERE l.resolved = m.path AND l.status = 'resolved' AND s.path != m.path)"
)
_NO_OUTGOING = (
    "NOT EXISTS (SELECT 1 FROM links l WHERE l.memory_id = m.id AND l.status = 'resolved'"
    " AND l.resolved != m.path)"
)


def roots(conn: sqlite3.Connection) -> list[str]:
    """Memories no other memory links to."""
    return _paths_where(conn, _NO_INCOMING)


def orphans(conn: sqlite3.Connection) -> list[str]:
    """Memories with no links to or from any other memory."""
    return _paths_where(conn, f"{_NO_INCOMING} AND {_NO_OUTGOING}")


def _paths_where(conn: sqlite3.Connection, condition: str) -> list[str]:
    query = f"SELECT m.path FROM memories m WHERE m.error IS NULL AND {condition} ORDER BY m.path"
    return [row[0] for row in conn.execute(query)]
