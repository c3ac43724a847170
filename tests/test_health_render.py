"""The health report's three formats: markdown for a pull-request comment, JSON with the
shape documented in health_render.py, and one self-contained HTML file.

(The HTML page in a real browser is test_health_browser.py.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from markdown_it import MarkdownIt
from mcp import Client

from conftest import Clock, RunCli
from health_support import RANKED, Project, every_status
from memory_enhancement.cli.app import App
from memory_enhancement.core.verdicts import Verdict
from memory_enhancement.health import render as health_render
from memory_enhancement.health.html import render as render_html
from memory_enhancement.health.render import as_json, as_markdown
from memory_enhancement.health.report import STATUSES, HealthReport
from memory_enhancement.mcp.server import build_server

VERDICTS = {
    "valid", "moved", "stale", "missing", "out_of_range", "skipped", "invalid",
    "ambiguous", "in_submodule", "unchecked",
}  # fmt: skip
MEMORY_KEYS = {
    "rank", "path", "id", "title", "status", "flags", "confidence", "confidence_parts",
    "last_verified", "uses", "reinforcements", "citations", "mentions", "dangling_links",
    "problems",
}  # fmt: skip


@pytest.fixture
def zoo(tmp_path: Path, clock: Clock) -> Project:
    return every_status(Project(tmp_path / "project", clock))


@pytest.fixture
def report(zoo: Project) -> HealthReport:
    return zoo.service.health()


# -- JSON -------------------------------------------------------------------------------------


def check_shape(data: dict[str, Any]) -> None:
    """The documented shape, key for key and type for type."""
    assert list(data) == [
        "store", "generated_at", "summary", "memories", "history", "graph", "skipped",
    ]  # fmt: skip
    assert isinstance(data["store"], str) and isinstance(data["generated_at"], str)
    summary = data["summary"]
    assert list(summary) == [
        "memories", "statuses", "flags", "confidence", "broken_files", "citations", "mentions",
    ]  # fmt: skip
    for kind in ("citations", "mentions"):  # the store's, by verdict, as each memory's
        assert list(summary[kind]) == ["total", *(v.value for v in Verdict)]
        assert all(isinstance(n, int) for n in summary[kind].values())
    assert isinstance(summary["memories"], int)
    assert list(summary["statuses"]) == list(STATUSES)
    assert all(isinstance(n, int) for n in summary["statuses"].values())
    assert list(summary["flags"]) == list(STATUSES)
    assert all(summary["flags"][s] >= n for s, n in summary["statuses"].items())
    assert list(summary["confidence"]) == ["histogram", "median", "mean"]
    histogram = summary["confidence"]["histogram"]
    assert len(histogram) == 10 and all(isinstance(n, int) for n in histogram)
    for item in summary["broken_files"]:
        assert list(item) == ["file", "failing_citations", "memories"]
    for memory in data["memories"]:
        assert set(memory) == MEMORY_KEYS
        assert memory["id"].startswith("mem:")
        assert memory["status"] in STATUSES
        assert set(memory["flags"]) <= set(STATUSES)
        assert 0 <= memory["confidence"] <= 1
        assert list(memory["confidence_parts"]) == ["evidence", "freshness", "support", "record"]
        for kind in ("citations", "mentions"):
            assert set(memory[kind]) == {"total"} | VERDICTS
            assert memory[kind]["total"] == sum(n for k, n in memory[kind].items() if k != "total")
        for problem in memory["problems"]:
            assert list(problem) == ["citation", "reason"]
    for day in data["history"]:
        assert list(day) == ["day", "counts"]
        assert set(day["counts"]) <= VERDICTS
    assert list(data["graph"]) == ["nodes", "edges"]
    for node in data["graph"]["nodes"]:
        assert list(node) == ["path", "status", "worst"]
    for edge in data["graph"]["edges"]:
        assert list(edge) == ["source", "target", "type"]
    assert all(isinstance(s, str) for s in data["skipped"])


def test_the_json_has_exactly_the_documented_shape(report: HealthReport) -> None:
    data = as_json(report)
    check_shape(data)
    json.dumps(data)  # serialisable as it is


DOCS = Path(__file__).resolve().parents[1] / "docs" / "health.md"


def documented_keys(text: str) -> set[str]:
    return set(re.findall(r'"(\w+)"', text))


def used_keys(data: dict[str, Any]) -> set[str]:
    used = set(data) | set(data["summary"]) | set(data["summary"]["confidence"])
    used |= set(data["summary"]["broken_files"][0]) | set(data["memories"][0])
    used |= set(data["memories"][0]["problems"][0]) | set(data["history"][0]) | set(data["graph"])
    used |= set(data["graph"]["nodes"][0]) | set(data["graph"]["edges"][0])
    used |= set(data["memories"][0]["confidence_parts"]) | set(data["memories"][0]["citations"])
    return used


def test_every_key_of_the_json_is_named_in_the_documented_shape(report: HealthReport) -> None:
    documented = documented_keys(health_render.__doc__ or "")
    elided = {"evidence", "freshness", "support", "record"} | VERDICTS - {"valid", "moved"}
    used = used_keys(as_json(report))
    assert used - elided <= documented, used - elided - documented


def test_the_json_example_in_the_docs_names_every_key(report: HealthReport) -> None:
    example = DOCS.read_text(encoding="utf-8").split("```json", 1)[1].split("```", 1)[0]
    used = used_keys(as_json(report))
    assert used <= documented_keys(example), used - documented_keys(example)


def test_the_json_carries_the_report(report: HealthReport, zoo: Project) -> None:
    data = as_json(report)
    assert data["store"] == str(zoo.store)
    assert data["generated_at"] == "2026-02-01T12:00:00.000Z"
    assert [(m["path"], m["status"]) for m in data["memories"]] == RANKED
    assert [m["rank"] for m in data["memories"]] == list(range(1, 11))
    first = data["memories"][0]
    assert first["id"] == f"mem:{report.memories[0].citation_id}"
    assert first["title"] == "Missing"
    assert first["flags"] == ["missing", "stale"]
    assert first["problems"] == [
        {"citation": "src/gone.py:1", "reason": "src/gone.py not found"},
        {"citation": "src/app.py:5", "reason": "line 5 now reads `app_5 = 'five'`"},
    ]
    good = data["memories"][-1]
    assert (good["uses"], good["last_verified"]) == (2, "2026-02-01T12:00:00.000Z")
    assert data["summary"]["broken_files"] == [
        {"file": "src/app.py", "failing_citations": 3, "memories": 3},
        {"file": "src/gone.py", "failing_citations": 1, "memories": 1},
    ]
    scores = sorted(m["confidence"] for m in data["memories"])
    assert data["summary"]["confidence"]["median"] == (scores[4] + scores[5]) / 2
    assert data["history"] == [
        {"day": "2026-01-31", "counts": {"valid": 9, "missing": 1}},
        {"day": "2026-02-01", "counts": {"valid": 5, "stale": 3, "moved": 1, "missing": 1}},
    ]


def test_a_json_limit_cuts_the_list_not_the_summary(report: HealthReport) -> None:
    data = as_json(report, limit=3)
    assert [m["path"] for m in data["memories"]] == [p for p, _ in RANKED[:3]]
    assert data["summary"]["memories"] == 10
    assert sum(data["summary"]["confidence"]["histogram"]) == 10


def test_an_empty_store_has_no_median(tmp_path: Path, clock: Clock) -> None:
    data = as_json(Project(tmp_path / "empty", clock).service.health())
    check_shape(data)
    assert data["summary"]["confidence"] == {"histogram": [0] * 10, "median": None, "mean": None}
    assert data["memories"] == []


def test_cli_health_json_is_the_documented_shape(zoo: Project, run_cli: RunCli) -> None:
    result = run_cli(["health", "--format", "json", "--limit", "4", "--dir", zoo.store])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    check_shape(data)
    assert [m["path"] for m in data["memories"]] == [p for p, _ in RANKED[:4]]


def test_mcp_memory_health_returns_the_json_report(zoo: Project) -> None:
    app = App(env=dict(zoo.env), cwd=zoo.root)

    async def call(**arguments: Any) -> dict[str, Any]:
        async with Client(build_server(app.service_for)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["memory_health"].annotations.read_only_hint is True  # type: ignore[union-attr]
            result = await client.call_tool("memory_health", arguments)
            assert not result.is_error
            assert isinstance(result.structured_content, dict)
            return result.structured_content

    data = anyio.run(lambda: call(limit=2, include_graph=True, history_days=90))
    assert data.pop("cut") == "listed memories 1-2 of 10, most urgent first: offset=2 for the next"
    for memory in data["memories"]:  # MCP leaves a memory's counts of 0 out
        for kind in ("citations", "mentions"):
            counts = memory[kind]
            assert all(counts.values()) and set(counts) <= {"total"} | VERDICTS
            memory[kind] = {v: counts.get(v, 0) for v in ("total", *VERDICTS)}
    check_shape(data)
    assert [m["path"] for m in data["memories"]] == [p for p, _ in RANKED[:2]]
    assert data["summary"]["memories"] == 10
    page = anyio.run(lambda: call(limit=2, offset=2))
    assert [(m["rank"], m["path"]) for m in page["memories"]] == [
        (3, RANKED[2][0]), (4, RANKED[3][0])
    ]  # fmt: skip
    assert "graph" not in page and page["summary"]["statuses"] == data["summary"]["statuses"]
    assert page["cut"].startswith("listed memories 3-4 of 10, most urgent first: offset=4 ")
    assert "include_graph=true adds it" in page["cut"]


# -- markdown ------------------------------------------------------------------------------------


def tables(markdown: str) -> list[list[list[str]]]:
    """The tables of a markdown text as GitHub renders them: rows of cell texts."""
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    found = []
    for table in re.findall(r"<table>(.*?)</table>", html, re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
        found.append(
            [
                [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(
                    r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S
                )]
                for row in rows
            ]
        )  # fmt: skip
    return found


def test_the_markdown_reads_as_a_pull_request_comment(report: HealthReport, zoo: Project) -> None:
    text = as_markdown(report)
    lines = text.splitlines()
    assert lines[0] == "## Memory health"
    assert lines[2] == (
        f"**10 memories** in `{zoo.store}` · missing files: **1** · stale: **3** · "
        "dangling links: **1** · moved: **1** · expired: **1** · uncited: **1** · "
        "orphans: **1** · healthy: **2** (a memory with several problems counts under each)"
    )
    assert lines[4] == "Citations: **10** (5 ok, 1 moved, 4 failing)"  # no mentions: none said
    assert lines[6].startswith("Confidence: median **0.70**, mean 0.46 · distribution `")
    assert lines[6].endswith("` (0 → 1)")
    assert "### Needs attention (8, most urgent first)" in lines
    assert "### Cited files that broke the most memories" in lines
    assert lines[-1] == "<sub>memory-enhancement health, 2026-02-01T12:00:00.000Z</sub>"
    attention, files = tables(text)
    assert attention[0] == [
        "#", "Memory", "Status", "Confidence", "Citations ok / moved / failing",
        "Mentions ok / moved / failing", "Last verified", "Uses",
    ]  # fmt: skip
    cid = report.memories[0].citation_id
    assert attention[1] == [
        "1", f"notes/missing [mem:{cid}]", "missing files", "0.00", "0 / 0 / 2", "0 / 0 / 0",
        "2026-02-01", "0",
    ]  # fmt: skip
    assert [row[1].split()[0] for row in attention[1:]] == [
        path for path, status in RANKED if status != "healthy"
    ]
    assert attention[7][2:] == ["uncited", "0.00", "0 / 0 / 0", "0 / 0 / 0", "never", "0"]
    assert files == [
        ["File", "Failing citations", "Memories"],
        ["src/app.py", "3", "3"],
        ["src/gone.py", "1", "1"],
    ]


def test_the_failing_citations_fold_into_a_details_block(report: HealthReport) -> None:
    text = as_markdown(report)
    block = text.split("<details><summary>Failing citations</summary>\n\n", 1)[1]
    block = block.split("\n\n</details>\n", 1)[0]
    assert block.splitlines() == [
        "- `notes/missing`: `src/gone.py:1`: src/gone.py not found",
        "- `notes/missing`: `src/app.py:5`: line 5 now reads `app_5 = 'five'`",
        "- `notes/stale`: `src/app.py:5`: line 5 now reads `app_5 = 'five'`",
        "- `notes/stale-confirmed`: `src/app.py:5`: line 5 now reads `app_5 = 'five'`",
    ]


def test_a_markdown_limit_summarises_the_rest_in_one_row(report: HealthReport) -> None:
    text = as_markdown(report, limit=3)
    [attention, _] = tables(text)
    assert len(attention) == 1 + 3 + 1
    assert attention[-1] == ["", "… 5 more", "", "", "", "", "", ""]
    assert "### Needs attention (8, most urgent first)" in text


def test_a_healthy_store_says_so(tmp_path: Path, clock: Clock) -> None:
    project = Project(tmp_path / "fine", clock)
    project.service.add("notes/a", "# A", citations=["src/app.py:3"], links=["notes/b"])
    project.service.add("notes/b", "# B", citations=["src/app.py:4"], links=["notes/a"])
    text = as_markdown(project.service.health())
    assert "All memories are healthy." in text
    assert "Needs attention" not in text and "<details>" not in text
    assert "healthy: **2**" in text


def test_an_empty_store_says_it_has_no_memories_yet(tmp_path: Path, clock: Clock) -> None:
    """A new user runs `health` before the first `add` (or in a repository whose memories
    were removed): it said "**0 memories** in `...` · " with nothing after the dot, then
    "All memories are healthy."."""
    project = Project(tmp_path / "empty", clock)
    text = as_markdown(project.service.health())
    assert f"**0 memories** in `{project.store}`\n" in text
    assert "No memories yet." in text
    assert "healthy" not in text and " · " not in text


def test_unreadable_files_are_mentioned_once(zoo: Project) -> None:
    zoo.file("notes/broken").write_text("---\ntags: [unclosed\n---\nx\n", encoding="utf-8")
    text = as_markdown(zoo.service.health())
    assert "1 memory file could not be read in full (see `list`)." in text


def test_cli_health_prints_the_markdown_by_default(zoo: Project, run_cli: RunCli) -> None:
    result = run_cli(["health", "--dir", zoo.store])
    assert result.exit_code == 0
    assert result.stdout.startswith("## Memory health\n\n**10 memories**")
    assert len(tables(result.stdout)[0]) == 1 + 8


# -- HTML, statically -----------------------------------------------------------------------------


def test_the_html_page_is_one_self_contained_file(report: HealthReport) -> None:
    page = render_html(report)
    assert page.startswith("<!DOCTYPE html>")
    assert "http" not in page
    assert "<script src" not in page and "<link" not in page and "@import" not in page
    assert re.findall(r"url\(([^)]*)\)", page) == ["#arrow"] * len(report.graph["edges"])
    for element in (
        'id="chart-confidence"', 'id="chart-history"', 'id="chart-files"', 'id="graph"',
        'id="filter-text"', 'id="filter-status"', 'id="memories"',
    ):  # fmt: skip
        assert element in page


def test_the_html_table_has_a_row_per_memory_with_its_flags(report: HealthReport) -> None:
    page = render_html(report)
    rows = re.findall(r'<tr data-search="([^"]*)" data-flags="([^"]*)">', page)
    assert [search.split()[0] for search, _ in rows] == [p for p, _ in RANKED]
    assert rows[0][1] == "missing stale"
    assert len(re.findall(r'<rect class="bar"', page)) > 10
    assert len(re.findall(r'<circle class="node"', page)) == len(report.graph["nodes"])
    limited = render_html(report, limit=2)
    assert len(re.findall(r"<tr data-search=", limited)) == 2


def test_the_html_cards_count_the_rows_their_status_filter_shows(report: HealthReport) -> None:
    """The filter shows each memory carrying a flag, so its card counts them all: notes/missing
    is stale too (3), and a note says a memory may count twice."""
    page = render_html(report)
    cards = dict(re.findall(r"<b>(\d+)</b><span>([^<]+)</span>", page))
    flags = re.findall(r'data-flags="([^"]*)"', page)
    assert cards["3"] == "stale" and sum("stale" in f.split() for f in flags) == 3
    assert '<p class="muted">a memory with several problems counts under each</p>' in page


def test_the_html_escapes_what_memories_say(tmp_path: Path, clock: Clock) -> None:
    project = Project(tmp_path / "xss", clock)
    project.service.add(
        "notes/xss", "# <script>alert('t')</script> & \"q\"\n\nx", citations=["src/gone.py:1"]
    )
    page = render_html(project.service.health())
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;t&#x27;)&lt;/script&gt; &amp; &quot;q&quot;" in page
    assert page.count("<script>") == 1  # the filter, and only it


def test_cli_health_html_output(zoo: Project, run_cli: RunCli, tmp_path: Path) -> None:
    target = tmp_path / "health.html"
    result = run_cli(["health", "--format", "html", "-o", target, "--dir", zoo.store])
    assert result.exit_code == 0
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "10 memories in" in page


def test_the_report_counts_moved_citations_and_moved_mentions_apart(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """The summary's `moved` counts memories, and the table added a memory's prose mentions
    to its citations under "Citations": one cited line and two mentioned ones that moved
    read "0 / 3 / 0". Each count now says what it counts; the JSON only gains fields."""
    from verify_support import STORE, code, coded

    repo = coded(tmp_path / "project", {"src/app.py": 10})
    repo.write_lines(
        f"{STORE}/notes.md", ["# Notes", "", "Set in src/app.py:3, read in src/app.py:4."]
    )
    where = ["--dir", str(repo.root / STORE)]
    assert (
        run_cli(["citation", "add", "notes", "src/app.py:2", *where], cwd=repo.root).exit_code == 0
    )
    repo.commit("memory")
    repo.write_lines("src/app.py", ["# a", *code("src/app.py", 10)])
    repo.commit("a line on top")
    text = run_cli(["health", *where], cwd=repo.root).stdout
    assert "· moved: **1**" in text
    assert "Citations: **1** (0 ok, 1 moved, 0 failing) · prose mentions: **2** (0 ok, 2 moved, " \
        "0 failing)" in text  # fmt: skip
    (attention,) = tables(text)
    assert attention[1][2] == "moved" and attention[1][4:6] == ["0 / 1 / 0", "0 / 2 / 0"]
    summary = json.loads(run_cli(["health", "--format", "json", *where], cwd=repo.root).stdout)
    summary = summary["summary"]
    assert summary["statuses"]["moved"] == 1
    assert (summary["citations"]["moved"], summary["mentions"]["moved"]) == (1, 2)


def test_the_line_of_what_was_checked_opens_with_a_capital_when_nothing_is_cited(
    report: HealthReport,
) -> None:
    """A store with prose mentions and no citations (BigKAA/artStore's) read
    "prose mentions: **8** (...)" at the head of its line."""
    for memory in report.memories:
        memory.mentions.update(memory.citations)
        memory.citations.update(dict.fromkeys(memory.citations, 0))
    line = health_render.checked_counts(report)
    assert line == "Prose mentions: **10** (5 ok, 1 moved, 4 failing)"


def test_the_line_of_what_was_checked_names_the_mentions_nothing_could_vouch_for(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """Found on imDrOne/mtg-bro: "prose mentions: **4** (0 ok, 1 moved, 2 failing)", the
    fourth (a bare file name three modules share) counted in the total and nowhere else.
    The verdicts that neither hold nor fail are named after the others."""
    from verify_support import STORE, coded

    repo = coded(tmp_path / "project", {"a/Handler.kt": 10, "b/Handler.kt": 10, "src/app.py": 10})
    repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "See src/app.py:3 and Handler.kt:4."])
    repo.commit("memory")
    text = run_cli(["health", "--dir", str(repo.root / STORE)], cwd=repo.root).stdout
    assert "Prose mentions: **2** (1 ok, 0 moved, 0 failing, 1 ambiguous)" in text
