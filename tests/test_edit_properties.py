"""Edits of generated memory files, of both formats, change only what they mean to.

The files are built the ways people write them (see the QA rounds' real stores): a
frontmatter of the tool's keys and unknown ones, in flow or block style, quoted keys,
comments after values and on lines of their own, blank lines after the closing `---`;
a Serena body with headings, code fences (one holding a `## Citations` line), tabs, a
lone `\\r`, U+2028, the managed sections or none; blank lines at the end or none; a final
newline or none; CRLF throughout or LF; a byte order mark or none. Properties:

(a) a save that changes nothing gives the same bytes;
(b) adding a citation and removing it gives the same bytes back. Not generated, because
    a removal cannot know them from what the addition wrote: a Serena file ending inside
    an unclosed code fence (the fence is closed so the new section reads as markdown,
    and stays closed), a `## Citations` heading with nothing under it (it goes with the
    last citation), frontmatter `citations:` written as a flow list or left empty (the
    items are written one per line, and stay so);
(c) new content changes nothing outside the body: the frontmatter, the blank lines
    around the content, the managed sections and their places;
(d) unknown frontmatter keys (and unknown Serena metadata bullets) keep their lines,
    comments and order through every kind of edit.

Fixed seed and modest example counts: a few seconds in all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_enhancement.core.model import Citation, Link, Memory
from memory_enhancement.store import formats
from memory_enhancement.store.formats.base import Decoded, decode
from memory_enhancement.store.formats.frontmatter_doc import FrontmatterDocument
from memory_enhancement.store.formats.serena_doc import SerenaDocument

Change = Callable[[Memory], Memory]

PROPERTY = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# -- generated files ---------------------------------------------------------------

_WORDS = ["alpha", "beta", "gamma", "δέλτα", "日本語", "x_y", "v2.0", "a-b"]
_word = st.sampled_from(_WORDS)
_prose = st.lists(_word, min_size=1, max_size=5).map(" ".join)
# Lines a body can hold; none opens a fence it does not close or starts a managed section.
_body_line = st.one_of(
    _prose,
    _prose.map(lambda s: "# " + s),
    _prose.map(lambda s: "### " + s),
    _prose.map(lambda s: "\t" + s),  # a tab-indented line
    _prose.map(lambda s: s + "\r" + s),  # a carriage return alone, inside a line
    _prose.map(lambda s: s + "\u2028" + s),  # a unicode line separator
    _prose.map(lambda s: "- " + s),
    st.just("```\n## Citations\n| File | Line |\n```"),  # a managed heading, as code
    st.just("x" * 300),
    st.just("   "),
)
_lines = st.lists(_body_line, min_size=1, max_size=6).map("\n".join)
_blank_run = st.sampled_from(["", "\n", "\n\n", "\n\t\n", "\n \n\n"])


def _bytes(text: str, crlf: bool, bom: bool) -> bytes:
    return Decoded(text, "\r\n" if crlf else "\n", bom).encode(text)


@st.composite
def _unknown_keys(draw: st.DrawFn) -> list[str]:
    """Unknown frontmatter keys, each as its lines, in the styles real stores use."""
    names = draw(st.lists(st.sampled_from(["name", "description", "type", "owner"]), unique=True))
    shapes = [
        "{k}: {v}\n",
        "{k}: {v}  # why\n",
        "'{k}': '{v} #1'\n",
        '"{k}": [{v}, 2]\t# a list\n',
        "{k}:\n  - {v}\n  - two\n",
        "{k}: |\n  {v}\n  # kept as text\n",
        "{k}:\n  nested: {v}\n",
    ]
    return [draw(st.sampled_from(shapes)).format(k=name, v=draw(_word)) for name in names]


_tags_key = st.sampled_from(
    [
        "",
        "tags: [a, b]\n",
        "tags: [a, b]  # topics\n",
        "'tags': [a]\n",
        "tags:\n  - a\n  - b\n",
        "tags:   # what it is about\n    - a\n  # more to come\n",
        "tags: a, b\n",
        "tags: [a,\n  b]\n",
    ]
)
_citations_key = st.sampled_from(
    [
        "",
        "citations:\n  - src/app.py:3\n",
        "citations:\n  - path: src/app.py\n    line: 1\n    snippet: |\n      import os\n"
        "      # the settings\n",
    ]
)


@st.composite
def frontmatter_files(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A frontmatter file's text (LF) and its unknown keys' lines."""
    unknown = draw(_unknown_keys())
    known = [
        draw(st.sampled_from(["", "created_at: 2026-01-29T19:53:51.691Z\n"])),
        draw(st.sampled_from(["", "updated_at: 2026-01-30T10:00:00Z  # last edit\n"])),
        draw(_tags_key),
        draw(st.sampled_from(["", "source: mcp\n"])),
        draw(_citations_key),
    ]
    keys = draw(st.permutations([k for k in known if k] + unknown + ["# a comment line\n"]))
    head = "---\n" + "".join(keys) + draw(st.sampled_from(["---\n", "...\n", "---  \n"]))
    body = draw(st.one_of(st.just(""), _lines))
    text = head + draw(_blank_run) + body + (draw(_blank_run) if body else "")
    if draw(st.booleans()) and text.endswith("\n"):
        text = text[:-1]  # no final newline
    return text, unknown


_TABLE = (
    "## Citations\n\n| File | Line | Snippet | Verified |\n|------|------|---------|----------|\n"
    "| src/app.py | 3 | `API_VERSION = 'v2'` |  |\n"
)
_METADATA = "## Metadata\n\n- **Owner**: bob  (kept)\n- **Tags**: a, b\n"
_LINKS = "## Links\n\n- notes/other\n"
_OWN_LIST = "## Citations\n\n- AGENTS.md (the framework)\n"  # an author's own, not a table
_WIDE_TABLE = (
    "## Citations\n\n| Path | Lines | Why |\n|:--|--:|---|\n| src/app.py | 1-2 | the imports |\n"
)
_SECTIONS = [_TABLE, _WIDE_TABLE, _OWN_LIST, _LINKS, _METADATA, "## Related\n\n- notes/near\n"]


@st.composite
def serena_files(draw: st.DrawFn, inline: bool = True) -> str:
    """A Serena file's text (LF); `inline`: it may hold an inline `[cite:...]` citation
    (part of the content: new content without it moves the citation to a table)."""
    parts = [draw(_lines) + "\n"]
    if inline and draw(st.booleans()):
        parts.append("See [cite:file](src/app.py:5) here.\n")  # an inline citation
    chosen = draw(st.lists(st.sampled_from(_SECTIONS), unique=True))
    cited = [section for section in chosen if section.startswith("## Citations")]
    chosen = [s for s in chosen if s not in cited[1:]]  # one section holds the citations
    for section in chosen:
        parts.append(draw(st.sampled_from(["", "\n"])) + section)
        if draw(st.booleans()):
            parts.append(draw(_lines) + "\n")  # prose after a managed section
    text = "".join(parts) + draw(_blank_run)
    if draw(st.booleans()):
        text = text[:-1]  # no final newline, as Serena writes its memories
    return text


def _encoded(texts: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    return st.builds(_bytes, texts, st.booleans(), st.booleans())


_frontmatter = frontmatter_files()
any_file = _encoded(_frontmatter.map(lambda f: f[0]) | serena_files())

# -- the edits -----------------------------------------------------------------------


def _save(data: bytes, change: Change) -> bytes:
    """The bytes after one edit, as the store writes them: decoded, parsed, rendered
    with the memory `change` returns, encoded back."""
    decoded = decode("notes/memory.md", data)
    doc = formats.parse_text("notes/memory", decoded.text)
    return decoded.encode(formats.by_name(doc.memory.format).render(doc, change(doc.memory)))


def _meta(**changes: object) -> Change:
    return lambda m: replace(m, meta=replace(m.meta, **changes))


_NEW = Citation("src/new.py", 7)
EDITS: dict[str, Change] = {
    "nothing": lambda m: m,
    "tags": _meta(tags=("z", "y")),
    "source": _meta(source="cli"),
    "confidence": _meta(confidence=0.5),
    "last verified": lambda m: replace(m, meta=replace(m.meta, last_verified=m.meta.created_at)),
    "add citation": lambda m: replace(m, meta=replace(m.meta, citations=(*m.meta.citations, _NEW))),
    "remove citations": _meta(citations=()),
    "add link": lambda m: replace(m, links=(*(m.links or ()), Link("notes/far", "link"))),
    "content": lambda m: replace(m, content="New text.\n\n## Notes\n\nMore."),
}


# -- (a) ------------------------------------------------------------------------------


@PROPERTY
@given(any_file)
def test_saving_a_memory_file_unchanged_gives_the_same_bytes(data: bytes) -> None:
    assert _save(data, EDITS["nothing"]) == data


# -- (b) ------------------------------------------------------------------------------


@PROPERTY
@given(any_file)
def test_adding_then_removing_a_citation_gives_the_same_bytes(data: bytes) -> None:
    added = _save(data, EDITS["add citation"])
    decoded = decode("notes/memory.md", added)
    assert (
        formats.parse_text("notes/memory", decoded.text).memory.meta.citations[-1].ref == _NEW.ref
    )
    removed = _save(
        added, lambda m: replace(m, meta=replace(m.meta, citations=m.meta.citations[:-1]))
    )
    assert removed == data


# -- (c) ------------------------------------------------------------------------------


def _split_body(text: str) -> tuple[str, str, str, str]:
    """A frontmatter file as (frontmatter, blank lines before the content, content,
    blank lines after)."""
    doc = formats.parse_text("notes/memory", text)
    assert isinstance(doc, FrontmatterDocument)
    head, body = "".join(doc.lines[: doc.close + 1]), "".join(doc.lines[doc.close + 1 :])
    lines = body.split("\n")
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    end = len(lines)
    while end > start and not lines[end - 1].strip():
        end -= 1
    before = "\n".join(lines[:start]) + ("\n" if start else "")
    after = ("\n" if end < len(lines) else "") + "\n".join(lines[end:])
    return head, before, "\n".join(lines[start:end]), after


@PROPERTY
@given(_frontmatter, st.sampled_from(["New text.", "# Only\n\n## Headings", "One\n\n\tTwo"]))
def test_new_content_of_a_frontmatter_file_changes_nothing_outside_its_content(
    file: tuple[str, list[str]], content: str
) -> None:
    text, _ = file
    edited = _save(text.encode(), lambda m: replace(m, content=content)).decode()
    head, before, old, after = _split_body(text)
    new_head, new_before, new, new_after = _split_body(edited)
    # (A file that ends at its closing `---` gets a newline after it, before the content.)
    assert new_head.removesuffix("\n") == head.removesuffix("\n")
    assert new == content
    if old:  # an empty body has no blank lines around content to keep
        assert (new_before, new_after) == (before, after)
    assert edited.endswith("\n") == text.endswith("\n")


def _managed(text: str) -> list[str]:
    """The managed sections' texts, in order, each without the blank lines at its end (a
    section last in the file runs to its end, over the file's own blank lines)."""
    doc = formats.parse_text("notes/memory", text)
    assert isinstance(doc, SerenaDocument)
    sections = [doc.section(key) for key in ("citations", "links", "metadata")]
    spans = sorted((s.start, s.end) for s in sections if s is not None)
    return ["".join(doc.lines[start:end]).rstrip() for start, end in spans]


@PROPERTY
@given(
    serena_files(inline=False),
    st.sampled_from(["New text.", "# Only\n\n## Headings", "One\n\n\tTwo"]),
)
def test_new_content_of_a_serena_file_keeps_its_managed_sections_and_their_values(
    text: str, content: str
) -> None:
    edited = _save(text.encode(), lambda m: replace(m, content=content)).decode()
    before = formats.parse_text("notes/memory", text).memory
    after = formats.parse_text("notes/memory", edited).memory
    assert after.content == content
    assert after.meta == before.meta
    assert _managed(edited) == _managed(text)
    assert edited.endswith("\n") == text.endswith("\n")


# -- (d) ------------------------------------------------------------------------------


@PROPERTY
@given(_frontmatter, st.sampled_from(sorted(EDITS)), st.booleans())
def test_unknown_frontmatter_keys_keep_their_lines_and_order_through_any_edit(
    file: tuple[str, list[str]], edit: str, crlf: bool
) -> None:
    text, unknown = file
    data = _bytes(text, crlf, bom=False)
    edited = decode("notes/memory.md", _save(data, EDITS[edit])).text
    head = _split_body(edited)[0]
    at = 0
    for lines in sorted(unknown, key=text.index):
        found = head.find(lines.rstrip("\n"), at)
        assert found >= at, (lines, head)
        at = found + len(lines.rstrip("\n"))
    assert "# a comment line\n" in head
    old = formats.parse_text("notes/memory", text).memory.meta.extra
    assert formats.parse_text("notes/memory", edited).memory.meta.extra == old


@PROPERTY
@given(serena_files(), st.sampled_from(sorted(EDITS)))
def test_an_unknown_serena_metadata_bullet_survives_any_edit(text: str, edit: str) -> None:
    edited = _save(text.encode(), EDITS[edit]).decode()
    if "**Owner**" in text:
        assert "- **Owner**: bob  (kept)\n" in edited + "\n"
    old = formats.parse_text("notes/memory", text).memory.meta.extra
    assert formats.parse_text("notes/memory", edited).memory.meta.extra == old
