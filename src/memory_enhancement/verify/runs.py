"""Verification runs: a batch of memories verified together, recorded, and fixed on request.

The Verifier only judges citations. A run also records the verdicts in the
history (confidence is computed from it), checks prose mentions when asked,
says where each memory file is (for annotations that point into it), and
applies `--fix`/`--write` through the same locked read-edit-write path as every
edit. The service hands it the memories (read from the index, or from one file
just in time) and every collaborator it needs.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memory_enhancement.core.batch import CitedBatch
from memory_enhancement.core.batch_verdicts import BatchVerdicts
from memory_enhancement.core.model import Fix
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.core.verdict_rows import Recalled
from memory_enhancement.core.verdicts import (
    CitationCheck,
    MemoryVerification,
    VerifyOptions,
    VerifyRun,
)
from memory_enhancement.store.disk import Store
from memory_enhancement.store.scan import Snapshot
from memory_enhancement.store.state import State
from memory_enhancement.verify import confidence, history
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.repo import Repository
from memory_enhancement.verify.settled import SettledFiles
from memory_enhancement.verify.verifier import Verifier


@dataclass
class Runner:
    """Verifies batches of one store's memories against one repository."""

    store: Store
    repo: Repository
    git: Git | None
    state: State
    clock: Callable[[], datetime]

    def run(
        self,
        batch: CitedBatch,
        options: VerifyOptions,
        *,
        skipped: Iterable[str] = (),
        headers: Iterable[str] = (),
        keep_uncited: bool = False,
        whole_store: bool = False,
        settled: SettledFiles | None = None,
        many: bool = False,
        unstamped: Container[str] = (),
        scanned: Snapshot | None = None,
    ) -> VerifyRun:
        """Verify the batch; memories with nothing to check are dropped unless keep_uncited.

        `whole_store`: the batch is every memory of the store (verify-all without a
        category or a ref), which lets the history skip what did not change. The
        results are kept as the batch's rows (core/batch_verdicts.py) unless fixes are
        asked for, which need every result built. `settled`: the files whose citations
        held at the last whole-store run (verify/settled.py), learned anew by this one.
        `many`: a run over many memories, where a file a fix cannot be written to is
        left unchanged and named in the run's `unwritten` (one memory: the error is raised).
        `unstamped`: memories a --write records nothing in (fixes.apply_fixes).
        `scanned`: the index's sync of this call, when it stat-ed every memory file
        (store/scan.py), whose stats the mentions' reader takes instead of its own."""
        urls = None
        if options.check_urls:
            from memory_enhancement.verify.urls import UrlChecker

            urls = UrlChecker(timeout=options.url_timeout)
        verifier = Verifier(self.repo, self.git, urls)
        valid, checks = verifier.verify_batch(batch, settled)
        with self.state.held():  # the mention cache's reads and writes, then the history's
            mentions: dict[int, tuple[CitationCheck, ...] | Recalled] = {}
            cache: str | None = history.WITHOUT_MENTIONS
            if options.include_mentions:
                mentions, cache = self._mentions(batch, options.notice, scanned)
            prefix = _store_prefix(str(self.store.root), str(self.repo.root))
            results = BatchVerdicts(
                batch, valid, checks, mentions, prefix, keep_uncited=keep_uncited
            )
            results.judged = verifier.judged
            history.record(
                self.state, results, self.clock(), self.git.current_commit() if self.git else None,
                whole_store=whole_store, mark=settled.mark if settled is not None else None,
                cache=cache,
            )  # fmt: skip
        fixes: list[Fix] = []
        unwritten: list[str] = []
        kept: Sequence[MemoryVerification] = results
        if options.fix or options.write:
            from memory_enhancement.verify.fixes import apply_fixes
            from memory_enhancement.verify.mention_judge import files_now

            listed = functools.cache(functools.partial(files_now, self.git, self.repo))
            kept = list(results)
            ids = {path: cid for path, cid in zip(batch.paths, batch.ids, strict=True) if cid}
            fixes = apply_fixes(
                self.store, self.repo, kept, self._states(kept, ids),
                stamp=format_timestamp(self.clock()), fix=options.fix, write=options.write,
                dry_run=options.dry_run, refused=unwritten if many else None,
                unstamped=unstamped, files=listed,
            )  # fmt: skip
        skipped = list(skipped)
        unreadable = [self._unreadable(reason) for reason in skipped]
        unparsed = [self._unreadable(reason) for reason in headers]
        return VerifyRun(kept, fixes, skipped, unreadable, unwritten, unparsed)

    def _mentions(
        self,
        batch: CitedBatch,
        notice: Callable[[str], None] | None,
        scanned: Snapshot | None = None,
    ) -> tuple[dict[int, tuple[CitationCheck, ...] | Recalled], str | None]:
        """Prose mentions, verified from history as citations (verify/mentions.py), of the
        memories whose files may mention code (the index read every file's bytes); and the
        mention cache's generation the verdicts kept are of, for the history
        (`history.NONE_KEPT` when none could be kept, None when another run saved
        verdicts meanwhile)."""
        which = sorted(batch.mentionable)
        if not which:
            return {}, history.NONE_KEPT
        from memory_enhancement.verify.mentions import MentionChecker

        checker = MentionChecker(
            self.store, self.repo, self.git, self.state, notice=notice, scanned=scanned
        )
        found = checker.check([batch.paths[i] for i in which], lambda k: batch.verifiable(which[k]))
        mentions = {i: checks for i, checks in zip(which, found, strict=True) if checks}
        return mentions, checker.cache.seen if checker.cache is not None else history.NONE_KEPT

    def _states(
        self, results: Sequence[MemoryVerification], ids: dict[str, str]
    ) -> dict[str, tuple[float, datetime]]:
        """Per memory, its confidence now (see confidence.py) and the time of this verification."""
        now = self.clock()
        facts = history.evidence(self.state, [ids[r.path] for r in results if r.path in ids])
        states = {}
        for result in results:
            evidence = facts.get(ids.get(result.path, ""), history.Evidence())
            score = confidence.of_checks(result.everything, evidence, now)
            states[result.path] = (score.score, now)
        return states

    def _unreadable(self, reason: str) -> tuple[str, str, str]:
        """An unreadable memory's (or header's) path, file and reason, from the index's
        `path: reason`."""
        path, sep, why = reason.partition(": ")
        if not sep:
            return "", "", reason
        return path, self._file(path), why

    def _file(self, path: str) -> str:
        """The memory file relative to the repository root when inside it (for annotations)."""
        return _store_prefix(str(self.store.root), str(self.repo.root)) + path + ".md"


@functools.cache
def _store_prefix(store: str, repo: str) -> str:
    rel = os.path.relpath(store, repo)
    if rel.startswith(".."):
        return Path(store).as_posix() + "/"
    return "" if rel == "." else rel.replace(os.sep, "/") + "/"
