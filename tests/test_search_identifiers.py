"""Words inside code identifiers (issue 13, session 36): `search embeddings` finds
`documentEmbeddings`, `search "memory service"` finds `MemoryService`.

unicode61 parts `snake_case`, `kebab-case` and `dotted.names` itself but keeps a camelCase
name one token; the words of such names are indexed in a table of their own
(index/identifiers.py), searched after the text's words, so English ranks as before. The
memories here are written for these tests, in the style of the real stores measured
(docs/benchmarks.md).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from index_support import as_before_34, disk_service, paths, titled_notes_service, write_memory
from memory_enhancement.index import identifiers, schema, snippets
from memory_enhancement.service import MemoryService

NOTES = {
    "code/embeddings": (
        "Vector store",
        "The documentEmbeddings table keeps one row per chunk; rebuildIndex() fills it.",
    ),
    "code/service": ("Facade", "Every command goes through MemoryService, built by the factory."),
    "code/snake": ("Verification", "verify_all_mentions reads each file once."),
    "code/kebab": ("Routes", "The get-user-profile route answers from the cache."),
    "code/dotted": ("Settings", "Loaded by app.config.load at start."),
    "code/acronym": ("Server", "HTTPServer and XMLHttpRequest are mocked in tests."),
    "prose/memory": ("Memory", "The memory of the worker grows until it is restarted."),
    "prose/service": ("Service", "A memory service in prose: the memory service restarts nightly."),
    "ja/embeddings": ("埋め込み", "documentEmbeddingsを修正した。ベクトルは再計算する。"),
}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> MemoryService:
    return titled_notes_service(tmp_path_factory.mktemp("ids"), NOTES)


def found(service: MemoryService, query: str) -> list[str]:
    return paths(service.search(query, mode="lexical", limit=20))


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("documentEmbeddings", ["document", "embeddings"]),
        ("MemoryService", ["memory", "service"]),
        ("HTTPServer", ["http", "server"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("getUserID", ["get", "user", "id"]),
        ("utf8Decoder", ["utf8", "decoder"]),
    ],
)
def test_a_camel_or_pascal_case_name_is_parted_into_its_words(name: str, words: list[str]) -> None:
    assert list(identifiers.split(name)) == words
    assert (identifiers.parts(f"see {name}.") or "").split()[: len(words)] == words
    assert identifiers.is_compound(name)


def test_text_without_such_names_has_no_parts() -> None:
    """unicode61 parts `_`, `-` and `.` itself; plain words and acronyms are not names."""
    for text in ("verify_all_mentions get-user-profile app.config.load", "Plain English. API"):
        assert identifiers.parts(text) is None
    assert not any(map(identifiers.is_compound, ("memory", "Redis", "HTTP", "A1")))


def test_one_name_of_many_steps_is_one_name_and_others_are_kept() -> None:
    """A crafted file (a token of 200,000 steps) is read once, not once a step; the names
    beside it, and a name glued to CJK text, are still found."""
    text = "getUser " + "aB" * 100_000 + " MemoryService documentEmbeddingsを修正"
    found = identifiers.names(text)
    assert [len(n) for n in found] == [7, 200_000, 13, 18]
    assert found[0] == "getUser" and found[2:] == ["MemoryService", "documentEmbeddings"]


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("embeddings", "code/embeddings"),  # camelCase
        ("rebuild", "code/embeddings"),  # camelCase, a call
        ("factory", "code/service"),
        ("mentions", "code/snake"),  # snake_case
        ("profile", "code/kebab"),  # kebab-case
        ("config", "code/dotted"),  # dotted
        ("request", "code/acronym"),  # an acronym first
        ("server", "code/acronym"),
    ],
)
def test_a_word_finds_a_memory_holding_it_only_inside_an_identifier(
    service: MemoryService, query: str, path: str
) -> None:
    assert path in found(service, query)


def test_memory_service_finds_the_pascal_case_name(service: MemoryService) -> None:
    """Quoted or not. The memory holding the words themselves ranks first: it holds them."""
    for query in ('"memory service"', "memory service"):
        hits = found(service, query)
        assert hits[0] == "prose/service" and "code/service" in hits, (query, hits)


def test_a_query_that_is_an_identifier_ranks_its_exact_match_first(service: MemoryService) -> None:
    """`MemoryService` as typed is the memory naming it; then the memories of its words."""
    hits = found(service, "MemoryService")
    assert hits[0] == "code/service"
    assert "prose/service" in hits  # "memory service", the phrase of its words
    assert found(service, "documentEmbeddings")[:2] in (
        ["code/embeddings", "ja/embeddings"],
        ["ja/embeddings", "code/embeddings"],
    )


def test_a_cjk_memory_holding_an_identifier_is_found_by_either(service: MemoryService) -> None:
    assert "ja/embeddings" in found(service, "embeddings")
    assert found(service, "修正") == ["ja/embeddings"]
    [hit] = [r for r in service.search("embeddings", mode="lexical") if r.hit.row.path == "ja/"
             "embeddings"]  # fmt: skip
    assert "documentEmbeddingsを修正" in hit.hit.snippet.replace("**", "")


def test_snippets_show_the_original_text(service: MemoryService) -> None:
    [hit] = [r for r in service.search("factory", mode="lexical")]
    assert "MemoryService" in hit.hit.snippet
    [hit] = [r for r in service.search("rebuild", mode="lexical")]
    assert "documentEmbeddings table" in hit.hit.snippet
    assert "rebuildIndex()" in hit.hit.snippet.replace("**", "")


def test_a_snippet_marks_a_word_where_it_stands_inside_a_name() -> None:
    text = "HTTPServer and getUser, the id of user_id; this is it."
    assert snippets.snippet(text, ["server", "get", "id", "is"]) == (
        "HTTP**Server** and **get**User, the **id** of user_**id**; this **is** it."
    )


def test_an_english_memory_scores_exactly_as_plain_bm25(tmp_path: Path) -> None:
    """The text's table is as it was: a memory's score for its words is the one a plain
    FTS5 table of the same titles and texts gives, identifiers in the store or not."""
    service = titled_notes_service(tmp_path, NOTES)
    scores = {r.hit.row.path: r.hit.score for r in service.search("memory", mode="lexical")}
    plain = sqlite3.connect(":memory:")
    plain.execute(
        "CREATE VIRTUAL TABLE p USING fts5(path UNINDEXED, title, tags, content, "
        "tokenize='unicode61 remove_diacritics 2')"
    )
    index = sqlite3.connect(tmp_path / "index.db")
    plain.executemany(
        "INSERT INTO p VALUES (?, ?, ?, ?)",
        index.execute(
            "SELECT path, coalesce(fts_title, title), coalesce(fts_tags, tags), "
            "coalesce(fts_content, content) FROM memories"
        ),
    )
    expected = dict(plain.execute("SELECT path, -bm25(p) FROM p WHERE p MATCH 'memory'"))
    for path in ("prose/memory", "prose/service"):
        assert scores[path] == pytest.approx(expected[path], rel=1e-9)
    assert index.execute(
        "SELECT count(*) FROM memories WHERE fts_content IS NOT NULL"
    ).fetchone() == (1,)  # only the Japanese memory is segmented: the parts are apart


def test_edits_and_removals_keep_the_parts_table_in_step(tmp_path: Path) -> None:
    store = tmp_path / "store"
    write_memory(store, "a", "Uses documentEmbeddings.")
    write_memory(store, "b", "Plain words only.")
    service = disk_service(store, tmp_path, tmp_path)
    assert found(service, "embeddings") == ["a"]
    write_memory(store, "a", "Plain words now.", age_ns=None)
    write_memory(store, "b", "Calls MemoryService.", age_ns=None)
    assert found(service, "embeddings") == [] and found(service, "service") == ["b"]
    (store / "b.md").unlink()
    assert found(service, "service") == []
    conn = sqlite3.connect(tmp_path / "index.db")
    conn.execute("INSERT INTO memories_parts_fts(memories_parts_fts) VALUES ('integrity-check')")
    assert conn.execute("SELECT count(*) FROM memories_parts").fetchone() == (0,)
    conn.close()


def test_an_index_of_version_33_gains_the_parts_in_place_keeping_its_embeddings(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    write_memory(store, "a", "Uses documentEmbeddings.")
    service = disk_service(store, tmp_path, tmp_path)
    service.list_memories()
    conn = sqlite3.connect(tmp_path / "index.db")
    conn.execute("INSERT INTO vectors(hash, model, chunks, data) VALUES ('h', 'm', 1, x'00')")
    as_before_34(conn)
    conn.execute("PRAGMA user_version = 33")
    conn.commit()
    conn.close()
    assert found(service, "embeddings") == ["a"]
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
    conn.execute("INSERT INTO memories_parts_fts(memories_parts_fts) VALUES ('integrity-check')")
    conn.close()


def test_the_cli_finds_a_word_inside_an_identifier_in_a_real_process(tmp_path: Path) -> None:
    store = tmp_path / "store"
    write_memory(store, "notes/facade", "Every command goes through MemoryService.", title="Facade")
    write_memory(store, "notes/other", "Nothing to see here.", title="Other")
    result = subprocess.run(
        [sys.executable, "-m", "memory_enhancement", "--dir", str(store), "search", "service"],
        capture_output=True,
        text=True,
        env=os.environ,
        cwd=tmp_path,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    # The word marked where it stands inside the name, the name as written.
    assert "notes/facade" in result.stdout and "Memory**Service**." in result.stdout
    assert "notes/other" not in result.stdout


# -- words glued to a number (session 37) ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("uses python3 and sqlite3", "python sqlite"),  # the token itself is the text's
        ("Float64Array", "float64 array float"),  # after the words: the phrase stays whole
        ("utf8Decoder", "utf8 decoder utf"),
        ("tagged 1girl", "1 girl"),
        ("html2canvas", "html2 canvas html"),
        ("SHA256 fts5", "sha fts"),
        ("v2, x86_64, h1", None),  # one letter is no word
        ("commit 3abfa07 and e9be-feed1", None),  # hex: a commit, a UUID's piece
    ],
)
def test_a_word_glued_to_a_number_is_a_part(text: str, parts: str | None) -> None:
    assert identifiers.parts(text) == parts


def test_a_word_only_glued_to_a_number_is_found_after_the_word_itself(tmp_path: Path) -> None:
    """A word alone of four letters or more was already searched as a prefix (`sqlite*`
    reaches `sqlite3`), but not in a query of several words, nor a word after the number
    (`girl` of `1girl`); the memory saying the word itself still ranks first, and a commit
    hash holding `feed1` is not found by `feed`."""
    store = tmp_path / "store"
    write_memory(store, "glued", "Open it with sqlite3 and Float64Array views; html2canvas.")
    write_memory(store, "plain", "The sqlite database is opened once.")
    write_memory(store, "hash", "Fixed in 9c2feed1b: the worker restarts.")
    write_memory(store, "tags", "Tagged 1girl, solo.")
    service = disk_service(store, tmp_path, tmp_path)
    assert found(service, "sqlite schema") == ["plain", "glued"]
    assert found(service, "float buffer") == ["glued"]
    assert found(service, "canvas") == ["glued"]
    assert found(service, "girl") == ["tags"]
    assert found(service, '"float64 array"') == ["glued"]
    assert found(service, "feed") == []


def test_an_index_of_version_35_gains_the_glued_words_in_place_keeping_its_embeddings(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    write_memory(store, "a", "Built against python3 only.")
    service = disk_service(store, tmp_path, tmp_path)
    assert found(service, "python") == ["a"]
    conn = sqlite3.connect(tmp_path / "index.db")
    conn.execute("INSERT INTO vectors(hash, model, chunks, data) VALUES ('h', 'm', 1, x'00')")
    conn.execute("UPDATE memories SET fts_parts = NULL")  # as version 35 read it: no parts
    conn.execute("PRAGMA user_version = 35")
    conn.commit()
    conn.close()
    assert found(service, "python") == ["a"]
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
    conn.execute("INSERT INTO memories_parts_fts(memories_parts_fts) VALUES ('integrity-check')")
    conn.close()
