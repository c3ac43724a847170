"""The service: every operation of the CLI and the MCP server, composed from the subsystems.

Front ends parse their arguments, call one method of `MemoryService` and render
the result. The service is one class built from one class per kind of
operation (memories, verification, retrieval, graph, health), each in its own
module; every subsystem below it receives the collaborators it needs (store,
index, repository, state, clock) explicitly and never sees the service.
"""

from __future__ import annotations

from memory_enhancement.service.graph import Graph
from memory_enhancement.service.health import Health
from memory_enhancement.service.results import Fetched, Listing, Summary, WriteResult
from memory_enhancement.service.retrieval import Retrieval


class MemoryService(Retrieval, Health, Graph):
    """Operations on one store, citing code in one repository."""


__all__ = [
    "Fetched",
    "Listing",
    "MemoryService",
    "Summary",
    "WriteResult",
]
