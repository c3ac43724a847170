"""Whether a store's folders changed since the index's last sync: the test that lets a
read of a big store answer without stat-ing every file.

Kept apart from scan.py, with nothing but `os`, because the quick read path
(index/quick.py) asks it in a process that must start in a few milliseconds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

RACY_NS = 2_000_000_000  # whole-second filesystems (FAT: 2 s): the resolution assumed
FINE_RACY_NS = 20_000_000  # sub-second ones: more than a kernel timer tick (4-10 ms)


def racy_window(mtimes: Iterable[int]) -> int:
    """How close to a sync's start an mtime must be to count as possibly changed since:
    the filesystem's timestamp resolution. A filesystem that records sub-second times
    shows it in any folder's mtime; without one, whole seconds are assumed."""
    fine = any(mtime % 1_000_000_000 for mtime in mtimes)
    return FINE_RACY_NS if fine else RACY_NS


def settled(mtime_ns: int, since_ns: int) -> bool:
    """Whether a file's stat, taken no earlier than `since_ns`, tells any later write
    apart: its time is older than that by more than the filesystem's resolution. A file
    written within it and then again keeps its time on a whole-second filesystem, and may
    keep its size, so what was judged from it is not kept (verify/mention_reading.py,
    verify/fingerprints.py)."""
    return mtime_ns < since_ns - racy_window((mtime_ns,))


def folders_unchanged(
    root: str, dirs: dict[str, int], synced_at_ns: int, window_ns: int = RACY_NS
) -> bool:
    """Whether no folder changed (nor could have, unseen) since the last sync: the fast
    path of a sync that does not stat files, one stat per folder and nothing else."""
    racy_after = synced_at_ns - window_ns
    for folder, recorded in dirs.items():
        try:
            mtime = os.stat(os.path.join(root, folder) if folder else root).st_mtime_ns
        except OSError:
            return False
        if mtime != recorded or mtime >= racy_after:
            return False
    return True
