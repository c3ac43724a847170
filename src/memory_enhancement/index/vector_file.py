"""The semantic vectors kept beside the index as a float32 file, for the next process.

The index stores each text's chunk vectors as a float16 blob (schema.py). A process
that searches once, the CLI, would spend most of its semantic search reading the
blobs and converting them to float32 (~65 ms of CPU at 10,000 memories); so the first
process that reads them also writes them out as one float32 `.npy` file, and the next
memory-maps it instead (docs/benchmarks.md, issue 13).

The file is a copy of a cache, so it must never be trusted over the index:

* its name holds the index's `instance` (a random id made with the database) and
  `vectors_generation` (moved on by every change to the vectors): a rebuilt index,
  whose generation counts from zero again, never reads a file of the one before, and
  changed vectors are never read from an older file;
* a side file written after it records the shape, which rows are whose, and a CRC-32
  of the rows; a file that is missing, short, long or damaged is ignored and the
  vectors are read from the index as before;
* a folder that cannot be written (a read-only index) costs only the speed-up.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SUFFIX = ".vectors"  # the folder beside the index file: `index.db.vectors/`


def files(database: str, model: str, generation: str) -> tuple[Path, Path]:
    """The rows file and its side file for these vectors."""
    return _folder(database) / f"{_slug(model)}-{generation}.npy", _folder(database) / (
        f"{_slug(model)}-{generation}.json"
    )


def load(
    database: str, model: str, generation: str
) -> tuple[list[str], npt.NDArray[np.intp], npt.NDArray[np.float32]] | None:
    """(hashes, first row of each, rows) from the file, or None when it cannot be trusted."""
    import numpy as np

    rows_file, keys_file = files(database, model, generation)
    try:
        keys = json.loads(keys_file.read_text(encoding="utf-8"))
        rows = np.lib.format.open_memmap(rows_file, mode="r")  # .npy only, never pickles
        hashes, starts = _checked(keys, rows, os.path.getsize(rows_file))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError):
        return None  # missing, unreadable or damaged: the caller reads the index
    return hashes, starts, rows


def save(
    database: str,
    model: str,
    generation: str,
    hashes: list[str],
    starts: npt.NDArray[np.intp],
    rows: npt.NDArray[np.float32],
) -> bool:
    """Write the file for the next process; files of older generations are removed.

    Returns whether it was written. The rows are renamed into place first and the side
    file last, so a reader finds both complete or no side file at all.
    """
    import numpy as np

    rows_file, keys_file = files(database, model, generation)
    temporary = rows_file.with_name(f"{rows_file.name}.{os.getpid()}.tmp")
    try:
        rows_file.parent.mkdir(exist_ok=True)
        for old in rows_file.parent.glob(f"{_slug(model)}-*"):
            if old.suffix in (".npy", ".json"):
                old.unlink(missing_ok=True)
        data = np.ascontiguousarray(rows, dtype=np.float32)
        with temporary.open("wb") as out:
            np.save(out, data, allow_pickle=False)
        os.replace(temporary, rows_file)
        keys = {
            "hashes": hashes,
            "starts": starts.tolist(),
            "shape": list(data.shape),
            "crc32": zlib.crc32(data.data),
        }
        temporary.write_text(json.dumps(keys), encoding="utf-8")
        os.replace(temporary, keys_file)
    except OSError:  # a read-only or full folder: the next process reads the index
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        return False
    return True


def _checked(keys: Any, rows: Any, size: int) -> tuple[list[str], npt.NDArray[np.intp]]:
    """The side file's hashes and starts, once the rows are shown to be what it recorded."""
    import numpy as np

    hashes, shape = keys["hashes"], tuple(keys["shape"])
    starts = np.array(keys["starts"], dtype=np.intp)
    if (
        rows.dtype != np.float32
        or rows.ndim != 2
        or rows.shape != shape
        or rows.offset + rows.nbytes != size  # np.load refuses a short file, not a long one
        or not isinstance(hashes, list)
        or not all(isinstance(h, str) for h in hashes)
        or starts.ndim != 1
        or len(starts) != len(hashes)
        or (len(starts) and (starts[0] != 0 or starts[-1] >= shape[0]))
        or bool((np.diff(starts) <= 0).any())
    ):
        raise ValueError("vector file does not match its side file")
    if zlib.crc32(np.ascontiguousarray(rows).data) != keys["crc32"]:
        raise ValueError("vector file damaged")
    return hashes, starts


def _folder(database: str) -> Path:
    return Path(f"{database}{SUFFIX}")


def _slug(model: str) -> str:
    return hashlib.sha1(model.encode("utf-8")).hexdigest()[:12]
