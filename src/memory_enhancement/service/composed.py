"""`MemoryService`: one class built from one class per kind of operation.

Defined here rather than in the package's `__init__` so that importing a light
module of the package (quick.py) does not import every operation.
"""

from __future__ import annotations

from memory_enhancement.service.graph import Graph
from memory_enhancement.service.health import Health
from memory_enhancement.service.retrieval import Retrieval


class MemoryService(Retrieval, Health, Graph):
    """Operations on one store, citing code in one repository."""
