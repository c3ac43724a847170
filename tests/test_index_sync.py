"""Keeping the index in step with the files without a watcher (issue 4 "The index").

Every change is made the way it happens outside the tool: by writing the file
by hand, by another process, by `git checkout`. The next call must see it, and
only what changed is read again. `Index.sync` reports what it did (SyncStats);
a Store that counts its reads shows which files were opened.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import git
from index_support import HOUR_NS, age, disk_service, paths, write_memory
from memory_enhancement.core.errors import NotFoundError
from memory_enhancement.index.index import SyncStats
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.freshness import FINE_RACY_NS, RACY_NS, racy_window
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository


class CountingStore(Store):
    """A real store that remembers which memory files it opened."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: list[str] = []

    def read_bytes(self, path: str, *, scanned: bool = False) -> tuple[bytes, os.stat_result]:
        self.reads.append(path)
        return super().read_bytes(path, scanned=scanned)


@pytest.fixture
def store(store_dir: Path) -> Path:
    for n in range(12):
        write_memory(store_dir, f"notes/n{n:02}", f"Note number {n} about topic{n}.", title=f"N{n}")
    write_memory(store_dir, "deep/a/b/c", "A deeply filed memory about zebras.", title="Deep")
    return store_dir


@pytest.fixture
def counting(store: Path, git_repo: Path, tmp_path: Path) -> MemoryService:
    return MemoryService(
        CountingStore(store),
        Repository(git_repo),
        index_path=tmp_path / "index.db",
        state=State(tmp_path / "state.db"),
    )


def sync(service: MemoryService) -> tuple[SyncStats, list[str]]:
    """Run one sync on the service's index file; return its stats and the files it read."""
    store = service.store
    assert isinstance(store, CountingStore)
    store.reads.clear()
    with service.index.connect(sync=False) as conn:
        stats = service.index.sync(conn)
    return stats, sorted(store.reads)


def counts(stats: SyncStats) -> tuple[int, int, int, int]:
    return stats.added, stats.updated, stats.removed, stats.touched


def test_the_first_sync_reads_every_file_and_the_next_reads_none(
    counting: MemoryService,
) -> None:
    stats, reads = sync(counting)
    assert (stats.scanned, *counts(stats)) == (13, 13, 0, 0, 0)
    assert len(reads) == 13
    stats, reads = sync(counting)
    assert (stats.scanned, *counts(stats)) == (13, 0, 0, 0, 0)
    assert reads == []


def test_a_file_added_by_hand_is_seen_and_only_it_is_read(
    counting: MemoryService, store: Path
) -> None:
    sync(counting)
    write_memory(store, "notes/fresh", "Brand new memory about pelicans.", title="Fresh")
    stats, reads = sync(counting)
    assert counts(stats) == (1, 0, 0, 0)
    assert reads == ["notes/fresh"]
    assert paths(counting.search("pelicans")) == ["notes/fresh"]


def test_a_file_edited_by_hand_with_a_new_size_is_reindexed_alone(
    counting: MemoryService, store: Path
) -> None:
    sync(counting)
    write_memory(store, "notes/n03", "Now about giraffes instead, and longer.", title="N3")
    stats, reads = sync(counting)
    assert counts(stats) == (0, 1, 0, 0)
    assert reads == ["notes/n03"]
    assert paths(counting.search("giraffes")) == ["notes/n03"]
    assert paths(counting.search("topic3")) == []


def test_an_edit_of_the_same_size_within_the_same_mtime_tick_is_seen(
    counting: MemoryService, store: Path
) -> None:
    file = write_memory(store, "notes/racy", "Version one: alpha.", age_ns=None)
    # Its mtime falls in the tick the sync starts in (a clock a little ahead, as the
    # filesystem's timestamps may be): the sync cannot tell a later edit in that tick.
    ahead = time.time_ns() + 1_000_000_000
    os.utime(file, ns=(ahead, ahead))
    sync(counting)
    before = file.stat()
    file.write_text(file.read_text(encoding="utf-8").replace("alpha", "omega"), encoding="utf-8")
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = file.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    stats, _ = sync(counting)
    assert stats.updated == 1
    assert paths(counting.search("omega")) == ["notes/racy"]
    assert paths(counting.search("alpha")) == []


def test_a_bulk_write_is_read_once_not_again_by_the_next_sync(
    counting: MemoryService, store: Path
) -> None:
    sync(counting)
    for n in range(10):  # rewritten in place, same bytes: a checkout, a formatter
        file = store / f"notes/n{n:02d}.md"
        file.write_bytes(file.read_bytes())
    time.sleep(0.1)  # the next sync starts well after the writes (beyond a timestamp tick)
    stats, reads = sync(counting)
    assert counts(stats) == (0, 0, 0, 10)
    stats, reads = sync(counting)
    assert reads == []  # settled: written before the previous sync started


def test_the_racy_window_is_the_filesystems_resolution() -> None:
    assert racy_window([1_700_000_000_123_456_789]) == FINE_RACY_NS
    assert racy_window([1_700_000_000_000_000_000, 1_700_000_001_000_000_000]) == RACY_NS


def test_a_file_touched_without_change_is_hashed_not_reparsed(
    counting: MemoryService, store: Path
) -> None:
    sync(counting)
    age(store / "notes/n05.md", HOUR_NS // 2)  # a new mtime (outside the racy window), same bytes
    stats, reads = sync(counting)
    assert counts(stats) == (0, 0, 0, 1)
    assert reads == ["notes/n05"]
    stats, reads = sync(counting)
    assert counts(stats) == (0, 0, 0, 0)
    assert reads == []


def test_a_file_deleted_by_hand_disappears_from_every_read(
    counting: MemoryService, store: Path
) -> None:
    sync(counting)
    (store / "notes/n07.md").unlink()
    stats, reads = sync(counting)
    assert counts(stats) == (0, 0, 1, 0)
    assert reads == []
    assert "notes/n07" not in [s.path for s in counting.list_memories().memories]
    assert paths(counting.search("topic7")) == []
    with pytest.raises(NotFoundError):
        counting.get("notes/n07")


def test_a_category_folder_removed_by_hand_removes_its_memories(
    counting: MemoryService, store: Path
) -> None:
    sync(counting)
    (store / "deep/a/b/c.md").unlink()
    for folder in ("deep/a/b", "deep/a", "deep"):
        (store / folder).rmdir()
    stats, _ = sync(counting)
    assert counts(stats) == (0, 0, 1, 0)
    assert paths(counting.search("zebras")) == []


def test_a_file_renamed_outside_the_tool_is_seen_at_its_new_path(
    counting: MemoryService, store: Path
) -> None:
    sync(counting)
    old_id = counting.citation_id("notes/n02")
    (store / "archive").mkdir()
    os.rename(store / "notes/n02.md", store / "archive/n02.md")
    stats, reads = sync(counting)
    assert counts(stats) == (1, 0, 1, 0)
    assert reads == ["archive/n02"]
    assert paths(counting.search("topic2")) == ["archive/n02"]
    listed = [s.path for s in counting.list_memories().memories]
    assert "archive/n02" in listed
    assert "notes/n02" not in listed
    # A rename the tool did not see is a new identity; the old ID says where it was.
    assert counting.citation_id("archive/n02") != old_id
    with pytest.raises(NotFoundError, match="notes/n02"):
        counting.resolve(old_id)


def test_a_file_written_by_another_process_is_seen_on_the_next_call(
    counting: MemoryService, store: Path
) -> None:
    assert paths(counting.search("walrus")) == []
    script = (
        "import pathlib, sys\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text('# N4\\n\\nA walrus now lives here.\\n', encoding='utf-8')\n"
    )
    subprocess.run([sys.executable, "-c", script, str(store / "notes/n04.md")], check=True)
    assert paths(counting.search("walrus")) == ["notes/n04"]


def test_a_memory_added_by_another_cli_process_sharing_the_index_is_found(
    counting: MemoryService, store: Path, tmp_path: Path, isolated_home: Path
) -> None:
    counting.list_memories()
    done = subprocess.run(
        [sys.executable, "-m", "memory_enhancement", "add", "notes/otter", "-c", "Otters swim.",
         "--dir", str(store), "--index", str(tmp_path / "index.db")],
        env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = counting.search("otters")
    assert paths(found) == ["notes/otter"]
    assert found[0].hit.row.citation_id in done.stdout


def test_git_checkout_of_another_branch_is_seen(git_repo: Path, tmp_path: Path) -> None:
    store = git_repo / ".memories"

    def write(path: str, body: str) -> None:  # dated now, as a checkout dates the files it writes
        write_memory(store, path, body, title=path.rpartition("/")[2], age_ns=None)

    write("team/owner", "The payments team owns billing.")
    write("team/oncall", "Alice is on call this week.")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "memories")
    service = disk_service(store, git_repo, tmp_path)
    assert paths(service.search("payments")) == ["team/owner"]
    git(git_repo, "checkout", "-q", "-b", "reorg")
    write("team/owner", "The platform group owns billing now.")
    (store / "team/oncall.md").unlink()
    write("team/budget", "Budget review is in March.")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "reorg")
    assert paths(service.search("platform")) == ["team/owner"]
    git(git_repo, "checkout", "-q", "main")
    assert paths(service.search("payments")) == ["team/owner"]
    assert paths(service.search("platform")) == []
    assert paths(service.search("alice")) == ["team/oncall"]
    assert paths(service.search("budget")) == []
    git(git_repo, "checkout", "-q", "reorg")
    assert paths(service.search("platform")) == ["team/owner"]
    assert paths(service.search("payments")) == []
    assert paths(service.search("alice")) == []
    assert paths(service.search("budget")) == ["team/budget"]


def test_unreadable_files_are_reported_and_a_header_that_does_not_parse_leaves_the_text_read(
    counting: MemoryService, store: Path
) -> None:
    """A file that is not text is skipped; one whose frontmatter is not YAML is reported
    too, but its text (after the header) is still searched, as plain markdown."""
    (store / "bad").mkdir()
    (store / "bad/latin.md").write_bytes("# Caf\xe9\n\nsecretword here\n".encode("latin-1"))
    (store / "bad/yaml.md").write_text(
        "---\ntags: [unclosed\n---\n# Y\n\nsecretword here\n", encoding="utf-8"
    )
    write_memory(store, "notes/fine", "The secretword is fine here.", title="Fine")
    listing = counting.list_memories()
    assert [s.path for s in listing.memories if s.path.startswith("bad/")] == ["bad/yaml"]
    assert len(listing.skipped) == 2
    assert listing.skipped[0].startswith("bad/latin: not UTF-8")
    assert listing.skipped[1].startswith("bad/yaml: malformed YAML")
    assert sorted(paths(counting.search("secretword"))) == ["bad/yaml", "notes/fine"]
    # Once repaired by hand, the file is indexed like any other.
    write_memory(store, "bad/yaml", "The secretword, repaired.", title="Y", tags=["fixed"])
    assert paths(counting.search("secretword", tag="fixed")) == ["bad/yaml"]
    assert len(counting.list_memories().skipped) == 1


def test_an_unreadable_file_is_not_read_again_until_it_changes(
    counting: MemoryService, store: Path
) -> None:
    (store / "notes/broken.md").write_bytes(b"\xff\xfe not text")
    age(store / "notes/broken.md")
    stats, reads = sync(counting)
    assert stats.added == 13 + 1
    assert "notes/broken" in reads
    stats, reads = sync(counting)
    assert (counts(stats), reads) == ((0, 0, 0, 0), [])
