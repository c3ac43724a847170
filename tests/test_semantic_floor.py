"""Hybrid search leaves out what only the model found, and found weakly (issue 13, session 37).

The semantic side ranks every memory of a store, however unlike the question, so in a
small store hybrid listed every memory after the right one; and a Korean question, which
the model cannot read, listed the others at score 0. With the real ONNX model and a real
index: five memories on unrelated topics, one of them in Korean.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Clock
from index_support import FOUR_TOPICS, disk_service, write_memory
from memory_enhancement.index.rows import Row
from memory_enhancement.index.search import SEMANTIC_FLOOR, Hit, above_floor
from memory_enhancement.service import MemoryService

MEMORIES = {
    **FOUR_TOPICS,
    "ko/cache": ("캐시 설정", "캐시는 Redis에 저장하고 만료 시간은 10분으로 설정한다."),
}


@pytest.fixture
def service(store_dir: Path, git_repo: Path, tmp_path: Path, clock: Clock) -> MemoryService:
    for path, (title, body) in MEMORIES.items():
        write_memory(store_dir, path, body, title=title)
    service = disk_service(store_dir, git_repo, tmp_path, clock=clock)
    service.embed()
    return service


def _found(service: MemoryService, query: str, mode: str = "hybrid") -> list[str]:
    return [r.hit.row.path for r in service.search(query, mode=mode, limit=10)]


@pytest.mark.semantic
def test_a_question_its_words_answer_lists_only_that_memory(service: MemoryService) -> None:
    question = "where is the customer id index for orders kept"
    assert _found(service, question) == ["db/orders"]
    # The semantic mode, asked for by name, still ranks every memory.
    assert len(_found(service, question, mode="semantic")) == len(MEMORIES)


@pytest.mark.semantic
def test_a_korean_question_lists_only_what_its_words_find(service: MemoryService) -> None:
    assert _found(service, "캐시 만료 시간") == ["ko/cache"]


@pytest.mark.semantic
def test_a_memory_only_the_model_finds_is_listed_when_it_finds_it_clearly(
    service: MemoryService,
) -> None:
    # No word of the question is in any memory; the model finds the garage at about
    # 0.5 and every other memory below 0.2.
    results = service.search("automobile upkeep", mode="hybrid", limit=10)
    assert [r.hit.row.path for r in results] == ["garage/vehicles"]
    assert results[0].hit.lexical_rank is None and results[0].hit.semantic_rank == 1
    # A query of no word at all is still embedded; nothing is like a lone car emoji.
    assert _found(service, "🚗") == []


def _hit(path: str, score: float, cjk: float = 0.0, **ranks: int) -> Hit:
    row = Row(path, path, "frontmatter", (), None, None, None, None, 0, "abc123", 0)
    return Hit(row, score, path, cjk=cjk, **ranks)


def test_the_floor_counts_the_cosine_for_what_the_model_reads() -> None:
    fused = [
        _hit("words", 1.0, lexical_rank=1),
        _hit("clear", 0.8, semantic_rank=1),
        _hit("half-cjk", 0.5, semantic_rank=2),
        _hit("weak", 0.3, semantic_rank=3),
    ]
    meaning = [
        _hit("clear", 0.6),
        _hit("half-cjk", 0.6, cjk=0.5),  # 0.3 of it read
        _hit("weak", SEMANTIC_FLOOR - 0.01),
        _hit("words", 0.1),  # the words found it: kept whatever its cosine
    ]
    assert [h.row.path for h in above_floor(fused, meaning, 0.0)] == ["words", "clear"]
    # A query half in CJK: 0.6 counts as 0.3.
    assert [h.row.path for h in above_floor(fused, meaning, 0.5)] == ["words"]
    assert [h.row.path for h in above_floor(fused, meaning, 0.0, floor=0.29)] == [
        "words", "clear", "half-cjk", "weak",
    ]  # fmt: skip
