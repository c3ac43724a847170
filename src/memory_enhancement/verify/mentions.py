"""Prose mentions verified as citations written when their memory line was.

`src/app.py:42` in a memory has no snippet, so on its own it could only be
checked against the file's length: a mention whose line moved, changed, or was
wrong from the start would pass. Git knows better. For a memory file tracked in
the repository it describes, git gives the commit that last changed the line
holding the mention (mention_history.py), and that commit's tree gives what
line 42 said then. The mention then becomes a citation with that snippet, verified at that
commit by the same Verifier as every citation: valid, moved (to where), moved
with a rename, stale (quoting then and now), missing. Before that, history
settles what needs no diff: the line was past the end of the file even then
(`out_of_range`: wrong when written), the path names several files
(`ambiguous`, with candidates), the file lies in a submodule that is not
checked out (`in_submodule`), or no file ever had that path (`missing`).

A memory line not committed yet is checked against the work tree as written. A memory
file outside any repository, or untracked, has no history: the line count is all that
can be checked, and the verdict says so (`unchecked`). What git answered, and the
verdicts with what they depend on, are kept in the state database (mention_cache.py): a
rerun with nothing changed asks git nothing. Where diffs rather than snippets decide
(renames since the mention's commit, a blank line, a range that grew) is mention_diffs.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.file_list import FileList, Resolution, normalize
from memory_enhancement.core.mentions import GRAMMAR, URL, Mention
from memory_enhancement.core.model import Citation, Memory, MemoryMeta, Verifiable
from memory_enhancement.core.remotes import remote_repository
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.store.disk import Store
from memory_enhancement.store.repofiles import walk_files
from memory_enhancement.store.state import State
from memory_enhancement.verify import file_checks
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.mention_cache import (
    Cached,
    Fingerprints,
    MentionCache,
    NamesEver,
    encode_check,
    encode_mention,
    named_paths,
)
from memory_enhancement.verify.mention_checks import (
    absent,
    ambiguous,
    check,
    decoded,
    end_or_none,
    other_repository,
    submodule,
)
from memory_enhancement.verify.mention_history import (
    ABSENT,
    AMBIGUOUS,
    OUTSIDE,
    PAST_END,
    SUBMODULE,
    TEXT,
    UNCOMMITTED,
    UNREADABLE,
    Ask,
    HistoryReader,
    Then,
    Written,
    cached_reading,
    key,
    now_only,
    span,
    still_true,
)
from memory_enhancement.verify.mention_reading import MentionReader
from memory_enhancement.verify.repo import Repository
from memory_enhancement.verify.verifier import Verifier

if TYPE_CHECKING:  # what only a run that asks git needs is imported when it does: a rerun
    from memory_enhancement.verify.blame import GitHistory  # answered from the cache skips it

NOTICE_FILES = 20  # memory files to trace before a run says it is tracing them


@dataclass
class MentionChecker:
    """Checks the prose mentions of a batch of one store's memories."""

    store: Store
    repo: Repository
    git: Git | None
    state: State
    notice: Callable[[str], None] | None = None  # told when the history work will be long
    _history: GitHistory | None = field(default=None, repr=False)
    _listed: FileList | None = field(default=None, repr=False)
    _prints: Fingerprints | None = field(default=None, repr=False)
    _now: dict[tuple[str, str], CitationCheck | None] = field(default_factory=dict, repr=False)

    def check(self, batch: Sequence[Verifiable]) -> list[tuple[CitationCheck, ...]]:
        """Per memory of the batch (in order), the verdicts on its prose mentions.

        Verdicts kept from a run whose fingerprint still holds are taken as they
        are (nothing they depend on changed); the rest are judged from history.
        """
        git = self.git
        cache = MentionCache(self.state)
        rows = cache.load_all() if git else {}
        read = MentionReader(self.store, self.repo, self.git, self.state).read_all(batch, rows)
        folders = file_checks.Folders(str(self.repo.root), self._files_now)
        found = folders.here(read)  # as read, less paths on a machine (`/etc/x.conf`)
        if not any(f is not None and f.mentions for f in read):
            return [() for _ in batch]
        head = git.head() if git is not None else None  # kept: the run records it too
        kept: dict[int, tuple[CitationCheck, ...]] = {}
        for n, item in enumerate(found):
            row = rows.get(item.file) if item is not None and item.file else None
            if item is None or row is None or row.blob != item.blob or row.head not in (None, head):
                continue
            try:
                checked = row.checked
            except ValueError:
                continue  # damaged: judged again and rewritten
            if checked is None or len(checked["c"]) != len(item.mentions):  # a folder came, went
                continue
            if checked["fp"] == self._fingerprint(head, checked["paths"]):
                kept[n] = decoded(checked["c"], item.mentions)
        todo = [None if n in kept else item for n, item in enumerate(found)]
        pairs = list(zip(todo, read, strict=True))  # to judge, and as read (kept for reruns)
        if not any(item is not None and item.mentions for item in todo):
            self._remember(cache, pairs, [() for _ in todo], rows, {}, head)  # machine paths
            return [folders.shown(kept.get(n, ())) for n in range(len(found))]  # as last run
        from memory_enhancement.verify.blame import GitHistory

        self._history = history = GitHistory(git) if git is not None else None
        names = NamesEver(self.state) if history is not None and head else None
        if history is not None and names is not None and head:
            history.knowing(names.load(head))
        try:
            fresh: dict[str, Cached] = {}
            thens: dict[str, dict[str, Then]] = {}
            if git is not None and self._history is not None:
                reader = HistoryReader(git, self._history)
                pending = [t for f in todo if f is not None and (t := self._traced(f))]
                self._announce([f for f in pending if cached_reading(rows, f, head) is None])
                thens, fresh = reader.read(pending, rows, head)
                if any(t.kind == AMBIGUOUS for f in thens.values() for t in f.values()):
                    from memory_enhancement.verify.mention_context import settle_all

                    thens = settle_all(pending, thens, reader)  # names told by their neighbours
            judged = self._judge(todo, thens)
            if history is not None and names is not None and head:
                names.save(head, history.names_learned())
        finally:
            if self._history is not None:
                self._history.close()
            self._history = None
        self._remember(cache, pairs, judged, rows, fresh, head)
        return [folders.shown(kept.get(n, judged[n])) for n in range(len(found))]

    def _announce(self, pending: list[Written]) -> None:
        """Say that a first run traces many memory files (on a big history, seconds with
        nothing else on the screen), and that the next will not."""
        if self.notice is not None and len(pending) >= NOTICE_FILES:
            count = sum(len(item.mentions) for item in pending)
            self.notice(f"checking {count} mentions in {len(pending)} memory files against "
                        "git history (the next run reuses what it learns)")  # fmt: skip

    def _remember(
        self,
        cache: MentionCache,
        todo: list[tuple[Written | None, Written | None]],  # to judge, as read
        judged: list[tuple[CitationCheck, ...]],
        rows: dict[str, Cached],
        fresh: dict[str, Cached],
        head: str | None,
    ) -> None:
        """Keep what history said and the verdicts given, with their fingerprint."""
        out = dict(fresh)
        for (item, read), checks in zip(todo, judged, strict=True):
            if item is None or read is None or not item.file or not read.mentions:
                continue
            row = fresh.get(item.file) or rows.get(item.file)
            if row is None or not still_true(row, item.blob, head):
                if self._traced(item) is not None:
                    continue  # no history for it (untracked): nothing worth keeping
                row = now_only(item.blob)  # settled by the files now: kept for the rerun
            paths = named_paths(checks)
            checked: dict[str, Any] = {
                "fp": self._fingerprint(head, paths),
                "paths": paths,
                "c": [encode_check(c) for c in checks],
            }
            if item.stamp is not None:  # the mentions as read, while the file is unchanged
                checked["st"] = [*item.stamp, GRAMMAR]  # read by this grammar
                checked["w"] = [encode_mention(m) for m in read.mentions]
                checked["n"] = item.count
            out[item.file] = row.with_checked(checked)
        cache.save(out)

    def _fingerprint(self, head: str | None, paths: list[str]) -> str:
        if self._prints is None:
            self._prints = Fingerprints(self.repo.root, self.git.toplevel if self.git else None)
        return self._prints.of(head, paths)

    # -- verdicts -------------------------------------------------------------------

    def _judge(
        self, found: list[Written | None], thens: dict[str, dict[str, Then]]
    ) -> list[tuple[CitationCheck, ...]]:
        """Decide what needs no diff at once; verify the rest together, as citations at
        their commits (so the Verifier asks git one diff per commit, not per mention)."""
        from memory_enhancement.verify.mention_diffs import asks, follow_line_maps, mention_git

        origin = None
        if self._history is not None and any(
            m.form == URL for f in found if f is not None for m in f.mentions
        ):
            origin = remote_repository(self._history.origin() or "")
        drafts: list[list[CitationCheck | Ask]] = []
        for item in found:
            row: list[CitationCheck | Ask] = []
            for mention in item.mentions if item is not None else ():
                assert item is not None
                into = (mention.repository or "").lower()
                if mention.form == URL and (origin is None or into != origin):
                    row.append(other_repository(mention, origin))
                    continue
                then = thens.get(item.file, {}).get(key(mention)) if item.file else None
                row.append(self._decide(mention, then, item.folder))
            drafts.append(row)
        # The rows with something to verify only (a store's batch is every memory, most
        # without a mention), each a memory of its own for the Verifier.
        waiting = [n for n, row in enumerate(drafts) if any(asks(d) for d in row)]
        asked = [
            Memory(
                str(n), "", MemoryMeta(citations=tuple(d.citation for d in drafts[n] if asks(d)))
            )
            for n in waiting
        ]
        git = None
        if self.git is not None and self._history is not None:
            pending = [d for n in waiting for d in drafts[n] if asks(d)]
            git = mention_git(self.git, pending, self.repo, self._files_now, self._history)
        verifier = Verifier(self.repo, git)
        answers = dict(
            zip(waiting, (r.checks for r in verifier.verify_memories(asked)), strict=True)
        )
        judged = []
        for n, row in enumerate(drafts):
            checks = iter(answers.get(n, ()))
            judged.append(
                [d if isinstance(d, CitationCheck) else d.explain(next(checks)) for d in row]
            )
        if git is not None:
            follow_line_maps(git, self.repo, drafts, judged)
        return [tuple(row) for row in judged]

    def _traced(self, item: Written) -> Written | None:
        """The memory file with the mentions that need history, None when none does: a
        file mention (no line) of a file there now does not (file_checks.py), and what
        its file was then is neither asked of git nor kept (a later run that needs it
        finds the cached reading without it, and traces the file again)."""
        needed = [
            m for m in item.mentions if m.start is not None or self._settled(m, item.folder) is None
        ]
        if not needed:
            return None
        return item if len(needed) == len(item.mentions) else replace(item, mentions=needed)

    def _settled(self, mention: Mention, folder: str) -> CitationCheck | None:
        """What the files now say of a file mention (asked twice per mention a run: which
        memory files to trace, then the verdict), once per path as written and folder."""
        place = (mention.path, folder)
        if place not in self._now:
            self._now[place] = file_checks.settled_now(mention, folder, self._files_now, self.repo)
        found = self._now[place]
        return None if found is None else replace(found, mention=mention)

    def _decide(self, mention: Mention, then: Then | None, folder: str) -> CitationCheck | Ask:
        """A verdict from history alone, or the citation to verify."""
        if mention.start is None:  # a whole file
            settled = self._settled(mention, folder)
            return settled or file_checks.decide(mention, then, folder, self._files_now, self.repo)
        if then is None:
            return self._line_count(mention, folder, committed=False)
        commit = then.commit
        if then.kind == UNCOMMITTED or commit is None:
            return self._line_count(mention, folder, committed=True)
        start, end = span(mention)
        plain = Citation(mention.path, start, end_or_none(start, end))
        when = f"when the memory line was written ({commit[:7]})"
        if then.kind == OUTSIDE:
            return check(mention, plain, Verdict.MISSING, "the path leaves the repository", commit)
        if then.kind == SUBMODULE:
            return submodule(mention, plain, then.path or "", self.repo, commit)
        if then.kind == AMBIGUOUS:
            return ambiguous(mention, plain, then.candidates, commit)
        cited = replace(plain, target=then.path or mention.path)
        if then.kind == PAST_END:
            reason = (
                f"{then.note}line {end} was already past the end of {then.path} ({then.lines} "
                f"lines) {when}: wrong when written"
            )
            return check(mention, cited, Verdict.OUT_OF_RANGE, reason, commit)
        if then.kind == UNREADABLE:
            return check(mention, cited, Verdict.INVALID, f"not a text file {when}", commit)
        if then.kind == ABSENT:
            return self._added_later(mention, plain, commit, folder)
        return Ask(mention, then, replace(cited, snippet=then.text, commit=commit), then.note)

    def _added_later(
        self, mention: Mention, plain: Citation, commit: str, folder: str
    ) -> CitationCheck | Ask:
        """No such file when the memory line was written: if one exists now, the code was
        committed after the memory, so it is read at the commit that added it."""
        history = self._history
        now = self._files_now().resolve(mention.path, folder)
        if now.candidates:
            return ambiguous(mention, plain, now.candidates, commit)
        start, end = span(mention)
        if now.path is not None and history is not None:
            added = history.added_after(commit, now.path)
            found = history.cited(added, now.path, start, end) if added else None
            if added and found is not None:
                cited = replace(plain, target=now.path)
                count, text = found
                if text is None:
                    reason = (
                        f"line {end} was past the end of {now.path} ({count} lines) when "
                        f"it was added ({added[:7]}), after the memory line ({commit[:7]})"
                    )
                    return check(mention, cited, Verdict.OUT_OF_RANGE, reason, commit)
                then = Then(added, TEXT, now.path, text, count)
                prefix = f"file added after the memory line ({added[:7]}); "
                return Ask(mention, then, replace(cited, snippet=text, commit=added), prefix)
        reason = (
            f"no file {mention.path} in the repository, now or when the memory line was "
            f"written ({commit[:7]})"
        )
        lists: list[Callable[[], FileList]] = [self._files_now]  # the past's listed if asked
        ever = None
        if history is not None:
            lists.append(partial(history.files_at, commit))
            ever = history.ever_named
        return absent(mention, plain, reason, (f() for f in lists), commit, ever)

    def _line_count(self, mention: Mention, folder: str, *, committed: bool) -> CitationCheck:
        """Without history, or for a memory line not committed yet: does the file have
        those lines now. Without history that is all it says (`unchecked`); a line not
        committed yet describes the work tree as it is, so it is `valid`."""
        start, end = span(mention)
        plain = Citation(mention.path, start, end_or_none(start, end))
        where = self._files_now().resolve(mention.path, folder)
        if not (where.found or where.candidates or where.outside or where.submodule):
            path = normalize(mention.path, folder)
            if path is not None and self.repo.read(path).is_text:
                where = Resolution(path)  # untracked, or no git to list the files
        if where.outside:
            return check(mention, plain, Verdict.MISSING, "the path leaves the repository")
        if where.submodule is not None:
            return submodule(mention, plain, where.submodule, self.repo, None)
        if where.candidates:
            return ambiguous(mention, plain, where.candidates, None)
        if where.path is None:
            history = self._history
            ever = history.ever_named if history is not None else None
            reason = f"{mention.path} not found"
            return absent(mention, plain, reason, [self._files_now()], None, ever)
        cited = replace(plain, target=where.path)
        source = self.repo.read(where.path)
        if not source.is_text:
            return check(mention, cited, Verdict.INVALID, source.reason)
        if end > len(source.lines):
            reason = f"line {end} is past the end of {where.path} ({len(source.lines)} lines)"
            if committed:
                reason += " (memory line not committed yet)"
            return check(mention, cited, Verdict.OUT_OF_RANGE, reason)
        if committed:
            reason = "memory line not committed yet: checked against the work tree as written"
            return check(mention, cited, Verdict.VALID, reason, current=where.path)
        reason = "no history (memory file not tracked by git): only the line count was checked"
        return check(mention, cited, Verdict.UNCHECKED, reason, current=where.path)

    def _files_now(self) -> FileList:
        """The repository's files now: git's list, or a walk of the folder without git."""
        if self._listed is None:
            if self._history is not None:
                self._listed = self._history.files_now()
            elif self.git is not None:
                from memory_enhancement.verify.blame import GitHistory

                self._listed = GitHistory(self.git).files_now()  # no process left to close
            else:
                root = self.repo.root  # an author's clone is named as this folder
                self._listed = FileList(walk_files(root), clones=[root.name.lower()])
        return self._listed
