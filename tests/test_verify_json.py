"""`verify-all --json` writes long lists without building dicts: same text, every verdict."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import RunCli
from memory_enhancement.core.model import Citation
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
