"""Where an `out_of_range` mention, wrong when its memory line was committed, fitted.

A memory is often written while the code is being changed and committed later, once the
code has changed again: davidsonsilva/fintwin's `DashboardView.tsx:352-355` was past the
end of the file's 338 lines at the commit that added the memory, and within the 406
lines it had the day before (5e136d3), when the memory's own name dates it. The verdict
stays what the commit says (`out_of_range`: the lines were not there); the reason adds,
as a fact, the last version of the file before that commit that had those lines, so a
reader knows where to look.

One `git log --first-parent` limited to these files (a few a run: 12 in the bench's
1,288 truth rows), and the versions read by the run's `git cat-file`, the newest first,
at most `_LOOK_BACK` of each file. The reason is kept with the verdict (mention_cache.py):
a rerun asks git nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.verify.blame import GitHistory
from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import from_git, run_git, to_git

WRONG_THEN = ": wrong when written"  # how mention_judge ends the reason of these
_LOOK_BACK = 20  # versions of a file read, at most, before the memory line's commit


def tell(git: Git, history: GitHistory, judged: Sequence[list[CitationCheck]]) -> None:
    """Add to each `out_of_range` reason wrong when written the last earlier version of
    its file that had the cited lines (in place; none found: the reason stays)."""
    wanted = [
        (r, n, check)
        for r, row in enumerate(judged)
        for n, check in enumerate(row)
        if check.status is Verdict.OUT_OF_RANGE and check.written_in is not None
        and check.citation.line is not None and check.reason.endswith(WRONG_THEN)
    ]  # fmt: skip
    if not wanted:
        return
    paths = sorted({check.citation.target for _, _, check in wanted})
    try:
        out = run_git(
            git, "log", "--first-parent", "--format=%x01%H %cs", "-z", "--name-only", "HEAD",
            "--", *(to_git(git, p) for p in paths),
        )  # fmt: skip
    except GitError:
        return
    order = {sha: n for n, sha in enumerate(git.first_parents())}
    changes: dict[str, list[tuple[str, str]]] = {}  # per path, (commit, date), newest first
    commit, date = "", ""
    for field in out.split("\0"):
        field = field.lstrip("\n")
        if field.startswith("\x01"):
            commit, _, date = field[1:].partition(" ")
        elif field and commit and (path := from_git(git, field) if git.prefix else field):
            changes.setdefault(path, []).append((commit, date))
    for r, n, check in wanted:
        found = _fitted(history, order, changes.get(check.citation.target, []), check)
        if found is not None:
            judged[r][n] = replace(check, reason=check.reason + found)


def _fitted(
    history: GitHistory,
    order: dict[str, int],
    changes: list[tuple[str, str]],
    check: CitationCheck,
) -> str | None:
    """What the reason adds: the newest version before the memory line's commit that has
    the cited lines (None: none of the last `_LOOK_BACK`)."""
    written = order.get(check.written_in or "")
    if written is None:
        return None
    before = [(c, d) for c, d in changes if order.get(c, written) < written][:_LOOK_BACK]
    path = check.citation.target
    end = check.citation.end_line or check.citation.line or 0
    history.fetch(history.spec(c, path) for c, _ in before)
    for commit, date in before:
        found = history.cited(commit, path, 1, 1)
        if found is not None and found[0] >= end:
            return (
                f"; {path} had those lines at {commit[:7]} ({date}, {found[0]} lines), before "
                "the memory line's commit: the memory may describe that version"
            )
    return None
