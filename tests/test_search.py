"""Lexical search over the index (issue 4 "Search"): BM25 ranking, snippets, filters, syntax.

Real SQLite FTS5 over real memory files. A query is an agent's question, never
FTS5 syntax: quotes, `-`, `*`, `:`, parentheses and the words AND, OR, NOT and
NEAR are searched for as text and never crash; only a query with no words at
all is an error, and it says so.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import Clock
from index_support import disk_service, paths, write_memory
from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.core.ids import format_citation_id
from memory_enhancement.core.model import Citation
from memory_enhancement.service import MemoryService
from verify_support import GitRepo

NOW = datetime(2026, 1, 31, 12, 0, 0, tzinfo=UTC)
FILLER = "Some unrelated words about the weather, lunch and the office plants."


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> MemoryService:
    """One store for the whole module: these tests only read (and record usage)."""
    tmp_path = tmp_path_factory.mktemp("search")
    store_dir = tmp_path / "store"
    write_memory(store_dir, "notes/title", FILLER, title="Kubernetes upgrades")
    write_memory(store_dir, "notes/body", f"{FILLER} We also run kubernetes.", title="Office")
    write_memory(
        store_dir, "notes/tagged", f"{FILLER} Nothing else.", title="Infra", tags=["kubernetes"]
    )
    write_memory(
        store_dir, "ops/pipeline", "The blue pipeline deploys to staging first.", title="Deploys"
    )
    write_memory(
        store_dir, "ops/pipeline-old", "The pipeline was blue and green once.", title="History"
    )
    write_memory(store_dir, "ops/cafe", "The café on the corner sells espresso.", title="Coffee")
    write_memory(
        store_dir, "ops/expired", "Kubernetes freeze until the end of January.",
        title="Freeze", expires="2026-01-15T00:00:00Z",
    )  # fmt: skip
    write_memory(store_dir, "notesarchive/x", "Kubernetes notes of old.", title="Old notes")
    return disk_service(store_dir, tmp_path, tmp_path, clock=Clock(NOW))


def test_a_title_match_ranks_above_a_body_only_match(searcher: MemoryService) -> None:
    ranked = paths(searcher.search("kubernetes", category="notes"))
    assert ranked.index("notes/title") < ranked.index("notes/body")


def test_a_tag_match_ranks_above_a_body_only_match(searcher: MemoryService) -> None:
    ranked = paths(searcher.search("kubernetes", category="notes"))
    assert ranked.index("notes/tagged") < ranked.index("notes/body")


def test_scores_are_positive_and_descending(searcher: MemoryService) -> None:
    scores = [r.hit.score for r in searcher.search("kubernetes")]
    assert len(scores) >= 3
    assert all(score > 0 for score in scores)
    assert scores == sorted(scores, reverse=True)


def test_each_hit_carries_its_citation_id_path_title_and_a_highlighted_snippet(
    searcher: MemoryService,
) -> None:
    (hit,) = searcher.search("espresso")
    assert hit.hit.row.path == "ops/cafe"
    assert hit.hit.row.title == "Coffee"
    assert hit.citation_id == searcher.citation_id("ops/cafe")
    assert hit.citation_id == format_citation_id(hit.hit.row.citation_id)
    assert "**espresso**" in hit.hit.snippet
    assert hit.hit.lexical_rank == 1


def test_the_snippet_comes_from_the_content_even_when_a_tag_matched_best(
    searcher: MemoryService,
) -> None:
    (hit,) = searcher.search("kubernetes", tag="kubernetes")
    assert "\x1f" not in hit.hit.snippet
    assert hit.hit.snippet.startswith("# Infra")
    (body,) = [r for r in searcher.search("kubernetes") if r.hit.row.path == "notes/body"]
    assert "**kubernetes**" in body.hit.snippet


@pytest.mark.parametrize("limit", [10, 600])  # 600: ranked in one query joining the rows
def test_snippets_bold_the_words_that_count_not_the_function_words_around_them(
    searcher: MemoryService, limit: int
) -> None:
    """`the` and `of` are searched, but in bold they drew the eye to every `the` of the
    text. A memory that only they found still shows them: nothing else matched there."""
    hits = {
        r.hit.row.path: r.hit.snippet
        for r in searcher.search("the espresso of the corner", limit=limit)
    }
    assert hits["ops/cafe"] == "# Coffee\n\nThe café on the **corner** sells **espresso**."
    assert "**the**" in hits["notes/title"]  # FILLER: `the weather`, found by `the` alone
    (alone,) = [r for r in searcher.search("the", limit=limit) if r.hit.row.path == "ops/cafe"]
    assert alone.hit.snippet == "# Coffee\n\n**The** café on **the** corner sells espresso."


def test_limit_keeps_the_best_hits(searcher: MemoryService) -> None:
    everything = paths(searcher.search("kubernetes"))
    assert len(everything) == 4
    assert paths(searcher.search("kubernetes", limit=2)) == everything[:2]
    with pytest.raises(InvalidInputError, match="limit"):
        searcher.search("kubernetes", limit=0)


def test_category_keeps_only_memories_under_it_not_siblings_sharing_a_prefix(
    searcher: MemoryService,
) -> None:
    found = paths(searcher.search("kubernetes", category="notes"))
    assert sorted(found) == ["notes/body", "notes/tagged", "notes/title"]
    assert paths(searcher.search("kubernetes", category="notesarchive/")) == ["notesarchive/x"]


def test_tag_keeps_only_memories_with_that_tag(searcher: MemoryService) -> None:
    assert paths(searcher.search("kubernetes", tag="kubernetes")) == ["notes/tagged"]
    assert paths(searcher.search("kubernetes", tag="nope")) == []


def test_expired_memories_are_hidden_unless_asked_for(searcher: MemoryService) -> None:
    assert "ops/expired" not in paths(searcher.search("freeze kubernetes"))
    found = paths(searcher.search("freeze", include_expired=True))
    assert found == ["ops/expired"]


def test_words_match_across_stems_and_accents(searcher: MemoryService) -> None:
    assert paths(searcher.search("cafe")) == ["ops/cafe"]
    assert paths(searcher.search("deploying")) == ["ops/pipeline"]


def test_a_quoted_phrase_stays_a_phrase(searcher: MemoryService) -> None:
    assert paths(searcher.search('"blue pipeline"')) == ["ops/pipeline"]
    assert sorted(paths(searcher.search("blue pipeline"))) == ["ops/pipeline", "ops/pipeline-old"]


@pytest.mark.parametrize(
    "query",
    [
        'blue "pipeline',  # unbalanced quote
        '"blue',
        'pipeline"',
        "blue -pipeline",
        "-blue",
        "pipeline*",
        "blue*pipeline",
        "title:pipeline",
        "ops/pipeline:3",
        "(blue OR green)",
        "((pipeline",
        "pipeline)",
        "blue AND pipeline",
        "blue OR pipeline",
        "blue NOT pipeline",
        "NOT pipeline",
        "NEAR(blue pipeline, 2)",
        "blue + pipeline ^ {x}",
        "pipeline's",
        'say "" pipeline',
        "pipeline\\",
        "%pipeline_",
        "blue\x00pipeline",
    ],
)
def test_queries_with_fts5_syntax_characters_never_crash(
    searcher: MemoryService, query: str
) -> None:
    found = paths(searcher.search(query))
    assert "ops/pipeline" in found


def test_operator_words_alone_are_searched_as_plain_words(searcher: MemoryService) -> None:
    with_and = ["notes/body", "notes/tagged", "notes/title", "ops/pipeline-old"]
    assert sorted(paths(searcher.search("AND"))) == with_and
    assert sorted(paths(searcher.search("and OR"))) == with_and
    assert paths(searcher.search("NOT")) == []
    assert paths(searcher.search("NEAR")) == []


@pytest.mark.parametrize("query", ["", "   ", '"', '""', "-", "*", ":", "()", '"-*:"', "!?", "🙂"])
def test_a_query_with_no_words_is_a_clear_error(searcher: MemoryService, query: str) -> None:
    with pytest.raises(InvalidInputError, match="no words to search for"):
        searcher.search(query)


def test_an_unknown_mode_is_a_clear_error(searcher: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match="invalid search mode 'fuzzy'"):
        searcher.search("pipeline", mode="fuzzy")


# -- search with verification (seed 004 search_with_verification) ---------------------


@pytest.fixture
def verified_project(tmp_path: Path) -> GitRepo:
    """A real git repository where one memory's cited line changed after it was written."""
    project = GitRepo(tmp_path / "project")
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v2'", "", "def main():"])
    project.commit("initial")
    project.memory(
        "api/entry",
        [Citation("src/app.py", 5, snippet="def main():", verified=project.stamp())],
        content="# API entry point\n\nThe api starts in main().\n",
    )
    project.memory(
        "api/version",
        [Citation("src/app.py", 3, snippet="API_VERSION = 'v2'", verified=project.stamp())],
        content="# API version\n\nThe api version is v2.\n",
    )
    project.memory("api/plain", [], content="# API style\n\nThe api uses snake case.\n")
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v3'", "", "def main():"])
    project.commit("bump the api version")
    return project


def test_verify_attaches_a_verdict_to_each_hit(verified_project: GitRepo) -> None:
    results = verified_project.service().search("api", verify=True)
    verdicts = {
        r.hit.row.path: (r.verification.valid, r.verification.confidence)
        for r in results
        if r.verification is not None
    }
    assert verdicts["api/entry"] == (True, 1.0)
    assert verdicts["api/version"] == (False, 0.0)
    assert set(paths(results)) == {"api/entry", "api/version", "api/plain"}


def test_min_confidence_drops_stale_hits_and_memories_without_citations(
    verified_project: GitRepo,
) -> None:
    """Zero citations is not "all valid": an uncited memory has shown nothing."""
    results = verified_project.service().search("api", verify=True, min_confidence=0.5)
    assert sorted(paths(results)) == ["api/entry"]
    everything = verified_project.service().search("api", verify=True)
    assert sorted(paths(everything)) == ["api/entry", "api/plain", "api/version"]


def test_min_confidence_alone_implies_verification(verified_project: GitRepo) -> None:
    results = verified_project.service().search("api", min_confidence=0.5)
    assert sorted(paths(results)) == ["api/entry"]
    (entry,) = [r for r in results if r.hit.row.path == "api/entry"]
    assert entry.verification is not None and entry.verification.valid


def test_a_verified_hit_reads_the_confidence_health_gives_the_same_memory(
    verified_project: GitRepo,
) -> None:
    """The same memory read 100% in `search --verify` (the share of its citations that
    hold) and 0.70 in `health` (history weighed in): one word named two numbers."""
    service = verified_project.service()
    service.reinforce("api/entry")
    results = {r.hit.row.path: r for r in service.search("api", verify=True)}
    entry, version = results["api/entry"], results["api/version"]
    report = {m.path: m.confidence.score for m in service.health().memories}  # one more use
    assert entry.verification is not None and entry.verification.holding == 1.0
    assert entry.confidence == 0.85
    again = {r.hit.row.path: r.confidence for r in service.search("api", verify=True)}
    assert report["api/entry"] == again["api/entry"] == 0.87
    assert report["api/plain"] == again["api/plain"] == 0.05  # uncited: one use, no evidence
    assert version.confidence == 0.0
    assert report["api/version"] == again["api/version"] == 0.05
    assert results["api/plain"].verification is None  # uncited: nothing to verify


def test_min_holding_keeps_hits_whose_citations_hold_and_min_confidence_weighs_history(
    verified_project: GitRepo,
) -> None:
    """Verified valid now, never confirmed nor used: holding 1.0, confidence 0.70; a
    confidence floor of 0.8 asks for more than the code agreeing today."""
    service = verified_project.service()
    held = service.search("api", min_holding=1.0)
    assert [(r.hit.row.path, r.verification and r.verification.holding) for r in held] == [
        ("api/entry", 1.0)
    ]
    assert paths(service.search("api", min_confidence=0.8)) == []
    service.reinforce("api/entry")
    service.reinforce("api/entry")
    (trusted,) = service.search("api", min_confidence=0.8)
    assert trusted.hit.row.path == "api/entry"
    assert trusted.confidence is not None and trusted.confidence > 0.9  # two used it too


def test_min_holding_outside_zero_to_one_is_a_clear_error(verified_project: GitRepo) -> None:
    with pytest.raises(InvalidInputError, match="invalid min_holding 2"):
        verified_project.service().search("api", min_holding=2)


def test_without_verify_hits_carry_no_verdict(verified_project: GitRepo) -> None:
    results = verified_project.service().search("api")
    assert len(results) == 3
    assert all(r.verification is None for r in results)


def test_min_confidence_outside_zero_to_one_is_a_clear_error(verified_project: GitRepo) -> None:
    with pytest.raises(InvalidInputError, match="min_confidence"):
        verified_project.service().search("api", verify=True, min_confidence=1.5)


RANKED = {
    "ci/cache": "The build cache is keyed by the lock file; a stale cache makes builds slow.",
    "ci/flaky": "Flaky tests in the build: retry once, then quarantine the test and file a bug.",
    "ci/deploying": "Deploying on Fridays needs a second reviewer and a rollback plan.",
    "git/rebase": "Rebase the branch before the build; a merge commit confuses the changelog.",
    "git/hooks": "The pre-commit hook runs the tests that the build would run, only faster.",
    "notes/kafka-rebalance": "Consumers pause while partitions move; keep handlers short.",
}


@pytest.fixture(scope="module")
def ranked_store(tmp_path_factory: pytest.TempPathFactory) -> MemoryService:
    tmp_path = tmp_path_factory.mktemp("ranked")
    for path, body in RANKED.items():
        title = "Consumer pauses" if "kafka" in path else path.split("/")[-1].title()
        write_memory(tmp_path / "store", path, body, title=title)
    return disk_service(tmp_path / "store", tmp_path, tmp_path, clock=Clock(NOW))


@pytest.mark.parametrize(
    "query",
    ["why is the build slow", "flaky tests in the build", "the hook runs tests", "rebase branch"],
)
def test_an_english_question_ranks_exactly_as_plain_bm25_over_its_words(
    ranked_store: MemoryService, query: str
) -> None:
    """Issue 13: lexical search never below a plain FTS5 BM25 (title and text, the
    query's words OR-ed); stems and paths only add memories after those."""
    with ranked_store.index.connect() as conn:
        rows = conn.execute("SELECT path, title, content FROM memories").fetchall()
    plain = sqlite3.connect(":memory:")
    plain.execute("CREATE VIRTUAL TABLE p USING fts5(path UNINDEXED, title, content)")
    plain.executemany("INSERT INTO p VALUES (?, ?, ?)", rows)
    words = " OR ".join(f'"{w}"' for w in dict.fromkeys(query.lower().split()))
    expected = [
        r[0] for r in plain.execute("SELECT path FROM p WHERE p MATCH ? ORDER BY bm25(p)", (words,))
    ]
    found = paths(ranked_store.search(query, limit=50, mode="lexical"))
    assert found[: len(expected)] == expected


def test_inflections_and_paths_come_after_the_words_as_written(ranked_store: MemoryService) -> None:
    found = paths(ranked_store.search("deploy", limit=50, mode="lexical"))
    assert found == ["ci/deploying"]  # only an inflection matches: still found
    found = paths(ranked_store.search("build tests deploy", limit=50, mode="lexical"))
    assert found[-1] == "ci/deploying" and len(found) == 5
    (hit,) = ranked_store.search("kafka", mode="lexical")  # in its path alone
    assert hit.hit.row.path == "notes/kafka-rebalance"
    assert "Consumers pause while partitions move" in hit.hit.snippet


def test_in_a_small_store_the_memory_about_a_word_in_most_memories_comes_first(
    tmp_path: Path,
) -> None:
    """FTS5's BM25 gives a word in half the memories or more an IDF of 1e-6: in a store
    of five, `deploy` (in four) counted for nothing, the short incident note that says
    `rollback` once came before the deploy memory that says both, and the others scored
    0.0. Lucene's IDF, used once FTS5 clamps one (lexical.py, idf.py), keeps it."""
    store = tmp_path / "store"
    write_memory(store, "deploy", "Deploy from main. A failed deploy triggers the rollback job.")
    write_memory(store, "incidents", "The May outage ended with a manual database rollback.")
    write_memory(store, "commands", "make test, make lint, make deploy for staging.")
    write_memory(store, "checklist", "Tests pass, lint is clean, the deploy is scheduled.")
    write_memory(store, "style", "Type hints everywhere; no deploy scripts in the app.")
    service = disk_service(store, tmp_path, tmp_path)
    for query in ("deploy rollback", "how do I rollback a deploy"):
        hits = [r.hit for r in service.search(query, mode="lexical")]
        assert [h.row.path for h in hits[:2]] == ["deploy", "incidents"]
        assert all(h.score > 0.01 for h in hits)
