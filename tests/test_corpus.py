"""The real corpus of 1,026 Serena memories is a fixture: every file loads, nothing is lost."""

from __future__ import annotations

import difflib
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import CORPUS
from memory_enhancement.core.model import Citation, LinkKind, Memory
from memory_enhancement.service import MemoryService
from memory_enhancement.store import formats
from memory_enhancement.store.disk import Loaded, Store
from memory_enhancement.store.formats.frontmatter import FrontmatterDocument
from memory_enhancement.store.formats.markdown import (
    Section,
    find_sections,
    first_section,
    open_fence,
)
from memory_enhancement.verify.repo import Repository

CORPUS_SIZE = 1026


def _all(store: Store) -> list[str]:
    paths = list(store.iter_paths())
    assert len(paths) == CORPUS_SIZE
    return paths


@pytest.fixture(scope="module")
def loaded(corpus: Path) -> dict[str, Loaded]:
    """Every corpus file read and parsed once (links included), by memory path."""
    store = Store(corpus)
    return {path: store.read(path) for path in _all(store)}


def test_every_corpus_file_loads_with_its_format_detected(loaded: dict[str, Loaded]) -> None:
    counts: Counter[str] = Counter()
    for path, file in loaded.items():
        memory = file.doc.memory
        counts[memory.format] += 1
        assert memory.content.strip(), path
        assert memory.meta.citations is not None
    assert counts == {"serena": CORPUS_SIZE - 4, "frontmatter": 4}


def test_every_corpus_file_is_found_by_its_path_as_on_disk(corpus: Path) -> None:
    store = Store(corpus)
    assert store.locate("README") == "README"
    assert store.locate("pr-review/pr-review-batch-response-pattern.md") == (
        "pr-review/pr-review-batch-response-pattern"
    )


def test_the_links_of_the_corpus_are_extracted(loaded: dict[str, Loaded]) -> None:
    links = {path: file.doc.memory.links or () for path, file in loaded.items()}
    kinds = Counter(link.kind for found in links.values() for link in found)
    assert sum(kinds.values()) > 3000
    assert kinds[LinkKind.MARKDOWN] > 3000
    assert kinds[LinkKind.WIKI] >= 30
    assert kinds[LinkKind.FRONTMATTER] >= 5
    assert kinds[LinkKind.BARE] >= 1

    def targets(path: str) -> list[tuple[str, str]]:
        return [(link.target, link.type) for link in links[path]]

    assert targets("retrospective/learnings-2026-01")[:2] == [
        ("adr-artifact-count-verification", "link"),
        ("powershell-variable-shadowing-detection", "link"),
    ]
    assert ("skills-coderabbit-learnings.md", "related") not in targets(
        "skills/skills-coderabbit-learnings"
    )
    assert ("skills-analysis-index.md", "related") in targets("skills/skills-coderabbit-learnings")
    assert ("skills-orchestration-index", "related") in targets("claude/claude-code-agent-teams")
    assert ("REQ-011", "related") in targets(
        "implementation/implementation-009-req011-tdd-first-shipment"
    )
    # The README's example index tables sit in code fences: examples, not links.
    assert ("subdir/memory-name.md", "link") not in targets("README")


def test_the_corpus_frontmatter_citations_are_read(loaded: dict[str, Loaded]) -> None:
    memory = loaded["testing/test-citation-verification"].doc.memory
    assert [(c.ref, c.snippet) for c in memory.meta.citations] == [
        ("pyproject.toml:1", "[project]"),
        ("scripts/memory_enhancement/models.py:38", "class LinkType"),
    ]
    assert memory.meta.tags == ("testing", "phase1")
    assert memory.meta.extra["id"] == "test-citation-verification"


def test_a_no_op_save_leaves_every_corpus_file_byte_identical(
    corpus: Path, loaded: dict[str, Loaded]
) -> None:
    for path, file in loaded.items():
        fmt = formats.by_name(file.doc.memory.format)
        text = fmt.render(file.doc, file.doc.memory)
        original = (corpus / f"{path}.md").read_bytes()
        assert file.decoded.encode(text) == original, path


def _outside(lines: list[str], section: Section | None) -> list[str]:
    if section is None:
        return lines
    return lines[: section.start] + lines[section.end :]


def _strip_trailing_blanks(lines: list[str]) -> list[str]:
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _section(text: str, key: str) -> Section | None:
    return first_section(find_sections(text.splitlines()), key)


# Files whose edits need the most care: frontmatter ones, and serena ones that end
# inside an unclosed code fence (the fence is closed before a section is appended).
SPECIAL = [
    "implementation/implementation-008-spec-schema-validation",
    "implementation/implementation-009-req011-tdd-first-shipment",
    "validation/validation-frontmatter-gate-parity",
    "testing/test-citation-verification",
    "process/maintenance-003-homework-automation-justification",
    "prompting/prompt-engineering-merge-conflict-analysis",
    "skills/skills-coderabbit-learnings",
    "README",
]

Change = Callable[[Memory], Memory]


class Editor:
    """Edits corpus memories and returns (memory after, file text after).

    `format` renders every file in memory from the shared parse; `service` writes
    a sample through the service on a copy of the corpus (each write also
    refreshes the store's index, which makes it the slower path).
    """

    def __init__(self, via: str, loaded: dict[str, Loaded], tmp_path: Path) -> None:
        self.via = via
        self.loaded = loaded
        if via == "service":
            copy = tmp_path / "corpus"
            shutil.copytree(CORPUS, copy)
            code = tmp_path / "code"
            code.mkdir()
            self.service = MemoryService(Store(copy), Repository(code))

    def paths(self) -> list[str]:
        paths = sorted(self.loaded)
        return paths if self.via == "format" else sorted({*paths[::100], *SPECIAL})

    def set_tags(self, path: str, tags: tuple[str, ...]) -> tuple[Memory, str]:
        if self.via == "service":
            return self._written(self.service.update(path, tags=list(tags)).memory)
        return self._render(path, lambda m: replace(m, meta=replace(m.meta, tags=tags)))

    def cite(self, path: str, citation: Citation) -> tuple[Memory, str]:
        if self.via == "service":
            result = self.service.add_citation(path, citation.ref, snippet=citation.snippet)
            return self._written(result.memory)
        return self._render(
            path,
            lambda m: replace(m, meta=replace(m.meta, citations=(*m.meta.citations, citation))),
        )

    def _render(self, path: str, change: Change) -> tuple[Memory, str]:
        doc = self.loaded[path].doc
        text = formats.by_name(doc.memory.format).render(doc, change(doc.memory))
        return formats.parse_text(path, text, links=False).memory, text

    def _written(self, memory: Memory) -> tuple[Memory, str]:
        file = self.service.store.file_for(memory.path)
        return memory, file.read_text(encoding="utf-8")


@pytest.fixture(params=["format", "service"])
def editor(request: pytest.FixtureRequest, loaded: dict[str, Loaded], tmp_path: Path) -> Editor:
    return Editor(request.param, loaded, tmp_path)


def test_updating_tags_on_corpus_files_changes_only_their_metadata(
    editor: Editor, corpus: Path
) -> None:
    for path in editor.paths():
        before = (corpus / f"{path}.md").read_text(encoding="utf-8")
        memory, after = editor.set_tags(path, ("corpus-test", "edited"))
        assert memory.meta.tags == ("corpus-test", "edited"), path
        if memory.format == "frontmatter":
            _assert_only_keys_changed(path, before, after, {"tags", "updated_at"})
            continue
        old, new = before.splitlines(), after.splitlines()
        new_meta = _section(after, "metadata")
        assert new_meta is not None, path
        assert any("**Tags**: corpus-test, edited" in line for line in new[new_meta.start :])
        kept = _outside(old, _section(before, "metadata"))
        fence = open_fence(before.splitlines(keepends=True))
        if fence:  # a file ending inside a code fence gets it closed before the new section
            kept = [*_strip_trailing_blanks(kept), fence]
        assert _strip_trailing_blanks(_outside(new, new_meta)) == _strip_trailing_blanks(kept), path
        content = formats.parse_text(path, before, links=False).memory.content
        assert memory.content == content + (f"\n{fence}" if fence else "")


def _assert_only_keys_changed(path: str, before: str, after: str, keys: set[str]) -> None:
    old_doc = formats.parse_text(path, before, links=False)
    new_doc = formats.parse_text(path, after, links=False)
    assert isinstance(old_doc, FrontmatterDocument)
    assert isinstance(new_doc, FrontmatterDocument)
    assert {k: v for k, v in old_doc.data.items() if k not in keys} == {
        k: v for k, v in new_doc.data.items() if k not in keys
    }
    old_lines = _key_lines(old_doc, keys)
    new_lines = _key_lines(new_doc, keys)
    a, b = before.splitlines(), after.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag == "equal":
            continue
        assert set(range(i1, i2)) <= old_lines, (path, a[i1:i2])
        assert set(range(j1, j2)) <= new_lines, (path, b[j1:j2])


def _key_lines(doc: FrontmatterDocument, keys: set[str]) -> set[int]:
    return {
        i
        for key in keys
        if key in doc.blocks
        for i in range(doc.blocks[key].start, doc.blocks[key].end)
    }


def test_adding_a_citation_to_corpus_files_changes_only_their_citations(
    editor: Editor, corpus: Path
) -> None:
    citation = Citation("docs/guide.md", 3, snippet="a | b")
    for path in editor.paths():
        before = (corpus / f"{path}.md").read_text(encoding="utf-8")
        memory, after = editor.cite(path, citation)
        assert memory.meta.citations[-1].ref == "docs/guide.md:3", path
        assert memory.meta.citations[-1].snippet == "a | b", path
        if memory.format == "frontmatter":
            _assert_only_keys_changed(path, before, after, {"citations", "updated_at"})
            continue
        a, b = before.splitlines(), after.splitlines()
        section = _section(after, "citations")
        assert section is not None, path
        inside = set(range(section.start, section.end))
        fence = open_fence(before.splitlines(keepends=True))
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
            if tag == "equal":
                continue
            assert tag == "insert", (path, tag)
            for j in range(j1, j2):
                closing = bool(fence) and b[j] == fence
                assert j in inside or not b[j].strip() or closing, (path, b[j])
        assert "| docs/guide.md | 3 | `a \\| b` |" in after
