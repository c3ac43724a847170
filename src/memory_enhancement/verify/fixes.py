"""What `verify --fix` changes: moved citations follow their code, nothing else.

A moved citation gets its new line (and path after a rename) and a fresh
verified stamp; an unanchored one (no snippet) gets its snippet captured, so
the next verification can tell a moved line from a changed one. Stale and
missing citations are left alone: deciding what they should say needs a person
or an agent. `--write` (and `--fix`, in files that already record them) also
records the memory's confidence and verification time in the file, so they
travel with git.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from memory_enhancement.core.model import Citation, Fix, Memory
from memory_enhancement.core.verdicts import CitationCheck, MemoryVerification, Verdict
from memory_enhancement.store import formats
from memory_enhancement.store.disk import Loaded, Store
from memory_enhancement.store.edits import rewrite
from memory_enhancement.verify.repo import Repository, cited_text


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


def apply_fixes(
    store: Store,
    repo: Repository,
    results: Sequence[MemoryVerification],
    states: Mapping[str, tuple[float, datetime]],
    *,
    stamp: str,
    fix: bool,
    write: bool,
    dry_run: bool,
) -> list[Fix]:
    """--fix rewrites moved citations; --write (and --fix, on what it fixes) records the
    confidence and verification time in `states` (per memory path) in the file."""
    fixes = []
    for result in results:
        current = tuple(c.citation for c in result.checks)
        wanted = fixed_citations(result.checks, repo, stamp) if fix else current
        if wanted == current and not write:
            continue
        done = _fix_one(
            store, result, wanted, states.get(result.path), dry_run=dry_run, only_recorded=not write
        )
        if done is not None:
            fixes.append(done)
    return fixes


def _fix_one(
    store: Store,
    result: MemoryVerification,
    wanted: tuple[Citation, ...],
    state: tuple[float, datetime] | None,
    *,
    dry_run: bool,
    only_recorded: bool,
) -> Fix | None:
    """Rewrite one memory, if the file still says what was verified.

    With only_recorded (plain --fix), confidence and Last Verified are refreshed only
    in files that already record them, so a fix touches nothing else in other files.
    Nothing is reported when nothing the format can record changed (an inline
    `[cite:]` has no room for a snippet or a stamp): a fix would repeat on every run.
    """

    written: dict[str, float] = {}

    def change(loaded: Loaded) -> str | None:
        memory = loaded.doc.memory
        if memory.meta.citations != tuple(c.citation for c in result.checks):
            return None  # changed since it was verified; the next run will see it
        meta = replace(memory.meta, citations=wanted)
        recorded = memory.meta.last_verified is not None or memory.meta.confidence is not None
        if state is not None and (recorded or not only_recorded):
            score, moment = state
            meta = replace(meta, last_verified=moment)
            if not _has_own_confidence(memory):
                meta = replace(meta, confidence=score)
                written["confidence"] = score
        edited = replace(memory, meta=meta)
        return formats.by_name(memory.format).render(loaded.doc, edited)

    done = rewrite(store, result.path, change, name=result.file or result.path, dry_run=dry_run)
    if done is None:
        return None
    changed = sum(1 for c, w in zip(result.checks, wanted, strict=True) if c.citation != w)
    return replace(done, citations_fixed=changed, confidence=written.get("confidence"))


def _has_own_confidence(memory: Memory) -> bool:
    """A file whose author wrote a confidence of their own (`HIGH`) keeps it."""
    return any(key.lower() == "confidence" for key in memory.meta.extra)
