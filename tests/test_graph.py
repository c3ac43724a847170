"""Traversal, backlinks, roots and orphans (issue 5 "Commands"; seed 004 §4.4.3).

One small crafted store with known answers:

    f -> a;  a -> b, c;  b -> d, a (a cycle);  c -depends_on-> e;
    d -> d (a self-link) and -> gone (dangling);  g links nowhere and nothing links to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import RunCli
from graph_support import FULL, STORE, write, write_all
from memory_enhancement.core.errors import InvalidInputError, NotFoundError
from memory_enhancement.service import MemoryService


@pytest.fixture
def crafted(service: MemoryService, store_dir: Path) -> MemoryService:
    write_all(store_dir, STORE)
    return service


def graph_json(run_cli: RunCli, store: Path, *args: str) -> Any:
    result = run_cli(["graph", *args, "--format", "json", "--dir", store])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


# -- the JSON shape --------------------------------------------------------------------


def test_graph_json_is_the_documented_shape_with_known_answers(
    run_cli: RunCli, store_dir: Path
) -> None:
    write_all(store_dir, STORE)
    data = graph_json(run_cli, store_dir, "a")
    assert list(data) == [
        "root", "nodes", "visited_count", "max_depth_reached", "edges", "cycles", "depths",
        "dangling",
    ]  # fmt: skip
    assert data == FULL


def test_graph_json_flag_is_the_same_as_format_json(run_cli: RunCli, store_dir: Path) -> None:
    write_all(store_dir, STORE)
    result = run_cli(["graph", "a", "--json", "--dir", store_dir])
    assert json.loads(result.stdout) == FULL


def test_the_text_tree_marks_memories_seen_above_and_sums_up(
    run_cli: RunCli, store_dir: Path
) -> None:
    write_all(store_dir, STORE)
    result = run_cli(["graph", "a", "--dir", store_dir])
    assert (result.exit_code, result.stdout) == (
        0,
        "a\n"
        "├── b\n"
        "│   ├── d\n"
        "│   │   └── d  (seen above)\n"
        "│   └── a  (seen above)\n"
        "└── c\n"
        "    └── e\n"
        "5 memories, depth 2, 6 links, 2 cycles, 1 broken link\n",
    )


def test_the_text_tree_draws_each_memory_at_its_depth_under_the_memory_that_reached_it(
    run_cli: RunCli, store_dir: Path
) -> None:
    """r links to i and x; i links to x too (ACSshiga/nissei's status memories link each
    other like this): x is one link from r, so it is drawn under r, not under i."""
    write_all(
        store_dir,
        {
            "r": "# R\n\n[[i]] and [[x]]\n",
            "i": "# I\n\n[[x]] and [[s]]\n",
            "x": "# X\n\n[[i]]\n",
            "s": "# S\n",
        },
    )
    result = run_cli(["graph", "r", "--dir", store_dir])
    assert (result.exit_code, result.stdout) == (
        0,
        "r\n"
        "├── i\n"
        "│   ├── x  (see below)\n"
        "│   └── s\n"
        "└── x\n"
        "    └── i  (seen above)\n"
        "4 memories, depth 2, 5 links, 1 cycle\n",
    )


# -- depth, cycles, self-links -----------------------------------------------------------


def test_depth_0_gives_only_the_root(crafted: MemoryService) -> None:
    result = crafted.graph("a", depth=0)
    assert (result.nodes, result.visited_count, result.max_depth_reached) == ({"a": []}, 1, 0)
    assert (result.edges, result.cycles, result.depths) == ([], [], {"a": 0})


def test_memories_at_the_depth_limit_are_listed_without_their_links(
    crafted: MemoryService,
) -> None:
    result = crafted.graph("a", depth=1)
    assert result.nodes == {"a": ["b", "c"], "b": [], "c": []}
    assert result.max_depth_reached == 1
    assert [(e.source, e.target) for e in result.edges] == [("a", "b"), ("a", "c")]
    assert result.cycles == []
    assert result.dangling == []


def test_a_cycle_is_walked_once_and_reported(service: MemoryService, store_dir: Path) -> None:
    write_all(store_dir, {"x": "# X\n[[y]]\n", "y": "# Y\n[[z]]\n", "z": "# Z\n[[x]]\n"})
    result = service.graph("x", depth=10)
    assert result.nodes == {"x": ["y"], "y": ["z"], "z": ["x"]}
    assert result.max_depth_reached == 2
    assert result.cycles == [["x", "y", "z", "x"]]


def test_a_self_link_is_an_edge_and_a_cycle_of_one(service: MemoryService, store_dir: Path) -> None:
    write(store_dir, "solo", "# Solo\n\nSee [[solo]] and [me](solo.md#top).\n")
    result = service.graph("solo")
    assert result.nodes == {"solo": ["solo"]}
    assert [(e.source, e.target, e.depth) for e in result.edges] == [("solo", "solo", 1)]
    assert result.cycles == [["solo", "solo"]]
    assert service.related("solo") == []
    assert service.roots() == ["solo"]
    assert service.orphans() == ["solo"]


# -- roots --------------------------------------------------------------------------------


def test_an_unknown_root_is_a_not_found_error(crafted: MemoryService) -> None:
    with pytest.raises(NotFoundError, match="memory not found: 'nope'"):
        crafted.graph("nope")


def test_an_unknown_root_exits_2_with_a_clear_error(run_cli: RunCli, store_dir: Path) -> None:
    write_all(store_dir, STORE)
    result = run_cli(["graph", "nope", "--dir", store_dir])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: memory not found: 'nope'")


def test_an_ambiguous_root_exits_2_naming_the_candidates(run_cli: RunCli, store_dir: Path) -> None:
    write_all(store_dir, {"ops/runbook": "# R1\n", "archive/runbook": "# R2\n"})
    result = run_cli(["graph", "runbook", "--dir", store_dir])
    assert result.exit_code == 2
    assert result.stderr == "error: 'runbook' is ambiguous: archive/runbook, ops/runbook\n"


def test_a_negative_depth_exits_2(run_cli: RunCli, store_dir: Path) -> None:
    write_all(store_dir, STORE)
    result = run_cli(["graph", "a", "--depth", "-1", "--dir", store_dir])
    assert result.exit_code == 2
    assert "invalid --depth -1" in result.stderr


def test_the_service_refuses_a_negative_depth(crafted: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match="invalid depth -1"):
        crafted.graph("a", depth=-1)


def test_the_root_can_be_a_path_a_unique_name_or_a_citation_id(crafted: MemoryService) -> None:
    bare = crafted.citation_id("c").removeprefix("[mem:").removesuffix("]")
    for root in ("c", "c.md", f"mem:{bare}", f"[mem:{bare}]"):
        assert crafted.graph(root, depth=1).root == "c"


# -- algorithm, direction, types -----------------------------------------------------------


def test_bfs_goes_level_by_level_and_dfs_deep_along_the_first_link(
    crafted: MemoryService,
) -> None:
    bfs = crafted.graph("a", algorithm="bfs")
    dfs = crafted.graph("a", algorithm="dfs")
    assert list(bfs.nodes) == ["a", "b", "c", "d", "e"]
    assert list(dfs.nodes) == ["a", "b", "d", "c", "e"]
    assert dfs.depths == bfs.depths
    assert dfs.nodes == bfs.nodes


def test_dfs_finds_what_bfs_finds_when_a_memory_is_first_reached_the_long_way(
    service: MemoryService, store_dir: Path
) -> None:
    """x is first met 3 links away (at the limit) by DFS, then 2 away: it is expanded then."""
    write_all(
        store_dir,
        {
            "a": "# A\n[[c]] [[b]]\n",
            "c": "# C\n[[d]]\n",
            "d": "# D\n[[x]]\n",
            "b": "# B\n[[x]]\n",
            "x": "# X\n[[y]]\n",
            "y": "# Y\n",
        },
    )
    bfs = service.graph("a", depth=3, algorithm="bfs")
    dfs = service.graph("a", depth=3, algorithm="dfs")
    assert bfs.depths == {"a": 0, "c": 1, "b": 1, "d": 2, "x": 2, "y": 3}
    assert dfs.depths == bfs.depths
    assert dfs.nodes == bfs.nodes
    assert {(e.source, e.target, e.depth) for e in dfs.edges} == {
        (e.source, e.target, e.depth) for e in bfs.edges
    }


def test_direction_in_follows_backlinks_and_edges_keep_the_links_direction(
    crafted: MemoryService,
) -> None:
    result = crafted.graph("a", direction="in", depth=2)
    assert result.nodes == {"a": ["b", "f"], "b": ["a"], "f": []}
    assert [(e.source, e.target, e.depth) for e in result.edges] == [
        ("b", "a", 1),
        ("f", "a", 1),
        ("a", "b", 2),
    ]
    assert result.cycles == [["a", "b", "a"]]


def test_direction_both_follows_links_either_way_without_reversing_them(
    crafted: MemoryService,
) -> None:
    result = crafted.graph("e", direction="both", depth=2)
    assert result.depths == {"e": 0, "c": 1, "a": 2}
    assert [(e.source, e.target, e.type) for e in result.edges] == [
        ("c", "e", "depends_on"),
        ("a", "c", "link"),
    ]
    assert result.cycles == []  # an incoming link is not a way back


def test_type_filters_which_links_are_followed(run_cli: RunCli, store_dir: Path) -> None:
    write_all(store_dir, STORE)
    only = graph_json(run_cli, store_dir, "a", "--type", "depends_on")
    assert only["nodes"] == {"a": []}
    from_c = graph_json(run_cli, store_dir, "c", "--type", "depends_on")
    assert from_c["edges"] == [{"source": "c", "target": "e", "type": "depends_on", "depth": 1}]
    plain = graph_json(run_cli, store_dir, "a", "--type", "link")
    assert "e" not in plain["depths"]
    both = graph_json(run_cli, store_dir, "a", "--type", "link", "--type", "depends_on")
    assert both["depths"] == FULL["depths"]
    related = graph_json(run_cli, store_dir, "a", "--type", "related", "--direction", "in")
    assert related["edges"] == [{"source": "f", "target": "a", "type": "related", "depth": 1}]


def test_bad_direction_or_algorithm_is_a_usage_error(run_cli: RunCli, store_dir: Path) -> None:
    write_all(store_dir, STORE)
    for option, value in (("--direction", "up"), ("--algorithm", "astar")):
        result = run_cli(["graph", "a", option, value, "--dir", store_dir])
        assert result.exit_code == 2
        assert value in result.stderr


# -- related, roots, orphans --------------------------------------------------------------


def test_related_lists_the_memories_linking_to_one_with_type_and_line(
    run_cli: RunCli, store_dir: Path
) -> None:
    write_all(store_dir, STORE)
    result = run_cli(["related", "a", "--dir", store_dir])
    assert (result.exit_code, result.stdout) == (
        0,
        "Memories linking to 'a': 2\n  - b  [line 6]\n  - f (related)  [line 5]\n",
    )
    data = json.loads(run_cli(["related", "a.md", "--json", "--dir", store_dir]).stdout)
    assert data == {
        "memory": "a",
        "related": [
            {"path": "b", "type": "link", "line": 6, "links": [{"type": "link", "line": 6}]},
            {
                "path": "f",
                "type": "related",
                "line": 5,
                "links": [{"type": "related", "line": 5}],
            },
        ],
    }


def test_related_of_a_memory_nothing_links_to_is_empty(crafted: MemoryService) -> None:
    assert crafted.related("g") == []
    assert crafted.related("f") == []
    assert [b.source for b in crafted.related("d")] == ["b"]  # not its own self-link


def test_roots_are_the_memories_no_other_memory_links_to(run_cli: RunCli, store_dir: Path) -> None:
    write_all(store_dir, STORE)
    result = run_cli(["roots", "--dir", store_dir])
    assert (result.exit_code, result.stdout) == (0, "f\ng\n2 roots (no incoming links)\n")
    assert json.loads(run_cli(["roots", "--json", "--dir", store_dir]).stdout) == ["f", "g"]


def test_orphans_have_no_links_either_way(run_cli: RunCli, store_dir: Path) -> None:
    write_all(store_dir, STORE)
    result = run_cli(["orphans", "--dir", store_dir])
    assert (result.exit_code, result.stdout) == (0, "g\n1 orphan (no links either way)\n")
    assert json.loads(run_cli(["orphans", "--json", "--dir", store_dir]).stdout) == ["g"]


def test_a_memory_whose_links_all_dangle_is_an_orphan(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(store_dir, {"lost": "# Lost\n\n[[gone]] [x](also-gone.md)\n", "kept": "# K\n[[x]]\n"})
    write(store_dir, "x", "# X\n")
    assert service.orphans() == ["lost"]
    assert service.roots() == ["kept", "lost"]


def test_roots_and_related_follow_a_memory_being_added_and_removed(
    crafted: MemoryService, store_dir: Path
) -> None:
    write(store_dir, "h", "# H\n\nPoints at [[g]].\n")
    assert crafted.roots() == ["f", "h"]
    assert crafted.orphans() == []
    assert [b.source for b in crafted.related("g")] == ["h"]
    (store_dir / "h.md").unlink()
    assert crafted.roots() == ["f", "g"]
    assert crafted.orphans() == ["g"]


def test_related_names_each_line_once_when_two_links_share_it(
    run_cli: RunCli, store_dir: Path
) -> None:
    """Found on a Korean memory of 2sem/talktrans (QA round 38): `[[번역_메모]] 와
    [번역](번역_메모.md)` on one line was listed as `[lines 7, 7]`."""
    store_dir.mkdir(parents=True, exist_ok=True)
    (store_dir / "번역_메모.md").write_text("# 번역 메모\n", encoding="utf-8")
    (store_dir / "dich_vi.md").write_text(
        "# Dịch\n\n- [[번역_메모]] và [번역](번역_메모.md)\n- [[번역_메모]] lần nữa\n",
        encoding="utf-8",
    )
    result = run_cli(["related", "번역_메모", "--dir", store_dir])
    assert (result.exit_code, result.stdout) == (
        0,
        "Memories linking to '번역_메모': 1\n  - dich_vi  [lines 3, 4]\n",
    )
