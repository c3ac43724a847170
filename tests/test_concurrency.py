"""Writes from several real processes at once (issue 2 §7): nothing lost, nothing torn."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.verify.repo import Repository

WORKERS = 4
PER_WORKER = 50

WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from memory_enhancement.verify.repo import Repository
    from memory_enhancement.service import MemoryService
    from memory_enhancement.store.disk import Store

    store, code, worker, count, mode = sys.argv[1:]
    service = MemoryService(Store(Path(store)), Repository(Path(code)))
    for n in range(int(count)):
        if mode == "add":
            service.add(
                f"shared/worker-{worker}-{n:03d}",
                f"# Memory {n} of worker {worker}\\n\\n" + "Some body text. " * 50,
                tags=[f"worker-{worker}"],
                citations=[f"src/w{worker}.py:{n + 1}"],
            )
        else:
            service.add_citation("shared/target", f"src/w{worker}.py:{n + 1}")
    """
)


def run_workers(store: Path, code: Path, mode: str, count: int) -> None:
    env = dict(os.environ)
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(store), str(code), str(w), str(count), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for w in range(WORKERS)
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()


def test_four_processes_adding_fifty_memories_each_into_one_category_lose_none(
    tmp_path: Path,
) -> None:
    store, code = tmp_path / "store", tmp_path / "code"
    code.mkdir()
    run_workers(store, code, "add", PER_WORKER)

    service = MemoryService(Store(store), Repository(code))
    listing = service.list_memories("shared")
    assert listing.skipped == []
    paths = [s.path for s in listing.memories]
    expected = [f"shared/worker-{w}-{n:03d}" for w in range(WORKERS) for n in range(PER_WORKER)]
    assert sorted(paths) == sorted(expected)
    for path in expected:
        memory = service.get(path).memory
        worker = path.split("-")[1]
        assert memory.meta.tags == (f"worker-{worker}",)
        assert [c.ref for c in memory.meta.citations] == [
            f"src/w{worker}.py:{int(path.rsplit('-', 1)[1]) + 1}"
        ]
    leftovers = [p for p in store.rglob("*") if p.is_file() and not p.name.endswith(".md")]
    assert leftovers == []


def test_four_processes_citing_one_memory_at_once_lose_no_citation(tmp_path: Path) -> None:
    store, code = tmp_path / "store", tmp_path / "code"
    code.mkdir()
    service = MemoryService(Store(store), Repository(code))
    service.add("shared/target", "The memory everyone cites.")
    count = 15
    run_workers(store, code, "cite", count)

    refs = [c.ref for c in service.get("shared/target").memory.meta.citations]
    assert sorted(refs) == sorted(
        f"src/w{w}.py:{n + 1}" for w in range(WORKERS) for n in range(count)
    )
