"""Every per-citation verdict, produced on a real temporary git repository.

Each test builds the code, commits it with a known date, writes a memory whose
citation carries an explicit verified stamp a minute after that commit, then
changes the code the way real code changes and verifies the memory through the
service, as `verify` does.
"""

from __future__ import annotations

import builtins
import os
from pathlib import Path

import pytest

from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import Verdict
from verify_support import GitRepo

APP = [
    "import os",  # 1
    "",  # 2
    "API_VERSION = 'v2'",  # 3
    "",  # 4
    "def main() -> None:",  # 5
    "    print(API_VERSION)",  # 6
    "    return None",  # 7
]
BODY = "def main() -> None:\n    print(API_VERSION)\n    return None"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/app.py", APP)
    repo.commit("initial")
    return repo


def cite(repo: GitRepo, line: int | None = 3, snippet: str | None = "API_VERSION = 'v2'",
         path: str = "src/app.py", end_line: int | None = None) -> Citation:  # fmt: skip
    return Citation(path, line, end_line, snippet, verified=repo.stamp())


# -- valid --------------------------------------------------------------------


def test_an_unchanged_line_is_valid_where_it_was_cited(repo: GitRepo) -> None:
    [check] = repo.verify(cite(repo))
    assert check.status is Verdict.VALID
    assert (check.current_path, check.current_line) == ("src/app.py", 3)
    assert check.reason == ""
    assert check.anchored


def test_a_snippet_that_is_only_part_of_the_line_is_valid(repo: GitRepo) -> None:
    [check] = repo.verify(cite(repo, 6, "print(API_VERSION)"))
    assert check.status is Verdict.VALID


def test_whitespace_only_changes_to_the_cited_line_keep_it_valid(repo: GitRepo) -> None:
    citation = cite(repo, 6, "print(API_VERSION)")
    lines = list(APP)
    lines[5] = "\tprint( API_VERSION )   "
    lines[2] = "API_VERSION   =   'v2'"
    repo.write_lines("src/app.py", lines)
    repo.commit("reformat")
    first, second = repo.verify(citation, cite(repo))
    assert first.status is Verdict.VALID
    assert second.status is Verdict.VALID
    assert second.current_line == 3


def test_a_snippet_written_with_other_whitespace_than_the_code_is_valid(repo: GitRepo) -> None:
    [check] = repo.verify(cite(repo, 5, "def main()->None :"))
    assert check.status is Verdict.VALID


# -- stale ----------------------------------------------------------------------


def test_an_edited_line_is_stale_and_the_reason_quotes_what_is_there_now(repo: GitRepo) -> None:
    citation = cite(repo)
    lines = list(APP)
    lines[2] = "API_VERSION = 'v3'"
    repo.write_lines("src/app.py", lines)
    repo.commit("bump")
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == "line 3 now reads `API_VERSION = 'v3'`"
    assert check.current_line is None
    assert check.status.failing


def test_an_uncommitted_edit_is_stale_too(repo: GitRepo) -> None:
    citation = cite(repo)
    repo.write_lines("src/app.py", [line.replace("'v2'", "'v9'") for line in APP])
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert "API_VERSION = 'v9'" in check.reason


def test_an_edited_line_that_became_blank_says_so(repo: GitRepo) -> None:
    citation = cite(repo)
    lines = list(APP)
    lines[2] = ""
    repo.write_lines("src/app.py", lines)
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == "line 3 is blank"


def test_a_deleted_line_is_stale_and_says_it_was_deleted(repo: GitRepo) -> None:
    citation = cite(repo, 7, "return None")
    repo.write_lines("src/app.py", APP[:3])
    repo.commit("shrink")
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == "line 7 was deleted"


def test_without_history_a_line_past_the_end_of_a_shrunk_file_is_stale(repo: GitRepo) -> None:
    citation = Citation("src/app.py", 7, snippet="return None")  # no verified stamp
    repo.write_lines("src/app.py", APP[:3])
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == "line 7 is past the end of src/app.py (3 lines)"


def test_an_edited_line_below_inserted_lines_is_quoted_where_it_is_now(repo: GitRepo) -> None:
    citation = cite(repo)
    repo.write_lines("src/app.py", ["# header", *(s.replace("v2", "v3") for s in APP)])
    repo.commit("header and bump")
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == "line 3 changed: it is line 4 now, which reads `API_VERSION = 'v3'`"


def test_an_edited_range_below_inserted_lines_quotes_its_changed_line(repo: GitRepo) -> None:
    citation = cite(repo, 5, BODY, end_line=7)
    lines = ["# header", "# more", *APP]
    lines[7] = "    print(API_VERSION, flush=True)"
    repo.write_lines("src/app.py", lines)
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == (
        "line 6 changed: it is line 8 now, which reads `print(API_VERSION, flush=True)`"
    )


# -- moved ----------------------------------------------------------------------


def test_lines_inserted_above_make_the_citation_moved_with_its_current_line(
    repo: GitRepo,
) -> None:
    citation = cite(repo)
    repo.write_lines("src/app.py", ["# header", "# more header", *APP])
    repo.commit("add a header")
    [check] = repo.verify(citation)
    assert check.status is Verdict.MOVED
    assert (check.current_path, check.current_line) == ("src/app.py", 5)
    assert check.reason == "found at line 5 (was 3)"
    assert not check.status.failing


def test_lines_deleted_above_move_the_citation_up(repo: GitRepo) -> None:
    citation = cite(repo, 6, "print(API_VERSION)")
    repo.write_lines("src/app.py", APP[2:])
    [check] = repo.verify(citation)
    assert check.status is Verdict.MOVED
    assert check.current_line == 4


# -- missing --------------------------------------------------------------------


def test_a_deleted_file_is_missing(repo: GitRepo) -> None:
    citation = cite(repo)
    repo.git("rm", "-q", "src/app.py")
    repo.commit("remove app")
    [check] = repo.verify(citation)
    assert check.status is Verdict.MISSING
    assert check.reason == "src/app.py not found"
    assert check.renamed_to is None
    assert check.current_path is None and check.current_line is None


def test_a_file_deleted_from_the_working_tree_only_is_missing(repo: GitRepo) -> None:
    citation = cite(repo)
    (repo.root / "src/app.py").unlink()
    [check] = repo.verify(citation)
    assert check.status is Verdict.MISSING


# -- ranges ---------------------------------------------------------------------


def test_a_range_whose_lines_still_hold_the_snippet_is_valid(repo: GitRepo) -> None:
    [check] = repo.verify(cite(repo, 5, BODY, end_line=7))
    assert check.status is Verdict.VALID
    assert (check.current_line, check.current_end_line) == (5, 7)


def test_a_range_moved_down_reports_its_new_start_and_end(repo: GitRepo) -> None:
    citation = cite(repo, 5, BODY, end_line=7)
    repo.write_lines("src/app.py", [*APP[:4], "X = 1", "Y = 2", *APP[4:]])
    repo.commit("add constants")
    [check] = repo.verify(citation)
    assert check.status is Verdict.MOVED
    assert (check.current_line, check.current_end_line) == (7, 9)


def test_a_range_that_starts_on_a_blank_line_moves_with_its_blank_line(repo: GitRepo) -> None:
    """A mention's snippet is the cited lines as git had them, a leading blank line
    included (fizic37/Delcampe: `tracking_database.R` lines 369-373, a blank line then
    `# Build query`). When only a search of the file can place it (the file rewritten
    whole: its line endings changed), the range starts on the blank line before the
    text, not on the text."""
    citation = cite(repo, 4, "\n" + BODY, end_line=7)
    repo.write("src/app.py", "".join(f"{line}\r\n" for line in ["# header", *APP]))
    repo.commit("line endings")
    [check] = repo.verify(citation)
    assert (check.status, check.current_line, check.current_end_line) == (Verdict.MOVED, 5, 8)


def test_a_range_with_one_changed_line_is_stale(repo: GitRepo) -> None:
    citation = cite(repo, 5, BODY, end_line=7)
    lines = list(APP)
    lines[5] = "    print(API_VERSION, flush=True)"
    repo.write_lines("src/app.py", lines)
    repo.commit("flush")
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == "line 6 now reads `print(API_VERSION, flush=True)`"


def test_a_range_cut_short_by_the_end_of_the_file_is_stale(repo: GitRepo) -> None:
    citation = cite(repo, 5, BODY, end_line=7)
    repo.write_lines("src/app.py", APP[:6])
    [check] = repo.verify(citation)
    assert check.status is Verdict.STALE
    assert check.reason == "line 7 is past the end of src/app.py (6 lines)"


def test_a_range_whose_snippet_is_written_on_one_line_is_valid_and_can_move(
    repo: GitRepo,
) -> None:
    """A serena table cell holds no newline: a range's snippet is flattened to one line."""
    citation = cite(repo, 5, BODY, end_line=7)
    table = repo.memory("table", [citation], fmt="serena")
    assert "`def main() -> None: print(API_VERSION) return None`" in table.read_text()
    service = repo.service()
    [check] = service.verify("table").results[0].checks
    assert (check.status, check.current_line) == (Verdict.VALID, 5)
    repo.write_lines("src/app.py", ["# header", *APP])
    [check] = repo.service().verify("table").results[0].checks
    assert (check.status, check.current_line, check.current_end_line) == (Verdict.MOVED, 6, 8)


def test_a_one_line_snippet_on_a_range_pins_the_range_to_its_first_line(repo: GitRepo) -> None:
    citation = cite(repo, 5, "def main()", end_line=7)
    repo.write_lines("src/app.py", ["# header", "# more", *APP])
    [check] = repo.verify(citation)
    assert (check.status, check.current_line) == (Verdict.MOVED, 7)


def test_a_range_without_snippet_past_the_end_is_out_of_range(repo: GitRepo) -> None:
    citation = Citation("src/app.py", 5, 20, verified=repo.stamp())
    [check] = repo.verify(citation)
    assert check.status is Verdict.OUT_OF_RANGE
    assert check.reason == "line 20 is past the end of src/app.py (7 lines)"
    assert check.current_line is None
    assert not check.anchored


def test_a_line_without_snippet_past_the_end_is_out_of_range(repo: GitRepo) -> None:
    [check] = repo.verify(Citation("src/app.py", 8))
    assert check.status is Verdict.OUT_OF_RANGE
    assert check.reason == "line 8 is past the end of src/app.py (7 lines)"


def test_a_range_without_snippet_inside_the_file_is_valid_but_unanchored(repo: GitRepo) -> None:
    [check] = repo.verify(Citation("src/app.py", 5, 7))
    assert check.status is Verdict.VALID
    assert (check.current_line, check.current_end_line) == (5, 7)
    assert check.reason == "no snippet to compare"
    assert not check.anchored


def test_a_whole_file_citation_is_valid_while_the_file_exists(repo: GitRepo) -> None:
    [check] = repo.verify(Citation("src/app.py"))
    assert check.status is Verdict.VALID
    assert not check.anchored


def test_a_snippet_without_a_line_is_found_anywhere_in_the_file(repo: GitRepo) -> None:
    [check] = repo.verify(Citation("src/app.py", snippet="print(API_VERSION)"))
    assert check.status is Verdict.VALID
    assert check.current_line == 6
    [gone] = repo.verify(Citation("src/app.py", snippet="print(OTHER)"))
    assert gone.status is Verdict.STALE
    assert gone.reason == "snippet not in file"


# -- invalid: binary, outside the root ------------------------------------------


def test_a_binary_file_is_invalid(repo: GitRepo) -> None:
    repo.write("assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    repo.commit("logo")
    [check] = repo.verify(Citation("assets/logo.png", 1, snippet="PNG"))
    assert check.status is Verdict.INVALID
    assert check.reason == "binary file"
    assert check.status.failing


def test_a_directory_is_invalid(repo: GitRepo) -> None:
    [check] = repo.verify(Citation("src", 1, snippet="x"))
    assert check.status is Verdict.INVALID
    assert check.reason == "is a directory"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the repository holding the very text the citations look for."""
    secret = tmp_path / "outside" / "secret.py"
    secret.parent.mkdir()
    secret.write_text("API_VERSION = 'v2'\n", encoding="utf-8")
    return secret


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file the repository reader opens."""
    seen: list[str] = []

    def spy(file: object, *args: object, **kwargs: object) -> object:
        seen.append(os.path.realpath(os.fspath(file)))  # type: ignore[arg-type]
        return builtins.open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("memory_enhancement.verify.repo.open", spy, raising=False)
    return seen


def test_a_symlink_out_of_the_root_is_invalid_and_never_read(
    repo: GitRepo, outside: Path, opened: list[str]
) -> None:
    (repo.root / "src/secret.py").symlink_to(outside)
    [check] = repo.verify(cite(repo, 1, path="src/secret.py"))
    assert check.status is Verdict.INVALID
    assert check.reason == "path leaves the repository root"
    assert str(outside) not in opened


def test_a_symlinked_folder_out_of_the_root_is_invalid(
    repo: GitRepo, outside: Path, opened: list[str]
) -> None:
    (repo.root / "vendor").symlink_to(outside.parent, target_is_directory=True)
    [check] = repo.verify(cite(repo, 1, path="vendor/secret.py"))
    assert check.status is Verdict.INVALID
    assert str(outside) not in opened


def test_a_symlink_that_stays_inside_the_root_is_followed(repo: GitRepo) -> None:
    (repo.root / "src/alias.py").symlink_to("app.py")
    [check] = repo.verify(cite(repo, path="src/alias.py"))
    assert check.status is Verdict.VALID


@pytest.mark.parametrize(
    "path", ["../outside/secret.py", "src/../../outside/secret.py", "OUTSIDE_ABSOLUTE"]
)
def test_a_path_that_leaves_the_root_is_invalid_and_never_read(
    repo: GitRepo, outside: Path, opened: list[str], path: str
) -> None:
    if path == "OUTSIDE_ABSOLUTE":
        path = str(outside)
    [check] = repo.verify(cite(repo, 1, path=path))
    assert check.status is Verdict.INVALID
    assert check.reason == "path leaves the repository root"
    assert str(outside) not in opened


# -- URLs and unanchored citations --------------------------------------------


def test_a_url_citation_is_skipped_without_network(repo: GitRepo) -> None:
    [check] = repo.verify(Citation("https://example.invalid/docs"))
    assert check.status is Verdict.SKIPPED
    assert check.reason == "URL not checked"
    assert check.anchored
    assert not check.status.failing


def test_a_citation_without_snippet_is_unanchored(repo: GitRepo) -> None:
    [check] = repo.verify(Citation("src/app.py", 3))
    assert check.status is Verdict.VALID
    assert not check.anchored


def test_an_unanchored_citation_cannot_notice_that_its_line_changed(repo: GitRepo) -> None:
    citation = Citation("src/app.py", 3, verified=repo.stamp())
    repo.write_lines("src/app.py", [line.replace("'v2'", "'v3'") for line in APP])
    [check] = repo.verify(citation)
    assert check.status is Verdict.VALID  # which is why it is reported as unanchored
    assert not check.anchored


# -- the memory as a whole ----------------------------------------------------


def test_a_memory_is_valid_when_no_citation_fails_and_moved_ones_count_as_good(
    repo: GitRepo,
) -> None:
    citations = [cite(repo), cite(repo, 6, "print(API_VERSION)"), Citation("https://x.invalid/")]
    repo.write_lines("src/app.py", ["# header", *APP])
    result = repo.verify_memory(citations)
    assert [c.status for c in result.checks] == [Verdict.MOVED, Verdict.MOVED, Verdict.SKIPPED]
    assert result.valid
    assert result.confidence == 1.0


def test_confidence_is_the_share_of_checked_citations_that_are_valid_or_moved(
    repo: GitRepo,
) -> None:
    citations = [
        cite(repo),  # moved
        cite(repo, 7, "return None"),  # moved
        cite(repo, 6, "print(API_VERSION)"),  # stale
        Citation("src/gone.py", 1, snippet="x"),  # missing
        Citation("https://x.invalid/"),  # skipped: not counted
    ]
    lines = ["# header", *APP]
    lines[6] = "    print(API_VERSION, end='')"
    repo.write_lines("src/app.py", lines)
    result = repo.verify_memory(citations)
    statuses = [c.status for c in result.checks]
    assert statuses == [
        Verdict.MOVED,
        Verdict.MOVED,
        Verdict.STALE,
        Verdict.MISSING,
        Verdict.SKIPPED,
    ]
    assert not result.valid
    assert result.confidence == 0.5


def test_a_memory_with_only_url_citations_has_no_confidence_figure(repo: GitRepo) -> None:
    result = repo.verify_memory([Citation("https://x.invalid/")])
    assert result.valid
    assert result.confidence is None


@pytest.mark.parametrize(
    ("status", "failing"),
    [
        (Verdict.VALID, False),
        (Verdict.MOVED, False),
        (Verdict.SKIPPED, False),
        (Verdict.STALE, True),
        (Verdict.MISSING, True),
        (Verdict.OUT_OF_RANGE, True),
        (Verdict.INVALID, True),
    ],
)
def test_which_verdicts_make_a_memory_invalid(status: Verdict, failing: bool) -> None:
    assert status.failing is failing
