"""Paths written in bold (`**src/app.py**`, `__src/app.py__`) are file mentions as backticked
ones are: 142 of them over 121 fetched Serena stores, 131 naming files of their repository.
Real git repositories in temporary folders; `--fix` through the command line in a process of
its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_enhancement.core.file_mentions import FILE
from memory_enhancement.core.mentions import find_mentions, may_mention
from memory_enhancement.core.verdicts import Verdict
from verify_support import STORE, GitRepo, code, file_mention_checks, fixed_after_rename


def test_a_bold_span_that_is_a_path_with_a_folder_is_a_file_mention_and_nothing_else_is() -> None:
    text = "\n".join([
        "See **src/app/handler.py**, __lib/x_y.dart__ and **/docs/PRD.md** (from the root).",
        "Not: **package.json**, **Edit src/a.py**, **../up/x.py**, **github.com/o/r/a.md**,",
        "**~/x/y.md**, a__b/c.py__, **src/folder/**, **`src/tick.py`** (once, backticked).",
        "**File:** src/label.py; `a **src/in/span.py** b` is code",
        "```",
        "**src/in/code.py**",
        "```",
    ])  # fmt: skip
    found = [(m.line, m.column, m.text, m.rooted) for m in find_mentions(text) if m.form == FILE]
    assert found == [
        (1, 6, "src/app/handler.py", False),
        (1, 30, "lib/x_y.dart", False),
        (1, 52, "docs/PRD.md", True),
        (3, 47, "src/tick.py", False),
    ]
    assert may_mention(b"x **src/a.py** y") and may_mention(b"x __src/a.py__ y")
    assert not may_mention(b"**Note**: **src/x** and **a.py**, src/b.py")


def test_a_bold_path_with_its_lines_in_words_stays_one_line_mention() -> None:
    found = find_mentions("**R/ebay_api.R** (lines 671-824)\n")  # fizic37/delcampe's form
    said = [(m.form, m.path, m.start, m.end) for m in found]
    assert said == [("words", "R/ebay_api.R", 671, 824)]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    for name in ["src/app.py", "lib/old.py", "src/gone.py"]:
        repo.write_lines(name, code(name, 10))
    repo.commit("code")
    return repo


def test_a_bold_path_is_valid_moved_missing_or_skipped_as_git_tells(repo: GitRepo) -> None:
    repo.write_lines(f"{STORE}/notes.md", [
        "# Notes", "",
        "- **src/app.py**: there", "- **lib/old.py**: renamed since",
        "- __src/gone.py__: deleted since", "- **examples/demo.py**: never a file here",
    ])  # fmt: skip
    repo.commit("memory")
    repo.mv("lib/old.py", "lib/new.py")
    (repo.root / "src/gone.py").unlink()
    repo.commit("rename and delete")
    found = file_mention_checks(repo)
    assert {path: c.status for path, c in found.items()} == {
        "src/app.py": Verdict.VALID,
        "lib/old.py": Verdict.MOVED,
        "src/gone.py": Verdict.MISSING,
        "examples/demo.py": Verdict.SKIPPED,
    }
    assert found["lib/old.py"].renamed_to == "lib/new.py"


def test_fix_rewrites_only_the_path_of_a_renamed_bold_path_and_keeps_every_other_byte(
    repo: GitRepo,
) -> None:
    text = (
        "# Notes\r\n\r\n"
        "- **lib/old.py** and __lib/old.py__, **/lib/old.py** and `lib/old.py`  \r\n"
        "- 日本語: **lib/old.py**の説明\r\n"
        "no newline"
    )
    statuses = [status for _, status in fixed_after_rename(repo, text)]
    assert statuses == ["valid"] * 5, statuses
