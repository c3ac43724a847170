"""What history says each prose mention cited: the memory line's commit, the file then.

For each memory file with mentions (tracked in the repository it describes), the
commit that last changed each line holding one comes from the replay of the memory
folder's history (line_origins.py; `git blame` where the replay cannot tell); in
that commit's tree the path as written is resolved (the file at that path from the
root, else the one file ending with it, else the candidates; a submodule says so)
and the cited lines are read, all the mentions' files at once. What comes out is a
`Then` per mention, kept in the state database while the memory file is unchanged
(mention_cache.py).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.file_list import Resolution, normalize
from memory_enhancement.core.folder_mentions import FOLDER
from memory_enhancement.core.mentions import GRAMMAR, Mention
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.verify.decisions import quote
from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.mention_cache import Cached
from memory_enhancement.verify.mention_reading import Written

if TYPE_CHECKING:  # a rerun answered from the cache needs neither (see mentions.py)
    from memory_enhancement.verify.blame import GitHistory

CACHE_VERSION = 2  # 2: a change of spaces or line ending alone writes no memory line
# What history says a mention cited (`Then.kind`).
TEXT, PAST_END, AMBIGUOUS, SUBMODULE, ABSENT, OUTSIDE, UNREADABLE, UNCOMMITTED = (
    "text", "past_end", "ambiguous", "submodule", "absent", "outside", "unreadable", "uncommitted",
)  # fmt: skip


@dataclass(frozen=True)
class Then:
    """What one mention cited when its memory line was last changed (commit)."""

    commit: str | None
    kind: str
    path: str | None = None  # the file it resolved to then
    text: str | None = None  # the cited lines then, joined by newlines
    lines: int = 0  # the file's length then
    candidates: tuple[str, ...] = ()
    note: str = ""  # how the file was chosen, when the path as written did not say alone

    def encode(self) -> list[Any]:
        row = [self.commit, self.kind, self.path, self.text, self.lines, list(self.candidates)]
        return [*row, self.note] if self.note else row

    @classmethod
    def decode(cls, row: list[Any]) -> Then:
        commit, kind, path, text, lines, candidates, *note = row
        return cls(commit, kind, path, text, int(lines), tuple(candidates), *note)


def key(mention: Mention) -> str:
    """A mention's place in its memory file, as the cache names it."""
    return f"{mention.line}:{mention.column}"


def span(mention: Mention) -> tuple[int, int]:
    """The cited lines, first to last (a range written backwards is read forwards)."""
    if mention.start is None:
        raise ValueError(f"{mention.path}: a file mention cites no lines")
    end = mention.end if mention.end is not None else mention.start
    return min(mention.start, end), max(mention.start, end)


@dataclass
class HistoryReader:
    """Reads what history says about the mentions of a batch of memory files."""

    git: Git
    history: GitHistory

    def read(
        self, found: list[Written], cached: Mapping[str, Cached], head: str | None
    ) -> tuple[dict[str, dict[str, Then]], dict[str, Cached]]:
        """Per memory file (work-tree path), what each mention (`line:column`) cited then,
        and the cache rows to write for files that had to be blamed. Files without
        history (untracked, outside the repository) are left out."""
        files = [f for f in found if f.file]
        out: dict[str, dict[str, Then]] = {}
        fresh: dict[str, Cached] = {}
        wanted: list[Written] = []
        for item in files:
            hit = cached_reading(cached, item, head)
            if hit is not None:
                out[item.file] = {k: Then.decode(v) for k, v in hit.data["m"].items()}
            else:
                wanted.append(item)
        if not wanted:
            return out, fresh
        tracked = self._tracked_memories(wanted)
        # No history at its path (untracked, or staged and not in HEAD): maybe moved from
        # a memory file HEAD has, its lines blamed there (see GitHistory.moved_from).
        within = posixpath.commonpath([posixpath.dirname(f.file) for f in files])
        moved = self.history.moved_from([i.file for i in wanted], tracked, within) if head else {}
        # untracked and not moved: no history
        wanted = [item for item in wanted if item.file in moved or item.file in tracked]
        from memory_enhancement.verify.line_origins import line_origins

        replayed = line_origins(
            self.git,
            {item.file: item.count for item in wanted if item.file not in moved},
            {item.file: item.blob for item in wanted if item.file not in moved},
        )
        commits: dict[str, dict[int, str | None] | None] = {}
        blames: list[tuple[str, set[int], str | None]] = []
        for item in wanted:
            lines = replayed.get(item.file)
            if lines is not None and item.file not in moved:
                commits[item.file] = {
                    m.line: lines[m.line - 1] for m in item.mentions if m.line <= len(lines)
                }
            else:
                blames.append((item.file, {m.line for m in item.mentions}, moved.get(item.file)))
        commits.update(zip([job[0] for job in blames], self.history.blame_all(blames), strict=True))
        self._prefetch(wanted, commits)
        for item in wanted:
            blamed = commits[item.file]
            if blamed is None:
                continue
            thens = {key(m): self._then(blamed.get(m.line), m, item.folder) for m in item.mentions}
            out[item.file] = thens
            pending = any(t.commit is None for t in thens.values())
            data = {
                "v": CACHE_VERSION,
                "g": GRAMMAR,
                "m": {k: t.encode() for k, t in thens.items()},
            }
            fresh[item.file] = Cached(item.blob, head if pending else None, data)
        return out, fresh

    def _prefetch(
        self, wanted: list[Written], commits: Mapping[str, Mapping[int, str | None] | None]
    ) -> None:
        """Learn at once what the mentions' paths name at their commits: the cited files
        (one `git cat-file --batch` for all of them), the file lists of the commits where
        a path as written is not a file from the root (a bare name, a partial path), then
        the files those lists resolve it to."""
        history = self.history
        asked: list[tuple[str, Mention, str, str]] = []  # (commit, mention, folder, path)
        folders: set[str] = set()  # the commits of folder mentions: whole lists
        for item in wanted:
            blamed = commits.get(item.file) or {}
            for mention in item.mentions:
                commit = blamed.get(mention.line)
                path = normalize(mention.path, item.folder)
                if commit and path and mention.form == FOLDER:
                    folders.add(commit)
                elif commit and path:
                    asked.append((commit, mention, item.folder, path))
        if folders:  # first: a list learned for some names only would be listed again
            history.prefetch_trees(folders)
        history.fetch(history.spec(commit, path) for commit, _, _, path in asked)
        elsewhere = [a for a in asked if not history.exists(a[0], a[3])]
        history.prefetch_trees(
            {commit for commit, _, _, _ in elsewhere},
            {path.rpartition("/")[2] for _, _, _, path in elsewhere},
        )
        found = [(c, self._resolve_at(c, m.path, folder)) for c, m, folder, _ in elsewhere]
        history.fetch(history.spec(c, where.path) for c, where in found if where.path)

    def _tracked_memories(self, files: list[Written]) -> set[str]:
        """Which of these memory files git tracks (one `git ls-files` for their folders,
        or the run's list of tracked files when the repository root is the work tree's:
        the Verifier has read it)."""
        if not self.git.prefix:
            tracked = self.git.tracked
            return {f.file for f in files if f.file in tracked}
        folders = sorted({os.path.dirname(f.file) or "." for f in files})
        try:
            out = self.git.run("ls-files", "-z", "--full-name", "--", *folders)
        except GitError:
            return set()
        return set(out.split("\0"))

    def _then(self, commit: str | None, mention: Mention, folder: str) -> Then:
        """What the mention cited at the commit that last changed its memory line."""
        if commit is None:
            return Then(None, UNCOMMITTED)
        if mention.form == FOLDER:  # the folder by the files under it (folder_checks.py)
            path = normalize(mention.path, folder)
            where = (
                self.history.files_at(commit).folder(path, mention.rooted)
                if path
                else Resolution(outside=True)
            )
        else:
            where = self._resolve_at(commit, mention.path, folder)
        if where.outside:
            return Then(commit, OUTSIDE)
        if where.submodule is not None:
            return Then(commit, SUBMODULE, where.submodule)
        if where.candidates:
            return Then(commit, AMBIGUOUS, candidates=where.candidates)
        if where.path is None:
            return Then(commit, ABSENT)
        return self.at(commit, where.path, mention)

    def at(self, commit: str, path: str, mention: Mention, note: str = "") -> Then:
        """What the mention's lines of this file said at this commit (`note`: how the file
        was chosen), or just before it when it cut them off (`_before`). A file mention
        (file_checks.py) cites no lines: that the file was there is all it needs."""
        if mention.start is None:
            return Then(commit, TEXT, path, note=note)
        then = self._read(commit, path, mention, note)
        return self._before(then, mention) if then.kind == PAST_END else then

    def _read(self, commit: str, path: str, mention: Mention, note: str) -> Then:
        start, end = span(mention)
        found = self.history.cited(commit, path, start, end)
        if found is None:
            return Then(commit, UNREADABLE, path, note=note)
        count, text = found
        if text is None:
            return Then(commit, PAST_END, path, lines=count, note=note)
        return Then(commit, TEXT, path, text, count, note=note)

    def _before(self, then: Then, mention: Mention) -> Then:
        """A line past the end of a file that the memory line's own commit rewrote: the
        memory may describe the file as it was before (notes of an investigation committed
        with its fix, Delcampe's `ebay_integration.R lines 66-231`): read from the parent."""
        assert then.commit is not None and then.path is not None
        history = self.history
        parent = history.parent(then.commit)
        if not parent or history.object_id(parent, then.path) in (
            None,
            history.object_id(then.commit, then.path),
        ):
            return then
        note = (
            f"{then.note}{then.path} had {then.lines} lines after the commit that wrote the "
            f"memory line ({then.commit[:7]}), which rewrote it; read as it was before: "
        )
        before = self._read(parent, then.path, mention, note)
        return before if before.kind == TEXT else then

    def _resolve_at(self, commit: str, written: str, folder: str) -> Resolution:
        """The file a path as written named at a commit: that path from the root, else
        the one file ending with it, else the candidates (the commit's whole tree is
        listed for that, once per commit)."""
        history = self.history
        path = normalize(written, folder)
        if path is None:  # `~/www/app/src/x.py` may be the author's clone (FileList.resolve)
            named = written.rpartition("/")[2]
            return history.files_at(commit, named).resolve(written, folder)
        link = history.files_now().submodule_of(path)
        if link is not None:
            return Resolution(submodule=link)
        if history.exists(commit, path):
            return Resolution(path)
        return history.files_at(commit, path.rpartition("/")[2]).resolve(written, folder)


def cached_reading(cached: Mapping[str, Cached], item: Written, head: str | None) -> Cached | None:
    """What git said of this memory file's lines, when it is cached and still holds (a row
    kept for a file whose mentions the repository settled alone, `now_only`, says nothing
    of them: a later run that needs history traces the file)."""
    hit = cached.get(item.file) if item.file else None
    if hit is None or not still_true(hit, item.blob, head):
        return None
    said = hit.data.get("m")
    return hit if isinstance(said, dict) and all(key(m) in said for m in item.mentions) else None


def now_only(blob: str) -> Cached:
    """The cache row of a memory file none of whose mentions needed history (file mentions
    of files there now): it keeps the verdicts and the mentions as read, for the rerun."""
    return Cached(blob, None, {"v": CACHE_VERSION, "g": GRAMMAR, "m": {}})


def still_true(row: Cached, blob: str, head: str | None) -> bool:
    """Whether a cached row still describes the memory file (same blob; same HEAD
    when an answer depended on it; its mentions read by this grammar)."""
    if row.blob != blob or row.head not in (None, head):
        return False
    try:
        return row.data.get("v") == CACHE_VERSION and row.data.get("g") == GRAMMAR
    except ValueError:  # a damaged row is a miss; it is rewritten
        return False


@dataclass(frozen=True)
class Ask:
    """A mention to be verified as a citation at its commit, and how to tell the answer."""

    mention: Mention
    then: Then
    citation: Citation
    prefix: str = ""

    def explain(
        self,
        check: CitationCheck,
        pointer: Callable[[str, str | None], str] | None = None,
        deleted: Callable[[str, str], object | None] | None = None,
        listed: Callable[[str], bool] | None = None,
    ) -> CitationCheck:
        """The Verifier's verdict told as a mention's: when it was written, and what the
        line said then next to what it says now. `pointer`: what a `missing` verdict adds
        to say where to look (a deleted file's code often lives on under its name in
        another folder: MongLong0214/stock-ai-newsletter's `scripts/tli/` file went into
        `scripts/tli/comparison/`; file_checks.pointer), given the file and the cited text;
        `deleted`: the commit that deleted a file there at a commit (deletions.py).
        `listed`: whether git still lists a file, so that one deleted from the work tree and
        not committed is said so (a person who reads "deleted after the memory line was
        written (dfbb954)" looks in `git log` for a deletion that is not there)."""
        reason = check.reason
        commit = (self.citation.commit or "")[:7]
        if self.citation.line is None and check.status is Verdict.MOVED:  # a whole file
            reason = f"renamed to {check.renamed_to} since the memory line was written ({commit})"
        elif check.status is Verdict.STALE and self.then.text is not None:
            # The line of a range the reason names (`line 48 now reads`), as it read then.
            said = self.then.text.split("\n")
            named = _NAMED.match(reason)
            at = int(named[1]) - (self.citation.line or 0) if named else 0
            then = said[at] if 0 <= at < len(said) else said[0]
            reason += f"; when written ({commit}) it read `{quote(then, check.now)}`"
        elif check.status is Verdict.MISSING and check.renamed_to is not None:
            # The file lives on under another name without the cited text: the
            # mention is stale, not missing (its file is there to read).
            check = replace(check, status=Verdict.STALE, current_path=check.renamed_to)
        elif check.status is Verdict.MISSING:
            target = self.citation.target
            by = deleted(target, self.citation.commit or "") if deleted else None
            when = f" in {by}," if by is not None else ""
            reason = f"{target} was deleted{when} after the memory line was written ({commit})"
            if listed is not None and listed(target):
                reason += ": from the work tree, not committed yet (git still lists it)"
            reason += pointer(target, self.then.text) if pointer else ""
        elif check.status is Verdict.VALID and not reason:
            reason = f"unchanged since the memory line was written ({commit})"
        return replace(
            check, reason=self.prefix + reason, mention=self.mention, written_in=self.then.commit
        )


_NAMED = re.compile(r"(?:renamed to [^;]*; )?line (\d+) ")  # the start of a stale reason
