"""`graph --format mermaid|dot`: output a renderer accepts as is (issue 5 "Commands").

No Mermaid or Graphviz is installed here, so the outputs are checked by small
parsers of the subset they use: Mermaid's `graph LR` with `id["label"]` nodes
and `a --> b` / `a -->|"label"| b` edges; DOT's `digraph { ... }` with quoted
IDs, attribute lists and `->` edges. Each parser refuses anything else.
"""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

from conftest import RunCli
from graph_support import write_all
from memory_enhancement.graph.render import as_dot, as_mermaid, as_text
from memory_enhancement.graph.traverse import Edge, GraphResult

STORE = {
    "notes/a": "# A\n\n[[ops/b-c]] and [link:depends_on](notes/caf\u00e9)\n",
    "ops/b-c": "# B\n\n[[notes/a]]\n",
    "notes/caf\u00e9": "# Caf\u00e9\n",
}

AWKWARD = GraphResult(
    root='say "hi"',
    nodes={'say "hi"': ["a|b", "x\\y"], "a|b": [], "x\\y": []},
    visited_count=3,
    max_depth_reached=1,
    edges=[
        Edge('say "hi"', "a|b", 'odd "type" | here', 1),
        Edge('say "hi"', "x\\y", "link", 1),
        Edge("x\\y", 'say "hi"', "related", 2),
    ],
    depths={'say "hi"': 0, "a|b": 1, "x\\y": 1},
)

# -- Mermaid ----------------------------------------------------------------------------

_NODE = re.compile(r'  (n\d+)(?:\(\("([^"]*)"\)\)|\["([^"]*)"\])')
_EDGE = re.compile(r'  (n\d+) -->(?:\|"([^"|]*)"\|)? (n\d+)')


def parse_mermaid(text: str) -> tuple[dict[str, str], str, list[tuple[str, str, str]]]:
    """(labels by node id, the root's id, edges as (source label, target label, type))."""
    lines = text.split("\n")
    assert lines[0] == "```mermaid" and lines[1] == "graph LR", text
    assert lines[-2:] == ["```", ""], text
    labels: dict[str, str] = {}
    root = ""
    edges = []
    for line in lines[2:-2]:
        node, edge = _NODE.fullmatch(line), _EDGE.fullmatch(line)
        assert node or edge, f"not a Mermaid node or edge: {line!r}"
        if node:
            key, round_label, box_label = node.groups()
            assert key not in labels, f"node {key} defined twice"
            labels[key] = (round_label if round_label is not None else box_label).replace(
                "#quot;", '"'
            )
            root = key if round_label is not None else root
        elif edge:
            source, kind, target = edge.groups()
            assert source in labels and target in labels, f"edge before its nodes: {line!r}"
            kind = (kind or "link").replace("#quot;", '"').replace("#124;", "|")
            edges.append((labels[source], labels[target], kind))
    return labels, root, edges


def test_mermaid_is_a_fenced_block_of_nodes_and_edges(run_cli: RunCli, store_dir: Path) -> None:
    write_all(store_dir, STORE)
    result = run_cli(["graph", "notes/a", "--format", "mermaid", "--dir", store_dir])
    assert result.exit_code == 0
    labels, root, edges = parse_mermaid(result.stdout)
    assert labels == {"n0": "notes/a", "n1": "ops/b-c", "n2": "notes/caf\u00e9"}
    assert root == "n0"
    assert edges == [
        ("notes/a", "ops/b-c", "link"),
        ("notes/a", "notes/caf\u00e9", "depends_on"),
        ("ops/b-c", "notes/a", "link"),
    ]


def test_mermaid_node_ids_are_sanitized_and_quotes_in_labels_escaped() -> None:
    text = as_mermaid(AWKWARD)
    labels, root, edges = parse_mermaid(text)
    assert all(re.fullmatch(r"n\d+", key) for key in labels)
    assert labels[root] == 'say "hi"'
    assert sorted(labels.values()) == ["a|b", 'say "hi"', "x\\y"]
    assert edges == [
        ('say "hi"', "a|b", 'odd "type" | here'),
        ('say "hi"', "x\\y", "link"),
        ("x\\y", 'say "hi"', "related"),
    ]


def test_mermaid_of_a_lone_root_is_still_a_valid_block() -> None:
    lone = GraphResult("solo", {"solo": []}, 1, 0, depths={"solo": 0})
    assert as_mermaid(lone) == '```mermaid\ngraph LR\n  n0(("solo"))\n```\n'


# -- DOT --------------------------------------------------------------------------------

_DOT_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([A-Za-z_][A-Za-z0-9_]*)|(->|[{}\[\];,=]))')


def dot_tokens(text: str) -> list[str]:
    tokens, at = [], 0
    while text[at:].strip():
        match = _DOT_TOKEN.match(text, at)
        assert match, f"DOT syntax error at {text[at : at + 20]!r}"
        tokens.append(match[1] or match[2] or match[3])
        at = match.end()
    return tokens


def unquote(token: str) -> str:
    assert token.startswith('"') and token.endswith('"'), token
    return re.sub(r'\\(["\\])', r"\1", token[1:-1])


def parse_dot(text: str) -> tuple[list[str], list[tuple[str, str, dict[str, str]]]]:
    """(node names, edges with their attributes) of a `digraph NAME { ... }`."""
    tokens = dot_tokens(text)
    assert tokens[:3] == ["digraph", "memories", "{"] and tokens[-1] == "}", tokens
    body = tokens[3:-1]
    assert "{" not in body and "}" not in body  # braces balance: one graph, no subgraphs
    nodes, edges = [], []
    statements: list[list[str]] = [[]]
    for token in body:
        if token == ";":
            statements.append([])
        else:
            statements[-1].append(token)
    assert statements[-1] == [], "the last statement is not closed with ;"
    for stmt in statements[:-1]:
        head, attrs = stmt, {}
        if "[" in stmt:
            start = stmt.index("[")
            assert stmt[-1] == "]", stmt
            head, inner = stmt[:start], stmt[start + 1 : -1]
            while inner:
                key, eq, value, *inner = inner
                assert eq == "=" and inner[:1] in ([], [","]), stmt
                attrs[key] = unquote(value) if value.startswith('"') else value
                inner = inner[1:]
        if len(head) == 3 and head[0] == "rankdir":
            continue
        if head == ["node"]:
            continue
        if len(head) == 3 and head[1] == "->":
            edges.append((unquote(head[0]), unquote(head[2]), attrs))
        else:
            assert len(head) == 1, stmt
            nodes.append(unquote(head[0]))
            assert attrs["label"] == nodes[-1]
    return nodes, edges


def test_dot_parses_as_a_digraph_with_quoted_names(run_cli: RunCli, store_dir: Path) -> None:
    write_all(store_dir, STORE)
    result = run_cli(["graph", "notes/a", "--format", "dot", "--dir", store_dir])
    assert result.exit_code == 0
    nodes, edges = parse_dot(result.stdout)
    assert nodes == ["notes/a", "ops/b-c", "notes/caf\u00e9"]
    assert edges == [
        ("notes/a", "ops/b-c", {}),
        ("notes/a", "notes/caf\u00e9", {"label": "depends_on"}),
        ("ops/b-c", "notes/a", {}),
    ]
    assert "caf\u00e9" in result.stdout  # Graphviz has no \u escapes: the name is written as is
    assert '"notes/a" [label="notes/a", style=bold];' in result.stdout


def test_dot_escapes_quotes_and_backslashes_in_names() -> None:
    nodes, edges = parse_dot(as_dot(AWKWARD))
    assert nodes == ['say "hi"', "a|b", "x\\y"]
    assert edges == [
        ('say "hi"', "a|b", {"label": 'odd "type" | here'}),
        ('say "hi"', "x\\y", {}),
        ("x\\y", 'say "hi"', {"label": "related"}),
    ]


# -- text -------------------------------------------------------------------------------


def test_text_of_a_lone_root_is_the_root_and_a_summary() -> None:
    lone = GraphResult("solo", {"solo": []}, 1, 0, depths={"solo": 0})
    assert as_text(lone) == "solo\n1 memory, depth 0, 0 links, 0 cycles\n"


def test_the_text_tree_draws_a_chain_longer_than_the_recursion_limit() -> None:
    """A chain of memories each linking the next, followed with a large --depth."""
    length = sys.getrecursionlimit() + 500
    names = [f"n{i}" for i in range(length + 1)]
    chain = GraphResult(
        root=names[0],
        nodes={a: [b] for a, b in itertools.pairwise(names)} | {names[-1]: []},
        visited_count=len(names),
        max_depth_reached=length,
        edges=[Edge(a, b, "related", d + 1) for d, (a, b) in enumerate(itertools.pairwise(names))],
        depths={name: d for d, name in enumerate(names)},
    )
    lines = as_text(chain).splitlines()
    assert len(lines) == length + 2  # the root, one line per memory, the summary
    assert lines[-2] == " " * 4 * (length - 1) + f"└── {names[-1]}"
    assert lines[-1].startswith(f"{length + 1} memories, depth {length}, ")
