"""Work done per run, counted rather than timed: git calls, file reads, memories read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import Verdict
from memory_enhancement.store.disk import Loaded, Store
from memory_enhancement.verify.repo import Repository, SourceFile
from verify_support import GitRepo, numbered

FILES = 10
LINES = 40


def source(n: int) -> list[str]:
    """Distinct lines, plus `return None` repeated on lines 10 and 30 (history decides)."""
    lines = numbered(LINES, f"f{n}")
    lines[9] = lines[29] = "return None"
    return lines


def build(repo: GitRepo, memories: int, per_memory: int) -> None:
    """Memories citing ten files; then some files grow, one is renamed, one line changes."""
    for n in range(FILES):
        repo.write_lines(f"src/mod{n}.py", source(n))
    repo.commit("code")
    stamp = repo.stamp()
    for m in range(memories):
        citations = []
        for k in range(per_memory):
            n = (m * per_memory + k) % FILES
            line = 30 if k == 0 else 1 + (m + k) % LINES
            text = source(n)[line - 1]
            citations.append(Citation(f"src/mod{n}.py", line, snippet=text, verified=stamp))
        repo.memory(f"topic{m // 10}/memory{m}", citations)
    for n in range(0, FILES, 2):  # half the files grow at the top and the middle
        lines = source(n)
        repo.write_lines(f"src/mod{n}.py", ["# header", *lines[:20], "# note", *lines[20:]])
    repo.mv("src/mod1.py", "lib/mod1.py")
    changed = source(3)
    changed[4] = "f3_5 = 'changed'"
    repo.write_lines("src/mod3.py", changed)
    repo.commit("change")


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "project")


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often each cited file is read from disk."""
    counts: dict[str, int] = {}
    original = Repository._read

    def counting(self: Repository, rel: str) -> SourceFile:
        counts[rel] = counts.get(rel, 0) + 1
        return original(self, rel)

    monkeypatch.setattr(Repository, "_read", counting)
    return counts


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every memory file parsed (by a read, or by the index catching up)."""
    seen: list[str] = []
    original = Store.parse

    def counting(self: Store, path: str, data: bytes, stat: Any, **options: bool) -> Loaded:
        seen.append(path)
        return original(self, path, data, stat, **options)

    monkeypatch.setattr(Store, "parse", counting)
    return seen


def test_verifying_200_citations_calls_git_a_bounded_number_of_times(
    repo: GitRepo, reads: dict[str, int], loads: list[str]
) -> None:
    build(repo, memories=50, per_memory=4)
    service = repo.service()
    run = service.verify_all()
    assert len(run.results) == 50
    assert run.citations == 200
    assert run.count(Verdict.MOVED) > 50  # history was needed for many of them
    assert run.count(Verdict.STALE) >= 1
    assert service.git is not None
    assert service.git.calls <= 7
    assert max(reads.values()) == 1  # each cited file read once
    assert set(reads) == {f"src/mod{n}.py" for n in range(FILES)} | {"lib/mod1.py"}
    assert len(loads) == len(set(loads)) == 50  # each memory read once


def test_the_number_of_git_calls_does_not_grow_with_the_citations(repo: GitRepo) -> None:
    build(repo, memories=5, per_memory=4)
    small = repo.service()
    small.verify_all()
    for m in range(5, 60):
        repo.memory(f"more/memory{m}", [Citation("src/mod0.py", 30, snippet="return None",
                                                  verified=repo.stamp())])  # fmt: skip
    large = repo.service()
    large.verify_all()
    assert small.git is not None and large.git is not None
    # One more base commit: its tree listed (which cited files it had), then one diff.
    assert large.git.calls == small.git.calls + 2


def test_verifying_one_memory_reads_only_that_memory(repo: GitRepo, loads: list[str]) -> None:
    build(repo, memories=30, per_memory=2)
    service = repo.service()
    loads.clear()
    result = service.verify("topic1/memory12").results[0]
    assert len(result.checks) == 2
    assert loads == ["topic1/memory12"]
    assert service.git is not None
    assert service.git.calls <= 6
