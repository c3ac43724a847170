"""The float32 copy of the semantic vectors beside the index (index/vector_file.py).

A process that searches once maps it instead of converting the index's float16
blobs. It is a copy of a cache, so these tests show it is never trusted over the
index: a rebuilt index does not read the file of the one before, a folder that
cannot be written falls back, and a damaged file is ignored (and written again).
Each "next process" is the module's in-process cache emptied, with the real model.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from index_support import disk_service, paths, write_memory
from memory_enhancement.index import schema, semantic, vector_file
from memory_enhancement.service import MemoryService

pytestmark = pytest.mark.semantic

MEMORIES = {
    "garage/vehicles": ("Vehicles", "Our fleet of cars is parked in the garage."),
    "food/lunch": ("Lunch", "The cafeteria serves pasta and salad on Fridays."),
    "db/orders": ("Orders table", "Postgres stores the orders table with an index."),
}
OTHERS = {
    "pets/cats": ("Cats", "The office cat sleeps on the warm printer."),
    "music/choir": ("Choir", "The choir rehearses hymns every Thursday evening."),
    "sport/ski": ("Skiing", "Fresh powder snow covered the mountain slopes."),
}
MODEL = semantic.DEFAULT_MODEL


@pytest.fixture(autouse=True)
def fresh_processes() -> Iterator[None]:
    """Each test starts, and leaves, with no vectors held in memory."""
    semantic._MATRICES.clear()
    yield
    semantic._MATRICES.clear()


@pytest.fixture
def service(store_dir: Path, git_repo: Path, tmp_path: Path) -> MemoryService:
    for path, (title, body) in MEMORIES.items():
        write_memory(store_dir, path, body, title=title)
    made = disk_service(store_dir, git_repo, tmp_path)
    made.embed()
    return made


def matrix(tmp_path: Path) -> semantic._Matrix:
    """The vectors as the next process gets them."""
    semantic._MATRICES.clear()
    conn = sqlite3.connect(tmp_path / "index.db")
    try:
        return semantic._matrix(conn, MODEL)
    finally:
        conn.close()


def from_index(tmp_path: Path) -> tuple[list[str], np.ndarray]:
    """(hashes, float32 rows) read straight from the index's float16 blobs."""
    conn = sqlite3.connect(tmp_path / "index.db")
    try:
        stored = conn.execute(
            "SELECT hash, data FROM vectors WHERE model = ? ORDER BY hash", (MODEL,)
        ).fetchall()
    finally:
        conn.close()
    rows = np.frombuffer(b"".join(d for _, d in stored), dtype=np.float16).astype(np.float32)
    return [h for h, _ in stored], rows.reshape(-1, 384)


def written(tmp_path: Path) -> tuple[Path, Path]:
    """The rows file and side file of the index's current vectors (they must exist)."""
    found = sorted((tmp_path / f"index.db{vector_file.SUFFIX}").iterdir())
    assert [f.suffix for f in found] == [".json", ".npy"], found
    return found[1], found[0]


def test_the_next_process_maps_the_file_the_first_wrote(
    service: MemoryService, tmp_path: Path
) -> None:
    first = paths(service.search("automobile", mode="semantic"))
    rows_file, keys_file = written(tmp_path)
    assert json.loads(keys_file.read_text())["shape"] == [3, 384]
    mapped = matrix(tmp_path)
    assert isinstance(mapped.rows, np.memmap)
    hashes, rows = from_index(tmp_path)
    assert mapped.hashes == hashes
    assert np.array_equal(np.asarray(mapped.rows), rows)
    assert paths(service.search("automobile", mode="semantic")) == first
    # A changed memory moves the generation on: the old file is replaced, never read.
    write_memory(tmp_path / "store", "food/lunch", "Ramen on Fridays now.", title="Lunch")
    service.embed()
    assert not isinstance(matrix(tmp_path).rows, np.memmap)  # read from the index
    assert written(tmp_path)[0] != rows_file
    assert isinstance(matrix(tmp_path).rows, np.memmap)
    assert np.array_equal(np.asarray(matrix(tmp_path).rows), from_index(tmp_path)[1])


def test_a_rebuilt_index_never_reads_the_file_of_the_one_before(
    store_dir: Path, git_repo: Path, tmp_path: Path
) -> None:
    for path, (title, body) in MEMORIES.items():
        write_memory(store_dir, path, body, title=title)
    disk_service(store_dir, git_repo, tmp_path).embed()
    before = matrix(tmp_path)
    old_rows, _ = written(tmp_path)
    # The index is discarded (a damaged file, a new schema) while the store changes:
    # the new index's generation counts up to the same number.
    schema._discard(tmp_path / "index.db")
    for path in MEMORIES:
        (store_dir / f"{path}.md").unlink()
    for path, (title, body) in OTHERS.items():
        write_memory(store_dir, path, body, title=title)
    semantic._MATRICES.clear()
    rebuilt = disk_service(store_dir, git_repo, tmp_path)
    rebuilt.embed()
    after = matrix(tmp_path)
    assert after.generation.split("-")[1] == before.generation.split("-")[1]
    assert after.generation != before.generation  # another instance
    hashes, rows = from_index(tmp_path)
    assert after.hashes == hashes and not set(hashes) & set(before.hashes)
    assert np.array_equal(np.asarray(after.rows), rows)
    assert not old_rows.exists()  # removed when the new one was written
    assert paths(rebuilt.search("a kitten", mode="semantic"))[0] == "pets/cats"


def test_a_folder_that_cannot_be_written_only_costs_the_speed_up(
    service: MemoryService, tmp_path: Path
) -> None:
    (tmp_path / f"index.db{vector_file.SUFFIX}").write_text("not a folder")
    found = paths(service.search("automobile", mode="semantic"))
    assert found[0] == "garage/vehicles"
    again = matrix(tmp_path)
    assert not isinstance(again.rows, np.memmap)
    assert np.array_equal(again.rows, from_index(tmp_path)[1])
    assert paths(service.search("automobile", mode="semantic")) == found


def _truncate(rows: Path, keys: Path) -> None:
    rows.write_bytes(rows.read_bytes()[:-100])


def _extend(rows: Path, keys: Path) -> None:
    rows.write_bytes(rows.read_bytes() + b"\0" * 1536)


def _flip_a_byte(rows: Path, keys: Path) -> None:
    data = bytearray(rows.read_bytes())
    data[len(data) // 2] ^= 0x40
    rows.write_bytes(bytes(data))


def _other_vectors(rows: Path, keys: Path) -> None:
    np.save(rows, np.ones((3, 384), dtype=np.float32))


def _garbage_side_file(rows: Path, keys: Path) -> None:
    keys.write_bytes(b"\xff{not json")


def _side_file_of_other_rows(rows: Path, keys: Path) -> None:
    data = json.loads(keys.read_text())
    data["starts"] = [0, 2, 1]
    keys.write_text(json.dumps(data))


def _no_side_file(rows: Path, keys: Path) -> None:
    keys.unlink()


def _not_an_npy_file(rows: Path, keys: Path) -> None:
    rows.write_bytes(b"PK\x03\x04 a zip, or anything else")


@pytest.mark.parametrize(
    "damage",
    [
        _truncate,
        _extend,
        _flip_a_byte,
        _other_vectors,
        _garbage_side_file,
        _side_file_of_other_rows,
        _no_side_file,
        _not_an_npy_file,
    ],
)
def test_a_damaged_file_is_ignored_and_written_again(
    service: MemoryService, tmp_path: Path, damage: Callable[[Path, Path], None]
) -> None:
    expected = paths(service.search("automobile", mode="semantic"))
    rows_file, keys_file = written(tmp_path)
    damage(rows_file, keys_file)
    semantic._MATRICES.clear()
    assert paths(service.search("automobile", mode="semantic")) == expected
    read = matrix(tmp_path)
    hashes, rows = from_index(tmp_path)
    assert read.hashes == hashes
    assert np.array_equal(np.asarray(read.rows), rows)
    assert isinstance(read.rows, np.memmap)  # the search wrote it again, whole
    assert os.path.getsize(rows_file) == 128 + 3 * 384 * 4
