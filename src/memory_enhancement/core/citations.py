"""The citation grammar, parsed and printed in this one place.

Accepted forms::

    src/x.py            a whole file
    src/x.py:17         one line
    src/x.py:17-25      a range (inclusive)
    src/x.py#L17        GitHub-style line anchor
    src/x.py#L17-L25    GitHub-style range
    https://...         a URL (any `scheme://`)

The canonical form written back is `path`, `path:17`, `path:17-25` or the URL.
Validation is deliberately light (seed 000 §4): empty or whitespace-only
citations are rejected, and so are line numbers that cannot be lines (0, or a
range that ends before it starts). Whether a path exists is verification's
question, not the grammar's.
"""

from __future__ import annotations

import re

from memory_enhancement.core.errors import InvalidCitationError
from memory_enhancement.core.model import Citation, is_url

_COLON_LINES = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")
_ANCHOR_LINES = re.compile(r"^(?P<path>.+?)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")
_LINE_SPEC = re.compile(r"^\s*(?P<start>\d+)\s*(?:[-–]\s*L?(?P<end>\d+)\s*)?$")


def parse_citation(text: str, *, snippet: str | None = None) -> Citation:
    """Parse one citation string; raise InvalidCitationError naming it when malformed."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidCitationError(f"invalid citation {text!r}: a citation cannot be empty")
    ref = text.strip()
    if is_url(ref):
        return Citation(target=ref, snippet=snippet)
    match = _COLON_LINES.match(ref) or _ANCHOR_LINES.match(ref)
    if match is None:
        return Citation(target=ref, snippet=snippet)
    start, end = _check_lines(ref, match["start"], match["end"])
    return Citation(target=match["path"], line=start, end_line=end, snippet=snippet)


def parse_line_spec(ref: str, spec: str) -> tuple[int | None, int | None]:
    """Parse the Line cell of a citations table: ``42``, ``17-25``, ``L17-L25`` or empty."""
    spec = spec.strip().removeprefix("L")
    if not spec:
        return None, None
    match = _LINE_SPEC.match(spec)
    if match is None:
        raise InvalidCitationError(f"invalid line {spec!r} for citation {ref!r}")
    return _check_lines(ref, match["start"], match["end"])


def format_lines(citation: Citation) -> str:
    """The Line cell of a citations table: ``42``, ``17-25`` or empty."""
    if citation.line is None:
        return ""
    if citation.end_line is not None and citation.end_line != citation.line:
        return f"{citation.line}-{citation.end_line}"
    return str(citation.line)


def make_citation(
    target: str,
    line: object = None,
    end_line: object = None,
    *,
    snippet: str | None = None,
    verified: str | None = None,
    commit: str | None = None,
) -> Citation:
    """Build a citation from separate fields (table cells, YAML mappings).

    A target that itself carries a line suffix (`src/x.py:17`) is parsed through
    the grammar when no separate line is given.
    """
    if not isinstance(target, str) or not target.strip():
        raise InvalidCitationError(f"invalid citation target {target!r}: it cannot be empty")
    if line is None or line == "":
        base = parse_citation(target)
        return Citation(base.target, base.line, base.end_line, snippet, verified, commit)
    ref = target.strip()
    start, end = _check_lines(ref, line, end_line)
    return Citation(ref, start, end, snippet, verified, commit)


def _check_lines(ref: str, start: object, end: object) -> tuple[int, int | None]:
    try:
        first = int(str(start))
        last = int(str(end)) if end not in (None, "") else None
    except ValueError:
        raise InvalidCitationError(f"invalid line numbers in citation {ref!r}") from None
    if first < 1:
        raise InvalidCitationError(f"invalid citation {ref!r}: lines start at 1")
    if last is not None and last < first:
        raise InvalidCitationError(f"invalid citation {ref!r}: range ends before it starts")
    if last == first:
        last = None
    return first, last


def squash(text: str) -> str:
    """Text with all whitespace removed: the form snippets are compared in."""
    return "".join(text.split())


def snippet_matches(snippet: str, text: str) -> bool:
    """Whether a snippet still holds in the cited text, ignoring whitespace.

    A snippet may be part of a line (`API_VERSION = 'v2'` in `export const
    API_VERSION = 'v2';`), so containment, not equality, is the test.
    """
    wanted = squash(snippet)
    return bool(wanted) and wanted in squash(text)
