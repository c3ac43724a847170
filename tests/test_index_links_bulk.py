"""Links of an index built from nothing: inserted already resolved (issue 12's bound).

A build from nothing (apply's `bulk`: more than 100 memories, none indexed before)
inserts every link row with its answer, where a sync of a few memories inserts the
rows and then resolves the ones whose answer may have changed (index/linking.py).
Both must leave the same rows, and the build must not update the rows it just wrote
(that second statement per link was 3% of indexing the shared corpus).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from index_support import disk_service, write_memory

LINKS = "\n".join(
    [
        "See [[n001]], [other](../n002.md) and [gone](nowhere.md); `mem:n003` too.",
        "",
        "## Related",
        "",
        "- `twin` - which of the two",
        "- n004 - a name alone",
        "- no_such_memory - a candidate naming nothing",
        "- src/app.py - the code it tells of",
        "- [[lost]]",
        "",
        "| Name | Why |",
        "|------|-----|",
        "| `n005` | a table's entry |",
    ]
)


def _store(root: Path) -> Path:
    """120 memories linking each other every way: resolved, dangling, ambiguous (two
    `twin`s), candidates naming a memory or nothing, a repository file."""
    store = root / ".serena" / "memories"
    for n in range(120):
        write_memory(store, f"notes/n{n:03}", LINKS, title=f"Note {n}")
    write_memory(store, "a/twin", "One twin.", title="Twin A")
    write_memory(store, "b/twin", "The other.", title="Twin B")
    return store


def _links(index: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(index)
    try:
        return conn.execute(
            "SELECT m.path, l.ord, l.target, l.type, l.kind, l.line, l.key, l.status, "
            "l.resolved, l.candidates FROM links l JOIN memories m ON m.id = l.memory_id "
            "ORDER BY m.path, l.ord"
        ).fetchall()
    finally:
        conn.close()


def test_a_build_from_nothing_resolves_links_as_a_sync_of_each_memory_would(
    git_repo: Path, tmp_path: Path
) -> None:
    store = _store(git_repo)
    bulk = disk_service(store, git_repo, tmp_path / "bulk")
    (tmp_path / "bulk").mkdir()
    statements: list[str] = []
    with bulk.index.connect(sync=False) as conn:
        conn.set_trace_callback(statements.append)
        bulk.index.sync(conn)
        conn.set_trace_callback(None)
    assert not [s for s in statements if s.lstrip().upper().startswith("UPDATE LINKS")]

    # The same store, synced a few memories at a time: no build from nothing.
    (tmp_path / "step").mkdir()
    stepwise = disk_service(store, git_repo, tmp_path / "step")
    held = tmp_path / "held"
    shutil.move(store / "notes", held)
    (store / "notes").mkdir()
    with stepwise.index.connect(sync=False) as conn:
        stepwise.index.sync(conn)
        for file in sorted(held.iterdir()):
            shutil.move(file, store / "notes" / file.name)
        stepwise.index.sync(conn)

    rows = _links(tmp_path / "bulk" / "index.db")
    assert rows == _links(tmp_path / "step" / "index.db")
    statuses = {row[7] for row in rows}
    assert {"resolved", "dangling", "ambiguous", "unmatched", "repository"} <= statuses


def test_a_link_written_in_several_folders_is_resolved_from_each(
    git_repo: Path, tmp_path: Path
) -> None:
    """An explicit link is resolved once per folder (linking._answers): the same `note.md`
    written in `a/` and in `b/` names each folder's own note, `../top.md` the one above,
    and a name from anywhere; a candidate naming the memory it is written in is no link
    there and a link from its neighbour."""
    store = git_repo / ".serena" / "memories"
    body = "[n](note.md), [t](../top.md), [[top]]\n\n- `x` - the neighbour\n"
    for folder in ("a", "b"):
        for n in range(60):
            write_memory(store, f"{folder}/m{n:02}", body, title=f"M {n}")
        write_memory(store, f"{folder}/note", "A note.", title="Note")
        write_memory(store, f"{folder}/x", body, title="X")
    write_memory(store, "top", "Top.", title="Top")
    service = disk_service(store, git_repo, tmp_path)
    with service.index.connect(sync=False) as conn:
        service.index.sync(conn)
    rows = {
        (path, target): (status, resolved)
        for path, _, target, _, _, _, _, status, resolved, _ in _links(tmp_path / "index.db")
    }
    for folder in ("a", "b"):
        for source in (f"{folder}/m00", f"{folder}/m59", f"{folder}/x"):
            assert rows[(source, "note.md")] == ("resolved", f"{folder}/note")
            assert rows[(source, "../top.md")] == ("resolved", "top")
            assert rows[(source, "top")] == ("resolved", "top")
        assert rows[(f"{folder}/m00", "x")] == ("resolved", "a/x" if folder == "a" else "b/x")
        assert rows[(f"{folder}/x", "x")] == ("unmatched", None)
