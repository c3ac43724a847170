"""Where the tool keeps a store's index and state, as plain strings.

`locations.py` answers the same questions with `Path`s for everything else;
these are the parts the quick read path needs, written with `os.path` only, so
a `get` need not import pathlib, hashlib or the store registry to find its index.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

HOME_ENV = "MEMORY_ENHANCEMENT_HOME"


def _sha256_hex(data: bytes) -> str:
    try:  # the builtin module, without OpenSSL's start-up (hashlib's, ~3 ms)
        from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - builds without it
        from hashlib import sha256
    return str(sha256(data).hexdigest())


def cache_dir(env: Mapping[str, str]) -> str:
    """The folder of rebuildable data (indexes), never inside a repository."""
    if env.get(HOME_ENV):
        return os.path.join(os.path.expanduser(env[HOME_ENV]), "cache")
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME", "~"), ".cache")
    return os.path.join(os.path.expanduser(base), "memory-enhancement")


def data_dir(env: Mapping[str, str]) -> str:
    """The folder of data that cannot be rebuilt (usage, verification history)."""
    if env.get(HOME_ENV):
        return os.path.join(os.path.expanduser(env[HOME_ENV]), "data")
    base = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME", "~"), ".local", "share")
    return os.path.join(os.path.expanduser(base), "memory-enhancement")


def store_key(root: str | os.PathLike[str]) -> str:
    """A file name that identifies a store folder: its name and a hash of its real path."""
    real = os.path.realpath(root)
    digest = _sha256_hex(real.encode("utf-8"))[:12]
    name = "".join(c if c.isalnum() or c in "-_" else "-" for c in os.path.basename(real))
    return f"{name or 'store'}-{digest}"


def git_root(start: str) -> str | None:
    """The nearest folder at or above start holding `.git` (a folder or a worktree file):
    where a store's links to repository files are read (`locations.find_git_root`)."""
    folder = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
