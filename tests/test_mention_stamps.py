"""The memory files' stats a verify-all's mention reader goes by: a file whose size and
time are as its kept row says is not read again, so a stat must tell every change apart.
It is the index's sync's of the same call when that sync stat-ed every file itself, never
a symbolic link's target's, never one copied from an earlier call, and never kept when a
write within the filesystem's timestamp resolution could leave the file's time as it was."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memory_enhancement.core.verdicts import VerifyOptions
from memory_enhancement.index.index import Index
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository
from verify_support import FIXED_NOW, GitRepo, code, note

OLD_NS = 1_700_000_000_123_456_789  # long before any run: a stat taken then is settled


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/app.py", code("src/app.py", 30))
    repo.commit("code")
    note(repo, "See src/app.py:5 and `src/app.py`.")
    note(repo, "Nothing named; `http://x.io:80` is no file.", name="plain")  # read, none found
    repo.commit("memories")
    return repo


def said(repo: GitRepo, state: State, index: Index | None = None) -> dict[str, list[str]]:
    """Each memory's mentions as a whole-store run with mentions gives them."""
    service = MemoryService(
        Store(repo.store_root), Repository(repo.root), state=state, clock=lambda: FIXED_NOW,
        index=index, index_path=None if index is not None else repo.root / "index.db",
    )  # fmt: skip
    run = service.verify_all(options=VerifyOptions())
    return {r.path: sorted(c.mention.text for c in r.mentions if c.mention) for r in run.results}


def edited(file: Path, old: bytes, new: bytes) -> None:
    """The file written again in place (its folder's time unchanged), its size kept."""
    data = file.read_bytes()
    assert len(old) == len(new) and old in data
    file.write_bytes(data.replace(old, new))


def timed(path: Path, ns: int) -> None:
    os.utime(path, ns=(ns, ns), follow_symlinks=False)


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("notes", b"src/app.py:5", b"src/app.py:6"),  # a mention changed
        ("plain", b"Nothing named", b"src/app.py:9 "),  # a first mention written
    ],
)
def test_a_memory_written_again_within_a_second_on_a_whole_second_filesystem_is_read_again(
    repo: GitRepo, name: str, old: bytes, new: bytes
) -> None:
    """A whole-second filesystem (FAT, some network mounts) gives a file written twice in
    one second the same time: the second write, of the same size, looks like no write.
    The index reads such a file again (store/scan.py); the mention reader keeps no stamp
    for a file that recent either, so its mentions are read again, not taken as kept."""
    state = State(repo.root / "state.db")
    second = time.time_ns() // 10**9 * 10**9  # this whole second, as such a filesystem says
    memory = repo.store_root / f"{name}.md"
    timed(memory, second)
    timed(repo.store_root, second)
    first = said(repo, state)
    assert first.get("notes") == ["src/app.py", "src/app.py:5"]
    assert "plain" not in first
    edited(memory, old, new)
    timed(memory, second)
    now = said(repo, state)
    assert new.strip().decode() in now[name]


@pytest.mark.parametrize("folder_written", [True, False])
def test_a_memory_file_replaced_by_a_link_to_one_of_its_size_and_time_is_read(
    repo: GitRepo, folder_written: bool
) -> None:
    """The index's stat follows a link: a memory replaced by a link to a file of the same
    size and time has that stat. The reader reads a link's file every time, whether the
    sync listed the folder again or stat-ed the files of a folder it took as unchanged."""
    state = State(repo.root / "state.db")
    memory = repo.store_root / "notes.md"
    timed(memory, OLD_NS)
    timed(repo.store_root, OLD_NS)
    assert said(repo, state)["notes"] == ["src/app.py", "src/app.py:5"]
    assert said(repo, state)["notes"] == ["src/app.py", "src/app.py:5"]  # kept, as read
    target = repo.store_root / "elsewhere.txt"
    target.write_bytes(memory.read_bytes().replace(b"src/app.py:5", b"src/app.py:7"))
    timed(target, OLD_NS)
    memory.unlink()
    memory.symlink_to("elsewhere.txt")
    if not folder_written:
        timed(repo.store_root, OLD_NS)
    assert said(repo, state)["notes"] == ["src/app.py", "src/app.py:7"]


def test_a_memory_stat_an_earlier_sync_took_is_not_taken_for_this_runs(repo: GitRepo) -> None:
    """A huge store's sync stats the files of unchanged folders only now and then, and
    copies the last stats meanwhile: a file written in place since has its old stat
    there. The reader stats it itself then, and reads it."""
    deep = repo.store_root / "deep"
    deep.mkdir()
    memory = deep / "notes.md"
    (repo.store_root / "notes.md").rename(memory)
    repo.commit("moved")
    timed(memory, OLD_NS)
    timed(deep, OLD_NS)
    state = State(repo.root / "state.db")

    def index() -> Index:
        store = Store(repo.store_root)
        return Index(
            store, repo.root / "index.db", state, full_check_limit=0, full_check_interval=3600
        )

    assert said(repo, state, index())["deep/notes"] == ["src/app.py", "src/app.py:5"]
    data = memory.read_bytes()
    memory.write_bytes(data.replace(b"src/app.py:5", b"src/app.py:12"))  # longer, in place
    timed(deep, OLD_NS)
    note(repo, "A new memory at the top.", name="added")  # the top folder changed
    assert said(repo, state, index())["deep/notes"] == ["src/app.py", "src/app.py:12"]


def test_a_cited_file_written_again_within_a_second_on_a_whole_second_filesystem_is_seen(
    repo: GitRepo,
) -> None:
    """The same for a file the verdicts name, whose size and time are their fingerprint
    (verify/fingerprints.py): verdicts naming a file that recent are not kept. Here a local
    file git never had, whose line count alone is checked: rewritten within the second,
    its size kept, it has one line, and the mention of its third is past its end."""
    note(repo, "Local settings: local/settings.yml:3 holds the port.", name="local")
    repo.commit("a memory naming a local file")
    settings = repo.root / "local/settings.yml"
    settings.parent.mkdir()
    settings.write_bytes(b"a\nb\nc\n")
    second = time.time_ns() // 10**9 * 10**9
    timed(settings, second)
    state = State(repo.root / "state.db")

    def status() -> str:
        service = MemoryService(
            Store(repo.store_root), Repository(repo.root), state=state, clock=lambda: FIXED_NOW,
            index_path=repo.root / "index.db",
        )  # fmt: skip
        run = service.verify_all(options=VerifyOptions())
        found = [c for r in run.results for c in r.mentions if c.mention]
        (check,) = [c for c in found if c.mention and c.mention.text == "local/settings.yml:3"]
        return check.status._value_

    assert status() == "unchecked"
    settings.write_bytes(b"abc d\n")
    timed(settings, second)
    assert status() == "out_of_range"
