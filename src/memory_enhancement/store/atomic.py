"""Writing a file so that no reader ever sees half of it, and cleaning up after a writer
that was killed before it finished.

A file is written to a temporary file in the same folder, synced, and renamed over the
old one; the folder is synced so the rename survives a crash. A writer killed in between
leaves only its temporary file, which the next write to that folder removes.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

# What `write_file` names its temporary files: `.NAME.md.` + mkstemp's 8 characters.
_TEMPORARY = re.compile(r"^\..+\.md\.[A-Za-z0-9_]{8}\.tmp$")


def clean_stale_temporaries(folder: Path) -> list[str]:
    """Remove temporary files a killed writer left in folder; the caller holds the lock.

    Every write to a store happens under its lock, so while it is held no write
    is in progress and any temporary file there is a leftover of a writer that
    was killed between creating it and renaming it into place.
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not _TEMPORARY.match(entry.name):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(entry.name)
    return removed


def write_file(file: Path, data: bytes, mode: int | None, *, sync_folder: bool = True) -> None:
    """Replace file with data, whole or not at all; `mode` None: as a new file would get.
    Without `sync_folder`, the caller syncs the folder later (a batch: Store.batch)."""
    fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync_folder:
        fsync_folder(file.parent)


def fsync_folder(folder: Path) -> None:
    """Make the renames into folder durable (a folder that cannot be opened is let be)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
