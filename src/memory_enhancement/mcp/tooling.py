"""What every MCP tool module shares: annotations, argument types, error translation.

Kept apart from server.py so that the tool modules (memory_tools, knowledge_tools) and
the server that registers them never import each other.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, cast

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from memory_enhancement.core.errors import MemoryToolError, os_error_text
from memory_enhancement.mcp.shapes import WrittenOut

if TYPE_CHECKING:
    from memory_enhancement.service import MemoryService

PROCESS_SESSION = uuid.uuid4().hex[:12]
SKILL_FILE = Path(__file__).resolve().parent.parent / "SKILL.md"  # shipped in the package

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

Store = Annotated[
    str | None,
    Field(description="Store name (see `store list`); omitted: the server's default store."),
]
MemoryPath = Annotated[str, Field(description="Memory path, e.g. 'decisions/use-sqlite'.")]
# An existing memory to read, check, confirm or change: what search and get hand an agent.
MemoryRef = Annotated[str, Field(description="A memory path, [mem:ID], bare ID or unique name.")]
MODE_HELP = (
    "auto (default): hybrid when semantic search is installed and its index is current, "
    "else lexical; or lexical (BM25), semantic, hybrid."
)


class ServiceFactory(Protocol):
    def __call__(self, store: str | None, session: str, *, create: bool) -> MemoryService: ...


# A tool's service: (ctx, store name or None, create=...) -> a fresh MemoryService.
ServiceFor = Callable[..., "MemoryService"]


@contextmanager
def tool_errors() -> Iterator[None]:
    """Library errors become tool errors carrying their message; so does what the system
    refuses (a folder the server may not write, a full disk), naming the file."""
    try:
        yield
    except MemoryToolError as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(os_error_text(exc)) from None


# A write tool's `verify` argument.
VerifyWrite = Annotated[
    bool,
    Field(
        description="Also verify the memory now: citation_checks and mention_checks give "
        "the verdicts of the citations this write captured and the mentions on the lines "
        "it wrote, valid the whole memory's."
    ),
]


def written(result: Any, store: str | None, *, new: bool = False, verify: Any = None) -> WrittenOut:
    """What a tool that writes returns: what the write did (mcp/writes.py), not the memory.
    `verify`: the service that wrote it, when the agent asked for the verdicts too."""
    from memory_enhancement.mcp.writes import written_answer
    from memory_enhancement.service import serialize

    checked = None
    if verify is not None:
        checked = serialize.verification_dict(verify.verify(result.path).results[0])
    return cast(WrittenOut, written_answer(result, store=store, new=new, checked=checked))
