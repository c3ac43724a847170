"""Writers killed at random points (SIGKILL): no file is left half-written or unreadable.

A child process writes memories as fast as it can through the same service the
CLI and the MCP server use (add, update, add a citation, remove; big contents,
so a kill often lands inside a write or an index transaction), and is killed
after a random delay, a bounded number of times (seeded, so a failure
reproduces); every other writer also kills itself, now and then, at the worst
moment of a write: the new bytes in a temporary file, not yet renamed into
place (an audit hook on `os.rename`). Afterwards:

- every memory file parses;
- the index, brought in step with the files the ordinary way, holds exactly what
  an index rebuilt from nothing holds (paths, content hashes, citation IDs);
- temporary files a killed write left behind are gone after the next write to
  their folder.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_support import child_env
from memory_enhancement.cli.app import App
from memory_enhancement.index.index import Index
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State

KILLS = 10
SEED = 14

WRITER = r"""
import itertools, os, random, signal, sys
from memory_enhancement.cli.app import App
from memory_enhancement.core.errors import MemoryToolError

store, seed, crash = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rng = random.Random(seed)

def at_rename(event, args):
    # The worst moment: the new bytes are in a temporary file, not yet renamed into place.
    if event == "os.rename" and str(args[0]).endswith(".tmp") and rng.random() < crash:
        os.kill(os.getpid(), signal.SIGKILL)

sys.addaudithook(at_rename)
app = App(cwd=None)
app.options["dir"] = store
service = app.service()
big = "Lorem ipsum dolor sit amet. " * 4000
print("ready", flush=True)  # imports done: the kill's delay counts from here
for n in itertools.count():
    folder = rng.choice(["alpha", "beta", "gamma/deep"])
    path = f"{folder}/m{rng.randrange(12)}"
    action = rng.choice(["add", "update", "cite", "remove"])
    try:
        if action == "add":
            service.add(path, f"Memory {n}.\n\n{big[: rng.randrange(200_000)]}",
                        tags=["fault"], citations=["src/app.py:3"])
        elif action == "update":
            service.update(path, content=f"Updated {n}.\n\n{big[: rng.randrange(200_000)]}")
        elif action == "cite":
            service.add_citation(path, f"src/app.py:{rng.randrange(1, 8)}")
        else:
            service.remove(path)
    except MemoryToolError:
        pass  # the memory is not there (yet), or already is: carry on
"""


def _snapshot(index_file: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(index_file) as conn:
        return conn.execute(
            "SELECT path, hash, citation_id, error FROM memories ORDER BY path"
        ).fetchall()


@pytest.mark.slow
def test_writers_killed_at_random_points_leave_every_file_readable_and_the_index_true(
    isolated_home: Path, git_repo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    (store / "serena").mkdir(parents=True)
    (store / "serena" / "note.md").write_text("A Serena note.\n\n## Citations\n", "utf-8")
    rng = random.Random(SEED)
    env = child_env(isolated_home)
    for kill in range(KILLS):
        crash = 0.2 if kill % 2 else 0.0  # every other writer also dies inside a write
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store), str(kill), str(crash)],
            cwd=git_repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert writer.stdout is not None
        # Its imports first (seconds on a loaded machine: a delay counted from the start
        # once left every writer killed before its first write), then writes until killed.
        writer.stdout.readline()
        time.sleep(rng.uniform(0.3, 1.5))
        if writer.poll() is None:
            os.kill(writer.pid, signal.SIGKILL)
        assert writer.wait(timeout=30) == -signal.SIGKILL
        assert writer.stderr is not None
        writer.stderr.close()
        writer.stdout.close()

    memories = Store(store)
    paths = list(memories.iter_paths())
    assert len(paths) > 3, "the writers wrote next to nothing: the test proves nothing"
    for path in paths:
        memories.read(path)  # raises if any file is half-written or unreadable

    app = App(env=env, cwd=git_repo)
    app.options["dir"] = str(store)
    service = app.service()
    listing = service.list_memories(include_expired=True)
    assert listing.skipped == []
    assert sorted(s.path for s in listing.memories) == sorted(paths)
    rebuilt = tmp_path / "rebuilt.db"
    Index(memories, rebuilt, State(service.state.path)).rebuild()
    assert service.index.path is not None
    assert _snapshot(service.index.path) == _snapshot(rebuilt)

    leftovers = sorted(store.rglob(".*.tmp"))
    for folder in sorted({p.parent for p in leftovers}):
        category = folder.relative_to(store).as_posix()
        service.add(f"{category}/after-the-kills", "The next write to this folder.")
    assert sorted(store.rglob(".*.tmp")) == []
    print(f"{KILLS} kills, {len(paths)} memories, {len(leftovers)} temporary files cleaned")
