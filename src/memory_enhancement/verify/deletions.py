"""When git deleted the files some mention verdicts say are gone: one `git log` a run.

A `missing` mention (the file was there when the memory line was written, not now) named
only the memory line's commit; a reader then had to find the commit that deleted the file
themselves. A file mention skipped because no file had its path then or now listed every
reason it might be so ("removed before, to be created, an example") even when git knew
the file had been deleted before the memory line was written. Both are told here from
the deletions along HEAD's first-parent line (a file deleted on a branch is deleted by
the merge that brought the branch in, as that line sees it).

One `git log --first-parent --diff-filter=D` for every such path of the run, over the
whole tree: git limits a log to paths by comparing every entry of every folder it opens
with each path given, and for rjmurillo/ai-agents' 161 paths that cost 7 s of CPU
against 0.44 s for the whole tree's deletions (10.4G instructions limited to their 21
top folders, 2.40G for the whole tree), read from the oldest commit the run needs
(the whole history when a deletion before a memory line is asked). When the run's
folder walk printed the root trees of the line, the same diffs are read from each
commit's raw diff with its first parent (first_parent_diffs.LineDiffs, read once a run and
shared with other readers), and the deleting commits' dates and parents of one `git
log --no-walk`. The deletions are the same: the answer has to name the last deletion
of a path deleted, re-created and deleted again, so every commit's diff is read (a
bisection of the path's presence would find *a* deletion, and git has no cheaper way
to list a path's changes than to diff the folders holding it). It runs only on a run
that judges such a verdict: the reasons are kept with the verdicts (mention_cache.py),
so a rerun asks git nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from memory_enhancement.core.file_list import FileList, normalize
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.verify import file_checks, first_parent_diffs
from memory_enhancement.verify.file_checks import NOT_THEN
from memory_enhancement.verify.folder_checks import NONE_NOW
from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import from_git, run_git
from memory_enhancement.verify.mention_checks import FOREIGN, ignored
from memory_enhancement.verify.mention_history import Ask
from memory_enhancement.verify.mention_reading import Written
from memory_enhancement.verify.mention_renames import named_now
from memory_enhancement.verify.repo import Repository

if TYPE_CHECKING:
    from memory_enhancement.core.model import Memory
    from memory_enhancement.verify.mention_maps import MentionGit
    from memory_enhancement.verify.verifier import Verifier


@dataclass(frozen=True)
class Deleted:
    """A commit of HEAD's first-parent line that deleted a path."""

    commit: str
    date: str  # the commit's date, YYYY-MM-DD
    at: int  # its place on the line, oldest first (`Git.first_parents`)
    merge: bool = False  # a merge, deleting what its branch deleted

    def __str__(self) -> str:
        return f"{'merge ' if self.merge else ''}{self.commit[:7]}, {self.date}"


@dataclass
class Deletions:
    """The deletions of the paths a run asked about, and where commits lie on the line."""

    found: Mapping[str, list[Deleted]]  # per path, newest first
    order: Mapping[str, int]  # first-parent commits, oldest first

    def after(self, path: str, commit: str) -> Deleted | None:
        """The commit that deleted a file there at `commit` and gone now: the last deletion
        of its path (the file was there at `commit`, so that one came after it); on the
        line, one after `commit` is asked for, else none is told."""
        found = self.found.get(path, [])
        at = self.order.get(commit)
        if at is not None:
            found = [d for d in found if d.at > at]
        return found[0] if found else None

    def before(self, path: str, commit: str) -> Deleted | None:
        """The last deletion of a path before `commit` (None when `commit` is off the
        first-parent line: which came first cannot be told from the line)."""
        at = self.order.get(commit)
        if at is None:
            return None
        return next((d for d in self.found.get(path, []) if d.at < at), None)

    def since(self, path: str, commit: str) -> Deleted | None:
        """The last deletion of a path after `commit` on the line (a file created after the
        memory line was written and deleted since)."""
        at = self.order.get(commit)
        if at is None:
            return None
        return next((d for d in self.found.get(path, []) if d.at > at), None)


def deletions(
    git: Git | None, after: Iterable[tuple[str, str]], before: Iterable[str]
) -> Deletions:
    """The deletions of the paths of `after` ((path, commit): deleted since that commit)
    and of `before` (deleted at any time), from one `git log` of HEAD's first-parent line
    (from the oldest commit of `after` when nothing is asked of `before`); none without
    git or a path to ask about."""
    asked = list(after)
    everywhere = set(before)
    wanted = _Wanted({path for path, _ in asked} | everywhere)
    if git is None or not wanted:
        return Deletions({}, {})
    shas = git.first_parents()
    order = {sha: n for n, sha in enumerate(shas)}
    places = [order.get(commit) for _, commit in asked]
    since = []
    if not everywhere and all(place is not None for place in places):
        since = [f"^{shas[min(p for p in places if p is not None)]}"]
    if shas:
        start = order[since[0][1:]] + 1 if since else 1
        found = _from_trees(git, shas, start, wanted)
        if found is not None:
            return Deletions(found, order)
    try:
        out = run_git(
            git, "log", "--first-parent", "--no-renames", "--diff-filter=D",
            "--format=%x01%H %cs %P", "-z", "--name-only", "HEAD", *since,
        )  # fmt: skip
    except GitError:
        return Deletions({}, order)
    return Deletions(_read(git, out, wanted, order), order)


class _Wanted:
    """The paths a run asks about: a file by its path, a folder (`x/`) by every file under
    it, so that a folder's deletions are those of its files (the last one: when it went)."""

    def __init__(self, paths: set[str]) -> None:
        self.files = {path for path in paths if not path.endswith("/")}
        self.folders = tuple(sorted(path for path in paths if path.endswith("/")))  # one startswith

    def __bool__(self) -> bool:
        return bool(self.files or self.folders)

    def __contains__(self, path: object) -> bool:
        return path in self.files or str(path).startswith(self.folders)

    def told(self, found: dict[str, list[Deleted]], path: str, deleted: Deleted) -> None:
        """`deleted` (newer ones first) told of `path` and of each folder asked holding it."""
        keys = [path] if path in self.files else []
        for key in keys + [f for f in self.folders if path.startswith(f)]:
            known = found.setdefault(key, [])
            if not known or known[-1].commit != deleted.commit:  # a folder's many files
                known.append(deleted)


def _from_trees(
    git: Git, shas: Sequence[str], start: int, wanted: _Wanted
) -> dict[str, list[Deleted]] | None:
    """What `_read` reads from the log, from the root trees the run's walk printed
    (first_parent_diffs.py): the commits from `start` on, each diffed with its first
    parent (None: git's answer could not be read, the log is asked)."""
    found = first_parent_diffs.changed(git, start, len(shas), deleted=True, keep=wanted)
    if found is None:
        return None
    hits = found[::-1]
    told = first_parent_diffs.described(git, (shas[place] for place, _ in hits))
    if told is None:
        return None
    deleted: dict[str, list[Deleted]] = {}
    for place, path in hits:  # newest first, as the log lists them
        date, parents = told[shas[place]]
        wanted.told(deleted, path, Deleted(shas[place], date, place, parents > 1))
    return deleted


def _read(
    git: Git, out: str, wanted: _Wanted, order: Mapping[str, int]
) -> dict[str, list[Deleted]]:
    """Per wanted path, its deletions in the log's `-z` output, newest first."""
    found: dict[str, list[Deleted]] = {}
    current: Deleted | None = None
    for field in out.split("\0"):
        field = field.lstrip("\n")
        if field.startswith("\x01"):
            sha, date, *parents = field[1:].split(" ")
            at = order.get(sha)
            current = Deleted(sha, date, at, len(parents) > 1) if at is not None else None
            continue
        if current is None or not field:
            continue
        path = from_git(git, field) if git.prefix else field
        if path is not None and path in wanted:
            wanted.told(found, path, current)
    return found


def told(
    git: Git | None,
    drafts: Sequence[Sequence[CitationCheck | Ask]],
    answers: Mapping[int, Sequence[CitationCheck]],
    known: tuple[Deletions, list[str]],
    files_now: Callable[[], FileList],
    repo: Repository,
) -> list[list[CitationCheck]]:
    """Every draft of a run told as its verdict (MentionJudge): the Verifier's answer to
    each Ask explained (with the deleting commit, whether git still lists the file, and
    where its code may live now), each skipped check retold with what git knows (`known`:
    what `read` gave), and a file no commit had that git ignores told a local one."""
    pointer = partial(file_checks.pointer, files_now, repo)  # for `missing`
    listed = partial(file_checks.listed, files_now) if git is not None else None
    gone, folders = known
    judged: list[list[CitationCheck]] = []
    for n, row in enumerate(drafts):
        checks = iter(answers.get(n, ()))
        judged.append(
            [
                retold(d, folders[n], gone)
                if isinstance(d, CitationCheck)
                else d.explain(next(checks), pointer, gone.after, listed)
                for d in row
            ]
        )
    ignored(git, judged, folders)  # a file no commit had that git ignores: a local one
    return judged


def read(
    git: Git | None,
    drafts: Sequence[Sequence[CitationCheck | Ask]],
    answers: Mapping[int, Sequence[CitationCheck]],
    found: Sequence[Written | None],
    listed: FileList,
) -> tuple[Deletions, list[str]]:
    """The deletions a run's verdicts ask about (MentionJudge: `drafts` per memory of
    `found`, the Verifier's `answers` per row; `listed`: git's index), and each memory
    file's folder (for `retold`)."""
    folders = [item.folder if item is not None else "" for item in found]
    return deletions(git, *asked(drafts, answers, folders, listed)), folders


def renamed_answers(
    git: MentionGit | None,
    verifier: Verifier,
    drafts: Sequence[Sequence[CitationCheck | Ask]],
    asked: Sequence[Memory],
    answers: dict[int, tuple[CitationCheck, ...]],
    known: Deletions,
    listed: FileList,
    run: Git | None = None,
) -> dict[int, tuple[CitationCheck, ...]]:
    """The Verifier's answers (per row of `drafts` it was asked about, in the order of
    `asked`, their memories), those on files it found missing asked again where the
    commit deleting the file renamed it into one git lists now (`renamed_by`, asked of
    the `run`'s Git: its line's diffs, the renames it learned): `moved` with the
    rename, wherever the lines went, instead of deleted in that commit."""
    rows = list(answers)
    after = [
        (d.citation.target, d.citation.commit)
        for n in rows
        for d, c in zip((d for d in drafts[n] if isinstance(d, Ask)), answers[n], strict=True)
        if c.status is Verdict.MISSING and c.renamed_to is None and d.citation.commit
    ]
    found = renamed_by(run or git, known, after, listed.files.__contains__) if git and after else {}
    if git is None or not found:
        return answers
    git.also_renamed(found)
    again = [
        i for i, n in enumerate(rows)
        if any(isinstance(d, Ask) and d.citation.target in found for d in drafts[n])
    ]  # fmt: skip
    redone = verifier.verify_memories([asked[i] for i in again])
    return {**answers, **{rows[i]: r.checks for i, r in zip(again, redone, strict=True)}}


def renamed_by(
    git: Git, known: Deletions, after: Iterable[tuple[str, str]], present: Callable[[str], bool]
) -> dict[str, str]:
    """old -> new for the files called missing since a commit (`after`: (path, commit))
    that the commit deleting them renamed into a file there now (`present`), or into one
    renamed on since into a file there now (`named_now`): that commit's own diff pairs
    them where the diff from the mention's commit to HEAD did not. A file edited, then
    renamed by `git mv` (the diff from an old commit asks for renames only among files
    named like it), or renamed with edits to a name unlike its own (1morr/FMP, 67% alike)
    was told `deleted in` the commit that renamed it. One `git diff-tree` for them all."""
    shas = {n: sha for sha, n in known.order.items()}
    wanted: dict[str, set[str]] = {}  # deleting commit -> the gone paths it deleted
    merge: dict[str, bool] = {}
    for path, commit in after:
        by = known.after(path, commit)
        if by is not None and by.at - 1 in shas:
            wanted.setdefault(by.commit, set()).add(path)
            merge[by.commit] = by.merge
    if not wanted:
        return {}
    # A commit whose `git diff-tree -M` (a merge's: nothing) the run has (line_origins.py)
    # is not asked again; one the line's diffs show adding nothing renamed nothing.
    said, diffs = git.renamed, first_parent_diffs.line_diffs(git)
    ask = [
        sha for sha in sorted(wanted)
        if (merge[sha] or sha not in said)
        and not (diffs is not None and diffs.adds_none(known.order[sha]))
    ]  # fmt: skip
    lines = "".join(f"{sha} {shas[known.order[sha] - 1]}\n" for sha in ask)
    try:
        out = run_git(
            git, "diff-tree", "--stdin", "-r", "-M", "--name-status", "-z", "--diff-filter=R",
            stdin=lines,
        ) if lines else ""  # fmt: skip
    except GitError:
        return {}
    pairs: dict[str, list[tuple[str, str]]] = {}
    at, fields, i = "", out.split("\0"), 0
    while i < len(fields):
        field = fields[i].lstrip("\n")
        if field in wanted:
            at = field
        elif field[:1] == "R" and i + 2 < len(fields):
            pairs.setdefault(at, []).append((fields[i + 1], fields[i + 2]))
            i += 2
        i += 1
    found: dict[str, str] = {}
    for sha in sorted(wanted):
        for was, now, *_ in pairs.get(sha, []) if sha in ask or sha not in said else said[sha]:
            old, new = from_git(git, was), from_git(git, now)
            if old and new and old in wanted[sha] and (new := named_now(git, new, sha, present)):
                found[old] = new
    return found


def asked(
    drafts: Sequence[Sequence[CitationCheck | Ask]],
    answers: Mapping[int, Sequence[CitationCheck]],
    folders: Sequence[str],
    listed: FileList,
) -> tuple[list[tuple[str, str]], set[str]]:
    """What a run's verdicts ask of the deletions: (path, commit) of each file the
    Verifier says is missing since a mention's commit (no rename found; not one git's
    index still lists, deleted and not committed: no commit deleted it), and the paths
    of the mentions skipped as no file then nor now (`retold`)."""
    after: list[tuple[str, str]] = []
    before: set[str] = set()
    for n, row in enumerate(drafts):
        checks = iter(answers.get(n, ()))
        for draft in row:
            if isinstance(draft, CitationCheck):
                path = _unsure(draft, folders[n])
                if path is not None:
                    before.add(path)
                elif (gone := _gone_folder(draft)) is not None:
                    after.append(gone)
                continue
            check = next(checks)
            missing = check.status is Verdict.MISSING and check.renamed_to is None
            if missing and draft.citation.commit and draft.citation.target not in listed.files:
                after.append((draft.citation.target, draft.citation.commit))
    return after, before


def retold(check: CitationCheck, folder: str, known: Deletions) -> CitationCheck:
    """A skipped mention's reason narrowed to what git knows of its path: deleted before
    the memory line was written, or created after it and deleted since; a folder gone
    since its mention told when the last of its files went."""
    if (gone := _gone_folder(check)) is not None:
        by = known.after(*gone)
        told = f"{NONE_NOW} (the last of them gone in {by})"
        return (
            check if by is None else replace(check, reason=check.reason.replace(NONE_NOW, told, 1))
        )
    path = _unsure(check, folder)
    if path is None or check.written_in is None:
        return check
    commit = check.written_in
    by = known.before(path, commit)
    if by is not None:
        told = f"deleted before it was written, in {by}"
    elif (by := known.since(path, commit)) is not None:
        told = f"created after it was written and deleted in {by}"
    else:
        return check
    reason = check.reason.replace(NOT_THEN, told, 1).replace(FOREIGN, f"a file {told}", 1)
    return replace(check, reason=reason)


def _gone_folder(check: CitationCheck) -> tuple[str, str] | None:
    """(`x/`, the memory line's commit) of a folder mention missing since it was written:
    files were under it then, none now (folder_checks.py); None for any other verdict."""
    if check.status is not Verdict.MISSING or check.written_in is None:
        return None
    return (check.citation.target + "/", check.written_in) if NONE_NOW in check.reason else None


def _unsure(check: CitationCheck, folder: str) -> str | None:
    """The path of a mention skipped as no file then nor now, as git names it from the
    repository root; None for any other verdict."""
    if check.status is not Verdict.SKIPPED or check.written_in is None:
        return None
    if NOT_THEN not in check.reason and FOREIGN not in check.reason:
        return None
    return normalize(check.citation.target, folder)
