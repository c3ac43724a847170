"""Verdicts on file mentions (`src/app/handler.py`, no line): is the file still there.

A file mention claims only that the repository has that file (core/file_mentions.py),
so the repository now settles most of them without history: the file is there
(`valid`, wherever the path as written resolves: from the root, else the one file
ending with it) or inside a submodule. Only a path naming no file now needs to know
what it named when the memory line was written (mention_history.py), and that is
what keeps a first run cheap: on the shared corpus 1,035 of 1,361 such paths are
files now, and only the memory files holding the other ones are traced.

- there when the memory line was written, gone now: verified as a citation of the
  whole file at that commit, so the Verifier follows git's renames since
  (`moved`, `renamed_to` the new path; `--fix` rewrites the path) or says
  `missing` (deleted since);
- no such file then either: `skipped`. Memories name files they describe as
  removed ("deleted `src/legacy/x.py`"), files to be created, example paths and
  other projects' files; nothing here can tell those apart, and none of them is a
  claim that rotted. A line not committed yet is read the same way against the
  work tree: a file it names that is not there is not called missing;
- several files end with it, then or now: `ambiguous`, with the candidates;
- no history (a memory file git does not track): the work tree alone. A file
  there is `valid` (all the mention claims); one that is not is `unchecked`:
  whether it was ever there cannot be told.

Which paths written from the root are the repository's at all is rooted.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from memory_enhancement.core.file_list import FileList, normalize
from memory_enhancement.core.mentions import Mention
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.verify.mention_cache import ELSEWHERE, ENDING, HAS, NOW_IS
from memory_enhancement.verify.mention_checks import ambiguous, check, submodule, unseen
from memory_enhancement.verify.mention_history import (
    AMBIGUOUS,
    SUBMODULE,
    TEXT,
    Ask,
    Then,
)
from memory_enhancement.verify.repo import Repository

# What a file mention of a path no file had, then or now, may be; deletions.py narrows it
# to what git knows (the file was deleted before the memory line, or created and deleted
# after it).
NOT_THEN = "not a file of this repository then (removed before, to be created, an example)"


def settled_now(
    mention: Mention, folder: str, files_now: Callable[[], FileList], repo: Repository
) -> CitationCheck | None:
    """The verdict the repository as it is now gives a file mention alone: the file is
    there at that path from the root (in a submodule checked out too: a whole file's
    mention claims nothing its own history must tell), or lies in a submodule that is
    not checked out; None when what it named
    then must be asked. A path that only ends a file now (`tui/app.py`) is asked too: the
    file it named may be gone, and another that ends the same way taken for it; so is a
    file git lists that the work tree no longer has (deleted, not committed yet), as a
    line mention of it is: the Verifier reads the work tree."""
    plain = Citation(mention.path)
    path = normalize(mention.path, folder)
    where = files_now().resolve(mention.path, folder)
    if where.path is not None and where.path == path and repo.stamp(path) is not None:
        return _there(mention, where.path, "")
    if where.submodule is not None:  # checked out, the file is there or not: all it claims
        if path is not None and repo.stamp(path) is not None:
            return _there(mention, path, f" (in submodule {where.submodule})")
        return submodule(mention, plain, where.submodule, repo, None)
    untracked = path is not None and where.path is None and not where.candidates
    if untracked and path is not None and repo.stamp(path) is not None:  # or no git to list
        return _there(mention, path, " (not tracked by git)")
    return None


def decide(
    mention: Mention,
    then: Then | None,
    folder: str,
    files_now: Callable[[], FileList],
    repo: Repository,
) -> CitationCheck | Ask:
    """The verdict on a file mention the repository now does not settle (settled_now),
    from what history says it named when its memory line was written (`then`; None: no
    history), or the whole-file citation for the Verifier to follow to HEAD."""
    plain = Citation(mention.path)
    commit = then.commit if then is not None else None
    listed = files_now()
    if then is not None and commit is not None and then.kind == TEXT and then.path:
        if then.path in listed.files and repo.stamp(then.path) is not None:
            return _there(mention, then.path, "", commit, chosen=then.note)
        return Ask(mention, then, replace(plain, target=then.path, commit=commit), then.note)
    if then is not None and then.kind == AMBIGUOUS:
        return ambiguous(mention, plain, then.candidates, commit)
    if then is not None and then.kind == SUBMODULE:
        reason = f"in submodule {then.path} when the memory line was written"
        return check(mention, plain, Verdict.IN_SUBMODULE, reason, commit)
    now = listed.resolve(mention.path, folder)
    # No file of that path then: added since, or no history. One git lists and the work
    # tree has not (deleted, not committed yet) is no file now either.
    if now.path is not None and repo.stamp(now.path) is not None:
        later = "" if then is None or commit is None else ", added after the memory line"
        return _there(mention, now.path, later, commit)
    if now.candidates:
        return ambiguous(mention, plain, now.candidates, commit)
    bundle = _folder_now(mention, folder, listed, repo)
    if bundle is not None:
        return bundle
    never = unseen(mention, plain, then, f"file {mention.path}", "file")
    if never is not None:
        return never
    assert then is not None and commit is not None  # else unseen answered
    reason = (
        f"no file {mention.path} now nor when the memory line was written ({commit[:7]}): "
        f"{NOT_THEN}"
    )
    # A wrong folder reads the same; the one file of that name says where to look (kahwei-
    # loo/doctify: `frontend/src/features/knowledge-base/pages/KnowledgeBasePage.tsx` for
    # frontend/src/pages/KnowledgeBasePage.tsx).
    named = one_named(files_now, repo, mention.path.rpartition("/")[2])
    if named is not None:
        reason += f"{ELSEWHERE}{named}"
    return check(mention, plain, Verdict.SKIPPED, reason, commit)


def _folder_now(
    mention: Mention, folder: str, listed: FileList, repo: Repository
) -> CitationCheck | None:
    """Valid when the path, read as a file's for its dot (`iosApp/iosApp.xcodeproj`, an
    `.app` or `.lproj`), is a folder with files in it now: a bundle is a folder, and
    `no file iosApp/iosApp.xcodeproj` said of one the repository has was wrong
    (Kronos1993/Multiplatform-Weather-App). None otherwise: a path naming no file then
    nor now is `skipped` as before."""
    path = normalize(mention.path, folder)
    where = listed.folder(path) if path is not None else None
    if where is None or where.path is None or not repo.is_folder(where.path):
        return None
    named = f" (as {where.path}/)" if where.path != mention.path else ""
    reason = f"the folder is there{named}, a folder of files rather than a file"
    return check(mention, Citation(where.path), Verdict.VALID, reason, current=where.path)


def pointer(
    files_now: Callable[[], FileList], repo: Repository, gone: str, then: str | None
) -> str:
    """What a `missing` reason adds about where a gone file's code may live now: the one
    file of the work tree whose path ends with the gone one's whole path (122sp7/xuanwu-app
    moved `app/layout.tsx` to `src/app/layout.tsx` in a commit git does not pair as a
    rename, and two files are named `layout.tsx`), else the one file of its name; and when
    that file holds the cited lines as they read when written (`then`), where: once only,
    compared without spaces, blank lines not looked for. "" when no one file is there.
    Endings between the two are not offered: amitcjmu/Stock-Analysis's gone
    `assessment_flow_repository/commands/flow_commands.py` would have pointed to
    `discovery_flow_repository/commands/flow_commands.py`, another module's file."""
    found = None
    for ending in dict.fromkeys((gone, gone.rpartition("/")[2])):
        where = files_now().resolve(ending)
        if where.candidates:
            break
        if where.path is not None and where.path != gone and repo.stamp(where.path) is not None:
            found = (ending, where.path)
            break
    if found is None:
        return ""
    ending, path = found
    told = f"{ELSEWHERE}{path}" if "/" not in ending else f"{ENDING}{ending}{NOW_IS}{path}"
    at = _holds(repo, path, then) if then is not None else None
    if at is not None:
        first, last = at
        told += (
            f"{HAS}that line at {first}" if first == last else f"{HAS}those lines at {first}-{last}"
        )
    return told


def _holds(repo: Repository, path: str, then: str) -> tuple[int, int] | None:
    """Where a file now holds these lines, compared without spaces: (first, last) when
    exactly once and not all blank, else None."""
    wanted = ["".join(line.split()) for line in then.split("\n")]
    source = repo.read(path)
    if not any(wanted) or not source.is_text:
        return None
    now = ["".join(line.split()) for line in source.lines]
    size = len(wanted)
    found = [n for n in range(len(now) - size + 1) if now[n : n + size] == wanted]
    return (found[0] + 1, found[0] + size) if len(found) == 1 else None


def one_named(files_now: Callable[[], FileList], repo: Repository, name: str) -> str | None:
    """The one file of this name in the work tree now, if there is exactly one: where to
    look for a file a memory names in a folder it is not (or no longer) in."""
    found = files_now().resolve(name).path
    return found if found is not None and repo.stamp(found) is not None else None


def listed(files_now: Callable[[], FileList], path: str) -> bool:
    """Whether git lists the file now: one the work tree lacks is a deletion not committed."""
    return path in files_now().files


def _there(
    mention: Mention, path: str, note: str, commit: str | None = None, chosen: str = ""
) -> CitationCheck:
    """Valid: the file is there (`path`, where the path as written resolves; `chosen`: how
    it was told from other files of that name, mention_context.py, which says the path)."""
    named = f" (as {path})" if path != mention.path and not chosen else ""
    cited = Citation(path)
    return check(mention, cited, Verdict.VALID, f"{chosen}the file is there{named}{note}", commit,
                 current=path)  # fmt: skip
