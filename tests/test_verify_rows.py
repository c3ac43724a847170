"""A batch judged on its index rows says what each citation judged on its own says.

`Verifier.verify_batch` settles the common cases on the rows (no `Citation` built) and
sends the rest the full way; `Verifier.check` always takes the full way. Both must
give the same verdict, where and why, for any text and any citation, with and without
git history; and the bounded search that decides "does the snippet start on the cited
line" must agree with the search of the whole file it stands in for.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_enhancement.core.batch import CitedBatch
from memory_enhancement.core.batch_verdicts import BatchVerdicts
from memory_enhancement.core.model import Citation, Memory, MemoryMeta
from memory_enhancement.core.verdicts import CitationCheck
from memory_enhancement.verify.file_text import FileText
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.repo import Repository
from memory_enhancement.verify.verifier import Verifier
from verify_support import GitRepo

# Lines that repeat, differ only in spacing, or hold one another at token boundaries.
PIECES = ["x = 1", "x=1", "  x = 1", "x = 12", "y = 2", "def f():", "return x", "return xyz",
          "", "# note", "x = 1  # again", "z"]  # fmt: skip


def lines_of(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(PIECES) for _ in range(count)]


def citations_for(seed: int, lines: list[str], count: int) -> list[Citation]:
    rng = random.Random(seed + 1)
    out = []
    for _ in range(count):
        line = rng.randint(1, len(lines) + 2)
        span = rng.choice([1, 1, 1, 2, 3])
        end = None if span == 1 else line + span - 1
        source = lines[(line - 1) % len(lines)] if lines else "x"
        snippet = rng.choice([source, source.strip()[:4], "x = 1", "x = 1 y = 2", "zz", ""])
        out.append(Citation("f.py", line, end, snippet or None, "2024-01-01"))
    return out


def verdict(check: CitationCheck) -> tuple[object, ...]:
    return (check.status, check.current_path, check.current_line, check.reason)


def both_ways(repo: Repository, git: Git | None, citations: list[Citation]) -> None:
    memory = Memory("m", "", MemoryMeta(citations=tuple(citations)), None)
    batch = CitedBatch.of([(memory, (), None)])
    valid, checks = Verifier(repo, git).verify_batch(batch)
    for k, citation in enumerate(citations):
        alone = Verifier(repo, git).check(citation)
        if valid[k]:
            assert (alone.status.value, alone.current_path, alone.current_line, alone.reason) == (
                "valid", "f.py", citation.line, ""
            ), citation  # fmt: skip
        else:
            assert verdict(checks[k]) == verdict(alone), citation


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), count=st.integers(1, 25))
def test_rows_and_objects_agree_without_history(tmp_path_factory, seed: int, count: int) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("rows")
    lines = lines_of(seed, count)
    (root / "f.py").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    both_ways(Repository(root), None, citations_for(seed, lines, 12))


def test_rows_and_objects_agree_with_history(tmp_path: Path) -> None:
    """Citations stamped after a commit, the file edited since: moved lines, copies,
    lines that merely hold the snippet, all judged with git's diff."""
    for seed in range(12):
        repo = GitRepo(tmp_path / f"project{seed}")
        lines = lines_of(seed, 20)
        repo.write_lines("f.py", lines)
        repo.commit("first")
        stamp = repo.stamp()
        edited = lines_of(seed + 100, 3) + lines[:10] + lines_of(seed + 200, 2) + lines[10:]
        repo.write_lines("f.py", edited)
        repo.commit("edit")
        since_edit = repo.stamp()  # citations of the file as it is now: no diff since
        stamped = [
            *(replace(c, verified=stamp) for c in citations_for(seed, lines, 15)),
            *(replace(c, verified=since_edit) for c in citations_for(seed + 7, edited, 15)),
        ]
        both_ways(Repository(repo.root), Git.discover(repo.root), stamped)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10**6), count=st.integers(1, 30), span=st.integers(1, 4))
def test_the_bounded_search_finds_what_the_whole_search_finds(
    tmp_path_factory,
    seed: int,
    count: int,
    span: int,  # type: ignore[no-untyped-def]
) -> None:
    root = tmp_path_factory.mktemp("starts")
    lines = lines_of(seed, count)
    (root / "f.py").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    text = FileText(Repository(root).read("f.py"))
    rng = random.Random(seed)
    for _ in range(10):
        at = rng.randint(0, max(0, len(text.joined) - 1))
        wanted = text.joined[at : at + rng.randint(1, 12)] or "x"
        found = text.occurrences(wanted, span)
        for line in range(0, count + 3):
            assert text.starts_on(line, span, wanted) == (line in found), (line, span, wanted)


def test_a_settled_memory_is_compared_in_the_text_its_verdicts_would_give(
    tmp_path: Path,
) -> None:
    """The history compares a memory's verdicts as `repr` of their plain values; for a
    memory whose citations all hold that text is written from the rows, and must be the
    same text, whatever the path holds (quotes, backslashes, non-ASCII)."""
    names = ["plain.py", "it's.py", 'say "hi".py', "back\\slash.py", "日本.py"]
    for name in names:
        (tmp_path / name).write_text("x = 1\ny = 2\n", encoding="utf-8")
    citations = [Citation(name, 1, None, "x = 1") for name in names]
    citations += [Citation(name, 1, 2, "x = 1 y = 2") for name in names]
    memory = Memory("m", "", MemoryMeta(citations=tuple(citations)), None)
    batch = CitedBatch.of([(memory, (), None)])
    valid, checks = Verifier(Repository(tmp_path)).verify_batch(batch)
    results = BatchVerdicts(batch, valid, checks, {}, "")
    assert results.settled(0) is not None  # every citation holds: written from the rows
    text, statuses = results.compared(0)
    assert text == repr(results.seen(0))
    assert statuses == ["valid"] * len(citations)
