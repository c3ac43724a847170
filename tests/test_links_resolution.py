"""How each link style resolves to a memory (issue 5 "Link resolution").

Every memory here is written by hand in the style real stores use; what a link
resolved to is read back through the service: the edges of a one-step
traversal, the backlinks of the target, the broken-link report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graph_support import broken, out_links, write, write_all
from memory_enhancement.core.links import LinkStatus, Resolver
from memory_enhancement.core.model import Link, LinkKind
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.verify.repo import Repository

# -- markdown links -------------------------------------------------------------------


def test_a_markdown_link_resolves_against_the_linking_files_folder_first(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "notes/a": "# A\n\nSee [B](b.md).\n",
            "notes/b": "# B in notes\n",
            "b": "# B at the root\n",
        },
    )
    assert out_links(service, "notes/a") == [("notes/b", "link")]


def test_a_markdown_link_then_resolves_against_the_store_root(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "notes/a": "# A\n\nSee [C](ops/c.md) and [root B](/b.md).\n",
            "ops/c": "# C\n",
            "b": "# B\n",
            "notes/other/b": "# Another B, so the name alone is ambiguous\n",
        },
    )
    assert out_links(service, "notes/a") == [("ops/c", "link"), ("b", "link")]


def test_a_markdown_link_then_resolves_by_a_unique_file_name(
    service: MemoryService, store_dir: Path
) -> None:
    """Links are copied between folders; a name that only one memory has still finds it."""
    write_all(
        store_dir,
        {
            "notes/a": "# A\n\n[D](../archive/d.md) and [E](elsewhere/E.MD)\n",
            "ops/deep/d": "# D\n",
            "ops/e": "# E (names match whatever their case)\n",
        },
    )
    assert out_links(service, "notes/a") == [("ops/deep/d", "link"), ("ops/e", "link")]


def test_a_markdown_link_with_dot_dot_segments_resolves_from_the_linking_folder(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "notes/deep/a": "# A\n\n[C](../../ops/c.md) [D](./d.md) [E](%2E%2E/e.md)\n",
            "ops/c": "# C\n",
            "notes/deep/d": "# D\n",
            "notes/e": "# E, percent-encoded dots\n",
        },
    )
    assert out_links(service, "notes/deep/a") == [
        ("ops/c", "link"),
        ("notes/deep/d", "link"),
        ("notes/e", "link"),
    ]


def test_a_markdown_link_leaving_the_store_to_a_repository_document_is_not_broken(
    service: MemoryService, store_dir: Path
) -> None:
    write(store_dir, "notes/a", "# A\n\nSee [the guide](../../docs/guide.md).\n")
    assert out_links(service, "notes/a") == []
    assert broken(service) == []


def test_a_markdown_link_with_an_anchor_resolves_to_the_memory(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(store_dir, {"a": "# A\n\n[B, part two](b.md#part-two)\n", "b": "# B\n"})
    assert out_links(service, "a") == [("b", "link")]


# -- wiki links and bare ids -----------------------------------------------------------


def test_a_wiki_link_resolves_by_path_from_the_store_root(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "notes/a": "# A\n\nSee [[ops/c]].\n",
            "ops/c": "# C\n",
            "archive/ops/c": "# An older C\n",
        },
    )
    assert out_links(service, "notes/a") == [("ops/c", "link")]


def test_a_wiki_link_resolves_by_a_unique_name(service: MemoryService, store_dir: Path) -> None:
    write_all(store_dir, {"notes/a": "# A\n\nSee [[cache-policy]].\n", "ops/cache-policy": "# C\n"})
    assert out_links(service, "notes/a") == [("ops/cache-policy", "link")]


def test_a_wiki_link_with_a_section_and_an_alias_resolves_to_the_memory(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "notes/a": "# A\n\n[[ops/c#Rollback|how to roll back]], [[d|D]] and [[e#Steps]].\n",
            "ops/c": "# C\n",
            "ops/d": "# D\n",
            "e": "# E\n",
        },
    )
    assert out_links(service, "notes/a") == [("ops/c", "link"), ("ops/d", "link"), ("e", "link")]


def test_bare_ids_in_links_and_related_bullets_resolve_with_their_section_type(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "notes/a": (
                "# A\n\n"
                "- ops/not-a-link (a bullet outside the two sections)\n\n"
                "## Links\n\n"
                "- ops/c\n"
                "* d - why it matters\n\n"
                "## Related\n\n"
                "- e\n"
                "1. ops/f\n"
            ),
            "ops/c": "# C\n",
            "ops/d": "# D\n",
            "e": "# E\n",
            "ops/f": "# F\n",
            "ops/not-a-link": "# Not linked\n",
        },
    )
    assert out_links(service, "notes/a") == [
        ("ops/c", "link"),
        ("ops/d", "link"),
        ("e", "related"),
        ("ops/f", "related"),
    ]


def test_markdown_and_wiki_links_under_related_have_the_related_type(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "a": "# A\n\n[B](b.md) in prose.\n\n## Related\n\n- [B](b.md)\n- [[c]]\n",
            "b": "# B\n",
            "c": "# C\n",
        },
    )
    assert out_links(service, "a") == [("b", "link"), ("b", "related"), ("c", "related")]


def test_a_typed_link_keeps_its_type(service: MemoryService, store_dir: Path) -> None:
    write_all(
        store_dir,
        {
            "a": (
                "# A\n\n[link:depends_on](infra/db) and [link:supersedes](old.md).\n\n"
                "## Related\n\n- [link:depends_on](infra/cache#warmup)\n"
            ),
            "infra/db": "# DB\n",
            "old": "# Old\n",
            "infra/cache": "# Cache\n",
        },
    )
    assert out_links(service, "a") == [
        ("infra/db", "depends_on"),
        ("old", "supersedes"),
        ("infra/cache", "depends_on"),
    ]


# -- citation IDs and frontmatter keys ---------------------------------------------------


def test_a_mem_id_link_resolves_through_the_index(service: MemoryService, store_dir: Path) -> None:
    write(store_dir, "decisions/api", "# API\n\nv2.\n")
    citation_id = service.citation_id("decisions/api")  # written `[mem:XXXXXX]`
    write(store_dir, "notes/a", f"# A\n\nAs decided {citation_id}, and [mem:ZZZZZZ].\n")
    assert out_links(service, "notes/a") == [("decisions/api", "link")]
    assert broken(service) == [("notes/a", 3, "mem:ZZZZZZ", "dangling", None)]


def test_a_mem_id_link_follows_the_memory_when_it_moves(
    service: MemoryService, store_dir: Path
) -> None:
    write(store_dir, "decisions/api", "# API\n")
    citation_id = service.citation_id("decisions/api")
    write(store_dir, "notes/a", f"# A\n\n{citation_id}\n")
    service.move("decisions/api", "archive/api")
    assert out_links(service, "notes/a") == [("archive/api", "link")]


def test_frontmatter_related_and_links_keys_are_links(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "notes/a": (
                "---\n"
                "links:\n"
                "  - d\n"
                "  - {target: ops/e, type: depends_on}\n"
                "related: [ops/c]\n"
                "---\n"
                "# A\n\nBody with [[f]].\n"
            ),
            "ops/c": "# C\n",
            "ops/d": "# D\n",
            "ops/e": "# E\n",
            "f": "# F\n",
        },
    )
    assert out_links(service, "notes/a") == [
        ("ops/d", "link"),
        ("ops/e", "depends_on"),
        ("ops/c", "related"),
        ("f", "link"),
    ]


def test_a_frontmatter_key_holding_one_name_is_one_link(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "notes/a": "---\nrelated: ops/c\nlinks: {target: ops/d, type: depends_on}\n---\n# A\n",
            "ops/c": "# C\n",
            "ops/d": "# D\n",
        },
    )
    assert out_links(service, "notes/a") == [("ops/d", "depends_on"), ("ops/c", "related")]
    write(store_dir, "notes/b", "---\nrelated: ops/gone\n---\n# B\n")
    assert broken(service) == [("notes/b", 2, "ops/gone", "dangling", None)]


def test_frontmatter_keys_other_schemas_name_memories_under_are_typed_links(
    service: MemoryService, store_dir: Path
) -> None:
    """ddisisto/stremio-shell's memories declare `dependencies:`, `references:` and
    `superseded_by:` (one value a comma-separated string), lane-core/pane's `extends:`;
    only `links:` and `related:` were read, so `links` missed the dependencies on memories
    that do not exist and `related` the memories depending on one. `supersedes:` names
    what a memory replaced, often removed since: it is no link."""
    write_all(
        store_dir,
        {
            "project/structure": (
                "---\ntype: project.structure\nsupersedes: [old_structure.md]\n"
                "dependencies: [project/overview.md, tooling/lsp_matrix.md]\n"
                "references: [guides/qt.md#signals]\nextends: guides/_hub\n"
                "related: [guides/qt.md]\n---\n# Structure\n"
            ),
            "old_overview": (
                "---\nsuperseded_by: project/overview.md, guides/qt.md\n---\n# Old overview\n"
            ),
            "project/overview": "# Overview\n",
            "guides/qt": "# Qt\n",
            "guides/_hub": "# Guides\n",
        },
    )
    assert out_links(service, "project/structure") == [
        ("guides/qt", "related"),
        ("project/overview", "depends_on"),
        ("guides/qt", "references"),
        ("guides/_hub", "extends"),
    ]
    assert out_links(service, "old_overview") == [
        ("project/overview", "superseded_by"),
        ("guides/qt", "superseded_by"),
    ]
    assert broken(service) == [("project/structure", 4, "tooling/lsp_matrix.md", "dangling", None)]
    # A move rewrites them as written: with their `.md` (it had been dropped, as from
    # `related: [x.md]`), the anchor and the other names of the list kept.
    service.move("guides/qt", "guides/qt_framework")
    text = (store_dir / "project" / "structure.md").read_text(encoding="utf-8")
    assert "references: [guides/qt_framework.md#signals]\n" in text
    assert "related: [guides/qt_framework.md]\n" in text
    text = (store_dir / "old_overview.md").read_text(encoding="utf-8")
    assert "superseded_by: project/overview.md, guides/qt_framework.md\n" in text


def test_a_frontmatter_word_for_every_memory_is_no_broken_link(
    service: MemoryService, store_dir: Path
) -> None:
    """ddisisto/stremio-shell's memory_index declares `related: [all]`: `links` reported a
    dangling link to `all` (and exited 1). Such a word links only to a memory so named."""
    write_all(
        store_dir,
        {
            "memory_index": "---\nrelated: [all]\n---\n# Index\n",
            "other": "---\nrelated: [None, '*', gamma]\n---\n# Other\n",
            "gamma": "# Gamma\n",
        },
    )
    assert out_links(service, "memory_index") == []
    assert out_links(service, "other") == [("gamma", "related")]
    assert broken(service) == []
    write(store_dir, "all", "# A memory named all\n")
    assert out_links(service, "memory_index") == [("all", "related")]


# -- what is not a memory link ------------------------------------------------------------


def test_anchors_external_urls_and_other_files_are_not_memory_links(
    service: MemoryService, store_dir: Path
) -> None:
    write(
        store_dir,
        "a",
        "# A\n\n"
        "[up](#top) [site](https://example.com/page.md) [mail](mailto:x@example.com)\n"
        "[code](../src/app.py) [image](diagram.png) <https://example.com/b.md>\n"
        "[cite:the API](src/app.py)\n\n"
        "## Related\n\n- https://example.com/notes.md\n- [Home](http://example.com)\n",
    )
    links = service.store.read("a").doc.memory.links
    assert links == ()
    assert broken(service) == []


def test_links_in_code_spans_and_fenced_blocks_are_not_links(
    service: MemoryService, store_dir: Path
) -> None:
    """A backticked bullet (- `b`) is a link since issue 12: real stores list names that way."""
    write_all(
        store_dir,
        {
            "a": (
                "# A\n\n"
                "Inline `[[b]]` and `[B](b.md)` and `[mem:ABCDEF]` are examples.\n\n"
                "```markdown\n[[b]] [B](b.md)\n## Links\n- b\n```\n\n"
                "~~~\n[[c]]\n~~~\n\n"
                "## Links\n\n"
                "- `b`\n"
                "- c\n"
            ),
            "b": "# B\n",
            "c": "# C\n",
        },
    )
    assert out_links(service, "a") == [("b", "link"), ("c", "link")]
    assert broken(service) == []


def test_a_link_into_another_store_is_external_not_dangling(
    service: MemoryService, store_dir: Path
) -> None:
    write(
        store_dir,
        "a",
        "# A\n\n## Links\n\n- global:notes/shared\n- [link:graduated_to](project:x)\n",
    )
    assert out_links(service, "a") == []
    assert broken(service) == []


# -- paths from the repository root into the store (`.serena/memories/x.md`) ------------
#
# Shaped on real stores: NEXTAltair/LoRAIro moved 42 memories into `archived/dataset_builder/`
# and their `- **設計計画**: `.serena/memories/x.md`` bullets kept the old path; rjmurillo/
# ai-agents lists `.claude-mem/memories/README.md`, a file of another folder of the
# repository, next to a store that has a memory called README.


@pytest.fixture
def serena(git_repo: Path) -> Path:
    """The Serena store of the test repository, and another `memories/` folder beside it."""
    other = git_repo / ".claude-mem" / "memories" / "README.md"
    other.parent.mkdir(parents=True)
    other.write_text("# Export workflow\n", encoding="utf-8")
    return git_repo / ".serena" / "memories"


def test_a_store_path_to_a_memory_moved_into_a_folder_finds_it_by_its_unique_name(
    git_repo: Path, serena: Path
) -> None:
    write_all(
        serena,
        {
            "archived/plan/design_plan_2025_12_13": "# Design plan\n",
            "archived/plan/phase0_completion": (
                "# Phase 0\n\n"
                "**成果物**:\n- `.serena/memories/design_plan_2025_12_13.md` - 完全統合版\n\n"
                "## 参照ドキュメント\n\n"
                "- **設計計画**: `.serena/memories/design_plan_2025_12_13.md`\n"
            ),
        },
    )
    service = MemoryService(Store(serena), Repository(git_repo))
    assert out_links(service, "archived/plan/phase0_completion") == [
        ("archived/plan/design_plan_2025_12_13", "link")
    ]
    backlinks = service.related("archived/plan/design_plan_2025_12_13")
    assert [(b.source, b.line) for b in backlinks] == [
        ("archived/plan/phase0_completion", 4),
        ("archived/plan/phase0_completion", 8),
    ]
    assert broken(service) == []


def test_a_store_path_naming_no_memory_is_a_broken_link_with_its_likely_fix(
    git_repo: Path, serena: Path
) -> None:
    """Found in andreathar/ml: `## Related Documentation` bullets naming memories by
    their store path, five of them renamed or never written; `links` found none broken.
    A folder of the store, a glob and another `memories/` folder stay no links."""
    write_all(
        serena,
        {
            "CRITICAL/003_visual_scripting_signatures": "# Signatures\n",
            "TOOLS/testing": (
                "# Testing\n\n## Related Documentation\n\n"
                "- `.serena/memories/CRITICAL/004_visual_scripting_task_signatures.md` - why\n"
                "- `.serena/memories/CRITICAL/003_multiplayer_rpc_patterns.md` - RPC\n"
                "- `.serena/memories/CRITICAL/` - the tier\n"
                "- `.serena/memories/CRITICAL/001_*.md` - the sibling files\n"
                "- `.claude-mem/memories/gone.md` - another tool's\n"
            ),
        },
    )
    service = MemoryService(Store(serena), Repository(git_repo))
    at = ".serena/memories/CRITICAL/00"
    assert [(line, target, status, fix) for _, line, target, status, fix in broken(service)] == [
        (5, f"{at}4_visual_scripting_task_signatures.md", "dangling",
         "CRITICAL/003_visual_scripting_signatures"),
        (6, f"{at}3_multiplayer_rpc_patterns.md", "dangling", None),
    ]  # fmt: skip


def test_a_store_path_naming_no_memory_in_a_sentence_is_no_link(
    git_repo: Path, serena: Path
) -> None:
    """rjmurillo/ai-agents writes of probe files and of memories to write in sentences and
    table cells ("one at `.serena/memories/zz-probe-unindexed.md`"): three of its broken
    links were such. A list item's entry naming none stays broken, and a sentence naming
    a memory that exists still links it."""
    write_all(
        serena,
        {
            "kept": "# Kept\n",
            "linting": (
                "# Linting\n\n"
                "Two unindexed files were dropped in, one at\n"
                "`.serena/memories/zz-probe-unindexed.md` and one at `.serena/memories/kept.md`\n\n"
                "| Run | Output |\n|---|---|\n"
                "| In tree, at `.serena/memories/probe.md` | 0 files |\n\n"
                "- `.serena/memories/renamed.md` - the old name\n"
            ),
        },
    )
    service = MemoryService(Store(serena), Repository(git_repo))
    assert [(b.source, b.line) for b in service.related("kept")] == [("linting", 4)]
    assert [(line, target) for _, line, target, _, _ in broken(service)] == [
        (10, ".serena/memories/renamed.md")
    ]


def test_a_path_into_another_memories_folder_of_the_repository_is_not_a_memory_link(
    git_repo: Path, serena: Path
) -> None:
    write_all(
        serena,
        {
            "README": "# This store's own README\n",
            "claude/export": (
                "# Export\n\n## Related Files\n\n"
                "- `.claude-mem/memories/README.md` - Detailed workflow\n"
                "- `.serena/memories/README.md` - the store's own\n"
            ),
        },
    )
    service = MemoryService(Store(serena), Repository(git_repo))
    assert [(b.source, b.line) for b in service.related("README")] == [("claude/export", 6)]
    assert broken(service) == []


def test_related_on_the_command_line_lists_a_moved_memorys_backlinks(
    git_repo: Path, serena: Path, tmp_path: Path
) -> None:
    write_all(
        serena,
        {
            "archived/x/alpha_notes": "# Alpha\n",
            "index_notes": "# Index\n\nRecorded in `.serena/memories/alpha_notes.md` last week.\n",
        },
    )
    src = Path(__file__).resolve().parents[1] / "src"
    result = subprocess.run(
        [sys.executable, "-m", "memory_enhancement", "--dir", str(serena), "--repo-root",
         str(git_repo), "related", "archived/x/alpha_notes", "--json"],
        capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(src), "MEMORY_ENHANCEMENT_HOME": str(tmp_path / "h")},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    related = json.loads(result.stdout)["related"]
    assert [(r["path"], r["line"]) for r in related] == [("index_notes", 3)]


# -- type and line ---------------------------------------------------------------------


def test_each_link_keeps_its_type_and_its_line(service: MemoryService, store_dir: Path) -> None:
    write_all(
        store_dir,
        {
            "target": "# Target\n",
            "a": (
                "---\n"  # 1
                "related:\n"  # 2
                "  - target\n"  # 3
                "---\n"  # 4
                "# A\n"  # 5
                "\n"  # 6
                "See [T](target.md).\n"  # 7
                "\n"  # 8
                "## Links\n"  # 9
                "\n"  # 10
                "- [link:depends_on](target)\n"  # 11
                "\n"  # 12
                "## Related\n"  # 13
                "\n"  # 14
                "- [[target]]\n"  # 15
            ),
        },
    )
    assert [(b.source, b.type, b.line) for b in service.related("target")] == [
        ("a", "related", 3),
        ("a", "link", 7),
        ("a", "depends_on", 11),
        ("a", "related", 15),
    ]


def test_line_numbers_count_crlf_files_and_serena_bodies_like_an_editor(
    service: MemoryService, store_dir: Path
) -> None:
    (store_dir / "notes").mkdir(parents=True)
    (store_dir / "notes" / "crlf.md").write_bytes(b"# CRLF\r\n\r\nSee [[gone]].\r\n")
    write(store_dir, "notes/serena", "# Serena\n\nText.\n\n## Links\n\n- also-gone\n")
    assert [(b.source, b.line, b.target) for b in service.broken_links()] == [
        ("notes/crlf", 3, "gone"),
        ("notes/serena", 7, "also-gone"),
    ]


# -- the resolver's rules, directly --------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "link", "status", "target"),
    [
        ("notes/a", Link("b.md", kind=LinkKind.MARKDOWN), LinkStatus.RESOLVED, "notes/b"),
        ("notes/a", Link("c.md", kind=LinkKind.MARKDOWN), LinkStatus.RESOLVED, "c"),
        ("notes/a", Link("../c.md", kind=LinkKind.MARKDOWN), LinkStatus.RESOLVED, "c"),
        ("notes/a", Link("../../x.md", kind=LinkKind.MARKDOWN), LinkStatus.EXTERNAL, "../../x.md"),
        ("ops/y", Link("../notes/b.md", kind=LinkKind.MARKDOWN), LinkStatus.RESOLVED, "notes/b"),
        # Read from its folder it stays in the store: a broken memory link, not a file outside.
        ("ops/y", Link("../notes/gone.md", kind=LinkKind.MARKDOWN), LinkStatus.DANGLING, None),
        ("notes/a", Link("gone.md", kind=LinkKind.MARKDOWN), LinkStatus.DANGLING, None),
        ("x/a", Link("dup.md", kind=LinkKind.MARKDOWN), LinkStatus.AMBIGUOUS, None),
        ("notes/a", Link("dup.md", kind=LinkKind.MARKDOWN), LinkStatus.RESOLVED, "notes/dup"),
        ("x", Link("notes/b", kind=LinkKind.WIKI), LinkStatus.RESOLVED, "notes/b"),
        ("x", Link("B", kind=LinkKind.WIKI), LinkStatus.RESOLVED, "notes/b"),
        ("x", Link("dup", kind=LinkKind.BARE), LinkStatus.AMBIGUOUS, None),
        ("ops/y", Link("dup", kind=LinkKind.BARE), LinkStatus.RESOLVED, "ops/dup"),
        ("x", Link("global:notes/b", kind=LinkKind.BARE), LinkStatus.EXTERNAL, "global:notes/b"),
        ("x", Link("mem:abc123", kind=LinkKind.MEM_ID), LinkStatus.RESOLVED, "c"),
        ("x", Link("mem:zzz999", kind=LinkKind.MEM_ID), LinkStatus.DANGLING, None),
        ("x", Link("c.md", kind=LinkKind.FRONTMATTER), LinkStatus.RESOLVED, "c"),
        # A store path whose memory moved into a folder: by its unique name, as a bare name.
        ("x", Link(".serena/memories/b.md", kind=LinkKind.NAMED), LinkStatus.RESOLVED, "notes/b"),
        # One naming no memory is broken (a bare word naming none stays no link).
        ("x", Link(".serena/memories/gone.md", kind=LinkKind.ITEM), LinkStatus.DANGLING, None),
        ("x", Link("gone", kind=LinkKind.ITEM), LinkStatus.UNMATCHED, None),
        ("x", Link(".serena/memories/tier/", kind=LinkKind.ITEM), LinkStatus.UNMATCHED, None),
        # Written in a sentence, it may be a file to be written: no link.
        ("x", Link(".serena/memories/gone.md", kind=LinkKind.NAMED), LinkStatus.UNMATCHED, None),
    ],
)
def test_the_resolver_applies_each_styles_rules(
    source: str, link: Link, status: LinkStatus, target: str | None
) -> None:
    resolver = Resolver(["notes/b", "c", "notes/dup", "ops/dup"], {"abc123": "c"})
    found = resolver.resolve(source, link)
    assert (found.status, found.target) == (status, target)
    if status is LinkStatus.AMBIGUOUS:
        assert found.candidates == ("notes/dup", "ops/dup")


# -- incremental resolution ----------------------------------------------------------


def _link_rows(service: MemoryService) -> list[tuple[str, str, str, str | None, str | None]]:
    with service.index.connect() as conn:
        return sorted(
            conn.execute(
                "SELECT m.path, l.target, l.status, l.resolved, l.candidates FROM links l "
                "JOIN memories m ON m.id = l.memory_id"
            )
        )


def test_links_resolved_after_each_change_match_a_full_rebuild(
    service: MemoryService, store_dir: Path
) -> None:
    """After a change only the links it can affect are resolved again, against only the
    memories of the names they look for; the answers must be those of a rebuild."""
    write_all(
        store_dir,
        {
            "notes/linker": (
                "# Linker\n\n[[Target]] [up](../top.md) [x](../notes/./dup.md) [[sub/]] "
                "[[dup]] [[notes/..]] [same](linker.md) [[global:notes/b]]\n"
            ),
            "top": "# Top\n\n[[target]] and [[DUP]]\n",
            "ops/dup": "# Dup\n",
        },
    )
    top_id = service.citation_id("top")  # written `[mem:XXXXXX]`
    steps = [
        lambda: write(store_dir, "archive/target", "# Target\n"),
        lambda: write(store_dir, "notes/dup", "# Dup here\n"),
        lambda: write(store_dir, "x/Target", "# Another target, other case\n"),
        lambda: (store_dir / "ops" / "dup.md").unlink(),
        lambda: write(store_dir, "notes/sub", "# Sub\n"),
        lambda: write(store_dir, "notes", "# A memory named like the folder\n"),
        lambda: (store_dir / "x" / "Target.md").rename(store_dir / "x" / "other.md"),
        lambda: write(store_dir, "later", f"# Later\n\n{top_id}\n"),
        lambda: service.move("top", "archive/moved-top"),
    ]
    for step in steps:
        step()
        incremental = _link_rows(service)
        service.index.rebuild()
        assert incremental == _link_rows(service)
    rows = _link_rows(service)
    assert ("later", top_id[1:-1], "resolved", "archive/moved-top", "") in rows
    assert ("notes/linker", "notes/..", "resolved", "notes", "") in rows
    assert ("notes/linker", "sub/", "resolved", "notes/sub", "") in rows


def test_a_path_to_a_file_of_the_repository_is_not_taken_for_a_moved_memory(
    git_repo: Path,
) -> None:
    """`memories/README.md` from the repository root is the file there, not the store's
    `archived/README` found by its name: the unique-name fallback for store paths must
    not take a link to a file that exists."""
    other = git_repo / "memories" / "README.md"
    other.parent.mkdir(parents=True)
    other.write_text("# Another tool's memories\n", encoding="utf-8")
    serena = git_repo / ".serena" / "memories"
    write_all(
        serena,
        {
            "archived/README": "# This store's README, moved\n",
            "export": "# Export\n\n## Related Files\n\n- `memories/README.md` - the workflow\n",
        },
    )
    service = MemoryService(Store(serena), Repository(git_repo))
    assert out_links(service, "export") == []
    assert service.related("archived/README") == []
