"""Verification history: every way of verifying records each citation's verdict, with the
time and the commit, and `verify --write`/`--fix` carry the latest state into the file.

The history lives in the store's state database, which the tests read through a
service built the way the CLI builds one (health_support.Project), inside a
real temporary git repository.
"""

from __future__ import annotations

import difflib
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from conftest import Clock, RunCli
from health_support import Project
from mcp_support import Agent
from memory_enhancement.cli.app import App
from memory_enhancement.core.timestamps import format_timestamp, maybe_timestamp
from memory_enhancement.mcp.server import build_server
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.verify import history
from memory_enhancement.verify.repo import Repository

API = "# API version\n\nClients send the API version.\n"


@pytest.fixture
def project(tmp_path: Path, clock: Clock) -> Project:
    return Project(tmp_path / "project", clock)


@pytest.fixture
def mixed(project: Project) -> Project:
    """notes/api cites a valid line, a line about to change, and a file that does not exist."""
    project.service.add(
        "notes/api", API, citations=["src/app.py:3", "src/app.py:5", "src/gone.py:1"]
    )
    project.service.add("notes/db", "The pool.", citations=["src/db.py:2"])
    project.change_line("src/app.py", 5, "app_5 = 'five'")
    return project


EXPECTED = [
    ("notes/api", 0, "src/app.py:3", "valid"),
    ("notes/api", 1, "src/app.py:5", "stale"),
    ("notes/api", 2, "src/gone.py:1", "missing"),
]


def recorded(project: Project, since: datetime, until: datetime) -> list[tuple[Any, ...]]:
    """The verdicts, checking that each carries HEAD's commit and a time within the window."""
    rows = project.verifications()
    assert rows, "nothing was recorded"
    head = project.git.head()
    for verified_at, commit, *_ in rows:
        assert commit == head
        moment = maybe_timestamp(verified_at)
        assert moment is not None
        assert since - timedelta(milliseconds=1) <= moment <= until
    return [tuple(row[2:]) for row in rows]


def window() -> datetime:
    return datetime.now(UTC)


# -- every path records ----------------------------------------------------------------


def test_cli_verify_records_each_citation_with_time_commit_and_verdict(
    mixed: Project, run_cli: RunCli
) -> None:
    since = window()
    result = run_cli(["verify", "notes/api", "--dir", mixed.store])
    assert result.exit_code == 1
    assert recorded(mixed, since, window()) == EXPECTED


def test_cli_verify_all_records_every_memory_in_one_run(mixed: Project, run_cli: RunCli) -> None:
    since = window()
    assert run_cli(["verify-all", "--dir", mixed.store]).exit_code == 1
    rows = recorded(mixed, since, window())
    assert rows == [*EXPECTED, ("notes/db", 0, "src/db.py:2", "valid")]
    assert history.runs(mixed.service.state) == 1


def test_cli_get_with_verify_records_the_verdicts(mixed: Project, run_cli: RunCli) -> None:
    since = window()
    result = run_cli(["get", "notes/api", "--verify", "--dir", mixed.store])
    assert result.exit_code == 0, result.output
    assert recorded(mixed, since, window()) == EXPECTED


def test_cli_search_with_verify_records_the_verdicts_of_the_hits(
    mixed: Project, run_cli: RunCli
) -> None:
    since = window()
    result = run_cli(["search", "API version", "--verify", "--dir", mixed.store])
    assert result.exit_code == 0, result.output
    assert recorded(mixed, since, window()) == EXPECTED


def test_search_without_verify_records_nothing(mixed: Project, run_cli: RunCli) -> None:
    assert run_cli(["search", "API version", "--dir", mixed.store]).exit_code == 0
    assert run_cli(["get", "notes/api", "--dir", mixed.store]).exit_code == 0
    assert mixed.verifications() == []


def test_cli_health_records_a_run_too(mixed: Project, run_cli: RunCli) -> None:
    since = window()
    assert run_cli(["health", "--dir", mixed.store]).exit_code == 0
    assert recorded(mixed, since, window()) == [
        *EXPECTED,
        ("notes/db", 0, "src/db.py:2", "valid"),
    ]


def test_mcp_verification_tools_record_the_verdicts(mixed: Project) -> None:
    app = App(env=dict(mixed.env), cwd=mixed.root)

    async def scenario() -> None:
        async with Client(build_server(app.service_for)) as client:
            agent = Agent(client)
            data = await agent.call("verify_memory", path="notes/api")
            assert data["valid"] is False
            await agent.call("get_memory", path="notes/api", verify=True)
            await agent.call("verify_memories")

    since = window()
    anyio.run(scenario)
    rows = recorded(mixed, since, window())
    # Verdicts are written when they change: the api memory's are the same three times.
    assert rows == [*EXPECTED, ("notes/db", 0, "src/db.py:2", "valid")]
    assert history.runs(mixed.service.state) == 3
    assert mixed.runs("notes/api") == 3


def test_the_service_records_its_own_clock(mixed: Project, clock: Clock) -> None:
    clock.advance(days=3)
    mixed.service.verify("notes/db")
    [(verified_at, *_)] = mixed.verifications("notes/db")
    assert verified_at == "2026-02-03T12:00:00.000Z"


def test_outside_git_the_commit_is_empty(tmp_path: Path, clock: Clock) -> None:
    code = tmp_path / "code"
    (code / "src").mkdir(parents=True)
    (code / "src" / "app.py").write_text("A = 1\n", encoding="utf-8")
    service = MemoryService(Store(tmp_path / "store"), Repository(code), clock=clock)
    service.add("notes/a", "A.", citations=["src/app.py:1"])
    service.verify("notes/a")
    rows = history.verdicts(service.state)
    assert [(commit, status) for _, commit, _, _, _, status in rows] == [(None, "valid")]


def test_a_memory_without_citations_leaves_no_history(project: Project) -> None:
    project.service.add("notes/prose", "Just prose.")
    assert project.service.verify("notes/prose").results[0].checks == ()
    assert project.verifications() == []


# -- what the history sums up ---------------------------------------------------------------


def test_evidence_sums_up_runs_failures_last_valid_uses_and_confirmations(
    project: Project, clock: Clock
) -> None:
    project.service.add("notes/api", API, citations=["src/app.py:5"])
    first = clock.moment
    project.service.verify("notes/api")
    clock.advance(days=1)
    project.change_line("src/app.py", 5, "app_5 = 'five'")
    project.service.verify("notes/api")
    project.service.get("notes/api")
    project.service.reinforce("notes/api")
    cid = project.service.citation_id("notes/api").strip("[]").removeprefix("mem:")
    facts = history.evidence(project.service.state, [cid])[cid]
    assert facts == history.Evidence(
        runs=2,
        failed_runs=1,
        last_verified=clock.moment,
        last_valid=first,
        reinforcements=1,
        uses=1,
        last_used=clock.moment,
        last_reinforced=clock.moment,
    )


def test_the_recent_record_keeps_the_last_ten_runs(project: Project, clock: Clock) -> None:
    project.service.add("notes/api", API, citations=["src/app.py:3"])
    for _ in range(12):
        clock.advance(minutes=1)
        project.service.verify("notes/api")
    cid = project.service.citation_id("notes/api").strip("[]").removeprefix("mem:")
    assert history.evidence(project.service.state, [cid])[cid].runs == history.RECENT_RUNS
    assert project.runs("notes/api") == 12  # pruned only every KEPT_RUNS runs


def test_old_verdicts_are_pruned_and_the_summaries_keep_counting(
    project: Project, clock: Clock
) -> None:
    project.service.add("notes/api", API, citations=["src/app.py:3"])
    project.service.add("notes/db", "The pool.", citations=["src/db.py:2"])
    for n in range(25):
        clock.advance(minutes=1)
        # The line changes and changes back: every run's verdict differs from the last.
        project.change_line("src/app.py", 3, "app_3 = 3" if n % 2 else "app_3 = 'three'")
        project.service.verify("notes/api")
        if n == 0:
            project.service.verify("notes/db")  # verified once, long ago: kept
    kept = project.verifications("notes/api")
    assert len(kept) == history.KEPT_RUNS  # pruned as each change is written
    assert kept[-1][0] == format_timestamp(clock.moment)  # the newest are the ones kept
    assert project.runs("notes/api") == 25
    assert len(project.verifications("notes/db")) == 1
    assert history.runs(project.service.state) == 26  # every run is still counted
    assert sum(history.verdict_days(project.service.state)[0][1].values()) == 26


def test_an_unchanged_store_writes_one_run_row_per_verify_all(mixed: Project, clock: Clock) -> None:
    mixed.service.verify_all()
    with mixed.service.state.connect() as db:
        before = db.execute("SELECT count(*) FROM verdicts").fetchone()[0]
    for _ in range(5):
        clock.advance(hours=1)
        mixed.service.verify_all()
    with mixed.service.state.connect() as db:
        assert db.execute("SELECT count(*) FROM verdicts").fetchone()[0] == before
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 6
        written = db.execute("SELECT max(seq) FROM evidence").fetchone()[0]
        assert written == 1  # no summary rewritten since the first run
    # ... and yet every run counts, replayed onto the summaries when they are read.
    cid = mixed.service.citation_id("notes/db").strip("[]").removeprefix("mem:")
    facts = history.evidence(mixed.service.state, [cid])[cid]
    assert (facts.runs, facts.failed_runs, facts.last_verified) == (6, 0, clock.moment)
    assert facts.last_valid == clock.moment
    api = mixed.service.citation_id("notes/api").strip("[]").removeprefix("mem:")
    stale = history.evidence(mixed.service.state, [api])[api]
    assert (stale.runs, stale.failed_runs, stale.last_valid) == (6, 6, None)
    assert mixed.runs("notes/db") == 6


def test_a_memory_gone_from_the_store_stops_collecting_runs(mixed: Project, clock: Clock) -> None:
    mixed.service.verify_all()
    cid = mixed.service.citation_id("notes/db").strip("[]").removeprefix("mem:")
    mixed.service.remove("notes/db")
    for _ in range(3):
        clock.advance(hours=1)
        mixed.service.verify_all()
    assert history.evidence(mixed.service.state, [cid])[cid].runs == 1


def test_verdicts_are_counted_per_day_oldest_first(mixed: Project, clock: Clock) -> None:
    mixed.service.verify_all()
    clock.advance(days=1)
    mixed.service.verify_all()
    mixed.service.verify("notes/db")
    assert history.verdict_days(mixed.service.state) == [
        ("2026-01-31", {"valid": 2, "stale": 1, "missing": 1}),
        ("2026-02-01", {"valid": 3, "stale": 1, "missing": 1}),
    ]


def test_history_follows_a_memory_when_it_moves(mixed: Project) -> None:
    mixed.service.verify("notes/db")
    mixed.service.move("notes/db", "archive/db")
    health = mixed.health_of("archive/db")
    assert health.last_verified == "2026-01-31T12:00:00.000Z"
    cid = health.citation_id
    assert history.evidence(mixed.service.state, [cid])[cid].runs == 2


# -- verify --write and --fix carry the state into the file ---------------------------------

SERENA = """# API version

Clients send v2.

## Citations

| File | Line | Snippet | Verified |
|------|------|---------|----------|
| src/app.py | 3 | `app_3 = 3` | 2026-01-01 |

## Metadata

- **Tags**: api, versions
- **Confidence**: 0.5
- **Last Verified**: 2026-01-01
- **Owner**: team-a
"""

FRONTMATTER = """---
title: Pool size
owner: team-a  # who to ask
citations:
  - path: src/db.py
    line: 2
    snippet: db_2 = 2
confidence: 0.4
last_verified: 2026-01-01T00:00:00Z
---
The pool has 2 connections.
"""


def changes(before: str, after: str) -> tuple[list[str], list[str]]:
    """(removed lines, added lines) between two texts."""
    diff = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    return [d[2:] for d in diff if d.startswith("- ")], [d[2:] for d in diff if d.startswith("+ ")]


def stamp_of(line: str, since: datetime) -> datetime:
    """The time written on a Last Verified line, checked to be this run's."""
    moment = maybe_timestamp(line.split(":", 1)[1].strip().removeprefix("** "))
    assert moment is not None and since - timedelta(milliseconds=1) <= moment <= window()
    return moment


def write_memory(project: Project, path: str, text: str) -> Path:
    file = project.file(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    return file


def test_verify_write_records_confidence_and_last_verified_in_serena_metadata_only(
    project: Project, run_cli: RunCli
) -> None:
    file = write_memory(project, "notes/api", SERENA)
    since = window()
    result = run_cli(["verify", "notes/api", "--write", "--dir", project.store])
    assert result.exit_code == 0, result.output
    removed, added = changes(SERENA, file.read_text(encoding="utf-8"))
    assert removed == ["- **Confidence**: 0.5", "- **Last Verified**: 2026-01-01"]
    assert added[0] == "- **Confidence**: 0.7"
    assert added[1].startswith("- **Last Verified**: ")
    stamp_of(added[1].removeprefix("- **Last Verified**"), since)
    assert len(added) == 2


def test_verify_write_records_confidence_and_last_verified_in_frontmatter_only(
    project: Project, run_cli: RunCli
) -> None:
    file = write_memory(project, "notes/pool", FRONTMATTER)
    since = window()
    result = run_cli(["verify", "notes/pool", "--write", "--dir", project.store])
    assert result.exit_code == 0, result.output
    removed, added = changes(FRONTMATTER, file.read_text(encoding="utf-8"))
    assert removed == ["confidence: 0.4", "last_verified: 2026-01-01T00:00:00Z"]
    assert added[0] == "confidence: 0.7"
    assert added[1].startswith("last_verified: ")
    stamp_of(added[1], since)
    assert len(added) == 2


def test_verify_write_adds_the_fields_when_the_file_has_none(
    project: Project, run_cli: RunCli
) -> None:
    serena = SERENA.split("\n## Metadata")[0]
    frontmatter = FRONTMATTER.replace("confidence: 0.4\nlast_verified: 2026-01-01T00:00:00Z\n", "")
    files = {
        "notes/api": (write_memory(project, "notes/api", serena), serena),
        "notes/pool": (write_memory(project, "notes/pool", frontmatter), frontmatter),
    }
    result = run_cli(["verify-all", "--write", "--dir", project.store])
    assert result.exit_code == 0, result.output
    api, pool = (file.read_text(encoding="utf-8") for file, _ in files.values())
    assert api.startswith(serena)  # appended, nothing before it touched
    assert changes(serena, api)[0] == []
    assert "## Metadata\n\n- **Confidence**: 0.7\n- **Last Verified**: " in api
    removed, added = changes(frontmatter, pool)
    assert removed == []
    assert added[0] == "confidence: 0.7"
    assert added[1].startswith("last_verified: ")


def test_an_authors_own_confidence_word_is_kept_and_last_verified_still_written(
    project: Project, run_cli: RunCli
) -> None:
    serena = SERENA.replace("**Confidence**: 0.5", "**Confidence**: HIGH")
    frontmatter = FRONTMATTER.replace("confidence: 0.4", "confidence: HIGH")
    api = write_memory(project, "notes/api", serena)
    pool = write_memory(project, "notes/pool", frontmatter)
    result = run_cli(["verify-all", "--write", "--dir", project.store])
    assert result.exit_code == 0, result.output
    assert changes(serena, api.read_text(encoding="utf-8"))[0] == [
        "- **Last Verified**: 2026-01-01"
    ]
    assert changes(frontmatter, pool.read_text(encoding="utf-8"))[0] == [
        "last_verified: 2026-01-01T00:00:00Z"
    ]


def test_verify_write_dry_run_prints_the_diff_and_writes_nothing(
    project: Project, run_cli: RunCli
) -> None:
    file = write_memory(project, "notes/api", SERENA)
    result = run_cli(["verify", "notes/api", "--write", "--dry-run", "--dir", project.store])
    assert result.exit_code == 0, result.output
    assert "\n-- **Confidence**: 0.5\n" in result.stdout
    assert "\n+- **Confidence**: 0.7\n" in result.stdout
    assert file.read_text(encoding="utf-8") == SERENA
    assert project.runs("notes/api") == 1  # the verification itself is still history


def test_verify_without_write_leaves_the_file_alone(project: Project, run_cli: RunCli) -> None:
    file = write_memory(project, "notes/api", SERENA)
    assert run_cli(["verify", "notes/api", "--dir", project.store]).exit_code == 0
    assert run_cli(["verify-all", "--dir", project.store]).exit_code == 0
    assert file.read_text(encoding="utf-8") == SERENA


@pytest.mark.parametrize("fmt", ["serena", "frontmatter"])
def test_verify_fix_rewrites_the_moved_citation_and_records_the_state(
    project: Project, run_cli: RunCli, fmt: str
) -> None:
    text = SERENA if fmt == "serena" else FRONTMATTER
    cited = "src/app.py" if fmt == "serena" else "src/db.py"
    file = write_memory(project, "notes/x", text)
    project.insert_lines(cited, 1, 2)  # the cited line moves down by two
    since = window()
    result = run_cli(["verify", "notes/x", "--fix", "--dir", project.store])
    assert result.exit_code == 0, result.output
    removed, added = changes(text, file.read_text(encoding="utf-8"))
    if fmt == "serena":
        assert removed == [
            "| src/app.py | 3 | `app_3 = 3` | 2026-01-01 |",
            "- **Confidence**: 0.5",
            "- **Last Verified**: 2026-01-01",
        ]
        assert added[0].startswith("| src/app.py | 5 | `app_3 = 3` | ")
        assert added[1:2] == ["- **Confidence**: 0.7"]
        stamp_of(added[2].removeprefix("- **Last Verified**"), since)
    else:
        assert removed == ["    line: 2", "confidence: 0.4", "last_verified: 2026-01-01T00:00:00Z"]
        assert added[0] == "    line: 4"
        assert "confidence: 0.7" in added
        stamp_of(next(a for a in added if a.startswith("last_verified:")), since)
    assert run_cli(["verify", "notes/x", "--dir", project.store]).stdout.startswith("valid")


def test_verify_fix_leaves_a_memory_with_nothing_to_fix_alone(
    project: Project, run_cli: RunCli
) -> None:
    file = write_memory(project, "notes/api", SERENA)
    assert run_cli(["verify-all", "--fix", "--dir", project.store]).exit_code == 0
    assert file.read_text(encoding="utf-8") == SERENA


def test_the_written_confidence_is_the_history_based_one(project: Project, run_cli: RunCli) -> None:
    file = write_memory(project, "notes/api", SERENA)
    project.service.reinforce("notes/api")
    project.service.reinforce("notes/api")
    assert run_cli(["verify", "notes/api", "--write", "--dir", project.store]).exit_code == 0
    assert "- **Confidence**: 0.93\n" in file.read_text(encoding="utf-8")


def test_the_cli_writes_history_where_the_service_reads_it(
    project: Project, run_cli: RunCli
) -> None:
    """A sanity check of the test set-up itself: one state file, shared."""
    project.service.add("notes/api", API, citations=["src/app.py:3"])
    assert run_cli(["verify", "notes/api", "--dir", project.store]).exit_code == 0
    state_files = list(Path(os.environ["MEMORY_ENHANCEMENT_HOME"]).glob("data/state/*.db"))
    assert len(state_files) == 1
    assert project.runs("notes/api") == 1
