"""Confidence: one documented formula, and each of its inputs moves the score.

The formula is in `confidence.py`'s docstring. The first tests pin it on the
pure function; the others move one input at a time through the real paths
(verification of a real git repository, `get`, `reinforce`, the health report)
with a clock the test sets, and check that only that part of the score moved.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from mcp import Client

from conftest import Clock, RunCli
from health_support import Project
from mcp_support import Agent
from memory_enhancement.cli.app import App
from memory_enhancement.mcp.server import build_server
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.verify import confidence
from memory_enhancement.verify.confidence import Inputs, compute
from memory_enhancement.verify.repo import Repository

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
VALID_TODAY = Inputs(
    citations=2, good=2, last_valid=NOW, reinforcements=0, uses=0, runs=1, failed_runs=0
)


@pytest.fixture
def project(tmp_path: Path, clock: Clock) -> Project:
    return Project(tmp_path / "project", clock)


# -- the formula ------------------------------------------------------------------


def test_the_formula_is_documented_with_every_input_and_its_weights() -> None:
    doc = confidence.__doc__ or ""
    assert "confidence = 0.55 × evidence × (0.5 + 0.5 × freshness)" in doc
    assert "+ 0.30 × support" in doc
    assert "+ 0.15 × record" in doc
    for part in ("evidence:", "freshness:", "support:", "record:"):
        assert part in doc
    assert confidence.WEIGHTS == {"evidence": 0.55, "support": 0.30, "record": 0.15}
    assert sum(confidence.WEIGHTS.values()) == pytest.approx(1.0)


def test_the_documented_examples_hold() -> None:
    assert compute(VALID_TODAY, NOW).score == 0.70
    assert compute(replace(VALID_TODAY, reinforcements=2), NOW).score == 0.93


def test_the_score_stays_in_zero_one_at_both_extremes() -> None:
    nothing = Inputs(0, 0, None, 0, 0, 0, 0)
    everything = Inputs(5, 5, NOW, 1000, 1000, 10, 0)
    assert compute(nothing, NOW).score == 0.0
    assert compute(everything, NOW).score == 1.0
    assert compute(replace(everything, last_valid=NOW + timedelta(days=3)), NOW).score == 1.0


@pytest.mark.parametrize(
    ("worse", "better"),
    [
        (replace(VALID_TODAY, good=1), VALID_TODAY),
        (replace(VALID_TODAY, last_valid=NOW - timedelta(days=45)), VALID_TODAY),
        (replace(VALID_TODAY, last_valid=None), VALID_TODAY),
        (VALID_TODAY, replace(VALID_TODAY, reinforcements=1)),
        (VALID_TODAY, replace(VALID_TODAY, uses=3)),
        (replace(VALID_TODAY, runs=4, failed_runs=1), replace(VALID_TODAY, runs=4)),
    ],
    ids=["share-valid", "freshness", "never-valid", "reinforcement", "usage", "failures"],
)
def test_each_input_moves_the_pure_score(worse: Inputs, better: Inputs) -> None:
    assert compute(worse, NOW).score < compute(better, NOW).score


def test_the_parts_reproduce_the_score_and_a_moment_ago_counts_as_now() -> None:
    """Verification times are stored to the millisecond; reading one back a fraction of
    a millisecond later must not tip the documented 0.93 to 0.92."""
    moment_ago = replace(
        VALID_TODAY, reinforcements=2, last_valid=NOW - timedelta(microseconds=900)
    )
    parts = compute(moment_ago, NOW)
    assert parts.score == 0.93
    weights = confidence.WEIGHTS
    recomputed = (
        weights["evidence"] * parts.evidence * (0.5 + 0.5 * parts.freshness)
        + weights["support"] * parts.support
        + weights["record"] * parts.record
    )
    assert round(recomputed, 2) == parts.score


def test_freshness_halves_every_thirty_days() -> None:
    for days, expected in ((0, 1.0), (30, 0.5), (60, 0.25)):
        inputs = replace(VALID_TODAY, last_valid=NOW - timedelta(days=days))
        assert compute(inputs, NOW).freshness == expected


def test_four_uses_count_as_one_confirmation_and_uses_are_capped_at_twenty() -> None:
    one_confirmation = compute(replace(VALID_TODAY, reinforcements=1), NOW)
    assert compute(replace(VALID_TODAY, uses=4), NOW) == one_confirmation
    capped = compute(replace(VALID_TODAY, uses=confidence.MAX_USES), NOW)
    assert compute(replace(VALID_TODAY, uses=500), NOW) == capped


def test_zero_citations_earn_no_evidence_they_are_not_all_valid() -> None:
    uncited = Inputs(0, 0, None, 0, 0, 0, 0)
    parts = compute(uncited, NOW)
    assert (parts.evidence, parts.score) == (0.0, 0.0)
    assert compute(VALID_TODAY, NOW).evidence == 1.0


# -- each input through the real paths ----------------------------------------------


def test_the_share_of_citations_valid_now_moves_the_score(project: Project) -> None:
    project.service.add("notes/half", "Half holds.", citations=["src/app.py:3", "src/db.py:2"])
    project.service.add("notes/none", "None holds.", citations=["src/db.py:2", "src/db.py:3"])
    project.change_line("src/db.py", 2, "db_2 = 'two'")
    project.change_line("src/db.py", 3, "db_3 = 'three'")
    report = {m.path: m for m in project.service.health().memories}
    half, none = report["notes/half"].confidence, report["notes/none"].confidence
    assert (half.evidence, none.evidence) == (0.5, 0.0)
    # Same history (one failing run, never valid), so only the share differs.
    assert (half.freshness, half.support, half.record) == (none.freshness, none.support, 0.0)
    assert half.score > none.score == 0.0
    assert half.score == 0.14  # the example in docs/health.md


def test_a_moved_citation_counts_as_good_evidence(project: Project) -> None:
    project.service.add("notes/api", "API.", citations=["src/app.py:3", "src/app.py:9"])
    project.insert_lines("src/app.py", 5, 3)
    health = project.health_of("notes/api")
    assert health.status == "moved"
    assert health.citations["moved"] == 1
    assert health.confidence.evidence == 1.0
    assert health.confidence.score == 0.70


def test_time_since_last_verified_valid_decays_the_score(project: Project, clock: Clock) -> None:
    """Two services over the same files, each with its own history and clock."""
    project.service.add("notes/api", "API.", citations=["src/app.py:3", "src/db.py:2"])
    early, late = Clock(clock.moment), Clock(clock.moment)
    states = []
    for moment in (early, late):
        service = MemoryService(Store(project.store), Repository(project.root), clock=moment)
        assert service.verify("notes/api").results[0].valid
        states.append(service.state)
    project.change_line("src/db.py", 2, "db_2 = 'two'")  # fails from now on
    early.advance(days=1)
    late.advance(days=61)
    first, second = (
        next(m for m in service.health().memories if m.path == "notes/api").confidence
        for service in (
            MemoryService(Store(project.store), Repository(project.root), state=s, clock=c)
            for s, c in zip(states, (early, late), strict=True)
        )
    )
    assert (first.evidence, first.support, first.record) == (
        second.evidence, second.support, second.record,
    )  # fmt: skip
    assert first.freshness == pytest.approx(0.5 ** (1 / 30), abs=1e-4)
    assert second.freshness == pytest.approx(0.5 ** (61 / 30), abs=1e-4)
    assert first.score > second.score


def test_a_memory_never_verified_valid_has_no_freshness(project: Project) -> None:
    project.service.add("notes/gone", "Gone.", citations=["src/nowhere.py:1"])
    health = project.health_of("notes/gone")
    assert health.status == "missing"
    assert (health.confidence.freshness, health.confidence.record) == (0.0, 0.0)
    assert health.confidence.score == 0.0


def test_reinforcement_raises_the_score(project: Project) -> None:
    project.service.add("notes/api", "API.", citations=["src/app.py:3"])
    before = project.health_of("notes/api")
    assert project.service.reinforce("notes/api", "checked by hand")[1] == 1
    once = project.health_of("notes/api")
    project.service.reinforce("notes/api")
    twice = project.health_of("notes/api")
    assert (before.reinforcements, once.reinforcements, twice.reinforcements) == (0, 1, 2)
    assert before.confidence.score == 0.70
    assert before.confidence.score < once.confidence.score < twice.confidence.score == 0.93
    assert once.confidence.support == 0.5


def test_usage_raises_the_score(project: Project) -> None:
    service = project.service
    service.add("notes/api", "API.", citations=["src/app.py:3"])
    before = project.health_of("notes/api")
    for _ in range(4):
        service.get("notes/api")
    after = project.health_of("notes/api")
    assert (before.uses, after.uses) == (0, 4)
    assert after.confidence.support == 0.5  # four uses are one confirmation
    assert after.confidence.score > before.confidence.score


def test_a_history_of_failures_lowers_the_score_until_it_leaves_the_window(
    project: Project, clock: Clock
) -> None:
    """The record counts the last ten runs (a run a minute, so "last" is well defined)."""
    project.service.add("notes/steady", "Steady.", citations=["src/app.py:3"])
    project.service.add("notes/shaky", "Shaky.", citations=["src/app.py:5"])
    project.service.verify_all()
    project.change_line("src/app.py", 5, "app_5 = 'five'")
    clock.advance(minutes=1)
    assert not project.service.verify_all().ok()
    clock.advance(minutes=1)
    project.service.verify_all()
    project.change_line("src/app.py", 5, "app_5 = 5")  # back as it was: valid again
    clock.advance(minutes=1)
    service = project.service
    report = {m.path: m for m in service.health().memories}
    steady, shaky = report["notes/steady"].confidence, report["notes/shaky"].confidence
    assert report["notes/shaky"].status == report["notes/steady"].status
    assert (shaky.evidence, shaky.freshness, shaky.support) == (
        steady.evidence, steady.freshness, steady.support,
    )  # fmt: skip
    assert (steady.record, shaky.record) == (1.0, 0.5)  # 2 of its 4 runs failed
    assert shaky.score < steady.score
    for _ in range(6):
        clock.advance(minutes=1)
        service.verify_all()
    clock.advance(minutes=1)
    assert project.health_of("notes/shaky").confidence.record == 0.8  # 2 of the last 10
    clock.advance(minutes=1)
    service.verify_all()
    clock.advance(minutes=1)
    assert project.health_of("notes/shaky").confidence.score == steady.score


def test_an_uncited_memory_is_marked_uncited_and_gets_no_evidence_bonus(
    project: Project,
) -> None:
    service = project.service
    service.add("notes/cited", "Cited.", citations=["src/app.py:3"])
    service.add("notes/prose", "Only prose, nothing to check.")
    report = {m.path: m for m in service.health().memories}
    prose = report["notes/prose"]
    assert prose.status == "uncited"
    assert prose.citations["total"] == 0
    assert (prose.confidence.evidence, prose.confidence.record) == (0.0, 0.0)
    assert prose.confidence.score == 0.0 < report["notes/cited"].confidence.score
    assert project.runs("notes/prose") == 0  # nothing was verified, nothing recorded
    service.reinforce("notes/prose")
    assert project.health_of("notes/prose").confidence.score == 0.15  # support only


def test_a_memory_citing_only_urls_is_uncited_unless_they_are_checked(
    project: Project,
) -> None:
    project.service.add("notes/docs", "See the docs.", citations=["https://example.com/x"])
    for _ in range(2):  # a report verifies; skipped URLs must not count as a clean run
        health = project.health_of("notes/docs")
        assert health.citations["skipped"] == 1
        assert "uncited" in health.flags
        confidence = health.confidence
        assert (confidence.evidence, confidence.freshness, confidence.record) == (0.0, 0.0, 0.0)
        assert confidence.score == 0.0


# -- reinforce from the CLI and over MCP --------------------------------------------------


def test_cli_reinforce_records_a_confirmation_with_its_note_and_raises_confidence(
    project: Project, run_cli: RunCli
) -> None:
    project.service.add("notes/api", "API.", citations=["src/app.py:3"])
    before = project.health_of("notes/api").confidence.score
    result = run_cli(["reinforce", "notes/api", "--note", "read app.py", "--dir", project.store])
    assert result.exit_code == 0, result.output
    cid = project.service.citation_id("notes/api")
    assert result.stdout == f"reinforced notes/api  {cid} (1 confirmation)\n"
    result = run_cli(["reinforce", "notes/api", "--json", "--dir", project.store])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "path": "notes/api",
        "id": cid.strip("[]"),
        "reinforcements": 2,
    }
    rows = project.query("SELECT path, note FROM reinforcements ORDER BY id")
    assert rows == [("notes/api", "read app.py"), ("notes/api", None)]
    assert project.health_of("notes/api").confidence.score > before


def test_cli_reinforce_of_an_unknown_memory_is_a_usage_error(
    project: Project, run_cli: RunCli
) -> None:
    project.service.add("notes/api", "API.")
    result = run_cli(["reinforce", "notes/nope", "--dir", project.store])
    assert result.exit_code == 2
    assert "notes/nope" in result.stderr
    assert project.query("SELECT count(*) FROM reinforcements") == [(0,)]


def test_mcp_reinforce_memory_raises_confidence_reported_by_memory_health(
    project: Project,
) -> None:
    project.service.add("notes/api", "API.", citations=["src/app.py:3"])
    app = App(env={**project.env}, cwd=project.root)

    async def scenario() -> tuple[float, dict[str, object], float]:
        async with Client(build_server(app.service_for)) as client:
            agent = Agent(client)
            before = await health_confidence(client, "notes/api")
            confirmed = await agent.call("reinforce_memory", path="notes/api", note="ok")
            after = await health_confidence(client, "notes/api")
            return before, confirmed, after

    before, confirmed, after = anyio.run(scenario)
    assert confirmed == {
        "path": "notes/api",
        "id": project.service.citation_id("notes/api").strip("[]"),
        "reinforcements": 1,
    }
    assert after > before
    sessions = project.query("SELECT session, note FROM reinforcements")
    assert [(s.startswith("mcp:"), n) for s, n in sessions] == [(True, "ok")]


async def health_confidence(client: Client, path: str) -> float:
    result = await client.call_tool("memory_health", {})
    assert not result.is_error
    data = result.structured_content
    assert isinstance(data, dict)
    [memory] = [m for m in data["memories"] if m["path"] == path]
    score = memory["confidence"]
    assert isinstance(score, float)
    return score
