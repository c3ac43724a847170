"""Where an `out_of_range` mention, wrong when its memory line was committed, fitted.

A memory is often written while the code is being changed and committed later, once the
code has changed again: davidsonsilva/fintwin's `DashboardView.tsx:352-355` was past the
end of the file's 338 lines at the commit that added the memory, and within the 406
lines it had the day before (5e136d3), when the memory's own name dates it. The verdict
stays what the commit says (`out_of_range`: the lines were not there); the reason adds,
as a fact, the last version of the file before that commit that had those lines, so a
reader knows where to look.

The versions of these files (a few a run: 12 in the bench's 1,288 truth rows) come
from the raw diffs of the first-parent commits before the last memory line's commit,
read once a run for other readers too, when the run's walk printed the line's root
trees (first_parent_diffs.LineDiffs; the dates of the versions told from one `git log
--no-walk`), else from one `git log --first-parent` limited to them (0.55G instructions
on rjmurillo/ai-agents, mostly inflating all 2,621 commits of its line; the trees'
diff 0.18G); the versions are read by the run's `git cat-file`, the newest first, at
most `_LOOK_BACK` of each file. The reason is kept with the verdict (mention_cache.py):
a rerun asks git nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.verify import first_parent_diffs
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
    shas = git.first_parents()
    order = {sha: n for n, sha in enumerate(shas)}
    found = _changes(git, shas, order, paths, [check for _, _, check in wanted])
    if found is None:
        return
    changes, dates = found
    fitted = [(r, n, check, _fitted(history, order, changes.get(check.citation.target, []), check))
              for r, n, check in wanted]  # fmt: skip
    if dates is None:  # asked of the root trees: the dates of the versions told
        told = first_parent_diffs.described(git, (f[0] for *_, f in fitted if f is not None))
        dates = {sha: date for sha, (date, _) in (told or {}).items()}
    for r, n, check, fit in fitted:
        if fit is not None and fit[0] in dates:
            commit, lines = fit
            path = check.citation.target
            judged[r][n] = replace(
                check,
                reason=check.reason + f"; {path} had those lines at {commit[:7]} ({dates[commit]}, "
                f"{lines} lines), before the memory line's commit: the memory may describe that "
                "version",
            )


def _changes(
    git: Git,
    shas: list[str],
    order: dict[str, int],
    paths: list[str],
    checks: list[CitationCheck],
) -> tuple[dict[str, list[str]], dict[str, str] | None] | None:
    """Per path, the first-parent commits that changed it, newest first, and their dates
    when `git log` gave them (None: dates not read yet); None when git fails. From the
    root trees the run's walk printed when it did (first_parent_diffs.py: only the commits
    before the last memory line's, none inflated again), else one `git log`."""
    places = [order[c.written_in] for c in checks if c.written_in in order]
    if shas:
        found = first_parent_diffs.changed(
            git, 0, max(places, default=0), paths=(to_git(git, p) for p in paths)
        )
        if found is not None:
            changes: dict[str, list[str]] = {}
            for place, path in reversed(found):
                changes.setdefault(path, []).append(shas[place])
            return changes, None
    try:
        out = run_git(
            git, "log", "--first-parent", "--format=%x01%H %cs", "-z", "--name-only", "HEAD",
            "--", *(to_git(git, p) for p in paths),
        )  # fmt: skip
    except GitError:
        return None
    logged: dict[str, list[str]] = {}
    dates: dict[str, str] = {}
    commit = ""
    for field in out.split("\0"):
        field = field.lstrip("\n")
        if field.startswith("\x01"):
            commit, _, date = field[1:].partition(" ")
            dates[commit] = date
        elif field and commit and (name := from_git(git, field) if git.prefix else field):
            logged.setdefault(name, []).append(commit)
    return logged, dates


def _fitted(
    history: GitHistory, order: dict[str, int], changes: list[str], check: CitationCheck
) -> tuple[str, int] | None:
    """The newest version before the memory line's commit that has the cited lines, and
    its number of lines (None: none of the last `_LOOK_BACK`)."""
    written = order.get(check.written_in or "")
    if written is None:
        return None
    before = [c for c in changes if order.get(c, written) < written][:_LOOK_BACK]
    path = check.citation.target
    end = check.citation.end_line or check.citation.line or 0
    history.fetch(history.spec(c, path) for c in before)
    for commit in before:
        found = history.cited(commit, path, 1, 1)
        if found is not None and found[0] >= end:
            return commit, found[0]
    return None
