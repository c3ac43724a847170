"""Shared fixtures: an isolated tool home, a real git repository, a service, the CLI.

Every test runs with `MEMORY_ENHANCEMENT_HOME` pointing into its own tmp folder
and with the current folder set to a fresh tmp folder outside any repository,
so no test can touch the user's global store or a real project store.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result

from memory_enhancement.cli import cli
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.verify.repo import Repository

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from mcp_support import Agent
    from memory_enhancement.cli.app import App

# The real corpus is vendored in `corpus/` (a byte-for-byte copy, MIT; see corpus/README.md);
# MEMORY_ENHANCEMENT_CORPUS points elsewhere.
CORPUS = Path(
    os.environ.get("MEMORY_ENHANCEMENT_CORPUS")
    or Path(__file__).resolve().parents[1] / "corpus" / "ai-agents-memories"
)

SOURCE_FILES = {
    "src/app.py": (
        "import os\n"
        "\n"
        "API_VERSION = 'v2'\n"
        "\n"
        "def main() -> None:\n"
        "    print(API_VERSION)\n"
        "    return None\n"
    ),
    "src/util/helpers.py": "def helper(a, b):\n    return a | b\n",
    "README.md": "# Demo project\n\nSome prose.\n",
}

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture
def anyio_backend() -> str:
    """The event loop of the async tests (the MCP client's and server's): asyncio only."""
    return "asyncio"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tool's own files (registry, global store) live in this test's tmp folder."""
    home = tmp_path / "tool-home"
    monkeypatch.setenv("MEMORY_ENHANCEMENT_HOME", str(home))
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    return home


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    return result.stdout


@pytest.fixture(scope="session")
def _git_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("template") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for rel, text in SOURCE_FILES.items():
        file = repo / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


@pytest.fixture
def git_repo(tmp_path: Path, _git_template: Path) -> Path:
    """A real git repository with a few committed source files (a fresh copy per test)."""
    repo = tmp_path / "repo"
    shutil.copytree(_git_template, repo, symlinks=True)
    return repo


class Clock:
    """A clock the test moves by hand, so timestamps are known and distinct."""

    def __init__(self, start: datetime) -> None:
        self.moment = start

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, **delta: float) -> datetime:
        self.moment += timedelta(**delta)
        return self.moment


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 1, 31, 12, 0, 0, tzinfo=UTC))


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    """A memories folder apart from the repository (created on first write)."""
    return tmp_path / "store"


@pytest.fixture
def service(store_dir: Path, git_repo: Path, clock: Clock) -> MemoryService:
    return MemoryService(Store(store_dir), Repository(git_repo), clock=clock)


@pytest.fixture(scope="session")
def corpus() -> Path:
    assert CORPUS.is_dir(), f"corpus not found at {CORPUS} (see corpus/README.md)"
    return CORPUS


RunCli = Callable[..., Result]


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """Run the CLI in-process; `cwd` sets the current folder, `input` feeds stdin."""

    def run(
        args: Sequence[str | os.PathLike[str]], *, input: str | None = None, cwd: Path | None = None
    ) -> Result:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)

    return run


@pytest.fixture
def app(isolated_home: Path, git_repo: Path) -> App:
    """The CLI's composition root as `serve` uses it, inside the test repository: the
    server the MCP tests talk to (a module may give its own, with a store written first)."""
    from memory_enhancement.cli.app import App

    return App(env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)}, cwd=git_repo)


@pytest.fixture
async def agent(app: App) -> AsyncIterator[Agent]:
    """An agent's session with the MCP server `app` builds, over the SDK's own client."""
    from mcp import Client

    from mcp_support import Agent
    from memory_enhancement.mcp.server import build_server

    async with Client(build_server(app.service_for)) as client:
        yield Agent(client)
