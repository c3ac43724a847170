"""Mentions that name their line in words (core/prose_mentions.py), in the shapes found in
real Serena stores: `` `app.go` lines 28-76 ``, `app.py (L12)`, `Line 316 of app.py`,
`app.py（行12-14付近）`, `app.md: 3行目に`. Each is found with the characters of its digits,
judged from git history like `app.py:12`, and `--fix` rewrites only those digits; numbers
in ordinary prose are not taken for line numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from conftest import RunCli
from memory_enhancement.core.mentions import find_mentions, may_mention
from memory_enhancement.core.prose_mentions import european, may_hold
from memory_enhancement.core.verdicts import Verdict
from verify_support import STORE, GitRepo, code, coded

# -- the grammar ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # (path, start, end, form, the digits as written), one per mention of the line
        (
            "- **Code location**: `bhandler/logout_handler.go` lines 28-76",
            [("bhandler/logout_handler.go", 28, 76, "words", ["28", "76"])],
        ),
        (
            "**File**: `src/db/repo.py` (lines 71-86)",
            [("src/db/repo.py", 71, 86, "words", ["71", "86"])],
        ),
        ("- `src/api.py` (line 684)", [("src/api.py", 684, None, "words", ["684"])]),
        (
            "- `ai_service.py`: Lines 316-339 (ResponseDict)",
            [("ai_service.py", 316, 339, "words", ["316", "339"])],
        ),
        (
            "1. **section_builders.py** (Lines 1-443)",
            [("section_builders.py", 1, 443, "words", ["1", "443"])],
        ),
        ("- COST-GOVERNANCE.md line 155", [("COST-GOVERNANCE.md", 155, None, "words", ["155"])]),
        ("`forwarders.tex` lines 494–503", [("forwarders.tex", 494, 503, "words", ["494", "503"])]),
        (
            "`x.ts` (lines 117-127, 219, 231)",
            [
                ("x.ts", 117, 127, "words", ["117", "127"]),
                ("x.ts", 219, None, "list", ["219"]),
                ("x.ts", 231, None, "list", ["231"]),
            ],
        ),
        (
            "`x.py` (lines 255 and 272). Originally",
            [("x.py", 255, None, "words", ["255"]), ("x.py", 272, None, "list", ["272"])],
        ),
        (  # the `and` after a comma's item no longer makes that item prose: 12 and 14 were lost
            "`x.py` (lines 10, 12 and 14)",
            [
                ("x.py", 10, None, "words", ["10"]),
                ("x.py", 12, None, "list", ["12"]),
                ("x.py", 14, None, "list", ["14"]),
            ],
        ),
        (
            "`x.py` lines 10-12, 14-16 and 20",
            [
                ("x.py", 10, 12, "words", ["10", "12"]),
                ("x.py", 14, 16, "list", ["14", "16"]),
                ("x.py", 20, None, "list", ["20"]),
            ],
        ),
        (  # a range followed by a word is prose whole: it was read as line 14
            "`x.py` lines 10-12, 14-16 changed",
            [("x.py", 10, 12, "words", ["10", "12"])],
        ),
        (
            "Line 316 of `generation.py` hardcoded it",
            [("generation.py", 316, None, "words", ["316"])],
        ),
        (
            "parsing (lines 695-718 in `.github/action.yml`) uses",
            [(".github/action.yml", 695, 718, "words", ["695", "718"])],
        ),
        (
            "- `src/utils/config.py` L112-113 から削除",
            [("src/utils/config.py", 112, 113, "l_number", ["112", "113"])],
        ),
        (
            "`src/widgets/preview.py` (L125-155)",
            [("src/widgets/preview.py", 125, 155, "l_number", ["125", "155"])],
        ),
        (
            "**1.2 db_manager.py L676, L732 (Result)**",
            [
                ("db_manager.py", 676, None, "l_number", ["676"]),
                ("db_manager.py", 732, None, "list", ["732"]),
            ],
        ),
        (
            "**ファイル**: `src/db/repo.py`（行1258-1298付近）",
            [("src/db/repo.py", 1258, 1298, "cjk_words", ["1258", "1298"])],
        ),
        (
            "   - investigation.md: 3行目に `context: fork` 追加",
            [("investigation.md", 3, None, "cjk_words", ["3"])],
        ),
        (  # Chinese: right after the path (1morr/FMP)
            "- `track_thumbnail.dart` 第 69-84 行本地封面检测逻辑",
            [("track_thumbnail.dart", 69, 84, "cjk_words", ["69", "84"])],
        ),
        ("**位置**: `pipelines.py` 第264行", [("pipelines.py", 264, None, "cjk_words", ["264"])]),
        (  # and its list (zxzvsdcj/ququ 0cb4005, control_panel_bugfix: `和第244行` was unread)
            "**位置**：`src/hooks/useModelStatus.js` 第233-237行和第244行",
            [
                ("src/hooks/useModelStatus.js", 233, 237, "cjk_words", ["233", "237"]),
                ("src/hooks/useModelStatus.js", 244, None, "list", ["244"]),
            ],
        ),
        (
            "新增的 CSS 属性（`index.css` 第35行、第39～42行）：",
            [
                ("index.css", 35, None, "cjk_words", ["35"]),
                ("index.css", 39, 42, "list", ["39", "42"]),
            ],
        ),
        # Korean writes the English word after the path (forms of real Korean memories,
        # found with `find_string ".py 라인"`; these lines are written for the test).
        (
            "1. **manager.py 라인 229-233**: 예외가 나도 계속 진행",
            [("manager.py", 229, 233, "cjk_words", ["229", "233"])],
        ),
        (
            "오류 수정(engine.py 라인938~982), 테스트 추가",
            [("engine.py", 938, 982, "cjk_words", ["938", "982"])],
        ),
        ("`solver.py` 라인 1603에서 고정된다", [("solver.py", 1603, None, "cjk_words", ["1603"])]),
    ],
)
def test_each_form_found_in_real_stores_is_a_mention_with_its_digits_marked(
    line: str, expected: list[tuple[str, int, int | None, str, list[str]]]
) -> None:
    assert may_mention(line.encode())
    found = find_mentions(f"# Notes\n\n{line}\n")
    got = []
    for m in found:
        digits = [m.text[slice(*m.start_at)]] + ([m.text[slice(*m.end_at)]] if m.end_at else [])
        got.append((m.path, m.start, m.end, m.form, digits))
        assert line[m.column : m.column + len(m.text)] == m.text
        assert m.line == 3
    assert got == expected
    # The line's own hint (prose.may_hold) takes every line holding a form in words.
    worded = [m for m in found if m.form in ("words", "l_number", "cjk_words", "list")]
    assert not worded or may_hold(line, european(line.encode()))


@pytest.mark.parametrize(
    "line",
    [
        "- `src/app.py` (120 lines)",  # a length
        "Refactored app.py: 3 lines changed, 2 files",
        "app.py has 300 lines of code",
        "- Line 115: `main_workspace_window.py` → `main_window.py`",  # a line of another file
        "`src/app.py`（394行）",  # a length in Japanese
        "`annotation_worker.py` の359行が1行に圧縮され",  # 359 lines, not line 359
        "`core/loaders/onnx_loader.py` (150-250行) — new file",  # a size estimate
        "`scripts/audit_shell.ps1` 第 3 项从矩阵提取",  # an item, not a line
        "`index.noun` 第 3 列非数字",  # a column
        "`app.py` 200줄, `x.py` 30행 정도",  # lengths in Korean
        "`app.py` 라인 수가 많다",  # the word, no number
        "`src/app.py` - Phase A-2 test (line 450 added)",  # words between: not close enough
        "`cache.py` L2 cache and `model.py` L1 norm",  # an L-number followed by a word
        "`changed_files` diffs `base_ref...HEAD` (line 150)",  # a git range, not a file
        "see example.com line 3, and v1.2 line 4",
        "In the 1.5 lines of app.py nothing",
    ],
)
def test_numbers_in_ordinary_prose_are_not_line_numbers(line: str) -> None:
    """(A backticked path there is a mention of the whole file, and no more.)"""
    assert [m.start for m in find_mentions(f"# Notes\n\n{line}\n") if m.start is not None] == []


@pytest.mark.parametrize(
    ("line", "digits"),
    [
        ("`host.cpp` の 88 行目から 103 行目までをループにする", ["88", "103"]),
        ("`app.py` の10行目〜12行目", ["10", "12"]),
        ("`engine.py` 라인 938~라인 982", ["938", "982"]),
        ("`engine.py` 라인 938부터 982까지", ["938", "982"]),
        ("`app.py` 第10行到第12行", ["10", "12"]),
    ],
)
def test_a_range_that_names_the_line_word_or_its_from_twice_marks_both_numbers(
    line: str, digits: list[str]
) -> None:
    """Read as its first line alone, such a range was moved by `--fix` at one end only
    (`88 行目から 103 行目` became `91 行目から 103 行目`)."""
    (m,) = find_mentions(f"# Notes\n\n{line}\n")
    assert [m.text[slice(*m.start_at)], m.text[slice(*m.end_at)] if m.end_at else None] == digits


def test_a_word_form_touching_a_colon_mention_is_not_counted_twice() -> None:
    found = find_mentions("see `src/app.py:10` (line 10) and src/app.py:12\n")
    assert [(m.text, m.form) for m in found] == [
        ("src/app.py:10", "colon"),
        ("src/app.py:12", "colon"),
    ]


# -- verdicts from history --------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return coded(tmp_path / "project", {"src/app.py": 30, "lib/old.py": 10})


NOTE = [
    "# Notes",
    "",
    "- **Code location**: `src/app.py` lines 10-12",  # moved
    "- `src/app.py` (line 20) changed since",  # stale
    "- Line 5 of `src/app.py` is the setup",  # moved
    "- `src/app.py` (L7, L8-9)",  # moved, a list
    "- `src/app.py`（行25-26付近）",  # moved
    "- lib/old.py: 3行目に追加",  # renamed
    "- `src/app.py` line 99",  # out of range when written
    "- `src/app.py` 第 14-15 行的初始化",  # moved
    "- src/app.py 라인 16~17에서 초기화",  # moved
]


def move_code(repo: GitRepo) -> None:
    app = code("src/app.py", 30)
    app[19] = "src_app_py_20 = 'changed'"
    repo.write_lines("src/app.py", ["# a", "# b", "# c", *app])
    repo.commit("refactor")
    repo.mv("lib/old.py", "lib/new.py")
    repo.commit("rename")


def test_word_forms_are_judged_from_history_like_the_colon_form(repo: GitRepo) -> None:
    repo.write_lines(f"{STORE}/notes.md", NOTE)
    repo.commit("memory")
    move_code(repo)
    service = repo.service()
    result = service.verify("notes").results[0]
    got = {
        c.mention.text: (c.status.value, c.current_line, c.current_end_line, c.renamed_to)
        for c in result.mentions
        if c.mention is not None
    }
    assert got == {
        "src/app.py` lines 10-12": ("moved", 13, 15, None),
        "src/app.py` (line 20": ("stale", got["src/app.py` (line 20"][1], None, None),
        "Line 5 of `src/app.py": ("moved", 8, None, None),
        "src/app.py` (L7": ("moved", 10, None, None),
        "8-9": ("moved", 11, 12, None),
        "src/app.py`（行25-26": ("moved", 28, 29, None),
        "lib/old.py: 3行目": ("moved", 3, None, "lib/new.py"),
        "src/app.py` line 99": ("out_of_range", None, None, None),
        "src/app.py` 第 14-15 行": ("moved", 17, 18, None),
        "src/app.py 라인 16~17": ("moved", 19, 20, None),
    }
    assert all(c.status is not Verdict.UNCHECKED for c in result.mentions)


# -- --fix and --dry-run ----------------------------------------------------------------------


@pytest.fixture
def cli(repo: GitRepo, run_cli: RunCli) -> Any:
    def run(*args: str) -> Result:
        return run_cli([*args, "--dir", str(repo.store_root)], cwd=repo.root)

    return run


def test_fix_rewrites_only_the_digits_of_a_word_form_and_leaves_the_words(
    repo: GitRepo, cli: Any
) -> None:
    file = repo.write_lines(f"{STORE}/notes.md", NOTE)
    repo.commit("memory")
    move_code(repo)
    before = file.read_bytes()
    dry = cli("verify-all", "--fix", "--dry-run")
    assert file.read_bytes() == before  # a dry run writes nothing
    assert "-- **Code location**: `src/app.py` lines 10-12" in dry.stdout
    assert "+- **Code location**: `src/app.py` lines 13-15" in dry.stdout
    done = cli("verify", "notes", "--fix")
    assert "fixed 8 mentions in notes" in done.stdout
    expected = [
        "# Notes",
        "",
        "- **Code location**: `src/app.py` lines 13-15",
        "- `src/app.py` (line 20) changed since",  # stale: left for a person
        "- Line 8 of `src/app.py` is the setup",
        "- `src/app.py` (L10, L11-12)",
        "- `src/app.py`（行28-29付近）",
        "- lib/new.py: 3行目に追加",  # renamed: the path written in full, the words kept
        "- `src/app.py` line 99",
        "- `src/app.py` 第 17-18 行的初始化",
        "- src/app.py 라인 19~20에서 초기화",
    ]
    assert file.read_text(encoding="utf-8") == "\n".join(expected) + "\n"
    again = json.loads(cli("verify", "notes", "--json").stdout)
    statuses = {m["mention"]: m["status"] for m in again["mentions"]}
    assert statuses["src/app.py` lines 13-15"] == "valid"
    assert statuses["Line 8 of `src/app.py"] == "valid"
    assert statuses["lib/new.py: 3行目"] == "valid"


def test_verify_all_reports_a_store_whose_only_mentions_are_in_words(
    repo: GitRepo, cli: Any
) -> None:
    repo.write_lines(f"{STORE}/progress.md", ["# Progress", "", "- `src/app.py` lines 28-30"])
    repo.commit("memory")
    data = json.loads(cli("verify-all", "--json").stdout)
    checks = [m for r in data for m in r.get("mentions", [])]
    assert [(m["mention"], m["status"], m["form"]) for m in checks] == [
        ("src/app.py` lines 28-30", "valid", "words")
    ]


def test_fix_moves_both_numbers_of_a_list_written_before_its_path(repo: GitRepo, cli: Any) -> None:
    """`Lines 10, 20 of `app.py``: the first mention's text spans the list item `20`, so
    the item's edit and the first one's overlapped and one of them was dropped."""
    memory = repo.write_lines(
        f"{STORE}/notes.md", ["# Notes", "", "- Lines 10, 20 of `src/app.py`"]
    )
    repo.commit("memory")
    repo.write_lines("src/app.py", ["# a", "# b", *code("src/app.py", 30)])
    repo.commit("two lines on top")
    done = cli("verify", "notes", "--fix")
    assert done.exit_code in (0, 1), done.output
    assert memory.read_text(encoding="utf-8").splitlines()[2] == "- Lines 12, 22 of `src/app.py`"


def test_the_text_report_shows_a_mention_in_words_as_path_and_lines(
    repo: GitRepo, cli: Any
) -> None:
    """Quoting the words (`src/app.py` lines 10-12`) showed a backtick astray; the memory
    line it sits on is printed beside it, so `path:lines` loses nothing."""
    repo.write_lines(f"{STORE}/notes.md", NOTE)
    repo.commit("memory")
    move_code(repo)
    lines = cli("verify-all").stdout.splitlines()
    shown = [line.split(None, 3)[2:] for line in lines if line.lstrip().startswith("mention")]
    assert [
        "src/app.py:10-12",
        "(memory line 3) -> src/app.py:13-15  found at line 13 (was 10)",
    ] in shown
    assert ["src/app.py:5", "(memory line 5) -> src/app.py:8  found at line 8 (was 5)"] in shown
    assert [s[0] for s in shown].count("lib/old.py:3") == 1
    assert not any("`" in s[0] for s in shown)
