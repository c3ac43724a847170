"""The index file (issue 4 "The index"): where it lives, WAL, schema version, rebuilds.

The index is a cache of the memory files, so a missing, corrupt or outdated
file is never an error: it is rebuilt from the files. These tests use real
SQLite files and real memory files; the CLI tests run with the isolated tool
home from conftest, so the "user's cache folder" is inside the test's tmp folder.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from conftest import RunCli, git
from index_support import as_before_34, disk_service, write_memory
from memory_enhancement.index import schema, upgrade
from memory_enhancement.index.index import IndexCorruptError
from memory_enhancement.store.locations import cache_home, store_key


def _index_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in {".db", ".db-wal", ".db-shm"})


def _corrupt_page(file: Path, table: str) -> None:
    """Overwrite the first page of a table's b-tree with garbage, keeping the header intact."""
    conn = sqlite3.connect(file)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(file.read_bytes())
    start = (root - 1) * page_size
    data[start : start + page_size] = bytes((n * 37 + 11) % 256 for n in range(page_size))
    file.write_bytes(bytes(data))


@pytest.fixture
def small_store(store_dir: Path) -> Path:
    write_memory(store_dir, "notes/caching", "Redis holds the session cache.", title="Caching")
    write_memory(store_dir, "notes/deploy", "Deploys go through the blue pipeline.", title="Deploy")
    write_memory(store_dir, "howto/tests", "Run pytest with -x to stop early.", title="Tests")
    return store_dir


# -- where the index lives --------------------------------------------------------


def test_the_cli_keeps_the_index_in_the_cache_folder_keyed_by_the_store_path(
    run_cli: RunCli, small_store: Path, isolated_home: Path
) -> None:
    result = run_cli(["list", "--dir", small_store])
    assert result.exit_code == 0, result.output
    expected = cache_home({"MEMORY_ENHANCEMENT_HOME": str(isolated_home)})
    assert expected == isolated_home / "cache"
    index = expected / "indexes" / f"{store_key(small_store)}.db"
    assert index.is_file()
    assert _index_files(small_store) == []


def test_two_stores_get_two_index_files(
    run_cli: RunCli, small_store: Path, tmp_path: Path, isolated_home: Path
) -> None:
    other = tmp_path / "other-store"
    write_memory(other, "notes/caching", "Memcached, in the other project.", title="Caching")
    assert run_cli(["list", "--dir", small_store]).exit_code == 0
    assert run_cli(["list", "--dir", other]).exit_code == 0
    indexes = sorted(p.name for p in (isolated_home / "cache" / "indexes").glob("*.db"))
    assert indexes == sorted([f"{store_key(small_store)}.db", f"{store_key(other)}.db"])
    assert store_key(small_store) != store_key(other)
    hits = json.loads(run_cli(["search", "memcached", "--dir", other, "--json"]).output)
    assert [h["path"] for h in hits] == ["notes/caching"]
    assert json.loads(run_cli(["search", "memcached", "--dir", small_store, "--json"]).output) == []


def test_the_project_store_index_is_never_written_inside_the_repository(
    run_cli: RunCli, git_repo: Path, isolated_home: Path
) -> None:
    added = run_cli(["add", "notes/layout", "-c", "The app lives in src/app.py."], cwd=git_repo)
    assert added.exit_code == 0, added.output
    assert run_cli(["search", "layout"], cwd=git_repo).exit_code == 0
    assert (git_repo / ".memories" / "notes" / "layout.md").is_file()
    assert _index_files(git_repo) == []
    assert git(git_repo, "status", "--porcelain", "--untracked-files=all").splitlines() == [
        "?? .memories/notes/layout.md"
    ]
    assert list((isolated_home / "cache" / "indexes").glob("*.db"))


def test_the_cache_folder_follows_xdg_and_home_without_the_tool_home() -> None:
    assert cache_home({"XDG_CACHE_HOME": "/x/cache", "HOME": "/h"}) == Path(
        "/x/cache/memory-enhancement"
    )
    assert cache_home({"HOME": "/h"}) == Path("/h/.cache/memory-enhancement")


def test_store_key_is_stable_and_names_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "my store"
    assert store_key(folder) == store_key(folder)
    assert store_key(folder).startswith("my-store-")
    assert store_key(folder) != store_key(tmp_path / "my-store")


def test_the_index_option_puts_the_index_where_it_is_told(
    run_cli: RunCli, small_store: Path, tmp_path: Path, isolated_home: Path
) -> None:
    custom = tmp_path / "elsewhere" / "custom.db"
    result = run_cli(["search", "redis", "--dir", small_store, "--index", custom, "--json"])
    assert result.exit_code == 0, result.output
    assert [h["path"] for h in json.loads(result.output)] == ["notes/caching"]
    assert custom.is_file()
    assert not (isolated_home / "cache" / "indexes").exists()


# -- the file itself --------------------------------------------------------------


def test_the_index_is_in_wal_mode_with_its_schema_version(
    small_store: Path, git_repo: Path, tmp_path: Path
) -> None:
    service = disk_service(small_store, git_repo, tmp_path)
    assert len(service.list_memories().memories) == 3
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 3
    conn.close()


def test_a_missing_index_is_rebuilt_on_the_next_call(
    small_store: Path, git_repo: Path, tmp_path: Path
) -> None:
    service = disk_service(small_store, git_repo, tmp_path)
    before = {s.path: s.citation_id for s in service.list_memories().memories}
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path / 'index.db'}{suffix}").unlink(missing_ok=True)
    after = {s.path: s.citation_id for s in service.list_memories().memories}
    assert after == before
    assert (tmp_path / "index.db").is_file()


def test_an_index_full_of_garbage_bytes_is_rebuilt(
    small_store: Path, git_repo: Path, tmp_path: Path
) -> None:
    service = disk_service(small_store, git_repo, tmp_path)
    before = {s.path: s.citation_id for s in service.list_memories().memories}
    index = tmp_path / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    index.write_bytes(b"this is not a database \x00\xff" * 500)
    assert [r.hit.row.path for r in service.search("pipeline")] == ["notes/deploy"]
    assert {s.path: s.citation_id for s in service.list_memories().memories} == before
    assert sqlite3.connect(index).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.parametrize("table", ["memories", "memories_fts_data", "meta"])
def test_an_index_with_a_damaged_page_is_rebuilt_instead_of_crashing(
    small_store: Path, git_repo: Path, tmp_path: Path, table: str
) -> None:
    service = disk_service(small_store, git_repo, tmp_path)
    before = {s.path: s.citation_id for s in service.list_memories().memories}
    _corrupt_page(tmp_path / "index.db", table)
    write_memory(small_store, "notes/new", "A new memory about the blue pipeline.", title="New")
    fresh = disk_service(small_store, git_repo, tmp_path)
    listing = fresh.list_memories()
    assert {s.path: s.citation_id for s in listing.memories if s.path != "notes/new"} == before
    assert [r.hit.row.path for r in fresh.search("pipeline")] == ["notes/deploy", "notes/new"]


@pytest.mark.parametrize("table", ["memories", "meta", "citations"])
def test_an_index_missing_a_table_of_its_version_is_rebuilt(
    small_store: Path, git_repo: Path, tmp_path: Path, table: str
) -> None:
    service = disk_service(small_store, git_repo, tmp_path)
    before = {s.path: s.citation_id for s in service.list_memories().memories}
    conn = sqlite3.connect(tmp_path / "index.db")
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute(f"DROP TABLE {table}")  # the version number still says all is well
    conn.commit()
    conn.close()
    write_memory(small_store, "notes/new", "A new memory about the blue pipeline.", title="New")
    listing = disk_service(small_store, git_repo, tmp_path).list_memories()
    assert {s.path: s.citation_id for s in listing.memories if s.path != "notes/new"} == before
    assert "notes/new" in {s.path for s in listing.memories}


def test_damage_found_mid_query_is_a_clear_error_and_the_next_call_rebuilds(
    small_store: Path, git_repo: Path, tmp_path: Path
) -> None:
    service = disk_service(small_store, git_repo, tmp_path)
    service.list_memories()
    _corrupt_page(tmp_path / "index.db", "memories_fts_data")  # files unchanged: sync is a no-op
    with pytest.raises(IndexCorruptError, match=r"corrupt.*rebuilt from the memory files"):
        service.search("pipeline")
    assert [r.hit.row.path for r in service.search("pipeline")] == ["notes/deploy"]


def test_an_index_of_an_older_schema_version_is_rebuilt(
    small_store: Path, git_repo: Path, tmp_path: Path
) -> None:
    service = disk_service(small_store, git_repo, tmp_path)
    service.list_memories()
    conn = sqlite3.connect(tmp_path / "index.db")
    conn.execute("DELETE FROM memories WHERE path = 'notes/deploy'")  # a marker the rebuild undoes
    older = min(upgrade.IN_PLACE, default=schema.SCHEMA_VERSION) - 1  # not migrated in place
    conn.execute(f"PRAGMA user_version = {older}")
    conn.commit()
    conn.close()
    assert [r.hit.row.path for r in service.search("pipeline")] == ["notes/deploy"]
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 3
    conn.close()


@pytest.mark.parametrize("version", [16, 17, 18, 19, 20, 21, 22, 23, 24])
def test_an_index_of_version_16_to_24_is_brought_up_to_date_in_place_keeping_its_embeddings(
    small_store: Path, git_repo: Path, tmp_path: Path, version: int
) -> None:
    """16 to 24 -> 26 read every memory again (the mention grammar, then the link grammar,
    then the mention grammar again, then both and Korean read more forms, then names keyed
    composed, then European line words and related headings, then declared names and
    headers that do not parse, in columns of their own) without dropping what the files
    do not give: the embeddings, the database's instance."""
    write_memory(small_store, "notes/words", "The handler is in `src/api.go` lines 28-76.")
    write_memory(small_store, "notes/label", "**File:** `src/api.go`\n**Line:** 28\n")
    write_memory(small_store, "notes/zh", "# 架构\n\n详见 `caching` 记忆。\n")
    write_memory(small_store, "notes/ko", "핸들러는 `src/api.go` 라인 28에 있다.\n")
    write_memory(small_store, "notes/es", "El handler está en `src/api.go` línea 28.\n")
    write_memory(
        small_store, "notes/de", "# Cache\n\n## Verwandte Memories\n\n- Siehe `notes/zh`\n"
    )
    service = disk_service(small_store, git_repo, tmp_path)
    service.list_memories()
    conn = sqlite3.connect(tmp_path / "index.db")
    instance = conn.execute("SELECT value FROM meta WHERE key = 'instance'").fetchone()
    conn.execute("INSERT INTO vectors(hash, model, chunks, data) VALUES ('h', 'm', 1, x'00')")
    # What only reading the files again corrects: a flag and links read with fewer forms.
    conn.execute("UPDATE memories SET mentions = 0, title = 'as read before'")
    conn.execute("DELETE FROM links")
    conn.execute("DROP INDEX memories_declared")  # the columns 25 adds: not there before
    conn.execute("DROP INDEX memories_header")
    for column in ("declared_name", "declared_key", "header_error"):
        conn.execute(f"ALTER TABLE memories DROP COLUMN {column}")
    as_before_34(conn)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    titles = {s.path: s.title for s in service.list_memories().memories}
    assert "as read before" not in titles.values() and len(titles) == 9
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT value FROM meta WHERE key = 'instance'").fetchone() == instance
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
    flagged = conn.execute("SELECT path FROM memories WHERE mentions = 1").fetchall()
    assert {("notes/words",), ("notes/label",), ("notes/ko",), ("notes/es",)} <= set(flagged)
    linked = conn.execute(
        "SELECT m.path, l.target FROM links l JOIN memories m ON m.id = l.memory_id "
        "WHERE m.path IN ('notes/zh', 'notes/de') ORDER BY m.path"
    ).fetchall()
    assert linked == [("notes/de", "notes/zh"), ("notes/zh", "caching")]
    conn.close()


@pytest.mark.parametrize(
    ("version", "name", "text"),
    [
        # 25 -> 26: an index's `- Bridge: `a`, `b`` items name memories (kynesyslabs/sdks)
        (25, "notes/index", "# Index\n\n- Storage: `notes/caching`\n"),
        # 26 -> 27: backticked `[[name]]` items under `## 연관 메모리` do too
        (26, "notes/ko", "# 메모\n\n## 연관 메모리\n\n- `[[caching]]` 캐시\n"),
    ],
)
def test_an_index_of_an_older_link_grammar_reads_its_links_again_in_place_keeping_embeddings(
    small_store: Path, git_repo: Path, tmp_path: Path, version: int, name: str, text: str
) -> None:
    """An index built before had no link for such items, and its files had not changed."""
    write_memory(small_store, name, text)
    service = disk_service(small_store, git_repo, tmp_path)
    service.list_memories()
    conn = sqlite3.connect(tmp_path / "index.db")
    conn.execute("INSERT INTO vectors(hash, model, chunks, data) VALUES ('h', 'm', 1, x'00')")
    conn.execute("DELETE FROM links")  # as the older grammar read them: none
    as_before_34(conn)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    assert [b.source for b in service.related("notes/caching")] == [name]
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
    conn.close()


@pytest.mark.parametrize(
    ("version", "text"),
    [(27, "The handler lives in `src/api.go`.\n"), (29, "The handler: **src/api.go**.\n")],
)
def test_an_older_index_flags_memories_naming_a_file_alone_as_mentioning_code(
    small_store: Path, git_repo: Path, tmp_path: Path, version: int, text: str
) -> None:
    """27 -> 28: a backticked path alone (`src/api.go`) is a file mention now, so a memory
    holding nothing else is read by verify-all; the index reads its files again. 29 -> 30:
    a path in bold (`**src/api.go**`) too."""
    write_memory(small_store, "notes/files", text)
    service = disk_service(small_store, git_repo, tmp_path)
    service.list_memories()
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute("SELECT mentions FROM memories WHERE path = 'notes/files'").fetchone() == (
        1,
    )
    conn.execute("INSERT INTO vectors(hash, model, chunks, data) VALUES ('h', 'm', 1, x'00')")
    conn.execute("UPDATE memories SET mentions = 0")  # as that version read it
    as_before_34(conn)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    service.list_memories()
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT mentions FROM memories WHERE path = 'notes/files'").fetchone() == (
        1,
    )
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
    conn.close()


def test_reindex_rebuilds_everything_from_the_files(
    small_store: Path, git_repo: Path, tmp_path: Path
) -> None:
    service = disk_service(small_store, git_repo, tmp_path)
    ids = {s.path: s.citation_id for s in service.list_memories().memories}
    conn = sqlite3.connect(tmp_path / "index.db")
    conn.execute("UPDATE memories SET title = 'wrong' WHERE path = 'notes/caching'")
    conn.commit()
    conn.close()
    stats = service.reindex()
    assert (stats.scanned, stats.added, stats.updated, stats.removed) == (3, 3, 0, 0)
    listing = service.list_memories()
    assert {s.path: s.title for s in listing.memories}["notes/caching"] == "Caching"
    assert {s.path: s.citation_id for s in listing.memories} == ids


def test_connections_racing_to_create_a_missing_index_all_keep_their_writes(
    tmp_path: Path,
) -> None:
    """Many MCP tool calls (threads here) or CLI processes may open a fresh index at once.

    None may discard the file another is creating: every connection's write
    must land in the one file that remains.
    """
    for round_ in range(10):
        index = tmp_path / f"race-{round_}.db"
        assert _race_to_create(index, 8) == []
        conn = sqlite3.connect(index)
        assert conn.execute("SELECT count(*) FROM meta WHERE value = 'here'").fetchone()[0] == 8
        conn.close()


def _race_to_create(index: Path, count: int) -> list[BaseException]:
    """Open the index from `count` threads at once, each writing a row; return what failed."""
    start = threading.Barrier(count)
    errors: list[BaseException] = []

    def open_and_write(name: str) -> None:
        start.wait()
        try:
            conn = schema.connect(index)
            conn.execute("SELECT count(*) FROM memories").fetchone()
            conn.execute("INSERT INTO meta(key, value) VALUES (?, 'here')", (name,))
            conn.close()
        except BaseException as exc:  # reported to the test, with the others
            errors.append(exc)

    threads = [threading.Thread(target=open_and_write, args=(f"t{n}",)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_a_memory_the_index_cannot_hold_is_recorded_as_unreadable() -> None:
    """A line number SQLite cannot store (the grammar refuses it; this is the last guard)
    makes that one memory an unreadable row, with the reason, not a failed sync."""
    from memory_enhancement.core.model import Citation, Memory, MemoryMeta
    from memory_enhancement.index.writer import upsert
    from memory_enhancement.store.formats.base import Document

    conn = schema.connect(None)
    huge = Citation("a.py", 2**63, snippet="x")
    memory = Memory("notes/huge", "# Huge\n", MemoryMeta(citations=(huge,)), ())
    upsert(conn, "notes/huge", Document(memory, "", [], [3]), None, 1, 10, "h", fresh=True)
    error, count = conn.execute("SELECT error, citation_count FROM memories").fetchone()
    assert "64-bit number does not fit the index" in error and count == 0
    assert conn.execute("SELECT count(*) FROM citations").fetchone()[0] == 0
    assert conn.execute("SELECT path FROM files").fetchall() == [("notes/huge",)]
