"""Rendering a traversal for people: an indented tree, Mermaid (renders on GitHub) or DOT."""

from __future__ import annotations

from memory_enhancement.graph.traverse import GraphResult

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


def as_dict(result: GraphResult) -> dict[str, Any]:
    """The seed's GraphResult keys, then edges (source, target, type, depth) and cycles."""
    return {
        "root": result.root,
        "nodes": result.nodes,
        "visited_count": result.visited_count,
        "max_depth_reached": result.max_depth_reached,
        "edges": [
            {"source": e.source, "target": e.target, "type": e.type, "depth": e.depth}
            for e in result.edges
        ],
        "cycles": result.cycles,
        "depths": result.depths,
        "dangling": [{"source": s, "target": t} for s, t in result.dangling],
    }


def as_text(result: GraphResult) -> str:
    """An indented tree: each memory under the one the traversal reached it from, so its
    indent is its depth (expanded at the first link met instead, a memory the root links
    to could be drawn levels deep under a sibling that also links to it, below a summary
    saying "depth 2"); a link to a memory shown elsewhere is marked, not followed again."""
    lines = [f"{result.root}"]
    shown = {result.root}
    parent: dict[str, str] = {}  # the memory each one was reached from
    for edge in result.edges:
        if edge.target not in parent and edge.depth == result.depths.get(edge.target):
            parent[edge.target] = edge.source

    # Depth first on a stack of its own, not by recursion: a chain of thousands of
    # memories at a large --depth would pass Python's recursion limit.
    def frame(node: str, indent: str) -> tuple[str, str, Iterator[tuple[int, str]], int]:
        children = result.nodes.get(node, [])
        return node, indent, enumerate(children), len(children)

    stack = [frame(result.root, "")]
    while stack:
        node, indent, children, count = stack[-1]
        n, child = next(children, (-1, ""))
        if n < 0:
            stack.pop()
            continue
        last = n == count - 1
        mark = "└── " if last else "├── "
        expand = child not in shown and parent.get(child, node) == node
        note = "" if expand else "  (seen above)" if child in shown else "  (see below)"
        lines.append(f"{indent}{mark}{child}{note}")
        if expand:
            shown.add(child)
            stack.append(frame(child, indent + ("    " if last else "│   ")))

    summary = (
        f"{_count(result.visited_count, 'memory', 'memories')}, "
        f"depth {result.max_depth_reached}, "
        f"{_count(len(result.edges), 'link')}, {_count(len(result.cycles), 'cycle')}"
    )
    if result.dangling:
        summary += f", {_count(len(result.dangling), 'broken link')}"
    lines.append(summary)
    return "\n".join(lines) + "\n"


def as_mermaid(result: GraphResult) -> str:
    """A ```mermaid block, as GitHub renders it in markdown."""
    ids = {node: f"n{n}" for n, node in enumerate(result.depths)}
    out = ["```mermaid", "graph LR"]
    for node, key in ids.items():
        label = node.replace('"', "#quot;")
        shape = f'(("{label}"))' if node == result.root else f'["{label}"]'
        out.append(f"  {key}{shape}")
    for edge in result.edges:
        if edge.source in ids and edge.target in ids:
            label = edge.type.replace('"', "#quot;").replace("|", "#124;")
            arrow = "-->" if label == "link" else f'-->|"{label}"|'
            out.append(f"  {ids[edge.source]} {arrow} {ids[edge.target]}")
    out.append("```")
    return "\n".join(out) + "\n"


def as_dot(result: GraphResult) -> str:
    """Graphviz DOT; names are quoted strings (DOT has no \\u escapes, so none are written)."""
    out = ["digraph memories {", "  rankdir=LR;", "  node [shape=box];"]
    for node in result.depths:
        style = ", style=bold" if node == result.root else ""
        out.append(f"  {_dot(node)} [label={_dot(node)}{style}];")
    for edge in result.edges:
        label = "" if edge.type == "link" else f" [label={_dot(edge.type)}]"
        out.append(f"  {_dot(edge.source)} -> {_dot(edge.target)}{label};")
    out.append("}")
    return "\n".join(out) + "\n"


def _dot(text: str) -> str:
    """A DOT quoted string: JSON's escapes, but non-ASCII kept as is (`café`, not `caf\\u00e9`)."""
    import json  # here: `graph` as text, on the quick read path, has no use for it

    return json.dumps(text, ensure_ascii=False)


def _count(n: int, one: str, many: str = "") -> str:
    """`1 link`, `2 links`."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
