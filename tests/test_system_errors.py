"""What the system refuses is an error naming the file, never a traceback (issue s23).

A new user's first hour met these: a regular file where a category folder should be,
a report written where no file can be, a tool home under a file. Each is an `error: ...`
line naming the file, exit 2, and nothing half-written. Run as real processes, since a
traceback is what a person at a terminal would have seen.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from conftest import RunCli
from mcp_support import Agent, child_env
from memory_enhancement.cli.app import App
from memory_enhancement.mcp.server import build_server


def run(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_enhancement", *args],
        cwd=cwd,
        env=child_env(home),
        capture_output=True,
        text=True,
        check=False,
    )


def refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    return done.stderr


@pytest.fixture
def store(git_repo: Path, isolated_home: Path) -> Path:
    """The project store with one memory and a regular file named like a category."""
    done = run(["add", "notes/kept", "-c", "# Kept"], git_repo, isolated_home)
    assert done.returncode == 0, done.stderr
    root = git_repo / ".memories"
    (root / "drafts").write_text("not a folder\n")
    return root


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_adding_under_a_file_named_like_the_category_names_the_file(
    store: Path, git_repo: Path, isolated_home: Path
) -> None:
    before = files_of(store)
    message = refused(run(["add", "drafts/idea", "-c", "# Idea"], git_repo, isolated_home))
    assert "cannot write memory 'drafts/idea'" in message
    assert repr(str(store / "drafts")) in message
    assert files_of(store) == before  # no memory, no temporary file, the blocker untouched


def test_moving_under_a_file_named_like_the_category_names_both_memories(
    store: Path, git_repo: Path, isolated_home: Path
) -> None:
    before = files_of(store)
    message = refused(run(["move", "notes/kept", "drafts/kept"], git_repo, isolated_home))
    assert "cannot move memory 'notes/kept' to 'drafts/kept'" in message
    assert repr(str(store / "drafts")) in message
    # Refused before anything is written: the memory's ID is not declared into its file.
    assert files_of(store) == before


def test_a_report_that_cannot_be_written_names_the_output(
    store: Path, git_repo: Path, isolated_home: Path
) -> None:
    output = store / "drafts" / "health.html"
    message = refused(
        run(["health", "--format", "html", "--output", str(output)], git_repo, isolated_home)
    )
    assert f"cannot write --output {str(output)!r}" in message


@pytest.mark.parametrize(
    "args",
    [["list"], ["add", "notes/new", "-c", "# New"], ["search", "kept"], ["verify-all"]],
)
def test_a_tool_home_under_a_file_is_an_error_naming_it(
    store: Path, git_repo: Path, tmp_path: Path, args: list[str]
) -> None:
    blocker = tmp_path / "home-file"
    blocker.write_text("")
    message = refused(run(args, git_repo, blocker / "home"))
    assert f"cannot make the folder of the index {blocker / 'home'}/" in message
    assert not (store / "notes" / "new.md").exists()  # refused before anything is written


def test_doctor_names_a_tool_home_under_a_file_as_a_problem(
    run_cli: RunCli, git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "home-file"
    blocker.write_text("")
    monkeypatch.setenv("MEMORY_ENHANCEMENT_HOME", str(blocker / "home"))
    result = run_cli(["doctor"], cwd=git_repo)
    assert result.exit_code == 1
    assert f"problem: cannot write the index {blocker}/home/cache/indexes/" in result.stdout
    assert f"{blocker} is not a writable folder" in result.stdout


def test_over_mcp_the_same_refusal_is_a_tool_error_naming_the_file(
    store: Path, git_repo: Path, isolated_home: Path
) -> None:
    app = App(env=child_env(isolated_home), cwd=git_repo)

    async def scenario() -> dict[str, Any]:
        async with Client(build_server(app.service_for)) as client:
            agent = Agent(client)
            message = await agent.fail("add_memory", path="drafts/idea", content="# Idea")
            kept = await agent.call("get_memory", path="notes/kept")
            return {"message": message, "kept": kept}

    found = anyio.run(scenario)
    assert "cannot write memory 'drafts/idea'" in found["message"]
    assert str(store / "drafts") in found["message"]
    assert found["kept"]["path"] == "notes/kept"  # the server goes on serving
