"""Prose mentions verified as citations written when their memory line was.

`src/app.py:42` in a memory has no snippet, so on its own it could only be
checked against the file's length: a mention whose line moved, changed, or was
wrong from the start would pass. Git knows better. For a memory file tracked in
the repository it describes, `git blame` gives the commit that last changed
the line holding the mention, and that commit's tree gives what line 42 said
then. The mention then becomes a citation with that snippet, verified at that
commit by the same Verifier as every citation: valid, moved (to where), moved
with a rename, stale (quoting then and now), missing. Before that, history
settles what needs no diff: the line was past the end of the file even then
(`out_of_range`: wrong when written), the path names several files
(`ambiguous`, with candidates), the file lies in a submodule that is not
checked out (`in_submodule`), or no file ever had that path (`missing`).

A memory line not committed yet is checked against the work tree as written.
A memory file outside any repository, or untracked, has no history: the line
count is all that can be checked, and the verdict says so (`unchecked`).
What git answers is kept per memory file (verify/blame.py), so a rerun on
unchanged memories asks it again only for the diffs every citation needs.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeGuard

from memory_enhancement.core.errors import MemoryToolError
from memory_enhancement.core.mentions import (
    URL,
    FileList,
    Mention,
    Resolution,
    find_mentions,
    may_mention,
    normalize,
    remote_repository,
)
from memory_enhancement.core.model import Citation, Memory, MemoryMeta, Verifiable
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.store.disk import Store
from memory_enhancement.store.formats.base import MAX_FILE_BYTES
from memory_enhancement.store.state import State
from memory_enhancement.verify.blame import GitHistory, blob_hash
from memory_enhancement.verify.blame import from_git as _from_git
from memory_enhancement.verify.blame import to_git as _to_git
from memory_enhancement.verify.git import Git, GitError, LineMap
from memory_enhancement.verify.mention_cache import (
    Cached,
    MentionCache,
    MentionFree,
    decode_check,
    encode_check,
    fingerprint,
    named_paths,
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
    HistoryReader,
    Then,
    Written,
    key,
    span,
    still_true,
)
from memory_enhancement.verify.repo import Repository, SourceStatus
from memory_enhancement.verify.verifier import Verifier

_RENAMES = ("--name-status", "-z", "--diff-filter=R")
MAX_WALKED_FILES = 50_000


@dataclass
class MentionChecker:
    """Checks the prose mentions of a batch of one store's memories."""

    store: Store
    repo: Repository
    git: Git | None
    state: State
    _history: GitHistory | None = field(default=None, repr=False)
    _listed: FileList | None = field(default=None, repr=False)

    def check(self, batch: Sequence[Verifiable]) -> list[tuple[CitationCheck, ...]]:
        """Per memory of the batch (in order), the verdicts on its prose mentions.

        Verdicts kept from a run whose fingerprint still holds are taken as they
        are (nothing they depend on changed); the rest are judged from history.
        """
        found = self._read_all([memory for memory, _, _ in batch])
        if not any(f is not None and f.mentions for f in found):
            return [() for _ in batch]
        git = self.git
        cache = MentionCache(self.state)
        rows = cache.load([f.file for f in found if f is not None and f.file]) if git else {}
        head = git.head() if git else None
        kept: dict[int, tuple[CitationCheck, ...]] = {}
        for n, item in enumerate(found):
            row = rows.get(item.file) if item is not None and item.file else None
            if item is None or row is None or row.blob != item.blob or row.head not in (None, head):
                continue
            try:
                checked = row.checked
            except ValueError:
                continue  # damaged: judged again and rewritten
            if checked is not None and checked["fp"] == self._fingerprint(head, checked["paths"]):
                kept[n] = _decoded(checked["c"], item.mentions)
        todo = [None if n in kept else item for n, item in enumerate(found)]
        if not any(item is not None and item.mentions for item in todo):
            return [kept.get(n, ()) for n in range(len(found))]  # nothing changed since
        self._history = GitHistory(git) if git is not None else None
        try:
            fresh: dict[str, Cached] = {}
            thens: dict[str, dict[str, Then]] = {}
            if git is not None and self._history is not None:
                reader = HistoryReader(git, self._history)
                pending = [f for f in todo if f is not None and f.mentions]
                thens, fresh = reader.read(pending, rows, head)
            judged = self._judge(todo, thens)
        finally:
            if self._history is not None:
                self._history.close()
            self._history = None
        self._remember(cache, todo, judged, rows, fresh, head)
        return [kept.get(n, judged[n]) for n in range(len(found))]

    def _remember(
        self,
        cache: MentionCache,
        todo: list[Written | None],
        judged: list[tuple[CitationCheck, ...]],
        rows: dict[str, Cached],
        fresh: dict[str, Cached],
        head: str | None,
    ) -> None:
        """Keep what history said and the verdicts given, with their fingerprint."""
        out = dict(fresh)
        for item, checks in zip(todo, judged, strict=True):
            if item is None or not item.file or not checks:
                continue
            row = fresh.get(item.file) or rows.get(item.file)
            if row is None or not still_true(row, item.blob, head):
                continue  # no history for it (untracked): nothing worth keeping
            paths = named_paths(checks)
            checked = {
                "fp": self._fingerprint(head, paths),
                "paths": paths,
                "c": [encode_check(c) for c in checks],
            }
            out[item.file] = row.with_checked(checked)
        cache.save(out)

    def _fingerprint(self, head: str | None, paths: list[str]) -> str:
        git_dir = self.git.toplevel / ".git" if self.git is not None else None
        if git_dir is not None and not git_dir.is_dir():
            git_dir = None
        return fingerprint(head, git_dir, self.repo.root, paths)

    # -- reading the mentions -------------------------------------------------------

    def _read_all(self, memories: list[Memory]) -> list[Written | None]:
        """Each memory's mentions; a file that held none when last read, and has the same
        size and modification time now, is not read again."""
        free = MentionFree(self.state)
        known = free.load()
        quiet: dict[str, tuple[int, int]] = {}
        noisy: list[str] = []
        found: list[Written | None] = []
        for memory in memories:
            name = memory.path + ".md"
            try:
                seen = os.lstat(os.path.join(self._root, name))
            except OSError:
                found.append(None)
                continue
            stamp = (seen.st_size, seen.st_mtime_ns)
            if known.get(name) == stamp and not stat.S_ISLNK(seen.st_mode):
                found.append(None)
                continue
            data = self._bytes(memory.path)
            item = self._read(memory, data) if data is not None else None
            found.append(item)
            if data is not None and (item is None or not item.mentions):
                quiet[name] = stamp
            elif name in known:
                noisy.append(name)
        free.save(quiet, noisy)
        return found

    def _read(self, memory: Memory, data: bytes) -> Written | None:
        """The memory's mentions, read from its file as it is on disk (frontmatter
        included: `sources: [x.py:12]` is a mention the content alone would not show)."""
        if not may_mention(data):
            return None
        text = data.decode("utf-8", "replace").removeprefix("\ufeff")  # as edits see it
        found = find_mentions(text)
        if not found:
            return None
        declared = {c.ref for c in memory.meta.citations}
        mentions = [m for m in found if m.ref_text not in declared]
        file = os.path.abspath(self.store.root / (memory.path + ".md"))
        folder = os.path.relpath(os.path.dirname(file), self.repo.root).replace(os.sep, "/")
        folder = "" if folder == "." or folder.startswith("..") else folder
        inside = ""
        if self.git is not None:
            rel = os.path.relpath(file, self.git.toplevel)
            inside = "" if rel.startswith("..") else rel.replace(os.sep, "/")
        count = text.count("\n") + (not text.endswith("\n") and bool(text))
        return Written(memory, mentions, inside, folder, blob_hash(data), count)

    def _bytes(self, path: str) -> bytes | None:
        """A memory file's bytes, None when it cannot be read now (the index reports it).

        Every memory of the store is read on every run, so a plain file from the
        store's own scan is read directly; a symlink takes the store's full check
        (it must not lead out of the store)."""
        file = os.path.join(self._root, path + ".md")
        if os.path.islink(file):
            try:
                return self.store.read_bytes(path)[0]
            except MemoryToolError:
                return None
        try:
            with open(file, "rb") as handle:
                return handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return None

    @functools.cached_property
    def _root(self) -> str:
        return str(self.store.root)

    # -- history --------------------------------------------------------------------

    # -- verdicts -------------------------------------------------------------------

    def _judge(
        self, found: list[Written | None], thens: dict[str, dict[str, Then]]
    ) -> list[tuple[CitationCheck, ...]]:
        """Decide what needs no diff at once; verify the rest together, as citations at
        their commits (so the Verifier asks git one diff per commit, not per mention)."""
        origin = None
        if self._history is not None and any(
            m.form == URL for f in found if f is not None for m in f.mentions
        ):
            origin = remote_repository(self._history.origin() or "")
        drafts: list[list[CitationCheck | _Ask]] = []
        for item in found:
            row: list[CitationCheck | _Ask] = []
            for mention in item.mentions if item is not None else ():
                assert item is not None
                into = (mention.repository or "").lower()
                if mention.form == URL and (origin is None or into != origin):
                    row.append(_other_repository(mention, origin))
                    continue
                then = thens.get(item.file, {}).get(key(mention)) if item.file else None
                row.append(self._decide(mention, then, item.folder))
            drafts.append(row)
        asked = [
            Memory(str(n), "", MemoryMeta(citations=tuple(d.citation for d in row if _asks(d))))
            for n, row in enumerate(drafts)
        ]
        git = self._git_for([d for row in drafts for d in row if _asks(d)])
        verifier = Verifier(self.repo, git)
        answers = iter(r.checks for r in verifier.verify_memories(asked))
        judged = []
        for row in drafts:
            checks = iter(next(answers))
            judged.append(
                [d if isinstance(d, CitationCheck) else d.explain(next(checks)) for d in row]
            )
        self._by_line_maps(git, drafts, judged)
        return [tuple(row) for row in judged]

    def _git_for(self, asks: list[_Ask]) -> Git | None:
        """A Git of the mentions' own, whose map of renames comes from git's diff from
        each mention's commit to HEAD, for the files gone from the work tree.

        The Verifier reads renames from the whole history (`git log -M`, one call
        that costs more than the rest of a mention run together, and fails outright
        on a clone that lacks some objects); a mention needs only what became of its
        file since its own commit, which the direct diff says (and sees renames done
        across several commits, which no single commit of the log shows).
        """
        if self.git is None:
            return None
        git = Git(self.git.toplevel, self.git.prefix)
        gone: dict[str, set[str]] = {}
        for ask in asks:
            target = ask.citation.target
            if ask.citation.commit and not self._exists(target):
                gone.setdefault(ask.citation.commit, set()).add(target)
        renames: dict[str, str] = {}
        names = self._files_now() if gone else FileList(())
        for commit, paths in sorted(gone.items()):
            # Rename detection over the whole tree compares every file added with every
            # file deleted since the commit (a third of a second each on a busy
            # repository). Exact renames are found by hash at once; renames with edits
            # are looked for among files whose name starts like the old one's
            # (`x.py` -> `pkg/x.py`, `x_example.py`, `x.py.bak`).
            offered = {p for path in paths for p in names.named_like(_stem(path))}
            calls = [["-M100%", *_RENAMES, commit, "HEAD"]]
            if offered:
                spec = [_to_git(git, p) for p in sorted(paths | offered)]
                calls.append(["-M", *_RENAMES, commit, "HEAD", "--", *spec])
            for args in calls:
                try:
                    out = git.run("diff", *args)
                except GitError:
                    continue
                fields = out.split("\0")
                for i in range(len(fields) - 2):
                    if fields[i].startswith("R"):
                        old, new = _from_git(git, fields[i + 1]), _from_git(git, fields[i + 2])
                        if old and new:
                            renames.setdefault(old, new)
        git.__dict__["renames"] = renames  # seeds the cached property (see Git.renames)
        return git

    def _exists(self, path: str) -> bool:
        return self.repo.read(path).status is not SourceStatus.MISSING

    def _by_line_maps(
        self,
        git: Git | None,
        drafts: list[list[CitationCheck | _Ask]],
        judged: list[list[CitationCheck]],
    ) -> None:
        """Where a snippet cannot tell, git's diff from the mention's commit does.

        A blank cited line has no text to look for, so the Verifier can only say
        the line exists; a range with lines inserted inside it no longer holds its
        snippet in one piece, though none of its lines changed; and a moved range
        whose first line is blank is found where its text starts. For these the
        diff says where each cited line went: all kept is valid or moved (a grown
        range ends further down). A changed or deleted line leaves the Verifier's
        verdict on a range (a block moved elsewhere is found by its text, not by
        the diff) and makes a blank line stale.
        """
        if git is None:
            return
        wanted: list[tuple[int, int, _Ask]] = []
        for r, row in enumerate(drafts):
            for n, draft in enumerate(row):
                if not _asks(draft):
                    continue
                check = judged[r][n]
                blank = not "".join((draft.then.text or "").split())
                ranged = draft.citation.end_line is not None
                grown = ranged and check.status in (Verdict.STALE, Verdict.MOVED)
                if (blank or grown) and check.status is not Verdict.MISSING:
                    wanted.append((r, n, draft))
        by_commit: dict[str, set[str]] = {}
        for _, _, draft in wanted:
            by_commit.setdefault(draft.citation.commit or "", set()).add(draft.citation.target)
        maps = {c: git.line_maps(c, paths) for c, paths in by_commit.items() if c}
        for r, n, draft in wanted:
            citation = draft.citation
            line_map = maps.get(citation.commit or "", {}).get(citation.target)
            decided = _followed(judged[r][n], citation, line_map, self.repo)
            if decided is not None:
                judged[r][n] = decided

    def _decide(self, mention: Mention, then: Then | None, folder: str) -> CitationCheck | _Ask:
        """A verdict from history alone, or the citation to verify."""
        if then is None:
            return self._line_count(mention, folder, committed=False)
        commit = then.commit
        if then.kind == UNCOMMITTED or commit is None:
            return self._line_count(mention, folder, committed=True)
        start, end = span(mention)
        plain = Citation(mention.path, start, _end(start, end))
        when = f"when the memory line was written ({commit[:7]})"
        if then.kind == OUTSIDE:
            return _check(mention, plain, Verdict.MISSING, "the path leaves the repository", commit)
        if then.kind == SUBMODULE:
            return _submodule(mention, plain, then.path or "", self.repo, commit)
        if then.kind == AMBIGUOUS:
            return _ambiguous(mention, plain, then.candidates, commit)
        cited = replace(plain, target=then.path or mention.path)
        if then.kind == PAST_END:
            reason = (
                f"line {end} was already past the end of {then.path} ({then.lines} lines) "
                f"{when}: wrong when written"
            )
            return _check(mention, cited, Verdict.OUT_OF_RANGE, reason, commit)
        if then.kind == UNREADABLE:
            return _check(mention, cited, Verdict.INVALID, f"not a text file {when}", commit)
        if then.kind == ABSENT:
            return self._added_later(mention, plain, commit, folder)
        return _Ask(mention, then, replace(cited, snippet=then.text, commit=commit))

    def _added_later(
        self, mention: Mention, plain: Citation, commit: str, folder: str
    ) -> CitationCheck | _Ask:
        """No such file when the memory line was written: if one exists now, the code was
        committed after the memory, so it is read at the commit that added it."""
        history = self._history
        now = self._files_now().resolve(mention.path, folder)
        if now.candidates:
            return _ambiguous(mention, plain, now.candidates, commit)
        start, end = span(mention)
        if now.path is not None and history is not None:
            added = history.added_after(commit, now.path)
            lines = history.read(added, now.path) if added else None
            if added and lines is not None:
                cited = replace(plain, target=now.path)
                if end > len(lines):
                    reason = (
                        f"line {end} was past the end of {now.path} ({len(lines)} lines) when "
                        f"it was added ({added[:7]}), after the memory line ({commit[:7]})"
                    )
                    return _check(mention, cited, Verdict.OUT_OF_RANGE, reason, commit)
                text = "\n".join(lines[start - 1 : end])
                then = Then(added, TEXT, now.path, text, len(lines))
                prefix = f"file added after the memory line ({added[:7]}); "
                return _Ask(mention, then, replace(cited, snippet=text, commit=added), prefix)
        reason = (
            f"no file {mention.path} in the repository, now or when the memory line was "
            f"written ({commit[:7]})"
        )
        return _check(mention, plain, Verdict.MISSING, reason, commit)

    def _line_count(self, mention: Mention, folder: str, *, committed: bool) -> CitationCheck:
        """Without history, or for a memory line not committed yet: does the file have
        those lines now. Without history that is all it says (`unchecked`); a line not
        committed yet describes the work tree as it is, so it is `valid`."""
        start, end = span(mention)
        plain = Citation(mention.path, start, _end(start, end))
        where = self._files_now().resolve(mention.path, folder)
        if not (where.found or where.candidates or where.outside or where.submodule):
            path = normalize(mention.path, folder)
            if path is not None and self.repo.read(path).is_text:
                where = Resolution(path)  # untracked, or no git to list the files
        if where.outside:
            return _check(mention, plain, Verdict.MISSING, "the path leaves the repository")
        if where.submodule is not None:
            return _submodule(mention, plain, where.submodule, self.repo, None)
        if where.candidates:
            return _ambiguous(mention, plain, where.candidates, None)
        if where.path is None:
            return _check(mention, plain, Verdict.MISSING, f"{mention.path} not found")
        cited = replace(plain, target=where.path)
        source = self.repo.read(where.path)
        if not source.is_text:
            return _check(mention, cited, Verdict.INVALID, source.reason)
        if end > len(source.lines):
            reason = f"line {end} is past the end of {where.path} ({len(source.lines)} lines)"
            if committed:
                reason += " (memory line not committed yet)"
            return _check(mention, cited, Verdict.OUT_OF_RANGE, reason)
        if committed:
            reason = "memory line not committed yet: checked against the work tree as written"
            return _check(mention, cited, Verdict.VALID, reason, current=where.path)
        reason = "no history (memory file not tracked by git): only the line count was checked"
        return _check(mention, cited, Verdict.UNCHECKED, reason, current=where.path)

    def _files_now(self) -> FileList:
        """The repository's files now: git's list, or a walk of the folder without git."""
        if self._listed is None:
            if self._history is not None:
                self._listed = self._history.files_now()
            elif self.git is not None:
                self._listed = GitHistory(self.git).files_now()  # no process left to close
            else:
                self._listed = FileList(_walk(self.repo.root))
        return self._listed


@dataclass(frozen=True)
class _Ask:
    """A mention to be verified as a citation at its commit, and how to tell the answer."""

    mention: Mention
    then: Then
    citation: Citation
    prefix: str = ""

    def explain(self, check: CitationCheck) -> CitationCheck:
        """The Verifier's verdict told as a mention's: when it was written, and what the
        line said then next to what it says now."""
        reason = check.reason
        commit = (self.citation.commit or "")[:7]
        if check.status is Verdict.STALE and self.then.text is not None:
            first = self.then.text.split("\n", 1)[0].strip()
            reason += f"; when written ({commit}) it read `{_short(first)}`"
        elif check.status is Verdict.MISSING and check.renamed_to is not None:
            # The file lives on under another name without the cited text: the
            # mention is stale, not missing (its file is there to read).
            check = replace(check, status=Verdict.STALE, current_path=check.renamed_to)
        elif check.status is Verdict.MISSING:
            reason = (
                f"{self.citation.target} was deleted after the memory line was written ({commit})"
            )
        elif check.status is Verdict.VALID and not reason:
            reason = f"unchanged since the memory line was written ({commit})"
        return replace(
            check, reason=self.prefix + reason, mention=self.mention, written_in=self.then.commit
        )


def _check(
    mention: Mention,
    citation: Citation,
    status: Verdict,
    reason: str,
    commit: str | None = None,
    candidates: tuple[str, ...] = (),
    current: str | None = None,
) -> CitationCheck:
    line = citation.line if current else None
    return CitationCheck(
        citation, status, current, line, reason, None, mention, commit, tuple(candidates)
    )


def _followed(
    check: CitationCheck, citation: Citation, line_map: LineMap | None, repo: Repository
) -> CitationCheck | None:
    """The verdict git's line map gives a mention (see `_by_line_maps`); None to keep
    the Verifier's. No map for a tracked file means it did not change since."""
    start = citation.line or 1
    end = citation.end_line or start
    path = line_map.new_path if line_map is not None else citation.target
    if not repo.read(path).is_text:
        return None
    now = [line_map.forward(n) if line_map is not None else n for n in range(start, end + 1)]
    renamed = path if path != citation.target else None
    since = (citation.commit or "")[:7]
    if any(n is None for n in now):
        blank = not "".join((citation.snippet or "").split())
        if not blank:
            return None
        gone = next(n for n, at in zip(range(start, end + 1), now, strict=True) if at is None)
        reason = f"line {gone} (blank when written) changed or was deleted since {since}"
        return replace(check, status=Verdict.STALE, current_path=path, current_line=None,
                       reason=reason, renamed_to=renamed, current_end=None)  # fmt: skip
    first, last = now[0], now[-1]
    assert first is not None and last is not None
    if first == start and last == end and renamed is None:
        reason = f"unchanged since the memory line was written ({since})"
        return replace(check, status=Verdict.VALID, current_path=path, current_line=start,
                       reason=reason, current_end=None)  # fmt: skip
    grew = citation.end_line is not None and last - first != end - start
    reason = f"found at line {first} (was {start})" + (
        f"; lines were inserted inside the range, which now ends at {last}" if grew else ""
    )
    if renamed:
        reason = f"renamed to {renamed}; " + reason
    return replace(check, status=Verdict.MOVED, current_path=path, current_line=first,
                   reason=reason, renamed_to=renamed,
                   current_end=last if citation.end_line is not None else None)  # fmt: skip


def _decoded(rows: list[Any], mentions: list[Mention]) -> tuple[CitationCheck, ...]:
    return tuple(decode_check(row, m) for row, m in zip(rows, mentions, strict=True))


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0] or name


def _asks(draft: CitationCheck | _Ask) -> TypeGuard[_Ask]:
    return isinstance(draft, _Ask)


def _ambiguous(
    mention: Mention, citation: Citation, candidates: tuple[str, ...], commit: str | None
) -> CitationCheck:
    names = ", ".join(candidates[:5]) + (" …" if len(candidates) > 5 else "")
    reason = f"{mention.path} names {len(candidates)} files: {names}"
    return _check(mention, citation, Verdict.AMBIGUOUS, reason, commit, candidates)


def _submodule(
    mention: Mention, citation: Citation, link: str, repo: Repository, commit: str | None
) -> CitationCheck:
    folder = repo.resolve(link)
    checked_out = folder is not None and folder.is_dir() and any(folder.iterdir())
    state = "its history is its own" if checked_out else "not checked out"
    reason = f"in submodule {link} ({state})"
    return _check(mention, citation, Verdict.IN_SUBMODULE, reason, commit)


def _other_repository(mention: Mention, origin: str | None) -> CitationCheck:
    start, end = span(mention)
    citation = Citation(mention.path, start, _end(start, end))
    if origin is None:
        reason = f"a link into {mention.repository}; no origin remote to tell if it is this one"
    else:
        reason = f"a link into another repository ({mention.repository})"
    return _check(mention, citation, Verdict.SKIPPED, reason)


def _end(start: int, end: int) -> int | None:
    return end if end != start else None


def _short(text: str, limit: int = 80) -> str:
    text = text.replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _walk(root: os.PathLike[str] | str) -> Iterator[str]:
    """The files under a folder that is not a git repository (hidden folders skipped)."""
    count = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        for name in names:
            yield name if rel == "." else f"{rel}/{name}"
            count += 1
            if count >= MAX_WALKED_FILES:
                return
