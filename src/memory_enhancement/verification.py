"""Verification runs over a store: which memories, their verdicts, and fixes.

This is the service layer above `verify.Verifier` (which only judges
citations): it picks the memories (one, a category, or those touched since a
git ref), verifies them in one batch, optionally checks prose mentions, and
applies `--fix` through the same locked read-edit-write path as every edit.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from . import formats
from .errors import InvalidInputError, MemoryToolError
from .fixes import fixed_citations
from .mentions import basename_resolver, find_mentions
from .model import Citation, Memory
from .timestamps import format_timestamp
from .urlcheck import UrlChecker
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
        """No failing citation; with strict, no moved citation either."""
        if any(not r.valid for r in self.results):
            return False
        return not (strict and self.count(Verdict.MOVED))


@dataclass(frozen=True)
class VerifyOptions:
    fix: bool = False
    dry_run: bool = False
    include_mentions: bool = False
    check_urls: bool = False
    url_timeout: float = 5.0


def verify_paths(
    service: MemoryService, paths: Iterable[str], options: VerifyOptions, *, explicit: bool = False
) -> VerifyRun:
    """Verify the memories at paths; unreadable ones are skipped (or raised when explicit)."""
    memories: list[Memory] = []
    files: dict[str, tuple[str, list[int | None]]] = {}
    skipped: list[str] = []
    for path in paths:
        try:
            loaded = service.store.read(path, links=False)
        except MemoryToolError as exc:
            if explicit:
                raise
            skipped.append(str(exc))
            continue
        memories.append(loaded.doc.memory)
        files[path] = (_display_file(service, path), loaded.doc.citation_lines)
    return _run(service, memories, files, options, skipped, keep_uncited=explicit)


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
    with service.index.connect() as conn:
        rows, _ = service.index.rows(conn, category)
        citing = set(service.index.citing(conn, changed))
    known = {row.path for row in rows}
    return sorted(path for path in known if path in citing or path in own)


def _run(
    service: MemoryService,
    memories: list[Memory],
    files: dict[str, tuple[str, list[int | None]]],
    options: VerifyOptions,
    skipped: list[str],
    *,
    keep_uncited: bool,
) -> VerifyRun:
    urls = UrlChecker(timeout=options.url_timeout) if options.check_urls else None
    verifier = Verifier(service.repo, service.git, urls)
    results = verifier.verify_memories(memories)
    if options.include_mentions:
        results = _with_mentions(service, verifier, memories, results)
    decorated = [replace(r, file=files[r.path][0], lines=tuple(files[r.path][1])) for r in results]
    kept = [r for r in decorated if keep_uncited or r.checks or r.mentions]
    fixes = _apply_fixes(service, kept, options) if options.fix else []
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
    stamp = format_timestamp(service.clock())
    fixes = []
    for result in results:
        wanted = fixed_citations(result.checks, service.repo, stamp)
        if wanted == tuple(c.citation for c in result.checks):
            continue
        fix = _fix_one(service, result, wanted, dry_run=options.dry_run)
        if fix is not None:
            fixes.append(fix)
    return fixes


def _fix_one(
    service: MemoryService,
    result: MemoryVerification,
    wanted: tuple[Citation, ...],
    *,
    dry_run: bool,
) -> Fix | None:
    """Rewrite one memory's citations under the lock, if the file still says what was verified."""
    with service.store.lock():
        loaded = service.store.read(result.path, links=False)
        memory = loaded.doc.memory
        if memory.meta.citations != tuple(c.citation for c in result.checks):
            return None  # changed since it was verified; the next run will see it
        edited = replace(memory, meta=replace(memory.meta, citations=wanted))
        text = formats.by_name(memory.format).render(loaded.doc, edited)
        name = result.file or result.path
        diff = "".join(
            difflib.unified_diff(
                loaded.decoded.text.splitlines(keepends=True),
                text.splitlines(keepends=True),
                f"a/{name}",
                f"b/{name}",
            )
        )
        if text == loaded.decoded.text:
            # The change cannot be written in this format (an inline `[cite:]` has
            # no snippet or stamp): reporting a fix would repeat on every run.
            return None
        if not dry_run:
            service.store.replace(result.path, loaded.decoded.encode(text))
    return Fix(result.path, diff, written=not dry_run)


def _display_file(service: MemoryService, path: str) -> str:
    """The memory file relative to the repository root when inside it (for annotations)."""
    file = service.store.file_for(path)
    rel = os.path.relpath(file, service.repo.root)
    return file.as_posix() if rel.startswith("..") else rel.replace(os.sep, "/")
