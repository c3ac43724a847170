"""Prose mentions judged from history: what a run does for the memories whose kept
verdicts no longer hold (or were never kept), after mentions.py took the others.

For each memory file with mentions that need history, mention_history.py reads
what each mention cited when its memory line was written; each mention is then
decided from that alone where it can be (out of range, ambiguous, in a submodule,
no such file), and the rest are verified together as citations at their commits
by the Verifier. What history said and the verdicts given are kept in the state
database with their fingerprint (mention_cache.py) for the next run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.file_list import FileList, Resolution, normalize
from memory_enhancement.core.mentions import GRAMMAR, URL, Mention
from memory_enhancement.core.model import Citation, Memory, MemoryMeta
from memory_enhancement.core.remotes import remote_repository
from memory_enhancement.core.verdict_rows import (
    MENTION_ROOTED,
    encode_check,
    encode_mention,
    mention_json,
    mention_rows,
    verification_tail,
)
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.store.repofiles import walk_files
from memory_enhancement.store.state import State
from memory_enhancement.verify import deletions, earlier, file_checks, folder_checks
from memory_enhancement.verify.fingerprints import Fingerprints
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.mention_cache import Cached, MentionCache, NamesEver, named_paths
from memory_enhancement.verify.mention_checks import (
    NO_FILE,
    absent,
    ambiguous,
    check,
    end_or_none,
    other_repository,
    submodule,
    untracked,
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
    cached_reading,
    key,
    now_only,
    span,
    still_true,
)
from memory_enhancement.verify.mention_reading import Written
from memory_enhancement.verify.repo import Repository
from memory_enhancement.verify.rooted import hidable_check
from memory_enhancement.verify.verifier import Verifier

if TYPE_CHECKING:  # the history is opened when a run judges (a process that asks git)
    from memory_enhancement.verify.blame import GitHistory

NOTICE_FILES = 20  # memory files to trace before a run says it is tracing them


@dataclass
class MentionJudge:
    """Judges the mentions of one run's memories that have no kept verdicts."""

    repo: Repository
    git: Git | None
    state: State
    prints: Fingerprints  # the run's, shared with mentions.py: each file stat-ed once
    notice: Callable[[str], None] | None = None
    _listed: FileList | None = field(default=None, repr=False)  # the files now, once listed
    _history: GitHistory | None = field(default=None, repr=False)
    _now: dict[tuple[str, str], CitationCheck | None] = field(default_factory=dict, repr=False)
    _renames: folder_checks.Renames | None = field(default=None, repr=False)

    def judge(
        self,
        todo: list[Written | None],
        read: list[Written | None],
        rows: dict[str, Cached],
        head: str | None,
        cache: MentionCache,
    ) -> list[tuple[CitationCheck, ...]]:
        """Per memory of `todo` (None: nothing to judge), the verdicts on its mentions,
        judged from history and kept in `cache` for the next run (`rows`: what it held).
        `read`: each memory's mentions as read, paths on a machine included (rooted.py
        leaves those out of `todo`): what is kept, so that a rerun reads no file."""
        git = self.git
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
        self._remember(cache, list(zip(todo, read, strict=True)), judged, rows, fresh, head)
        return judged

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
        """Keep what history said and the verdicts given, with their fingerprint (and a
        memory's mentions as read: those rooted.py left out are left out again on a rerun,
        and a memory holding only those is kept too, with no verdict)."""
        out = dict(fresh)
        for (item, read), checks in zip(todo, judged, strict=True):
            if item is None or read is None or not item.file or not read.mentions:
                continue
            row = fresh.get(item.file) or rows.get(item.file)
            if row is None or not still_true(row, item.blob, head):
                if self._traced(item) is not None:
                    continue  # no history for it (untracked): nothing worth keeping
                row = now_only(item.blob)  # settled by the files now: kept for the rerun
            out[item.file] = row.with_checked(self._kept(head, checks, item, read))
        cache.save(out)

    def _kept(
        self, head: str | None, checks: tuple[CitationCheck, ...], item: Written, read: Written
    ) -> dict[str, Any]:
        """A memory's verdicts as the cache keeps them (mention_cache.Cached.checked)."""
        rows = [encode_check(c) for c in checks]
        checked: dict[str, Any] = {
            "fp": self.prints.of(head, named_paths(checks)),
            "s": [c.status._value_ for c in checks],
            "f": [
                [c.citation.target, c.citation.line, c.reason] for c in checks if c.status.failing
            ],
            "c": rows,
            # As the JSON writer would write them ("": it writes them from the rows).
            "j": ", ".join(
                mention_json(row, encode_mention(c.mention))
                for row, c in zip(rows, checks, strict=True)
                if c.mention is not None
            )
            if all(c.mention is not None for c in checks)
            else "",
        }
        checked["p"] = verification_tail(checked["f"], checked["s"], "") if checked["j"] else ""
        # see verify/rooted.py, and BatchVerdicts.as_recorded
        checked["h"] = any(map(hidable_check, checks))
        if item.stamp is not None:  # the mentions as read, while the file is unchanged
            said = mention_rows(read.mentions)
            checked["st"] = [*item.stamp, GRAMMAR]  # read by this grammar
            checked["w"] = said
            checked["n"] = item.count
            checked["k"] = len(said)
            checked["r"] = any(row[MENTION_ROOTED] for row in said)
        return checked

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
        known = deletions.read(self.git, drafts, answers, found, self._files_now())
        answers = deletions.renamed_answers(
            git, verifier, drafts, asked, answers, known[0], self._files_now(), self.git
        )
        judged = deletions.told(self.git, drafts, answers, known, self._files_now, self.repo)
        if git is not None and self.git is not None and self._history is not None:
            follow_line_maps(git, self.repo, drafts, judged)
            earlier.tell(self.git, self._history, judged)  # out of range: an older version?
        return [tuple(row) for row in judged]

    def _traced(self, item: Written) -> Written | None:
        """The memory file with the mentions that need history, None when none does: a
        file mention (no line) of a file there now does not (file_checks.py), and what
        its file was then is neither asked of git nor kept (a later run that needs it
        finds the cached reading without it, and traces the file again)."""
        needed = [
            m for m in item.mentions if m.start is not None or self._settle(m, item.folder) is None
        ]
        if not needed:
            return None
        return item if len(needed) == len(item.mentions) else item.with_mentions(needed)

    def _settled(self, mention: Mention, folder: str) -> CitationCheck | None:
        """What the files now say of a file mention (asked to trace, then for its verdict)."""
        found = self._settle(mention, folder)
        return None if found is None else replace(found, mention=mention)

    def _settle(self, mention: Mention, folder: str) -> CitationCheck | None:
        """`_settled` as first found for the path (`_traced` asks only whether there is one)."""
        place = (mention.text, folder)  # a file mention's text is its path; a folder's, with `/`
        if place not in self._now:
            self._now[place] = folder_checks.settled(mention, folder, self._files_now, self.repo)
        return self._now[place]

    def _decide(self, mention: Mention, then: Then | None, folder: str) -> CitationCheck | Ask:
        """A verdict from history alone, or the citation to verify."""
        if folder_checks.applies(mention):  # its renames asked of git once per commit
            self._renames = self._renames or folder_checks.renames_from(self.git, self._history)
            return self._settled(mention, folder) or folder_checks.decide(
                mention, then, folder, self._files_now, self.repo, self._history, self._renames
            )
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
        if (local := untracked(mention, plain, folder, self.repo, self.git, commit)) is not None:
            return local
        reason = f"no file {mention.path}{NO_FILE} ({commit[:7]})"
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
            else:
                self._listed = files_now(self.git, self.repo)
        return self._listed


def files_now(git: Git | None, repo: Repository) -> FileList:
    """The repository's files now, without a history open: git's list, or a folder walk."""
    if git is not None:
        from memory_enhancement.verify.blame import GitHistory

        return GitHistory(git).files_now()  # no process left to close
    root = repo.root  # an author's clone is named as this folder
    return FileList(walk_files(root), clones=[root.name.lower()])
