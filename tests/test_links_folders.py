"""Markdown links to a folder of the repository (`[profiler](../tools/profiler/)`): repository
links, as links to its files are, never dangling memory links; reported `missing` when gone.

Real stores write them (7Spade/xuanwu-platform `[..](../docs/management/)`, rjmurillo/ai-agents
`[..](../pr-comment-responder/)`, ddisisto/stremio-shell `[..](development/guidelines/)`); before,
any link without `.md` was not read at all, so a folder renamed away went unnoticed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graph_support import broken, write
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.formats.links import extract_links
from memory_enhancement.verify.repo import Repository


@pytest.fixture
def in_repo(git_repo: Path) -> tuple[MemoryService, Path]:
    """A Serena store inside a repository that has `tools/profiler/` and `src/app/`."""
    for folder in ("tools/profiler", "src/app"):
        (git_repo / folder).mkdir(parents=True)
        (git_repo / folder / "main.py").write_text("x = 1\n", encoding="utf-8")
    store = git_repo / ".serena" / "memories"
    return MemoryService(Store(store), Repository(git_repo)), store


def _statuses(service: MemoryService) -> list[tuple[str, str, str | None]]:
    service.list_memories()
    with service.index.connect() as conn:
        rows = conn.execute("SELECT target, status, resolved FROM links ORDER BY ord").fetchall()
    return [tuple(row) for row in rows]


def test_a_link_to_a_folder_is_read_only_with_its_slash() -> None:
    body = (
        "# N\n\nSee [profiler](../tools/profiler/), [app](src/app/#layout) and "
        "[site](https://example.com/docs/).\n"
        "Not [app](src/app), [licence](LICENSE), [root](../../) or [here](./).\n"
    )
    assert [link.target for link in extract_links(body)] == ["../tools/profiler/", "src/app/"]


def test_an_existing_folder_is_a_repository_link_and_a_gone_one_is_missing(
    in_repo: tuple[MemoryService, Path],
) -> None:
    service, store = in_repo
    write(store, "api", "# Api\n")
    write(
        store,
        "notes/source",
        "# Source\n\n[profiler](../../../tools/profiler/) [app](src/app/) [gone](src/gone/)\n"
        "[api](api/)\n",
    )
    assert _statuses(service) == [
        ("../../../tools/profiler/", "repository", "tools/profiler"),
        ("src/app/", "repository", "src/app"),
        ("src/gone/", "missing", "src/gone/"),
        ("api/", "missing", "api/"),  # a folder, not the memory `api`
    ]
    assert broken(service) == [
        ("notes/source", 3, "src/gone/", "missing", None),
        ("notes/source", 4, "api/", "missing", None),
    ]
    (store / "notes" / "api").mkdir()  # `notes/api/`, read from the memory's folder
    (store.parents[1] / "src" / "app" / "main.py").unlink()
    (store.parents[1] / "src" / "app").rmdir()  # checked again when reported
    assert broken(service) == [
        ("notes/source", 3, "src/app/", "missing", None),
        ("notes/source", 3, "src/gone/", "missing", None),
    ]


def test_from_a_store_outside_the_repository_only_a_path_from_its_root_is_checked(
    git_repo: Path, tmp_path: Path
) -> None:
    (git_repo / "src" / "app").mkdir(parents=True)
    store = tmp_path / "global"
    service = MemoryService(Store(store), Repository(git_repo))
    write(store, "source", "# Source\n\n[app](src/app/) [old](src/old/) [mine](drafts/)\n")
    assert _statuses(service) == [
        ("src/app/", "repository", "src/app"),
        ("src/old/", "missing", "src/old/"),
        ("drafts/", "external", "drafts/"),  # unknowable: relative to a folder outside it
    ]


def test_links_reports_a_gone_folder_in_a_real_process(in_repo: tuple[MemoryService, Path]) -> None:
    _, store = in_repo
    write(store, "source", "# Source\n\nSee [profiler](../../tools/profiler/).\n")
    command = [sys.executable, "-m", "memory_enhancement", "--dir", str(store), "links"]
    home = store.parents[2] / "home"
    env = {**os.environ, "XDG_CACHE_HOME": str(home / "c"), "XDG_DATA_HOME": str(home / "d")}
    kept = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    none = "0 broken links (0 dangling, 0 ambiguous), 0 with a fix\n"
    assert (kept.returncode, kept.stdout) == (0, none)
    root = store.parents[1]
    (root / "tools" / "profiler").rename(root / "tools" / "sampler")
    gone = subprocess.run([*command, "--json"], capture_output=True, text=True, env=env)
    assert gone.returncode == 1
    assert [(b["target"], b["status"], b["line"]) for b in json.loads(gone.stdout)["broken"]] == [
        ("../../tools/profiler/", "missing", 3)
    ]
    text = subprocess.run(command, capture_output=True, text=True, env=env).stdout
    assert text.splitlines()[-1] == (  # the count names folders too
        "1 broken link (0 dangling, 0 ambiguous, 1 to missing repository files or folders), "
        "0 with a fix"
    )


def test_an_index_of_version_34_reads_the_folder_links_in_place_keeping_its_embeddings(
    git_repo: Path, tmp_path: Path
) -> None:
    """Schema 34 never read a folder link: 35 and later read every file again, no rebuild."""
    import sqlite3

    from index_support import disk_service
    from memory_enhancement.index import schema

    (git_repo / "src" / "app").mkdir(parents=True)
    store = git_repo / ".serena" / "memories"
    write(store, "source", "# Source\n\n[app](src/app/) [gone](src/gone/)\n")
    service = disk_service(store, git_repo, tmp_path)
    assert [b.target for b in service.broken_links()] == ["src/gone/"]
    conn = sqlite3.connect(tmp_path / "index.db")
    conn.execute("INSERT INTO vectors(hash, model, chunks, data) VALUES ('h', 'm', 1, x'00')")
    conn.execute("DELETE FROM links")  # as schema 34 left them: not read
    conn.execute("PRAGMA user_version = 34")
    conn.commit()
    conn.close()
    assert [b.target for b in service.broken_links()] == ["src/gone/"]
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 2
    conn.close()
