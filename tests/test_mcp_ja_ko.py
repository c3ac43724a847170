"""An agent working over MCP on Japanese and Korean Serena stores.

Found by driving `serve` over stdio on AstarWorks/AstarManagement (Japanese),
3dollar-in-my-pocket/3dollar-in-my-pocket-android and josongmin/semantica-task-engine
(Korean). The server is built as `serve` builds it, in a real git repository, and
reached through the SDK's in-process client; every success is checked against the
tool's output schema and every failure must be a tool error naming the bad value.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from mcp_support import Agent

pytestmark = pytest.mark.anyio


@pytest.fixture
def serena(git_repo: Path) -> Path:
    store = git_repo / ".serena" / "memories"
    store.mkdir(parents=True)
    return store


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("name", ["가게_편집_메모", "テナント設定ガイド"])
async def test_a_memory_whose_file_name_a_mac_decomposed_is_found_by_its_composed_name(
    agent: Agent, serena: Path, name: str
) -> None:
    """A copy from macOS (HFS+) leaves `가게.md` in NFD; agents type NFC. The memory was
    "not found" by the name list_memories showed, update_memory failed, and add_memory
    created its visual twin beside it."""
    original = "# 가게 편집 메모\n\n뷰모델 메모.\n".encode()
    (serena / f"{nfd(name)}.md").write_bytes(original)
    assert nfd(name) != name

    got = await agent.call("get_memory", path=name)
    assert got["path"] == nfd(name)  # the memory as it sits on disk
    refused = await agent.fail("add_memory", path=name, content="# 중복\n")
    assert "already exists" in refused and "another Unicode form" in refused
    assert names(serena) == [f"{nfd(name)}.md"]  # no twin
    assert (serena / f"{nfd(name)}.md").read_bytes() == original

    await agent.call("update_memory", path=name, content="# 가게 편집 메모\n\n업데이트.\n")
    assert "업데이트." in (serena / f"{nfd(name)}.md").read_text(encoding="utf-8")
    await agent.call("reinforce_memory", path=name)
    assert (await agent.call("traverse_graph", root=name))["root"] == nfd(name)

    moved = await agent.call("move_memory", from_path=name, to_path=name)  # respelled
    assert moved["path"] == name
    assert names(serena) == [f"{name}.md"]
    assert (await agent.call("remove_memory", path=nfd(name)))["removed"] is True
    assert names(serena) == []


async def test_a_decomposed_category_is_found_by_its_composed_name_and_its_names_are_taken(
    agent: Agent, serena: Path
) -> None:
    (serena / nfd("설계")).mkdir()
    (serena / nfd("설계") / f"{nfd('규칙')}.md").write_bytes(b"# rules\n")
    (serena / "other.md").write_bytes(b"# other\n")

    assert (await agent.call("get_memory", path="설계/규칙"))["path"] == nfd("설계/규칙")
    listed = await agent.call("list_memories", category="설계")  # was empty
    assert [m["path"] for m in listed["memories"]] == [nfd("설계/규칙")]
    found = await agent.call("search_memories", query="rules", category="설계")
    assert [hit["path"] for hit in found["hits"]] == [nfd("설계/규칙")]
    refused = await agent.fail("move_memory", from_path="other", to_path="설계/규칙")
    assert "already exists" in refused
    assert (serena / "other.md").read_bytes() == b"# other\n"


async def test_a_memory_added_or_moved_into_a_decomposed_category_goes_into_that_folder(
    agent: Agent, serena: Path
) -> None:
    """`설계/새것` typed composed made a composed `설계/` beside the Mac's decomposed one:
    two folders that look the same, and `list 설계` then showed the new memory alone."""
    (serena / nfd("설계")).mkdir()
    (serena / nfd("설계") / f"{nfd('규칙')}.md").write_bytes(b"# rules\n")
    (serena / "other.md").write_bytes(b"# other\n")

    added = await agent.call("add_memory", path="설계/새것", content="# 새것\n\n내용.\n")
    moved = await agent.call("move_memory", from_path="other", to_path="설계/옮김")
    deeper = await agent.call("add_memory", path="설계/하위/깊은", content="# 깊은\n")

    assert [added["path"], moved["path"]] == [f"{nfd('설계')}/새것", f"{nfd('설계')}/옮김"]
    assert deeper["path"] == f"{nfd('설계')}/하위/깊은"  # a new folder inside, as typed
    assert names(serena) == [nfd("설계")]  # one folder, and other.md moved into it
    listed = await agent.call("list_memories", category="설계")
    assert len(listed["memories"]) == 4


@pytest.mark.parametrize("written_first", ["link", "memory"])
async def test_a_link_typed_composed_finds_the_memory_a_mac_named_decomposed(
    agent: Agent, serena: Path, written_first: str
) -> None:
    """`[[가게]]`, `- 가게` under `## Links` and "`가게` 참조" typed by an agent were dangling
    links to the Mac's `가게.md` in NFD (and `graph` and `related` did not see them),
    whether the memory was there first or came after the link was indexed."""
    text = "# other\n\nSee [[가게]], `가게` 참조.\n\n## Links\n\n- 가게\n"
    linking = unicodedata.normalize("NFC", text).encode()
    if written_first == "link":
        (serena / "other.md").write_bytes(linking)
        assert (await agent.call("related_memories", path="other"))["related"] == []
        (serena / f"{nfd('가게')}.md").write_bytes(b"# shop\n")
    else:
        (serena / f"{nfd('가게')}.md").write_bytes(b"# shop\n")
        (serena / "other.md").write_bytes(linking)

    related = await agent.call("related_memories", path="가게")
    assert [(r["path"], [at["line"] for at in r["links"]]) for r in related["related"]] == [
        ("other", [3, 7])
    ]
    graph = await agent.call("traverse_graph", root="other")
    assert (graph["nodes"]["other"], graph["dangling"]) == ([nfd("가게")], [])
    assert (serena / f"{nfd('가게')}.md").read_bytes() == b"# shop\n"


@pytest.mark.parametrize("name", ["없는_메모리", "未作成のメモ", "not_yet_written"])
async def test_a_link_to_a_memory_not_yet_written_is_kept_and_dangling_in_any_script(
    agent: Agent, serena: Path, name: str
) -> None:
    """add_memory(links=['없는_메모리']) wrote `- 없는_메모리` under `## Links` and then read
    it back as a mere list item naming nothing: the link vanished from the result and the
    graph, where an ASCII name showed as dangling. Once the memory exists, it resolves."""
    added = await agent.call("add_memory", path="설정", content="# 설정\n", links=[name])
    assert [(link["target"], link["kind"]) for link in added["links_added"]] == [(name, "bare")]
    graph = await agent.call("traverse_graph", root="설정")
    assert graph["dangling"] == [{"source": "설정", "target": name}]

    await agent.call("add_memory", path=name, content="# 이제 있다\n")
    graph = await agent.call("traverse_graph", root="설정")
    assert graph["dangling"] == [] and graph["nodes"]["설정"] == [name]
    related = await agent.call("related_memories", path=name)
    assert [r["path"] for r in related["related"]] == ["설정"]


async def test_a_snippet_shows_where_the_query_s_words_meet_not_the_first_one_found(
    agent: Agent, serena: Path
) -> None:
    """Found on AstarWorks/AstarManagement's frontend_directory_restructure_plan (22 KB):
    `リスク管理 ロールバック` showed `# 経費管理機能` from the directory tree at its top,
    not the `## リスク管理` section further down that holds both words."""
    tree = "\n".join(f"│   ├── module{n}/   # 機能{n}" for n in range(60))
    body = (
        f"# 構成計画\n\n```\nfrontend/\n│   ├── expense/   # 経費管理機能\n{tree}\n```\n\n"
        "## リスク管理\n\n1. **少しずつ移す**: 一度に全部は動かさない\n"
        "2. **ロールバック計画**: いつでも前の版に戻せるようにする\n"
    )
    (serena / "restructure_plan.md").write_text(body, encoding="utf-8")

    found = await agent.call("search_memories", query="リスク管理 ロールバック")
    (hit,) = found["hits"]
    assert "**リスク管理**" in hit["snippet"] and "**ロールバック**" in hit["snippet"]
    assert "経費" not in hit["snippet"]


async def test_get_context_quotes_the_section_a_long_memory_answers_with_not_its_top(
    agent: Agent, serena: Path
) -> None:
    """The same plan through get_context: too long for the budget, it was cut from its
    top, so the block was all directory tree and never reached `## リスク管理`."""
    tree = "\n".join(f"│   ├── module{n}/   # 機能{n}の管理" for n in range(300))
    body = (
        f"# 構成計画\n\n## ディレクトリ\n\n```\n{tree}\n```\n\n"
        "## リスク管理\n\n1. **ロールバック計画**: いつでも前の版に戻せるようにする\n\n"
        "## 成功基準\n\n- すべてのテストがパス\n"
    )
    (serena / "restructure_plan.md").write_text(body, encoding="utf-8")

    context = await agent.call("get_context", query="リスク管理 ロールバック", max_tokens=300)
    block = context["context"]
    assert block.startswith("> # 構成計画\n>\n> […]\n>\n> ## リスク管理\n")
    assert "> 1. **ロールバック計画**: いつでも前の版に戻せるようにする\n" in block
    assert "module" not in block
    assert block.endswith("- restructure_plan\n")

    top = await agent.call("get_context", query="ディレクトリ 機能", max_tokens=300)
    assert top["context"].startswith("> # 構成計画\n>\n> ## ディレクトリ\n")  # first section
    assert "[… truncated to fit]" in top["context"]


async def test_a_mistyped_argument_is_one_line_naming_it_and_the_value_given(
    agent: Agent,
) -> None:
    """search_memories(limit='다섯') answered with pydantic's report: '1 validation error
    for search_memoriesArguments', the message, and a URL per error."""
    message = await agent.fail("search_memories", query="재시도", limit="다섯")
    assert message == (
        "invalid limit '다섯': Input should be a valid integer, unable to parse string as "
        "an integer"
    )
    assert await agent.fail("get_memory") == "missing argument 'path'"
    message = await agent.fail("add_memory", path="메모", content="내용", tags=["태그", 3])
    assert message == "invalid tags[1] 3: Input should be a valid string"


async def test_a_memory_a_mac_wrote_decomposed_is_found_and_its_snippet_keeps_whole_syllables(
    agent: Agent, serena: Path
) -> None:
    """Text in NFD (Hangul as jamo, kana with a separate voicing mark) was indexed as it
    was: `타임아웃` and `맥에서` typed by an agent found nothing, and a snippet cut from it
    could end inside a syllable (`환경` shown as `환겨`)."""
    text = "# 맥에서 쓴 메모\n\n커넥션 풀의 타임아웃 설정은 환경 변수로 한다.\n\nガイドライン。\n"
    (serena / "mac_note.md").write_bytes(nfd(text).encode())

    for query, word in [
        ("타임아웃", "**타임아웃**"),
        ("맥에서", "**맥에서**"),
        ("ガイドライン", "**ガイドライン**"),
    ]:
        found = await agent.call("search_memories", query=query)
        assert [hit["path"] for hit in found["hits"]] == ["mac_note"], query
        snippet = found["hits"][0]["snippet"]
        assert word in snippet and "환경" in snippet
        assert not any("\u1100" <= c <= "\u11ff" or c == "\u3099" for c in snippet)
    assert (serena / "mac_note.md").read_bytes() == nfd(text).encode()  # the file as it was
