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

A memory line not committed yet is checked against the work tree as written.
A memory file outside any repository, or untracked, has no history: the line
count is all that can be checked, and the verdict says so (`unchecked`).
What git answered, and the verdicts with what they depend on, are kept in the
state database (mention_cache.py): a rerun with nothing changed asks git nothing of
history (only HEAD).
Where diffs rather than snippets decide (renames since the mention's commit, a
blank line, a range that grew) is mention_diffs.py.

This module is what every run does: read the mentions (mention_reading.py) and take
the verdicts whose fingerprint still holds, as the rows they were kept as. Judging
the rest from history is mention_judge.py, loaded only when something is left to
judge: a rerun with nothing changed imports none of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.mentions import Mention
from memory_enhancement.core.model import Verifiable
from memory_enhancement.core.verdict_rows import EncodedMentions, Recalled, mention_rows
from memory_enhancement.core.verdicts import CitationCheck
from memory_enhancement.store.disk import Store
from memory_enhancement.store.scan import Snapshot
from memory_enhancement.store.state import State
from memory_enhancement.verify.fingerprints import Fingerprints
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.mention_cache import CloneNames, MentionCache
from memory_enhancement.verify.mention_reading import MentionReader
from memory_enhancement.verify.repo import Repository
from memory_enhancement.verify.rooted import Folders

if TYPE_CHECKING:
    from memory_enhancement.core.file_list import FileList


class MentionChecker:
    """Checks the prose mentions of a batch of one store's memories. (A plain class: every
    verify-all imports this module, and making a dataclass costs more than its use.)"""

    def __init__(
        self,
        store: Store,
        repo: Repository,
        git: Git | None,
        state: State,
        *,
        notice: Callable[[str], None] | None = None,  # told when the history work is long
        scanned: Snapshot | None = None,  # the memory files' stats this call (mention_reading)
    ) -> None:
        self.store, self.repo, self.git, self.state, self.notice = store, repo, git, state, notice
        self.scanned = scanned
        self._listed: FileList | None = None
        self._clone_names: frozenset[str] | None = None
        self.cache: MentionCache | None = None  # as `check` read and wrote it (None: unread)

    def check(
        self, paths: Sequence[str], verifiable: Callable[[int], Verifiable]
    ) -> list[tuple[CitationCheck, ...] | Recalled]:
        """Per memory (`paths[k]`, as `verifiable(k)` gives it, built only when its file
        is read), the verdicts on its prose mentions.

        Verdicts kept from a run whose fingerprint still holds are taken as they
        are (nothing they depend on changed), handed on as the rows they were kept
        as (`Recalled`); the rest are judged from history (mention_judge.py).
        """
        git = self.git
        cache = MentionCache(self.state)
        rows = cache.load_all() if git else {}
        self.cache = cache if git else None  # its generation, for the history
        reader = MentionReader(self.store, self.repo, self.git, self.state, self.scanned)
        read = reader.read_all(paths, verifiable, rows)
        if not any(f is not None and f.mentions for f in read):
            return [() for _ in paths]
        folders = Folders(str(self.repo.root), self._files_now, self._clones)
        found = folders.here(read)  # as read, less paths on a machine (`/etc/x.conf`)
        head = git.head() if git is not None else None  # kept: the run records it too
        prints = Fingerprints(self.repo.root, git.toplevel if git else None)
        offered: list[tuple[int, Sequence[Mention], Any]] = []  # memories with verdicts kept
        for n, item in enumerate(found):
            row = rows.get(item.file) if item is not None and item.file else None
            if item is None or row is None or row.blob != item.blob or row.head not in (None, head):
                continue
            try:
                checked: Any = row.checked
            except ValueError:
                continue  # damaged: judged again and rewritten
            if checked is not None:
                offered.append((n, item.mentions, checked))
        holding = prints.holding(head, [checked.get("fp") for _, _, checked in offered])
        kept: dict[int, Recalled] = {}
        for (n, said, checked), holds in zip(offered, holding, strict=True):
            if holds:
                recalled = _recalled(checked, said)
                if recalled is not None:  # else damaged: judged again and rewritten
                    kept[n] = recalled
        todo = [None if n in kept else item for n, item in enumerate(found)]
        if all(item is None for item in todo):
            return [folders.shown(kept.get(n, ())) for n in range(len(found))]  # as last run
        from memory_enhancement.verify.mention_judge import MentionJudge

        judge = MentionJudge(self.repo, git, self.state, prints, self.notice, self._listed)
        judged = judge.judge(todo, read, rows, head, cache)
        return [folders.shown(kept.get(n, judged[n])) for n in range(len(found))]

    def _clones(self) -> frozenset[str]:
        """What an author's clone of the repository is called (rooted.py asks, rarely)."""
        if self._clone_names is None:
            if self._listed is not None or self.git is None:
                self._clone_names = frozenset(self._files_now().clones)
            else:
                self._clone_names = CloneNames(self.state).of(self.git)
        return self._clone_names

    def _files_now(self) -> FileList:
        """The repository's files now (rooted.py asks, rarely: then the judge reuses it)."""
        if self._listed is None:
            from memory_enhancement.verify.mention_judge import files_now

            self._listed = files_now(self.git, self.repo)
        return self._listed


def _recalled(checked: Any, mentions: Sequence[Mention]) -> Recalled | None:
    """The kept verdicts on these mentions (as read, or as the cache kept them), None when
    they do not pair up (the memory is then judged again)."""
    try:
        statuses, failing, wire = checked["s"], checked["f"], checked["j"]
        if not isinstance(statuses, list) or len(statuses) != len(mentions):
            return None
        said = mentions if isinstance(mentions, EncodedMentions) else mention_rows(mentions)
        failed = [(target, line, reason) for target, line, reason in failing] if failing else []
    except (KeyError, TypeError, ValueError):
        return None
    hides, tail = checked.get("h"), checked.get("p")
    return Recalled(
        checked["c"], said, statuses=statuses, failing=failed, wire=wire,
        hidable=hides if isinstance(hides, bool) else None,
        tail=tail if tail and isinstance(tail, str) else None,
    )  # fmt: skip
