"""`path:line` mentions written in a memory's prose, checked on request.

Real memories cite code in passing ("see `scripts/validate.py:42`") rather than
in a citations table. These mentions are found here and verified apart from
declared citations (`--include-mentions`): they have no snippet, so only the
file and the line range can be checked. A bare file name (`validate.py:42`) is
resolved to a repository path when exactly one tracked file has that name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from memory_enhancement.core.model import Citation

_MENTION = re.compile(
    r"(?<![\w/.:@-])"
    r"(?P<path>(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})"
    r":(?P<start>\d{1,6})(?:-(?P<end>\d{1,6}))?"
    r"(?![\w:/])"
)


def find_mentions(content: str, resolve: Callable[[str], str | None]) -> list[Citation]:
    """Distinct `path:line` mentions, with bare names resolved (or dropped when unresolvable)."""
    found: dict[str, Citation] = {}
    for match in _MENTION.finditer(content):
        start = int(match["start"])
        end = int(match["end"]) if match["end"] else None
        if start < 1 or (end is not None and end < start):
            continue
        path = match["path"]
        if "/" not in path:
            resolved = resolve(path)
            if resolved is None:
                continue
            path = resolved
        citation = Citation(path, start, end if end != start else None)
        found.setdefault(citation.ref, citation)
    return list(found.values())


def basename_resolver(paths: Iterable[str]) -> Callable[[str], str | None]:
    """A resolver for bare file names: the path of the one tracked file with that name."""
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)

    def resolve(name: str) -> str | None:
        matches = by_name.get(name, [])
        return matches[0] if len(matches) == 1 else None

    return resolve
