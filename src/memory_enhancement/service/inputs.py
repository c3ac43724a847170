"""Turning what a caller gives (strings from a CLI or an agent) into model values.

Citations are captured here too: a new file:line citation without a snippet
gets the cited text from the code, so verification can later tell a line that
moved from a line that changed. What looks wrong is a warning, not a refusal:
a store may live apart from the code it cites. One exception: a file that does not
exist whose name ends in what was meant as a line (`x.py:abc`, `x.py:3:5`, `x.py#42`)
is refused naming it, since keeping it would cite a file nobody will ever create.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TypeVar

from memory_enhancement.core.citations import parse_citation, snippet_matches
from memory_enhancement.core.errors import InvalidCitationError, InvalidInputError
from memory_enhancement.core.model import Citation, Link, LinkKind
from memory_enhancement.store.formats.markdown import code_span
from memory_enhancement.verify.repo import Repository, SourceStatus, cited_text

CitationInput = str | Citation
E = TypeVar("E", bound=enum.Enum)
_TYPED_LINK = "[link:"
# A last path part that ends in a mistyped line: `:` then anything but a file name (no
# dot, no slash: `x.py:abc`, `x.py:3` of `x.py:3:5`), or `#` then a digit or `L` and one.
_LINE_TYPO = re.compile(r"[^/:#]+(?P<line>:[^/.:#]+|#L?\d[^/.]*)$")


def parse_citations(items: Iterable[CitationInput]) -> list[Citation]:
    if isinstance(items, str):
        raise InvalidInputError("citations must be a list of strings, not one string")
    return [parse_citation(item) if isinstance(item, str) else item for item in items]


def clean_content(content: str) -> str:
    """A memory's text with its lines ended by `\\n`, as memories hold it (a file's own line
    ending is the writer's business): an agent on Windows sends `\\r\\n`, which the
    writer would keep beside its own, and `--file` reads with universal newlines."""
    if "\r" not in content:
        return content
    return content.replace("\r\n", "\n").replace("\r", "\n")


def clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    if isinstance(tags, str):
        raise InvalidInputError("tags must be a list of strings, not one string")
    cleaned: list[str] = []
    for tag in tags:
        text = str(tag).strip()
        if not text:
            raise InvalidInputError("invalid tag '': tags cannot be empty")
        if "," in text or "\n" in text:
            raise InvalidInputError(f"invalid tag {text!r}: tags cannot contain commas or newlines")
        if text not in cleaned:
            cleaned.append(text)
    return tuple(cleaned)


def parse_links(items: Iterable[str | Link]) -> list[Link]:
    """`target`, `type:target` or `[link:type](target)`."""
    links = []
    for item in items:
        if isinstance(item, Link):
            links.append(item)
            continue
        text = str(item).strip()
        if not text:
            raise InvalidInputError("invalid link '': a link needs a target")
        if text.startswith(_TYPED_LINK) and text.endswith(")") and "](" in text:
            kind, _, target = text[len(_TYPED_LINK) : -1].partition("](")
            links.append(Link(target.strip(), kind.strip() or "link", LinkKind.TYPED))
            continue
        kind, sep, target = text.partition(":")
        if sep and kind.isidentifier() and target.strip():
            links.append(Link(target.strip(), kind, LinkKind.TYPED))
        else:
            links.append(Link(text, "link", LinkKind.BARE))
    return links


def choice(enum_type: type[E], value: E | str, name: str) -> E:
    """An enum member from its value, or an error listing the choices."""
    if isinstance(value, enum_type):
        return value
    try:
        return enum_type(value)
    except ValueError:
        choices = ", ".join(str(m.value) for m in enum_type)
        raise InvalidInputError(f"invalid {name} {value!r} (choose from {choices})") from None


def prepare_citations(
    repo: Repository, stamp: str, wanted: Sequence[Citation], existing: Sequence[Citation]
) -> tuple[list[Citation], list[str]]:
    """Capture snippets from the code and say what looks wrong, without refusing it
    (but for a missing file whose name ends in a mistyped line: see the module's doc).

    A citation already on the memory is kept exactly as it is; a new file:line
    citation without a snippet gets the cited text and the verified stamp.
    """
    kept = set(existing)
    result: list[Citation] = []
    warnings: list[str] = []
    for citation in dict.fromkeys(wanted):
        if citation in kept or citation.is_url:
            result.append(citation)
            continue
        source = repo.read(citation.target)
        if source.status is SourceStatus.MISSING:
            _refuse_line_typo(citation)
        if source.status is not SourceStatus.TEXT:
            warnings.append(_source_warning(citation, source.status, str(repo.root), source.reason))
        elif citation.line is not None:
            text = cited_text(source, citation.line, citation.end_line)
            if text is None:
                warnings.append(
                    f"citation {citation.ref}: line {citation.end_line or citation.line} is "
                    f"past the end of {citation.target} ({len(source.lines)} lines)"
                )
            elif citation.snippet is None and not text.strip():
                warnings.append(
                    f"citation {citation.ref}: the cited line is blank, so no snippet was "
                    "captured and a change there cannot be detected"
                )
            elif citation.snippet is None:
                citation = replace(citation, snippet=text, verified=stamp)
            elif snippet_matches(snippet := citation.snippet, text):
                citation = replace(citation, verified=citation.verified or stamp)
            else:
                warnings.append(
                    f"citation {citation.ref}: snippet {code_span(snippet)} is not "
                    f"on that line, which reads {code_span(text.splitlines()[0])}"
                )
        result.append(citation)
    return result, warnings


def _refuse_line_typo(citation: Citation) -> None:
    """A missing file whose name ends in a line that is not one is a typo, refused."""
    typo = _LINE_TYPO.search(citation.target)
    if typo is None:
        return
    file = citation.target[: typo.start("line")]
    raise InvalidCitationError(
        f"invalid citation {citation.ref!r}: no file is named {citation.target!r}, and what "
        f"follows {file} is not a line (write {file}:42, {file}:17-25 or {file}#L17-L25)"
    )


def _source_warning(citation: Citation, status: SourceStatus, root: str, reason: str) -> str:
    match status:
        case SourceStatus.MISSING:
            return f"citation {citation.ref}: {citation.target} does not exist under {root} (kept)"
        case SourceStatus.OUTSIDE:
            return f"citation {citation.ref}: the path leaves the repository root {root}"
        case SourceStatus.BINARY:
            return f"citation {citation.ref}: {citation.target} is a binary file"
        case _:
            return f"citation {citation.ref}: {citation.target} cannot be read ({reason})"


def same_ref(cited: str, given: str) -> bool:
    """Whether a citation's reference is the one a user typed (as written or canonical)."""
    if cited == given.strip():
        return True
    try:
        return cited == parse_citation(given).ref
    except InvalidInputError:
        return False


def one_citation(ref: CitationInput, snippet: str | None) -> Citation:
    """A citation to add or put in place, with the snippet given (never a blank one)."""
    citation = parse_citation(ref, snippet=snippet) if isinstance(ref, str) else ref
    if snippet is not None and not snippet.strip():
        raise InvalidInputError("snippet cannot be empty")
    return citation
