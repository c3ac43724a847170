"""Helpers of the hostile-input tests: the CLI as a bounded child process, stores to attack.

A case that used to hang or eat gigabytes must fail its test, not the test run:
`run_bounded` runs the installed console script with a wall-clock timeout and
an address-space limit, and turns a timeout into a test failure naming it.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mcp_support import CONSOLE_SCRIPT, child_env

MEMORY_LIMIT = 1536 * 1024 * 1024  # bytes of address space for one CLI child


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_bounded(
    args: Sequence[str | os.PathLike[str]],
    *,
    home: Path,
    cwd: Path,
    timeout: float = 60,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`memory-enhancement ARGS` in a child process; a hang is a failure, not a stuck run."""
    command = [str(CONSOLE_SCRIPT), *(str(a) for a in args)]
    return _bounded(
        command,
        f"`{' '.join(command[1:])}`",
        timeout,
        cwd=cwd,
        env={**child_env(home), **(env or {})},
    )


def python_bounded(code: str, *, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -c CODE` in a bounded child process (for library calls that used to hang)."""
    return _bounded([sys.executable, "-c", code], f"python -c {code!r}", timeout)


def _bounded(
    command: list[str], what: str, timeout: float, **options: Any
) -> subprocess.CompletedProcess[str]:
    """Run command with its memory capped and no stdin; a hang fails the test, naming it."""
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            preexec_fn=_limit_memory,
            **options,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} hung for more than {timeout} s")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file under root (hidden ones included) and its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


ALIAS_BOMB = (
    "---\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"{name}: &{name} [{','.join(['*' + before] * 10)}]\n"
        for before, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "---\nbody\n"
)
DEEP_YAML = "---\nx: " + "[" * 25_000 + "]" * 25_000 + "\n---\nbody\n"
# Deep enough to hurt, shallow enough that libyaml 0.2.6 (depth limit 1000) accepts it.
DEEP_BUT_PARSEABLE = "---\nx: " + "[" * 900 + "]" * 900 + "\n---\nbody\n"
