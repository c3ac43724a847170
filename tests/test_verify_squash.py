"""The squashed text computed on the bytes is, line by line, what `squash` makes of each line.

Verification compares snippets with cited lines whitespace aside. For speed the
repository squashes a whole file at once on its bytes (`repo.squashed_text`);
these tests hold it to the per-line rule for every kind of whitespace Python
knows, line endings, invalid UTF-8 and empty files.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memory_enhancement.core.citations import squash
from memory_enhancement.core.model import Citation
from memory_enhancement.verify.file_text import FileText
from memory_enhancement.verify.repo import Repository, squashed_text
from memory_enhancement.verify.verifier import Verifier

SPACES = [chr(n) for n in range(0x110000) if chr(n).isspace()]
PIECES = ["x", "= 1", "def f():", "é", "日本", "\ufffd", "—", "“q”", *SPACES, "\r\n", "\n"]


def per_line(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [squash(line.rstrip("\r")) for line in lines]


def via_repo(tmp_path: Path, data: bytes) -> list[str]:
    (tmp_path / "f.txt").write_bytes(data)
    repo = Repository(tmp_path)
    source = repo.read("f.txt")
    return FileText(source).lines


@pytest.mark.parametrize("seed", range(40))
def test_random_texts_squash_alike_either_way(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 200)))
    data = text.encode("utf-8", "surrogatepass")
    assert via_repo(tmp_path, data) == per_line(data.decode("utf-8", "replace"))


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n",
        b"a\n\n",
        b"  x = 1  \r\n\ty=2",
        b"a\x1cb\x1dc\x1ed\x1ff\x0bg\x0ch\n",
        "non\u00a0breaking\u2028and\u3000wide\n".encode(),
        b"bad \xff\xfe bytes\n x = 1\n",
        b"\xe2\x80 split\n",
    ],
)
def test_edge_cases_squash_alike_either_way(tmp_path: Path, data: bytes) -> None:
    assert via_repo(tmp_path, data) == per_line(data.decode("utf-8", "replace"))


def test_the_fast_way_is_taken_for_plain_text_and_not_for_unicode_spaces() -> None:
    plain = "  x = 1\n\ty = 2\n"
    assert squashed_text(plain.encode(), plain) == "x=1\ny=2\n"
    spaced = "x\u00a0= 1\n"
    assert squashed_text(spaced.encode(), spaced) is None


def test_a_duplicate_line_with_other_spacing_is_still_a_copy(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\nx=1\n", encoding="utf-8")
    repo = Repository(tmp_path)
    check = Verifier(repo).check(Citation("a.py", 1, snippet="x = 1"))
    assert check.status.value == "valid"
    for cited in (1, 100):  # lines counted one question at a time, or all at once
        text = FileText(repo.read("a.py"), cited)
        assert text.how_many("x=1") == 2  # said on line 1, and on line 3 with other spacing
        assert text.how_many("y=2") == 1


def test_the_unicode_whitespace_checked_is_all_that_python_calls_whitespace() -> None:
    from memory_enhancement.verify.repo import _UNICODE_SPACE

    assert sorted(_UNICODE_SPACE) == [ch for ch in SPACES if not ch.isascii()]
