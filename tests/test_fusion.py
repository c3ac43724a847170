"""How hybrid search mixes its two lists (`search.fuse`, issue 13, session 27).

Each list is measured from its floor in standard deviations of its own scores, not
stretched to [0, 1]: when the model finds nothing much like the question, its cosines
lie close together, and stretching that noise to the full range let memories only the
model found outvote the second clear hit of the words (docs/benchmarks.md). Pure
functions over made-up hits: no index, no model.
"""

from __future__ import annotations

import pytest

from memory_enhancement.index.rows import Row
from memory_enhancement.index.search import Hit, fuse


def _hit(path: str, score: float, **ranks: int) -> Hit:
    row = Row(path, path, "frontmatter", (), None, None, None, None, 0, "abc123", 0)
    return Hit(row, score, path, **ranks)


def _words(*scored: tuple[str, float]) -> list[Hit]:
    return [_hit(p, s, lexical_rank=n) for n, (p, s) in enumerate(scored, start=1)]


def _meaning(*scored: tuple[str, float]) -> list[Hit]:
    return [_hit(p, s, semantic_rank=n) for n, (p, s) in enumerate(scored, start=1)]


def test_a_flat_semantic_list_does_not_outvote_the_second_clear_hit_of_the_words() -> None:
    # The words find `lsp-guards` far ahead and `lsp-enforcement` clearly second, then 48
    # memories sharing a common word; the model is unsure: 50 cosines from 0.40 to 0.30,
    # `lsp-enforcement` 29th, three memories only it finds on top.
    lexical = _words(("lsp-guards", 35.0), ("lsp-enforcement", 19.0))
    lexical += _words(*((f"common-{n}", 12.0 - n * 0.1) for n in range(48)))
    cosines = [0.40 - n * (0.10 / 49) for n in range(50)]
    names = [f"model-{n}" for n in range(50)]
    names[20], names[28] = "lsp-guards", "lsp-enforcement"
    meaning = _meaning(*zip(names, cosines, strict=True))
    ranked = [h.row.path for h in fuse(lexical, meaning, limit=10)]
    assert ranked[:2] == ["lsp-guards", "lsp-enforcement"]
    assert ranked[2].startswith("model-")


def test_a_clear_first_hit_of_the_model_still_wins_over_weak_words() -> None:
    # The model is sure of one memory (0.80 against a crowd near 0.30), the words only
    # weakly prefer another: the memory the model stands out for comes first.
    lexical = _words(*((f"word-{n}", 10.0 - n * 0.1) for n in range(50)))
    meaning = _meaning(("answer", 0.80), *((f"crowd-{n}", 0.32 - n * 0.001) for n in range(49)))
    ranked = [h.row.path for h in fuse(lexical, meaning, limit=5)]
    assert ranked[0] == "answer"


def test_the_second_of_two_memories_holding_the_words_is_not_scored_as_not_found() -> None:
    # Two memories hold the query's words; the rest score BM25's zero, so the second is
    # well above them, not at the floor with memories the words did not find.
    lexical = _words(("first", 10.0), ("second", 9.0))
    meaning = _meaning(("c", 0.50), ("d", 0.45), ("e", 0.40), ("f", 0.35), ("second", 0.30))
    ranked = [h.row.path for h in fuse(lexical, meaning, limit=10)]
    assert ranked.index("second") < ranked.index("e") < ranked.index("f")


def test_fused_scores_lie_between_zero_and_one_the_first_one() -> None:
    lexical = _words(("a", 8.0), ("b", 6.5), ("c", 2.0))
    meaning = _meaning(("c", 0.7), ("d", 0.6), ("a", 0.2))
    fused = fuse(lexical, meaning, limit=10, weight=0.5)
    assert fused[0].score == 1.0
    assert all(0.0 <= h.score <= 1.0 for h in fused)
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)


@pytest.mark.parametrize("scores", [[5.0], [5.0, 5.0, 5.0]])
def test_a_list_of_equal_scores_counts_each_hit_fully(scores: list[float]) -> None:
    lexical = _words(*((f"m{n}", s) for n, s in enumerate(scores)))
    fused = fuse(lexical, [], limit=10)
    assert [h.score for h in fused] == [1.0] * len(scores)
    assert [h.row.path for h in fused] == [f"m{n}" for n in range(len(scores))]
