"""Verifying memories: one just in time from its file, or a batch as the index knows them.

The service picks the memories (one, a category, or those a change since a git
ref touches) and reads them; `verify.runs.Runner` verifies, records and fixes.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from memory_enhancement.core.batch import CitedBatch
from memory_enhancement.core.errors import InvalidInputError, MemoryToolError, NotFoundError
from memory_enhancement.index import queries
from memory_enhancement.service.citation_edits import CitationEdits

if TYPE_CHECKING:
    from memory_enhancement.core.verdicts import VerifyOptions, VerifyRun
    from memory_enhancement.verify.runs import Runner


class Verification(CitationEdits):
    """Verify one memory, every memory, or those a change touches."""

    def verify(self, path: str, options: VerifyOptions | None = None) -> VerifyRun:
        """Verify one memory's citations just in time (and fix moved ones on request).

        The memory is named as `get` names it (a path, a `[mem:ID]` or a unique name:
        an agent verifies what it is about to quote), read from its file (errors are
        raised, not skipped), and the index takes that read as it is. A memory whose
        frontmatter does not parse is verified for its prose, the header named in the
        run's `headers` (a fix to it is refused, as every edit of it is).
        """
        target = self.find(path)
        loaded = self.store.read(target, lenient=True)
        header = getattr(loaded.doc, "header_error", None)
        ids = self.index.citation_ids([target], {target: loaded})
        batch = [(loaded.doc.memory, tuple(loaded.doc.citation_lines), ids.get(target))]
        if options is None:
            from memory_enhancement.core.verdicts import VerifyOptions

            options = VerifyOptions()
        run = self._runner().run(
            CitedBatch.of(batch), options, keep_uncited=True, headers=[header] if header else (),
            unstamped=self._unstamped(options),
        )  # fmt: skip
        self._after_writes(run)
        return run

    def verify_all(
        self,
        category: str | None = None,
        *,
        changed_since: str | None = None,
        options: VerifyOptions | None = None,
    ) -> VerifyRun:
        """Verify every memory with citations, or only those a change since a ref touches."""
        prefix = self._category(category)
        if options is None:
            from memory_enhancement.core.verdicts import VerifyOptions

            options = VerifyOptions()
        if prefix and not (self.store.root / prefix).is_dir():
            # Not "nothing to verify", valid: a mistyped category vouched for nothing.
            raise NotFoundError(f"no category {category!r} in {self.store.root}")
        paths: list[str] | None = None
        if changed_since:
            changed = self._changed_files(changed_since)
            paths = self._changed_paths(changed, prefix, options.include_mentions)
            return replace(self._verify_paths(paths, options), changed=frozenset(changed))
        if prefix:
            paths = list(self.store.iter_paths(prefix))
        return self._verify_paths(paths, options)

    def _verify_paths(self, paths: list[str] | None, options: VerifyOptions) -> VerifyRun:
        """A batch (all memories when paths is None) as the index knows them: the index
        is in step with the files (it syncs first), so nothing is parsed again;
        unreadable memory files are reported as skipped, and memories whose header does
        not parse are verified for their prose and named in the run's `headers`. A run
        over the whole store skips the cited files that held at the last one and did not
        change since (verify/settled.py), unless asked to recheck them."""
        whole = paths is None
        settled = None
        started = time.time_ns()
        with self.index.connect() as conn:
            batch, skipped, headers = queries.verifiable(conn, paths)
            if whole:
                known, changes = queries.settled_files(conn)
        scanned = self.index.take_scan()  # this sync's stats of the memory files, if all
        if whole:
            from memory_enhancement.verify.settled import SettledFiles

            known_now = {} if options.recheck else known
            settled = SettledFiles(known_now, self.git, str(self.repo.root), started, changes)
        run = self._runner().run(
            batch, options, skipped=skipped, headers=headers, whole_store=whole,
            settled=settled, many=True, unstamped=self._unstamped(options), scanned=scanned,
        )  # fmt: skip
        if settled is not None and settled.changed:
            with self.index.connect(sync=False) as conn:
                queries.settle_files(conn, settled.found, known, changes)
        self._after_writes(run)
        return run

    def _unstamped(self, options: VerifyOptions) -> tuple[str, ...]:
        """What a --write records nothing in: a Claude Code folder's MEMORY.md, the index
        Claude Code loads into every session (its mentions are verified, and fixed)."""
        if not options.write:
            return ()
        from memory_enhancement.service import claude  # a --write's business alone

        return (claude.INDEX,) if claude.folder_of(self.store, learn=False) is not None else ()

    def _after_writes(self, run: VerifyRun) -> None:
        """Bring the index in step with the memory files a run rewrote (`--fix`,
        `--write`), now rather than at the next call.

        The next call would find every rewritten file changed and read and parse them
        all again: after `verify-all --write` of a big store, a run as dear as building
        the index. Synced now, the writes are behind the sync's start by more than the
        filesystem's timestamp resolution (except the last few), so the next call finds
        the files as indexed and is a warm run."""
        if any(fix.written for fix in run.fixes):
            with self.index.connect():
                pass  # connecting syncs

    def _changed_files(self, ref: str) -> set[str]:
        """The repository files changed since ref (the working tree's changes included)."""
        if self.git is None:
            raise InvalidInputError(
                f"--changed-since {ref!r} needs a git repository at {self.repo.root}"
            )
        return self.git.changed_since(ref)

    def _changed_paths(self, changed: set[str], category: str | None, mentions: bool) -> list[str]:
        """Memories citing one of these changed files (or, with `mentions`, mentioning one
        in prose: in a Serena store most do only that), or whose own file changed (PR fast
        path)."""
        store_dir = os.path.relpath(self.store.root, self.repo.root).replace(os.sep, "/")
        prefix = "" if store_dir == "." else store_dir + "/"
        own = {
            f[len(prefix) : -len(".md")]
            for f in changed
            if f.startswith(prefix) and f.endswith(".md") and not store_dir.startswith("..")
        }
        if not changed:
            return []
        with self.index.connect() as conn:
            citing = queries.citing(conn, changed)
            if mentions:
                citing += queries.mentioning(conn, changed)
                elsewhere = queries.mentioning_elsewhere(conn, changed)
                citing += self._naming(elsewhere, changed)
            # A memory file the change itself left unreadable is listed, so the run
            # reports it (`::error`, `unreadable` in JSON, exit 1); one that cites a changed
            # file cannot be known to, its citations unread.
            found = queries.readable(conn, citing, category)
            found += queries.readable(conn, own, category, unreadable_too=True)
            return sorted(set(found))

    def _naming(self, paths: list[str], files: set[str]) -> list[str]:
        """Those of these memories whose file holds the name of one of these repository
        files: where a mention the index's content leaves out may be (a frontmatter).
        A file that cannot be read is left to the run, which reports it."""
        names = {f.rsplit("/", 1)[-1].encode() for f in files if f}
        found = []
        for path in paths:
            try:
                data, _ = self.store.read_bytes(path, scanned=True)  # paths the index scanned
            except MemoryToolError:
                continue
            if any(name in data for name in names):
                found.append(path)
        return found

    def _runner(self) -> Runner:
        from memory_enhancement.verify.runs import Runner

        return Runner(self.store, self.repo, self.git, self.state, self.clock)
