"""The service: every operation of the CLI and the MCP server, composed from the subsystems.

Front ends parse their arguments, call one method of `MemoryService` and render
the result. The service is one class built from one class per kind of
operation (memories, verification, retrieval, graph, health), each in its own
module; every subsystem below it receives the collaborators it needs (store,
index, repository, state, clock) explicitly and never sees the service.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (mypy knows the name)

if TYPE_CHECKING:
    from memory_enhancement.service.composed import MemoryService
    from memory_enhancement.service.results import Fetched, Listing, Summary, WriteResult


def __getattr__(name: str) -> object:
    """The service's classes, imported on first use: the quick read path (quick.py)
    lives in this package and must not load the whole service to start."""
    if name == "MemoryService":
        from memory_enhancement.service.composed import MemoryService

        return MemoryService
    if name in ("Fetched", "Listing", "Summary", "WriteResult"):
        from memory_enhancement.service import results

        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Fetched",
    "Listing",
    "MemoryService",
    "Summary",
    "WriteResult",
]
