"""Verification runs over a store: which memories, their verdicts, and fixes.

This is the service layer above `verify.Verifier` (which only judges
citations): it picks the memories (one, a category, or those touched since a
git ref), verifies them in one batch, optionally checks prose mentions, and
applies `--fix` through the same locked read-edit-write path as every edit.
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from . import confidence, formats, history
from .errors import InvalidInputError
from .fixes import fixed_citations
from .mentions import basename_resolver, find_mentions
from .model import Citation, Memory
from .timestamps import format_timestamp
from .verify import MemoryVerification, Verdict, Verifier

if TYPE_CHECKING:
    from .service import MemoryService


@dataclass(frozen=True)
class Fix:
    """What --fix did (or, with --dry-run, would do) to one memory file."""

    path: str
    diff: str
    written: bool


@dataclass(frozen=True)
class VerifyRun:
    results: list[MemoryVerification]
    fixes: list[Fix] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def citations(self) -> int:
        return sum(len(r.checks) for r in self.results)

    def count(self, status: Verdict) -> int:
        return sum(r.count(status) for r in self.results)

    def ok(self, *, strict: bool = False) -> bool:
        """No failing citation and no unreadable memory file; with strict, no moved
        citation either. A memory that cannot be read cannot be vouched for."""
        if self.skipped or any(not r.valid for r in self.results):
            return False
        return not (strict and self.count(Verdict.MOVED))


@dataclass(frozen=True)
class VerifyOptions:
    fix: bool = False
    dry_run: bool = False
    include_mentions: bool = False
    check_urls: bool = False
    url_timeout: float = 5.0
    write: bool = False


def verify_paths(
    service: MemoryService, paths: Iterable[str] | None, options: VerifyOptions
) -> VerifyRun:
    """Verify a batch of memories (all of them when paths is None) as the index knows them.

    The index is in step with the files (it syncs first), so nothing is parsed
    again; unreadable memory files are reported as skipped.
    """
    with service.index.connect() as conn:
        found, skipped = service.index.verifiable(conn, paths, content=options.include_mentions)
    memories = [memory for memory, _, _ in found]
    files = {m.path: (_display_file(service, m.path), list(lines)) for m, lines, _ in found}
    ids = {m.path: cid for m, _, cid in found if cid}
    return _run(service, memories, files, options, skipped, keep_uncited=False, ids=ids)


def verify_file(service: MemoryService, path: str, options: VerifyOptions) -> VerifyRun:
    """Verify one memory read from its file, just in time (errors are raised, not skipped)."""
    loaded = service.store.read(path)
    files = {path: (_display_file(service, path), loaded.doc.citation_lines)}
    history.citation_ids(service, [path], {path: loaded})  # indexes it from this read
    return _run(service, [loaded.doc.memory], files, options, [], keep_uncited=True)


def changed_paths(service: MemoryService, ref: str, category: str | None) -> list[str]:
    """Memories citing a file changed since ref, or whose own file changed (PR fast path)."""
    git = service.git
    if git is None:
        raise InvalidInputError(
            f"--changed-since {ref!r} needs a git repository at {service.repo.root}"
        )
    changed = git.changed_since(ref)
    store_dir = os.path.relpath(service.store.root, service.repo.root).replace(os.sep, "/")
    prefix = "" if store_dir == "." else store_dir + "/"
    own = {
        f[len(prefix) : -len(".md")]
        for f in changed
        if f.startswith(prefix) and f.endswith(".md") and not store_dir.startswith("..")
    }
    if not changed:
        return []
    with service.index.connect() as conn:
        citing = service.index.citing(conn, changed)
        return service.index.readable(conn, [*citing, *own], category)


def _run(
    service: MemoryService,
    memories: list[Memory],
    files: dict[str, tuple[str, list[int | None]]],
    options: VerifyOptions,
    skipped: list[str],
    *,
    keep_uncited: bool,
    ids: Mapping[str, str] | None = None,
) -> VerifyRun:
    urls = None
    if options.check_urls:
        from .urlcheck import UrlChecker

        urls = UrlChecker(timeout=options.url_timeout)
    verifier = Verifier(service.repo, service.git, urls)
    results = verifier.verify_memories(memories)
    history.record(service, results, ids)
    if options.include_mentions:
        results = _with_mentions(service, verifier, memories, results)
    decorated = [
        MemoryVerification(r.path, r.checks, r.mentions, files[r.path][0], tuple(files[r.path][1]))
        for r in results
    ]
    kept = [r for r in decorated if keep_uncited or r.checks or r.mentions]
    fixes = _apply_fixes(service, kept, options) if options.fix or options.write else []
    return VerifyRun(kept, fixes, skipped)


def _with_mentions(
    service: MemoryService,
    verifier: Verifier,
    memories: list[Memory],
    results: list[MemoryVerification],
) -> list[MemoryVerification]:
    tracked = service.git.tracked if service.git else frozenset()
    resolve = basename_resolver(tracked)
    out = []
    for memory, result in zip(memories, results, strict=True):
        declared = {c.ref for c in memory.meta.citations}
        mentions = [m for m in find_mentions(memory.content, resolve) if m.ref not in declared]
        checks = tuple(verifier.check(m) for m in mentions)
        out.append(replace(result, mentions=checks))
    return out


def _apply_fixes(
    service: MemoryService, results: list[MemoryVerification], options: VerifyOptions
) -> list[Fix]:
    """--fix rewrites moved citations; --write (and --fix, on what it fixes) records the
    latest confidence and verification time in the file, so they travel with git."""
    stamp = format_timestamp(service.clock())
    states = _states(service, results) if options.write or options.fix else {}
    fixes = []
    for result in results:
        current = tuple(c.citation for c in result.checks)
        wanted = fixed_citations(result.checks, service.repo, stamp) if options.fix else current
        if wanted == current and not options.write:
            continue
        fix = _fix_one(
            service,
            result,
            wanted,
            states.get(result.path),
            dry_run=options.dry_run,
            only_recorded=not options.write,
        )
        if fix is not None:
            fixes.append(fix)
    return fixes


def _states(
    service: MemoryService, results: list[MemoryVerification]
) -> dict[str, tuple[float, datetime]]:
    """Per memory, its confidence now (see confidence.py) and the time of this verification."""
    now = service.clock()
    ids = history.citation_ids(service, [r.path for r in results])
    facts = history.evidence(service, ids.values())
    states = {}
    for result in results:
        evidence = facts.get(ids.get(result.path, ""), history.Evidence())
        counted = [c for c in result.checks if c.status is not Verdict.SKIPPED]
        good = sum(c.status in (Verdict.VALID, Verdict.MOVED) for c in counted)
        score = confidence.compute(
            confidence.Inputs(
                len(counted), good, evidence.last_valid, evidence.reinforcements,
                evidence.uses, evidence.runs, evidence.failed_runs,
            ),
            now,
        )  # fmt: skip
        states[result.path] = (score.score, now)
    return states


def _fix_one(
    service: MemoryService,
    result: MemoryVerification,
    wanted: tuple[Citation, ...],
    state: tuple[float, datetime] | None,
    *,
    dry_run: bool,
    only_recorded: bool = False,
) -> Fix | None:
    """Rewrite one memory under the lock, if the file still says what was verified.

    With only_recorded (plain --fix), confidence and Last Verified are refreshed only
    in files that already record them, so a fix touches nothing else in other files.
    """
    with service.store.lock():
        loaded = service.store.read(result.path, links=False)
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
        edited = replace(memory, meta=meta)
        text = formats.by_name(memory.format).render(loaded.doc, edited)
        if text == loaded.decoded.text:
            # Nothing this format can record changed (an inline `[cite:]` has no room for
            # a snippet or a stamp): reporting a fix would repeat on every run.
            return None
        name = result.file or result.path
        diff = "".join(
            difflib.unified_diff(
                loaded.decoded.text.splitlines(keepends=True),
                text.splitlines(keepends=True),
                f"a/{name}",
                f"b/{name}",
            )
        )
        if not dry_run:
            service.store.replace(result.path, loaded.decoded.encode(text))
    return Fix(result.path, diff, written=not dry_run)


def _has_own_confidence(memory: Memory) -> bool:
    """A file whose author wrote a confidence of their own (`HIGH`) keeps it."""
    return any(key.lower() == "confidence" for key in memory.meta.extra)


def _display_file(service: MemoryService, path: str) -> str:
    """The memory file relative to the repository root when inside it (for annotations)."""
    return _store_prefix(str(service.store.root), str(service.repo.root)) + path + ".md"


@functools.cache
def _store_prefix(store: str, repo: str) -> str:
    rel = os.path.relpath(store, repo)
    if rel.startswith(".."):
        return Path(store).as_posix() + "/"
    return "" if rel == "." else rel.replace(os.sep, "/") + "/"
