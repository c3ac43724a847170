"""The pre-commit hook published in `.pre-commit-hooks.yaml`, run as pre-commit runs it."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from memory_enhancement.core.model import Citation
from verify_support import GitRepo

HOOKS = Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml"
APP = ["import os", "", "API_VERSION = 'v2'", "", "def main() -> None:", "    return None"]


def hook() -> dict[str, Any]:
    hooks = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    [found] = [h for h in hooks if h["id"] == "verify-memory-citations"]
    return dict(found)


def command() -> list[str]:
    """The hook's entry, with the console script of this environment."""
    head, *rest = shlex.split(hook()["entry"])
    assert head == "memory-enhancement"
    script = Path(sys.executable).parent / "memory-enhancement"
    if script.exists():
        return [str(script), *rest]
    found = shutil.which("memory-enhancement")
    return [found, *rest] if found else [sys.executable, "-m", "memory_enhancement", *rest]


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    """A project with its store in `.serena/memories`, committed."""
    repo = GitRepo(tmp_path / "project")
    repo.write_lines("src/app.py", APP)
    repo.commit("code")
    stamp = repo.stamp()
    repo.memory("api", [Citation("src/app.py", 3, snippet="API_VERSION = 'v2'", verified=stamp)])
    repo.memory("main", [Citation("src/app.py", 5, snippet="def main()", verified=stamp)])
    repo.commit("memories")
    return repo


def run_hook(project: GitRepo) -> subprocess.CompletedProcess[str]:
    """Run as pre-commit does: from the repository root, no file names passed."""
    return subprocess.run(
        command(), cwd=project.root, capture_output=True, text=True, check=False, timeout=60
    )


def test_the_hook_is_declared_for_pre_commit() -> None:
    declared = hook()
    assert declared["language"] == "python"
    assert declared["entry"] == "memory-enhancement verify-all"
    assert declared["pass_filenames"] is False
    assert declared["always_run"] is True
    assert declared["name"] and declared["description"]


def test_the_hook_passes_when_every_citation_is_valid(project: GitRepo) -> None:
    done = run_hook(project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "2 memories, 2 citations: 2 valid, 0 moved, 0 stale, 0 missing\n"


def test_the_hook_passes_on_moved_citations_and_fails_on_a_stale_one(project: GitRepo) -> None:
    project.write_lines("src/app.py", ["# header", *APP])
    assert run_hook(project).returncode == 0
    project.write_lines("src/app.py", ["# header", *(s.replace("v2", "v3") for s in APP)])
    done = run_hook(project)
    assert done.returncode == 1
    assert done.stdout == (
        "INVALID  api  (0 of 1 citation holds)\n"
        "  STALE        src/app.py:3  line 3 changed: it is line 4 now, which reads "
        "`API_VERSION = 'v3'`\n"
        "moved    main  (1 of 1 citation holds, 1 moved: --fix rewrites it)\n"
        "  moved        src/app.py:5 -> src/app.py:6  found at line 6 (was 5)\n"
        "2 memories, 2 citations: 0 valid, 1 moved, 1 stale, 0 missing\n"
    )


def test_the_hook_passes_on_a_staged_rename_of_a_file_a_prose_mention_names(
    project: GitRepo,
) -> None:
    """A pre-commit hook runs before the commit: a `git mv` is staged, not in HEAD. Found
    on 2sem/talktrans (its Tuist move, verified before committing the merge): declared
    citations followed the staged rename, but a prose mention of the file was `missing`,
    "deleted after the memory line was written", and the hook failed the commit; the
    same run after the commit called it renamed."""
    notes = ["# Notes", "", "Set at src/app.py:3.", "", "Read in app.py:5."]
    project.write_lines(".serena/memories/notes.md", notes)
    project.commit("notes")
    project.mv("src/app.py", "lib/app.py")
    done = run_hook(project)
    assert done.returncode == 0, done.stdout
    assert "mention RENAMED      src/app.py:3 (memory line 3) -> lib/app.py:3" in done.stdout
    # The bare name was looked up at the memory line's commit in a list of that commit's
    # files made from git's index, staged rename included: `lib/app.py`, "not a text
    # file when the memory line was written".
    assert "mention RENAMED      app.py:5 (memory line 5) -> lib/app.py:5" in done.stdout


def test_a_memory_moved_by_the_tool_keeps_its_mentions_history_before_the_commit(
    project: GitRepo,
) -> None:
    """`memory-enhancement move` renames the memory file; until the move is committed, git
    has no history at its new path, and its mentions were judged by the work tree alone:
    a mention of a file renamed since was `missing` (failing), before `git add` and in the
    hook that commits the move, and `renamed` again once committed (found on 23min/FlowTime,
    moving a memory after its code was reorganised). Its lines are now traced through the
    memory file it was moved from."""
    project.write_lines(".serena/memories/notes.md", ["# Notes", "", "Set at src/app.py:3."])
    project.commit("notes")
    project.mv("src/app.py", "lib/app.py")
    project.commit("code moved")
    move = [*command()[:-1], "move", "notes", "moved_notes"]
    done = subprocess.run(move, cwd=project.root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    expected = "mention RENAMED      src/app.py:3 (memory line 3) -> lib/app.py:3"
    before = run_hook(project)  # not staged yet
    assert (before.returncode, expected in before.stdout) == (0, True), before.stdout
    project.git("add", "-A")
    staged = run_hook(project)  # as pre-commit runs it for the commit of the move
    assert (staged.returncode, expected in staged.stdout) == (0, True), staged.stdout
