"""A stale verdict quotes the changed line as it reads now (and, for a prose mention, as
it read when the memory line was written). Found in imDrOne/mtg-bro: a Kotlin tool
description longer than the quote's 80 characters changed after its 80th, and
`verify-all` printed the same clipped text twice, "now reads `X…`; when written it read
`X…`", so the reader could not see what changed. Each quote now starts a little before
where the two texts first differ when the plain clip would show only what they share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from verify_support import STORE, GitRepo

SHARED = '    description = "Search the card database with filters: format, colours, type, '
BEFORE = SHARED + 'identity and rarity; returns names and sets.",'
AFTER = SHARED + 'identity.",'


def verify_all(repo: GitRepo) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "memory_enhancement", "verify-all"],
        cwd=repo.root,
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    assert done.returncode == 1, done.stderr
    return done.stdout


def tool_file(repo: GitRepo, description: str) -> None:
    repo.write_lines("src/Tools.kt", ["fun tools() {", "    addTool(", description, "    )", "}"])


def quotes(line: str) -> list[str]:
    return line.split("`")[1::2]


def test_a_stale_mention_quotes_its_line_where_then_and_now_differ(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    tool_file(repo, BEFORE)
    repo.write_lines(f"{STORE}/tools.md", ["# Tools", "", "The description is at src/Tools.kt:3."])
    repo.commit("code and memory")
    tool_file(repo, AFTER)
    repo.commit("shorter description")
    [line] = [x for x in verify_all(repo).splitlines() if "STALE" in x]
    now, then = quotes(line)[-2:]
    assert now != then, line
    assert now.startswith("…") and now.endswith('identity.",'), line
    assert then.startswith("…") and "identity and rarity" in then, line


def test_a_stale_citation_quotes_the_line_now_where_it_left_its_snippet(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    tool_file(repo, BEFORE)
    snippet = BEFORE.strip().replace("|", "\\|")
    repo.write_lines(
        f"{STORE}/tools.md",
        [
            "# Tools",
            "",
            "## Citations",
            "",
            "| File | Line | Snippet | Verified |",
            "|------|------|---------|----------|",
            f"| src/Tools.kt | 3 | `{snippet}` | 2026-01-01T00:00:00Z |",
        ],
    )
    repo.commit("code and memory")
    tool_file(repo, AFTER)
    repo.commit("shorter description")
    [line] = [x for x in verify_all(repo).splitlines() if "STALE" in x]
    [now] = quotes(line)[-1:]
    assert now.startswith("…") and now.endswith('identity.",'), line


def test_a_short_changed_line_is_quoted_whole(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    tool_file(repo, '    description = "Search cards",')
    repo.write_lines(f"{STORE}/tools.md", ["# Tools", "", "See src/Tools.kt:3."])
    repo.commit("code and memory")
    tool_file(repo, '    description = "Find cards",')
    repo.commit("renamed")
    [line] = [x for x in verify_all(repo).splitlines() if "STALE" in x]
    assert quotes(line)[-2:] == ['description = "Find cards",', 'description = "Search cards",']


def test_lines_a_shorter_rewrite_left_behind_are_told_gone_not_moved_to_its_last_line(
    tmp_path: Path,
) -> None:
    """7Spade/Xuanwu: a 39-line Chinese section of a prompt rewritten as one English line;
    five mentions of its lines each said "line 50 changed: it is line 40 now, which reads
    `Use this exact section order:`", as if the cited line had moved there."""
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("docs/prompt.md", [f"旧的第 {n} 行" for n in range(1, 61)])
    repo.write_lines(
        f"{STORE}/prompt.md", ["# Prompt", "", "Source: docs/prompt.md:50, docs/prompt.md:54-58"]
    )
    repo.commit("prompt and memory")
    old = [f"旧的第 {n} 行" for n in range(1, 61)]
    repo.write_lines("docs/prompt.md", [*old[:40], "new A", "new B", "new C"])
    repo.commit("section rewritten, shorter")
    lines = [x for x in verify_all(repo).splitlines() if "STALE" in x]
    assert len(lines) == 2
    assert "line 50 is gone: lines 41-60 became lines 41-43; when written" in lines[0]
    assert "lines 54-58 are gone: lines 41-60 became lines 41-43; when written" in lines[1]
    assert not any("it is line" in x for x in lines)
