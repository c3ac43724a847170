"""Both file formats: round trips, and edits that touch only what changed."""

from __future__ import annotations

import difflib
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from hostile_support import python_bounded
from memory_enhancement.core.errors import UnreadableMemoryError
from memory_enhancement.core.model import Citation, Link, LinkKind, Memory, MemoryMeta
from memory_enhancement.service import MemoryService
from memory_enhancement.store import formats
from memory_enhancement.store.disk import Store
from memory_enhancement.store.formats import Document
from memory_enhancement.store.formats.base import as_lines
from memory_enhancement.store.formats.frontmatter import FrontmatterFormat
from memory_enhancement.store.formats.links import extract_links
from memory_enhancement.store.formats.markdown import find_sections, headings, open_fence
from memory_enhancement.store.formats.serena import SerenaFormat
from memory_enhancement.verify.repo import Repository

FRONTMATTER = FrontmatterFormat()
SERENA = SerenaFormat()


def parse(text: str, path: str = "notes/memory") -> Document:
    return formats.parse_text(path, text)


def edit(text: str, **meta_changes: object) -> str:
    """Render text after changing metadata fields of the memory it holds."""
    doc = parse(text)
    memory = doc.memory
    new = replace(memory, meta=replace(memory.meta, **meta_changes))
    return formats.by_name(memory.format).render(doc, new)


def add_citation(text: str, citation: Citation) -> str:
    doc = parse(text)
    return edit(text, citations=(*doc.memory.meta.citations, citation))


def inserted_lines(old: str, new: str) -> tuple[int, list[str]]:
    """Assert new is old with one block of lines inserted; return where and what."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    ops = [op for op in difflib.SequenceMatcher(None, a, b).get_opcodes() if op[0] != "equal"]
    assert len(ops) == 1, ops
    tag, i1, _, j1, j2 = ops[0]
    assert tag == "insert", ops
    return i1, b[j1:j2]


def changed_lines(old: str, new: str) -> list[tuple[str, str]]:
    """The (old, new) line pairs that differ, for texts with the same number of lines."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    assert len(a) == len(b), (a, b)
    return [(x, y) for x, y in zip(a, b, strict=True) if x != y]


# -- strategies -----------------------------------------------------------------

_WORD_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_PROSE_CHARS = _WORD_CHARS + " .,;:!?'\"()*_-+=/&%$@~^{}#[]`|<>\\\t"


def _ms(moment: datetime) -> datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


timestamps = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
).map(_ms)

_line = st.text(alphabet=_PROSE_CHARS, max_size=40)
_edge_line = st.text(alphabet=_PROSE_CHARS, min_size=1, max_size=40).filter(
    lambda s: s.strip() and not s.startswith(("---", "...")) and s.strip() != "-"
)


def _is_plain_content(content: str) -> bool:
    """Content that any format keeps as is: no section the serena format manages, and
    no code fence left open (a serena file closes it, so the sections after stay markdown)."""
    lines = as_lines(content)
    managed = {"citations", "links", "metadata"}
    return not open_fence(lines) and not any(s.key in managed for s in find_sections(lines))


@st.composite
def contents(draw: st.DrawFn) -> str:
    """Content as reported: no leading or trailing blank lines."""
    middle = draw(st.lists(_line, max_size=6))
    content = "\n".join([draw(_edge_line), *middle, draw(_edge_line)])
    assume(_is_plain_content(content))
    return content


_tag = st.text(alphabet=_WORD_CHARS + "-_ ", min_size=1, max_size=15).map(
    lambda s: " ".join(s.split())
)
tags = st.lists(_tag.filter(bool), max_size=4, unique=True).map(tuple)
_path_segment = st.text(alphabet=_WORD_CHARS + "_-.", min_size=1, max_size=10).filter(
    lambda s: s not in (".", "..") and not s.startswith(".")
)
_file = st.lists(_path_segment, min_size=1, max_size=3).map("/".join)
_url = st.builds(
    lambda host, rest: f"https://{host}.example.com/{rest}",
    st.text(alphabet="abcdefghij", min_size=1, max_size=8),
    _file,
)
_verified = st.none() | st.sampled_from(["2026-01-18", "2026-01-18T10:30:00.000Z"])


@st.composite
def citations(draw: st.DrawFn, snippets: st.SearchStrategy[str]) -> Citation:
    if draw(st.booleans()):
        return Citation(draw(_url), snippet=draw(st.none() | snippets), verified=draw(_verified))
    line = draw(st.none() | st.integers(1, 9999))
    end = draw(st.none() | st.integers(line + 1, line + 50)) if line else None
    snippet = draw(st.none() | snippets) if line else None
    return Citation(draw(_file), line, end, snippet, draw(_verified))


_any_snippet = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Zl", "Zp"]), min_size=1
).filter(lambda s: s.strip())
_multi_line_snippet = st.lists(_any_snippet, min_size=2, max_size=3).map("\n".join)
_single_line_snippet = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Zl", "Zp", "Zs"]),
    min_size=1,
    max_size=20,
)
_table_snippet = st.lists(_single_line_snippet, min_size=1, max_size=3).map(" ".join)


@st.composite
def memories(draw: st.DrawFn, fmt: str) -> Memory:
    serena = fmt == "serena"
    snippets = _table_snippet if serena else (_any_snippet | _multi_line_snippet)
    meta = MemoryMeta(
        created_at=draw(timestamps),
        updated_at=draw(timestamps),
        tags=draw(tags),
        source=draw(st.none() | st.sampled_from(["cli", "file", "stdin", "mcp"])),
        expires_at=draw(st.none() | timestamps),
        citations=tuple(draw(st.lists(citations(snippets), max_size=4, unique=True))),
    )
    return Memory("notes/memory", draw(contents()), meta, (), fmt)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(memories("frontmatter"))
@example(Memory("notes/memory", "0\n- A", MemoryMeta(), (), "frontmatter"))
def test_a_frontmatter_memory_reads_back_as_written(memory: Memory) -> None:
    text = FRONTMATTER.render(None, memory)
    doc = parse(text)
    assert replace(doc.memory, links=()) == memory
    assert _links(doc.memory) == _links_written_in(memory.content)
    assert doc.problems == []


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(memories("serena"))
def test_a_serena_memory_reads_back_as_written(memory: Memory) -> None:
    text = SERENA.render(None, memory)
    doc = parse(text)
    assert replace(doc.memory, links=()) == memory
    assert _links(doc.memory) == _links_written_in(memory.content)
    assert doc.problems == []


def _links(memory: Memory) -> list[tuple[str, LinkKind]]:
    return [(link.target, link.kind) for link in memory.links or ()]


def _links_written_in(content: str) -> list[tuple[str, LinkKind]]:
    """The links a memory's content makes by itself: generated prose can hold a list
    item naming something (`- A`) or link syntax, which read back as links (issue 12)."""
    return [(link.target, link.kind) for link in extract_links(content)]


@settings(max_examples=75, suppress_health_check=[HealthCheck.too_slow])
@given(memories("frontmatter") | memories("serena"), st.data())
def test_an_edited_memory_reads_back_as_edited(memory: Memory, data: st.DataObject) -> None:
    fmt = formats.by_name(memory.format)
    text = fmt.render(None, memory)
    other = data.draw(memories(memory.format))
    doc = parse(text)
    edited = fmt.render(doc, replace(other, links=doc.memory.links))
    again = parse(edited).memory
    assert replace(again, links=()) == other


@given(memories("frontmatter") | memories("serena"))
def test_saving_an_unchanged_memory_gives_the_same_text(memory: Memory) -> None:
    text = formats.by_name(memory.format).render(None, memory)
    doc = parse(text)
    assert formats.by_name(memory.format).render(doc, doc.memory) == text


TRICKY_SNIPPETS = [
    "}",
    "{",
    "[1, 2",
    "[project]",
    "key: value",
    "# not a comment",
    "- not an item",
    "'quoted'",
    "2026-01-18",
    "2026-01-18T10:30:00.000Z",
    "true",
    "null",
    "~",
    "@decorator",
    "`tick`",
    "a | b",
    "  indented",
    "trailing  ",
    "two\nlines",
]


@pytest.mark.parametrize("snippet", TRICKY_SNIPPETS)
def test_a_frontmatter_snippet_reads_back_whatever_yaml_would_make_of_it(snippet: str) -> None:
    citation = Citation("src/app.py", 3, snippet=snippet)
    memory = Memory("a/b", "Body", MemoryMeta(citations=(citation,)))
    assert parse(FRONTMATTER.render(None, memory)).memory.meta.citations == (citation,)


@pytest.mark.parametrize("target", ["0", "true", "2026-01-18", "null", "a: b", "[x]"])
def test_a_frontmatter_citation_path_reads_back_whatever_yaml_would_make_of_it(
    target: str,
) -> None:
    citation = Citation(target, 3, snippet="x")
    memory = Memory("a/b", "Body", MemoryMeta(citations=(citation,)))
    assert parse(FRONTMATTER.render(None, memory)).memory.meta.citations == (citation,)


# -- detection ------------------------------------------------------------------


def test_a_file_opening_with_a_yaml_block_is_frontmatter_and_anything_else_is_serena() -> None:
    assert parse("---\ntags: [a]\n---\nbody\n").memory.format == "frontmatter"
    assert parse("# Title\n\nbody\n").memory.format == "serena"
    assert parse("---\nno closing line\n").memory.format == "serena"


# -- frontmatter ----------------------------------------------------------------

SEED_000_EXAMPLE = """\
---
created_at: 2026-01-01T00:00:00.000Z
updated_at: 2026-01-01T00:00:00.000Z
tags: [architecture, patterns]
source: mcp
citations:
    - src/core/memory/types.ts:17
    - https://github.blog/example
---
Memory content here.
"""


def test_the_seed_000_example_file_reads_as_its_metadata_says() -> None:
    memory = parse(SEED_000_EXAMPLE).memory
    assert memory.content == "Memory content here."
    assert memory.meta.created_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert memory.meta.tags == ("architecture", "patterns")
    assert memory.meta.source == "mcp"
    assert [c.ref for c in memory.meta.citations] == [
        "src/core/memory/types.ts:17",
        "https://github.blog/example",
    ]


def test_a_new_frontmatter_file_writes_expiry_and_citations_only_when_set() -> None:
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    meta = MemoryMeta(created_at=moment, updated_at=moment, tags=("a",), source="cli")
    text = FRONTMATTER.render(None, Memory("a/b", "Body", meta))
    assert text == (
        "---\n"
        "created_at: 2026-01-01T00:00:00.000Z\n"
        "updated_at: 2026-01-01T00:00:00.000Z\n"
        "tags: [a]\n"
        "source: cli\n"
        "---\n"
        "Body\n"
    )
    with_all = replace(
        meta,
        expires_at=datetime(2027, 1, 1, tzinfo=UTC),
        citations=(Citation("src/x.py", 17), Citation("src/y.py", 3, 5, "y = 1")),
    )
    text = FRONTMATTER.render(None, Memory("a/b", "Body", with_all))
    assert "expires_at: 2027-01-01T00:00:00.000Z\n" in text
    assert "citations:\n  - src/x.py:17\n  - path: src/y.py\n    line: 3\n    end_line: 5\n" in text
    assert "    snippet: y = 1\n" in text


def test_frontmatter_citation_mappings_are_read_with_all_their_fields() -> None:
    text = (
        "---\n"
        "citations:\n"
        "  - path: src/x.py\n"
        "    line: 3\n"
        "    end_line: 5\n"
        '    snippet: "x = 1"\n'
        "    verified: 2026-01-18\n"
        "  - file: src/y.py\n"
        '    line: "7-9"\n'
        "---\n"
        "Body\n"
    )
    found = parse(text).memory.meta.citations
    assert found == (
        Citation("src/x.py", 3, 5, "x = 1", "2026-01-18"),
        Citation("src/y.py", 7, 9),
    )


UNKNOWN_KEYS = """\
---
# a comment the tool does not understand
id: my-memory
created_at: 2026-01-01T00:00:00.000Z
updated_at: 2026-01-01T00:00:00.000Z
tags: [old]
subject:   "Spacing   kept"   # trailing comment
custom:
  nested: [1, 2]    # keep me
  other: {a: b}
source: mcp
citations:
  - src/app.py:3   # why this line
  - path: src/util/helpers.py
    line: 2
    snippet: "return a | b"
    reviewer: alice
---
Body text.
"""


def test_unknown_frontmatter_keys_and_comments_survive_an_update_byte_for_byte() -> None:
    new = edit(UNKNOWN_KEYS, tags=("new", "tags"))
    assert changed_lines(UNKNOWN_KEYS, new) == [("tags: [old]\n", "tags: [new, tags]\n")]
    memory = parse(new).memory
    assert memory.meta.extra["subject"] == "Spacing   kept"
    assert memory.meta.extra["custom"] == {"nested": [1, 2], "other": {"a": "b"}}


def test_adding_a_frontmatter_citation_only_appends_an_item() -> None:
    new = add_citation(UNKNOWN_KEYS, Citation("src/new.py", 9))
    at, lines = inserted_lines(UNKNOWN_KEYS, new)
    assert lines == ["  - src/new.py:9\n"]
    assert UNKNOWN_KEYS.splitlines()[at] == "---"


def test_an_unknown_key_inside_a_citation_mapping_is_kept_when_another_is_changed() -> None:
    doc = parse(UNKNOWN_KEYS)
    first, second = doc.memory.meta.citations
    assert second.extra == (("reviewer", "alice"),)
    new = edit(UNKNOWN_KEYS, citations=(replace(first, line=4), second))
    assert changed_lines(UNKNOWN_KEYS, new) == [
        ("  - src/app.py:3   # why this line\n", "  - src/app.py:4\n")
    ]


def test_clearing_frontmatter_citations_removes_the_key() -> None:
    new = edit(UNKNOWN_KEYS, citations=())
    assert "citations" not in new
    assert "reviewer" not in new
    assert parse(new).memory.meta.extra["id"] == "my-memory"
    assert new.endswith("source: mcp\n---\nBody text.\n")


def test_a_new_frontmatter_key_is_inserted_after_its_neighbours() -> None:
    new = edit(UNKNOWN_KEYS, expires_at=datetime(2027, 1, 1, tzinfo=UTC))
    at, lines = inserted_lines(UNKNOWN_KEYS, new)
    assert lines == ["expires_at: 2027-01-01T00:00:00.000Z\n"]
    assert UNKNOWN_KEYS.splitlines()[at - 1] == "source: mcp"


def test_changing_frontmatter_content_keeps_the_frontmatter_bytes() -> None:
    doc = parse(UNKNOWN_KEYS)
    new = FRONTMATTER.render(doc, replace(doc.memory, content="New body."))
    head = UNKNOWN_KEYS.split("---\nBody")[0]
    assert new == head + "---\nNew body.\n"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\ntags: [unclosed\n---\nbody\n", "malformed YAML"),
        ("---\n- a list\n---\nbody\n", "must be a mapping"),
        ("---\nkey: value\n  bad: indent\n---\nbody\n", "malformed YAML"),
    ],
)
def test_malformed_frontmatter_is_unreadable_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(UnreadableMemoryError) as info:
        parse(text, "notes/broken")
    assert "notes/broken" in str(info.value)
    assert reason in str(info.value)


# -- serena ---------------------------------------------------------------------

PLAIN = "# Title\n\nSome prose about the code.\n"

WITH_LINKS = """\
# Title

Some prose.

## Links

- other-memory

## Metadata

- **Confidence**: 0.80
"""

WITH_RELATED = """\
# Title

Some prose.

## Related

- [other](other.md)
"""

WITH_METADATA = """\
# Title

Some prose.

## Metadata

- **Created**: 2025-12-20
"""

WITH_TABLE = """\
# Title

Some prose.

## Citations

| File | Line | Snippet | Verified |
|------|------|---------|----------|
| src/app.py | 3 | `API_VERSION = 'v2'` | 2026-01-18 |

## Links

- other-memory
"""


def test_adding_a_citation_to_a_plain_serena_file_appends_a_citations_section() -> None:
    new = add_citation(PLAIN, Citation("src/app.py", 3, snippet="API_VERSION = 'v2'"))
    assert new == (
        PLAIN + "\n## Citations\n\n"
        "| File | Line | Snippet | Verified |\n"
        "|------|------|---------|----------|\n"
        "| src/app.py | 3 | `API_VERSION = 'v2'` |  |\n"
    )


@pytest.mark.parametrize(
    ("text", "heading"),
    [(WITH_LINKS, "## Links"), (WITH_RELATED, "## Related"), (WITH_METADATA, "## Metadata")],
)
def test_a_new_citations_section_goes_before_links_related_or_metadata(
    text: str, heading: str
) -> None:
    new = add_citation(text, Citation("src/app.py", 3))
    before, after = text.split(heading)
    assert new == (
        before + "## Citations\n\n"
        "| File | Line | Snippet | Verified |\n"
        "|------|------|---------|----------|\n"
        "| src/app.py | 3 |  |  |\n\n" + heading + after
    )
    assert parse(new).memory.meta.citations == (Citation("src/app.py", 3),)


def test_adding_a_citation_to_an_existing_table_appends_one_row() -> None:
    new = add_citation(WITH_TABLE, Citation("src/util/helpers.py", 1, 2, "def helper(a, b):"))
    at, lines = inserted_lines(WITH_TABLE, new)
    assert lines == ["| src/util/helpers.py | 1-2 | `def helper(a, b):` |  |\n"]
    assert WITH_TABLE.splitlines()[at - 1].startswith("| src/app.py")


def test_a_serena_metadata_change_rewrites_only_its_bullet() -> None:
    new = edit(WITH_LINKS, confidence=0.5)
    assert changed_lines(WITH_LINKS, new) == [
        ("- **Confidence**: 0.80\n", "- **Confidence**: 0.5\n")
    ]


def test_a_new_serena_metadata_value_is_added_to_the_metadata_section() -> None:
    new = edit(WITH_LINKS, tags=("api", "versioning"))
    at, lines = inserted_lines(WITH_LINKS, new)
    assert lines == ["- **Tags**: api, versioning\n"]
    assert at == len(WITH_LINKS.splitlines())


def test_a_serena_file_without_metadata_gets_a_metadata_section_at_the_end() -> None:
    new = edit(PLAIN, tags=("x",))
    assert new == PLAIN + "\n## Metadata\n\n- **Tags**: x\n"


UNCLOSED_FENCE = "# Title\n\nExample:\n\n```markdown\n## Source\n\nnot a section\n"


def test_a_new_serena_memory_ending_inside_a_code_fence_gets_it_closed() -> None:
    meta = MemoryMeta(tags=("x",), citations=(Citation("src/app.py", 3),))
    text = SERENA.render(None, Memory("a/b", "Example:\n\n```python\nx = 1", meta, (), "serena"))
    memory = parse(text).memory
    assert memory.content == "Example:\n\n```python\nx = 1\n```"
    assert memory.meta.tags == ("x",)
    assert memory.meta.citations == (Citation("src/app.py", 3),)


def test_new_serena_content_ending_inside_a_code_fence_keeps_the_sections_readable() -> None:
    doc = parse(SEED_004_EXAMPLE)
    new = SERENA.render(doc, replace(doc.memory, content="# New\n\n~~~~\nopen"))
    memory = parse(new).memory
    assert memory.content == "# New\n\n~~~~\nopen\n~~~~"
    assert memory.meta == doc.memory.meta


def test_a_section_appended_after_an_unclosed_code_fence_closes_the_fence_first() -> None:
    new = edit(UNCLOSED_FENCE, tags=("x",))
    assert new == UNCLOSED_FENCE + "```\n\n## Metadata\n\n- **Tags**: x\n"
    assert parse(new).memory.meta.tags == ("x",)
    new = add_citation(UNCLOSED_FENCE, Citation("src/app.py", 3))
    assert parse(new).memory.meta.citations == (Citation("src/app.py", 3),)


def test_removing_the_last_citation_removes_the_empty_citations_section() -> None:
    new = edit(WITH_TABLE, citations=())
    assert "## Citations" not in new
    assert new.endswith("Some prose.\n\n## Links\n\n- other-memory\n")


def test_a_pipe_in_a_snippet_is_escaped_in_the_table_and_read_back() -> None:
    citation = Citation("src/util/helpers.py", 2, snippet="return a | b")
    new = add_citation(PLAIN, citation)
    assert "| src/util/helpers.py | 2 | `return a \\| b` |  |\n" in new
    assert parse(new).memory.meta.citations == (citation,)


def test_table_snippets_may_be_plain_text_or_code_spans_of_any_width() -> None:
    text = (
        "## Citations\n\n| File | Line | Snippet |\n|---|---|---|\n"
        "| a.py | 1 | plain words |\n"
        "| b.py | 2 | `x = 1` |\n"
        "| c.py | 3 | `` a `tick` here `` |\n"
        "| d.py | 4 | `a \\| b` |\n"
    )
    snippets = [c.snippet for c in parse(text).memory.meta.citations]
    assert snippets == ["plain words", "x = 1", "a `tick` here", "a | b"]


def test_a_snippet_with_backticks_is_written_in_a_code_span_that_reads_back() -> None:
    citation = Citation("a.py", 1, snippet="say `hi` and ``bye``")
    new = add_citation(PLAIN, citation)
    assert parse(new).memory.meta.citations == (citation,)


REORDERED = """\
# Title

## Citations

| Snippet | Notes | File | Line |
| --- | --- | --- | --- |
| `x = 1` | keep this note | src/a.py | 10 |
| `y = 2` | second note | src/b.py | 20-22 |
"""


def test_table_columns_are_found_by_header_name_in_any_order() -> None:
    found = parse(REORDERED).memory.meta.citations
    assert [(c.target, c.line, c.end_line, c.snippet) for c in found] == [
        ("src/a.py", 10, None, "x = 1"),
        ("src/b.py", 20, 22, "y = 2"),
    ]
    assert found[0].extra == (("Notes", "keep this note"),)


def test_a_rewritten_row_keeps_its_column_order_and_unknown_cells() -> None:
    first, second = parse(REORDERED).memory.meta.citations
    new = edit(REORDERED, citations=(replace(first, line=11), second))
    assert changed_lines(REORDERED, new) == [
        (
            "| `x = 1` | keep this note | src/a.py | 10 |\n",
            "| `x = 1` | keep this note | src/a.py | 11 |\n",
        )
    ]


def test_an_added_row_fills_the_columns_of_the_existing_table() -> None:
    new = add_citation(REORDERED, Citation("src/c.py", 5, snippet="z"))
    _, lines = inserted_lines(REORDERED, new)
    assert lines == ["| `z` |  | src/c.py | 5 |\n"]


INLINE = """\
# Title

The version lives here [cite:file](src/app.py:3) and there [cite:url](https://example.com/v2).
Not a citation: `[cite:file](src/skip.py:1)`.

```
[cite:file](src/fenced.py:1)
```
"""


def test_inline_cite_markers_are_citations_outside_code() -> None:
    found = parse(INLINE).memory.meta.citations
    assert [c.ref for c in found] == ["src/app.py:3", "https://example.com/v2"]


def test_an_inline_citation_is_rewritten_in_place() -> None:
    first, second = parse(INLINE).memory.meta.citations
    new = edit(INLINE, citations=(replace(first, line=4), second))
    assert changed_lines(INLINE, new) == [
        (
            INLINE.splitlines(keepends=True)[2],
            INLINE.splitlines(keepends=True)[2].replace("app.py:3", "app.py:4"),
        )
    ]


LINKS = """\
# Links everywhere

See [[wiki-target]] and [[other|with label]] and [a note](notes/other-note.md#part).
A typed one: [link:depends_on](infra/database). A site: [web](https://example.com/x.md).
Code is not links: `[[in-code]]` and `[x](in-code.md)`.

```markdown
[[fenced]] [y](fenced.md)
```

## Links

- bare-id
- another/bare-id - with a reason
- [Titled](titled.md)
- [link:supersedes](old-decision)

## Related

- related-id
- [Rel](rel.md)
"""


def test_links_come_from_every_form_and_never_from_code() -> None:
    links = parse(LINKS).memory.links
    assert links is not None
    assert [(link.target, link.type, link.kind) for link in links] == [
        ("wiki-target", "link", LinkKind.WIKI),
        ("other", "link", LinkKind.WIKI),
        ("notes/other-note.md", "link", LinkKind.MARKDOWN),
        ("infra/database", "depends_on", LinkKind.TYPED),
        ("bare-id", "link", LinkKind.BARE),
        ("another/bare-id", "link", LinkKind.BARE),
        ("titled.md", "link", LinkKind.MARKDOWN),
        ("old-decision", "supersedes", LinkKind.TYPED),
        ("related-id", "related", LinkKind.BARE),
        ("rel.md", "related", LinkKind.MARKDOWN),
    ]


def test_links_report_the_line_they_are_written_on() -> None:
    links = parse(LINKS).memory.links
    assert links is not None
    lines = LINKS.splitlines()
    for link in links:
        assert link.line is not None
        assert link.target.split("/")[-1].removesuffix(".md") in lines[link.line - 1]


def test_frontmatter_bodies_and_keys_have_links_too() -> None:
    text = "---\nlinks:\n  - first\n  - {target: second, type: depends_on}\n---\nSee [[third]].\n"
    links = parse(text).memory.links
    assert links is not None
    assert [(link.target, link.type, link.line) for link in links] == [
        ("first", "link", 3),
        ("second", "depends_on", 4),
        ("third", "link", 6),
    ]


SEED_004_EXAMPLE = """\
# API Version Synchronization

Client SDK API_VERSION constant must exactly match server route prefix.

## Citations

| File | Line | Snippet | Verified |
|------|------|---------|----------|
| src/client/constants.ts | 42 | `API_VERSION = 'v2'` | 2026-01-18 |
| server/routes/api.ts | 15 | `router.use('/v2'` | 2026-01-18 |

## Links

- api-deployment-checklist
- client-sdk-patterns

## Metadata

- **Confidence**: 0.92
- **Last Verified**: 2026-01-18T10:30:00Z
- **Tags**: api, versioning
- **Expires**: 2027-01-01
"""


def test_the_seed_004_example_reads_citations_links_and_metadata() -> None:
    memory = parse(SEED_004_EXAMPLE).memory
    assert memory.format == "serena"
    assert memory.content == (
        "# API Version Synchronization\n\n"
        "Client SDK API_VERSION constant must exactly match server route prefix."
    )
    assert memory.meta.citations == (
        Citation("src/client/constants.ts", 42, None, "API_VERSION = 'v2'", "2026-01-18"),
        Citation("server/routes/api.ts", 15, None, "router.use('/v2'", "2026-01-18"),
    )
    assert memory.links is not None
    assert [link.target for link in memory.links] == [
        "api-deployment-checklist",
        "client-sdk-patterns",
    ]
    assert memory.meta.confidence == 0.92
    assert memory.meta.last_verified == datetime(2026, 1, 18, 10, 30, tzinfo=UTC)
    assert memory.meta.tags == ("api", "versioning")
    assert memory.meta.expires_at == datetime(2027, 1, 1, tzinfo=UTC)


def test_a_links_bullet_in_the_metadata_section_is_read_as_links() -> None:
    text = "Body\n\n## Metadata\n\n- **Links**: api-deployment-checklist, client-sdk-patterns\n"
    links = parse(text).memory.links
    assert links is not None
    assert [link.target for link in links] == ["api-deployment-checklist", "client-sdk-patterns"]


def test_an_unreadable_metadata_value_is_a_problem_not_a_failure() -> None:
    text = "Body\n\n## Metadata\n\n- **Confidence**: very high\n- **Expires**: someday\n"
    doc = parse(text, "notes/vague")
    assert doc.memory.meta.confidence is None
    assert doc.memory.meta.expires_at is None
    assert len(doc.problems) == 2
    assert all("notes/vague" in p for p in doc.problems)


def test_a_new_serena_memory_has_its_sections_in_order() -> None:
    moment = datetime(2026, 1, 18, 10, 30, tzinfo=UTC)
    memory = Memory(
        "api/versioning",
        "# API\n\nBody.",
        MemoryMeta(
            created_at=moment,
            updated_at=moment,
            tags=("api",),
            source="cli",
            citations=(Citation("src/a.ts", 42, snippet="A = 1", verified="2026-01-18"),),
        ),
        (Link("client-sdk"), Link("db", "depends_on", LinkKind.TYPED)),
        "serena",
    )
    assert SERENA.render(None, memory) == (
        "# API\n\nBody.\n\n"
        "## Citations\n\n"
        "| File | Line | Snippet | Verified |\n"
        "|------|------|---------|----------|\n"
        "| src/a.ts | 42 | `A = 1` | 2026-01-18 |\n\n"
        "## Links\n\n- client-sdk\n- [link:depends_on](db)\n\n"
        "## Metadata\n\n"
        "- **Created**: 2026-01-18T10:30:00.000Z\n"
        "- **Updated**: 2026-01-18T10:30:00.000Z\n"
        "- **Tags**: api\n"
        "- **Source**: cli\n"
    )


def test_changing_serena_content_keeps_the_managed_sections() -> None:
    doc = parse(SEED_004_EXAMPLE)
    new = SERENA.render(doc, replace(doc.memory, content="# New\n\nNew body."))
    assert new.startswith("# New\n\nNew body.\n\n## Citations\n")
    assert new.split("## Citations", 1)[1] == SEED_004_EXAMPLE.split("## Citations", 1)[1]


# -- newlines and BOM through a store -------------------------------------------


@pytest.fixture
def raw_service(tmp_path: Path) -> MemoryService:
    (tmp_path / "code").mkdir()
    return MemoryService(Store(tmp_path / "store"), Repository(tmp_path / "code"))


def _write(service: MemoryService, path: str, data: bytes) -> Path:
    file = service.store.root / f"{path}.md"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(data)
    return file


@pytest.mark.parametrize("text", [SEED_004_EXAMPLE, UNKNOWN_KEYS])
def test_a_crlf_file_keeps_crlf_line_endings_after_an_edit(
    raw_service: MemoryService, text: str
) -> None:
    file = _write(raw_service, "notes/crlf", text.replace("\n", "\r\n").encode())
    raw_service.update("notes/crlf", tags=["changed"])
    data = file.read_bytes()
    assert b"changed" in data
    assert data.count(b"\n") == data.count(b"\r\n")
    assert raw_service.get("notes/crlf").memory.meta.tags == ("changed",)


def test_a_crlf_file_gets_a_new_citation_with_crlf(raw_service: MemoryService) -> None:
    file = _write(raw_service, "notes/crlf", PLAIN.replace("\n", "\r\n").encode())
    raw_service.add_citation("notes/crlf", "https://example.com/doc")
    data = file.read_bytes()
    assert b"| https://example.com/doc |" in data
    assert data.count(b"\n") == data.count(b"\r\n")


@pytest.mark.parametrize("text", [SEED_004_EXAMPLE, UNKNOWN_KEYS])
def test_a_byte_order_mark_survives_an_edit(raw_service: MemoryService, text: str) -> None:
    file = _write(raw_service, "notes/bom", b"\xef\xbb\xbf" + text.encode())
    assert raw_service.get("notes/bom").memory.format == parse(text).memory.format
    raw_service.update("notes/bom", tags=["changed"])
    data = file.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\xef\xbb\xbf") == 1
    assert raw_service.get("notes/bom").memory.meta.tags == ("changed",)


def test_a_file_without_a_final_newline_keeps_its_other_bytes(raw_service: MemoryService) -> None:
    text = "# Title\n\nNo final newline"
    file = _write(raw_service, "notes/nofinal", text.encode())
    raw_service.add_citation("notes/nofinal", "https://example.com/doc")
    data = file.read_text()
    assert data.startswith(text + "\n")
    assert raw_service.get("notes/nofinal").memory.content == "# Title\n\nNo final newline"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("## Related ##", [(0, 2, "Related")]),
        ("# C# notes #", [(0, 1, "C# notes")]),
        ("#\tTabbed  #  ", [(0, 1, "Tabbed")]),
        ("####### seven", []),
        ("##no space", []),
        ("#", [(0, 1, "")]),
    ],
)
def test_atx_headings_read_their_level_and_title_without_the_closing_hashes(
    line: str, expected: list[tuple[int, int, str]]
) -> None:
    assert list(headings([line])) == expected


def test_a_200_kb_heading_line_of_hashes_is_read_in_one_pass() -> None:
    """The title was matched lazily before `[ \\t#]*$`, retrying the tail at every length:
    a line of `# # # ...` took minutes (in a child process: a hang fails the test)."""
    code = (
        "from memory_enhancement.store.formats.markdown import headings\n"
        "print(list(headings(['# ' * 100_000 + 'x'])) == [(0, 1, '# ' * 99_999 + 'x')])"
    )
    done = python_bounded(code)
    assert (done.returncode, done.stdout, done.stderr) == (0, "True\n", "")
