"""Helpers of the health and confidence tests: a project whose clock and code the test drives.

`Project` is a real git repository (verify_support.GitRepo) with a memory store
inside it (`.memories`, the project store the CLI and the MCP server find on
their own) and a service whose clock the test moves. The service keeps its
index and its state database where the CLI keeps them for that store, so what
the test records with an injected clock (verifications on past days, uses,
confirmations) is what `memory-enhancement health` then reports, and what the
CLI records the test can read back.

A service reads each cited file once and asks git once (its `Repository` and
`Git` cache for the service's life, as the CLI and the MCP server build one
service per command or tool call), so after changing the code the project
builds a fresh service over the same files, index and state.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from conftest import Clock
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.locations import cache_home, data_home, store_key
from memory_enhancement.store.state import State
from memory_enhancement.verify import history
from memory_enhancement.verify.repo import Repository
from verify_support import GitRepo, numbered

STORE = ".memories"
APP = numbered(12, "app")  # app_1 = 1 ... app_12 = 12
DB = numbered(8, "db")


class Project:
    """Code in git, a store beside it, and a service with the test's clock."""

    def __init__(self, root: Path, clock: Clock) -> None:
        self.root = root
        self.clock = clock
        self.git = GitRepo(root)
        self.git.write_lines("src/app.py", APP)
        self.git.write_lines("src/db.py", DB)
        self.git.commit("initial")
        self.store = root / STORE
        self.service = self.new_service()

    @property
    def env(self) -> dict[str, str]:
        return {"MEMORY_ENHANCEMENT_HOME": os.environ["MEMORY_ENHANCEMENT_HOME"]}

    def new_service(self, *, state: State | None = None, clock: Clock | None = None) -> Any:
        """A service on this store; by default with the CLI's index and state files."""
        key = store_key(self.store)
        return MemoryService(
            Store(self.store),
            Repository(self.root),
            index_path=cache_home(self.env) / "indexes" / f"{key}.db",
            state=state or State(data_home(self.env) / "state" / f"{key}.db"),
            clock=clock or self.clock,
        )

    def refresh(self) -> None:
        """A new service over the same store, index and state (the code changed)."""
        self.service = self.new_service()

    # -- the code changes ---------------------------------------------------------

    def change_line(self, rel: str, line: int, text: str) -> None:
        """Rewrite one line: a citation of it goes stale."""
        lines = self.git.lines(rel)
        lines[line - 1] = text
        self.git.write_lines(rel, lines)
        self.git.commit(f"change {rel}:{line}")
        self.refresh()

    def insert_lines(self, rel: str, before: int, count: int) -> None:
        """Insert lines above `before`: citations below it move."""
        lines = self.git.lines(rel)
        lines[before - 1 : before - 1] = numbered(count, "inserted")
        self.git.write_lines(rel, lines)
        self.git.commit(f"grow {rel}")
        self.refresh()

    def delete(self, rel: str) -> None:
        self.git.git("rm", "-q", rel)
        self.git.commit(f"delete {rel}")
        self.refresh()

    # -- what the state database holds ----------------------------------------------

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with self.service.state.connect() as conn:
            return [tuple(row) for row in conn.execute(sql, args).fetchall()]

    def verifications(self, path: str | None = None) -> list[tuple[Any, ...]]:
        """(verified_at, commit, path, ord, ref, status) of every recorded citation verdict."""
        return history.verdicts(self.service.state, path)

    def runs(self, path: str) -> int:
        """How many verification runs recorded this memory."""
        return history.runs(self.service.state, path)

    def health_of(self, path: str) -> Any:
        """One memory's entry in a fresh health report (which verifies everything now)."""
        report = self.service.health()
        return next(m for m in report.memories if m.path == path)

    def file(self, path: str) -> Path:
        return self.store / f"{path}.md"


# The memories of `every_status`, most urgent first, as the health report ranks them.
RANKED = [
    ("notes/missing", "missing"),
    ("notes/stale", "stale"),
    ("notes/stale-confirmed", "stale"),
    ("notes/dangling", "dangling_links"),
    ("notes/moved", "moved"),
    ("notes/expired", "expired"),
    ("notes/uncited", "uncited"),
    ("notes/orphan", "orphan"),
    ("notes/other", "healthy"),
    ("notes/good", "healthy"),  # used twice: more confidence, less urgent
]


def every_status(project: Project) -> Project:
    """A store with a memory in every health status (see RANKED), verified once when
    all was well, then broken by two commits: a changed line and inserted lines.

    notes/missing also cites the changed line (flags missing and stale); two memories
    cite that line alone, one of them confirmed (so it ranks after the other);
    notes/good is used twice.
    """
    service = project.service
    good = ["notes/good"]
    service.add("notes/good", "# Good\n\nHolds.", citations=["src/app.py:3"], links=["notes/other"])
    service.add("notes/other", "# Other\n\nHolds.", citations=["src/app.py:4"], links=good)
    service.add(
        "notes/missing",
        "# Missing\n\nCites a file that is gone.",
        citations=["src/gone.py:1", "src/app.py:5"],
        links=good,
    )
    service.add("notes/stale", "# Stale\n\nLine 5.", citations=["src/app.py:5"], links=good)
    service.add(
        "notes/stale-confirmed", "# Stale, confirmed\n\nLine 5.", citations=["src/app.py:5"],
        links=good,
    )  # fmt: skip
    service.add(
        "notes/dangling", "# Dangling\n\nLinks nowhere.", citations=["src/app.py:7"],
        links=["notes/nowhere", "notes/good"],
    )  # fmt: skip
    service.add("notes/moved", "# Moved\n\nThe pool.", citations=["src/db.py:6"], links=good)
    service.add(
        "notes/expired", "# Expired\n\nOld news.", citations=["src/app.py:8"], links=good,
        expires_at="2026-01-01",
    )  # fmt: skip
    service.add("notes/uncited", "# Uncited\n\nJust prose.", links=good)
    service.add("notes/orphan", "# Orphan\n\nAlone.", citations=["src/app.py:10"])
    service.verify_all()
    service.reinforce("notes/stale-confirmed")
    service.get("notes/good")
    service.get("notes/good")
    project.clock.advance(days=1)
    project.change_line("src/app.py", 5, "app_5 = 'five'")
    project.insert_lines("src/db.py", 3, 2)
    return project
