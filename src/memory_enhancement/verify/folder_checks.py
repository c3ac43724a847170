"""Verdicts on folder mentions (`src/api/handlers/`): is the folder still there.

A folder mention claims only that the repository has that folder (core/folder_mentions.py),
and git knows a folder by the files it tracks under it. So, as for a file mention
(file_checks.py), the repository now settles most of them without history: a folder
holding tracked files at that path from the root is `valid`. Only the others need what
the folder was when the memory line was written (mention_history.py, from the commit's
list of files, which the run lists once per commit):

- it held files then and holds none now: where git's rename pairs since that commit took
  most of them (more than half) is the folder it became (`moved`, `renamed_to` it;
  `--fix` rewrites the path), else `missing`, saying how many files it held and where
  some of them went. A folder the work tree still has though git tracks nothing in it
  now (its files untracked or ignored since) is `valid`, said so: the folder is there;
  one git lists and the work tree has not (deleted, not committed yet) is `missing`, as
  a file mention's verdict reads the work tree;
- a partial path naming several folders then is read as the one under the folder its
  section's heading names (mention_context.py; the reason says so), else:
- no such folder then: one that holds files now (added since; a partial path now ending
  one folder) is `valid`; several it may name, then or now, `ambiguous`; one the work
  tree has that git does not track (`dist/`, `.venv/`, ignored) `valid`, said so; else
  `skipped`: memories name folders to be created, example layouts and other projects'
  folders, and none of them is a claim that rotted;
- no history (a memory file git does not track): the work tree alone. A folder there is
  `valid`; one that is not is `unchecked`.

A submodule is `valid` (the folder is there; git lists no file under it), a folder inside
one `in_submodule`, as a file there is.

The rename pairs come from one `git diff -M` from each commit asked about to HEAD, for
the folders that held files then and hold none now only (first runs; a rerun keeps the
verdicts), limited to the files such a folder held and the files now named like them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from memory_enhancement.core.file_list import FileList, normalize
from memory_enhancement.core.folder_mentions import FOLDER
from memory_enhancement.core.mentions import Mention
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.verify import file_checks
from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import run_git
from memory_enhancement.verify.mention_checks import check, submodule, unseen
from memory_enhancement.verify.mention_history import (
    AMBIGUOUS,
    OUTSIDE,
    SUBMODULE,
    TEXT,
    Then,
)
from memory_enhancement.verify.repo import Repository

if TYPE_CHECKING:
    from memory_enhancement.verify.blame import GitHistory

# A folder that never held a file of this repository, then or now.
NOT_A_FOLDER = "not a folder of this repository then (to be created, an example, another project's)"
# How a folder gone since its mention is told; deletions.py names the commit that deleted
# the last of its files after these words.
NONE_NOW = "git tracks none of them now"

# (old, new) pairs from a commit to HEAD among some paths
Renames = Callable[[str, list[str]], list[tuple[str, str]]]


def applies(mention: Mention) -> bool:
    """Whether a mention is a folder's (these verdicts), not a file's or a line's."""
    return mention.form == FOLDER


def settled(
    mention: Mention, folder: str, files_now: Callable[[], FileList], repo: Repository
) -> CitationCheck | None:
    """What the repository now says alone of a mention naming no line: a folder's
    (`settled_now`) or a file's (file_checks.settled_now)."""
    settle = settled_now if applies(mention) else file_checks.settled_now
    return settle(mention, folder, files_now, repo)


def settled_now(
    mention: Mention, folder: str, files_now: Callable[[], FileList], repo: Repository
) -> CitationCheck | None:
    """The verdict the repository now gives a folder mention alone: files tracked under
    that folder from the root (`valid`), or the folder lies in a submodule; None when what
    it named then must be asked (a partial path too: the folder it named may be gone, and
    another that ends the same way taken for it)."""
    path = normalize(mention.path, folder)
    if path is None:
        return None
    where = files_now().folder(path, mention.rooted)
    if where.submodule is not None:
        return _submodule(mention, path, where.submodule, repo, None)
    if where.path == path and repo.is_folder(path):  # git lists it, and it is there
        return _there(mention, path, "")
    return None


def decide(
    mention: Mention,
    then: Then | None,
    folder: str,
    files_now: Callable[[], FileList],
    repo: Repository,
    history: GitHistory | None = None,
    renames: Renames | None = None,
) -> CitationCheck:
    """The verdict on a folder mention settled_now did not settle, from what history says
    it named when its memory line was written (`then`; None: no history); `history` (the
    files at a commit) and `renames` ask git (once per commit) where a folder's files went."""
    path = normalize(mention.path, folder)
    plain = Citation(path or mention.path)
    commit = then.commit if then is not None else None
    if path is None or (then is not None and then.kind == OUTSIDE):
        return check(mention, plain, Verdict.SKIPPED, "the path leaves the repository", commit)
    if then is not None and then.kind == SUBMODULE:
        return _submodule(mention, path, then.path or "", repo, commit)
    if then is not None and then.kind == AMBIGUOUS:
        return _ambiguous(mention, plain, then.candidates, commit)
    if then is not None and then.kind == TEXT and then.path and commit is not None:
        listed_at = history.files_at if history is not None else None
        held = _held(mention, then.path, commit, files_now, repo, listed_at, renames)
        return replace(held, reason=then.note + held.reason) if then.note else held
    now = files_now().folder(path, mention.rooted)
    if now.path is not None and repo.is_folder(now.path):
        later = "" if then is None or commit is None else ", added after the memory line"
        return _there(mention, now.path, later, commit)
    if now.candidates:
        return _ambiguous(mention, plain, now.candidates, commit)
    if repo.is_folder(path):
        return _there(mention, path, " (in the work tree, not tracked by git)", commit)
    never = unseen(mention, plain, then, f"folder {path}/", "folder")
    if never is not None:
        return never
    assert commit is not None  # else unseen answered
    reason = (
        f"no folder {path}/ now nor when the memory line was written ({commit[:7]}): {NOT_A_FOLDER}"
    )
    return check(mention, plain, Verdict.SKIPPED, reason, commit)


def _held(
    mention: Mention,
    was: str,
    commit: str,
    files_now: Callable[[], FileList],
    repo: Repository,
    listed_at: Callable[[str], FileList] | None,
    renames: Renames | None,
) -> CitationCheck:
    """A folder that held files when the memory line was written (`was`): there now,
    renamed (where most of its files went), still in the work tree, or missing."""
    plain = Citation(was)
    now = files_now().folder(was)
    if now.submodule is not None:  # a submodule (or in one) then and now: no files listed
        return _submodule(mention, was, now.submodule, repo, commit)
    if now.path == was:
        if repo.is_folder(was):
            return _there(mention, was, "", commit)
        reason = f"git lists files under {was}/, the work tree none (deleted, not committed)"
        return check(mention, plain, Verdict.MISSING, reason, commit)
    sources = list(listed_at(commit).under(was + "/")) if listed_at is not None else []
    held = len(sources)
    went: Counter[str] = Counter()
    for old, new in renames(commit, _offered(sources, was, files_now())) if renames else ():
        if old.startswith(was + "/"):
            went[_new_folder(old[len(was) + 1 :], new)] += 1
    went.pop("", None)
    best, count = went.most_common(1)[0] if went else ("", 0)
    if 2 * count > held and files_now().folder(best).path == best:
        reason = (
            f"renamed: {count} of the {_files(held)} {was}/ held when the memory line was "
            f"written ({commit[:7]}) {'is' if count == 1 else 'are'} under {best}/ now"
        )
        moved = check(mention, plain, Verdict.MOVED, reason, commit, current=best)
        return replace(moved, renamed_to=best)
    if repo.is_folder(was):
        return _there(mention, was, " (in the work tree; git tracks no file in it now)", commit)
    reason = (
        f"the folder {was}/ held {_files(held)} when the memory line was written "
        f"({commit[:7]}); {NONE_NOW}"
    )
    if count:
        reason += f"; {count} renamed under {best}/"
    return check(mention, plain, Verdict.MISSING, reason, commit)


def _offered(sources: list[str], was: str, now: FileList) -> list[str]:
    """The paths to ask git's rename detection about for a gone folder: the files it held
    then, and the files now named like one of them outside it (a folder moved keeps its
    files' names). A whole-tree `git diff -M` from an old commit compares every file
    added since with every file deleted: 0.72 s of CPU for one commit of the shared
    corpus, most of a first run's folder mentions' cost."""
    names = {path.rpartition("/")[2] for path in sources}
    inside = was + "/"
    offered = {
        path
        for name in names
        for path in now.named_like(name)
        if path.rpartition("/")[2] == name and not path.startswith(inside)
    }
    return sorted({*sources, *offered})


def renames_from(git: Git | None, history: GitHistory | None = None) -> Renames:
    """The files git pairs as renamed from a commit to HEAD among the paths given, one
    `git diff -M` per commit and paths (asked only for a folder that held files then and
    holds none now; not when the two trees, read from `history`, show that it can pair
    none: mention_diffs.cannot_pair), carried on through the renames staged in git's index
    against HEAD (`history.staged`: a `git mv` of the folder not committed yet, what a
    pre-commit hook sees; found on Totaro-int/Medivu, where it read `missing` until the
    commit); none without git."""
    known: dict[tuple[str, tuple[str, ...]], list[tuple[str, str]]] = {}

    def since(commit: str, paths: list[str]) -> list[tuple[str, str]]:
        if git is None or not paths:
            return []
        moves = history.staged.renames() if history is not None else {}
        # a file offered (in the index) that a staged rename moved there: its name in HEAD
        back = {new: old for old, new in moves.items()}
        pairs = committed(commit, sorted({*paths, *(back[p] for p in paths if p in back)}))
        if not moves:
            return pairs
        paired = {old for old, _ in pairs}
        kept = [(path, moves[path]) for path in paths if path in moves and path not in paired]
        return [(old, moves.get(new, new)) for old, new in pairs] + kept

    def committed(commit: str, paths: list[str]) -> list[tuple[str, str]]:
        assert git is not None
        asked = (commit, tuple(paths))
        if asked not in known and history is not None:
            from memory_enhancement.verify.mention_diffs import cannot_pair

            if cannot_pair(history, git, commit, paths, []):
                known[asked] = []
        if asked not in known:
            from memory_enhancement.verify.git_objects import to_git
            from memory_enhancement.verify.mention_renames import RENAMES, rename_fields

            spec = [to_git(git, path) for path in paths]
            try:
                out = run_git(
                    git, "--literal-pathspecs", "diff", "-M", *RENAMES, commit, "HEAD", "--",
                    *spec,
                )  # fmt: skip
            except GitError:
                out = ""
            known[asked] = rename_fields(git, out.split("\0")) if out else []
        return known[asked]

    return since


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _new_folder(rest: str, new: str) -> str:
    """The folder a renamed file's old folder became: the new path less the part of the
    old one below the folder (`a/b.py` under `src/tools` renamed to `lib/tools/a/b.py`:
    `lib/tools`); "" when the rest did not stay as it was (the file went alone)."""
    if new.endswith("/" + rest):
        return new[: len(new) - len(rest) - 1]
    return ""


def _there(mention: Mention, path: str, note: str, commit: str | None = None) -> CitationCheck:
    """Valid: the folder is there (`path`, where the path as written resolves)."""
    named = f" (as {path}/)" if path != mention.path else ""
    return check(mention, Citation(path), Verdict.VALID, f"the folder is there{named}{note}",
                 commit, current=path)  # fmt: skip


def _ambiguous(
    mention: Mention, citation: Citation, candidates: tuple[str, ...], commit: str | None
) -> CitationCheck:
    names = ", ".join(f"{c}/" for c in candidates[:5]) + (" …" if len(candidates) > 5 else "")
    reason = f"{mention.text} names {len(candidates)} folders: {names}"
    return check(mention, citation, Verdict.AMBIGUOUS, reason, commit, candidates)


def _submodule(
    mention: Mention, path: str, link: str, repo: Repository, commit: str | None
) -> CitationCheck:
    """The folder is a submodule (valid: it is there), or lies in one (its history is its own)."""
    if path == link:
        return _there(mention, path, " (a submodule)", commit)
    return submodule(mention, Citation(path), link, repo, commit)
