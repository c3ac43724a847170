"""What a new user meets in the first hour (issue 16): each case found by trying the tool
from a fresh clone, fixed, and held here.

The options and messages are checked through the real CLI (in process, or as a
process where a terminal or a pipe matters); the server through its console
script, as an agent starts it.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from conftest import RunCli, git
from mcp_support import CONSOLE_SCRIPT, child_env
from memory_enhancement.cli import cli

ROOT = Path(__file__).resolve().parent.parent


def ok(result: object) -> str:
    assert getattr(result, "exit_code", None) == 0, (result.stdout, result.stderr)  # type: ignore[attr-defined]
    return str(result.stdout)  # type: ignore[attr-defined]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    root.mkdir()
    return root


# -- every command takes --json --------------------------------------------------------------------


def leaf_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    ctx = click.Context(group)
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            found += leaf_commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


def test_every_command_of_the_tree_takes_json() -> None:
    commands = leaf_commands(cli)
    assert len(commands) >= 35  # the walk reaches the subcommands of store, stats, citation...
    assert ("doctor",) in commands and ("citation", "remove") in commands
    ctx = click.Context(cli)
    missing = []
    for path in commands:
        command: click.Command = cli
        for name in path:
            assert isinstance(command, click.Group)
            found = command.get_command(ctx, name)
            assert found is not None
            command = found
        if not any("--json" in p.opts for p in command.params if isinstance(p, click.Option)):
            missing.append(" ".join(path))
    assert missing == []


@pytest.mark.parametrize(
    "args",
    [
        ["health"],
        ["doctor"],
        ["skill", "show"],
        ["store", "list"],
        ["list"],
        ["roots"],
        ["stats", "popular"],
        ["verify-all"],
    ],
)
def test_json_output_is_json(run_cli: RunCli, store: Path, args: list[str]) -> None:
    plain = args[0] in ("skill", "store")  # they work on no one store
    result = run_cli([*args, "--json"] if plain else [*args, "--json", "--dir", store])
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)


def test_health_json_is_the_json_format(run_cli: RunCli, store: Path) -> None:
    flag = json.loads(ok(run_cli(["health", "--json", "--dir", store])))
    fmt = json.loads(ok(run_cli(["health", "--format", "json", "--dir", store])))
    flag.pop("generated_at")
    fmt.pop("generated_at")
    assert flag == fmt
    clash = run_cli(["health", "--json", "--format", "html", "--dir", store])
    assert clash.exit_code == 2 and "--json" in clash.stderr and "html" in clash.stderr


# -- errors that name the bad value ----------------------------------------------------------------


def test_serve_with_an_unknown_log_level_exits_2_naming_it(run_cli: RunCli) -> None:
    result = run_cli(["serve", "--log-level", "foo"])
    assert result.exit_code == 2
    assert "'foo'" in result.stderr and "--log-level" in result.stderr
    assert "Traceback" not in result.output


def test_a_mistyped_dir_is_an_error_and_leaves_no_index(
    run_cli: RunCli, isolated_home: Path, tmp_path: Path
) -> None:
    for args in (["list"], ["search", "x"], ["verify-all"], ["health"], ["doctor"]):
        result = run_cli([*args, "--dir", "/nonexistent/x"])
        assert result.exit_code == 2, (args, result.output)
        assert "--dir '/nonexistent/x'" in result.stderr and "no such folder" in result.stderr
        assert "no memories" not in result.stdout
    assert not (isolated_home / "cache").exists()  # no index was made for it
    # A new store folder is still made by the first `add` when its parent exists.
    added = run_cli(["add", "a/b", "-c", "# A", "--dir", tmp_path / "new-store"])
    assert added.exit_code == 0, added.output
    assert (tmp_path / "new-store" / "a" / "b.md").is_file()
    deep = run_cli(["add", "a/b", "-c", "# A", "--dir", tmp_path / "no" / "such" / "place"])
    assert deep.exit_code == 2 and "no such folder" in deep.stderr


# -- citations: drop one, replace one; links on update ---------------------------------------------


def test_citation_remove_drops_one_and_keeps_the_others(run_cli: RunCli, git_repo: Path) -> None:
    ok(run_cli(["add", "n/api", "-c", "# API", "--citation", "src/app.py:3",
                "--citation", "src/app.py:5", "--citation", "https://example.com/x"],
               cwd=git_repo))  # fmt: skip
    out = ok(run_cli(["citation", "remove", "n/api", "src/app.py:5"], cwd=git_repo))
    assert out.startswith("dropped src/app.py:5 from n/api")
    data = json.loads(ok(run_cli(["get", "n/api", "--json"], cwd=git_repo)))
    assert data["metadata"]["citations"] == ["src/app.py:3", "https://example.com/x"]
    assert data["citations"][0]["snippet"] == "API_VERSION = 'v2'"  # untouched
    missing = run_cli(["citation", "remove", "n/api", "src/app.py:9"], cwd=git_repo)
    assert missing.exit_code == 2
    assert "'src/app.py:9'" in missing.stderr and "src/app.py:3" in missing.stderr


def test_citation_replace_puts_the_new_one_in_its_place(run_cli: RunCli, git_repo: Path) -> None:
    ok(run_cli(["add", "n/api", "-c", "# API", "--citation", "src/app.py:3",
                "--citation", "src/app.py:5"], cwd=git_repo))  # fmt: skip
    result = run_cli(
        ["citation", "replace", "n/api", "src/app.py:3", "src/app.py:6", "--json"], cwd=git_repo
    )
    data = json.loads(ok(result))
    assert data["metadata"]["citations"] == ["src/app.py:6", "src/app.py:5"]
    assert data["citations"][0]["snippet"] == "print(API_VERSION)"  # captured


def test_update_clear_citations_with_citation_replaces_them_and_link_adds_a_link(
    run_cli: RunCli, git_repo: Path
) -> None:
    ok(run_cli(["add", "n/api", "-c", "# API", "--citation", "src/app.py:3"], cwd=git_repo))
    ok(run_cli(["add", "n/other", "-c", "# Other"], cwd=git_repo))
    result = run_cli(["update", "n/api", "--clear-citations", "--citation", "src/app.py:5",
                      "--link", "n/other", "--link", "depends_on:n/other", "--json"],
                     cwd=git_repo)  # fmt: skip
    data = json.loads(ok(result))
    assert data["metadata"]["citations"] == ["src/app.py:5"]
    assert [(link["target"], link["type"]) for link in data["links"]] == [
        ("n/other", "link"),
        ("n/other", "depends_on"),
    ]
    related = json.loads(ok(run_cli(["related", "n/other", "--json"], cwd=git_repo)))
    assert [r["path"] for r in related["related"]] == ["n/api"]  # one memory, linking twice
    assert len(related["related"][0]["links"]) == 2
    text = ok(run_cli(["related", "n/other"], cwd=git_repo))
    assert text.splitlines()[0] == "Memories linking to 'n/other': 1"


# -- singular and plural ---------------------------------------------------------------------------


def test_counts_of_one_are_singular(run_cli: RunCli, git_repo: Path) -> None:
    ok(run_cli(["add", "n/a", "-c", "# A\n\nSee [[n/gone]].\n"], cwd=git_repo))
    links = run_cli(["links"], cwd=git_repo)
    assert links.stdout.splitlines()[-1].startswith("1 broken link (1 dangling")
    assert ok(run_cli(["reindex"], cwd=git_repo)).startswith("indexed 1 memory in ")
    assert (
        ok(run_cli(["orphans"], cwd=git_repo)).splitlines()[-1] == "1 orphan (no links either way)"
    )
    assert "**1 memory**" in ok(run_cli(["health"], cwd=git_repo))


# -- verify: truthful about what it wrote ----------------------------------------------------------


def test_verify_write_says_it_recorded_confidence_and_the_figure_is_the_files(
    run_cli: RunCli, git_repo: Path
) -> None:
    ok(run_cli(["store", "init", "--format", "serena", ".memories"], cwd=git_repo))
    ok(run_cli(["add", "n/api", "-c", "# API", "--citation", "src/app.py:3",
                "--citation", "src/app.py:5"], cwd=git_repo))  # fmt: skip
    app = git_repo / "src" / "app.py"
    app.write_text(app.read_text().replace("'v2'", "'v3'"))
    result = run_cli(["verify", "n/api", "--write"], cwd=git_repo)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "INVALID  n/api  (1 of 2 citations hold)"
    assert not any(line.startswith("fixed") for line in lines)  # nothing was fixed
    [recorded] = [line for line in lines if line.startswith("recorded confidence ")]
    figure = recorded.split()[2]
    text = (git_repo / ".memories" / "n" / "api.md").read_text()
    assert f"- **Confidence**: {figure}\n" in text
    assert recorded.endswith(" in n/api")


def test_verify_fix_prints_a_moved_range_with_its_end_line(run_cli: RunCli, git_repo: Path) -> None:
    ok(run_cli(["add", "n/main", "-c", "# Main", "--citation", "src/app.py:5-7"], cwd=git_repo))
    app = git_repo / "src" / "app.py"
    app.write_text("# a comment\n# another\n" + app.read_text())
    git(git_repo, "commit", "-qam", "comments")
    result = run_cli(["verify", "n/main", "--fix"], cwd=git_repo)
    assert "src/app.py:5-7 -> src/app.py:7-9" in result.stdout
    assert "fixed 1 citation in n/main" in result.stdout


# -- graduate --------------------------------------------------------------------------------------


def test_graduate_says_which_file_citations_it_dropped(run_cli: RunCli, git_repo: Path) -> None:
    ok(run_cli(["add", "n/api", "-c", "# API", "--citation", "src/app.py:3"], cwd=git_repo))
    result = run_cli(["graduate", "n/api"], cwd=git_repo)
    assert result.exit_code == 0
    assert "dropped 1 file citation (src/app.py:3)" in result.stderr
    verified = run_cli(["verify-all", "--store", "global"], cwd=git_repo)
    assert verified.exit_code == 0 and "missing" not in verified.stdout.replace("0 missing", "")


def test_graduate_files_a_serena_memory_under_its_project_in_the_global_store(
    run_cli: RunCli, git_repo: Path
) -> None:
    """Serena names its memories without a category; the global store wants one, and
    `graduate graph_engine` failed with "a new memory needs a category and a slug", a
    path the user never typed (found on 23min/FlowTime). It goes under the project's name."""
    serena = git_repo / ".serena" / "memories"
    serena.mkdir(parents=True)
    (serena / "graph_engine.md").write_text("# Graph engine\n\nNodes run in order.\n")
    result = run_cli(["graduate", "graph_engine"], cwd=git_repo)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("graduated graph_engine -> global:repo/graph_engine  [mem:")
    copy = json.loads(ok(run_cli(["--store", "global", "get", "repo/graph_engine", "--json"])))
    assert "Nodes run in order." in copy["content"]
    assert "global:repo/graph_engine" in (serena / "graph_engine.md").read_text()


# -- skill install, help ---------------------------------------------------------------------------


def test_skill_install_keeps_a_locally_edited_skill_unless_forced(
    run_cli: RunCli, tmp_path: Path
) -> None:
    target = tmp_path / "cwd" / ".claude" / "skills" / "memory-enhancement" / "SKILL.md"
    assert ok(run_cli(["skill", "install"])).startswith("installed ")
    assert ok(run_cli(["skill", "install"])).startswith("unchanged ")
    target.write_text(target.read_text() + "\nOur own rule.\n")
    refused = run_cli(["skill", "install"])
    assert refused.exit_code == 2 and "--force" in refused.stderr
    assert target.read_text().endswith("Our own rule.\n")
    data = json.loads(ok(run_cli(["skill", "install", "--force", "--json"])))
    assert data["status"] == "overwritten"
    assert "Our own rule." not in target.read_text()


def test_skill_install_from_a_subfolder_writes_into_the_skills_folder_at_the_git_root(
    run_cli: RunCli, git_repo: Path
) -> None:
    """README: `skill install` writes .claude/skills/memory-enhancement/SKILL.md, the folder
    Claude Code reads at the project's root; run from `src/`, it wrote src/.claude/..."""
    data = json.loads(ok(run_cli(["skill", "install", "--json"], cwd=git_repo / "src")))
    target = git_repo / ".claude" / "skills" / "memory-enhancement" / "SKILL.md"
    assert data == {"path": str(target), "status": "installed"}
    assert target.read_text(encoding="utf-8").startswith("---\nname: memory-enhancement")
    assert not (git_repo / "src" / ".claude").exists()


def test_skill_install_writes_through_a_symlinked_skill_file(
    run_cli: RunCli, tmp_path: Path
) -> None:
    """A team that keeps SKILL.md in a shared folder and links it into .claude/ keeps the
    link: the skill is written into the file it names, not renamed over the link."""
    shared = tmp_path / "shared" / "SKILL.md"
    shared.parent.mkdir()
    shared.write_text("an older skill\n")
    target = tmp_path / "cwd" / ".claude" / "skills" / "memory-enhancement" / "SKILL.md"
    target.parent.mkdir(parents=True)
    target.symlink_to(shared)
    assert ok(run_cli(["skill", "install", "--force"])).startswith("overwritten ")
    assert target.is_symlink() and "an older skill" not in shared.read_text()
    assert shared.read_text().startswith("---")


def test_the_main_help_never_cuts_a_summary(run_cli: RunCli) -> None:
    text = ok(run_cli(["--help"]))
    commands = text[text.index("Commands:") :]
    assert "..." not in commands
    assert "answering QUERY, ready for a prompt." in " ".join(commands.split())
    for line in commands.splitlines()[1:]:
        assert len(line) <= 100


# -- serve -----------------------------------------------------------------------------------------


def test_serve_on_a_terminal_says_it_waits_for_a_client(tmp_path: Path) -> None:
    assert CONSOLE_SCRIPT.exists()
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [str(CONSOLE_SCRIPT), "serve", "--dir", str(tmp_path)],
        stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=child_env(tmp_path / "home"),
    )  # fmt: skip
    try:
        said = b""
        deadline = time.monotonic() + 30
        while b"Ctrl-C" not in said and time.monotonic() < deadline:
            ready, _, _ = select.select([process.stderr], [], [], 1)
            if ready:
                assert process.stderr is not None
                said += os.read(process.stderr.fileno(), 4096)
        assert b"waiting for an MCP client on stdio" in said
    finally:
        process.terminate()
        process.wait(timeout=30)
        os.close(leader)
        os.close(follower)


def test_a_call_sent_just_before_stdin_closes_is_answered(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "a.md").write_text("# A\n\nBody.\n")
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "list_memories", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "get_memory", "arguments": {"path": "a"}}},
    ]  # fmt: skip
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "serve", "--dir", str(store)],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True, text=True, timeout=120, env=child_env(tmp_path / "home"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [1, 2, 3]
    listed = answers[2]["result"]["structuredContent"]
    assert [m["path"] for m in listed["memories"]] == ["a"]
    assert answers[3]["result"]["structuredContent"]["content"].startswith("# A\n\nBody.")


def test_serve_json_logs_json_lines(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "serve", "--dir", str(tmp_path), "--log-level", "debug", "--json"],
        input="", capture_output=True, text=True, timeout=120, env=child_env(tmp_path / "home"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines, "debug logging wrote nothing"
    for line in lines:
        record = json.loads(line)
        assert {"time", "level", "logger", "message"} <= set(record)


# -- doctor ----------------------------------------------------------------------------------------


def test_doctor_shows_the_effective_configuration(run_cli: RunCli, git_repo: Path) -> None:
    ok(run_cli(["add", "n/api", "-c", "# API", "--citation", "src/app.py:3"], cwd=git_repo))
    head = git(git_repo, "rev-parse", "HEAD").strip()
    data = json.loads(ok(run_cli(["doctor", "--json"], cwd=git_repo)))
    assert data["store"]["path"] == str(git_repo / ".memories")
    assert data["store"]["name"] == "project" and data["store"]["memories"] == 1
    assert data["store"]["format"] == "frontmatter"
    assert data["index"]["exists"] and data["index"]["bytes"] > 0
    assert data["state"]["path"].endswith(".db")
    assert data["repository"] == {
        "root": str(git_repo), "git": True, "head": head, "branch": "main",
    }  # fmt: skip
    assert data["git"]["version"][0].isdigit()
    assert isinstance(data["semantic"]["installed"], bool)
    assert data["problems"] == []
    text = ok(run_cli(["doctor"], cwd=git_repo))
    assert f"HEAD {head[:12]} on main" in text
    assert "1 memory, new memories: frontmatter" in text
    assert text.endswith("no problems found\n")


def test_doctor_creates_nothing(run_cli: RunCli, git_repo: Path, isolated_home: Path) -> None:
    ok(run_cli(["doctor"], cwd=git_repo))
    assert not (git_repo / ".memories").exists()
    assert not isolated_home.exists()


def test_doctor_exits_1_naming_each_problem(
    run_cli: RunCli, git_repo: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = git_repo / ".memories"
    store.mkdir()
    (store / ".memory-enhancement.yaml").write_text("format: [unclosed\n")
    data = json.loads(run_cli(["doctor", "--json"], cwd=git_repo).stdout)
    state_file = Path(data["state"]["path"])
    state_file.parent.mkdir(parents=True)
    state_file.write_text("not a database")
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))  # no git here
    monkeypatch.setenv("MEMORY_ENHANCEMENT_MODEL", "/no/such/model")
    result = run_cli(["doctor"], cwd=git_repo)
    assert result.exit_code == 1
    problems = [line for line in result.stdout.splitlines() if line.startswith("problem: ")]
    assert len(problems) == 4, problems
    assert any("'/no/such/model'" in p for p in problems)
    assert any("unreadable store configuration" in p for p in problems)
    assert any(str(state_file) in p and "not a SQLite database" in p for p in problems)
    assert any("git is not on PATH" in p for p in problems)
    assert result.stdout.endswith("4 problems found\n")


def test_doctor_notes_a_store_setting_nothing_reads_naming_it(
    run_cli: RunCli, git_repo: Path
) -> None:
    """A misspelled `expirey:` was ignored without a word: `expire` then said there was no
    policy, and doctor, the command meant to show the effective configuration, found none."""
    store = git_repo / ".memories"
    store.mkdir()
    config = store / ".memory-enhancement.yaml"
    config.write_text("format: serena\nexpirey: {after_days: 90}\n")
    data = json.loads(ok(run_cli(["doctor", "--json"], cwd=git_repo)))
    assert data["problems"] == []
    assert data["store"]["format"] == "serena"
    assert [n for n in data["notes"] if "expirey" in n] == [
        f"{config}: ignored, not a setting: 'expirey' "
        "(settings: expiry, format, index, semantic_model)"
    ]


def test_the_repository_has_a_license_matching_its_metadata() -> None:
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License")
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize("script", ["scripts/demo.sh", "scripts/setup.sh"])
def test_the_scripts_give_a_venv_made_without_pip_its_pip(script: str, tmp_path: Path) -> None:
    """README runs `scripts/demo.sh` (a .venv made without pip, for speed), then
    `scripts/test.sh`, whose setup.sh adds the venv's pip with ensurepip: it said
    `ensurepip -q`, an option ensurepip does not have, so the test command failed with a
    usage error on a clone where the demo had run; without `--default-pip` it then found no
    `.venv/bin/pip`. The script's own line runs here."""
    lines = (ROOT / script).read_text(encoding="utf-8").splitlines()
    command = next(line.strip() for line in lines if "-m ensurepip" in line)
    venv = [sys.executable, "-m", "venv", "--without-pip", ".venv"]
    subprocess.run(venv, cwd=tmp_path, check=True)
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for check in ([".venv/bin/python", "-m", "pip"], [".venv/bin/pip"]):  # as venv makes it
        run = subprocess.run([*check, "--version"], cwd=tmp_path, capture_output=True)
        assert run.returncode == 0, (check, run.stderr)


# -- a command name that is not one ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "hint"),
    [
        ("serach", "Did you mean 'search'?"),  # a typo
        ("verify_all", "Did you mean 'verify-all' or 'verify'?"),
        ("init", "Did you mean 'store init'?"),  # a subcommand typed alone
        ("popular", "Did you mean 'stats popular'?"),
        ("fix", "Did you mean 'links --fix', 'verify --fix' or 'verify-all --fix'?"),  # an option
    ],
)
def test_an_unknown_command_is_answered_with_the_one_meant(
    typed: str, hint: str, tmp_path: Path
) -> None:
    """A new user types `init` (other tools start so) or `fix`, and a typo now and then. The
    top-level group loads its commands lazily, and click suggests near names only from the
    commands loaded so far: none, so `serach` was answered "No such command" and nothing
    more, while `store ini` got its "Did you mean 'init'?"."""
    done = subprocess.run(
        [sys.executable, "-m", "memory_enhancement", typed],
        cwd=tmp_path, capture_output=True, text=True, env=child_env(tmp_path / "home"),
    )  # fmt: skip
    assert done.returncode == 2, done
    assert done.stdout == ""
    assert f"Error: No such command '{typed}'. {hint}\n" in done.stderr


def test_a_name_like_no_command_is_answered_without_a_guess(run_cli: RunCli) -> None:
    result = run_cli(["frobnicate"])
    assert result.exit_code == 2
    assert "Error: No such command 'frobnicate'.\n" in result.stderr


def test_search_and_context_take_the_querys_words_unquoted(run_cli: RunCli, store: Path) -> None:
    """`search widget padding` (Kronos1993/Multiplatform-Weather-App, a new user's first
    try) was `Error: Got unexpected extra argument (padding)`: the words are one query."""
    ok(run_cli(["add", "ui/pad", "-c", "# Widget padding\n\nCentering cancels padding.",
                "--dir", store]))  # fmt: skip
    ok(run_cli(["add", "ui/other", "-c", "# Colours\n\nThe palette.", "--dir", store]))
    for command in ("search", "context"):
        quoted = ok(run_cli([command, "widget padding", "--json", "--dir", store]))
        unquoted = ok(run_cli([command, "widget", "padding", "--json", "--dir", store]))
        assert unquoted == quoted
        assert "ui/pad" in unquoted and "ui/other" not in unquoted
    missing = run_cli(["search", "--dir", store])
    assert missing.exit_code == 2 and "Missing argument 'QUERY...'" in missing.stderr
