"""A line named by a label under its file's label, the layout of bug reports and audits:

    **File**: `.agents/architecture/ADR-022-architecture-governance-split-criteria.md`
    **Line**: 264

(rjmurillo/ai-agents, MIT, corpus/ai-agents-memories/validation/; the same shape, `**File:**`
then `**Line:** 49816`, in Emasoft/fbfsvg-player at c525cbe2 `.serena/memories/bug_fixes.md`,
which has no licence, so its text is not copied). The path is on one line and the number on
another, so a reader going line by line missed it. Only a `Line` label right under a `File`
label (other labels between) is read, and a plural `Lines` only with a range or a list: alone,
`**Lines:** 388` under a file is as often its length."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from conftest import RunCli
from memory_enhancement.core.mentions import find_mentions, may_mention
from verify_support import STORE, GitRepo, code, coded


def found(lines: list[str]) -> list[tuple[str, int, int | None, str, str, int]]:
    text = "\n".join(["# Notes", "", *lines]) + "\n"
    assert may_mention(text.encode())
    out = []
    for m in find_mentions(text):
        row = text.splitlines()[m.line - 1]
        assert row[m.column : m.column + len(m.text)] == m.text  # where its digits are
        out.append((m.path, m.start, m.end, m.form, m.text, m.line))
    return out


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            ["**File**: `.agents/architecture/ADR-022.md`", "**Line**: 264"],
            [(".agents/architecture/ADR-022.md", 264, None, "label", "264", 4)],
        ),
        (
            ["**File:** `svg_input_samples/girl.fbf.svg`", "**Line:** 49816"],
            [("svg_input_samples/girl.fbf.svg", 49816, None, "label", "49816", 4)],
        ),
        (  # other labels between, a note after the number
            [
                "**Severity:** HIGH",
                "**File:** `apps/src/services/device.ts`",
                "**Function:** `listRecordings()`",
                "**Line:** 779 (start of `listRecordings()`)",
            ],
            [("apps/src/services/device.ts", 779, None, "label", "779", 6)],
        ),
        (  # a bulleted block, a range and a list
            ["- **FILE:** `src/repositories/PgLeadRepository.ts`", "- **LINES:** 59–70, 183"],
            [
                ("src/repositories/PgLeadRepository.ts", 59, 70, "label", "59–70", 4),
                ("src/repositories/PgLeadRepository.ts", 183, None, "list", "183", 4),
            ],
        ),
        (
            ["**File**: `src/main/java/shop/Order.java`  ", "**Lines**: 33-38"],
            [("src/main/java/shop/Order.java", 33, 38, "label", "33-38", 4)],
        ),
        (  # full-width colons, as a Japanese or Chinese input method types them: the file's
            # bytes were searched for `[:：]` as bytes, a class of single bytes, so the memory
            # was flagged as mentioning nothing and never verified
            ["**File：** `src/app.py`", "- **Line：** 12"],
            [("src/app.py", 12, None, "label", "12", 4)],
        ),
    ],
)
def test_a_line_label_under_a_file_label_is_a_mention_of_that_file(
    lines: list[str], expected: list[tuple[str, int, int | None, str, str, int]]
) -> None:
    assert found(lines) == expected


@pytest.mark.parametrize(
    "lines",
    [
        ["**File:** `app/compose/page.jsx`", "- **Lines:** 1,341"],  # a length
        ["**Path:** `src/flask/sessions.py`", "**Lines:** 388"],  # a length
        ["### 2.1 shared/__init__.py", "**Lines:** ~150"],  # no file label
        ["### Fix #58E (Threshold Increase)", "**Line:** 71"],  # no file named
        ["**File:** `src/app.py`", "", "**Line:** 12"],  # another paragraph
        ["**File:** `src/app.py`", "Some prose about it.", "**Line:** 12"],  # not a label
        ["**File:** `src/app.py`", "**Lines:** 768 -> ~350 (54% reduction)"],  # a count
        ["**File:** `src/app.py`", "**Coverage:** 80%", "**Line:** 95,707/95,887"],
        ["```yaml", "- path: config/app.yml", "  line: 3", "```"],  # configuration, not prose
    ],
)
def test_numbers_under_labels_that_are_not_a_files_line_are_not_mentions(
    lines: list[str],
) -> None:
    found = find_mentions("\n".join(["# Notes", "", *lines]) + "\n")
    assert [m for m in found if m.start is not None] == []  # a backticked path: the whole file


def test_the_path_and_line_keys_of_frontmatter_citations_are_not_a_labelled_mention() -> None:
    """The tool's own citation records (`- path: app/client.py` then `line: 11`) have the
    shape of the label form: read as one, every `add --citation` of a range also reported a
    mention of its first line (the README's demo showed it), and --fix rewrote the number."""
    text = "\n".join(
        [
            "---",
            "citations:",
            "  - path: app/client.py",
            "    line: 11",
            "    end_line: 14",
            "sources: [Looper.cpp:1162-1280]",
            "---",
            "# Retries",
            "**File:** `src/app.py`",
            "**Line:** 12",
        ]
    )
    for written in (text + "\n", "\ufeff" + text.replace("\n", "\r\n") + "\r\n"):
        got = [(m.path, m.start, m.end, m.form) for m in find_mentions(written)]
        assert got == [("Looper.cpp", 1162, 1280, "range"), ("src/app.py", 12, None, "label")]


def test_a_file_label_whose_line_names_its_own_lines_is_not_read_twice() -> None:
    got = found(["**File:** `src/lines.js` lines 1458-1911", "**Line:** 1500"])
    assert got == [("src/lines.js", 1458, 1911, "words", "src/lines.js` lines 1458-1911", 3)]


# -- judged and fixed like any mention ---------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return coded(tmp_path / "project", {"src/app.py": 30})


@pytest.fixture
def cli(repo: GitRepo, run_cli: RunCli) -> Any:
    def run(*args: str) -> Result:
        return run_cli([*args, "--dir", str(repo.store_root)], cwd=repo.root)

    return run


NOTE = [
    "# Bug",
    "",
    "**File:** `src/app.py`",
    "**Line:** 10",
    "",
    "- **File**: `src/app.py`",
    "- **Lines**: 20-21",
]


def test_a_labelled_line_is_judged_from_history_and_fixed_in_its_digits_only(
    repo: GitRepo, cli: Any
) -> None:
    memory = repo.write_lines(f"{STORE}/bug.md", NOTE)
    repo.commit("memory")
    repo.write_lines("src/app.py", ["# a", "# b", *code("src/app.py", 30)])
    repo.commit("two lines on top")
    data = json.loads(cli("verify", "bug", "--json").stdout)
    got = [(m["mention"], m["status"], m["current_line"], m["form"]) for m in data["mentions"]]
    assert got == [("10", "moved", 12, "label"), ("20-21", "moved", 22, "label")]
    text = cli("verify", "bug").stdout
    assert "mention moved        src/app.py:10 (memory line 4) -> src/app.py:12" in text
    done = cli("verify", "bug", "--fix")
    assert "fixed 2 mentions in bug" in done.stdout
    assert memory.read_text(encoding="utf-8").splitlines() == [
        *NOTE[:3], "**Line:** 12", "", NOTE[5], "- **Lines**: 22-23"
    ]  # fmt: skip


def test_a_rename_rewrites_the_path_of_the_file_label_as_it_does_in_path_colon_line(
    repo: GitRepo, cli: Any
) -> None:
    """`src/app.py:10` had its path rewritten after a rename, a `**Line:** 10` under
    `**File:** `src/app.py`` only its number: the File label kept naming a file that is
    gone. Now only the path's characters change there, and the line where it moved; the
    rest of the file (its CRLF endings, the note after the path) is kept byte for byte."""
    memory = repo.root / STORE / "bug.md"
    memory.parent.mkdir(parents=True, exist_ok=True)
    note = [
        "# Bug", "", "- **File:** `src/app.py` (the entry point)", "- **Why:** a crash",
        "- **Line:** 10", "", "Also src/app.py:20 in passing.", "",
    ]  # fmt: skip
    memory.write_bytes("\r\n".join(note).encode())
    repo.commit("memory")
    repo.mv("src/app.py", "src/main.py")
    repo.commit("rename")
    done = cli("verify", "bug", "--fix")
    assert "fixed 2 mentions in bug" in done.stdout
    renamed = [line.replace("src/app.py", "src/main.py") for line in note]
    assert memory.read_bytes() == "\r\n".join(renamed).encode()
    repo.commit("fixed")
    repo.write_lines("src/main.py", ["# a", *code("src/app.py", 30)])
    repo.commit("a line on top")
    assert "fixed 2 mentions in bug" in cli("verify", "bug", "--fix").stdout
    moved = [*renamed[:4], "- **Line:** 11", "", "Also src/main.py:21 in passing.", ""]
    assert memory.read_bytes() == "\r\n".join(moved).encode()
