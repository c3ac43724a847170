"""Real memory files from six public stores are saved back byte for byte.

`corpus/real-stores/` holds 18 files copied unchanged from Serena stores (English,
Japanese, Chinese, Russian; without a final newline, with tables, fences, trailing
spaces, an author's own `## Citations` and `## Related` sections), Yeseh/cortex's
frontmatter memories (block and flow style, citations, expiry) and Claude Code memory
folders (`name`/`description`/`type`, keys the tool does not know). Each repository's
folder names its source, commit and licence (MIT or BSD) beside the repository's
LICENSE. Every file is also tried with CRLF line endings, a byte order mark and no final
newline, the shapes Windows editors and Serena leave behind.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_enhancement.core.errors import MemoryToolError
from memory_enhancement.service import MemoryService
from memory_enhancement.store import formats
from memory_enhancement.store.disk import Store
from memory_enhancement.verify.repo import Repository

REAL = Path(__file__).resolve().parents[1] / "corpus" / "real-stores"
FILES = sorted(REAL.rglob("*.md"))
# The stores as their tools keep them: a folder of memories inside each repository copy.
STORES = (
    ".serena/memories",
    ".cortex/memory",
    ".cortex/memories",
    ".cortex/global",
    ".claude/memory",
)


def _variants(data: bytes) -> Iterator[tuple[str, bytes]]:
    bare = data.rstrip(b"\n")
    crlf = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    yield "as found", data
    yield "CRLF", crlf
    yield "BOM", b"\xef\xbb\xbf" + data
    yield "BOM and CRLF", b"\xef\xbb\xbf" + crlf
    yield (
        "no final newline" if data.endswith(b"\n") else "a final newline",
        (bare if data.endswith(b"\n") else data + b"\n"),
    )


def _stores() -> Iterator[Path]:
    for repo in sorted(p for p in REAL.iterdir() if p.is_dir()):
        for rel in STORES:
            if (repo / rel).is_dir():
                yield repo / rel


def test_the_real_store_sample_is_there_with_its_sources() -> None:
    assert len(FILES) == 18
    for repo in (p for p in REAL.iterdir() if p.is_dir()):
        assert (repo / "LICENSE").is_file()  # the licence's own text travels with the files
        source = (repo / "SOURCE.txt").read_text()
        assert "Source repository: https://github.com/" in source
        assert "MIT" in source or "BSD" in source
        for file in repo.rglob("*.md"):
            assert str(file.relative_to(repo)) in source


@pytest.mark.parametrize("file", FILES, ids=lambda p: str(p.relative_to(REAL)))
def test_a_save_without_a_change_gives_every_real_file_back_in_every_shape(file: Path) -> None:
    for shape, data in _variants(file.read_bytes()):
        decoded = formats.decode(str(file), data)
        fmt = formats.detect(decoded.text)
        doc = fmt.parse(str(file), decoded.text)
        assert decoded.encode(fmt.render(doc, doc.memory)) == data, shape


def _copy(tmp_path: Path, shape: str) -> list[tuple[Path, MemoryService]]:
    """Each real store copied (in one of its shapes) into a repository of its own."""
    out = []
    for n, store in enumerate(_stores()):
        repo = tmp_path / shape.replace(" ", "-") / str(n)
        target = repo / "memories"
        shutil.copytree(store, target)
        (repo / "src").mkdir()
        (repo / "src" / "app.py").write_text("".join(f"x{i} = {i}\n" for i in range(9)))
        for file in target.rglob("*.md"):
            file.write_bytes(dict(_variants(file.read_bytes()))[shape])
        out.append((target, MemoryService(Store(target), Repository(repo))))
    return out


SHAPES = ["as found", "CRLF", "BOM and CRLF"]


@pytest.mark.parametrize("shape", SHAPES)
def test_updates_that_change_nothing_leave_every_real_file_identical(
    tmp_path: Path, shape: str
) -> None:
    for folder, service in _copy(tmp_path, shape):
        for path in Store(folder).iter_paths():
            before = (folder / f"{path}.md").read_bytes()
            memory = service.get(path, include_expired=True, action=None).memory
            service.update(path, content=memory.content, tags=list(memory.meta.tags))
            assert (folder / f"{path}.md").read_bytes() == before, (shape, path)


def _differs_only_in_updated(before: bytes, after: bytes) -> bool:
    old, new = before.splitlines(), after.splitlines()
    changed = [(a, b) for a, b in zip(old, new, strict=False) if a != b]
    stamps = (b"updated_at:", b"- **Updated**:")
    same_shape = len(old) == len(new) and before.endswith(b"\n") == after.endswith(b"\n")
    return same_shape and all(a.startswith(stamps) and b.startswith(stamps) for a, b in changed)


@pytest.mark.parametrize("shape", SHAPES)
def test_adding_then_removing_a_citation_gives_every_real_file_back(
    tmp_path: Path, shape: str
) -> None:
    """Byte for byte, but for the time of the last update in files that record one; the
    frontmatter written as one flow mapping cannot be edited in place and stays as it was."""
    for folder, service in _copy(tmp_path, shape):
        for path in Store(folder).iter_paths():
            file = folder / f"{path}.md"
            before = file.read_bytes()
            try:
                service.add_citation(path, "src/app.py:3")
            except MemoryToolError as exc:
                assert "not written one per line" in str(exc)
                assert file.read_bytes() == before
                continue
            service.remove_citation(path, "src/app.py:3")
            after = file.read_bytes()
            assert after == before or _differs_only_in_updated(before, after), (shape, path)
