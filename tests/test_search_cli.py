"""search, resolve and reindex from the command line: exact output, JSON shapes, exit codes.

In-process through CliRunner, and once through a real subprocess as an agent's
shell would run it. `context`, `stats` and `graduate` have their CLI tests next
to their behaviour (test_context.py, test_usage.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from conftest import RunCli
from index_support import write_memory
from memory_enhancement.core.model import Citation
from memory_enhancement.store.locations import store_key
from verify_support import GitRepo

SUMMARY_KEYS = {
    "path", "title", "format", "tags", "created_at", "updated_at", "expires_at", "expired",
    "source", "citations", "id",
}  # fmt: skip
HIT_KEYS = {"id", "path", "title", "score", "snippet", "lexical_rank", "semantic_rank", "memory"}


@pytest.fixture
def store(store_dir: Path) -> Path:
    write_memory(
        store_dir, "notes/caching", "Redis holds the session cache for two hours.",
        title="Caching", tags=["redis", "cache"], created="2026-01-10T08:00:00Z",
    )  # fmt: skip
    write_memory(store_dir, "notes/deploy", "Deploys go through the blue pipeline.", title="Deploy")
    write_memory(
        store_dir, "notes/freeze", "Redis upgrades are frozen until February.", title="Freeze",
        expires="2026-01-01T00:00:00Z",
    )  # fmt: skip
    return store_dir


@pytest.fixture
def cli(run_cli: RunCli, store: Path) -> Any:
    def run(*args: str) -> Result:
        return run_cli([*args, "--dir", store])

    return run


def ids_by_path(cli: Any) -> dict[str, str]:
    listed = json.loads(cli("list", "--json", "--include-expired").output)
    return {m["path"]: m["id"] for m in listed}


# -- search -----------------------------------------------------------------------------


def test_search_prints_numbered_hits_with_id_path_title_and_snippet(cli: Any) -> None:
    result = cli("search", "redis")
    assert result.exit_code == 0
    cid = ids_by_path(cli)["notes/caching"]
    assert result.output == (
        f"1. [{cid}] notes/caching  Caching\n"
        "   # Caching **Redis** holds the session cache for two hours.\n"
    )


def test_search_json_has_the_documented_shape(cli: Any) -> None:
    result = cli("search", "redis", "--json")
    assert result.exit_code == 0
    (hit,) = json.loads(result.output)
    assert set(hit) == HIT_KEYS
    assert set(hit["memory"]) == SUMMARY_KEYS
    assert hit["id"] == ids_by_path(cli)["notes/caching"]
    assert (hit["path"], hit["title"], hit["lexical_rank"], hit["semantic_rank"]) == (
        "notes/caching", "Caching", 1, None,
    )  # fmt: skip
    assert hit["score"] > 0
    assert "**Redis**" in hit["snippet"]
    assert hit["memory"]["tags"] == ["redis", "cache"]
    assert hit["memory"]["created_at"] == "2026-01-10T08:00:00.000Z"
    assert hit["memory"]["expired"] is False


def test_search_options_limit_category_tag_and_include_expired(cli: Any) -> None:
    def found(*args: str) -> list[str]:
        result = cli("search", *args, "--json")
        assert result.exit_code == 0, result.output
        return [h["path"] for h in json.loads(result.output)]

    assert found("redis") == ["notes/caching"]
    assert sorted(found("redis", "--include-expired")) == ["notes/caching", "notes/freeze"]
    assert len(found("redis pipeline", "--limit", "1")) == 1
    assert found("pipeline", "--category", "notes") == ["notes/deploy"]
    assert found("pipeline", "--category", "other") == []
    assert found("redis", "--tag", "cache") == ["notes/caching"]
    assert found("redis", "--tag", "nope") == []


def test_an_expired_hit_says_so_in_json(cli: Any) -> None:
    hits = json.loads(cli("search", "frozen", "--include-expired", "--json").output)
    assert [(h["path"], h["memory"]["expired"]) for h in hits] == [("notes/freeze", True)]


def test_search_without_matches_says_so(cli: Any) -> None:
    result = cli("search", "kangaroo")
    assert (result.exit_code, result.output) == (0, "no matches\n")
    assert json.loads(cli("search", "kangaroo", "--json").output) == []


@pytest.mark.parametrize("query", ['"unbalanced redis', "redis*", "redis -x", "(redis", "a:redis"])
def test_search_with_fts5_syntax_still_finds(cli: Any, query: str) -> None:
    result = cli("search", query, "--json")
    assert result.exit_code == 0, result.output
    assert "notes/caching" in [h["path"] for h in json.loads(result.output)]


def test_a_query_with_no_words_is_a_usage_error(cli: Any) -> None:
    result = cli("search", '"-*:()"')
    assert result.exit_code == 2
    assert result.output == "error: query '\"-*:()\"' has no words to search for\n"


def test_a_bad_limit_or_confidence_is_a_usage_error(cli: Any) -> None:
    assert cli("search", "redis", "--limit", "0").exit_code == 2
    result = cli("search", "redis", "--verify", "--min-confidence", "2")
    assert result.exit_code == 2
    assert "min_confidence" in result.output


def test_search_verify_marks_and_min_confidence_drops_stale_hits(
    run_cli: RunCli, tmp_path: Path
) -> None:
    project = GitRepo(tmp_path / "project")
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v2'", "", "def main():"])
    project.commit("initial")
    project.memory(
        "entry", [Citation("src/app.py", 5, snippet="def main():", verified=project.stamp())],
        content="# API entry\n\nThe api starts in main().\n",
    )  # fmt: skip
    project.memory(
        "version",
        [Citation("src/app.py", 3, snippet="API_VERSION = 'v2'", verified=project.stamp())],
        content="# API version\n\nThe api version is v2.\n",
    )
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v3'", "", "def main():"])
    project.commit("bump")

    def run(*args: str) -> Result:
        return run_cli([*args, "--dir", str(project.store_root)], cwd=project.root)

    text = run("search", "api", "--verify").output
    assert "entry  API entry  [verified] 1 of 1 hold, confidence 0.70" in text
    assert "version  API version  [STALE] 0 of 1 hold, confidence 0.00" in text
    hits = json.loads(run("search", "api", "--verify", "--json").output)
    verdicts = {h["path"]: h["verification"]["valid"] for h in hits}
    assert verdicts == {"entry": True, "version": False}
    stale = next(h for h in hits if h["path"] == "version")
    assert stale["verification"]["stale_citations"][0]["path"] == "src/app.py"
    kept = json.loads(run("search", "api", "--verify", "--min-confidence", "0.5", "--json").output)
    assert [h["path"] for h in kept] == ["entry"]
    held = json.loads(run("search", "api", "--min-holding", "1", "--json").output)
    assert [(h["path"], h["verification"]["holding"]) for h in held] == [("entry", 1.0)]
    # health's figure: verified valid and used three times, never confirmed
    assert held[0]["confidence"] == 0.82
    assert run("search", "api", "--min-confidence", "0.9").output == "no matches\n"


def test_search_verify_marks_hits_whose_verdicts_come_from_prose_mentions(
    run_cli: RunCli, tmp_path: Path
) -> None:
    """Personal-Slack-Client (murayamaTakahiro, 57a962b): a memory whose only verdicts were
    its prose mentions (`src/lib/services/emojiService.ts` (lines 25-341), stale) showed no
    mark in text, though --json said it was stale: most Serena memories cite that way."""
    project = GitRepo(tmp_path / "project")
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v2'", "", "def main():"])
    project.commit("initial")
    project.memory("entry", [], content="# API entry\n\nThe api starts at `src/app.py:5`.\n")
    project.memory("version", [], content="# API version\n\nThe api version: `src/app.py:3`.\n")
    project.commit("memories")
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v3'", "", "def main():"])
    project.commit("bump")
    where = ["--dir", str(project.store_root)]
    text = run_cli(["search", "api", "--verify", *where], cwd=project.root).output
    assert "entry  API entry  [verified] 1 of 1 hold, confidence 0.70" in text
    assert "version  API version  [STALE] 0 of 1 hold, confidence 0.00" in text


def test_search_verify_marks_a_deleted_file_missing_as_verify_does(
    run_cli: RunCli, tmp_path: Path
) -> None:
    """search's mark said [STALE] of a memory whose citation `verify` called MISSING (its
    file deleted): it summed up every failing verdict as stale. Both say verify's words now."""
    project = GitRepo(tmp_path / "project")
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v2'", "", "def main():"])
    project.write_lines("src/old.py", ["def legacy_api():", "    pass"])
    project.commit("initial")
    legacy = Citation("src/old.py", 1, snippet="def legacy_api():", verified=project.stamp())
    project.memory("legacy", [legacy], content="# API legacy\n\nThe old api: legacy_api().\n")
    project.memory(
        "both",
        [
            legacy,
            Citation("src/app.py", 3, snippet="API_VERSION = 'v2'", verified=project.stamp()),
        ],
        content="# API both\n\nThe api version is v2, the old api in legacy_api().\n",
    )
    (project.root / "src/old.py").unlink()
    project.write_lines("src/app.py", ["import os", "", "API_VERSION = 'v3'", "", "def main():"])
    project.commit("drop the old api, bump")

    def run(*args: str) -> Result:
        return run_cli([*args, "--dir", str(project.store_root)], cwd=project.root)

    verified = run("verify", "legacy").output
    assert "  MISSING      src/old.py:1" in verified
    text = run("search", "api", "--verify").output
    assert "legacy  API legacy  [MISSING] 0 of 1 hold, confidence 0.00" in text
    assert "both  API both  [STALE, MISSING] 0 of 2 hold, confidence 0.00" in text
    block = run("context", "legacy", "--verify").output
    assert "(MISSING: 1 of 1 citations fail, confidence " in block
    assert "(STALE, MISSING: 2 of 2 citations fail, confidence " in block


# -- resolve ------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["{}", "[{}]", "{bare}"])
def test_resolve_prints_the_memory_for_any_form_of_its_id(cli: Any, form: str) -> None:
    cid = ids_by_path(cli)["notes/caching"]
    result = cli("resolve", form.format(cid, bare=cid[4:]))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"id:       [{cid}]" and lines.count("# Caching") == 1
    assert "path:     notes/caching" in lines
    assert lines[-1] == "Redis holds the session cache for two hours."


def test_resolve_json_is_the_memory_shape(cli: Any) -> None:
    cid = ids_by_path(cli)["notes/deploy"]
    data = json.loads(cli("resolve", cid, "--json").output)
    assert (data["id"], data["path"], data["title"]) == (cid, "notes/deploy", "Deploy")
    assert {"content", "metadata", "links", "citations"} <= set(data)


def test_resolve_also_returns_expired_memories(cli: Any) -> None:
    cid = ids_by_path(cli)["notes/freeze"]
    assert json.loads(cli("resolve", cid, "--json").output)["path"] == "notes/freeze"


def test_resolving_an_unknown_or_malformed_id_is_a_usage_error(cli: Any, store: Path) -> None:
    result = cli("resolve", "mem:zzzzzz")
    assert (result.exit_code, result.output) == (2, "error: unknown citation ID [mem:zzzzzz]\n")
    cid = ids_by_path(cli)["notes/deploy"]
    (store / "notes/deploy.md").unlink()
    result = cli("resolve", cid)
    assert result.exit_code == 2
    assert result.output == (
        f"error: unknown citation ID [{cid}] (it belonged to 'notes/deploy', "
        "which no longer exists)\n"
    )
    result = cli("resolve", "mem:no!")
    assert result.exit_code == 2
    assert result.output.startswith("error: invalid citation ID 'mem:no!'")


# -- reindex ------------------------------------------------------------------------------


def test_reindex_rebuilds_and_reports_what_it_indexed(
    cli: Any, store: Path, isolated_home: Path
) -> None:
    index = isolated_home / "cache" / "indexes" / f"{store_key(store)}.db"
    before = ids_by_path(cli)
    result = cli("reindex")
    assert result.exit_code == 0
    assert result.output.startswith("indexed 3 memories in ")
    assert result.output.endswith(f"s ({index})\n")
    data = json.loads(cli("reindex", "--json").output)
    assert set(data) == {"indexed", "seconds", "skipped"}
    assert data["indexed"] == 3
    assert data["skipped"] == []
    assert ids_by_path(cli) == before


def test_reindex_with_an_index_option_rebuilds_that_file(cli: Any, tmp_path: Path) -> None:
    custom = tmp_path / "custom.db"
    result = cli("reindex", "--index", str(custom), "--json")
    assert json.loads(result.output)["indexed"] == 3
    assert custom.is_file()


# -- a real process -----------------------------------------------------------------------


def test_search_and_resolve_through_a_real_subprocess(store: Path, isolated_home: Path) -> None:
    env = {
        **os.environ,
        "MEMORY_ENHANCEMENT_HOME": str(isolated_home),
        "MEMORY_ENHANCEMENT_SESSION": "proc-1",
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memory_enhancement", *args, "--dir", str(store)],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip

    searched = run("search", "session cache", "--json")
    assert (searched.returncode, searched.stderr) == (0, "")
    (hit,) = json.loads(searched.stdout)
    assert hit["path"] == "notes/caching"
    resolved = run("resolve", f"[{hit['id']}]")
    assert resolved.returncode == 0
    assert resolved.stdout.startswith(f"id:       [{hit['id']}]\n")
    popular = json.loads(run("stats", "popular", "--json").stdout)
    assert [(p["id"], p["uses"], p["sessions"]) for p in popular] == [(hit["id"], 2, 1)]
    failed = run("search", "?!")
    assert (failed.returncode, failed.stdout) == (2, "")
    assert failed.stderr == "error: query '?!' has no words to search for\n"
