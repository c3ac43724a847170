"""The exceptions the library raises.

Outcomes are values and failures are exceptions: every operation either returns
its result or raises one of these. The CLI maps them to exit code 2 and a message
on stderr; the MCP server raises them as tool errors. Each message names the
offending value so a person or an agent can act on it without guessing.
"""

from __future__ import annotations


class MemoryToolError(Exception):
    """Base class of every error the tool reports on purpose."""


class NotFoundError(MemoryToolError):
    """A memory, store or citation ID that does not exist."""


class ExpiredError(MemoryToolError):
    """A memory whose expiry has passed, asked for without include_expired."""


class AlreadyExistsError(MemoryToolError):
    """A write that would overwrite an existing memory."""


class InvalidPathError(MemoryToolError):
    """A memory path that is malformed or would leave the store."""


class InvalidInputError(MemoryToolError):
    """A value the caller gave that the operation cannot use."""


class InvalidCitationError(InvalidInputError):
    """A citation that does not follow the citation grammar."""


class UnreadableMemoryError(MemoryToolError):
    """A memory file that cannot be parsed: bad YAML, not UTF-8, too large.

    Such a file is reported and skipped by listings and is never rewritten.
    """


class BrokenHeaderError(UnreadableMemoryError):
    """A memory whose frontmatter does not parse (malformed YAML, not a mapping): its
    text can still be read as plain markdown (searched, its links followed), but the
    tool does not edit it, which would mean guessing what its header says."""


class StoreError(MemoryToolError):
    """A store that cannot be located, registered or created."""


class ChangedOnDiskError(StoreError):
    """A file another writer (an editor, Serena, Claude Code: none takes the store's lock)
    changed between the tool's read and its write: the write is refused, their bytes kept."""


def os_error_text(exc: OSError) -> str:
    """An OSError in words that name the file: `File exists: '/s/notes'`.

    `str(exc)` starts with `[Errno 17]`, which tells a person nothing, and an error
    raised without a file (a full disk while writing) has only its reason.
    """
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [repr(str(n)) for n in (exc.filename, exc.filename2) if n is not None]
    return f"{reason}: {' -> '.join(names)}" if names else reason


def shown(value: object, limit: int = 80) -> str:
    """A value for a message, as repr shows it, cut to limit characters: the value may be
    what an agent sent, a megabyte, and a message that repeats it costs its tokens again."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
