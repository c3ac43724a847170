"""What the writing tools, list_memories and memory_health answer (session 33).

Measured through the SDK's client on rjmurillo/ai-agents' store (the shared corpus, in its
clone): update_memory changing one line of the largest memory answered 31,248 characters
(the memory echoed whole), a page of list_memories 12,353 (mostly null fields: a Serena
store has no dates, tags or source) and memory_health's entries carried 22 counts each,
mostly 0. Each answer now says what an agent needs, and how to read the rest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_support import Agent, commit_then_bump_the_version

pytestmark = pytest.mark.anyio

LINES = [f"- step {n}: run `make step{n}` and read its log" for n in range(400)]


async def test_an_edit_of_one_line_answers_the_diff_not_the_memory(
    agent: Agent, git_repo: Path
) -> None:
    content = "# Build\n\n" + "\n".join(LINES) + "\n"
    await agent.call("add_memory", path="notes/build", content=content)
    fixed = await agent.call(
        "update_memory", path="notes/build", old_text="`make step7`", new_text="`make seven`"
    )
    assert "content" not in fixed and len(str(fixed)) < 1_500  # the memory is 19,000
    assert fixed["changed"] is True
    assert fixed["diff"] == (
        "@@ -9,3 +9,3 @@\n"
        " - step 6: run `make step6` and read its log\n"
        "-- step 7: run `make step7` and read its log\n"
        "+- step 7: run `make seven` and read its log\n"
        " - step 8: run `make step8` and read its log"
    )
    assert fixed["size"] == {
        "chars": len(content) - 1,  # "step7" -> "seven"; the stored content ends without \n
        "lines": 402,
        "chars_before": len(content) - 1,
    }
    assert fixed["read"] == "get_memory(path='notes/build') gives the whole memory"
    assert fixed["citations_written"] == [] and fixed["links_added"] == []
    got = await agent.call("get_memory", path="notes/build")
    assert "`make seven`" in got["content"] and got["metadata"] == fixed["metadata"]


async def test_a_whole_content_replaced_answers_a_bounded_diff_and_says_so(
    agent: Agent,
) -> None:
    await agent.call("add_memory", path="notes/build", content="\n".join(LINES))
    replaced = await agent.call(
        "update_memory", path="notes/build", content="\n".join(line.upper() for line in LINES)
    )
    diff = replaced["diff"].split("\n")
    assert len(diff) == 40 and diff[0] == "@@ -1,400 +1,400 @@" and diff[-1].endswith("…")
    assert replaced["cut"] == (
        "the diff is cut to its start (801 lines; the first 40 lines or 4000 characters "
        "are shown): `read` gives the memory whole"
    )
    same = await agent.call("update_memory", path="notes/build", tags=["build"])
    assert "diff" not in same and "cut" not in same


async def test_a_citation_added_is_answered_with_its_verdict_at_write_time(
    agent: Agent,
) -> None:
    """add_citation answers the citation it captured (or the warning that says why it
    could not), not the memory's every citation again."""
    await agent.call(
        "add_memory", path="notes/api", content="Clients send v2.", citations=["src/app.py:3"]
    )
    cited = await agent.call("add_citation", path="notes/api", citation="src/app.py:1")
    assert [c["ref"] for c in cited["citations_written"]] == ["src/app.py:1"]
    assert cited["metadata"]["citations"] == ["src/app.py:3", "src/app.py:1"]
    missing = await agent.call("add_citation", path="notes/api", citation="src/gone.py:2")
    assert [c["ref"] for c in missing["citations_written"]] == ["src/gone.py:2"]
    assert missing["citations_written"][0]["snippet"] is None
    assert any("src/gone.py does not exist" in w for w in missing["warnings"])


async def test_a_write_to_a_named_store_says_how_to_read_it_there(agent: Agent) -> None:
    added = await agent.call("add_memory", path="notes/one", content="One.", store="scratch")
    assert added["read"] == "get_memory(path='notes/one', store='scratch') gives the whole memory"
    assert added["size"] == {"chars": 4, "lines": 1, "chars_before": None}


async def test_list_memories_leaves_out_the_fields_that_are_null_or_empty(
    agent: Agent, git_repo: Path
) -> None:
    serena = git_repo / ".serena" / "memories"
    serena.mkdir(parents=True)
    for n in range(3):
        (serena / f"note_{n}.md").write_text(f"# Note {n}\n\nPlain.\n")
    listing = await agent.call("list_memories", limit=2)
    assert listing["memories"] == [
        {"path": "note_0", "title": "Note 0", "format": "serena", "id": listing_id(listing, 0)},
        {"path": "note_1", "title": "Note 1", "format": "serena", "id": listing_id(listing, 1)},
    ]
    assert listing["total"] == 3
    assert listing["cut"] == "listed memories 1-2 of 3, by path: offset=2 for the next"
    recent = await agent.call("recent_memories", limit=1)
    assert set(recent["memories"][0]) <= {"path", "title", "format", "id"}
    (hit,) = (await agent.call("search_memories", query="Note 2"))["hits"][:1]
    # The hit gives the memory's id, path and title; its memory does not say them again.
    assert (hit["path"], hit["title"], hit["id"][:4]) == ("note_2", "Note 2", "mem:")
    assert hit["memory"] == {"format": "serena"}


def listing_id(listing: dict[str, object], n: int) -> str:
    memories = listing["memories"]
    assert isinstance(memories, list)
    identity = memories[n].get("id")
    assert isinstance(identity, str) and identity.startswith("mem:")
    return identity


async def test_list_memories_keeps_what_a_frontmatter_memory_declares(agent: Agent) -> None:
    await agent.call(
        "add_memory", path="notes/old", content="Was.", tags=["a"], expires_at="2020-01-01",
        citations=["src/app.py:3"],
    )  # fmt: skip
    (old,) = (await agent.call("list_memories", include_expired=True))["memories"]
    assert old["tags"] == ["a"] and old["expired"] is True and old["citations"] == 1
    assert old["source"] == "mcp" and old["expires_at"].startswith("2020-01-01")


async def test_memory_health_counts_only_the_verdicts_a_memory_has(
    agent: Agent, git_repo: Path
) -> None:
    await agent.call(
        "add_memory", path="notes/api", content="Clients send v2.",
        citations=["src/app.py:3", "src/app.py:1"],
    )  # fmt: skip
    commit_then_bump_the_version(git_repo, "-A")
    health = await agent.call("memory_health")
    (memory,) = health["memories"]
    assert memory["citations"] == {"total": 2, "valid": 1, "stale": 1}
    assert memory["mentions"] == {}
    assert len(health["summary"]["citations"]) == 11  # the summary keeps every verdict
    assert all(all(day["counts"].values()) for day in health["history"])


async def test_an_edit_asked_to_verify_answers_the_verdict_of_the_lines_it_wrote(
    agent: Agent, git_repo: Path
) -> None:
    """An agent fixing a stale mention wants to know whether the fix holds, not to read
    the memory's every check again (verify_memory) nor the memory (get_memory)."""
    content = "# API\n\nThe version is set at `src/app.py:3`.\nMain is `src/app.py:5`.\n"
    await agent.call("add_memory", path="notes/api", content=content)
    commit_then_bump_the_version(git_repo)
    before = await agent.call("verify_memory", path="notes/api")
    assert [m["status"] for m in before["mentions"]] == ["stale", "valid"]

    fixed = await agent.call(
        "update_memory", path="notes/api", old_text="`src/app.py:3`", new_text="`src/app.py:1`",
        verify=True,
    )  # fmt: skip
    assert fixed["valid"] is True and fixed["failing"] == 0 and fixed["citation_checks"] == []
    (check,) = fixed["mention_checks"]  # the line it wrote, not `src/app.py:5`
    assert (check["mention"], check["status"]) == ("src/app.py:1", "valid")
    plain = await agent.call("update_memory", path="notes/api", tags=["api"])
    assert "mention_checks" not in plain and "valid" not in plain

    cited = await agent.call("add_citation", path="notes/api", citation="src/app.py:5", verify=True)
    assert [(c["line"], c["status"]) for c in cited["citation_checks"]] == [(5, "valid")]
    assert cited["mention_checks"] == []
