"""Verdicts that need git history: renames, and which occurrence of repeated text is ours.

When the cited text occurs more than once, git's diff since the commit at which
the citation was verified decides where the code went; without that history
the nearest occurrence is the best guess. These tests are built so that the
two answers differ.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import Verdict
from memory_enhancement.verify.git import Git
from verify_support import GitRepo, numbered

APP = ["import os", "", "API_VERSION = 'v2'", "", "def main() -> None:", "    return None"]


def twice(count: int = 12) -> list[str]:
    """Distinct lines, except `return None` on lines 5 and 10."""
    lines = numbered(count)
    lines[4] = lines[9] = "return None"
    return lines


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "project")


# -- renames --------------------------------------------------------------------


@pytest.fixture
def app(repo: GitRepo) -> Citation:
    repo.write_lines("src/app.py", APP)
    repo.commit("initial")
    return Citation("src/app.py", 3, snippet="API_VERSION = 'v2'", verified=repo.stamp())


def test_a_renamed_file_makes_the_citation_moved_with_its_current_path(
    repo: GitRepo, app: Citation
) -> None:
    repo.mv("src/app.py", "src/main.py")
    repo.commit("rename")
    [check] = repo.verify(app)
    assert check.status is Verdict.MOVED
    assert (check.current_path, check.current_line) == ("src/main.py", 3)
    assert check.renamed_to == "src/main.py"
    assert check.reason == "renamed to src/main.py; found at line 3 (was 3)"


def test_a_staged_rename_is_followed_before_it_is_committed(repo: GitRepo, app: Citation) -> None:
    repo.mv("src/app.py", "lib/app.py")
    [check] = repo.verify(app)
    assert check.status is Verdict.MOVED
    assert check.current_path == "lib/app.py"


def test_a_rename_with_lines_inserted_reports_the_new_path_and_line(
    repo: GitRepo, app: Citation
) -> None:
    repo.mv("src/app.py", "src/main.py")
    repo.write_lines("src/main.py", ["# header", "# more", *APP])
    repo.commit("rename and grow")
    [check] = repo.verify(app)
    assert check.status is Verdict.MOVED
    assert (check.current_path, check.current_line) == ("src/main.py", 5)


def test_renames_are_followed_through_a_chain(repo: GitRepo, app: Citation) -> None:
    repo.mv("src/app.py", "src/b.py")
    repo.commit("first rename")
    repo.mv("src/b.py", "pkg/c.py")
    repo.commit("second rename")
    [check] = repo.verify(app)
    assert check.status is Verdict.MOVED
    assert check.current_path == "pkg/c.py"


def test_a_renamed_file_without_the_cited_text_is_missing_with_renamed_to(
    repo: GitRepo, app: Citation
) -> None:
    repo.mv("src/app.py", "src/main.py")
    repo.commit("rename")
    repo.write_lines("src/main.py", [line.replace("'v2'", "'v3'") for line in APP])
    repo.commit("bump")
    [check] = repo.verify(app)
    assert check.status is Verdict.MISSING
    assert check.renamed_to == "src/main.py"
    assert check.reason == "file was renamed to src/main.py, but the cited text is not in it"


def test_a_whole_file_citation_follows_a_rename(repo: GitRepo, app: Citation) -> None:
    repo.mv("src/app.py", "src/main.py")
    repo.commit("rename")
    [check] = repo.verify(Citation("src/app.py"))
    assert check.status is Verdict.MOVED
    assert check.current_path == check.renamed_to == "src/main.py"
    [check] = repo.verify(Citation("src/app.py", snippet="API_VERSION"))
    assert (check.status, check.current_line) == (Verdict.MOVED, 3)
    assert check.current_path == check.renamed_to == "src/main.py"


def test_a_file_moved_without_git_knowing_is_missing(repo: GitRepo, app: Citation) -> None:
    (repo.root / "src/app.py").rename(repo.root / "src/main.py")  # untracked new file
    [check] = repo.verify(app)
    assert check.status is Verdict.MISSING
    assert check.renamed_to is None


def same_second_stamp(repo: GitRepo) -> str:
    """A verified stamp in the very second of the last commit (commit times are whole
    seconds: an agent that verified, then committed a rename at once, writes this)."""
    return datetime.fromtimestamp(repo.time, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("grow", [False, True], ids=["renamed", "renamed-and-grown"])
def test_a_declared_citation_stamped_in_the_second_of_its_rename_follows_it(
    repo: GitRepo, grow: bool
) -> None:
    repo.write_lines("src/app.py", APP)
    repo.commit("initial")
    repo.mv("src/app.py", "src/main.py")
    if grow:
        repo.write_lines("src/main.py", ["# header", *APP])
    repo.commit("rename")
    stamp = same_second_stamp(repo)
    cited = Citation("src/app.py", 3, snippet="API_VERSION = 'v2'", verified=stamp)
    repo.memory("note", [cited], fmt="serena")
    assert "| src/app.py | 3 |" in (repo.store_root / "note.md").read_text(encoding="utf-8")
    [check] = repo.service().verify("note").results[0].checks
    assert check.status is Verdict.MOVED
    assert (check.current_path, check.current_line) == ("src/main.py", 4 if grow else 3)


# -- duplicate lines ------------------------------------------------------------


def cite_second(repo: GitRepo, **fields: str | None) -> Citation:
    stamp: str | None = repo.stamp()
    return Citation("src/dup.py", 10, snippet="return None", verified=fields.get("verified", stamp),
                    commit=fields.get("commit"))  # fmt: skip


def grow_between(repo: GitRepo) -> None:
    """Six lines inserted between the two `return None`: they are now at 5 and 16.

    From line 10, the nearest occurrence is line 5; the code went to 16.
    """
    lines = twice()
    repo.write_lines("src/dup.py", [*lines[:5], *numbered(6, "new"), *lines[5:]])


def test_a_repeated_line_follows_the_code_where_git_says_it_moved(repo: GitRepo) -> None:
    repo.write_lines("src/dup.py", twice())
    repo.commit("initial")
    citation = cite_second(repo)
    grow_between(repo)
    repo.commit("grow")
    [check] = repo.verify(citation)
    assert check.status is Verdict.MOVED
    assert check.current_line == 16


def test_uncommitted_changes_count_in_the_history_too(repo: GitRepo) -> None:
    repo.write_lines("src/dup.py", twice())
    repo.commit("initial")
    citation = cite_second(repo)
    grow_between(repo)
    [check] = repo.verify(citation)
    assert check.current_line == 16


def test_a_recorded_commit_is_used_when_there_is_no_verified_stamp(repo: GitRepo) -> None:
    repo.write_lines("src/dup.py", twice())
    base = repo.commit("initial")
    citation = cite_second(repo, verified=None, commit=base)
    grow_between(repo)
    repo.commit("grow")
    [check] = repo.verify(citation)
    assert check.current_line == 16


def test_an_unknown_recorded_commit_falls_back_to_the_nearest_occurrence(repo: GitRepo) -> None:
    repo.write_lines("src/dup.py", twice())
    repo.commit("initial")
    citation = cite_second(repo, verified=None, commit="0123456789abcdef0123456789abcdef01234567")
    grow_between(repo)
    [check] = repo.verify(citation)
    assert (check.status, check.current_line) == (Verdict.MOVED, 5)


def test_without_a_verified_stamp_the_nearest_occurrence_is_taken(repo: GitRepo) -> None:
    repo.write_lines("src/dup.py", twice())
    repo.commit("initial")
    citation = cite_second(repo, verified=None)
    grow_between(repo)
    repo.commit("grow")
    [check] = repo.verify(citation)
    assert check.status is Verdict.MOVED
    assert check.current_line == 5


def test_a_stamp_from_before_the_first_commit_has_no_history(repo: GitRepo) -> None:
    citation = cite_second(repo, verified="2020-01-01T00:00:00Z")
    repo.write_lines("src/dup.py", twice())
    repo.commit("initial")
    grow_between(repo)
    [check] = repo.verify(citation)
    assert check.current_line == 5


def test_the_verified_stamp_picks_the_commit_head_was_at_then(repo: GitRepo) -> None:
    """Verified after the change: the code was already at 16, so history has nothing to say."""
    repo.write_lines("src/dup.py", twice())
    repo.commit("initial")
    early = cite_second(repo)
    grow_between(repo)
    repo.commit("grow")
    late = cite_second(repo)  # the same (wrong) line, verified after the move
    first, second = repo.verify(early, late)
    assert first.current_line == 16
    assert second.current_line == 5


def test_a_stamp_on_the_very_second_of_a_commit_counts_that_commit(repo: GitRepo) -> None:
    repo.write_lines("src/dup.py", twice())
    repo.commit("initial")
    grow_between(repo)
    repo.commit("grow")
    git = Git.discover(repo.root)
    assert git is not None
    out = repo.git("log", "--format=%ct %H", "HEAD")
    pairs = [line.split() for line in reversed(out.splitlines())]
    times, shas = [int(t) for t, _ in pairs], [sha for _, sha in pairs]
    assert len(times) == 2
    assert git.commit_at(datetime.fromtimestamp(times[1], UTC)) == shas[1]
    assert git.commit_at(datetime.fromtimestamp(times[1] - 1, UTC)) == shas[0]
    assert git.commit_at(datetime.fromtimestamp(times[0] - 1, UTC)) is None
    # Renames are read from the commit before that second: it may have come after.
    assert git.commit_before(datetime.fromtimestamp(times[1], UTC)) == shas[0]
    assert git.commit_before(datetime.fromtimestamp(times[1] + 1, UTC)) == shas[1]


CODE = ["a = 1", "b = 2", "c = 3"]
ADDED = ["def b():", "    return compute()"]


def cite_before_commit(repo: GitRepo) -> Citation:
    """An agent's order of work: write code, save what it learned (citing the new line,
    verified while HEAD is still the commit before that code), then commit."""
    repo.write_lines("src/b.py", CODE)
    repo.commit("before")
    repo.write_lines("src/b.py", [*CODE, *ADDED])
    citation = Citation("src/b.py", 5, snippet="return compute()", verified=repo.stamp())
    repo.commit("the code the memory describes")
    return citation


def test_a_citation_written_before_its_code_was_committed_follows_that_commit(
    repo: GitRepo,
) -> None:
    citation = cite_before_commit(repo)
    repo.write_lines("src/b.py", ["# header", *CODE, *ADDED, "    return compute()"])
    [check] = repo.verify(citation)  # the copy appended at 7 is not ours
    assert (check.status, check.current_line) == (Verdict.MOVED, 6)


def test_a_citation_written_before_its_code_was_committed_goes_stale_with_a_true_reason(
    repo: GitRepo,
) -> None:
    citation = cite_before_commit(repo)
    repo.write_lines("src/b.py", ["# header", *CODE, "def b():", "    return compute(2)"])
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == "line 5 changed: it is line 6 now, which reads `return compute(2)`"


def test_a_changed_line_whose_text_was_already_elsewhere_is_stale_not_moved(
    repo: GitRepo,
) -> None:
    repo.write_lines("src/dup.py", twice())
    repo.commit("initial")
    citation = cite_second(repo)
    lines = twice()
    lines[9] = "return 1"
    repo.write_lines("src/dup.py", lines)
    repo.commit("change")
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == (
        "line 10 changed (now line 10: `return 1`); the same text at line 5 was already there"
    )


def test_a_line_rewritten_into_a_longer_one_elsewhere_is_stale_and_not_said_to_be_older(
    repo: GitRepo,
) -> None:
    """Found in doublefx/9router: `isValid = await bcrypt.compare(...)` (line 23) became
    `const isValid = ...` at line 63; the reason said line 63 "was already there"."""
    lines = numbered(12)
    lines[9] = "valid = check(password)"
    repo.write_lines("src/dup.py", lines)
    repo.commit("initial")
    citation = Citation("src/dup.py", 10, snippet=lines[9], verified=repo.stamp())
    rewritten = [*lines[:9], "return False", *lines[10:], "const valid = check(password)"]
    repo.write_lines("src/dup.py", rewritten)
    repo.commit("rewrite")
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == (
        "line 10 changed (now line 10: `return False`); "
        "line 13, added since, holds it in a longer line (a rewrite)"
    )


def test_a_deleted_line_whose_text_was_already_elsewhere_is_stale_and_says_deleted(
    repo: GitRepo,
) -> None:
    lines = twice()
    lines[0] = "return None"  # lines 1, 5 and 10
    repo.write_lines("src/dup.py", lines)
    repo.commit("initial")
    citation = Citation("src/dup.py", 1, snippet="return None", verified=repo.stamp())
    repo.write_lines("src/dup.py", lines[1:])
    repo.commit("drop the first line")
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == "line 1 was deleted; the same text at lines 4, 9 was already there"


def test_a_line_moved_next_to_an_older_copy_goes_where_the_diff_added_it(repo: GitRepo) -> None:
    """Line 10 is cut and pasted at line 2; the older copy (now line 6) is nearer but not ours."""
    lines = twice()
    repo.write_lines("src/dup.py", lines)
    repo.commit("initial")
    citation = cite_second(repo)
    moved = [lines[0], "return None", *lines[1:9], *lines[10:]]
    repo.write_lines("src/dup.py", moved)
    repo.commit("move it up")
    [check] = repo.verify(citation)
    assert check.status is Verdict.MOVED
    assert check.current_line == 2


def test_history_is_read_from_a_diff_whose_lines_look_like_diff_headers(repo: GitRepo) -> None:
    """A deleted SQL comment `-- users` shows as `--- users` in the diff: it is not a header."""
    schema = ["-- users", "CREATE TABLE users (", "  id INTEGER", ");"]
    schema += ["-- orders", "CREATE TABLE orders (", "  id INTEGER", ");"]
    repo.write_lines("db/schema.sql", schema)
    repo.commit("schema")
    citation = Citation("db/schema.sql", 7, snippet="id INTEGER", verified=repo.stamp())
    notes = [f"-- note {n}" for n in range(8)]
    repo.write_lines("db/schema.sql", [*notes, *schema[1:]])
    repo.commit("document")
    [check] = repo.verify(citation)
    assert check.status is Verdict.MOVED
    assert check.current_line == 14  # the nearest copy (line 10) is the users table's


def test_history_works_when_the_repository_root_is_a_subfolder_of_the_work_tree(
    repo: GitRepo,
) -> None:
    repo.write_lines("pkg/src/dup.py", twice())
    repo.write_lines("pkg/src/app.py", APP)
    repo.commit("initial")
    dup = cite_second(repo)
    app = Citation("src/app.py", 3, snippet="API_VERSION = 'v2'", verified=repo.stamp())
    lines = twice()
    repo.write_lines("pkg/src/dup.py", [*lines[:5], *numbered(6, "new"), *lines[5:]])
    repo.mv("pkg/src/app.py", "pkg/src/main.py")
    repo.commit("grow and rename")
    repo.memory("note", [dup, app])
    result = repo.service(code_root=repo.root / "pkg").verify("note").results[0]
    first, second = result.checks
    assert (first.status, first.current_line) == (Verdict.MOVED, 16)
    assert (second.status, second.current_path) == (Verdict.MOVED, "src/main.py")


# -- no git at all --------------------------------------------------------------


@pytest.fixture
def folder(tmp_path: Path) -> GitRepo:
    """A plain folder of code: no git repository anywhere above it."""
    folder = GitRepo(tmp_path / "plain", init=False)
    assert Git.discover(folder.root) is None
    return folder


def test_without_git_every_verdict_but_rename_still_works(folder: GitRepo) -> None:
    folder.write_lines("src/app.py", APP)
    folder.write_lines("src/old.py", APP)
    stamp = folder.stamp()
    valid = Citation("src/app.py", 5, snippet="def main()", verified=stamp)
    moved = Citation("src/app.py", 3, snippet="API_VERSION = 'v2'", verified=stamp)
    stale = Citation("src/app.py", 1, snippet="import os", verified=stamp)
    missing = Citation("src/gone.py", 1, snippet="x", verified=stamp)
    renamed = Citation("src/old.py", 1, snippet="import os", verified=stamp)
    out = Citation("src/app.py", 99)
    folder.write_lines("src/app.py", ["import sys", "# header", *APP[1:]])
    (folder.root / "src/old.py").rename(folder.root / "src/new.py")
    service = folder.service()
    assert service.git is None
    folder.memory("note", [valid, moved, stale, missing, renamed, out])
    checks = service.verify("note").results[0].checks
    assert [c.status for c in checks] == [
        Verdict.MOVED,
        Verdict.MOVED,
        Verdict.STALE,
        Verdict.MISSING,
        Verdict.MISSING,
        Verdict.OUT_OF_RANGE,
    ]
    assert [c.current_line for c in checks[:2]] == [6, 4]
    assert checks[2].reason == "line 1 now reads `import sys`"
    assert checks[4].renamed_to is None


def test_without_git_a_repeated_line_goes_to_the_nearest_occurrence(folder: GitRepo) -> None:
    folder.write_lines("src/dup.py", twice())
    citation = cite_second(folder)
    lines = twice()
    folder.write_lines("src/dup.py", [*lines[:5], *numbered(6, "new"), *lines[5:]])
    [check] = folder.verify(citation)
    assert (check.status, check.current_line) == (Verdict.MOVED, 5)
    changed = twice()
    changed[9] = "return 1"
    folder.write_lines("src/dup.py", changed)
    [check] = folder.verify(citation)
    assert (check.status, check.current_line) == (Verdict.MOVED, 5)


def test_without_git_whitespace_changes_are_valid_and_edits_stale(folder: GitRepo) -> None:
    folder.write_lines("src/app.py", APP)
    citation = Citation("src/app.py", 3, snippet="API_VERSION = 'v2'")
    folder.write_lines("src/app.py", [line.replace(" = ", "=") for line in APP])
    [check] = folder.verify(citation)
    assert check.status is Verdict.VALID
    folder.write_lines("src/app.py", [line.replace("v2", "v3") for line in APP])
    [check] = folder.verify(citation)
    assert check.status is Verdict.STALE


@pytest.mark.parametrize(
    ("snippet", "now", "status"),
    [
        ("x = 3", "x = 31", Verdict.STALE),  # the number grew: not the same line
        ("return x", "    return xyz", Verdict.STALE),
        ("x = 3", "x = 3  # tuned", Verdict.VALID),  # more after a token boundary
        ("API_VERSION = 'v2'", "export const API_VERSION = 'v2';", Verdict.VALID),
        ("compute(", "result = compute(a, b)", Verdict.VALID),  # ends in punctuation
        ("x=3", "x = 3", Verdict.VALID),
    ],
)
def test_without_history_a_line_holds_a_partial_snippet_only_at_token_boundaries(
    folder: GitRepo, snippet: str, now: str, status: Verdict
) -> None:
    folder.write_lines("src/c.py", ["a = 1", "b = 2", now, "d = 4"])
    [check] = folder.verify(Citation("src/c.py", 3, snippet=snippet))
    assert check.status is status, check.reason


def test_without_history_a_longer_line_elsewhere_is_not_where_the_snippet_moved(
    folder: GitRepo,
) -> None:
    folder.write_lines("src/c.py", ["x = 4", *numbered(20), "x = 30"])
    [check] = folder.verify(Citation("src/c.py", 1, snippet="x = 3"))
    assert check.status is Verdict.STALE
    assert check.reason == "line 1 now reads `x = 4`"


# -- a cited line that still contains the snippet ------------------------------------


def test_a_whole_line_rewritten_into_a_longer_one_is_stale_not_valid(repo: GitRepo) -> None:
    repo.write_lines("pyproject.toml", ["[tool.pytest]", "testpaths = [", '    "tests",', "]"])
    repo.commit("initial")
    citation = Citation("pyproject.toml", 2, snippet="testpaths = [", verified=repo.stamp())
    repo.write_lines("pyproject.toml", ["[tool.pytest]", 'testpaths = ["tests"]'])
    repo.commit("one line")
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == 'line 2 was rewritten; it now reads `testpaths = ["tests"]`'


def test_a_partial_snippet_still_on_its_changed_line_stays_valid(repo: GitRepo) -> None:
    repo.write_lines("src/c.ts", ["// constants", "export const API_VERSION = 'v2';"])
    repo.commit("initial")
    citation = Citation("src/c.ts", 2, snippet="API_VERSION = 'v2'", verified=repo.stamp())
    repo.write_lines("src/c.ts", ["// constants", "export const API_VERSION = 'v2'; // public"])
    repo.commit("comment")
    [check] = repo.verify(citation)
    assert check.status is Verdict.VALID
    assert check.current_line == 2


def test_a_whole_line_moved_into_a_longer_line_elsewhere_is_stale(repo: GitRepo) -> None:
    before = ["import os", "import chardet", "", "def f():", "    return os"]
    repo.write_lines("src/p.py", before)
    repo.commit("initial")
    citation = Citation("src/p.py", 2, snippet="import chardet", verified=repo.stamp())
    repo.write_lines("src/p.py", ["import os", "from .compat import chardet", *before[2:]])
    repo.commit("vendored")
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE


def test_the_cited_copy_moving_while_another_copy_slides_into_its_line_is_moved(
    repo: GitRepo,
) -> None:
    """Three lines above go; the cited copy moves to 1 and the other copy lands on line 4."""
    loop = "for value in sequence:"
    repo.write_lines("src/loop.py", ["x1 = 1", "x2 = 2", "x3 = 3", loop, "y = 1", "z = 2", loop])
    repo.commit("initial")
    citation = Citation("src/loop.py", 4, snippet=loop, verified=repo.stamp())
    repo.write_lines("src/loop.py", [loop, "y = 1", "z = 2", loop])
    repo.commit("drop the constants")
    [check] = repo.verify(citation)
    assert check.status is Verdict.MOVED
    assert check.current_line == 1
