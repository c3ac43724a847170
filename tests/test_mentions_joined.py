"""Line mentions joined to their path by a word (core/prose_mentions.py, session 25): `app.py
at line 42`, `app.py, around line 400-500`, `(line ~960)`, `app.R - Lines 955-1089`, and the
possessives of Japanese, Chinese and Korean notes, `app.pyの30行目`, `app.py 的第 30-40 行`,
`app.rs의 라인 7`, with the Korean ordinal `app.rs 30번째 줄`. Shapes from real stores
(bench/mentions/survey_forms.py, docs/benchmarks.md "Session 25"); the lines here are written
for the tests. Each is judged from git like `app.py:42`, and `--fix` rewrites its digits only
(`~` and the words stay)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import RunCli
from memory_enhancement.core.mentions import find_mentions, may_mention
from verify_support import STORE, GitRepo, code, coded


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # (path, start, end, the digits as written)
        ("**Location:** `db/repo.py` (line ~960)", ("db/repo.py", 960, None, ["960"])),
        ("**Location:** `db/repo.py` (lines ~660-919)", ("db/repo.py", 660, 919, ["660", "919"])),
        ("// In ChatClient.tsx, around line 400-500", ("ChatClient.tsx", 400, 500, ["400", "500"])),
        ("error in `app/schemas.py` at line 41", ("app/schemas.py", 41, None, ["41"])),
        ("the hook in `hooks.ts` near line 12 reads it", ("hooks.ts", 12, None, ["12"])),
        ("set in config.py on lines 3–5", ("config.py", 3, 5, ["3", "5"])),
        (
            "- **File:** `R/ebay_api.R` - Lines 955-1089",
            ("R/ebay_api.R", 955, 1089, ["955", "1089"]),
        ),
        ("- `R/app_ui.R` - Line 23: the title", ("R/app_ui.R", 23, None, ["23"])),
        ("`R/card_processor.R` ~line 417", ("R/card_processor.R", 417, None, ["417"])),
        ("**Line 1114** in `R/stamp_export.R` was", ("R/stamp_export.R", 1114, None, ["1114"])),
        ("**File: `R/app_ui.R`** (Lines 79-135)", ("R/app_ui.R", 79, 135, ["79", "135"])),
        ("- **結果**: `widget_ui.py`の Line 22 に生成", ("widget_ui.py", 22, None, ["22"])),
        ("`src/auth.ts` の 42 行目を参照", ("src/auth.ts", 42, None, ["42"])),
        ("main.pyの30-40行目で初期化", ("main.py", 30, 40, ["30", "40"])),
        ("`src/auth.ts` 42～58 行目付近", ("src/auth.ts", 42, 58, ["42", "58"])),
        ("在 runner.py 的第 1903-1912 行之间添加", ("runner.py", 1903, 1912, ["1903", "1912"])),
        ("修改了 app.py的第1245行", ("app.py", 1245, None, ["1245"])),
        ("`engine.rs`의 라인 77에서 처리", ("engine.rs", 77, None, ["77"])),
        ("`engine.rs` 30번째 줄을 고친다", ("engine.rs", 30, None, ["30"])),
        ("engine.rs의 12-14번째 줄", ("engine.rs", 12, 14, ["12", "14"])),
    ],
)
def test_a_line_joined_to_its_path_by_a_word_is_a_mention_with_its_digits_marked(
    line: str, expected: tuple[str, int, int | None, list[str]]
) -> None:
    assert may_mention(line.encode())
    (m,) = find_mentions(f"# Notes\n\n{line}\n")
    digits = [m.text[slice(*m.start_at)]] + ([m.text[slice(*m.end_at)]] if m.end_at else [])
    assert (m.path, m.start, m.end, digits) == expected
    assert line[m.column : m.column + len(m.text)] == m.text


def test_the_later_items_of_an_approximate_list_are_mentions_too() -> None:
    found = find_mentions("- **Secondary**: `R/export.R` lines ~261 and ~432\n")
    assert [(m.text, m.start, m.form) for m in found] == [
        ("R/export.R` lines ~261", 261, "words"),
        ("432", 432, "list"),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "- `model_factory_steps.py` (~470 lines)",  # a length: the number before the word
        "`annotation_worker.py` の359行が1行に圧縮",  # 359 lines, not line 359
        "`engine.rs`의 300행을 줄였다",  # `N행` after a path is as often a length
        "keyword_volume.py 的第二处改动",  # the second change, no line
        "`app.py` at 300 lines it is too long",
        "`app.py` at line level granularity",
        "`app.py` 두 번째 줄",  # an ordinal in words
        "- `R/face.R` - Lines 376→395 (Python path)",  # a move, not a range
        "`src/app.py` - Phase A-2 test (line 450 added)",  # words between the dash and line
    ],
)
def test_lengths_and_ordinals_in_words_near_a_path_are_not_line_numbers(line: str) -> None:
    """(A backticked path there is a mention of the whole file, and no more.)"""
    assert [m.start for m in find_mentions(f"# Notes\n\n{line}\n") if m.start is not None] == []


NOTE = [
    "# Notes",
    "",
    "- `src/app.py` (line ~10) sets it up",  # moved
    "- fails in src/app.py at line 20",  # stale
    "- `src/app.py`の 5-6行目で初期化",  # moved
    "- 在 src/app.py 的第 14 行",  # moved
    "- `src/app.py`의 라인 16에서",  # moved
    "- `src/app.py` 25번째 줄",  # moved
    "- `src/app.py` - Lines 7-8: setup",  # moved
    "- **Line 12** in `src/app.py` ~line 12",  # moved, twice
]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return coded(tmp_path / "project", {"src/app.py": 30})


def three_lines_on_top(repo: GitRepo) -> None:
    app = code("src/app.py", 30)
    app[19] = "src_app_py_20 = 'changed'"
    repo.write_lines("src/app.py", ["# a", "# b", "# c", *app])
    repo.commit("refactor")


def test_each_joined_form_is_judged_from_history_like_the_colon_form(repo: GitRepo) -> None:
    repo.write_lines(f"{STORE}/notes.md", NOTE)
    repo.commit("memory")
    three_lines_on_top(repo)
    service = repo.service()
    result = service.verify("notes").results[0]
    got = {
        c.mention.text: (c.status.value, c.current_line, c.current_end_line)
        for c in result.mentions
        if c.mention is not None
    }
    stale = got["src/app.py at line 20"]
    assert got == {
        "src/app.py` (line ~10": ("moved", 13, None),
        "src/app.py at line 20": ("stale", stale[1], None),
        "src/app.py`の 5-6行目": ("moved", 8, 9),
        "src/app.py 的第 14 行": ("moved", 17, None),
        "src/app.py`의 라인 16": ("moved", 19, None),
        "src/app.py` 25번째 줄": ("moved", 28, None),
        "src/app.py` - Lines 7-8": ("moved", 10, 11),
        "Line 12** in `src/app.py": ("moved", 15, None),
        "src/app.py` ~line 12": ("moved", 15, None),
    }


def test_fix_rewrites_the_digits_of_a_joined_form_and_keeps_the_words_and_tilde(
    repo: GitRepo, run_cli: RunCli
) -> None:
    file = repo.write_lines(f"{STORE}/notes.md", NOTE)
    repo.commit("memory")
    three_lines_on_top(repo)
    done: Any = run_cli(["verify", "notes", "--fix", "--dir", str(repo.store_root)], cwd=repo.root)
    assert "fixed 8 mentions in notes" in done.stdout
    assert file.read_text(encoding="utf-8").splitlines()[2:] == [
        "- `src/app.py` (line ~13) sets it up",
        "- fails in src/app.py at line 20",  # stale: left for a person
        "- `src/app.py`の 8-9行目で初期化",
        "- 在 src/app.py 的第 17 行",
        "- `src/app.py`의 라인 19에서",
        "- `src/app.py` 28번째 줄",
        "- `src/app.py` - Lines 10-11: setup",
        "- **Line 15** in `src/app.py` ~line 15",
    ]
