"""A new user's first hour, session 23: each case met by following the README from a fresh
clone, fixed, and held here (the system's refusals are in test_system_errors.py).

Through the real CLI in process (exit codes, stdout and stderr apart), in a real git
repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import RunCli, git


@pytest.fixture
def repo(git_repo: Path, run_cli: RunCli) -> Path:
    """The test repository as the current folder, with one memory in its project store."""
    added = run_cli(["add", "notes/api", "-c", "# API", "--citation", "src/app.py:3"], cwd=git_repo)
    assert added.exit_code == 0, added.output
    return git_repo


# -- a citation whose line is mistyped ---------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "file"),
    [
        ("src/app.py:abc", "src/app.py"),
        ("src/app.py:L3", "src/app.py"),
        ("src/app.py:3:5", "src/app.py"),
        ("src/app.py#3", "src/app.py"),
        ("gone.py:12a", "gone.py"),
    ],
)
def test_a_citation_whose_line_is_not_a_number_is_refused_naming_it(
    run_cli: RunCli, repo: Path, ref: str, file: str
) -> None:
    memory = repo / ".memories" / "notes" / "api.md"
    before = memory.read_bytes()
    for args in (
        ["add", "notes/typo", "-c", "# T", "--citation", ref],
        ["citation", "add", "notes/api", ref],
    ):
        result = run_cli(args)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert result.stderr.startswith(f"error: invalid citation '{ref}': ")
        assert f"write {file}:42, {file}:17-25 or {file}#L17-L25" in result.stderr
    assert not (repo / ".memories" / "notes" / "typo.md").exists()
    assert memory.read_bytes() == before


def test_a_missing_file_or_one_named_with_a_colon_is_still_cited(
    run_cli: RunCli, repo: Path
) -> None:
    (repo / "logs").mkdir()
    (repo / "logs" / "run:a.txt").write_text("one\ntwo\n")
    git(repo, "add", "-A")
    for ref in ("docs/later.md", "notes#1.md", "logs/run:a.txt", "logs/run:a.txt:2"):
        result = run_cli(["citation", "add", "notes/api", ref])
        assert result.exit_code == 0, result.output
    shown = run_cli(["get", "notes/api"]).stdout
    assert "docs/later.md" in shown and "notes#1.md" in shown
    assert "logs/run:a.txt:2  `two`" in shown
    warned = run_cli(["citation", "add", "notes/api", "docs/other.md"]).stderr
    assert "docs/other.md does not exist" in warned and "(kept)" in warned


# -- settings and numbers nobody checked -------------------------------------------------


def test_an_unknown_format_in_the_store_config_is_named_not_ignored(
    run_cli: RunCli, repo: Path
) -> None:
    config = repo / ".memories" / ".memory-enhancement.yaml"
    config.write_text("format: Serena\n")
    added = run_cli(["add", "notes/new", "-c", "# New"])
    assert added.exit_code == 2
    assert added.stderr == (
        f"error: {config}: format 'Serena' is not one of: frontmatter, serena\n"
    )
    assert not (repo / ".memories" / "notes" / "new.md").exists()
    doctor = run_cli(["doctor"])
    assert doctor.exit_code == 1
    assert "problem: " + f"{config}: format 'Serena'" in doctor.stdout
    assert run_cli(["list"]).exit_code == 0  # reading needs no format


@pytest.mark.parametrize("days", ["nan", "inf", "1e300", "0"])
def test_an_expiry_policy_that_is_no_number_of_days_is_refused_naming_it(
    run_cli: RunCli, repo: Path, days: str
) -> None:
    for args in (["--after-days", days], ["--after-days", "30", "--grace-days", days]):
        result = run_cli(["expire", "--dry-run", *args])
        if days == "0" and "--grace-days" in args:
            assert result.exit_code == 0, result.output  # no grace is a grace
            continue
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: invalid expiry policy: ")
        assert f"={float(days)!r}" in result.stderr


@pytest.mark.parametrize("seconds", ["nan", "inf", "-1", "0"])
def test_a_url_timeout_that_is_no_number_of_seconds_is_refused(
    run_cli: RunCli, repo: Path, seconds: str
) -> None:
    result = run_cli(["verify-all", "--check-urls", "--url-timeout", seconds])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: invalid --url-timeout {float(seconds)}: ")


def test_a_port_out_of_range_is_a_usage_error(run_cli: RunCli) -> None:
    result = run_cli(["serve", "--transport", "streamable-http", "--port", "99999"])
    assert result.exit_code == 2
    assert "'--port': 99999 is not in the range 0<=x<=65535" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["list", "-n", "HUGE"],
        ["search", "api", "-n", "HUGE"],
        ["context", "api", "-n", "HUGE"],
        ["stats", "popular", "-n", "HUGE"],
        ["stats", "graduation", "--min-uses", "HUGE"],
    ],
)
def test_a_count_past_what_sqlite_holds_means_all(
    run_cli: RunCli, repo: Path, args: list[str]
) -> None:
    huge = [str(10**20) if a == "HUGE" else a for a in args]
    result = run_cli(huge)
    assert result.exit_code == 0, result.output
    small = run_cli([str(10**6) if a == "HUGE" else a for a in args])
    assert result.stdout.replace(str(10**20), "N") == small.stdout.replace(str(10**6), "N")


# -- options that conflict, help that was cut --------------------------------------------


@pytest.mark.parametrize(
    ("args", "fmt"),
    [
        (["graph", "notes/api", "--format", "mermaid"], "mermaid"),
        (["graph", "notes/api", "--format", "dot"], "dot"),
        (["verify-all", "--format", "github"], "github"),
        (["health", "--format", "html"], "html"),
    ],
)
def test_json_with_another_format_is_refused_as_health_refuses_it(
    run_cli: RunCli, repo: Path, args: list[str], fmt: str
) -> None:
    result = run_cli([*args, "--json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"error: give either --json or --format {fmt}, not both\n"


@pytest.mark.parametrize("group", ["citation", "store", "skill", "stats"])
def test_no_subcommand_list_cuts_a_summary(run_cli: RunCli, group: str) -> None:
    result = run_cli([group, "--help"])
    assert result.exit_code == 0
    commands = result.stdout[result.stdout.index("Commands:") :]
    assert "..." not in commands
    assert all(len(line) <= 100 for line in commands.splitlines())


def test_every_graph_option_says_what_it_does(run_cli: RunCli) -> None:
    text = " ".join(run_cli(["graph", "--help"]).stdout.split())
    assert "--algorithm [bfs|dfs] The order memories are listed in" in text
    assert "--format [text|json|mermaid|dot] mermaid: a block GitHub renders" in text


# -- get by citation ID, as the quick path answers it ------------------------------------


def test_get_takes_a_citation_id_or_a_unique_name_with_or_without_dir(
    run_cli: RunCli, repo: Path
) -> None:
    store = repo / ".memories"
    by_path = run_cli(["get", "notes/api"]).stdout
    cid = by_path.splitlines()[0].split()[1]  # `id:       [mem:XXXXXX]` (the body has `# API`)
    for reference in (cid, cid.strip("[]"), cid.strip("[]").removeprefix("mem:"), "api"):
        assert run_cli(["get", reference]).stdout == by_path
        assert run_cli(["get", reference, "--dir", store]).stdout == by_path
    as_json = run_cli(["get", cid.strip("[]"), "--json"])
    assert as_json.exit_code == 0 and f'"id": "{cid.strip("[]")}"' in as_json.stdout
    unknown = run_cli(["get", "mem:zzzzzz"])
    assert unknown.exit_code == 2 and unknown.stderr == "error: unknown citation ID [mem:zzzzzz]\n"


def test_a_lone_memory_is_an_orphan_in_its_row_and_counted_among_orphans(
    run_cli: RunCli, repo: Path
) -> None:
    report = run_cli(["health"]).stdout
    assert "orphans: **1**" in report
    assert "[mem:" in report and " | orphan | " in report
    html = run_cli(["health", "--format", "html"]).stdout
    assert ">orphan</span></td>" in html


def test_verify_all_on_a_store_whose_memories_cite_no_code_says_there_was_nothing_to_verify(
    run_cli: RunCli, tmp_path: Path
) -> None:
    """Serena stores of onboarding notes (Casecommons/pg_search, Ameyanagi/ruviz) cite no
    line: `0 memories, 0 citations` read as if the store were empty. The message names
    every form that counts: it named only `path:line` mentions, though a file or folder
    named alone is verified too (5rbit/mxrc, QA round 38: its Korean notes name paths in
    code blocks only)."""
    store = tmp_path / "memories"
    store.mkdir()
    (store / "suggested_commands.md").write_text("# Commands\n\n- `bundle exec rspec`\n")
    result = run_cli(["verify-all", "--dir", store])
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "no memory cites code (a citation, or a file, folder or `path:line` its text names):"
        " nothing to verify\n"
    )
