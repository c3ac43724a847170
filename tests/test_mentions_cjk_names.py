"""Line mentions of files named in Chinese, Japanese or Korean (core/mentions.py).

A line mention's path is ASCII so that prose may touch it (`処理はsrc/app.py:12を参照`), and
`` `docs/設計.md:12` `` named a file `.md` (reported missing: "no file .md in the repository")
until session 37, although the same span without the line (`` `docs/設計.md` ``) was read
whole. Inside a code span or a link's target nothing touches the path, and the whole name is
the file's; elsewhere a name that goes on through folders (`docs/設計.md:12`) is, from its first
folder's ASCII letters after any prose (`詳細はdocs/設計.md:12`: `docs/設計.md`). Japanese
projects often name their documents so (a QA round's store, yoshiwo3/PlantUML2_Opus4.5,
keeps `docs/proposals/05_機能一覧表_20251213.md`); the lines here are written for the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import RunCli
from memory_enhancement.core.mentions import find_mentions
from verify_support import STORE, GitRepo, code, coded


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # (path, start, end, the digits as written)
        ("- `docs/設計.md:12` を参照", ("docs/設計.md", 12, None, ["12"])),
        ("- `docs/05_機能一覧表.md:12-14`", ("docs/05_機能一覧表.md", 12, 14, ["12", "14"])),
        ("- `機能一覧表.md:7`", ("機能一覧表.md", 7, None, ["7"])),
        ("- [一覧](docs/05_一覧表.md#L12-L14)", ("docs/05_一覧表.md", 12, 14, ["12", "14"])),
        ("- `docs/05_機能一覧表.md` 12行目", ("docs/05_機能一覧表.md", 12, None, ["12"])),
        ("- `docs/설계.md`의 라인 3", ("docs/설계.md", 3, None, ["3"])),
        ("- `src/服务.py` 第20行", ("src/服务.py", 20, None, ["20"])),
        # out of a span, a name in another script continues a path through its folders
        ("- docs/05_機能一覧表.md:12 を参照", ("docs/05_機能一覧表.md", 12, None, ["12"])),
        ("- 詳細はdocs/設計.md:12を参照", ("docs/設計.md", 12, None, ["12"])),
        ("（docs/設計.md の 12行目）", ("docs/設計.md", 12, None, ["12"])),
        ("- 設計/仕様.md:3", ("設計/仕様.md", 3, None, ["3"])),
        # prose touching an ASCII path still leaves the prose out
        ("- 処理はsrc/app.py:12を参照", ("src/app.py", 12, None, ["12"])),
        ("- 設定は.env:3 にある", (".env", 3, None, ["3"])),
        ("- 詳細は `src/app.py:12` を参照", ("src/app.py", 12, None, ["12"])),
    ],
)
def test_a_name_in_any_script_is_the_whole_file_of_a_line_mention(
    line: str, expected: tuple[str, int, int | None, list[str]]
) -> None:
    (m,) = find_mentions(f"# メモ\n\n{line}\n")
    digits = [m.text[slice(*m.start_at)]] + ([m.text[slice(*m.end_at)]] if m.end_at else [])
    assert (m.path, m.start, m.end, digits) == expected
    assert line[m.column : m.column + len(m.text)] == m.text
    assert m.path_at is not None and m.text[slice(*m.path_at)] == m.path


def test_a_japanese_list_of_lines_after_its_path_is_read_whole() -> None:
    # yoshiwo3/PlantUML2_Opus4.5 writes `proxy-server.ts（595-618行目、331-342行目）`; the
    # second range was not read (Chinese `第35行、第39～42行` was)
    found = find_mentions("# メモ\n\n- src/app.ts（595-618行目、331-342行目、700行目）\n")
    assert [(m.path, m.start, m.end) for m in found] == [
        ("src/app.ts", 595, 618),
        ("src/app.ts", 331, 342),
        ("src/app.ts", 700, None),
    ]
    (one,) = find_mentions("# メモ\n\n- `src/app.ts` 12行目、3件のテスト\n")  # no 行目: prose
    assert (one.start, one.end) == (12, None)


def test_the_later_items_of_a_list_name_the_whole_file_too() -> None:
    found = find_mentions("# メモ\n\n- `docs/設計.md:12, 30-31`\n")
    assert [(m.path, m.start, m.end) for m in found] == [
        ("docs/設計.md", 12, None),
        ("docs/設計.md", 30, 31),
    ]


NOTE = [
    "# 設計メモ",
    "",
    "- 仕様: `docs/設計.md:5-6` の手順",
    "- 一覧: [表](docs/05_機能一覧表.md#L12)",
    "- `docs/05_機能一覧表.md` 20行目（重要）",
]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    made = coded(tmp_path / "repo", {"docs/設計.md": 30, "docs/05_機能一覧表.md": 30})
    made.write_lines(f"{STORE}/設計メモ.md", NOTE)
    made.commit("memory")
    return made


def test_a_file_named_in_japanese_is_judged_and_fixed_like_any_other(
    repo: GitRepo, run_cli: RunCli
) -> None:
    repo.write_lines("docs/設計.md", ["# a", "# b", "# c", *code("docs/設計.md", 30)])
    repo.mv("docs/05_機能一覧表.md", "docs/proposals/05_機能一覧表.md")
    repo.commit("three lines on top; the list moved")
    result = repo.service().verify("設計メモ").results[0]
    got = {(c.mention.path, c.status.value, c.current_line) for c in result.mentions if c.mention}
    assert got == {
        ("docs/設計.md", "moved", 8),
        ("docs/05_機能一覧表.md", "moved", 12),
        ("docs/05_機能一覧表.md", "moved", 20),
    }
    memory = repo.store_root / "設計メモ.md"
    before = memory.read_bytes()
    done: Any = run_cli(["verify-all", "--fix", "--dir", str(repo.store_root)], cwd=repo.root)
    assert "fixed 3 mentions in 設計メモ" in done.stdout
    assert memory.read_text(encoding="utf-8").splitlines() == [
        "# 設計メモ",
        "",
        "- 仕様: `docs/設計.md:8-9` の手順",
        "- 一覧: [表](docs/proposals/05_機能一覧表.md#L12)",
        "- `docs/proposals/05_機能一覧表.md` 20行目（重要）",
    ]
    assert len(memory.read_bytes().splitlines()) == len(before.splitlines())
