"""The verdicts on prose mentions that history gives without the Verifier.

A path naming several files (`ambiguous`, with the candidates), a file in a submodule, a
blob URL into another repository, and a path naming no file: `missing`, unless no file of
the repository, now or when the memory line was written, has its ending, and no file of
that name was ever in its history. Then it is a name that only looks like a path
(`app.main (line 26)`: a Python module; `postgresql.pg.svc:5432`: a Kubernetes host and
port; `MyApp.Main (Line 15)`: a Delphi routine in a stack trace) or a file of another
project (lane-core/pane's `arxivmain.tex:1771`, a paper), and the mention is `skipped`:
nothing in this repository can tell, and calling it missing would fail a memory for a
file that was never meant to be here. So is a path whose first folder is no folder of
the repository, now or when the memory line was written, at any depth (pane's
`bhandler/IsWatchedTest.cpp:25`, Haiku's sources): another project's path or an example.
Apart from mentions.py, which decides which of them a mention gets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from memory_enhancement.core.file_list import FileList, normalize
from memory_enhancement.core.mentions import Mention
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import run_git, to_git
from memory_enhancement.verify.mention_history import UNCOMMITTED, Then, span
from memory_enhancement.verify.repo import Repository

# What a path under no folder of the repository may be; deletions.py narrows it when git
# knows the file was deleted before the memory line was written.
FOREIGN = "another project's path or an example, not one of this repository"


def absent(
    mention: Mention,
    citation: Citation,
    reason: str,
    lists: Iterable[FileList],
    commit: str | None,
    ever_named: Callable[[str], bool] | None = None,
) -> CitationCheck:
    """No file at that path: `missing`, or `skipped` for a bare name whose ending no file
    of these lists (the repository now and when the memory line was written) has, unless
    `ever_named` (git history, when there is one) knows a file of that name: the memory
    line then names a file deleted with the last of its ending, before it was written."""
    lists = list(lists)
    foreign = _foreign_folder(mention.path, lists)
    if foreign is not None:
        reason = f"{reason}; no folder {foreign}/ in the repository, now or then: {FOREIGN}"
        return check(mention, citation, Verdict.SKIPPED, reason, commit)
    ending = mention.path.rpartition(".")[2]
    name = mention.path.removeprefix("@")
    if (
        "/" not in mention.path
        and not any(files.has_ending(ending) for files in lists)
        and not (ever_named is not None and ever_named(name))
    ):
        reason = (
            f"{reason}; no file of the repository ends in .{ending}: a name (a module, a host) "
            "or another project's file, not a path of this one"
        )
        return check(mention, citation, Verdict.SKIPPED, reason, commit)
    return check(mention, citation, Verdict.MISSING, reason, commit)


def _foreign_folder(path: str, lists: list[FileList]) -> str | None:
    """The first folder of a path with folders when no file of these lists lies under a
    folder of that name; None otherwise (and for a bare name, `./` or `../` paths)."""
    first, slash, _ = path.removeprefix("@").partition("/")
    if not slash or first in ("", ".", "..", "~"):
        return None
    return None if any(files.has_folder_named(first) for files in lists) else first


def untracked(
    mention: Mention,
    citation: Citation,
    folder: str,
    repo: Repository,
    git: Git | None,
    commit: str,
) -> CitationCheck | None:
    """A mention of lines of a file git never had, then or now, that the work tree has
    (untracked, or ignored: a local settings file): its line count is checked, all that
    can be (`unchecked`); None when the work tree has no such file. 7Spade/Xuanwu's
    `.serena/project.local.yml:9-14` (ignored by `.serena/.gitignore`) was `missing`,
    failing its memory even where the file was there."""
    path = normalize(mention.path, folder)
    if path is None or git is None:
        return None
    source = repo.read(path)
    if not source.is_text:
        return None
    cited = replace(citation, target=path)
    end = span(mention)[1]
    if end > len(source.lines):
        reason = f"line {end} is past the end of {path} ({len(source.lines)} lines, {_LOCAL})"
        return check(mention, cited, Verdict.OUT_OF_RANGE, reason, commit)
    reason = f"the file is there ({_LOCAL}): only its line count was checked"
    return check(mention, cited, Verdict.UNCHECKED, reason, commit, current=path)


def ignored(git: Git | None, judged: list[list[CitationCheck]], folders: list[str]) -> None:
    """The `missing` verdicts on files no commit had, then or now (`NO_FILE`), that git
    ignores made `skipped`, in place: a file of the author's machine (the reason names the
    rule). One `git check-ignore` for all of them (`folders`: each row's memory folder)."""
    asked: dict[str, list[tuple[int, int]]] = {}
    for r, row in enumerate(judged):
        for n, found in enumerate(row):
            if found.status is Verdict.MISSING and NO_FILE in found.reason:
                path = normalize(found.citation.target, folders[r])
                if path is not None:
                    asked.setdefault(path, []).append((r, n))
    if git is None or not asked:
        return
    paths = {to_git(git, path): path for path in asked}
    try:  # -z -v: source, line, pattern, path of each ignored one
        out = run_git(git, "check-ignore", "-z", "-v", "--stdin", stdin="\0".join(paths) + "\0")
    except GitError:  # none ignored (exit 1), or no answer: missing as they were
        return
    fields = out.split("\0")
    for source, line, _, name in zip(*(fields[k::4] for k in range(4)), strict=False):
        path = paths.get(name)
        for r, n in asked.get(path or "", ()):
            reason = f"no file {path} here, and git ignores it ({source}:{line}): a local file"
            judged[r][n] = replace(judged[r][n], status=Verdict.SKIPPED, reason=reason)


# How a line mention of a file no commit had, then or now, is told (mention_judge.py).
NO_FILE = " in the repository, now or when the memory line was written"
_LOCAL = "not tracked by git"


def check(
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


def ambiguous(
    mention: Mention, citation: Citation, candidates: tuple[str, ...], commit: str | None
) -> CitationCheck:
    names = ", ".join(candidates[:5]) + (" …" if len(candidates) > 5 else "")
    reason = f"{mention.path} names {len(candidates)} files: {names}"
    return check(mention, citation, Verdict.AMBIGUOUS, reason, commit, candidates)


def submodule(
    mention: Mention, citation: Citation, link: str, repo: Repository, commit: str | None
) -> CitationCheck:
    folder = repo.resolve(link)
    checked_out = folder is not None and folder.is_dir() and any(folder.iterdir())
    state = "its history is its own" if checked_out else "not checked out"
    reason = f"in submodule {link} ({state})"
    return check(mention, citation, Verdict.IN_SUBMODULE, reason, commit)


def other_repository(mention: Mention, origin: str | None) -> CitationCheck:
    start, end = span(mention)
    citation = Citation(mention.path, start, end_or_none(start, end))
    if origin is None:
        reason = f"a link into {mention.repository}; no origin remote to tell if it is this one"
    else:
        reason = f"a link into another repository ({mention.repository})"
    return check(mention, citation, Verdict.SKIPPED, reason)


def end_or_none(start: int, end: int) -> int | None:
    return end if end != start else None


def unseen(
    mention: Mention, citation: Citation, then: Then | None, what: str, kind: str
) -> CitationCheck | None:
    """The verdict on a file or folder mention naming nothing now (`what`: `file x.py`,
    `folder x/`; `kind`: `file`, `folder`) when history cannot say whether it ever was:
    no history (`unchecked`), or a memory line not committed yet (`skipped`); None when
    history has the memory line's commit (file_checks, folder_checks go on)."""
    if then is None:
        reason = (
            f"no {what} now, and no history (memory file not tracked by git) to tell whether "
            "there ever was"
        )
        return check(mention, citation, Verdict.UNCHECKED, reason)
    if then.kind == UNCOMMITTED or then.commit is None:
        reason = f"no {what} (memory line not committed yet): not a {kind} here"
        return check(mention, citation, Verdict.SKIPPED, reason)
    return None
