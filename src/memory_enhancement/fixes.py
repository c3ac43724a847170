"""What `verify --fix` changes: moved citations follow their code, nothing else.

A moved citation gets its new line (and path after a rename) and a fresh
verified stamp; an unanchored one (no snippet) gets its snippet captured, so
the next verification can tell a moved line from a changed one. Stale and
missing citations are left alone: deciding what they should say needs a person
or an agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .model import Citation
from .repo import Repository, cited_text
from .verify import CitationCheck, Verdict


def fixed_citations(
    checks: Sequence[CitationCheck], repo: Repository, stamp: str
) -> tuple[Citation, ...]:
    """The citations after fixing, in the same order as the checks."""
    return tuple(_fixed(check, repo, stamp) for check in checks)


def _fixed(check: CitationCheck, repo: Repository, stamp: str) -> Citation:
    citation = check.citation
    if check.status is Verdict.MOVED and check.current_path:
        line = check.current_line if citation.line is not None else None
        end = check.current_end_line if citation.end_line is not None else None
        return replace(citation, target=check.current_path, line=line, end_line=end, verified=stamp)
    if check.status is Verdict.VALID and citation.snippet is None and citation.line is not None:
        text = cited_text(repo.read(citation.target), citation.line, citation.end_line)
        if text and text.strip():
            return replace(citation, snippet=text, verified=stamp)
    return citation
