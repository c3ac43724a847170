"""A table of hostile inputs through the CLI (in-process and real processes) and MCP.

Each row is one bad value given to one operation. Every row must be refused with
exit code 2 (a tool error over MCP) and a message that names the bad value, and
the store must be byte for byte what it was: nothing written, nothing lost.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from conftest import RunCli
from hostile_support import run_bounded, snapshot
from mcp_support import Agent
from memory_enhancement.cli.app import App
from memory_enhancement.mcp.server import build_server
from memory_enhancement.store.formats.base import MAX_FILE_BYTES

LONG = "x" * 5000
HUGE = "99999999999999999999"

# (id, arguments after the command name, what the message must contain)
CLI_ROWS: list[tuple[str, list[str], str]] = [
    ("path-escapes", ["add", "../escape", "-c", "x"], "../escape"),
    ("path-absolute", ["add", "/etc/passwd-note", "-c", "x"], "/etc/passwd-note"),
    ("path-long", ["add", f"n/{LONG}", "-c", "x"], "xxxxxxxx"),
    ("path-empty", ["add", "", "-c", "x"], "''"),
    ("content-empty", ["add", "n/new", "-c", "   "], "n/new"),
    ("content-too-big", ["add", "n/new", "-c", "y" * (MAX_FILE_BYTES + 1)], str(MAX_FILE_BYTES)),
    ("citation-huge-line", ["add", "n/new", "-c", "x", "--citation", f"a.py:{HUGE}"], HUGE),
    ("citation-line-0", ["add", "n/new", "-c", "x", "--citation", "a.py:0"], "a.py:0"),
    ("citation-backwards", ["add", "n/new", "-c", "x", "--citation", "a.py:9-3"], "a.py:9-3"),
    ("citation-empty", ["add", "n/new", "-c", "x", "--citation", " "], "' '"),
    ("tag-comma", ["add", "n/new", "-c", "x", "-t", "a,b"], "'a,b'"),
    ("tag-empty", ["add", "n/new", "-c", "x", "-t", " "], "''"),
    ("expiry-garbage", ["add", "n/new", "-c", "x", "--expires-at", "soon"], "'soon'"),
    ("expiry-before-year-1", ["add", "n/new", "-c", "x", "--expires-at", "0001-01-01T00:00+05:00"],
     "0001-01-01T00:00+05:00"),
    ("expiry-long", ["add", "n/new", "-c", "x", "--expires-at", LONG], "5002 characters"),
    ("link-empty", ["add", "n/new", "-c", "x", "--link", " "], "''"),
    ("update-missing", ["update", "n/missing", "-c", "x"], "n/missing"),
    ("update-huge-line", ["update", "n/kept", "--citation", f"src/app.py:{HUGE}"], HUGE),
    ("update-too-big", ["update", "n/kept", "-c", "y" * (MAX_FILE_BYTES + 1)], "n/kept"),
    ("cite-huge-line", ["citation", "add", "n/kept", f"src/app.py:{HUGE}"], HUGE),
    ("cite-missing-memory", ["citation", "add", "n/nope", "src/app.py:1"], "n/nope"),
    ("move-escapes", ["move", "n/kept", "../../out"], "../../out"),
    ("move-onto-existing", ["move", "n/kept", "n/other"], "n/other"),
    ("recent-limit-0", ["recent", "-n", "0"], "0"),
    ("get-missing", ["get", "n/missing"], "n/missing"),
    ("remove-missing", ["remove", "n/missing"], "n/missing"),
]  # fmt: skip


@pytest.fixture
def seeded(tmp_path: Path, run_cli: RunCli, git_repo: Path) -> Path:
    store = tmp_path / "store"
    for path in ("n/kept", "n/other"):
        args = ["add", path, "-c", f"The {path} memory.", "--citation", "src/app.py:3"]
        assert run_cli([*args, "--dir", store, "--repo-root", git_repo]).exit_code == 0
    return store


@pytest.mark.parametrize(("args", "named"), [r[1:] for r in CLI_ROWS], ids=[r[0] for r in CLI_ROWS])
def test_a_hostile_value_through_the_cli_is_refused_naming_it_and_changes_nothing(
    seeded: Path, run_cli: RunCli, git_repo: Path, args: list[str], named: str
) -> None:
    before = snapshot(seeded)
    result = run_cli([*args, "--dir", seeded, "--repo-root", git_repo], cwd=git_repo)
    assert result.exit_code == 2, result.stdout
    assert result.stderr.startswith("error: ")
    assert named in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr) < 2000  # a megabyte of input is not echoed back
    assert snapshot(seeded) == before


SUBPROCESS_ROWS = [row for row in CLI_ROWS if row[0] in ("path-escapes", "citation-huge-line")]


@pytest.mark.parametrize(
    ("args", "named"), [r[1:] for r in SUBPROCESS_ROWS], ids=[r[0] for r in SUBPROCESS_ROWS]
)
def test_a_hostile_value_through_the_installed_command_is_refused_too(
    seeded: Path, isolated_home: Path, git_repo: Path, args: list[str], named: str
) -> None:
    before = snapshot(seeded)
    result = run_bounded(
        [*args, "--dir", seeded, "--repo-root", git_repo], home=isolated_home, cwd=git_repo
    )
    assert result.returncode == 2
    assert named in result.stderr and "Traceback" not in result.stderr
    assert snapshot(seeded) == before


def test_a_store_folder_that_is_a_file_is_refused(
    run_cli: RunCli, tmp_path: Path, git_repo: Path
) -> None:
    file = tmp_path / "not-a-folder"
    file.write_text("I am a file.\n", encoding="utf-8")
    result = run_cli(["list", "--dir", file], cwd=git_repo)
    assert result.exit_code == 2 and "not-a-folder" in result.stderr
    assert file.read_text(encoding="utf-8") == "I am a file.\n"


# -- the same through MCP ----------------------------------------------------------------

# (id, tool, arguments, what the message must contain)
MCP_ROWS: list[tuple[str, str, dict[str, object], str]] = [
    ("path-escapes", "add_memory", {"path": "../escape", "content": "x"}, "../escape"),
    ("path-nul", "add_memory", {"path": "n/a\x00b", "content": "x"}, "n/a"),
    ("content-too-big", "add_memory", {"path": "n/new", "content": "y" * (MAX_FILE_BYTES + 1)},
     str(MAX_FILE_BYTES)),
    ("citation-huge-line", "add_memory",
     {"path": "n/new", "content": "x", "citations": [f"a.py:{HUGE}"]}, HUGE),
    ("tag-newline", "add_memory", {"path": "n/new", "content": "x", "tags": ["a\nb"]},
     "a\\nb"),
    ("expiry-garbage", "add_memory", {"path": "n/new", "content": "x", "expires_at": LONG},
     "5002 characters"),
    ("update-huge-line", "update_memory", {"path": "n/kept", "citations": [f"s.py:{HUGE}"]},
     HUGE),
    ("cite-huge-line", "add_citation", {"path": "n/kept", "citation": f"s.py:{HUGE}"}, HUGE),
    ("move-escapes", "move_memory", {"from_path": "n/kept", "to_path": "../../out"},
     "../../out"),
    ("store-tilde", "add_memory", {"path": "n/new", "content": "x", "store": "~"}, "'~'"),
    ("store-home", "add_memory", {"path": "n/new", "content": "x", "store": "$HOME"}, "$HOME"),
    ("store-long", "add_memory", {"path": "n/new", "content": "x", "store": "s" * 300},
     "300 characters"),
    ("recent-limit-0", "recent_memories", {"limit": 0}, "0"),
    ("health-limit-0", "memory_health", {"limit": 0}, "0"),
    ("limit-huge-text", "recent_memories", {"limit": LONG * 20}, "invalid limit"),
    ("query-huge-object", "search_memories", {"query": {"q": LONG * 20}}, "invalid query"),
]  # fmt: skip


@pytest.fixture
async def agent(isolated_home: Path, git_repo: Path) -> AsyncIterator[Agent]:
    app = App(env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)}, cwd=git_repo)
    async with Client(build_server(app.service_for)) as client:
        agent = Agent(client)
        for path in ("n/kept", "n/other"):
            await agent.call("add_memory", path=path, content=f"The {path} memory.")
        yield agent


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments", "named"), [r[1:] for r in MCP_ROWS], ids=[r[0] for r in MCP_ROWS]
)
async def test_a_hostile_value_through_mcp_is_a_tool_error_naming_it_and_changes_nothing(
    agent: Agent,
    git_repo: Path,
    isolated_home: Path,
    tool: str,
    arguments: dict[str, object],
    named: str,
) -> None:
    store = git_repo / ".memories"
    before, home_before = snapshot(store), snapshot(isolated_home)
    message = await agent.fail(tool, **arguments)
    assert named in message
    assert len(message) < 2000
    assert snapshot(store) == before
    changed = {
        k
        for k in set(snapshot(isolated_home)) ^ set(home_before)
        if not k.startswith(("cache", "data"))
    }
    assert changed == set()  # no store registered or created
