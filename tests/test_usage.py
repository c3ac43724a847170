"""Usage tracking and graduation (seed 002 §5, issue 4 "Usage tracking").

When get, search, context or resolve hand memories to an agent, the state
database records the citation ID, the session, the time and the query. The
counts rank popular memories and graduation candidates; `graduate` copies a
project memory into the global store (inside the test's isolated tool home),
keeping its citations and linking the two copies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Clock, RunCli
from index_support import disk_service, usage_rows, write_memory
from memory_enhancement.core.errors import (
    AlreadyExistsError,
    InvalidInputError,
    UnreadableMemoryError,
)
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.locations import store_key
from memory_enhancement.verify.repo import Repository

T0 = "2026-01-31T12:00:00.000Z"


@pytest.fixture
def store(store_dir: Path) -> Path:
    write_memory(store_dir, "notes/caching", "Redis holds the session cache.", title="Caching")
    write_memory(store_dir, "notes/deploy", "Deploys go through the blue pipeline.", title="Deploy")
    write_memory(store_dir, "howto/tests", "Run pytest; the pipeline runs it too.", title="Tests")
    return store_dir


@pytest.fixture
def tracked(store: Path, git_repo: Path, tmp_path: Path, clock: Clock) -> MemoryService:
    return disk_service(store, git_repo, tmp_path, clock=clock, session="agent-7")


def bare(service: MemoryService, path: str) -> str:
    return service.citation_id(path)[5:-1]


# -- what is recorded ------------------------------------------------------------------


def test_get_records_the_id_path_session_time_and_no_query(
    tracked: MemoryService, tmp_path: Path
) -> None:
    tracked.get("notes/caching")
    assert usage_rows(tmp_path / "state.db") == [
        (bare(tracked, "notes/caching"), "notes/caching", "agent-7", T0, "get", None)
    ]


def test_search_records_every_hit_returned_with_the_query(
    tracked: MemoryService, tmp_path: Path, clock: Clock
) -> None:
    clock.advance(minutes=5)
    tracked.search("pipeline")
    rows = usage_rows(tmp_path / "state.db")
    assert sorted(r[1] for r in rows) == ["howto/tests", "notes/deploy"]
    assert {(r[2], r[3], r[4], r[5]) for r in rows} == {
        ("agent-7", "2026-01-31T12:05:00.000Z", "search", "pipeline")
    }
    assert {r[0] for r in rows} == {bare(tracked, "howto/tests"), bare(tracked, "notes/deploy")}


def test_search_records_only_the_hits_kept_by_the_limit(
    tracked: MemoryService, tmp_path: Path
) -> None:
    (hit,) = tracked.search("pipeline", limit=1)
    assert [r[1] for r in usage_rows(tmp_path / "state.db")] == [hit.hit.row.path]


def test_a_search_with_no_hits_records_nothing(tracked: MemoryService, tmp_path: Path) -> None:
    assert tracked.search("kangaroo") == []
    assert usage_rows(tmp_path / "state.db") == []


def test_context_records_the_memories_in_the_block(tracked: MemoryService, tmp_path: Path) -> None:
    _, used = tracked.context("pipeline", limit=1)
    rows = usage_rows(tmp_path / "state.db")
    assert [(r[1], r[4], r[5]) for r in rows] == [(used[0].hit.row.path, "context", "pipeline")]


def test_resolve_records_a_resolve(tracked: MemoryService, tmp_path: Path) -> None:
    tracked.resolve(tracked.citation_id("howto/tests"))
    rows = usage_rows(tmp_path / "state.db")
    assert [(r[1], r[4]) for r in rows] == [("howto/tests", "resolve")]


def test_listing_and_looking_up_an_id_record_nothing(
    tracked: MemoryService, tmp_path: Path
) -> None:
    tracked.list_memories()
    tracked.recent()
    tracked.citation_id("notes/caching")
    assert usage_rows(tmp_path / "state.db") == []


# -- popularity and graduation candidates -------------------------------------------------


def use(service: MemoryService, path: str, times: int, clock: Clock) -> None:
    for _ in range(times):
        clock.advance(minutes=1)
        service.get(path)


def test_popular_ranks_by_uses_and_counts_sessions(
    store: Path, git_repo: Path, tmp_path: Path, clock: Clock
) -> None:
    first = disk_service(store, git_repo, tmp_path, clock=clock, session="s1")
    second = disk_service(store, git_repo, tmp_path, clock=clock, session="s2")
    use(first, "notes/deploy", 3, clock)
    use(second, "notes/deploy", 1, clock)
    use(first, "notes/caching", 2, clock)
    use(second, "howto/tests", 1, clock)
    ranked = first.popular(limit=10)
    assert [(p.path, p.uses, p.sessions) for p in ranked] == [
        ("notes/deploy", 4, 2),
        ("notes/caching", 2, 1),
        ("howto/tests", 1, 1),
    ]
    assert ranked[0].citation_id == bare(first, "notes/deploy")
    assert ranked[0].last_used == "2026-01-31T12:04:00.000Z"
    assert [p.path for p in first.popular(limit=2)] == ["notes/deploy", "notes/caching"]
    with pytest.raises(InvalidInputError, match="limit"):
        first.popular(limit=0)


def test_uses_follow_a_memory_the_tool_moves(tracked: MemoryService, clock: Clock) -> None:
    use(tracked, "notes/caching", 2, clock)
    tracked.move("notes/caching", "archive/caching")
    use(tracked, "archive/caching", 1, clock)
    (top, *_) = tracked.popular()
    assert (top.path, top.uses) == ("archive/caching", 3)


def test_a_removed_memory_stays_popular_without_a_path_but_is_no_candidate(
    tracked: MemoryService, clock: Clock
) -> None:
    use(tracked, "howto/tests", 5, clock)
    use(tracked, "notes/deploy", 5, clock)
    tracked.remove("howto/tests")
    assert {p.path for p in tracked.popular()} == {None, "notes/deploy"}
    assert [p.path for p in tracked.graduation_candidates(min_uses=5)] == ["notes/deploy"]


def test_graduation_candidates_need_min_uses(tracked: MemoryService, clock: Clock) -> None:
    use(tracked, "notes/deploy", 5, clock)
    use(tracked, "notes/caching", 4, clock)
    assert [p.path for p in tracked.graduation_candidates()] == ["notes/deploy"]
    assert [p.path for p in tracked.graduation_candidates(min_uses=4)] == [
        "notes/deploy",
        "notes/caching",
    ]
    with pytest.raises(InvalidInputError, match="min_uses"):
        tracked.graduation_candidates(min_uses=0)


# -- graduation -------------------------------------------------------------------------


@pytest.fixture
def project(git_repo: Path, tmp_path: Path, clock: Clock) -> MemoryService:
    service = MemoryService(
        Store(git_repo / ".memories", "project"),
        Repository(git_repo),
        index_path=tmp_path / "project.db",
        clock=clock,
    )
    service.add(
        "notes/api", "# API\n\nThe version constant lives in app.py.",
        citations=["src/app.py:3"], tags=["api"],
    )  # fmt: skip
    return service


@pytest.fixture
def global_store(
    isolated_home: Path, git_repo: Path, tmp_path: Path, clock: Clock
) -> MemoryService:
    return MemoryService(
        Store(isolated_home / "memories", "global"),
        Repository(git_repo),
        index_path=tmp_path / "global.db",
        clock=clock,
    )


def test_graduate_copies_the_memory_dropping_file_citations_with_a_word_and_links_the_two(
    project: MemoryService, global_store: MemoryService, isolated_home: Path
) -> None:
    project.add_citation("notes/api", "https://example.com/api")
    result = project.graduate("notes/api", global_store)
    assert result.path == "notes/api"
    assert (isolated_home / "memories" / "notes" / "api.md").is_file()
    copy = global_store.get("notes/api").memory
    original = project.get("notes/api").memory
    assert copy.content == original.content
    # The global store is outside the repository: nothing there could verify src/app.py:3.
    assert [c.ref for c in original.meta.citations] == ["src/app.py:3", "https://example.com/api"]
    assert [c.ref for c in copy.meta.citations] == ["https://example.com/api"]
    assert any(
        "dropped 1 file citation (src/app.py:3)" in w and "outside this repository" in w
        for w in result.warnings
    ), result.warnings
    assert global_store.verify_all().ok()  # nothing reported missing there
    assert copy.meta.tags == ("api",)
    assert copy.meta.source == "graduate"
    assert [(link.type, link.target) for link in copy.links or ()] == [
        ("graduated_from", "project:notes/api")
    ]
    assert [(link.type, link.target) for link in original.links or ()] == [
        ("graduated_to", "global:notes/api")
    ]
    assert result.citation_id == global_store.citation_id("notes/api")[5:-1]


def test_graduate_into_a_store_inside_the_repository_keeps_file_citations(
    project: MemoryService, git_repo: Path, tmp_path: Path, clock: Clock
) -> None:
    team = MemoryService(
        Store(git_repo / "docs" / "team-memories", "team"),
        Repository(git_repo),
        index_path=tmp_path / "team.db",
        clock=clock,
    )
    result = project.graduate("notes/api", team)
    assert [c.ref for c in result.memory.meta.citations] == ["src/app.py:3"]
    assert result.memory.meta.citations[0].snippet == "API_VERSION = 'v2'"
    assert not any("dropped" in w for w in result.warnings)


def test_a_graduated_memory_is_no_longer_a_candidate_and_can_be_named_by_its_id(
    project: MemoryService, global_store: MemoryService, clock: Clock
) -> None:
    use(project, "notes/api", 5, clock)
    (candidate,) = project.graduation_candidates()
    assert candidate.path == "notes/api"
    project.graduate(f"[mem:{candidate.citation_id}]", global_store)  # as `stats` shows it
    assert global_store.get("notes/api").memory.meta.source == "graduate"
    assert project.graduation_candidates() == []  # it links to its copy now
    use(global_store, "notes/api", 5, clock)
    assert global_store.graduation_candidates() == []  # the copy is already graduated


def test_graduating_does_not_count_as_a_use(
    project: MemoryService, global_store: MemoryService
) -> None:
    project.graduate("notes/api", global_store)
    assert project.popular() == []
    assert global_store.popular() == []


def test_graduating_twice_or_into_the_same_store_is_a_clear_error(
    project: MemoryService, global_store: MemoryService
) -> None:
    project.graduate("notes/api", global_store)
    with pytest.raises(AlreadyExistsError, match="notes/api"):
        project.graduate("notes/api", global_store)
    with pytest.raises(InvalidInputError, match="own store"):
        project.graduate("notes/api", project)


def test_a_memory_whose_header_does_not_parse_is_not_graduated_and_nothing_is_written(
    project: MemoryService, global_store: MemoryService, git_repo: Path, isolated_home: Path
) -> None:
    """`get` reads such a memory as its text; graduate copied that text into the global
    store (its tags and times lost), then failed to link it back and reported an error,
    the copy left behind."""
    bad = git_repo / ".memories" / "notes" / "bad.md"
    text = "---\ntags: [keep]\ndescription: Logo: v2\n---\n# Bad\n\nBody.\n"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(UnreadableMemoryError, match=r"notes/bad: malformed YAML"):
        project.graduate("notes/bad", global_store)
    assert not (isolated_home / "memories" / "notes" / "bad.md").exists()
    assert bad.read_text(encoding="utf-8") == text


# -- the CLI ------------------------------------------------------------------------------


def cli_state(isolated_home: Path, store: Path) -> Path:
    return isolated_home / "data" / "state" / f"{store_key(store)}.db"


def test_the_cli_session_comes_from_the_option_then_the_environment(
    run_cli: RunCli, store: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli(["get", "notes/caching", "--dir", store, "--session", "opt-1"]).exit_code == 0
    monkeypatch.setenv("MEMORY_ENHANCEMENT_SESSION", "env-2")
    assert run_cli(["search", "redis", "--dir", store]).exit_code == 0
    assert run_cli(["--session", "opt-3", "context", "redis", "--dir", store]).exit_code == 0
    rows = usage_rows(cli_state(isolated_home, store))
    assert [(r[1], r[2], r[4], r[5]) for r in rows] == [
        ("notes/caching", "opt-1", "get", None),
        ("notes/caching", "env-2", "search", "redis"),
        ("notes/caching", "opt-3", "context", "redis"),
    ]
    assert all(r[3].endswith("Z") for r in rows)


def test_the_cli_session_defaults_to_one_per_calling_shell(
    run_cli: RunCli, store: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_ENHANCEMENT_SESSION", raising=False)
    assert (
        run_cli(["resolve", _cli_id(run_cli, store, "howto/tests"), "--dir", store]).exit_code == 0
    )
    (row,) = usage_rows(cli_state(isolated_home, store))
    assert row[2].startswith("cli-")
    assert row[4] == "resolve"


def _cli_id(run_cli: RunCli, store: Path, path: str) -> str:
    listed = json.loads(run_cli(["list", "--json", "--dir", store]).output)
    return next(str(m["id"]) for m in listed if m["path"] == path)


def test_stats_popular_and_graduation_from_the_cli(run_cli: RunCli, store: Path) -> None:
    for _ in range(3):
        run_cli(["get", "notes/deploy", "--dir", store, "--session", "a"])
    run_cli(["get", "notes/deploy", "--dir", store, "--session", "b"])
    run_cli(["search", "redis", "--dir", store, "--session", "a"])
    deploy_id = _cli_id(run_cli, store, "notes/deploy")
    caching_id = _cli_id(run_cli, store, "notes/caching")

    result = run_cli(["stats", "popular", "--json", "--dir", store])
    assert result.exit_code == 0
    popular = json.loads(result.output)
    assert [(p["id"], p["path"], p["uses"], p["sessions"]) for p in popular] == [
        (deploy_id, "notes/deploy", 4, 2),
        (caching_id, "notes/caching", 1, 1),
    ]
    assert set(popular[0]) == {"id", "path", "uses", "sessions", "last_used"}
    limited = json.loads(
        run_cli(["stats", "popular", "--limit", "1", "--json", "--dir", store]).output
    )
    assert [p["path"] for p in limited] == ["notes/deploy"]
    text = run_cli(["stats", "popular", "--dir", store]).output
    assert text.splitlines()[0] == f"    4  [{deploy_id}]  notes/deploy  (2 sessions)"
    assert text.splitlines()[1] == f"    1  [{caching_id}]  notes/caching  (1 session)"

    candidates = run_cli(["stats", "graduation", "--min-uses", "4", "--json", "--dir", store])
    assert [p["path"] for p in json.loads(candidates.output)] == ["notes/deploy"]
    none = run_cli(["stats", "graduation", "--dir", store])
    assert none.output == "no memory used 5 times or more yet\n"  # there is usage, not enough


def test_graduate_to_global_from_the_cli(
    run_cli: RunCli, git_repo: Path, isolated_home: Path
) -> None:
    added = run_cli(
        ["add", "notes/api", "-c", "The version.", "--citation", "src/app.py:3"], cwd=git_repo
    )
    assert added.exit_code == 0, added.output
    result = run_cli(["graduate", "notes/api", "--to", "global", "--json"], cwd=git_repo)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["store"] == str(isolated_home / "memories")
    assert data["path"] == "notes/api"
    assert data["id"].startswith("mem:")
    assert data["citations"] == []  # src/app.py:3 cannot be verified in the global store
    assert "warning: dropped 1 file citation (src/app.py:3)" in result.stderr
    assert data["links"][0]["type"] == "graduated_from"
    shown = json.loads(run_cli(["get", "notes/api", "--store", "global", "--json"]).output)
    assert shown["metadata"]["citations"] == []
    source = json.loads(run_cli(["get", "notes/api", "--json"], cwd=git_repo).output)
    assert [(link["type"], link["target"]) for link in source["links"]] == [
        ("graduated_to", "global:notes/api")
    ]
    again = run_cli(["graduate", "notes/api"], cwd=git_repo)
    assert again.exit_code == 2
    assert "already exists" in again.output


def test_the_graduate_help_says_which_citations_the_copy_loses(run_cli: RunCli) -> None:
    """The help said "copy" alone; a copy into the global store drops file citations."""
    text = " ".join(run_cli(["graduate", "--help"]).stdout.split())
    assert "File citations go only into a store inside this repository" in text
    assert "keeps the memory's line endings and BOM" in text
