"""The seed's memory graph (seed 004 §4.4.3, §4.4.5), as the speed baseline of issue 5.

Ported from `shared/seeds/004_*.txt`: `traverse_graph` is a BFS that parses a
memory file (`Memory.from_serena_file`: citations table, links, confidence) on
every visit; `find_related_memories` parses every file of the store and keeps
those whose links contain the memory; `find_root_memories` parses every file
and keeps the memories no link names. Nothing is cached between calls or visits.

The seed's link extraction only knows `## Links` bullets and `[[wiki]]` links,
and its memory IDs are file stems in one flat folder. What was added, and only
so that it can follow the links of the benchmark's stores (generated ones have
category folders and link in every style):

* Links: also markdown links `[text](target.md)` (not URLs), typed links
  `[link:TYPE](target)`, and bullets under `## Related` as well as `## Links`
  (the seed's own bullet regex). A bullet that is itself a `[..](..)` link is
  taken from the markdown/typed pattern instead of as a bare token.
* IDs are store-relative paths without `.md` (`ops/cache-policy`), so a file
  is `memories_dir / f"{id}.md"` exactly as in the seed. A link becomes an ID by
  dropping `|alias`, `#section` and `.md`; a markdown link is first joined to
  the linking file's folder (it is relative to it). A name-only link
  (`[[cache-policy]]` to a memory in another folder) names no file, so the
  traversal does not expand it, as the seed would not.
* `find_related_memories` counts a link equal to the memory's path or to its
  name (the seed's IDs were names), and excludes the memory itself as the seed does.
* Store-wide scans use `rglob("*.md")` (the seed globs one folder), skipping
  hidden folders as the tool does.

Run, as the seed's CLI would be run::

    python bench/seed_graph.py graph ROOT --dir STORE [--depth 3] [--json]
    python bench/seed_graph.py related MEMORY --dir STORE
    python bench/seed_graph.py roots --dir STORE
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from seed_baseline import Memory as SeedMemory

_BULLETS = re.compile(r"## (?:Links|Related)\s*\n((?:[-*]\s+.+\n?)+)")
_WIKI = re.compile(r"\[\[([^\]]+)\]\]")
_MARKDOWN = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


class Memory(SeedMemory):
    """The seed's Memory (`from_serena_file` calls `cls._parse_links`), links widened."""

    @staticmethod
    def _parse_links(content: str) -> list[str]:
        """Link texts, as written (the seed's patterns, then the added ones)."""
        links = []
        # Pattern 1 (widened to ## Related): bullets, bare tokens only.
        for match in _BULLETS.finditer(content):
            links.extend(
                token
                for token in re.findall(r"[-*]\s+(\S+)", match.group(1))
                if not token.startswith("[")
            )
        # Pattern 2: [[wiki-style]] links.
        links.extend(_WIKI.findall(content))
        # Added: [text](target.md) and [link:TYPE](target); markdown ones marked relative.
        for label, target in _MARKDOWN.findall(content):
            if "://" in target or target.startswith(("#", "mailto:")):
                continue
            if label.startswith("link:"):
                links.append(target)
            elif target.split("#", 1)[0].lower().endswith(".md"):
                links.append("./" + target)
        return list(set(links))


def link_ids(memory: Memory, memory_id: str) -> list[str]:
    """The memory IDs (store-relative paths) the links of a memory name."""
    folder = posixpath.dirname(memory_id)
    ids = []
    for text in memory.links:
        target = text.split("|", 1)[0].split("#", 1)[0].strip()
        if target.lower().endswith(".md"):
            target = target[:-3]
        if text.startswith("./"):  # a markdown link: relative to the linking file
            target = posixpath.normpath(posixpath.join(folder, target))
        if target and not target.startswith("../"):
            ids.append(target.lstrip("/"))
    return ids


def get_memory_links(memories_dir: Path, memory_id: str) -> list[str]:
    """Extract links from a memory file (parsed on every call, as in the seed)."""
    memory = Memory.from_serena_file(memories_dir / f"{memory_id}.md")
    return link_ids(memory, memory_id)


@dataclass
class GraphResult:
    """Result of graph traversal."""

    nodes: dict[str, list[str]]  # adjacency list
    visited_count: int
    max_depth_reached: int


def traverse_graph(root_id: str, memories_dir: Path, max_depth: int = 3) -> GraphResult:
    """BFS traversal of memory graph, parsing each visited file (seed 004 §4.4.3)."""
    memories_dir = Path(memories_dir)
    visited: set[str] = set()
    queue = deque([(root_id, 0)])
    graph = {}
    max_depth_reached = 0

    while queue:
        current_id, depth = queue.popleft()

        if current_id in visited or depth > max_depth:
            continue

        visited.add(current_id)
        max_depth_reached = max(max_depth_reached, depth)

        memory_path = memories_dir / f"{current_id}.md"

        if not memory_path.exists():
            continue

        links = get_memory_links(memories_dir, current_id)
        graph[current_id] = links

        for link in links:
            if link not in visited:
                queue.append((link, depth + 1))

    return GraphResult(nodes=graph, visited_count=len(visited), max_depth_reached=max_depth_reached)


def memory_files(memories_dir: Path) -> list[tuple[str, Path]]:
    """(ID, file) of every memory, recursively, hidden folders skipped."""
    found = []
    for path in memories_dir.rglob("*.md"):
        relative = path.relative_to(memories_dir)
        if any(part.startswith(".") for part in relative.parts):
            continue
        found.append((relative.with_suffix("").as_posix(), path))
    return found


def find_related_memories(memory_id: str, memories_dir: Path) -> list[str]:
    """Find all memories that link TO this memory (reverse lookup: parse every file)."""
    memories_dir = Path(memories_dir)
    name = memory_id.rpartition("/")[2]
    related = []
    for other, path in memory_files(memories_dir):
        if other == memory_id:
            continue
        links = link_ids(Memory.from_serena_file(path), other)
        if memory_id in links or name in links:
            related.append(other)
    return related


def find_root_memories(memories_dir: Path) -> list[str]:
    """Find memories with no incoming links (graph roots)."""
    all_targets: set[str] = set()
    all_memories: set[str] = set()
    for memory_id, path in memory_files(Path(memories_dir)):
        all_memories.add(memory_id)
        all_targets.update(link_ids(Memory.from_serena_file(path), memory_id))
    return list(all_memories - all_targets)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The seed's graph commands (baseline)")
    sub = parser.add_subparsers(dest="command", required=True)
    graph = sub.add_parser("graph")
    graph.add_argument("root")
    graph.add_argument("--depth", type=int, default=3)
    graph.add_argument("--json", action="store_true")
    graph.add_argument("--dir", default=".serena/memories")
    related = sub.add_parser("related")
    related.add_argument("memory")
    related.add_argument("--dir", default=".serena/memories")
    roots = sub.add_parser("roots")
    roots.add_argument("--dir", default=".serena/memories")
    args = parser.parse_args(argv)
    if args.command == "graph":
        result = traverse_graph(args.root, Path(args.dir), args.depth)
        if args.json:
            print(json.dumps({"nodes": result.nodes, "visited": result.visited_count}, indent=2))
        else:
            print(f"Graph from '{args.root}' (depth {result.max_depth_reached}):")
            for node, links in result.nodes.items():
                print(f"  {node} -> {', '.join(links) or '(no links)'}")
    elif args.command == "related":
        found = find_related_memories(args.memory, Path(args.dir))
        print(f"Memories linking to '{args.memory}':")
        for r in found:
            print(f"  - {r}")
    else:
        for r in sorted(find_root_memories(Path(args.dir))):
            print(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
