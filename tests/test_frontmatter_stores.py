"""Frontmatter stores as people keep them: Claude Code's memory folders and the like.

Claude Code writes one file per memory (`project_agencia_logo.md`) whose frontmatter
declares `name:`, `description:` and `type:`, and links them as `[[project-agencia-logo]]`:
by the declared name, not the file's. Such folders are committed next to the code
(sejacriativvo/criativvo-workspace, AnotherSava/bga-assistant, ...). The memories here
are written by hand in that style.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import RunCli
from graph_support import broken, out_links, write, write_all
from index_support import paths
from memory_enhancement.core.errors import (
    InvalidInputError,
    InvalidPathError,
    UnreadableMemoryError,
)
from memory_enhancement.core.links import LinkStatus, Resolver
from memory_enhancement.core.model import Link, LinkKind
from memory_enhancement.service import MemoryService


def claude(name: str, body: str, kind: str = "project") -> str:
    """A memory file as Claude Code writes one."""
    return f"---\nname: {name}\ndescription: about {name}\ntype: {kind}\n---\n\n{body}\n"


# -- links by a declared name -----------------------------------------------------------


def test_a_wiki_link_finds_the_memory_whose_frontmatter_declares_that_name(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "project_agencia_logo": claude("project-agencia-logo", "The logo is teal."),
            "feedback_colors": claude(
                "feedback-colors", "See [[project-agencia-logo]].", "feedback"
            ),
        },
    )
    assert out_links(service, "feedback_colors") == [("project_agencia_logo", "link")]
    assert broken(service) == []


def test_a_declared_name_matches_as_written_or_case_folded_like_a_file_name() -> None:
    resolver = Resolver(
        ["project_logo", "Notes"], declared={"project_logo": "Project Logo", "Notes": "notes"}
    )
    for written in ("Project Logo", "project logo"):
        found = resolver.resolve("Notes", Link(written, kind=LinkKind.WIKI))
        assert (found.status, found.target) == (LinkStatus.RESOLVED, "project_logo")


def test_a_memorys_own_file_name_comes_before_a_name_another_memory_declares() -> None:
    resolver = Resolver(["logo", "other"], declared={"other": "logo"})
    found = resolver.resolve("other", Link("logo", kind=LinkKind.WIKI))
    assert (found.status, found.target) == (LinkStatus.RESOLVED, "logo")


def test_a_name_two_memories_declare_stays_ambiguous(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "a/logo_v1": claude("project-logo", "Old."),
            "b/logo_v2": claude("project-logo", "New."),
            "index": "# Index\n\nSee [[project-logo]].\n",
        },
    )
    assert broken(service) == [("index", 3, "project-logo", "ambiguous", None)]


def test_only_links_that_name_a_memory_find_it_by_a_declared_name() -> None:
    """A markdown link names a file and a list item's lead is a name only when some memory
    has it as its file name: neither is read as a declared name."""
    resolver = Resolver(["project_logo", "index"], declared={"project_logo": "project-logo"})
    markdown = resolver.resolve("index", Link("project-logo.md", kind=LinkKind.MARKDOWN))
    item = resolver.resolve("index", Link("project-logo", kind=LinkKind.ITEM))
    assert (markdown.status, item.status) == (LinkStatus.DANGLING, LinkStatus.UNMATCHED)
    for kind in (LinkKind.WIKI, LinkKind.BARE, LinkKind.FRONTMATTER, LinkKind.MEM_REF):
        found = resolver.resolve("index", Link("project-logo", kind=kind))
        assert found.target == "project_logo", kind


def test_links_follow_a_declared_name_as_memories_change_without_a_rebuild(
    service: MemoryService, store_dir: Path
) -> None:
    """The index resolves again only the links a change can affect: a name declared,
    no longer declared, or declared by a memory that appeared or went."""
    write_all(
        store_dir,
        {
            "project_logo": claude("project-logo", "Teal."),
            "index": "# Index\n\nSee [[project-logo]] and [[team-rules]].\n",
        },
    )
    assert out_links(service, "index") == [("project_logo", "link")]
    write(store_dir, "project_logo", claude("project-brand-logo", "Teal."))  # renamed in place
    write(store_dir, "feedback_rules", claude("team-rules", "Be kind.", "feedback"))  # new
    assert out_links(service, "index") == [("feedback_rules", "link")]
    assert [b[2] for b in broken(service)] == ["project-logo"]
    write(store_dir, "logo_again", claude("project-logo", "Teal again."))
    (store_dir / "feedback_rules.md").unlink()
    assert out_links(service, "index") == [("logo_again", "link")]
    assert [b[2] for b in broken(service)] == ["team-rules"]
    service.reindex()  # a full build agrees with the changes made one at a time
    assert out_links(service, "index") == [("logo_again", "link")]


def test_get_finds_a_memory_by_the_name_it_declares(
    service: MemoryService, store_dir: Path
) -> None:
    write(store_dir, "project_logo", claude("project-logo", "Teal."))
    assert service.find("project-logo") == "project_logo"


def test_writes_find_a_memory_by_its_declared_name_or_id_as_get_does(
    service: MemoryService, store_dir: Path
) -> None:
    """An agent gets `project-logo` (the name its links use) and then edits it by that
    name: update, citations, links and move found it for `get` but not for the writes."""
    logo = write(store_dir, "project_logo", claude("project-logo", "Teal."))
    write(store_dir, "project_site", claude("project-site", "Site."))
    handle = service.citation_id("project_logo")
    assert service.update("project-logo", tags=["brand"]).path == "project_logo"
    assert service.update(handle, content="Teal and white.").path == "project_logo"
    assert service.add_links("project-logo", ["project-site"]).path == "project_logo"
    assert service.add_citation("project-logo", "https://example.com/brand").path == "project_logo"
    assert service.remove_citation("project-logo", "https://example.com/brand").changed
    assert "tags: [brand]" in logo.read_text() and "Teal and white." in logo.read_text()
    assert service.move("project-logo", "archive/project_logo").path == "archive/project_logo"
    with pytest.raises(InvalidInputError, match="ambiguous"):
        write(store_dir, "other_logo", claude("project-logo", "Red."))
        service.update("project-logo", tags=["x"])


def test_moving_a_memory_leaves_links_to_its_declared_name_as_written(
    service: MemoryService, store_dir: Path
) -> None:
    index = write(store_dir, "index", "# Index\n\nSee [[project-logo]].\n")
    write(store_dir, "project_logo", claude("project-logo", "Teal."))
    before = index.read_bytes()
    service.move("project_logo", "archive/project_logo")
    assert index.read_bytes() == before
    assert out_links(service, "index") == [("archive/project_logo", "link")]


# -- a header that does not parse ------------------------------------------------------


BROKEN = (
    "---\nname: project-logo\ndescription: Logo: the teal one\ntype: project\n---\n\n"
    "The zebra mascot sits left of the wordmark. See [[feedback-colors]].\n"
)


def test_a_memory_whose_header_does_not_parse_is_still_searched_and_its_links_read(
    service: MemoryService, store_dir: Path
) -> None:
    """An unquoted `: ` in a description is a YAML error; the memory's text is still the
    memory's text."""
    write_all(
        store_dir,
        {"project_logo": BROKEN, "feedback_colors": claude("feedback-colors", "Teal on white.")},
    )
    assert paths(service.search("zebra")) == ["project_logo"]
    assert out_links(service, "project_logo") == [("feedback_colors", "link")]
    listing = service.list_memories()
    assert [m.path for m in listing.memories] == ["feedback_colors", "project_logo"]
    assert len(listing.skipped) == 1
    assert listing.skipped[0].startswith("project_logo: malformed YAML frontmatter at line 3")


def test_a_memory_whose_header_does_not_parse_is_shown_and_quoted_as_its_text(
    service: MemoryService, store_dir: Path
) -> None:
    """What search finds, `get` and `context` can read: the text, with a warning."""
    write(store_dir, "project_logo", BROKEN)
    fetched = service.get("project_logo")
    assert fetched.memory.content.startswith("The zebra mascot")
    assert fetched.warnings[0].startswith("project_logo: malformed YAML frontmatter at line 3")
    assert "The zebra mascot" in service.context("zebra mascot")[0]


def test_a_memory_whose_header_does_not_parse_is_never_rewritten(
    service: MemoryService, store_dir: Path
) -> None:
    file = write(store_dir, "project_logo", BROKEN)
    service.list_memories()
    with pytest.raises(UnreadableMemoryError, match=r"project_logo: malformed YAML .* line 3"):
        service.update("project_logo", content="Rewritten.")
    assert file.read_text(encoding="utf-8") == BROKEN


def test_a_move_rewrites_the_links_it_can_and_names_the_memory_whose_header_stops_it(
    service: MemoryService, store_dir: Path
) -> None:
    """Found moving reed-state in BoykoNeov/physsynth's docs/memory: web-viewer-state links
    to it and its header does not parse. The move was made, the links of the memories
    sorted before it rewritten, those after it not, and the move reported as an error."""
    write_all(
        store_dir,
        {
            "target_note": claude("target-note", "Target."),
            "a_broken": BROKEN.replace("[[feedback-colors]]", "[[target_note]]"),
            "b_ok": claude("b", "See [[target_note]]."),
        },
    )
    before = (store_dir / "a_broken.md").read_bytes()
    moved = service.move("target_note", "archive/target_note")
    assert moved.links_updated == ("b_ok",)
    assert "[[archive/target_note]]" in (store_dir / "b_ok.md").read_text()
    assert (store_dir / "a_broken.md").read_bytes() == before
    assert [w.split(":")[0] for w in moved.warnings] == ["a_broken"]
    assert "left as written" in moved.warnings[0]


def test_fixing_links_skips_a_memory_whose_header_does_not_parse_and_fixes_the_others(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "target_note": claude("target-note", "Target."),
            "a_broken": BROKEN.replace("[[feedback-colors]]", "[[target_notes]]"),
            "b_ok": claude("b", "See [[target_notes]]."),
        },
    )
    before = (store_dir / "a_broken.md").read_bytes()
    broken, fixes, skipped = service.fix_links()
    assert [f.path for f in fixes] == ["b_ok"] and len(broken) == 2
    assert "[[target_note]]" in (store_dir / "b_ok.md").read_text()
    assert (store_dir / "a_broken.md").read_bytes() == before
    assert [s.split(":")[0] for s in skipped] == ["a_broken"]


# -- times kept under the store's own keys ---------------------------------------------


def other_tool(time_line: str) -> str:
    return (
        f"---\nname: deploy-notes\ndescription: How we deploy\n{time_line}\ntags: ops, ci\n"
        "related:\n  - runbook\n---\n\n# Deploy\n\nShip on Tuesdays.\n"
    )


@pytest.mark.parametrize(
    ("written", "stamped"),
    [
        ("updated: 2026-01-05", "updated: 2026-01-31"),
        ("last_updated: 2026-01-05T08:30:00Z", "last_updated: 2026-01-31T12:00:00Z"),
        ("modified: '2026-01-05 08:30'  # by hand", "modified: '2026-01-31 12:00'  # by hand"),
        ("updated: 2026-01-05T08:30:00.000+02:00", "updated: 2026-01-31T12:00:00.000+00:00"),
    ],
)
def test_an_update_stamps_the_time_key_a_store_already_uses_in_its_own_format(
    service: MemoryService, store_dir: Path, written: str, stamped: str
) -> None:
    """No second key beside the store's own (`updated_at` under `updated:`, left stale):
    that key, as it was written; every other byte as it was."""
    file = write(store_dir, "deploy_notes", other_tool(written))
    service.update("deploy_notes", content="# Deploy\n\nShip on Wednesdays.")
    expected = other_tool(stamped).replace("Tuesdays", "Wednesdays")
    assert file.read_text(encoding="utf-8") == expected


def test_the_time_a_store_keeps_under_its_own_keys_is_the_memorys_time(
    service: MemoryService, store_dir: Path
) -> None:
    write(store_dir, "deploy_notes", other_tool("created: 2025-12-01\nupdated: 2026-01-05"))
    meta = service.get("deploy_notes").memory.meta
    assert (meta.created_at.isoformat(), meta.updated_at.isoformat()) == (
        "2025-12-01T00:00:00+00:00",
        "2026-01-05T00:00:00+00:00",
    )
    assert "updated" not in meta.extra and meta.extra["name"] == "deploy-notes"


def test_a_date_stamped_again_the_same_day_leaves_the_file_alone_but_for_the_edit(
    service: MemoryService, store_dir: Path
) -> None:
    file = write(store_dir, "deploy_notes", other_tool("updated: 2026-01-31"))
    service.update("deploy_notes", content="# Deploy\n\nShip on Wednesdays.")
    expected = other_tool("updated: 2026-01-31").replace("Tuesdays", "Wednesdays")
    assert file.read_text(encoding="utf-8") == expected


def test_a_key_of_the_tools_own_or_a_value_that_is_no_time_leaves_the_other_key_alone(
    service: MemoryService, store_dir: Path
) -> None:
    both = write(
        store_dir, "both", other_tool("updated_at: 2026-01-05T00:00:00.000Z\nupdated: 2025-01-01")
    )
    words = write(store_dir, "words", other_tool("updated: last week"))
    for path in ("both", "words"):
        service.update(path, content="# Deploy\n\nShip on Wednesdays.")
    assert "updated_at: 2026-01-31T12:00:00.000Z\nupdated: 2025-01-01\n" in both.read_text(
        encoding="utf-8"
    )
    assert "updated: last week\n" in words.read_text(encoding="utf-8")


# -- what a memory is called -------------------------------------------------------------


def test_a_memory_with_no_heading_is_titled_by_the_name_its_frontmatter_declares(
    service: MemoryService, store_dir: Path
) -> None:
    write_all(
        store_dir,
        {
            "feedback_no_fallbacks": claude("No defensive fallbacks", "Let errors surface."),
            "headed": claude("headed-note", "# A heading wins\n\nText."),
            "plain": "---\ntype: project\n---\n\nNo name, no heading.\n",
        },
    )
    titles = {m.path: m.title for m in service.list_memories().memories}
    assert titles == {
        "feedback_no_fallbacks": "No defensive fallbacks",
        "headed": "A heading wins",
        "plain": "plain",
    }
    assert paths(service.search("defensive")) == ["feedback_no_fallbacks"]


def test_claude_codes_nested_modified_time_is_the_one_an_update_stamps(
    service: MemoryService, store_dir: Path
) -> None:
    """Newer Claude Code files keep `metadata: {type, originSessionId, modified}`."""
    nested = (
        "---\nname: ci-variance\ndescription: runners vary\nmetadata: \n  node_type: memory\n"
        "  type: feedback\n  modified: {}  # by the agent\n---\n\nCompare within one job.\n"
    )
    file = write(store_dir, "ci_variance", nested.format("2026-01-10T08:00:00.123Z"))
    assert service.get("ci_variance").memory.meta.updated_at.isoformat().startswith("2026-01-10")
    service.update("ci_variance", content="Compare within one job only.")
    expected = nested.format("2026-01-31T12:00:00.000Z").replace("job.", "job only.")
    assert file.read_text(encoding="utf-8") == expected


def test_a_new_memory_in_a_folder_kept_flat_may_be_a_bare_name(
    service: MemoryService, store_dir: Path
) -> None:
    """Claude Code keeps every memory at the top of its folder, beside `MEMORY.md`."""
    write_all(
        store_dir,
        {
            "MEMORY": "# Memory index\n\n- [Logo](project_logo.md)\n",
            "project_logo": claude("x", "y"),
        },
    )
    service.add("feedback_tests", "Run the tests first.")
    assert (store_dir / "feedback_tests.md").is_file()
    write(store_dir, "archive/old", claude("old", "Old."))
    with pytest.raises(InvalidPathError, match="needs a category and a slug"):
        service.add("feedback_more", "More.")


def test_tags_written_as_one_string_stay_one_string(
    service: MemoryService, store_dir: Path
) -> None:
    file = write(store_dir, "deploy_notes", other_tool("updated: 2026-01-31"))
    service.update("deploy_notes", tags=["ops", "release"])
    assert file.read_text(encoding="utf-8") == other_tool("updated: 2026-01-31").replace(
        "tags: ops, ci", "tags: ops, release"
    )


def test_tags_kept_one_string_keep_their_comment_and_line_ending(
    service: MemoryService, store_dir: Path
) -> None:
    """Every other one-line key keeps both; the string branch wrote `tags: ...\\n` bare."""
    text = other_tool("updated: 2026-01-31").replace("tags: ops, ci\n", "tags: ops, ci  # x\r\n")
    file = write(store_dir, "deploy_notes", text)
    service.update("deploy_notes", tags=["ops", "release"])
    expected = text.replace("tags: ops, ci  # x\r\n", "tags: ops, release  # x\r\n")
    assert file.read_bytes() == expected.encode("utf-8")


# -- another tool's keywords as tags -------------------------------------------------------


def keyworded(keys: str = "keywords: [pane-core, wire_protocol]  # set by hand\n") -> str:
    """A memory in the style of lane-core/pane's store (written here, not copied): its tags
    under `keywords:`, in flow style, beside keys the tool does not know."""
    return (
        "---\ntype: decision\nstatus: current\ncreated: 2026-04-11\n"
        f"{keys}related: [policy/agent_workflow]\n---\n\n# Framing\n\nFrames carry a length.\n"
    )


@pytest.mark.parametrize(
    "keys",
    [
        "keywords: [pane-core, wire_protocol]  # set by hand\n",
        "topics:\n  - pane-core\n  - wire_protocol\n",
        "keywords: pane-core, wire_protocol\n",
    ],
)
def test_keywords_and_topics_count_as_tags_for_list_search_and_context(
    service: MemoryService, store_dir: Path, keys: str
) -> None:
    write(store_dir, "decisions/framing", keyworded(keys))
    write(store_dir, "decisions/other", keyworded("tags: [unrelated]\n"))
    assert [s.path for s in service.list_memories(tag="wire_protocol").memories] == [
        "decisions/framing"
    ]
    assert [r.hit.row.path for r in service.search("wire_protocol")] == ["decisions/framing"]
    _, used = service.context("pane-core")
    assert [r.hit.row.path for r in used] == ["decisions/framing"]
    meta = service.get("decisions/framing").memory.meta
    assert (meta.tags, meta.keywords) == ((), ("pane-core", "wire_protocol"))


def test_keywords_are_shown_as_tags_and_apart_in_json(run_cli: RunCli, store_dir: Path) -> None:
    write(store_dir, "decisions/framing", keyworded("tags: [wire]\nkeywords: [wire, pane-core]\n"))
    text = run_cli(["get", "decisions/framing", "--dir", store_dir]).output
    assert "tags:     wire, pane-core\n" in text
    data = json.loads(run_cli(["get", "decisions/framing", "--json", "--dir", store_dir]).output)
    assert (data["metadata"]["tags"], data["metadata"]["keywords"]) == (
        ["wire"],
        ["wire", "pane-core"],
    )
    listed = json.loads(run_cli(["list", "--json", "--dir", store_dir]).output)
    assert listed[0]["tags"] == ["wire", "pane-core"]


def test_an_edit_keeps_the_keywords_line_and_never_writes_them_as_tags(
    service: MemoryService, store_dir: Path
) -> None:
    file = write(store_dir, "decisions/framing", keyworded())
    original = file.read_bytes()
    service.update("decisions/framing", content="# Framing\n\nFrames carry a length first.")
    edited = file.read_bytes()  # the content, and the time of the edit stamped
    stamp = b"related: [policy/agent_workflow]\nupdated_at: 2026-01-31T12:00:00.000Z\n"
    expected = original.replace(b"a length.", b"a length first.")
    assert edited == expected.replace(b"related: [policy/agent_workflow]\n", stamp)
    service.update("decisions/framing", tags=["protocol"])
    tagged = file.read_text(encoding="utf-8")
    assert "keywords: [pane-core, wire_protocol]  # set by hand\n" in tagged
    assert [line for line in tagged.splitlines() if line.startswith("tags:")] == [
        "tags: [protocol]"
    ]
    meta = service.get("decisions/framing").memory.meta
    assert meta.every_tag == ("protocol", "pane-core", "wire_protocol")
    service.update("decisions/framing", tags=[])
    cleared = file.read_text(encoding="utf-8")
    assert "tags: []\n" in cleared and "keywords: [pane-core, wire_protocol]  # set" in cleared
    assert [s.path for s in service.list_memories(tag="pane-core").memories] == [
        "decisions/framing"
    ]


def test_an_index_of_version_36_files_keywords_as_tags_without_a_rebuild(
    tmp_path: Path,
) -> None:
    """Schema 36 never read `keywords:`: 37 reads every file again, embeddings kept."""
    import sqlite3

    from index_support import disk_service
    from memory_enhancement.index import schema

    store = tmp_path / "store"
    write(store, "decisions/framing", keyworded())
    service = disk_service(store, tmp_path, tmp_path)
    service.list_memories()
    conn = sqlite3.connect(tmp_path / "index.db")
    conn.execute("INSERT INTO vectors(hash, model, chunks, data) VALUES ('h', 'm', 1, x'00')")
    conn.execute("DELETE FROM tags")  # as schema 36 left them: not read
    conn.execute("UPDATE memories SET tags = ''")
    conn.execute("PRAGMA user_version = 36")
    conn.commit()
    conn.close()
    assert [s.path for s in service.list_memories(tag="pane-core").memories] == [
        "decisions/framing"
    ]
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
    conn.close()
