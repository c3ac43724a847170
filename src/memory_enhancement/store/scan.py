"""Finding what changed on disk since the last sync, cheaply.

Two signals. A folder's mtime changes whenever an entry is added, removed or
renamed in it, which covers new and deleted memories and every atomic save
(this tool, git checkouts and pulls, `sed -i`, most editors' "write to a
temporary file and rename"). A file's own (mtime, size) changes when it is
rewritten in place. Folders are always checked (one stat each); files are
stat-ed one by one only when `check_files` is set, which the index does on
every call for stores of ordinary size and periodically for huge ones.
A folder or file whose mtime is not safely older than the previous sync's start
(within the filesystem's timestamp resolution of it, or later) is treated as
changed, so a write inside one mtime tick is not missed; a file written well
before a sync started is settled by that sync, so a bulk write costs one
re-read, not two.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from stat import S_ISLNK

from memory_enhancement.core.files import MEMORY_SUFFIX
from memory_enhancement.store.freshness import RACY_NS


class Snapshot:
    """Every memory file with its (mtime_ns, size), and every folder with its mtime.

    `links`, when the scan stat-ed every file itself (none copied from the previous
    snapshot), is the memory files that are symbolic links (their stats are their
    targets'), and `taken_ns` when it started: then a reader of the same call may take
    a regular file's stat from here instead of stat-ing it again (verify/
    mention_reading.py). None when some stats are an earlier call's.

    A plain class, not a dataclass: the quick read path (index/quick.py) scans small
    stores with this module, in a process where importing `dataclasses` costs more
    than the scan."""

    __slots__ = ("dirs", "files", "links", "taken_ns")

    def __init__(
        self,
        files: dict[str, tuple[int, int]],
        dirs: dict[str, int],
        links: set[str] | None = None,
        taken_ns: int = 0,
    ) -> None:
        self.files = files
        self.dirs = dirs
        self.links = links
        self.taken_ns = taken_ns


def rescan(
    root: str,
    previous: Snapshot | None,
    *,
    check_files: bool,
    synced_at_ns: int | None,
    window_ns: int = RACY_NS,
) -> Snapshot:
    """The current snapshot, reusing the previous one for folders that did not change
    (every folder is read when there is no previous snapshot)."""
    taken_ns = time.time_ns()
    old = previous or Snapshot({}, {})
    racy_after = synced_at_ns - window_ns if synced_at_ns else None
    by_dir: dict[str, list[str]] = defaultdict(list)
    for path in old.files:
        by_dir[path.rpartition("/")[0]].append(path)
    subdirs: dict[str, list[str]] = defaultdict(list)
    for folder in old.dirs:
        if folder:
            subdirs[folder.rpartition("/")[0]].append(folder)
    files: dict[str, tuple[int, int]] = {}
    dirs: dict[str, int] = {}
    links: set[str] | None = set()  # None once a stat is copied from `previous`
    stack = [""]
    while stack:
        folder = stack.pop()
        absolute = os.path.join(root, folder) if folder else root
        try:
            mtime = os.stat(absolute).st_mtime_ns
        except (FileNotFoundError, NotADirectoryError):
            continue
        dirs[folder] = mtime
        unchanged = old.dirs.get(folder) == mtime and (racy_after is None or mtime < racy_after)
        if not unchanged:
            _list(root, folder, files, stack, links)
            continue
        stack.extend(subdirs.get(folder, ()))
        if not check_files:
            for path in by_dir.get(folder, ()):
                files[path] = old.files[path]
                links = None
            continue
        head = root if root.endswith(os.sep) else root + os.sep  # joined by hand: 10k files
        for path in by_dir.get(folder, ()):
            file = head + path + MEMORY_SUFFIX
            try:  # lstat, then the target's stat for a link: the same stat, one call
                stat = os.lstat(file)
                if S_ISLNK(stat.st_mode):
                    if links is not None:
                        links.add(path)
                    stat = os.stat(file)
            except OSError:
                continue  # deleted in place (the folder mtime would normally say so)
            files[path] = (stat.st_mtime_ns, stat.st_size)
    return Snapshot(files, dirs, links, taken_ns if links is not None else 0)


def full_scan(root: str, prefix: str = "") -> Snapshot:
    """Walk everything under root; paths are reported with prefix in front."""
    found = rescan(root, None, check_files=True, synced_at_ns=None)
    if not prefix:
        return found
    return Snapshot({prefix + path: stat for path, stat in found.files.items()}, found.dirs)


def _list(
    root: str,
    folder: str,
    files: dict[str, tuple[int, int]],
    stack: list[str],
    links: set[str] | None,
) -> None:
    """Read one folder: its memory files (with stats) into files, those that are
    symbolic links into links, its subfolders onto stack."""
    absolute = os.path.join(root, folder) if folder else root
    prefix = f"{folder}/" if folder else ""
    try:
        entries = list(os.scandir(absolute))
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            stack.append(prefix + name)
        elif name.endswith(MEMORY_SUFFIX):
            try:
                stat = entry.stat()
            except OSError:
                continue  # a dangling symlink
            path = prefix + name[: -len(MEMORY_SUFFIX)]
            files[path] = (stat.st_mtime_ns, stat.st_size)
            if links is not None and entry.is_symlink():
                links.add(path)
