"""The operations (issue 2 §5) and the seed 001 and 003 scenarios, through the service."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from conftest import Clock
from memory_enhancement.core.errors import (
    AlreadyExistsError,
    ExpiredError,
    InvalidInputError,
    InvalidPathError,
    NotFoundError,
)
from memory_enhancement.core.model import Citation, LinkKind
from memory_enhancement.service import MemoryService
from memory_enhancement.service.serialize import memory_dict
from memory_enhancement.store.disk import Store
from memory_enhancement.verify.repo import Repository


def frontmatter_of(file: Path) -> dict[str, object]:
    text = file.read_text(encoding="utf-8")
    head = text.split("---\n")[1]
    data = yaml.safe_load(head)
    assert isinstance(data, dict)
    return data


# -- seed 001: hierarchy and file format ------------------------------------------


def test_a_memory_at_category_slug_is_created_there(service: MemoryService) -> None:
    result = service.add("category/memory", "Body")
    assert result.path == "category/memory"
    assert (service.store.root / "category" / "memory.md").is_file()


def test_a_memory_at_a_deep_path_is_created_with_every_category(service: MemoryService) -> None:
    service.add("category/subcategory/nested/memory", "Body")
    assert (service.store.root / "category/subcategory/nested/memory.md").is_file()
    assert service.get("category/subcategory/nested/memory").memory.content == "Body"


def test_a_persisted_memory_file_has_timestamps_tags_source_expiry_and_citations(
    service: MemoryService,
) -> None:
    service.add(
        "global/conventions",
        "Use tabs.",
        tags=["style"],
        expires_at="2027-01-01",
        citations=["https://docs.example.com/style"],
        source="mcp",
    )
    data = frontmatter_of(service.store.root / "global/conventions.md")
    assert list(data) == [
        "created_at",
        "updated_at",
        "tags",
        "source",
        "expires_at",
        "citations",
    ]
    assert data["tags"] == ["style"]
    assert data["source"] == "mcp"
    assert data["citations"] == ["https://docs.example.com/style"]


def test_a_memory_without_expiry_or_citations_omits_those_keys(service: MemoryService) -> None:
    service.add("global/plain", "Body")
    data = frontmatter_of(service.store.root / "global/plain.md")
    assert "expires_at" not in data
    assert "citations" not in data


def test_a_memory_created_without_citations_has_an_empty_citation_list(
    service: MemoryService,
) -> None:
    service.add("global/plain", "Body")
    memory = service.get("global/plain").memory
    assert memory.meta.citations == ()
    assert memory_dict(memory)["metadata"]["citations"] == []


def test_citations_follow_the_file_and_url_conventions(service: MemoryService) -> None:
    service.add(
        "notes/cited",
        "Body",
        citations=["src/app.py:3", "src/app.py#L5-L7", "https://docs.example.com/api"],
    )
    memory = service.get("notes/cited").memory
    assert [c.ref for c in memory.meta.citations] == [
        "src/app.py:3",
        "src/app.py:5-7",
        "https://docs.example.com/api",
    ]


# -- seed 003: add_memory ---------------------------------------------------------


def test_adding_a_memory_creates_it_at_the_given_path(service: MemoryService) -> None:
    result = service.add("decisions/use-sqlite", "We use SQLite.")
    assert result.changed
    fetched = service.get("decisions/use-sqlite")
    assert fetched.memory.content == "We use SQLite."
    assert fetched.memory.meta.source == "cli"


def test_the_first_write_to_a_store_that_does_not_exist_creates_it(
    tmp_path: Path, git_repo: Path
) -> None:
    root = tmp_path / "not" / "yet" / "a-store"
    service = MemoryService(Store(root), Repository(git_repo))
    service.add("notes/first", "First memory.")
    assert (root / "notes" / "first.md").is_file()


def test_adding_to_a_category_that_does_not_exist_creates_it(service: MemoryService) -> None:
    service.add("notes/first", "First.")
    service.add("brand-new/category/memory", "Second.")
    assert (service.store.root / "brand-new" / "category").is_dir()
    assert [s.path for s in service.list_memories("brand-new").memories] == [
        "brand-new/category/memory"
    ]


def test_tags_expiry_and_citations_given_on_add_are_kept(
    service: MemoryService, clock: Clock
) -> None:
    service.add(
        "notes/full",
        "Body",
        tags=["a", "b"],
        expires_at="2027-06-01T10:00:00Z",
        citations=["src/core/types.ts:17", "https://docs.example.com"],
    )
    meta = service.get("notes/full").memory.meta
    assert meta.tags == ("a", "b")
    assert meta.expires_at == datetime(2027, 6, 1, 10, 0, tzinfo=UTC)
    assert [c.ref for c in meta.citations] == ["src/core/types.ts:17", "https://docs.example.com"]
    assert meta.created_at == meta.updated_at == clock()


def test_adding_refuses_an_existing_path_and_leaves_the_file_alone(
    service: MemoryService,
) -> None:
    service.add("notes/once", "Original.")
    file = service.store.root / "notes/once.md"
    before = file.read_bytes()
    with pytest.raises(AlreadyExistsError, match="'notes/once'"):
        service.add("notes/once", "Replacement.")
    with pytest.raises(AlreadyExistsError):
        service.add("Notes/Once", "Same path after normalization.")
    assert file.read_bytes() == before


def test_adding_normalizes_the_path(service: MemoryService) -> None:
    result = service.add("  Global  /  Hello World  ", "Hi.")
    assert result.path == "Global/Hello-World"
    assert (service.store.root / "Global/Hello-World.md").is_file()


@pytest.mark.parametrize("path", ["../escape/x", "/etc/passwd", "lonely", "a/./b"])
def test_adding_refuses_a_bad_path_and_writes_nothing(service: MemoryService, path: str) -> None:
    with pytest.raises(InvalidPathError):
        service.add(path, "Body")
    assert not service.store.root.exists() or not any(service.store.root.rglob("*.md"))


@pytest.mark.parametrize("content", ["", "  \n\n "])
def test_adding_empty_content_is_an_error(service: MemoryService, content: str) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        service.add("notes/empty", content)


def test_adding_records_where_the_memory_came_from(service: MemoryService) -> None:
    for source in ("cli", "file", "stdin", "mcp"):
        service.add(f"sources/{source}", "Body", source=source)
        assert service.get(f"sources/{source}").memory.meta.source == source


@pytest.mark.parametrize(
    ("tags", "message"),
    [(["ok", ""], "empty"), (["a,b"], "commas"), ("single-string", "list")],
)
def test_bad_tags_are_refused(service: MemoryService, tags: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        service.add("notes/tagged", "Body", tags=tags)  # type: ignore[arg-type]


def test_a_bad_citation_is_refused_before_anything_is_written(service: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match=r"'src/app\.py:0'"):
        service.add("notes/bad", "Body", citations=["src/app.py:0"])
    with pytest.raises(InvalidInputError, match="empty"):
        service.add("notes/bad", "Body", citations=["  "])
    assert not (service.store.root / "notes/bad.md").exists()


def test_a_bad_expiry_is_refused_naming_the_value(service: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match="'next tuesday'"):
        service.add("notes/bad", "Body", expires_at="next tuesday")


def test_links_given_on_add_are_written_and_read_back(service: MemoryService) -> None:
    service.add("notes/linked", "Body", links=["other/memory", "depends_on:infra/db"])
    links = service.get("notes/linked").memory.links
    assert links is not None
    assert [(link.target, link.type) for link in links] == [
        ("other/memory", "link"),
        ("infra/db", "depends_on"),
    ]


# -- snippets captured from the code ------------------------------------------------


def test_a_file_line_citation_without_snippet_captures_the_cited_line(
    service: MemoryService,
) -> None:
    result = service.add("notes/api", "Body", citations=["src/app.py:3"])
    (citation,) = result.memory.meta.citations
    assert citation.snippet == "API_VERSION = 'v2'"
    assert citation.verified is not None
    assert result.warnings == ()


def test_a_range_citation_captures_every_cited_line(service: MemoryService) -> None:
    result = service.add("notes/api", "Body", citations=["src/app.py:5-6"])
    assert result.memory.meta.citations[0].snippet == "def main() -> None:\nprint(API_VERSION)"


def test_update_and_citation_add_capture_snippets_too(service: MemoryService) -> None:
    service.add("notes/api", "Body")
    updated = service.update("notes/api", citations=["src/app.py:3"])
    assert updated.memory.meta.citations[0].snippet == "API_VERSION = 'v2'"
    added = service.add_citation("notes/api", "src/util/helpers.py:2")
    assert added.memory.meta.citations[-1].snippet == "return a | b"


def test_a_whole_file_or_url_citation_gets_no_snippet(service: MemoryService) -> None:
    result = service.add("notes/api", "Body", citations=["src/app.py", "https://example.com"])
    assert [c.snippet for c in result.memory.meta.citations] == [None, None]
    assert result.warnings == ()


def test_a_snippet_given_by_the_caller_is_kept(service: MemoryService) -> None:
    service.add("notes/api", "Body")
    added = service.add_citation("notes/api", "src/app.py:3", snippet="API_VERSION")
    assert added.memory.meta.citations[0].snippet == "API_VERSION"
    assert added.warnings == ()


def test_a_snippet_that_is_not_on_the_cited_line_is_kept_with_a_warning(
    service: MemoryService,
) -> None:
    service.add("notes/api", "Body")
    added = service.add_citation("notes/api", "src/app.py:3", snippet="API_VERSION = 'v3'")
    assert added.memory.meta.citations[0].snippet == "API_VERSION = 'v3'"
    (warning,) = added.warnings
    assert "src/app.py:3" in warning
    assert "API_VERSION = 'v2'" in warning


def test_a_citation_to_a_missing_file_is_accepted_with_a_warning(
    service: MemoryService, git_repo: Path
) -> None:
    result = service.add("notes/api", "Body", citations=["src/gone.py:3"])
    assert [c.ref for c in result.memory.meta.citations] == ["src/gone.py:3"]
    assert result.memory.meta.citations[0].snippet is None
    (warning,) = result.warnings
    assert "src/gone.py" in warning
    assert str(git_repo) in warning


def test_a_citation_past_the_end_of_the_file_is_accepted_with_a_warning(
    service: MemoryService,
) -> None:
    result = service.add("notes/api", "Body", citations=["src/app.py:99"])
    assert result.memory.meta.citations[0].snippet is None
    (warning,) = result.warnings
    assert "past the end" in warning


def test_a_citation_leaving_the_repository_is_accepted_with_a_warning(
    service: MemoryService,
) -> None:
    result = service.add("notes/api", "Body", citations=["../outside.py:1"])
    (warning,) = result.warnings
    assert "leaves the repository" in warning


# -- get --------------------------------------------------------------------------


def test_getting_a_missing_memory_is_a_not_found_error_naming_it(service: MemoryService) -> None:
    with pytest.raises(NotFoundError, match="'notes/nothing'"):
        service.get("notes/nothing")


def test_getting_a_memory_returns_its_citations(service: MemoryService) -> None:
    service.add("notes/api", "Body", citations=["src/app.py:3", "https://example.com"])
    data = memory_dict(service.get("notes/api").memory)
    assert data["metadata"]["citations"] == ["src/app.py:3", "https://example.com"]


def test_an_expired_memory_is_not_returned_unless_asked_for(
    service: MemoryService, clock: Clock
) -> None:
    service.add("notes/old", "Body", expires_at="2026-02-01T18:00:00Z")
    assert service.get("notes/old").memory.content == "Body"
    clock.advance(days=1)
    assert service.get("notes/old").memory.content == "Body"
    clock.advance(days=1)
    with pytest.raises(ExpiredError) as info:
        service.get("notes/old")
    assert "expired" in str(info.value)
    assert "'notes/old'" in str(info.value)
    assert service.get("notes/old", include_expired=True).memory.content == "Body"


# -- update -----------------------------------------------------------------------


@pytest.fixture
def cited(service: MemoryService, clock: Clock) -> MemoryService:
    service.add(
        "notes/cited",
        "Original content.",
        tags=["one"],
        expires_at="2030-01-01",
        citations=["src/app.py:3", "https://example.com/a"],
        source="mcp",
    )
    clock.advance(hours=1)
    return service


def test_updating_content_replaces_it_and_refreshes_updated_at(
    cited: MemoryService, clock: Clock
) -> None:
    before = cited.get("notes/cited").memory.meta
    result = cited.update("notes/cited", content="New content.")
    meta = result.memory.meta
    assert result.memory.content == "New content."
    assert meta.updated_at == clock() != before.updated_at
    assert meta.created_at == before.created_at
    assert meta.source == "mcp"
    assert meta.tags == before.tags
    assert meta.citations == before.citations
    assert meta.expires_at == before.expires_at


def test_updating_only_tags_leaves_the_content_alone(cited: MemoryService) -> None:
    result = cited.update("notes/cited", tags=["two", "three"])
    assert result.memory.meta.tags == ("two", "three")
    assert result.memory.content == "Original content."


def test_updating_tags_with_an_empty_list_clears_them(cited: MemoryService) -> None:
    assert cited.update("notes/cited", tags=[]).memory.meta.tags == ()


def test_updating_the_expiry_sets_it(cited: MemoryService) -> None:
    result = cited.update("notes/cited", expires_at="2031-05-05")
    assert result.memory.meta.expires_at == datetime(2031, 5, 5, tzinfo=UTC)


def test_clear_expiry_removes_the_expiry(cited: MemoryService) -> None:
    result = cited.update("notes/cited", clear_expiry=True)
    assert result.memory.meta.expires_at is None
    assert "expires_at" not in frontmatter_of(cited.store.root / "notes/cited.md")


def test_giving_both_an_expiry_and_clear_expiry_is_an_error(cited: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match="not both"):
        cited.update("notes/cited", expires_at="2031-01-01", clear_expiry=True)


def test_citations_given_to_update_replace_the_list(cited: MemoryService) -> None:
    result = cited.update("notes/cited", citations=["new/path.ts:5"])
    assert [c.ref for c in result.memory.meta.citations] == ["new/path.ts:5"]


def test_an_empty_citation_list_clears_the_citations(cited: MemoryService) -> None:
    result = cited.update("notes/cited", citations=[])
    assert result.memory.meta.citations == ()
    assert "citations" not in frontmatter_of(cited.store.root / "notes/cited.md")


def test_an_update_without_citations_keeps_them(cited: MemoryService) -> None:
    before = cited.get("notes/cited").memory.meta.citations
    result = cited.update("notes/cited", content="Changed.", tags=["x"])
    assert result.memory.meta.citations == before


def test_an_unchanged_citation_keeps_its_snippet_and_stamp_on_update(
    cited: MemoryService, clock: Clock
) -> None:
    (kept, _url) = cited.get("notes/cited").memory.meta.citations
    clock.advance(days=3)
    result = cited.update("notes/cited", citations=[kept, "https://example.com/b"])
    assert result.memory.meta.citations[0] == kept


def test_an_update_with_no_field_is_an_error(cited: MemoryService) -> None:
    file = cited.store.root / "notes/cited.md"
    before = file.read_bytes()
    with pytest.raises(InvalidInputError, match="nothing to update"):
        cited.update("notes/cited")
    assert file.read_bytes() == before


def test_updating_with_empty_content_is_an_error(cited: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        cited.update("notes/cited", content="   ")


def test_updating_a_missing_memory_is_a_not_found_error(service: MemoryService) -> None:
    with pytest.raises(NotFoundError):
        service.update("notes/nothing", content="x")


def test_a_write_to_a_path_in_a_folder_never_changes_the_memory_of_that_name_elsewhere(
    service: MemoryService,
) -> None:
    """A link to `notes/foo` finds the one `foo` anywhere (a memory since moved), and so
    does `get`; the writes took that too: `update notes/foo` replaced archive/foo's text,
    `move notes/foo` moved it. A path names its own file."""
    service.add("archive/foo", "# Foo\n\nKept.")
    file = service.store.file_for("archive/foo")
    before = file.read_bytes()
    with pytest.raises(NotFoundError, match="'notes/foo'"):
        service.update("notes/foo", content="Overwritten.")
    with pytest.raises(NotFoundError, match="'notes/foo'"):
        service.add_citation("notes/foo", "https://example.com/x")
    with pytest.raises(NotFoundError, match="'notes/foo'"):
        service.move("notes/foo", "elsewhere/foo")
    assert file.read_bytes() == before
    assert service.update("foo", tags=["kept"]).path == "archive/foo"  # a name still does


def test_an_update_that_changes_nothing_leaves_the_file_byte_identical(
    cited: MemoryService,
) -> None:
    file = cited.store.root / "notes/cited.md"
    before = file.read_bytes()
    result = cited.update("notes/cited", tags=["one"])
    assert not result.changed
    assert file.read_bytes() == before


# -- citation add -----------------------------------------------------------------


def test_citation_add_appends_one_citation(cited: MemoryService, clock: Clock) -> None:
    result = cited.add_citation("notes/cited", "src/util/helpers.py#L1")
    refs = [c.ref for c in result.memory.meta.citations]
    assert refs == ["src/app.py:3", "https://example.com/a", "src/util/helpers.py:1"]
    assert result.memory.meta.updated_at == clock()


def test_citation_add_of_a_citation_already_there_changes_nothing(cited: MemoryService) -> None:
    file = cited.store.root / "notes/cited.md"
    before = file.read_bytes()
    result = cited.add_citation("notes/cited", "src/app.py:3")
    assert not result.changed
    assert "already" in result.warnings[0]
    assert file.read_bytes() == before


def test_citation_add_refuses_an_empty_snippet(cited: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match="snippet"):
        cited.add_citation("notes/cited", "src/app.py:5", snippet="  ")


def test_citation_add_to_a_serena_note_touches_only_its_citations(
    service: MemoryService,
) -> None:
    file = service.store.root / "notes/plain.md"
    file.parent.mkdir(parents=True)
    file.write_text("# Plain\n\nA note without metadata.\n", encoding="utf-8")
    service.add_citation("notes/plain", "src/app.py:3")
    text = file.read_text(encoding="utf-8")
    assert text == (
        "# Plain\n\nA note without metadata.\n\n## Citations\n\n"
        "| File | Line | Snippet | Verified |\n"
        "|------|------|---------|----------|\n"
        "| src/app.py | 3 | `API_VERSION = 'v2'` | 2026-01-31T12:00:00.000Z |\n"
    )


# -- remove and move --------------------------------------------------------------


def test_removing_a_memory_deletes_its_file_and_empty_category(service: MemoryService) -> None:
    service.add("gone/soon/memory", "Body")
    service.add("gone/stays", "Body")
    assert service.remove("gone/soon/memory").path == "gone/soon/memory"
    assert not (service.store.root / "gone/soon").exists()
    assert (service.store.root / "gone/stays.md").is_file()
    with pytest.raises(NotFoundError):
        service.get("gone/soon/memory")


def test_removing_a_memory_names_the_memories_that_linked_to_it(service: MemoryService) -> None:
    """Removing a memory others link to left their links finding nothing, and said only
    `removed` (2sem/realtornote: `app_entry` links `swiftui_migration`)."""
    service.add("notes/target", "Body")
    service.add("notes/index", "See [target](target.md) and [[notes/target]].")
    service.add("notes/other", "## Related\n\n- notes/target - why\n")
    service.add("notes/alone", "Body")
    removed = service.remove("notes/target")
    assert (removed.path, removed.linked_from) == ("notes/target", ("notes/index", "notes/other"))
    assert service.remove("notes/alone").linked_from == ()


def test_a_removal_names_only_the_memories_whose_links_then_find_nothing(
    service: MemoryService,
) -> None:
    """`[[x]]` in notes/a found its sibling notes/x; with notes/x gone it finds archive/x
    (as `[[notes/x]]` in notes/b does, by its name), so neither is named as linking to
    nothing: remove said both links now found nothing."""
    service.add("notes/x", "Body")
    service.add("archive/x", "Body")
    service.add("notes/a", "See [[x]].\n")
    service.add("notes/b", "See [[notes/x]].\n")
    service.add("notes/c", "See [[archive/x]].\n")
    assert service.remove("notes/x").linked_from == ()
    assert service.remove("archive/x").linked_from == ("notes/a", "notes/b", "notes/c")


def test_an_empty_tag_filters_a_listing_no_more_than_a_search(service: MemoryService) -> None:
    """`list --tag ""` (or MCP `list_memories` tag "") listed nothing, where search's
    empty tag is no filter: an agent passing it read an empty store."""
    service.add("notes/tagged", "Body about tags", tags=["db"])
    service.add("notes/plain", "Body about tags")
    everything = ["notes/plain", "notes/tagged"]
    assert [s.path for s in service.list_memories(tag="").memories] == everything
    assert sorted(r.hit.row.path for r in service.search("tags", tag="")) == everything
    assert [s.path for s in service.list_memories(tag="db").memories] == ["notes/tagged"]


def test_removing_a_missing_memory_is_a_not_found_error(service: MemoryService) -> None:
    with pytest.raises(NotFoundError):
        service.remove("notes/nothing")


def test_moving_a_memory_keeps_its_content_citations_and_links(cited: MemoryService) -> None:
    cited.update("notes/cited", content="See [[other-memory]].")
    before = cited.get("notes/cited").memory
    result = cited.move("notes/cited", "archive/2026/cited")
    assert result.path == "archive/2026/cited"
    after = cited.get("archive/2026/cited").memory
    assert after.meta.citations == before.meta.citations
    assert after.meta.tags == before.meta.tags
    assert after.meta.expires_at == before.meta.expires_at
    assert after.meta.created_at == before.meta.created_at
    assert after.meta.source == before.meta.source
    assert after.content == before.content
    assert [(k.target, k.type, k.kind) for k in after.links or ()] == [
        ("other-memory", "link", LinkKind.WIKI)
    ]
    with pytest.raises(NotFoundError):
        cited.get("notes/cited")
    assert not (cited.store.root / "notes").exists()


def test_moving_onto_an_existing_memory_is_an_error_and_changes_nothing(
    cited: MemoryService,
) -> None:
    cited.add("notes/other", "Other.")
    with pytest.raises(AlreadyExistsError, match="'notes/other'"):
        cited.move("notes/cited", "notes/other")
    assert cited.get("notes/other").memory.content == "Other."
    assert cited.get("notes/cited").memory.content == "Original content."


def test_moving_a_memory_to_its_own_path_is_a_no_op(cited: MemoryService) -> None:
    file = cited.store.root / "notes/cited.md"
    before = file.read_bytes()
    result = cited.move("notes/cited", "notes/cited")
    assert not result.changed
    assert file.read_bytes() == before


def test_moving_normalizes_the_destination_and_refuses_escapes(cited: MemoryService) -> None:
    with pytest.raises(InvalidPathError):
        cited.move("notes/cited", "../../etc/passwd")
    assert cited.move("notes/cited", "Archive/Old Note").path == "Archive/Old-Note"


def test_names_keep_the_case_typed_and_a_case_only_rename_keeps_the_file(
    cited: MemoryService,
) -> None:
    """Serena names a memory file as the agent spelled it (`Tech_Stack.md`); so do `add`
    and `move`. A memory named in lower case by earlier versions is still found by its name
    in any case, and a rename that only changes case moves the one file, bytes and all."""
    assert cited.add("notes/Tech_Stack", "Python.").path == "notes/Tech_Stack"
    assert cited.get("notes/Cited").memory.path == "notes/cited"  # named so before
    before = (cited.store.root / "notes/cited.md").read_bytes()
    assert cited.move("notes/cited", "notes/Cited").path == "notes/Cited"
    assert sorted(p.name for p in (cited.store.root / "notes").iterdir()) == [
        "Cited.md",
        "Tech_Stack.md",
    ]
    assert cited.get("notes/Cited").memory.meta.citation_id is not None
    assert b"Original content." in (cited.store.root / "notes/Cited.md").read_bytes()
    assert len((cited.store.root / "notes/Cited.md").read_bytes()) >= len(before)


def test_a_memory_named_with_capitals_is_found_by_its_name_typed_in_lower_case(
    cited: MemoryService,
) -> None:
    """`add "Tech Stack"` writes `Tech-Stack.md` now; `update tech-stack`, as typed when
    new names were lower case, finds it. Two files differing only in case are no guess."""
    assert cited.add("notes/Tech Stack", "Python.").path == "notes/Tech-Stack"
    assert cited.update("notes/tech stack", content="Python 3.").path == "notes/Tech-Stack"
    assert cited.get("NOTES/TECH-STACK").memory.content.startswith("Python 3.")
    (cited.store.root / "notes/tech-STACK.md").write_text("A twin made by hand.\n")
    with pytest.raises(NotFoundError):
        cited.update("notes/tech stack", content="Which?")
    assert cited.remove("notes/Tech Stack").path == "notes/Tech-Stack"


def test_a_memory_an_earlier_version_named_without_its_dots_is_found_by_the_name_typed(
    service: MemoryService,
) -> None:
    """Earlier versions wrote `add "decisions/v1.9 Scope"` as `v1-9-scope.md`; names keep
    their dots now (`v1.9-Scope`), and `update "decisions/v1.9 Scope"`, typed as when it
    was added, still finds the file those versions wrote."""
    file = service.store.root / "decisions" / "v1-9-scope.md"
    file.parent.mkdir(parents=True)
    file.write_text("# Scope\n\nOld.\n", encoding="utf-8")
    assert service.update("decisions/v1.9 Scope", content="# Scope\n\nNew.\n").path == (
        "decisions/v1-9-scope"
    )
    assert service.get("decisions/v1.9 scope").memory.content == "# Scope\n\nNew."


def test_a_category_typed_in_another_case_lists_the_folder_on_disk(
    service: MemoryService,
) -> None:
    """`add "Decisions/API"` makes `Decisions/` now, where earlier versions made
    `decisions/`: `list decisions`, as typed before, and a search under it find it (a folder
    spelled as typed still comes first)."""
    service.add("Decisions/API Version", "Clients send v2.")
    service.add("notes/x", "Unrelated.")
    assert [s.path for s in service.list_memories("decisions").memories] == [
        "Decisions/API-Version"
    ]
    assert [r.hit.row.path for r in service.search("clients", category="DECISIONS")] == [
        "Decisions/API-Version"
    ]
    assert [s.path for s in service.list_memories("Notes").memories] == ["notes/x"]


def test_a_name_that_differs_from_a_memory_only_in_case_is_taken(cited: MemoryService) -> None:
    """On a case-insensitive file system (macOS, Windows) `Cited.md` is `cited.md`: a store
    holding both could not be cloned there whole, so the second is refused; a folder typed
    in another case is the folder on disk."""
    file = cited.store.root / "notes/cited.md"
    before = file.read_bytes()
    with pytest.raises(
        AlreadyExistsError, match=r"'notes/cited' \(the name 'notes/Cited' in another case\)"
    ):
        cited.add("notes/Cited", "A twin.")
    cited.add("notes/other", "Other.")
    with pytest.raises(AlreadyExistsError, match="in another case"):
        cited.move("notes/other", "notes/CITED")
    assert file.read_bytes() == before
    assert cited.add("NOTES/new", "New.").path == "notes/new"
    assert sorted(p.name for p in cited.store.root.iterdir() if not p.name.startswith(".")) == [
        "notes"
    ]


def test_moving_a_missing_memory_is_a_not_found_error(service: MemoryService) -> None:
    with pytest.raises(NotFoundError):
        service.move("notes/nothing", "notes/else")


# -- list, recent, prune ------------------------------------------------------------


@pytest.fixture
def populated(service: MemoryService, clock: Clock) -> MemoryService:
    service.add("projects/alpha/setup", "# Alpha setup\n\nBody.", tags=["alpha"])
    clock.advance(minutes=1)
    service.add("projects/alpha/deep/nested", "Nested.")
    clock.advance(minutes=1)
    service.add("projects/beta/setup", "Beta.")
    clock.advance(minutes=1)
    service.add("global/style", "Style.", expires_at="2026-01-31T12:10:00Z")
    clock.advance(minutes=1)
    service.add("global/editor", "Editor.")
    clock.advance(minutes=20)  # global/style has expired now
    return service


def test_listing_a_category_is_recursive_and_sorted(populated: MemoryService) -> None:
    paths = [s.path for s in populated.list_memories("projects/alpha").memories]
    assert paths == ["projects/alpha/deep/nested", "projects/alpha/setup"]
    paths = [s.path for s in populated.list_memories("projects").memories]
    assert paths == ["projects/alpha/deep/nested", "projects/alpha/setup", "projects/beta/setup"]


def test_listing_hides_expired_memories_by_default(populated: MemoryService) -> None:
    assert [s.path for s in populated.list_memories("global").memories] == ["global/editor"]
    listing = populated.list_memories("global", include_expired=True)
    assert [(s.path, s.expired) for s in listing.memories] == [
        ("global/editor", False),
        ("global/style", True),
    ]


def test_listing_the_whole_store_gives_titles(populated: MemoryService) -> None:
    summaries = {s.path: s for s in populated.list_memories().memories}
    assert len(summaries) == 4
    assert summaries["projects/alpha/setup"].title == "Alpha setup"
    assert summaries["projects/beta/setup"].title == "setup"


def test_listing_a_missing_category_is_empty(populated: MemoryService) -> None:
    assert populated.list_memories("nothing/here").memories == []


def test_listing_an_empty_or_missing_store_is_empty(service: MemoryService) -> None:
    assert service.list_memories().memories == []


def test_recent_lists_the_newest_first_up_to_the_limit(
    populated: MemoryService, clock: Clock
) -> None:
    paths = [s.path for s in populated.recent(10).memories]
    assert paths == [
        "global/editor",
        "projects/beta/setup",
        "projects/alpha/deep/nested",
        "projects/alpha/setup",
    ]
    clock.advance(minutes=1)
    populated.update("projects/alpha/setup", tags=["touched"])
    assert [s.path for s in populated.recent(2).memories] == [
        "projects/alpha/setup",
        "global/editor",
    ]


def test_recent_can_include_expired_memories(populated: MemoryService) -> None:
    paths = [s.path for s in populated.recent(10, include_expired=True).memories]
    assert "global/style" in paths


def test_recent_refuses_a_limit_below_one(populated: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match="limit"):
        populated.recent(0)


def test_prune_dry_run_lists_expired_memories_without_removing_them(
    populated: MemoryService,
) -> None:
    listing = populated.prune(dry_run=True)
    assert [s.path for s in listing.memories] == ["global/style"]
    assert (populated.store.root / "global/style.md").is_file()


def test_prune_removes_only_expired_memories(populated: MemoryService) -> None:
    listing = populated.prune()
    assert [s.path for s in listing.memories] == ["global/style"]
    assert not (populated.store.root / "global/style.md").exists()
    remaining = [s.path for s in populated.list_memories(include_expired=True).memories]
    assert remaining == [
        "global/editor",
        "projects/alpha/deep/nested",
        "projects/alpha/setup",
        "projects/beta/setup",
    ]
    assert populated.prune().memories == []


# -- format of new memories -------------------------------------------------------


def test_a_store_of_serena_memories_gets_new_memories_in_the_serena_format(
    service: MemoryService,
) -> None:
    root = service.store.root
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "existing.md").write_text("# Existing\n\nPlain markdown.\n")
    result = service.add("notes/new", "# New\n\nBody.", tags=["t"], citations=["src/app.py:3"])
    assert result.memory.format == "serena"
    text = (root / "notes/new.md").read_text()
    assert not text.startswith("---")
    assert "## Citations" in text
    assert "| src/app.py | 3 | `API_VERSION = 'v2'` |" in text
    assert "- **Tags**: t" in text
    assert [c.ref for c in service.get("notes/new").memory.meta.citations] == ["src/app.py:3"]


def test_a_serena_memory_supports_every_operation(service: MemoryService, clock: Clock) -> None:
    root = service.store.root
    root.mkdir(parents=True)
    (root / "seed.md").write_text("# Seed\n")
    service.add("notes/s", "# S\n\nBody.", tags=["a"], expires_at="2030-01-01")
    assert service.get("notes/s").memory.format == "serena"
    created = clock()
    clock.advance(hours=1)
    result = service.update(
        "notes/s", content="# S\n\nNew body.", tags=["b"], citations=["src/app.py:3"]
    )
    meta = result.memory.meta
    assert result.memory.content == "# S\n\nNew body."
    assert meta.tags == ("b",)
    assert meta.updated_at == clock()
    assert meta.created_at == created
    assert meta.source == "cli"
    assert [c.ref for c in meta.citations] == ["src/app.py:3"]
    assert service.update("notes/s", clear_expiry=True).memory.meta.expires_at is None
    assert service.update("notes/s", citations=[]).memory.meta.citations == ()
    assert "## Citations" not in (root / "notes/s.md").read_text()


def test_citations_survive_a_move_in_a_serena_store(service: MemoryService) -> None:
    root = service.store.root
    root.mkdir(parents=True)
    (root / "seed.md").write_text("# Seed\n")
    service.add("notes/s", "# S", citations=["src/app.py:3"])
    service.move("notes/s", "other/s")
    assert [c.ref for c in service.get("other/s").memory.meta.citations] == ["src/app.py:3"]


def test_citation_objects_are_accepted_as_well_as_strings(service: MemoryService) -> None:
    result = service.add("notes/obj", "Body", citations=[Citation("src/app.py", 3)])
    assert result.memory.meta.citations[0].snippet == "API_VERSION = 'v2'"


def test_links_of_a_typed_markdown_form_are_accepted_on_add(service: MemoryService) -> None:
    service.add("notes/typed", "Body", links=["[link:supersedes](old/decision)"])
    links = service.get("notes/typed").memory.links
    assert links is not None
    assert [(link.target, link.type, link.kind) for link in links] == [
        ("old/decision", "supersedes", LinkKind.FRONTMATTER)
    ]
