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
citations are rejected, and so are line numbers that cannot be lines (0, a
range that ends before it starts, or a number past `MAX_LINE`: no file the tool
reads has that many lines, and a bigger number does not fit the index's integers).
Whether a path exists is verification's question, not the grammar's.
"""

from __future__ import annotations

import re

from memory_enhancement.core.errors import InvalidCitationError
from memory_enhancement.core.model import Citation, is_url

_COLON_LINES = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")
_ANCHOR_LINES = re.compile(r"^(?P<path>.+?)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")
MAX_LINE = 999_999_999  # nine digits: far past any file the tool reads (20 MB at most)
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
    first = _number(ref, start)
    last = _number(ref, end) if end not in (None, "") else None
    if first < 1:
        raise InvalidCitationError(f"invalid citation {_short(ref)!r}: lines start at 1")
    if last is not None and last < first:
        raise InvalidCitationError(f"invalid citation {_short(ref)!r}: range ends before it starts")
    if last == first:
        last = None
    return first, last


def _number(ref: str, value: object) -> int:
    """A line number from text or a YAML integer, refused past MAX_LINE.

    Long digit strings are refused before conversion: Python will not convert
    more than 4,300 digits, and SQLite stores no integer of 2^63 or more.
    """
    if isinstance(value, int) and value.bit_length() > 14_000:  # str() refuses 4,300+ digits
        raise InvalidCitationError(
            f"invalid citation {_short(ref)!r}: a line number of more than 4,000 digits is "
            f"past the largest line number, {MAX_LINE}"
        )
    text = str(value).strip()
    if isinstance(value, bool) or not (isinstance(value, int) or text.isdecimal()):
        raise InvalidCitationError(f"invalid line numbers in citation {_short(ref)!r}")
    if len(text) > len(str(MAX_LINE)) or int(text) > MAX_LINE:
        raise InvalidCitationError(
            f"invalid citation {_short(ref)!r}: line {_short(text)} is past the largest "
            f"line number, {MAX_LINE}"
        )
    return int(text)


def _short(text: str, limit: int = 80) -> str:
    """A value for a message: whole up to limit characters, else its start and its length."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


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
