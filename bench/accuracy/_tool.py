"""Which `memory-enhancement` a verification benchmark runs, and which code that is.

Shared by the accuracy and the speed benchmark so that both print the same
identification of what they measured.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

from _git import git

CHECKOUT = Path(__file__).resolve().parents[2]


def default_cli() -> list[str]:
    """The `memory-enhancement` next to this interpreter (the venv), else on PATH."""
    here = Path(sys.executable).parent / "memory-enhancement"
    if here.exists():
        return [str(here)]
    found = shutil.which("memory-enhancement")
    return [found] if found else [sys.executable, "-m", "memory_enhancement"]


def tool_version(cli: list[str]) -> str:
    """The command, the commit of this checkout and a hash of the package's sources.

    A dirty checkout's "HEAD" alone would not identify the code that ran.
    """
    import memory_enhancement

    src = Path(memory_enhancement.__file__).parent
    digest = hashlib.sha1()
    for file in sorted(src.rglob("*.py")):
        digest.update(file.read_bytes())
    try:
        head = git(CHECKOUT, "describe", "--always", "--dirty").decode().strip()
    except Exception:  # not a checkout
        head = "?"
    return f"{' '.join(cli)} (checkout {head}, src sha1 {digest.hexdigest()[:10]})"


def tool_env(home: Path) -> dict[str, str]:
    """The environment of the timed processes: a private tool home (never the user's index
    or history) and compiled modules cached, as for an installed package, even when the
    caller's shell sets PYTHONDONTWRITEBYTECODE (then every edited module would be
    compiled again at every start, about 20 ms)."""
    env = dict(os.environ)
    env["MEMORY_ENHANCEMENT_HOME"] = str(home)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    env["PYTHONPYCACHEPREFIX"] = str(CHECKOUT / "bench" / ".cache" / "pycache")
    return env
