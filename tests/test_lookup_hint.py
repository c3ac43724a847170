"""A memory asked for by a name no memory has: the error names the ones that may have been
meant. Serena stores keep long names (`xml-save-mechanism-_originalXml`, in a Russian store
of 23 memories read in session 33), and a shortened or mistyped one was answered only
"memory not found", the person left to `list` the store for the name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

NAMES = ("xml-save-mechanism-_originalXml", "architecture", "code_style", "register-tables")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    folder = tmp_path / "project" / ".serena" / "memories"
    folder.mkdir(parents=True)
    for name in NAMES:
        (folder / f"{name}.md").write_text(f"# {name}\n\nЗаметка.\n", encoding="utf-8")
    return folder


def show(store: Path, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_enhancement", "--dir", str(store), "show", name],
        capture_output=True, text=True, env=dict(os.environ), cwd=store, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("asked", "meant"),
    [
        ("xml-save-mechanism", "xml-save-mechanism-_originalXml"),  # shortened
        ("XML-SAVE", "xml-save-mechanism-_originalXml"),  # in another case
        ("archtecture", "architecture"),  # a letter left out
        ("code-style", "code_style"),  # the other separator
    ],
)
def test_a_name_no_memory_has_is_answered_with_the_ones_it_may_mean(
    store: Path, asked: str, meant: str
) -> None:
    result = show(store, asked)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"error: memory not found: {asked!r} (store {store}); did you mean {meant}?\n"
    )


def test_a_name_like_none_gets_no_guess(store: Path) -> None:
    result = show(store, "deployment")
    assert result.returncode == 2
    assert result.stderr == f"error: memory not found: 'deployment' (store {store})\n"


def test_several_holding_the_name_are_named_shortest_first_at_most_three(
    store: Path,
) -> None:
    for name in ("register-a", "register-bb", "register-ccc"):
        (store / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
    result = show(store, "register")
    assert result.stderr.endswith("did you mean register-a, register-bb, register-ccc?\n")
