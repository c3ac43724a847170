"""The health report: a status, a confidence and the facts behind them per memory, the
most urgent first, with a summary (statuses, confidence spread, the most-broken files).

Built over a real git repository whose code changed after the memories were
verified (health_support.every_status), and over a copy of the real corpus.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Clock, RunCli
from health_support import RANKED, Project, every_status
from mcp_support import child_env
from memory_enhancement.health.render import as_json, as_markdown
from memory_enhancement.health.report import STATUSES, HealthReport, MemoryHealth


@pytest.fixture
def project(tmp_path: Path, clock: Clock) -> Project:
    return Project(tmp_path / "project", clock)


@pytest.fixture
def zoo(project: Project) -> Project:
    return every_status(project)


@pytest.fixture
def report(zoo: Project) -> HealthReport:
    return zoo.service.health()


@pytest.fixture
def corpus_copy(corpus: Path, tmp_path: Path) -> Path:
    """A writable copy of the real corpus (the report verifies, and records, as it goes)."""
    copy = tmp_path / "corpus"
    shutil.copytree(corpus, copy)
    return copy


def by_path(report: HealthReport) -> dict[str, MemoryHealth]:
    return {m.path: m for m in report.memories}


# -- per memory ---------------------------------------------------------------------------


def test_every_memory_gets_its_status_ranked_most_urgent_first(report: HealthReport) -> None:
    assert [(m.path, m.status) for m in report.memories] == RANKED


def test_the_status_order_is_the_urgency() -> None:
    assert STATUSES == (
        "missing", "stale", "dangling_links", "moved", "expired", "unchecked", "uncited",
        "orphan", "healthy",
    )  # fmt: skip


def test_among_equally_trusted_memories_the_one_with_more_failing_citations_comes_first(
    project: Project,
) -> None:
    """amitcjmu/Stock-Analysis: its 128 `missing` memories all read 0.00 on a first report
    and were ranked by path, a memory whose six mentions all name deleted files after one
    whose single mention does; so was rjmurillo/ai-agents' first page (15 of 72)."""
    service = project.service
    service.add("notes/a-one", "# One", citations=["src/db.py:1"])
    service.add("notes/b-two", "# Two", citations=["src/db.py:1", "src/db.py:2"])
    project.git.commit("memories")
    project.delete("src/db.py")
    missing = [m for m in project.service.health().memories if m.status == "missing"]
    assert [(m.path, m.confidence.score, len(m.stale_details)) for m in missing] == [
        ("notes/b-two", 0.0, 2),
        ("notes/a-one", 0.0, 1),
    ]


def test_within_a_status_the_less_trusted_memory_comes_first(report: HealthReport) -> None:
    stale = [m for m in report.memories if m.status == "stale"]
    assert [m.path for m in stale] == ["notes/stale", "notes/stale-confirmed"]
    assert stale[0].confidence.score < stale[1].confidence.score
    assert stale[1].reinforcements == 1


def test_flags_keep_every_problem_the_status_names_the_worst(report: HealthReport) -> None:
    memories = by_path(report)
    assert memories["notes/missing"].flags == ("missing", "stale")
    assert memories["notes/good"].flags == ("healthy",)


def test_a_memory_carries_its_citation_counts_and_the_failing_citations(
    report: HealthReport,
) -> None:
    missing = report.memories[0]
    assert missing.citations == {
        "total": 2, "valid": 0, "moved": 0, "stale": 1, "missing": 1, "out_of_range": 0,
        "skipped": 0, "invalid": 0, "ambiguous": 0, "in_submodule": 0, "unchecked": 0,
    }  # fmt: skip
    assert missing.stale_details == (
        ("src/gone.py:1", "src/gone.py not found"),
        ("src/app.py:5", "line 5 now reads `app_5 = 'five'`"),
    )
    moved = by_path(report)["notes/moved"]
    assert moved.citations["moved"] == 1
    assert moved.stale_details == ()


def test_a_memory_carries_last_verified_uses_and_dangling_links(report: HealthReport) -> None:
    memories = by_path(report)
    good, uncited = memories["notes/good"], memories["notes/uncited"]
    dangling = memories["notes/dangling"]
    assert good.last_verified == "2026-02-01T12:00:00.000Z"
    assert good.uses == 2
    assert uncited.last_verified is None
    assert dangling.dangling_links == 1
    assert report.memories[-2].dangling_links == 0


def test_confidence_is_the_documented_formula_of_the_history(report: HealthReport) -> None:
    memories = by_path(report)
    assert memories["notes/other"].confidence.score == 0.70
    assert memories["notes/good"].confidence.support == round(1 - 0.5**0.5, 4)  # 2 uses
    assert memories["notes/uncited"].confidence.score == 0.0
    assert memories["notes/missing"].confidence.score == 0.0


# -- the summary ------------------------------------------------------------------------------


def test_the_summary_counts_every_status(report: HealthReport) -> None:
    assert report.status_counts == {
        "missing": 1, "stale": 2, "dangling_links": 1, "moved": 1, "expired": 1, "unchecked": 0,
        "uncited": 1, "orphan": 1, "healthy": 2,
    }  # fmt: skip
    assert list(report.status_counts) == list(STATUSES)
    assert sum(report.status_counts.values()) == report.total == 10


def test_the_summary_also_counts_each_memory_under_every_flag_it_carries(
    report: HealthReport,
) -> None:
    """notes/missing is missing and stale: one status, two flags."""
    assert report.flag_counts == {**report.status_counts, "stale": 3}
    assert list(report.flag_counts) == list(STATUSES)


def test_an_uncited_orphan_counts_as_an_orphan_too_as_the_orphans_command_lists_it(
    tmp_path: Path, clock: Clock, run_cli: RunCli
) -> None:
    """lidia-k/FundFlow's health said "orphans: 4" while `orphans` listed 18: 14 of them
    were uncited, which outranks orphan in a memory's status."""
    project = Project(tmp_path / "project", clock)
    project.service.add("notes/alone", "# Alone\n\nCites.", citations=["src/app.py:3"])
    project.service.add("notes/prose", "# Prose\n\nJust words.")
    report = project.service.health()
    assert (report.status_counts["uncited"], report.status_counts["orphan"]) == (1, 1)
    assert (report.flag_counts["uncited"], report.flag_counts["orphan"]) == (1, 2)
    listed = run_cli(["orphans", "--dir", project.store])
    assert listed.stdout.strip().endswith("2 orphans (no links either way)")
    summary = as_markdown(report).splitlines()[2]
    assert summary.endswith(
        "uncited: **1** · orphans: **2** (a memory with several problems counts under each)"
    )
    data = as_json(report)["summary"]
    assert (data["statuses"]["orphan"], data["flags"]["orphan"]) == (1, 2)


def test_the_histogram_counts_memories_per_tenth_of_confidence(report: HealthReport) -> None:
    assert len(report.histogram) == 10
    assert sum(report.histogram) == report.total
    expected = [0] * 10
    for memory in report.memories:
        expected[min(int(memory.confidence.score * 10), 9)] += 1
    assert report.histogram == expected
    assert report.histogram[7] == 6  # 0.70 .. 0.79: verified valid, never confirmed


def test_broken_files_rank_the_cited_files_that_broke_the_most_memories(
    report: HealthReport,
) -> None:
    assert report.broken_files == [("src/app.py", 3, 3), ("src/gone.py", 1, 1)]


def test_the_verdicts_over_time_come_from_the_history(report: HealthReport) -> None:
    assert report.verdict_days == [
        ("2026-01-31", {"valid": 9, "missing": 1}),
        ("2026-02-01", {"valid": 5, "stale": 3, "moved": 1, "missing": 1}),
    ]


def test_the_graph_shows_the_worst_memories_and_their_neighbours(report: HealthReport) -> None:
    nodes = {n["path"]: n for n in report.graph["nodes"]}
    unhealthy = [path for path, status in RANKED if status != "healthy"]
    assert [p for p, n in nodes.items() if n["worst"]] == unhealthy
    assert nodes["notes/good"] == {"path": "notes/good", "status": "healthy", "worst": False}
    assert {"source": "notes/stale", "target": "notes/good", "type": "link"} in report.graph[
        "edges"
    ]
    for edge in report.graph["edges"]:
        assert edge["source"] in nodes and edge["target"] in nodes


def test_a_memory_file_that_cannot_be_read_in_full_is_listed_as_skipped(project: Project) -> None:
    """A file that is not text is left out of the report; one whose header alone does not
    parse is in it (its text is read) and named among the skipped all the same."""
    project.service.add("notes/fine", "Fine.", citations=["src/app.py:3"])
    broken = project.file("notes/broken")
    broken.write_text("---\ntags: [unclosed\n---\nBody\n", encoding="utf-8")
    project.file("notes/latin").write_bytes("Caf\xe9\n".encode("latin-1"))
    report = project.service.health()
    assert [m.path for m in report.memories] == ["notes/broken", "notes/fine"]
    assert len(report.skipped) == 2
    assert "notes/broken: malformed YAML" in report.skipped[0]
    assert "notes/latin: not UTF-8" in report.skipped[1]


def test_an_empty_store_gives_an_empty_report(project: Project) -> None:
    report = project.service.health()
    assert (report.total, report.memories, report.broken_files) == (0, [], [])
    assert report.histogram == [0] * 10
    assert set(report.status_counts.values()) == {0}


def test_the_report_is_a_verification_run_recorded_in_the_history(
    zoo: Project, clock: Clock
) -> None:
    before = zoo.runs("notes/good")
    zoo.service.health()
    assert zoo.runs("notes/good") == before + 1


# -- through the CLI: a report, not a gate ------------------------------------------------------


@pytest.mark.parametrize("fmt", ["markdown", "json", "html"])
def test_health_exits_0_even_when_memories_are_stale(
    zoo: Project, run_cli: RunCli, fmt: str
) -> None:
    assert run_cli(["verify-all", "--dir", zoo.store]).exit_code == 1  # the gate fails
    result = run_cli(["health", "--format", fmt, "--dir", zoo.store])
    assert result.exit_code == 0, result.stderr
    assert result.stdout
    assert result.stderr == ""


def test_health_output_writes_the_report_to_a_file(
    zoo: Project, run_cli: RunCli, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "health.json"
    result = run_cli(["health", "--format", "json", "--output", target, "--dir", zoo.store])
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == f"wrote {target} (10 memories)\n"
    data = json.loads(target.read_text(encoding="utf-8"))
    assert [m["path"] for m in data["memories"]] == [path for path, _ in RANKED]


def test_health_output_replaces_an_older_report_whole_and_leaves_no_temporary_file(
    zoo: Project, run_cli: RunCli, tmp_path: Path
) -> None:
    """The report is written beside the old one and renamed over it, so a reader (or a
    full disk, or a kill midway) never sees half a report, nor the old one's tail."""
    target = tmp_path / "out" / "health.md"
    target.parent.mkdir()
    target.write_text("old report\n" * 5_000, encoding="utf-8")
    result = run_cli(["health", "--output", target, "--dir", zoo.store])
    assert result.exit_code == 0, result.stderr
    text = target.read_text(encoding="utf-8")
    assert "old report" not in text and text.startswith("#")
    assert sorted(p.name for p in target.parent.iterdir()) == ["health.md"]


def test_health_output_writes_through_a_symlink_and_into_a_fifo_replacing_neither(
    zoo: Project, run_cli: RunCli, tmp_path: Path
) -> None:
    """Renamed over, a symlinked report became a copy beside a stale target, and
    `--output /dev/stdout` (a symlink to a pipe) replaced the container's /dev/stdout with
    a file when run as root."""
    published = tmp_path / "site" / "health.md"
    published.parent.mkdir()
    published.write_text("old report\n", encoding="utf-8")
    published.chmod(0o640)
    link = tmp_path / "health.md"
    link.symlink_to(published)
    assert run_cli(["health", "--output", link, "--dir", zoo.store]).exit_code == 0
    assert link.is_symlink() and published.read_text(encoding="utf-8").startswith("#")
    assert stat.S_IMODE(published.stat().st_mode) == 0o640
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the writer opens
    try:
        result = run_cli(["health", "--format", "json", "--output", fifo, "--dir", zoo.store])
        assert result.exit_code == 0, result.stderr
        received = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert len(json.loads(received)["memories"]) == 10
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize("limit", ["0", "-3"])
def test_a_limit_below_one_is_a_usage_error(zoo: Project, run_cli: RunCli, limit: str) -> None:
    result = run_cli(["health", "--limit", limit, "--dir", zoo.store])
    assert result.exit_code == 2
    assert f"invalid --limit {limit}" in result.stderr


def test_health_runs_as_a_real_process(zoo: Project, tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("memory-enhancement")
    done = subprocess.run(
        [str(script), "health", "--format", "json", "--limit", "3", "--dir", str(zoo.store)],
        capture_output=True,
        text=True,
        env=child_env(Path(os.environ["MEMORY_ENHANCEMENT_HOME"])),
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [m["path"] for m in data["memories"]] == [p for p, _ in RANKED[:3]]
    assert data["summary"]["memories"] == 10


# -- the real corpus ----------------------------------------------------------------------------


@pytest.mark.slow
def test_on_the_real_corpus_the_report_runs_and_ranks_missing_citations_first(
    corpus_copy: Path, run_cli: RunCli
) -> None:
    files = sorted(corpus_copy.rglob("*.md"))
    result = run_cli(["health", "--format", "json", "--no-mentions", "--dir", corpus_copy])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    memories = data["memories"]
    assert data["summary"]["memories"] == len(memories) == len(files) - len(data["skipped"])
    assert [m["rank"] for m in memories] == list(range(1, len(memories) + 1))
    first = memories[0]
    assert (first["path"], first["status"]) == ("testing/test-citation-verification", "missing")
    assert [p["citation"] for p in first["problems"]] == [
        "pyproject.toml:1",
        "scripts/memory_enhancement/models.py:38",
    ]
    urgency = [STATUSES.index(m["status"]) for m in memories]
    assert urgency == sorted(urgency)
    for status in STATUSES:
        scores = [m["confidence"] for m in memories if m["status"] == status]
        assert scores == sorted(scores), status
    counts = data["summary"]["statuses"]
    assert sum(counts.values()) == len(memories)
    assert counts["uncited"] > counts["missing"] >= 1  # most real notes cite nothing
    assert {f["file"] for f in data["summary"]["broken_files"]} >= {"pyproject.toml"}
    assert data["summary"]["confidence"]["median"] == statistics.median(
        m["confidence"] for m in memories
    )


@pytest.mark.slow
def test_on_the_real_corpus_the_markdown_report_puts_the_broken_memory_on_top(
    corpus_copy: Path, run_cli: RunCli
) -> None:
    result = run_cli(["health", "--limit", "5", "--no-mentions", "--dir", corpus_copy])
    assert result.exit_code == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| 1 |")]
    assert rows and "`testing/test-citation-verification`" in rows[0]
    assert "missing files" in rows[0]
    assert "| | … " in result.stdout  # the rest is summarised, not dumped
