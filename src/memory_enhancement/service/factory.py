"""Putting a service together: the store, its index and state files, the repository.

The composition roots (the CLI's `App`, the MCP server's per-call factory)
decide where things are, from options and the environment; this module turns
those places into objects, reading the store's own settings
(`.memory-enhancement.yaml`: `index:` tuning, `semantic_model`). A long-running
process keeps one `Parts` per store so its database connections stay open.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_enhancement.core.errors import InvalidInputError, StoreError, os_error_text
from memory_enhancement.index.index import Index
from memory_enhancement.service.composed import MemoryService
from memory_enhancement.store.disk import CONFIG_FILE, Store
from memory_enhancement.store.repofiles import RepoFiles
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository


@dataclass(frozen=True)
class Parts:
    """What a store's services share: the store, its index, its state."""

    store: Store
    index: Index
    state: State


def open_parts(
    root: Path,
    name: str | None,
    *,
    index_file: Path,
    state_file: Path,
    repo_root: Path | None = None,
    persistent: bool = False,
) -> Parts:
    """The store at root with its index and state databases (opened lazily, on first use).

    `repo_root` is the repository the store's memories link into (README.md, docs/).
    Their folders are made now: a tool home that cannot hold them fails the command
    before it writes a memory, not after (an `add` that wrote its file and then failed
    would leave the user an error and a memory).
    """
    for file, what in ((index_file, "index"), (state_file, "state database")):
        _make_folder(file, what)
    store = Store(root, name)
    state = State(state_file, persistent=persistent)
    repo = RepoFiles(repo_root, root) if repo_root is not None else None
    index = Index(
        store, index_file, state, persistent=persistent, repo=repo, **_index_settings(store)
    )
    return Parts(store, index, state)


def _make_folder(file: Path, what: str) -> None:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot make the folder of the {what} {file}: {os_error_text(exc)}"
        ) from None
    if not os.access(file.parent, os.W_OK):
        raise StoreError(f"cannot write the {what} {file}: {file.parent} is not writable")


def open_service(
    parts: Parts, *, repo_root: Path, session: str, model: str | None = None
) -> MemoryService:
    """A service over these parts; the repository is read fresh for each service, so
    cited files and git history are always what they are now."""
    return MemoryService(
        parts.store,
        Repository(repo_root),
        index=parts.index,
        state=parts.state,
        session=session,
        semantic_model=model or _store_model(parts.store),
    )


def init_store(root: Path, fmt: str | None) -> tuple[bool, str]:
    """Create the store folder (and its config when a format is given).

    Returns whether it was created and the format new memories will use.
    """
    if root.exists() and not root.is_dir():
        raise InvalidInputError(f"cannot create a store at {str(root)!r}: it is a file")
    existed = root.is_dir()
    config = root / CONFIG_FILE
    if fmt and config.exists():
        raise InvalidInputError(f"{config} already exists; edit it to change the format")
    root.mkdir(parents=True, exist_ok=True)
    if fmt:
        config.write_text(f"format: {fmt}\n", encoding="utf-8")
    return not existed, Store(root).default_format()


def _index_settings(store: Store) -> dict[str, Any]:
    """`index: {full_check_limit: N, full_check_interval: S}` from the store's config."""
    settings = store.config().get("index") or {}
    if not isinstance(settings, dict):
        raise InvalidInputError("the store's `index` setting must be a mapping")
    allowed: dict[str, type] = {"full_check_limit": int, "full_check_interval": float}
    chosen = {}
    for key, value in settings.items():
        if key not in allowed:
            raise InvalidInputError(f"unknown index setting {key!r} (known: {', '.join(allowed)})")
        try:
            chosen[key] = allowed[key](value)
        except (TypeError, ValueError):
            raise InvalidInputError(f"invalid index setting {key}: {value!r}") from None
    return chosen


def configured_model(root: Path) -> str | None:
    """The semantic model named in the store's config (`semantic_model:`), if any."""
    return _store_model(Store(root))


def _store_model(store: Store) -> str | None:
    model = store.config().get("semantic_model")
    return str(model) if model else None
