"""`verify-all --json` writes long lists without building dicts: same text, every verdict."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import RunCli
from memory_enhancement.core.file_mentions import FILE
from memory_enhancement.core.mentions import COLON, RANGE, URL, Mention
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdict_rows import Recalled, encode_check, mention_rows
from memory_enhancement.core.verdicts import CitationCheck, MemoryVerification, Verdict
from memory_enhancement.service.serialize import verification_dict, verification_json
from verify_support import GitRepo

ODD = 'quote " backslash \\ tab \t newline \n bell \x07 accent é emoji 🙂 nul-free'


def _checks() -> list[CitationCheck]:
    """One check per verdict, with every optional field both set and unset."""
    cited = Citation("src/app.py", 3, snippet="API_VERSION = 'v2'", verified="2026-01-01")
    ranged = Citation("src/é.py", 4, 9, snippet=ODD)
    bare = Citation("src/app.py", 40)
    url = Citation('https://example.com/a?b="c"')
    whole = Citation("README.md")
    return [
        CitationCheck(cited, Verdict.VALID, "src/app.py", 3),
        CitationCheck(ranged, Verdict.MOVED, "src/new/é.py", 12, f"renamed; {ODD}", "src/new/é.py"),
        CitationCheck(cited, Verdict.STALE, "src/app.py", None, "line 3 now reads `x`"),
        CitationCheck(cited, Verdict.MISSING, reason="gone", renamed_to="lib/app.py"),
        CitationCheck(bare, Verdict.OUT_OF_RANGE, "src/app.py", None, "past the end"),
        CitationCheck(url, Verdict.SKIPPED, reason="URL not checked"),
        CitationCheck(whole, Verdict.INVALID, reason="binary file"),
    ]


def _results() -> list[MemoryVerification]:
    checks = _checks()
    url_only = [c for c in checks if c.status is Verdict.SKIPPED]
    return [
        MemoryVerification("all/verdicts", tuple(checks)),
        MemoryVerification("one/valid", tuple(checks[:1])),
        MemoryVerification("two/thirds", (checks[0], checks[1], checks[2])),
        MemoryVerification("urls/only", tuple(url_only)),  # confidence None
        MemoryVerification("with/mentions", tuple(checks[:2]), mentions=tuple(checks[2:4])),
        MemoryVerification(f"odd/{ODD}", ()),
    ]


def _mentioned() -> MemoryVerification:
    """A memory with a mention for each verdict, in each kind of field a mention fills."""
    said = [
        Mention(3, 0, "src/app.py:3", "src/app.py", 3, None, COLON, (0, 10), (11, 12)),
        Mention(4, 2, f"`{ODD}.py:4-9`", f"{ODD}.py", 4, 9, RANGE, (1, 9), (10, 13), (12, 13)),
        Mention(5, 7, "`src/old.py`", "src/old.py", None, None, FILE, (1, 11), None),
        Mention(
            6, 1, "https://github.com/o/n/blob/main/a.py#L2", "a.py", 2, None, URL, (30, 34),
            (36, 37), repository="github.com/o/n", ref="main",
        ),
        Mention(7, 0, "x.py:1", "x.py", 1, None, COLON, (0, 4), (5, 6), in_code=True),
        Mention(8, 0, "util.py:2", "util.py", 2, None, COLON, (0, 7), (8, 9)),
    ]  # fmt: skip
    verdicts = [
        (Citation("src/app.py", 3, snippet="x = 1", commit="c0ffee"), Verdict.VALID, {}),
        (
            Citation(f"{ODD}.py", 4, 9, snippet=ODD),
            Verdict.STALE,
            {"reason": f"line 4 now reads {ODD}", "current_path": f"{ODD}.py"},
        ),
        (Citation("src/old.py"), Verdict.MOVED, {"renamed_to": "src/new.py", "reason": "renamed"}),
        (Citation("https://github.com/o/n/blob/main/a.py#L2", 2), Verdict.SKIPPED, {}),
        (Citation("x.py", 1), Verdict.MISSING, {"reason": "no such file"}),
        (
            Citation("util.py", 2),
            Verdict.AMBIGUOUS,
            {"candidates": ("a/util.py", f"b/{ODD}.py")},
        ),
    ]
    checks = tuple(
        CitationCheck(citation, status, mention=mention, written_in="abc", **extra)
        for (citation, status, extra), mention in zip(verdicts, said, strict=True)
    )
    declared = (
        CitationCheck(Citation("README.md", 1, snippet="# T"), Verdict.VALID, "README.md", 1),
    )
    return MemoryVerification("with/mentions", declared, checks)


def test_mentions_are_written_as_their_dicts_encode_and_alike_from_kept_rows() -> None:
    """A rerun hands on the verdicts the last run kept, as rows (core/verdict_rows.py),
    and writes them from those rows: the same text as the verdicts built in full."""
    result = _mentioned()
    expected = json.JSONEncoder(ensure_ascii=False).encode(verification_dict(result))
    assert verification_json(result) == expected
    kept = Recalled(
        [encode_check(c) for c in result.mentions],
        mention_rows([c.mention for c in result.mentions if c.mention is not None]),
    )
    assert kept.built() == result.mentions
    alone = MemoryVerification(result.path, result.checks)
    assert verification_json(alone, kept) == expected
    assert json.loads(expected)["confidence"] == 0.5  # 2 good of 4 counted (skipped: not)


@pytest.mark.parametrize("result", _results(), ids=lambda r: r.path.split("/")[0])
def test_the_fast_encoding_is_the_dict_encoding_character_for_character(
    result: MemoryVerification,
) -> None:
    expected = json.JSONEncoder(ensure_ascii=False).encode(verification_dict(result))
    assert verification_json(result) == expected


def test_a_long_verify_all_list_is_valid_json_with_the_documented_keys(
    tmp_path: Any, run_cli: RunCli
) -> None:
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/app.py", [f"value_{n} = {n}" for n in range(1, 81)])
    repo.commit("code")
    for n in range(1, 61):  # more than the 50 that switch to the one-per-line list
        repo.memory(f"notes/m{n:02}", [Citation("src/app.py", n, snippet=f"value_{n} = {n}")])
    repo.write_lines("src/app.py", ["# header", *[f"value_{n} = {n}" for n in range(1, 60)]])
    result = run_cli(["verify-all", "--json", "--dir", str(repo.store_root)], cwd=repo.root)
    assert result.exit_code == 1  # value_60 is gone
    lines = result.stdout.splitlines()
    assert lines[0] == "[" and lines[-1] == "]" and len(lines) == 62
    data = json.loads(result.stdout)
    assert [d["memory_id"] for d in data] == [f"notes/m{n:02}" for n in range(1, 61)]
    assert {d["citations"][0]["status"] for d in data[:59]} == {"moved"}
    assert data[0]["citations"][0]["current_line"] == 2
    assert data[59]["valid"] is False and data[59]["stale_citations"][0]["line"] == 60
