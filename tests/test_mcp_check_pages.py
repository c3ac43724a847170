"""A memory's checks in an MCP answer: what failed or moved first, a page of them, the rest
counted (session 32's MCP work).

Measured through the SDK's client on sducournau/filter_mate's store: `verify_memory` on a
memory with 38 prose mentions (36 failing) answered 23,737 characters, `verify_memories`
41,945 (one memory's 24 mentions were 14,263 of them), and `search_memories(verify=true)`
83,008 for ten hits, each with every check that held and snippets of 6,365 characters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import git
from mcp_support import Agent

pytestmark = pytest.mark.anyio

# Five citations of src/app.py that fail once it is rewritten, two of helpers.py that hold.
CITED = [f"src/app.py:{n}" for n in (1, 3, 5, 6, 7)] + [
    "src/util/helpers.py:1",
    "src/util/helpers.py:2",
]


async def rewrite_app(agent: Agent, git_repo: Path, path: str = "notes/api", **extra: Any) -> None:
    extra.setdefault("content", "The API, in src/app.py.")
    await agent.call("add_memory", path=path, citations=CITED, **extra)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "memory")
    (git_repo / "src" / "app.py").write_text("".join(f"value_{n} = {n}\n" for n in range(7)))
    git(git_repo, "commit", "-qam", "rewritten")


def lines(entry: dict[str, Any]) -> list[tuple[str, int | None, str]]:
    return [(c["path"], c["line"], c["status"]) for c in entry["citations"]]


async def test_verify_memory_lists_a_page_of_checks_failed_first_and_counts_the_rest(
    agent: Agent, git_repo: Path
) -> None:
    await rewrite_app(agent, git_repo)
    whole = await agent.call("verify_memory", path="notes/api")
    assert len(whole["citations"]) == 7 and "left_out" not in whole and "cut" not in whole
    failing = [c for c in lines(whole) if c[2] != "valid"]
    assert failing == [("src/app.py", n, "stale") for n in (1, 3, 5, 6, 7)]

    first = await agent.call("verify_memory", path="notes/api", limit=2)
    assert lines(first) == failing[:2]
    # Each failing check listed is pointed to, not said again (its path, line and reason).
    assert first["stale_citations"] == ["citations[0]", "citations[1]"]
    # The three failing ones not listed, and the two that held, by verdict.
    assert first["left_out"] == {"stale": 3, "valid": 2}
    assert first["cut"] == "listed checks 1-2 of 7, failed and moved first: offset=2 for the next"
    # Each page keeps the memory's order; the failing ones come before those that held.
    third = await agent.call("verify_memory", path="notes/api", limit=2, offset=4)
    assert lines(third) == [failing[4], ("src/util/helpers.py", 1, "valid")]
    assert third["cut"] == "listed checks 5-6 of 7, failed and moved first: offset=6 for the next"
    last = await agent.call("verify_memory", path="notes/api", limit=2, offset=6)
    assert lines(last) == [("src/util/helpers.py", 2, "valid")] and last["stale_citations"] == []
    assert last["cut"] == "listed checks 7-7 of 7, failed and moved first"
    assert whole["confidence"] == first["confidence"] == last["confidence"]  # of every check
    assert (await agent.fail("verify_memory", path="notes/api", limit=0)).startswith(
        "invalid limit 0"
    )


async def test_get_memory_verified_holds_the_first_page_and_names_the_call_for_the_next(
    agent: Agent, git_repo: Path
) -> None:
    prose = "".join(f"- see `src/app.py:{n}`\n" for n in ("2", "4", "1-2", "3-4", "5-7"))
    await rewrite_app(agent, git_repo, content=f"The API.\n\n{prose}")
    got = await agent.call("get_memory", path="notes/api", verify=True)
    checked = got["verification"]
    assert len(checked["citations"]) + len(checked["mentions"]) == 10
    assert checked["left_out"] == {"valid": 2}  # all ten failing ones listed, of 12 checks
    # stale_citations points to each of them in its list; their reasons are said once.
    pointed = [ref.rstrip("]").split("[") for ref in checked["stale_citations"]]
    failed = [checked[key][int(n)] for key, n in pointed]
    assert len(failed) == 10 and {key for key, _ in pointed} == {"citations", "mentions"}
    assert all(check["status"] != "valid" for check in failed)
    said = json.dumps(got)
    assert all(said.count(json.dumps(check["reason"])) == 1 for check in failed)
    assert got["cut"] == (
        "listed checks 1-10 of 12, failed and moved first: "
        "verify_memory(path='notes/api', offset=10) for more"
    )
    rest = await agent.call("verify_memory", path="notes/api", offset=10)
    assert lines(rest) == [("src/util/helpers.py", 1, "valid"), ("src/util/helpers.py", 2, "valid")]


async def test_verify_memories_lists_a_few_failed_checks_of_each_memory(
    agent: Agent, git_repo: Path
) -> None:
    await rewrite_app(agent, git_repo)
    summary = await agent.call("verify_memories")
    (entry,) = summary["invalid"]
    assert len(entry["citations"]) == 3 and {c["status"] for c in entry["citations"]} != {"valid"}
    assert len(entry["stale_citations"]) == 3
    assert entry["left_out"] == {"stale": 2, "valid": 2}
    assert summary["counts"]["valid"] == 2 and sum(summary["counts"].values()) == 7
    assert (
        "1 memories list only 3 of their failed and moved checks, `left_out` counts the "
        "rest by status (checks=N lists more; verify_memory pages through one)" in summary["cut"]
    )
    more = await agent.call("verify_memories", checks=5)
    assert len(more["invalid"][0]["citations"]) == 5 and "list only" not in more["cut"]
    assert (await agent.fail("verify_memories", checks=0)).startswith("invalid checks 0")


async def test_a_search_hit_verified_lists_only_a_few_failed_checks(
    agent: Agent, git_repo: Path
) -> None:
    await rewrite_app(agent, git_repo)
    found = await agent.call("search_memories", query="API", verify=True)
    (hit,) = found["hits"]
    checked = hit["verification"]
    assert len(checked["citations"]) == 3
    assert all(c["status"] != "valid" for c in checked["citations"])
    assert checked["left_out"] == {"stale": 2, "valid": 2}
    assert found["cut"].startswith(
        "a hit's verification lists only the checks that failed or moved, at most 3; "
        "`left_out` counts the others by status (verify_memory lists them)"
    )
    context = await agent.call("get_context", query="API", verify=True)
    assert context["memories"][0]["verification"] == checked
    assert context["cut"] == found["cut"]
    assert "cut" not in await agent.call("search_memories", query="API")  # nothing verified


async def test_update_memory_replaces_one_mention_without_the_whole_content(
    agent: Agent, git_repo: Path
) -> None:
    """An agent fixing one drifted mention (122sp7/xuanwu-app: `docs/architecture-overview.md`,
    since moved under docs/01-architecture/system/) had to send the whole memory back: for
    filter_mate's 30,080-character `performance_optimizations`, 30,000 characters to change
    one path. old_text/new_text change that text alone; every other byte stays."""
    body = "".join(f"- line {n}: see `src/app.py` for it\n" for n in range(40))
    content = f"# API\n\n{body}- the helper is in `src/helpers.py`\n"
    await agent.call("add_memory", path="notes/api", content=content)
    file = git_repo / ".memories" / "notes" / "api.md"
    before = file.read_text()

    fixed = await agent.call(
        "update_memory",
        path="notes/api",
        old_text="`src/helpers.py`",
        new_text="`src/util/helpers.py`",
    )
    assert fixed["changed"] is True and "content" not in fixed  # not echoed: the diff says it
    assert fixed["diff"] == (
        "@@ -42,2 +42,2 @@\n"
        " - line 39: see `src/app.py` for it\n"
        "-- the helper is in `src/helpers.py`\n"
        "+- the helper is in `src/util/helpers.py`"
    )
    after = file.read_text()
    expected = before.replace("`src/helpers.py`", "`src/util/helpers.py`")
    differ = [
        (a, b) for a, b in zip(expected.split("\n"), after.split("\n"), strict=True) if a != b
    ]
    assert [(a.split(":")[0], b.split(":")[0]) for a, b in differ] == [("updated_at", "updated_at")]

    message = await agent.fail(
        "update_memory", path="notes/api", old_text="`src/app.py`", new_text="x"
    )
    assert message == (
        "the text to replace '`src/app.py`' is 40 times in notes/api: give more of the text "
        "around it"
    )
    gone = await agent.fail("update_memory", path="notes/api", old_text="nowhere", new_text="x")
    assert gone == "the text to replace 'nowhere' is not in notes/api"
    both = await agent.fail(
        "update_memory", path="notes/api", content="New.", old_text="a", new_text="b"
    )
    assert both == "give either content or the text to replace, not both"
    assert await agent.fail("update_memory", path="notes/api", old_text="a") == (
        "give old_text and new_text together"
    )
    assert file.read_text() == after  # nothing refused was written
