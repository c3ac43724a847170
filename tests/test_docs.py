"""The docs run: every code block marked runnable in README.md and docs/*.md is executed.

A block whose fence reads ```` ```bash runnable ```` is run as written by bash (`set -e`:
each command must exit 0), with the installed `memory-enhancement` on PATH, in a fresh
git repository holding a copy of `examples/demo/project`; the blocks of one file run
in order in the same repository, so a later block sees what an earlier one added.
Every other `memory-enhancement ...` line in a shell block must at least name a real
command, and the pre-commit hook of docs/ci.md is run as pre-commit runs it. So the
docs and the behaviour cannot drift apart again.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml

from conftest import GIT_ENV, git
from memory_enhancement.cli import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROJECT = ROOT / "examples" / "demo" / "project"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.S | re.M)
SHELLS = {"bash", "sh", "shell", "console"}


def blocks(file: Path) -> list[tuple[list[str], str, int]]:
    """The fenced code blocks of a markdown file: info words, body, line number."""
    text = file.read_text(encoding="utf-8")
    return [
        (match[1].split(), match[2], text.count("\n", 0, match.start()) + 1)
        for match in FENCE.finditer(text)
    ]


def runnable(file: Path) -> list[tuple[str, int]]:
    return [(body, line) for info, body, line in blocks(file) if "runnable" in info[1:]]


def console_script_dir() -> Path:
    script = Path(sys.executable).parent / "memory-enhancement"
    assert script.exists(), f"{script} is not installed (pip install -e .)"
    return script.parent


def fresh_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "demo project")
    return project


def environment(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, **GIT_ENV, "MEMORY_ENHANCEMENT_HOME": str(tmp_path / "home")}
    env["PATH"] = f"{console_script_dir()}{os.pathsep}{env.get('PATH', '')}"
    env.pop("MEMORY_ENHANCEMENT_SESSION", None)
    return env


WITH_BLOCKS = [file for file in DOCS if runnable(file)]


def test_the_docs_mark_blocks_runnable() -> None:
    names = {file.name for file in WITH_BLOCKS}
    assert {"README.md", "cli.md", "ci.md"} <= names, names


@pytest.mark.parametrize("file", WITH_BLOCKS, ids=lambda f: f.name)
def test_every_runnable_block_runs_as_written(file: Path, tmp_path: Path) -> None:
    project = fresh_project(tmp_path)
    env = environment(tmp_path)
    for body, line in runnable(file):
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", body],
            cwd=project, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, (
            f"{file.name}:{line}: the block exited {done.returncode}\n{body}\n"
            f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
        )
        assert "Traceback" not in done.stderr, (file.name, line, done.stderr)


def command_lines() -> list[tuple[str, int, list[str]]]:
    """Every `memory-enhancement ...` line of every shell block, as words."""
    found = []
    for file in DOCS:
        for info, body, line in blocks(file):
            if not info or info[0] not in SHELLS:
                continue
            for n, text in enumerate(body.splitlines(), start=line + 1):
                if text.startswith("memory-enhancement "):
                    command = text.split(" #", 1)[0]
                    try:
                        words = shlex.split(command)
                    except ValueError:  # a quote closed on a later line
                        words = command.split()
                    found.append((f"{file.name}:{n}", n, words))
    return found


def test_every_command_line_in_the_docs_names_a_real_command() -> None:
    lines = command_lines()
    assert len(lines) >= 20
    ctx = click.Context(cli)
    unknown = []
    for where, _, words in lines:
        command: click.Command = cli
        for word in words[1:]:
            if word.startswith("-") or not isinstance(command, click.Group):
                break
            found = command.get_command(ctx, word)
            if found is None:
                unknown.append(f"{where}: {' '.join(words)}")
                break
            command = found
    assert unknown == []


def test_the_precommit_hook_of_the_docs_runs_as_pre_commit_runs_it(tmp_path: Path) -> None:
    """docs/ci.md's `repo: local` hook: from the repository root, no file names passed."""
    [config] = [
        yaml.safe_load(body)
        for info, body, _ in blocks(ROOT / "docs" / "ci.md")
        if info[:1] == ["yaml"] and "repo: local" in body
    ]
    [repo] = config["repos"]
    [hook] = repo["hooks"]
    assert repo["repo"] == "local" and hook["language"] == "system"
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    project = fresh_project(tmp_path)
    env = environment(tmp_path)

    def run_hook() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            shlex.split(hook["entry"]), cwd=project, env=env, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip

    added = subprocess.run(
        ["memory-enhancement", "add", "decisions/api", "-c", "# API", "--citation",
         "app/config.py:3"], cwd=project, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert run_hook().returncode == 0
    config_py = project / "app" / "config.py"
    config_py.write_text(config_py.read_text().replace('"v2"', '"v3"'))
    failed = run_hook()
    assert failed.returncode == 1
    assert "STALE" in failed.stdout and "app/config.py:3" in failed.stdout
