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
import stat
from pathlib import Path

# What `write_file` names its temporary files: `.NAME.md.` + 8 random hex digits + `.tmp`.
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
    fd, tmp = _temporary(file)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync_folder:
        fsync_folder(file.parent)


def write_output(file: Path, data: bytes) -> None:
    """Write a file a person named (a report), whole or not at all where it is a regular
    file: through a symlink, into the file it names, keeping that file's permissions; and
    straight into what is no regular file (`/dev/stdout`, a FIFO). A rename over either
    would replace it: the link with a copy, and `/dev/stdout` of a container run as root
    with a file."""
    try:
        found = os.stat(file)
    except FileNotFoundError:
        found = None
    if found is not None and not stat.S_ISREG(found.st_mode):
        with open(file, "wb") as handle:
            handle.write(data)
        return
    mode = stat.S_IMODE(found.st_mode) if found is not None else None
    write_file(Path(os.path.realpath(file)), data, mode)


def _temporary(file: Path) -> tuple[int, str]:
    """A new temporary file beside file (named as `_TEMPORARY` expects), opened for writing.

    Created with mode 0o666 for the kernel to apply the umask, as to any new file: reading
    the umask means setting it (`os.umask`), process-wide, and a thread of the MCP server
    creating a folder in that instant would get it world-writable."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = os.path.join(file.parent, f".{file.name}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {file}")


def fsync_folder(folder: Path) -> None:
    """Make the renames into folder durable (a folder that cannot be opened is let be)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
