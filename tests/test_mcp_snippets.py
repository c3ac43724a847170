"""Snippets in MCP answers are cut short (session 31's agent session on real stores).

A citation of a range captures every line of it. On sducournau/filter_mate's Serena
store, the prose mention `modules/tasks/layer_management_task.py:814-926` put a
6,365-character snippet into `verify_memories`; on kqc-real/arsnova.eu, a memory added
over MCP citing `apps/backend/src/index.ts:1-200` echoed 7,000 characters of it in
`add_memory`, `add_citation`, `update_memory` and twice in `get_memory(verify=true)`.
The answer keeps the snippet's start and says in `cut` where it is whole; the memory
file, and the CLI's `--json`, keep it whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git
from mcp_support import Agent

pytestmark = pytest.mark.anyio

LINES = [f"value_{n} = {n}  # line {n} of a long module" for n in range(1, 41)]
NOTE = (
    "snippets longer than 5 lines or 300 characters are cut to their start, ending in '…' "
    "(a citation's is whole in the memory file, memory://STORE/PATH; a mention's is the "
    "lines `line`-`end_line` of `path` at its `written_in` commit)"
)


def commit_long_module(git_repo: Path) -> None:
    (git_repo / "src" / "long.py").write_text("\n".join(LINES) + "\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "a long module")


def is_cut(snippet: str) -> bool:
    return snippet.endswith("…") and len(snippet) <= 301 and snippet.count("\n") <= 4


async def test_a_long_cited_range_is_echoed_with_its_snippet_cut_and_kept_whole_on_disk(
    agent: Agent, git_repo: Path
) -> None:
    commit_long_module(git_repo)
    added = await agent.call(
        "add_memory", path="notes/long", content="Values.", citations=["src/long.py:1-40"]
    )
    (citation,) = added["citations_written"]
    assert is_cut(citation["snippet"]) and citation["snippet"].startswith("value_1 = 1")
    assert added["cut"] == f"1 {NOTE}"
    assert LINES[-1] in (git_repo / ".memories" / "notes" / "long.md").read_text()

    read = await agent.call("get_memory", path="notes/long", verify=True)
    (checked,) = read["verification"]["citations"]
    assert checked["status"] == "valid" and is_cut(checked["snippet"])
    assert is_cut(read["citations"][0]["snippet"]) and read["cut"] == f"2 {NOTE}"
    verified = await agent.call("verify_memory", path="notes/long")
    assert is_cut(verified["citations"][0]["snippet"]) and verified["cut"] == f"1 {NOTE}"


async def test_a_short_snippet_is_answered_whole_without_a_cut_note(agent: Agent) -> None:
    added = await agent.call(
        "add_memory", path="notes/short", content="Version.", citations=["src/app.py:3"]
    )
    assert "cut" not in added
    read = await agent.call("get_memory", path="notes/short", verify=True)
    assert read["citations"][0]["snippet"] == read["verification"]["citations"][0]["snippet"]
    assert "…" not in read["citations"][0]["snippet"] and "cut" not in read


async def test_verify_memories_cuts_the_snippet_of_a_stale_mention_of_a_long_range(
    agent: Agent, git_repo: Path
) -> None:
    commit_long_module(git_repo)
    await agent.call("add_memory", path="notes/prose", content="See `src/long.py:1-40`.")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "the memory")
    module = git_repo / "src" / "long.py"
    module.write_text(module.read_text().replace("value_3 = 3", "value_3 = 33"))
    git(git_repo, "commit", "-qam", "line 3 changed")

    summary = await agent.call("verify_memories")
    ((mention,),) = [entry["mentions"] for entry in summary["invalid"]]
    assert mention["status"] == "stale" and is_cut(mention["snippet"])
    assert mention["snippet"].startswith("value_1 = 1")
    assert summary["cut"] == f"1 {NOTE}"
