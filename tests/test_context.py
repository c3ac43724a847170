"""Prompt context (seed 002 §3.3 and §4.3, issue 4 "Prompt context").

`context QUERY` prints a markdown block ready for a prompt: each memory quoted,
then its line `[mem:a7Bc3x] - 2026-01-30, path`. With verification, stale
memories are flagged rather than served as truth. The token budget (chars / 4,
as Cortex estimates, a Chinese or Japanese character one token) is never exceeded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Clock, RunCli
from index_support import disk_service, write_memory
from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.core.model import Citation
from memory_enhancement.service import MemoryService
from memory_enhancement.service.context import CHARS_PER_TOKEN
from verify_support import GitRepo


@pytest.fixture
def store(store_dir: Path) -> Path:
    write_memory(
        store_dir, "notes/deploy", "Deploys go through the blue pipeline.\n\nStaging first.",
        title="Deploy", created="2026-01-10T08:00:00Z", updated="2026-01-30T09:30:00Z",
    )  # fmt: skip
    write_memory(
        store_dir, "notes/rollback", "Roll back a bad pipeline run with the revert job.",
        title="Rollback", created="2026-01-20T10:00:00Z",
    )  # fmt: skip
    write_memory(store_dir, "howto/undated", "The pipeline dashboard is on the wiki.")
    long_lines = "\n".join(f"- pipeline step {n}: do the thing" for n in range(200))
    write_memory(store_dir, "ops/runbook", long_lines, title="Runbook")
    return store_dir


@pytest.fixture
def service(store: Path, git_repo: Path, tmp_path: Path, clock: Clock) -> MemoryService:
    return disk_service(store, git_repo, tmp_path, clock=clock)


def cid(service: MemoryService, path: str) -> str:
    return service.citation_id(path)


def test_a_memory_is_quoted_and_followed_by_its_id_date_and_path(service: MemoryService) -> None:
    text, used = service.context("staging")
    assert [r.hit.row.path for r in used] == ["notes/deploy"]
    assert text == (
        "> # Deploy\n"
        ">\n"
        "> Deploys go through the blue pipeline.\n"
        ">\n"
        "> Staging first.\n"
        ">\n"
        f"> {cid(service, 'notes/deploy')} - 2026-01-30, notes/deploy\n"
    )


def test_the_date_is_the_last_update_else_the_creation_else_left_out(
    service: MemoryService,
) -> None:
    text, _ = service.context("revert")
    assert text.endswith(f"> {cid(service, 'notes/rollback')} - 2026-01-20, notes/rollback\n")
    text, _ = service.context("dashboard")
    assert text.endswith(f"> {cid(service, 'howto/undated')} - howto/undated\n")


def test_memories_come_in_rank_order_one_block_each(service: MemoryService) -> None:
    text, used = service.context("pipeline", limit=3, max_tokens=None)
    assert len(used) == 3
    blocks = text.split("\n\n")
    assert len(blocks) == 3
    for block, result in zip(blocks, used, strict=True):
        assert all(line.startswith(">") for line in block.strip("\n").splitlines())
        assert block.rstrip("\n").endswith(result.hit.row.path)
        assert result.citation_id in block


def test_limit_caps_the_number_of_memories(service: MemoryService) -> None:
    _, used = service.context("pipeline", limit=2, max_tokens=None)
    assert len(used) == 2


@pytest.mark.parametrize("max_tokens", [30, 40, 60, 100, 150, 400, 2000])
def test_the_token_budget_is_never_exceeded(service: MemoryService, max_tokens: int) -> None:
    text, used = service.context("pipeline step thing", limit=4, max_tokens=max_tokens)
    assert len(text) <= max_tokens * CHARS_PER_TOKEN
    assert used
    assert text.count("[mem:") == len(used)


@pytest.mark.parametrize("max_tokens", [40, 100, 300])
def test_a_chinese_or_japanese_character_counts_as_a_whole_token(
    service: MemoryService, store: Path, max_tokens: int
) -> None:
    """Models spend about a token on each such character (harusame0616/formawork.ai's
    Japanese memories: `context --max-tokens 300` gave 1,200 characters at chars / 4)."""
    body = "\n".join(
        f"- 認証フローの手順{n}：セッションを更新してログを出力する" for n in range(60)
    )
    write_memory(store, "notes/認証フロー", body, title="認証フロー")
    text, used = service.context("セッション更新", limit=3, max_tokens=max_tokens)
    assert [r.hit.row.path for r in used] == ["notes/認証フロー"]
    cjk = sum(1 for c in text if "\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff")
    assert cjk > 0
    assert (len(text) - cjk) / CHARS_PER_TOKEN + cjk <= max_tokens
    if max_tokens == 300:  # as much as the budget allows: one more line would not fit
        assert (len(text) - cjk) / CHARS_PER_TOKEN + cjk > max_tokens - 30


def test_a_first_memory_too_long_for_the_budget_is_cut_and_says_so(service: MemoryService) -> None:
    text, used = service.context("step thing", limit=1, max_tokens=100)
    assert [r.hit.row.path for r in used] == ["ops/runbook"]
    assert len(text) <= 400
    assert "> [… truncated to fit]\n" in text
    assert text.startswith("> # Runbook\n>\n> - pipeline step 0: do the thing\n")
    assert text.endswith(f"> {cid(service, 'ops/runbook')} - ops/runbook\n")
    # The cut is as long as the budget allows: one more line would not fit.
    assert len(text) > 400 - len("> - pipeline step 10: do the thing\n")


def test_later_memories_are_left_out_whole_rather_than_cut(service: MemoryService) -> None:
    full, _ = service.context("staging blue", limit=1, max_tokens=None)
    text, used = service.context("staging blue revert", limit=3, max_tokens=len(full) // 4 + 5)
    assert [r.hit.row.path for r in used] == ["notes/deploy"]
    assert text == full
    assert "truncated" not in text


def test_a_budget_too_small_for_any_citation_line_gives_an_empty_block(
    service: MemoryService, tmp_path: Path
) -> None:
    text, used = service.context("staging", max_tokens=3)
    assert (text, used) == ("", [])


def test_an_invalid_budget_is_a_clear_error(service: MemoryService) -> None:
    with pytest.raises(InvalidInputError, match="max_tokens"):
        service.context("pipeline", max_tokens=0)


def test_a_query_with_no_match_gives_an_empty_block(service: MemoryService) -> None:
    assert service.context("kangaroo") == ("", [])


# -- with verification ------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    project = GitRepo(tmp_path / "project")
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v2'", "", "def main():"])
    project.commit("initial")
    project.memory(
        "api/entry",
        [Citation("src/app.py", 5, snippet="def main():", verified=project.stamp())],
        content="# API entry\n\nThe api starts in main().\n",
    )
    project.memory(
        "api/version",
        [Citation("src/app.py", 3, snippet="API_VERSION = 'v2'", verified=project.stamp())],
        content="# API version\n\nThe api version is v2.\n",
    )
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v3'", "", "def main():"])
    project.commit("bump")
    return project


def test_verify_marks_each_verdict_and_flags_stale_memories(project: GitRepo) -> None:
    service = project.service()
    text, used = service.context("api", verify=True)
    blocks = dict(zip([r.hit.row.path for r in used], text.split("\n\n"), strict=True))
    entry, version = blocks["api/entry"], blocks["api/version"]
    assert entry.rstrip("\n").endswith(
        f"> {service.citation_id('api/entry')} - api/entry (verified, confidence 0.70)"
    )
    assert "Warning" not in entry
    assert version.startswith(
        "> **Warning: stale memory, check before relying on it.** "
        "STALE: 1 of 1 citations fail, confidence 0.00\n"
    )
    assert version.rstrip("\n").endswith(
        "api/version (STALE: 1 of 1 citations fail, confidence 0.00)"
    )


def test_a_memory_stale_by_its_prose_mentions_is_flagged_too(tmp_path: Path) -> None:
    """Personal-Slack-Client (murayamaTakahiro, 57a962b): a memory whose one stale verdict
    was a prose mention (`emojiService.ts` (lines 25-341)) went into the prompt unflagged."""
    project = GitRepo(tmp_path / "project")
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v2'", "", "def main():"])
    project.commit("initial")
    project.memory("api/version", [], content="# API version\n\nThe api version: `src/app.py:3`.\n")
    project.commit("memory")
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v3'", "", "def main():"])
    project.commit("bump")
    text, _ = project.service().context("api", verify=True)
    assert text.startswith(
        "> **Warning: stale memory, check before relying on it.** "
        "STALE: 1 of 1 citations and mentions fail, confidence 0.00\n"
    )


def test_without_verify_no_verdict_is_claimed(project: GitRepo) -> None:
    text, _ = project.service().context("api")
    assert "verified" not in text
    assert "STALE" not in text


# -- the CLI ------------------------------------------------------------------------------


def test_context_from_the_cli_prints_the_block_and_json(
    run_cli: RunCli, store: Path, service: MemoryService
) -> None:
    result = run_cli(["context", "staging", "--dir", store])
    assert result.exit_code == 0
    assert result.output.endswith(
        f"> {service.citation_id('notes/deploy')} - 2026-01-30, notes/deploy\n"
    )
    data = json.loads(
        run_cli(["context", "pipeline", "--limit", "2", "--json", "--dir", store]).output
    )
    assert set(data) == {"context", "memories"}
    assert len(data["memories"]) == 2
    for memory in data["memories"]:
        assert f"[{memory['id']}] - " in data["context"]
    small = run_cli(["context", "pipeline", "--max-tokens", "40", "--dir", store])
    assert len(small.output) <= 160


def test_no_match_leaves_stdout_empty_and_says_so_on_stderr(store: Path, tmp_path: Path) -> None:
    """An agent pastes stdout as it is: nothing there. A person at a terminal is told why
    the block is empty: no memory matched, or none fit the budget. `--json` is unchanged."""
    base = [sys.executable, "-m", "memory_enhancement", "context", "--dir", str(store)]
    env = {**os.environ, "MEMORY_ENHANCEMENT_HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*base, *args], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        return done

    missed = run("kangaroo")
    assert (missed.stdout, missed.stderr) == ("", "no memory matches 'kangaroo'\n")
    tight = run("staging", "--max-tokens", "3")
    assert (tight.stdout, tight.stderr) == ("", "no memory fits in --max-tokens 3 (1 matched)\n")
    quiet = run("kangaroo", "--json")
    assert (json.loads(quiet.stdout), quiet.stderr) == ({"context": "", "memories": []}, "")
    found = run("staging")
    assert found.stdout.startswith("> ") and found.stderr == ""


def test_a_memory_cut_inside_a_code_fence_has_the_fence_closed_before_the_note(
    service: MemoryService, store: Path
) -> None:
    """Cut inside a fence, the truncation note and the citation line would read as code."""
    steps = "\n".join(f"deploy --stage {n} --region eu-west" for n in range(80))
    body = f"Run the fenced steps.\n\n````bash\n```\n{steps}\n````\n\nAfter the steps."
    write_memory(store, "ops/fenced", body, title="Fenced deploy")
    text, used = service.context("fenced deploy steps", limit=1, max_tokens=120)
    assert [r.hit.row.path for r in used] == ["ops/fenced"]
    assert len(text) <= 120 * CHARS_PER_TOKEN
    quoted = [line[2:] for line in text.splitlines() if line.startswith("> ")]
    note = quoted.index("[… truncated to fit]")
    assert quoted[note - 1] == "````"  # the four-backtick fence, not the inner ``` line
    assert quoted.count("````") == 1 and quoted[2] == "````bash"


def test_the_help_says_a_korean_character_is_a_token_as_it_is_counted(run_cli: RunCli) -> None:
    """`--max-tokens` said "a Chinese or Japanese character is a token"; a Hangul syllable is
    counted as one too (index/cjk.py), and a Korean user read the budget as chars / 4 (QA
    round 38, 5rbit/mxrc)."""
    from memory_enhancement.service.context import size

    assert size("세션 생성") == size("会話 生成") == 4 * 4 + 1
    assert "Korean character is a token" in " ".join(run_cli(["context", "--help"]).stdout.split())
