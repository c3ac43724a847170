"""Hybrid search puts the memories that restate its first result right after it (issue 13).

With the real ONNX model and a real index: two memories saying the same thing about a CI
cache, a third on the same topic that matches the question's words better than the second
one does, and unrelated memories around them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Clock
from index_support import disk_service, paths, write_memory
from memory_enhancement.index import hybrid, semantic
from memory_enhancement.index.rows import Row
from memory_enhancement.index.search import FETCH, Filters, Hit, fuse, hybrid_lexical, near_first
from memory_enhancement.service import MemoryService

MEMORIES = {
    "ci/cache-key": (
        "Key the CI cache on the lockfile",
        "Key the CI cache on a hash of the lockfile: then a dependency bump changes the key "
        "and the stale cache is not restored.",
    ),
    "ci/cache-key-again": (
        "CI cache keyed on the lockfile hash",
        "Use a hash of the lockfile as the CI cache key: a dependency update then gives a new "
        "key, and no stale cache comes back.",
    ),
    "ci/cache-size": (
        "CI cache size limit",
        "The CI cache holds at most 10 GB per repository; when it is full the oldest cache "
        "entries are evicted and a restore after a dependency bump may find nothing, so the "
        "job downloads every package again.",
    ),
    "food/lunch": ("Lunch", "The cafeteria serves pasta and salad on Fridays."),
    "garage/vehicles": (
        "Vehicles",
        "Our fleet of cars is parked in the garage; each car is serviced yearly.",
    ),
    "ops/oncall": ("On call", "The on-call engineer answers pages within fifteen minutes."),
}
JAPANESE = {
    "ja/lunch": ("昼食", "社員食堂では金曜日にパスタとサラダを出している。予約は不要。"),
    "ja/rooms": ("会議室", "会議室の予約は前日までに総務に連絡すること。備品は三階にある。"),
}
QUESTION = "stale packages restored from the CI cache after a dependency bump"


@pytest.fixture
def service(store_dir: Path, git_repo: Path, tmp_path: Path, clock: Clock) -> MemoryService:
    for path, (title, body) in {**MEMORIES, **JAPANESE}.items():
        write_memory(store_dir, path, body, title=title)
    service = disk_service(store_dir, git_repo, tmp_path, clock=clock)
    service.embed()
    return service


@pytest.mark.semantic
def test_the_memory_restating_the_first_result_comes_right_after_it(
    service: MemoryService,
) -> None:
    model = semantic.embedder()
    everything = Filters(include_expired=True, now="")
    with service.index.connect() as conn:
        words = hybrid_lexical(conn, QUESTION, everything)
        meaning = semantic.semantic_search(conn, model, QUESTION, everything, FETCH)
    fused = [h.row.path for h in fuse(words, meaning, limit=10, weight=0.5)]
    # The fusion alone puts the other cache memory between the two that say the same.
    assert fused[:3] == ["ci/cache-key", "ci/cache-size", "ci/cache-key-again"]
    found = service.search(QUESTION, mode="hybrid")
    assert paths(found)[:3] == ["ci/cache-key", "ci/cache-key-again", "ci/cache-size"]
    moved = found[1].hit
    # It keeps its own score and ranks: the order says it restates the first, not its words.
    assert moved.score < found[2].hit.score
    assert moved.lexical_rank is not None and moved.semantic_rank is not None


@pytest.mark.semantic
def test_near_duplicates_are_the_closest_readable_memories_above_the_threshold(
    service: MemoryService,
) -> None:
    name = semantic.embedder().name
    others = ["ci/cache-size", "ci/cache-key-again", "food/lunch", "ja/lunch", "nowhere/x"]
    with service.index.connect() as conn:
        assert hybrid.near_duplicates(conn, name, "ci/cache-key", others) == ["ci/cache-key-again"]
        # Lower the bar and the topic's other memory joins, after the closer one; the
        # unrelated one stays out, and so does a memory the index does not hold.
        loose = hybrid.near_duplicates(conn, name, "ci/cache-key", others, threshold=0.3)
        assert loose == ["ci/cache-key-again", "ci/cache-size"]
        assert hybrid.near_duplicates(conn, name, "ci/cache-key", others, most=1) == [
            "ci/cache-key-again"
        ]
        # Memories in Japanese are nobody's duplicates, however alike the model finds them
        # (trained on English, how alike two Japanese texts look to it says little).
        assert hybrid.near_duplicates(conn, name, "ja/lunch", ["ja/rooms"], threshold=0.0) == []
        assert "ja/lunch" not in hybrid.near_duplicates(
            conn, name, "food/lunch", ["ja/lunch"], threshold=-1.0
        )
        assert hybrid.near_duplicates(conn, name, "ci/cache-key", []) == []


@pytest.mark.semantic
def test_a_query_of_one_word_keeps_the_order_of_its_words(service: MemoryService) -> None:
    # `bump` is in the first cache memory and in the size limit's, not in its restatement.
    words = paths(service.search("bump", mode="lexical"))
    assert words == ["ci/cache-key", "ci/cache-size"]
    assert paths(service.search("bump", mode="hybrid"))[:2] == words


def _hit(path: str, score: float) -> Hit:
    row = Row(path, path, "frontmatter", (), None, None, None, None, 0, "abc123", 0)
    return Hit(row, score, path)


def test_near_first_moves_the_named_hits_behind_the_first_in_the_order_given() -> None:
    hits = [_hit(p, s) for p, s in [("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6), ("e", 0.5)]]
    moved = near_first(hits, ["e", "gone", "c"])
    assert [h.row.path for h in moved] == ["a", "e", "c", "b", "d"]
    assert [h.score for h in moved] == [0.9, 0.5, 0.7, 0.8, 0.6]
    assert near_first(hits, []) == hits
    assert near_first([], ["a"]) == []
