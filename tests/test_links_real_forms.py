"""Links as real Serena stores write them (issue 12): every form, and the look-alikes that are not.

The memories are shaped on real public stores (bench/links/ has the labelled
ones): related-memory bullets under headings in several languages, backticked
and bold names with a trailing why, `name.md` and `.serena/memories/name.md`
entries, index tables, Serena's `mem:` references, links to repository files.
Each test reads the links back through the service, as a user would see them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph_support import broken, out_links, write, write_all
from hostile_support import python_bounded
from memory_enhancement.core.model import LinkKind
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.formats import link_syntax
from memory_enhancement.store.formats.links import extract_links, is_related
from memory_enhancement.verify.repo import Repository

NAMES = ["alpha_notes", "beta-design", "gamma", "suggested_commands"]


def _store(store_dir: Path, body: str, source: str = "source") -> None:
    write_all(store_dir, {name: f"# {name}\n" for name in NAMES})
    write(store_dir, source, body)


def _targets(service: MemoryService, source: str = "source") -> list[str]:
    return [target for target, _ in out_links(service, source)]


# -- list items naming a memory, under any heading ---------------------------------------


@pytest.mark.parametrize(
    "item",
    [
        "- alpha_notes - why it matters",
        "- alpha_notes: why it matters",
        "- `alpha_notes` - why it matters",
        "- `alpha_notes`: why",
        "- **alpha_notes** - why",
        "- **`alpha_notes`**: why",
        "- alpha_notes.md",
        "- `alpha_notes.md` — why",
        "- .serena/memories/alpha_notes.md",
        "* alpha_notes",
        "1. `alpha_notes` (the why in parentheses)",
        "- [ ] alpha_notes",
        # A full-width colon, as Japanese and Chinese stores write the why (NEXTAltair/LoRAIro).
        "- `alpha_notes`：カスタムウィジェット初期化エラー調査",
        "- **alpha_notes**：Phase 2 全体のまとめ",
        "- alpha_notes：代码规范",
    ],
)
def test_a_list_item_starting_with_a_memory_name_is_a_link_under_any_heading(
    service: MemoryService, store_dir: Path, item: str
) -> None:
    _store(store_dir, f"# Source\n\n## Background\n\n{item}\n")
    assert _targets(service) == ["alpha_notes"]


@pytest.mark.parametrize(
    "heading",
    [
        "## Related Memories",
        "## See also",
        "### References",
        "## 関連メモリ",
        "## 参照",
        "## Relacionado",
        "## 相关文档",
        "## Voir aussi",
    ],
)
def test_a_related_heading_makes_the_names_in_its_items_links(
    service: MemoryService, store_dir: Path, heading: str
) -> None:
    _store(
        store_dir,
        f"# Source\n\n{heading}\n\n"
        "- Read `alpha_notes` and beta-design before changing it\n"
        "- 詳細は `gamma` を参照\n\n"
        "## Next\n\n- Compare with suggested_commands later\n",
    )
    assert _targets(service) == ["alpha_notes", "beta-design", "gamma"]


def test_heading_keywords_of_several_languages_are_recognised() -> None:
    for title in [
        "Related",
        "Related Memories",
        "See Also",
        "Cross-References",
        "関連ドキュメント",
        "Further reading",
        "Références",
        "Voir aussi",
        "Ver también",
        "Siehe auch",
        "ＲＥＬＡＴＥＤ",  # full-width letters read as their ASCII forms
    ]:
        assert is_related(title), title
    for title in ["Usage", "Relationship model", "Referral codes", "設計", "Overview", "Version"]:
        assert not is_related(title), title


def test_a_related_line_in_a_paragraph_links_its_names(
    service: MemoryService, store_dir: Path
) -> None:
    _store(store_dir, "# Source\n\nRelated: `mem:alpha_notes`, `beta-design`.\n")
    assert _targets(service) == ["alpha_notes", "beta-design"]


@pytest.mark.parametrize(
    "item",
    [
        "- Related: alpha_notes (the notes), beta-design (why)",  # rjmurillo/ai-agents
        "- **Related Memories**: `alpha_notes`, `beta-design`",
        "- 관련 메모리: `alpha_notes`(큰그림), `beta-design`(세부)",
        "* 関連メモリ：`alpha_notes`、`beta-design`",
    ],
)
def test_a_related_label_opening_a_list_item_links_its_names(
    service: MemoryService, store_dir: Path, item: str
) -> None:
    """Under a heading that is not about related material, an item that starts with a
    `Related:` label was read as an item whose entry is no name: its names were lost."""
    _store(store_dir, f"# Source\n\n## Notes\n\n{item}\n- Status: done, see gamma\n")
    assert _targets(service) == ["alpha_notes", "beta-design"]


@pytest.mark.parametrize(
    "item",
    [
        "- Web SDK Core: `alpha_notes`, `beta-design`",  # kynesyslabs/sdks' codemapper index
        "- **Sequent calculus:** `alpha_notes`, `beta-design`",  # lane-core/pane
        "2. Read memories: `alpha_notes`, `beta-design`",
        "- 設計メモ：`alpha_notes`、`beta-design`",
    ],
)
def test_a_label_then_only_code_names_lists_memories(
    service: MemoryService, store_dir: Path, item: str
) -> None:
    """`# SDK Codemapper Index` lists its 22 memories as `- Bridge: `a`, `b``: a label no
    related-material word, then nothing but names; graph found none of them (1 memory,
    0 links). Its names are candidates, links where they name a memory."""
    _store(store_dir, f"# Index\n\n{item}\n- Build: `make`, `gamma_ray`\n")
    assert _targets(service) == ["alpha_notes", "beta-design"]


@pytest.mark.parametrize(
    "item",
    [
        "- Servers using `uvx`: `alpha_notes`, `gamma` — require `uv` installed",
        "- Tools: `alpha_notes` and `gamma`",
        "- Note: see the `alpha_notes` file",
    ],
)
def test_a_label_list_with_prose_around_its_names_links_none(
    service: MemoryService, store_dir: Path, item: str
) -> None:
    """7Spade/xuanwu-platform's MCP index names servers (`serena`, `markitdown`) that
    memories are also named after, in items with prose: no links (the labels say so)."""
    _store(store_dir, f"# MCP Servers — Index\n\n{item}\n")
    assert _targets(service) == []


def test_an_index_table_row_naming_a_memory_is_a_link(
    service: MemoryService, store_dir: Path
) -> None:
    _store(
        store_dir,
        "# Index\n\n| Memory | Topic |\n|---|---|\n"
        "| `alpha_notes` | the notes |\n| **gamma** | letters |\n| plain words | no |\n",
    )
    assert _targets(service) == ["alpha_notes", "gamma"]


# -- explicit syntax ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The details are in the `alpha_notes` memory.",
        "See `alpha_notes` for the background.",
        "Recorded in `.serena/memories/alpha_notes.md` last week.",
        "詳細は `alpha_notes` を参照。",
        # Japanese "memo"/"memory" before the name (ssaattww/cdr_cs, NEXTAltair/LoRAIro).
        "タスクリストは Serena メモ `alpha_notes` で管理。",
        "**計画の意図** (メモリー `alpha_notes`):",
        "Serenaメモリ `alpha_notes` に以下の内容を記録：",
        "この計画はSerena Memory `alpha_notes` を精査・修正したもの。",
        # Chinese "see `x`" and "the `x` memory", simplified and traditional (1morr/FMP).
        "详见 `alpha_notes` 记忆 #25。",
        "> **详细音频系统文档见：** `alpha_notes` 记忆文件",
        "詳見 `alpha_notes` 記憶。",
        "参见 `alpha_notes`。",
        # Korean "see `x`" and "the `x` memory" (written for this test, in the style of
        # the Korean stores found by `find_string 관련 메모리`).
        "자세한 내용은 `alpha_notes` 메모리를 참고.",
        "결정 배경은 `alpha_notes` 참조.",
        "Serena 메모리 `alpha_notes`에 기록했다.",
        # "see (also) `x`" in European languages, Portuguese as davidsonsilva/fintwin's
        # project_overview writes it: "ver `planning/vs10-...` para o detalhe completo"
        # (looked for in a memory that is not plain ASCII, as such prose hardly is).
        "Concluído, ver `alpha_notes` para o detalhe completo.",
        "Veja `alpha_notes.md` antes de mudar a configuração.",
        "Ver também `alpha_notes`.",
        "Para más detalles, véase `alpha_notes`.",
        "Voir aussi `alpha_notes` pour le contexte général.",
        "Siehe `alpha_notes` für die Details.",
        "Per i dettagli vedi `alpha_notes`, perché è lì.",
        "Zie `alpha_notes` voor de achtergrond (geïnstalleerd).",
        "(ver `alpha_notes`; é o mesmo)",
        "See `mem:alpha_notes` for the background.",
        "See mem:alpha_notes for the background.",
        "See mem:alpha_notes.md.",
        "Back to [[alpha_notes]].",
        "Back to [the notes](alpha_notes.md).",
        "Back to [the notes](.serena/memories/alpha_notes.md).",
        # A markdown link into the `memory:` scheme (aqbjqtd/MoonTV's index).
        "1. [项目概览](memory:alpha_notes) - 了解项目基本情况",
        # A Serena tool call as the destination (zoryon-dev/maquina-de-conteudo's index).
        "- **[alpha_notes](serena:read?memory=alpha_notes.md)** - Estrutura completa",
    ],
)
def test_explicit_links_in_prose_are_links(
    service: MemoryService, store_dir: Path, text: str
) -> None:
    _store(store_dir, f"# Source\n\n{text}\n")
    assert _targets(service) == ["alpha_notes"]


def test_an_explicit_link_to_no_memory_dangles_but_a_candidate_does_not(
    service: MemoryService, store_dir: Path
) -> None:
    _store(
        store_dir,
        "# Source\n\nSee `mem:deleted_memory` and [[also_gone]].\n\n- `no_such_memory` - why\n"
        "- [更新记录](memory:update_record_20251217)\n- `不是记忆` 记忆\n",
    )
    assert [(t, s) for _, _, t, s, _ in broken(service)] == [
        ("deleted_memory", "dangling"),
        ("also_gone", "dangling"),
        ("update_record_20251217", "dangling"),
    ]


def test_a_mem_reference_given_as_an_example_links_only_a_memory_that_exists(
    service: MemoryService, store_dir: Path
) -> None:
    """Serena's memory_maintenance template (in gsoultan/gpool and 80-odd other stores)
    shows the convention with `mem:frontend/core` and `mem:frontend/debugging`: the
    second dangled, the first was taken for the store's `core` by its name."""
    write(store_dir, "core", "# Core\n")
    _store(
        store_dir,
        "# Memory Maintenance\n\n"
        "- Memory references must use a mem: prefix inside backticks, e.g. `mem:frontend/core`.\n"
        '  i.e. avoid a reference like "frontend debugging: `mem:frontend/debugging` and more.\n'
        "- Examples such as `mem:gamma` still link when the memory is there.\n"
        "- Read `mem:core` first; see `mem:gone` too.\n",
    )
    assert _targets(service) == ["gamma", "core"]
    assert [(t, s) for _, _, t, s, _ in broken(service)] == [("gone", "dangling")]


def test_a_mem_reference_written_as_a_brace_pattern_is_no_link(
    service: MemoryService, store_dir: Path
) -> None:
    """En-Nam/ennam-agents-scaffold's decisions/v1.12-role-workflows.md names four
    checkpoints at once, `mem:checkpoint/{ceo,cfo,ciso,hr}-workflow-designer-2026-07-10`:
    `links` reported a dangling link to `checkpoint/`."""
    write(store_dir, "checkpoint/ceo-2026", "# CEO\n")
    _store(
        store_dir,
        "# Source\n\nSee `mem:checkpoint/{ceo,cfo}-2026`, then **mem:checkpoint/ceo-2026**.\n",
    )
    assert _targets(service) == ["checkpoint/ceo-2026"]
    assert broken(service) == []


@pytest.mark.parametrize("span", ["", "`"])
def test_a_200_kb_line_of_mem_references_is_read_in_one_pass(span: str) -> None:
    """Whether a `mem:` reference is an example was read from all the text before it, for
    each reference: a line of many took minutes (in a child process: a hang fails the
    test). Only the lead-in right before a reference can make it one."""
    code = (
        "from memory_enhancement.store.formats.links import extract_links\n"
        f"refs = ' '.join(f'mem:a{{n}}' for n in range(20_000))\n"
        f"line = 'For example {span}' + refs + '{span}'\n"
        "links = extract_links('# T\\n\\n' + line + '\\n')\n"
        "print(len(links), [x.target for x in links if x.kind.value == 'named'])"
    )
    done = python_bounded(code)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "20000 ['a0']\n"  # the first alone is given as an example


@pytest.mark.parametrize("unit", ["[", "[[", ":", "a:", "[a](b ", "설"])
@pytest.mark.parametrize("opening", ["## Related\n\n- ", "- Related: "])
def test_a_200_kb_related_item_of_brackets_colons_or_one_word_is_read_in_one_pass(
    opening: str, unit: str
) -> None:
    """The link syntax and URLs a related item's names skip were tried from every `[`
    and every character to the end of the line: a line of `[[[`, `:::` or one long
    word took minutes (in a child process: a hang fails the test)."""
    code = (
        "from memory_enhancement.store.formats.links import extract_links\n"
        f"line = {opening!r} + {unit!r} * (200_000 // {len(unit)}) + ' `real-name`'\n"
        "print([x.target for x in extract_links('# T\\n\\n' + line + '\\n')])"
    )
    done = python_bounded(code, timeout=20)
    assert (done.returncode, done.stderr) == (0, "")
    assert "'real-name'" in done.stdout


# -- what is not a link -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "We ran gamma twice and alpha_notes was fine.",  # words in a sentence
        "- Run the Gamma tests first",  # a word that is not the entry
        "- Gamma: the letter, in another case than the memory name",
        "The R idiom `lapply(X, FUN)` calls FUN(X[[i]]) for each i.",  # code, not a wiki link
        "Calls FUN(X[[gamma]]) in R.",
        "Inline `[[gamma]]` and `[B](gamma.md)` are examples.",
        "```\n- gamma - in a code block\n[[gamma]]\n```",
        "- https://example.com/gamma.md",
        "- gamma (a plain name before a parenthesis is prose)",
        "用 `v-for` 记忆一些东西，`config.ini` 记忆上次的设置",  # 记忆 as a verb, no memory
        "See [the resource](memory://default/gamma) for the URI form.",  # a URI, not a name
        # a Next.js route folder, in a heading and in a sentence (122sp7/xuanwu-app)
        "## File: src/app/(shell)/[accountId]/[[gamma]]/page.tsx",
        "The catch-all src/app/[[...gamma]]/page.tsx renders it.",
        # "ver" inside a word, a code span no "see" word sends the reader to, and a
        # European "see" word in a plain ASCII memory (English, where `ver` is no word)
        "The server `gamma` and the driver `alpha_notes` start first (é).",
        "Cover `gamma` in the tests; o ver de `gamma` (a word apart from its span), é.",
        "Bump the ver `gamma` field: an ASCII memory.",
    ],
)
def test_look_alikes_are_not_links(service: MemoryService, store_dir: Path, text: str) -> None:
    _store(store_dir, f"# Source\n\n## Notes\n\n{text}\n")
    assert _targets(service) == []
    assert broken(service) == []


def test_a_memory_naming_itself_is_no_link(service: MemoryService, store_dir: Path) -> None:
    """An info table of the memory `gamma` names its own key: `| Server key | `gamma` |`."""
    write_all(store_dir, {name: f"# {name}\n" for name in NAMES})
    write(store_dir, "gamma", "# MCP: gamma\n\n| Server key | `gamma` |\n|---|---|\n")
    assert _targets(service, "gamma") == []


def test_the_tools_own_metadata_bullets_are_never_candidates() -> None:
    text = "# X\n\n## Metadata\n\n- **Created**: 2026-01-01\n- **Tags**: gamma\n"
    assert extract_links(text) == []


def test_a_moved_memory_does_not_link_to_itself_through_its_id_bullet(
    service: MemoryService, store_dir: Path
) -> None:
    """`move` writes the memory's citation ID into its `## Metadata` (`- **ID**: mem:...`);
    read as a `mem:` reference, every moved memory linked to itself: a link and a cycle
    in `graph`, and never an orphan. Other links in the metadata still count."""
    write_all(store_dir, {name: f"# {name}\n" for name in NAMES})
    write(store_dir, "source", "# Source\n\nNo links.\n\n## Metadata\n\n- **Links**: [[gamma]]\n")
    service.move("source", "archive/source")
    assert "- **ID**: mem:" in (store_dir / "archive" / "source.md").read_text(encoding="utf-8")
    assert _targets(service, "archive/source") == ["gamma"]
    assert service.graph("archive/source", depth=1).cycles == []


def test_candidates_are_kept_apart_from_explicit_links() -> None:
    links = extract_links("# X\n\n- `alpha` - see [[alpha]] and `beta`\n")
    assert [(link.target, link.kind) for link in links] == [("alpha", LinkKind.WIKI)]
    related = extract_links("# X\n\n## See also\n\n- `alpha` and `beta`\n")
    assert [(link.target, link.kind) for link in related] == [
        ("alpha", LinkKind.NAMED),
        ("beta", LinkKind.NAMED),
    ]


# -- repository links ------------------------------------------------------------------


@pytest.fixture
def in_repo(git_repo: Path) -> tuple[MemoryService, Path]:
    """A Serena store inside the repository, which has README.md, docs/guide.md and CLAUDE.md."""
    (git_repo / "docs").mkdir(exist_ok=True)
    (git_repo / "docs" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    (git_repo / "README.md").write_text("# Readme\n", encoding="utf-8")
    (git_repo / "CLAUDE.md").write_text("# Claude\n", encoding="utf-8")
    store = git_repo / ".serena" / "memories"
    return MemoryService(Store(store), Repository(git_repo)), store


def test_links_to_repository_files_are_repository_links_never_dangling(
    in_repo: tuple[MemoryService, Path],
) -> None:
    service, store = in_repo
    write_all(store, {name: f"# {name}\n" for name in NAMES})
    write(
        store,
        "source",
        "# Source\n\nSee [README](README.md), [the guide](docs/guide.md) and "
        "[up](../../CLAUDE.md).\n\n## References\n\n- `CLAUDE.md` - rules\n- docs/guide.md\n"
        "- [[alpha_notes]]\n",
    )
    assert _targets(service) == ["alpha_notes"]
    assert broken(service) == []
    with service.index.connect() as conn:
        statuses = conn.execute(
            "SELECT l.target, l.status, l.resolved FROM links l WHERE l.status = 'repository'"
        ).fetchall()
    assert sorted(statuses) == [
        ("../../CLAUDE.md", "repository", "CLAUDE.md"),
        ("CLAUDE.md", "repository", "CLAUDE.md"),
        ("README.md", "repository", "README.md"),
        ("docs/guide.md", "repository", "docs/guide.md"),
        ("docs/guide.md", "repository", "docs/guide.md"),
    ]


def test_get_lists_links_between_memories_not_repository_files(
    in_repo: tuple[MemoryService, Path],
) -> None:
    service, store = in_repo
    write_all(store, {name: f"# {name}\n" for name in NAMES})
    write(store, "source", "# Source\n\n- `CLAUDE.md` - rules\n- `gamma` - why\n- Plain words\n")
    service.list_memories()  # a synced index (a cold `get` indexes only its own memory)
    links = service.get("source", action=None).memory.links
    assert [(link.target, link.kind) for link in links or ()] == [("gamma", LinkKind.ITEM)]


def test_a_missing_repository_file_is_reported_as_missing_not_dangling(
    in_repo: tuple[MemoryService, Path],
) -> None:
    service, store = in_repo
    write(store, "source", "# Source\n\nSee [the guide](docs/guide.md) and [[gone]].\n")
    assert broken(service) == [("source", 3, "gone", "dangling", None)]
    (store.parents[1] / "docs" / "guide.md").unlink()
    assert sorted(broken(service)) == [
        ("source", 3, "docs/guide.md", "missing", None),
        ("source", 3, "gone", "dangling", None),
    ]


def test_a_hostile_repository_link_is_never_looked_up_outside_the_repository(
    in_repo: tuple[MemoryService, Path],
) -> None:
    service, store = in_repo
    write(store, "source", "# Source\n\n[x](../../../../../../etc/passwd.md) [[/etc/hosts]]\n")
    found = {(b.target, b.status) for b in service.broken_links()}
    assert found == {("../../../../../../etc/passwd.md", "missing"), ("/etc/hosts", "dangling")}


# -- moving keeps the new forms written as they were ------------------------------------


def test_move_rewrites_a_backticked_bullet_and_keeps_it_backticked(
    service: MemoryService, store_dir: Path
) -> None:
    """In a Serena store a memory's name is its path (Serena reads `archive/alpha_renamed`,
    not `alpha_renamed`), so that is what a moved memory's name becomes."""
    _store(
        store_dir,
        "# Source\n\n## 関連メモリ\n\n- `alpha_notes` - why\n- **alpha_notes.md**: again\n"
        "\nSee `mem:alpha_notes`.\n",
    )
    service.move("alpha_notes", "archive/alpha_renamed")
    text = (store_dir / "source.md").read_text(encoding="utf-8")
    assert "- `archive/alpha_renamed` - why\n" in text
    assert "- **archive/alpha_renamed.md**: again\n" in text
    assert "See `mem:archive/alpha_renamed`.\n" in text
    assert _targets(service) == ["archive/alpha_renamed"]


def test_a_move_into_a_folder_rewrites_a_mem_reference_its_name_would_still_find(
    service: MemoryService, store_dir: Path
) -> None:
    """Kronos1993/Multiplatform-Weather-App links its memories Serena's way, `mem:conventions`;
    moving `conventions` to `style/conventions` left every `mem:conventions` as written,
    since the unique name still found it here; but Serena reads `mem:NAME` as the memory
    at exactly that path, so its `read_memory` and its reference check found none."""
    _store(store_dir, "# Source\n\nStyle: `mem:alpha_notes`; see mem:alpha_notes.\n")
    result = service.move("alpha_notes", "style/alpha_notes")
    assert result.links_updated == ("source",)
    assert (store_dir / "source.md").read_text(encoding="utf-8") == (
        "# Source\n\nStyle: `mem:style/alpha_notes`; see mem:style/alpha_notes.\n"
    )
    assert _targets(service) == ["style/alpha_notes"]


def test_a_move_in_a_frontmatter_store_keeps_a_unique_name_bare_but_not_a_mem_reference(
    service: MemoryService, store_dir: Path
) -> None:
    """Outside Serena a bare name that is unique is how memories are named, so it stays
    bare; a `mem:` reference is Serena's syntax, and names the path wherever it is."""
    head = "---\ntitle: t\n---\n"
    write_all(store_dir, {name: f"{head}# {name}\n" for name in NAMES})
    body = "# Source\n\n## Related\n\n- `gamma` - why\n\nSee `mem:gamma`.\n"
    write(store_dir, "source", head + body)
    service.move("gamma", "archive/gamma_renamed")
    text = (store_dir / "source.md").read_text(encoding="utf-8")
    assert "- `gamma_renamed` - why\n" in text
    assert "See `mem:archive/gamma_renamed`.\n" in text
    assert _targets(service) == ["archive/gamma_renamed"]


def test_a_move_keeps_a_markdown_link_written_from_the_repository_root_so(
    in_repo: tuple[MemoryService, Path],
) -> None:
    """NEXTAltair/LoRAIro links its memories `[spec](.serena/memories/x.md)`; a move
    rewrote those to `specs/x.md`, dropping the `.serena/memories/` the author wrote (a
    reader of the memory looks for that at the repository's root). A link relative to the
    memory stays relative, and both still find the memory."""
    service, store = in_repo
    write_all(store, {name: f"# {name}\n" for name in NAMES})
    write(
        store,
        "source",
        "# Source\n\n**詳細**: [spec](.serena/memories/alpha_notes.md)\n"
        "Also [here](alpha_notes.md#usage).\n",
    )
    service.move("alpha_notes", "specs/alpha")
    assert (store / "source.md").read_text(encoding="utf-8") == (
        "# Source\n\n**詳細**: [spec](.serena/memories/specs/alpha.md)\n"
        "Also [here](specs/alpha.md#usage).\n"
    )
    assert _targets(service) == ["specs/alpha"]
    assert broken(service) == []


def test_a_move_keeps_a_links_dot_slash_and_query_as_written(
    in_repo: tuple[MemoryService, Path],
) -> None:
    """`./x.md` lost its `./`, and `x.md?plain=1` (read as a link to x) was left as it was,
    dangling after the move (bytes-s33)."""
    service, store = in_repo
    write_all(store, {name: f"# {name}\n" for name in NAMES})
    write(store, "source", "# Source\n\n[a](./alpha_notes.md) and [b](alpha_notes.md?plain=1).\n")
    service.move("alpha_notes", "specs/alpha")
    assert (store / "source.md").read_text(encoding="utf-8") == (
        "# Source\n\n[a](./specs/alpha.md) and [b](specs/alpha.md?plain=1).\n"
    )
    assert broken(service) == []


def test_a_markdown_link_to_a_removed_memory_written_from_the_root_dangles(
    in_repo: tuple[MemoryService, Path],
) -> None:
    """After `remove alpha_notes`, `[spec](.serena/memories/alpha_notes.md)` (NEXTAltair/
    LoRAIro's form) was reported as a link to a missing repository file: it names a memory
    file of the store's own folder, so it is a dangling memory link, with its fix offered
    like any other; a missing file elsewhere stays a missing repository file."""
    service, store = in_repo
    write_all(store, {name: f"# {name}\n" for name in NAMES})
    write(
        store,
        "source",
        "# Source\n\n[spec](.serena/memories/alpha_notes.md), [b](.serena/memories/beta_design.md)"
        " and [gone](docs/gone.md)\n",
    )
    service.remove("alpha_notes")
    assert broken(service) == [
        ("source", 3, ".serena/memories/alpha_notes.md", "dangling", None),
        ("source", 3, ".serena/memories/beta_design.md", "dangling", "beta-design"),
        ("source", 3, "docs/gone.md", "missing", None),
    ]


def test_a_markdown_link_to_a_gone_file_of_another_projects_store_is_a_missing_file(
    in_repo: tuple[MemoryService, Path], git_repo: Path
) -> None:
    """In a repository holding another project's Serena store (`frontend/.serena/memories/`),
    a link to a file gone from it names a repository file, not a memory of this store: it
    stays a missing file (no fix that would point it at this store's memory); one from
    the root into this store's own folder, or through a machine's path to it, dangles."""
    service, store = in_repo
    (git_repo / "frontend/.serena/memories").mkdir(parents=True)
    (git_repo / "frontend/.serena/memories/theirs.md").write_text("# Theirs\n", encoding="utf-8")
    write_all(store, {name: f"# {name}\n" for name in NAMES})
    write(
        store,
        "source",
        "# Source\n\n[a](frontend/.serena/memories/gone.md), "
        "[b](frontend/.serena/memories/theirs.md), [c](.serena/memories/gone.md), "
        "[d](/home/me/project/.serena/memories/gone.md)\n",
    )
    assert broken(service) == [
        ("source", 3, "frontend/.serena/memories/gone.md", "missing", None),
        ("source", 3, ".serena/memories/gone.md", "dangling", None),
        ("source", 3, "/home/me/project/.serena/memories/gone.md", "dangling", None),
    ]


def test_a_link_written_in_a_heading_is_a_link_and_a_move_rewrites_it(
    service: MemoryService, store_dir: Path
) -> None:
    """aqbjqtd/MoonTV's index heads each entry with its link: `#### [项目概览](memory:x)`.
    Headings were skipped, so a move left those links pointing at the old name."""
    _store(
        store_dir,
        "# Index\n\n#### [项目概览](memory:alpha_notes)\n\n- 内容: 项目基本信息\n\n"
        "### [[gamma]]\n\n## 1. [Design](beta-design.md)\n",
    )
    assert _targets(service) == ["alpha_notes", "gamma", "beta-design"]
    service.move("alpha_notes", "archive/alpha_renamed")
    text = (store_dir / "source.md").read_text(encoding="utf-8")
    assert "#### [项目概览](memory:archive/alpha_renamed)\n" in text  # its Serena name
    assert _targets(service) == ["archive/alpha_renamed", "gamma", "beta-design"]


def test_a_serena_read_link_is_rewritten_by_a_move(service: MemoryService, store_dir: Path) -> None:
    """zoryon-dev/maquina-de-conteudo lists its memories as `[x](serena:read?memory=x.md)`:
    no link was found (28 memories the index named were orphans); a move rewrites it."""
    _store(
        store_dir, "# Índice\n\n- **[alpha_notes](serena:read?memory=alpha_notes.md)** - Visão\n"
    )
    assert _targets(service) == ["alpha_notes"]
    service.move("alpha_notes", "archive/alpha_renamed")
    text = (store_dir / "source.md").read_text(encoding="utf-8")
    assert _targets(service) == ["archive/alpha_renamed"]
    assert "- **[alpha_notes](serena:read?memory=archive/alpha_renamed" in text


def test_a_heading_that_sends_the_reader_to_a_memory_links_it_and_a_move_rewrites_it(
    service: MemoryService, store_dir: Path
) -> None:
    """davidsonsilva/fintwin's project_overview heads each slice with where its detail is:
    `## VS-10 (Consolidação do MVP) — completo, ver `planning/vs10-...` para o detalhe`.
    Headings were read for link syntax only, so graph found none of those memories."""
    write(store_dir, "planning/vs10", "# VS-10\n")
    _store(
        store_dir,
        "# Visão geral\n\n## VS-10 — completo, ver `planning/vs10` para o detalhe completo\n\n"
        "## See `gamma` for the letters\n\n## The `alpha_notes` heading names no memory\n",
    )
    assert _targets(service) == ["planning/vs10", "gamma"]
    service.move("planning/vs10", "planning/vs10-mvp")
    text = (store_dir / "source.md").read_text(encoding="utf-8")
    assert "## VS-10 — completo, ver `planning/vs10-mvp` para o detalhe completo\n" in text
    assert _targets(service) == ["planning/vs10-mvp", "gamma"]


def test_a_move_rewrites_the_mem_reference_not_the_same_word_in_the_sentence(
    service: MemoryService, store_dir: Path
) -> None:
    """A `mem:` reference (and a `memory:` link) was rewritten as a word, at its first
    standalone occurrence: the sentence's `gamma`, or the link's text, changed and the
    reference was left to dangle; so was the real one after an example naming the same
    memory, and one ending a sentence (`mem:gamma.`) was not found at all."""
    body = (
        "# Source\n\n"
        "The gamma design: `mem:gamma`.\n\n"
        "#### [gamma notes](memory:gamma)\n\n"
        "- e.g. `mem:gamma` and `mem:gamma`\n"
        "- See mem:gamma. And `mem:gamma.md`, gamma-ray aside.\n"
    )
    _store(store_dir, body)
    service.move("gamma", "archive/gamma_renamed")
    text = (store_dir / "source.md").read_text(encoding="utf-8")
    renamed = body.replace("mem:gamma", "mem:archive/gamma_renamed")
    assert text == renamed.replace("memory:gamma)", "memory:archive/gamma_renamed)")
    assert broken(service) == []


def test_a_move_rewrites_the_name_a_sentence_points_at_not_the_same_word_before_it(
    service: MemoryService, store_dir: Path
) -> None:
    """The name of "see `gamma`" was rewritten at the sentence's first `gamma`; a list
    item's entry is still its first word."""
    body = (
        "# Source\n\nThe gamma design: see `gamma`.\n\n"
        "- gamma: the `gamma` memory\n\n## Related\n\n- the gamma one, also **gamma**\n"
    )
    _store(store_dir, body)
    service.move("gamma", "archive/gamma_renamed")
    assert (store_dir / "source.md").read_text(encoding="utf-8") == (
        "# Source\n\nThe gamma design: see `archive/gamma_renamed`.\n\n"
        "- archive/gamma_renamed: the `gamma` memory\n\n"
        "## Related\n\n- the gamma one, also **archive/gamma_renamed**\n"
    )
    assert set(_targets(service)) == {"archive/gamma_renamed"} and broken(service) == []


# -- the parser's fast path reads lines as markdown-it does -------------------------------


_PIECES = [
    "[", "]", "(", ")", "`", "``", " ", "a", "b.md", "x/y.md", "mem:", "mem:a", "[[", "]]",
    "[mem:abcd]", "link:", "cite:", "\\", "\\`", "<", ">", "<a>", "&", "&amp;", "!", "#",
    "http://h/x.md", "%2E", ".", "|", "-", "\t", "e.g. ", ' like "a: ',
]  # fmt: skip


@settings(max_examples=1500, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_lines_read_without_the_parser_give_the_links_markdown_it_gives(line: str) -> None:
    """simple_links answers only for lines it reads exactly as CommonMark does (code
    spans, links, escapes, HTML, entities); emphasis is outside both (see link_syntax)."""
    simple = link_syntax.simple_links(line, "link", 1)
    if simple is not None:
        assert simple == list(link_syntax.parsed_links(line, "link", 1)), line


_UNDERSCORED = [*_PIECES, "_", "__", "a_b", "x__y", "é_1", "_a", "b_"]


@settings(max_examples=1500, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(_UNDERSCORED), max_size=14).map("".join))
def test_underscores_inside_words_read_without_the_parser_as_markdown_it_reads_them(
    line: str,
) -> None:
    """An underscore between letters or digits (`build_all`) is no emphasis to CommonMark,
    so a line holding one and a wiki link or a `mem:` reference is read without the parser,
    and gives the links markdown-it gives."""
    simple = link_syntax.simple_links(line, "link", 1)
    if simple is not None:
        assert simple == list(link_syntax.parsed_links(line, "link", 1)), line


def test_a_wiki_link_beside_a_word_with_an_underscore_needs_no_parser() -> None:
    line = "de-version needs a build_all regen. Related: [[architecture/install-parity]]."
    found = link_syntax.simple_links(line, "link", 1)  # the shared corpus's only such line
    assert found is not None and [x.target for x in found] == ["architecture/install-parity"]
    assert link_syntax.simple_links("See _[[a]]_ and x_y", "link", 1) is None


def test_code_spans_pair_backtick_runs_of_equal_length() -> None:
    assert link_syntax.code_spans("a `x` b ``y ` z`` `open") == [(2, 5, "x"), (8, 17, "y ` z")]
    assert link_syntax.code_spans("`` ` ``") == [(0, 7, "`")]


def test_a_link_inside_a_code_span_is_no_link_and_mem_refs_in_code_count() -> None:
    line = "See `[x](alpha.md)` and [`beta`](beta.md), `mem:gamma`."
    assert [(x.target, x.kind) for x in link_syntax.inline_links(line, "link", 1)] == [
        ("beta.md", LinkKind.MARKDOWN),
        ("gamma", LinkKind.MEM_REF),
    ]


@pytest.mark.parametrize("heading", ["## 관련 메모리", "## 関連メモリ", "## Related Wiki records"])
def test_a_wiki_link_written_in_backticks_under_a_related_heading_is_a_link(
    service: MemoryService, store_dir: Path, heading: str
) -> None:
    """Korean and Japanese stores list related memories as ``- `[[name]]` (why)``: the
    backticks only set the wiki link off, but the name inside them (`[[alpha_notes]]`) was
    read as no name, so those memories had no links at all. Elsewhere a backticked
    `[[...]]` stays code (TOML's `[[accounts]]`, Next.js's `[[...params]].tsx`)."""
    _store(
        store_dir,
        f"# Source\n\n`[[gamma]]` is TOML here.\n\n{heading}\n\n"
        "- `[[alpha_notes]]`\n- `[[beta-design]]` (세부 설계)\n- `[[no_such_memory]]`\n",
    )
    assert _targets(service) == ["alpha_notes", "beta-design"]
    assert broken(service) == []  # a name in related material that names nothing: no link
    service.move("alpha_notes", "alpha_renamed")
    text = (store_dir / "source.md").read_text(encoding="utf-8")
    assert "- `[[alpha_renamed]]`\n" in text
    assert "`[[gamma]]` is TOML here." in text


@pytest.mark.parametrize("heading", ["## 연관 메모리", "## 연관 메모", "## 함께 보기"])
def test_korean_headings_for_associated_memories_and_see_also_are_related_material(
    service: MemoryService, store_dir: Path, heading: str
) -> None:
    """Korean stores also head their related memories `## 연관 메모리` ("associated
    memories") and `## 함께 보기` ("see also"); under them ``- `beta-design` 세부 설계``
    (a why with no dash before it) was no link. `연관관계` (an ORM's association mapping)
    is not such a heading."""
    items = "- `alpha_notes` 큰그림\n- `beta-design` 세부 설계\n"
    _store(store_dir, f"# Source\n\n{heading}\n\n{items}")
    assert _targets(service) == ["alpha_notes", "beta-design"]
    assert not is_related("연관관계 매핑")
