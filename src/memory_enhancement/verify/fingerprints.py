"""What a memory's verdicts on its mentions depend on now: the fingerprint the mention
cache (mention_cache.py) keeps with them, and checks on a rerun."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory_enhancement.core.mentions import GRAMMAR
from memory_enhancement.store.freshness import settled
from memory_enhancement.verify.mention_cache import VERSION


class Fingerprints:
    """What a memory's verdicts depend on now, per run: the grammar that read its
    mentions, HEAD, git's index (its file's size and modification time), and each file
    the verdicts name (its size and modification time, or its absence). Stats only: no
    file is read.

    Kept as one line of text per file after the run's line (`path<TAB>size:mtime`) and
    checked line by line: a rerun checks hundreds of memories' fingerprints, and decoding
    them from JSON lists, or encoding and hashing them, cost more than stat-ing the files
    (each file is stat-ed once per run: a store's mentions name the same few hundred
    files again and again)."""

    def __init__(self, repo_root: Path, toplevel: Path | None) -> None:
        self.root = os.path.join(str(repo_root), "")
        git_dir = toplevel / ".git" if toplevel is not None else None
        self.index = str(git_dir / "index") if git_dir is not None and git_dir.is_dir() else None
        self._stats: dict[str, str] = {}
        self._runs: dict[str | None, str] = {}
        self._since = time.time_ns()  # before any stat of this run

    def of(self, head: str | None, paths: Sequence[str]) -> str | None:
        """The fingerprint of verdicts naming `paths`; None when a path holds a tab or a
        line break (its verdicts are then judged on every run, never kept), or when git's
        index or a file named was written too recently for its stat to tell a later write
        apart (`_settled`: judged again by the next run, which keeps them)."""
        if any("\t" in path or "\n" in path for path in paths):
            return None
        stats = [self._stat(path) for path in paths]
        run = self._run(head)
        if not all(map(self._settled, stats)) or not self._settled(run.rpartition(" ")[2]):
            return None
        named = (f"{path}\t{stat}" for path, stat in zip(paths, stats, strict=True))
        return "\n".join([run, *named])

    def _settled(self, stat: str) -> bool:
        """Whether a `_stat` tells any later write apart: none ("-"), or a time older than
        this run's start by more than the filesystem's timestamp resolution (a file
        written again within it keeps its time on a whole-second filesystem, and may keep
        its size: store/freshness.py, as the index decides)."""
        mtime = int(stat.rpartition(":")[2]) if stat != "-" else 0
        return settled(mtime, self._since)

    def holding(self, head: str | None, kept: Sequence[Any]) -> list[bool]:
        """Of each fingerprint `of` gave when verdicts were kept, whether it is the same now.

        Read together: a rerun checks 500 memories' fingerprints, naming the same few
        hundred files, and most lines are in several. Each distinct line is checked once
        (the run's line against this run's, a file's against its stat now); a memory holds
        when none of its lines failed, which, when none did, needs no look at its lines."""
        texts = [fp if isinstance(fp, str) else None for fp in kept]
        run = self._run(head)
        stats = self._stats
        failed = set()
        for line in set("\n".join(fp for fp in texts if fp is not None).split("\n")):
            path, tab, stat = line.partition("\t")
            if tab:
                if (stats.get(path) or self._stat(path)) != stat:
                    failed.add(line)
            elif line != run:  # the run's line, or "" (none kept)
                failed.add(line)
        out = []
        for fp in texts:
            if fp is None:
                out.append(False)
            elif not failed:
                out.append(fp.startswith(run) and (len(fp) == len(run) or fp[len(run)] == "\n"))
            else:
                lines = fp.split("\n")
                out.append(lines[0] == run and failed.isdisjoint(lines))
        return out

    def _run(self, head: str | None) -> str:
        run = self._runs.get(head)
        if run is None:
            index = _stat(self.index) if self.index else "-"
            run = self._runs[head] = f"{VERSION} {GRAMMAR} {head} {index}"
        return run

    def _stat(self, path: str) -> str:
        found = self._stats.get(path)
        if found is None:
            found = self._stats[path] = _stat(path if path.startswith("/") else self.root + path)
        return found


def _stat(file: str) -> str:
    """A file's size and modification time as a fingerprint keeps them ("-": none)."""
    try:
        found = os.stat(file)
    except (OSError, ValueError):
        return "-"
    return f"{found.st_size}:{found.st_mtime_ns}"
