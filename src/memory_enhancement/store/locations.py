"""Where stores live: the project store, the global store and named stores.

- The project store is the nearest `.serena/memories/` up to the git root (so
  Serena users get their own memories), else `.memories/` there.
- The global store and the tool's own files live under the user's config
  folder (XDG); `MEMORY_ENHANCEMENT_HOME` moves all of them, for tests and users.
- Named stores are registered in `stores.yaml` there. Removing a registration
  never touches the files.

Only composition roots (the CLI, the server factory) call `resolve_store` with
the environment; everything else receives the resulting paths.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from memory_enhancement.core.errors import InvalidInputError, NotFoundError, StoreError
from memory_enhancement.store import homes

HOME_ENV = homes.HOME_ENV
REGISTRY_FILE = "stores.yaml"
BUILTIN_NAMES = ("project", "global")


@dataclass(frozen=True)
class StoreLocation:
    """A chosen store: its folder, its name, and how it was chosen."""

    root: Path
    name: str
    kind: str  # dir | named | project | global


def tool_home(env: Mapping[str, str]) -> Path:
    """The folder of the tool's own files (registry, global store)."""
    if env.get(HOME_ENV):
        return Path(env[HOME_ENV]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")) / ".config")
    return Path(base).expanduser() / "memory-enhancement"


def cache_home(env: Mapping[str, str]) -> Path:
    """The folder of rebuildable data (indexes), never inside a repository."""
    return Path(homes.cache_dir(env))


def data_home(env: Mapping[str, str]) -> Path:
    """The folder of data that cannot be rebuilt (usage, verification history)."""
    return Path(homes.data_dir(env))


def store_key(root: Path) -> str:
    """A file name that identifies a store folder: its name and a hash of its real path."""
    return homes.store_key(root)


def global_store(env: Mapping[str, str]) -> Path:
    return tool_home(env) / "memories"


def find_git_root(start: Path) -> Path | None:
    """The nearest folder at or above start holding `.git` (a folder or a worktree file)."""
    found = homes.git_root(str(start))
    return Path(found) if found is not None else None


def project_store(cwd: Path) -> Path | None:
    """The nearest `.serena/memories/` from cwd up to the git root, else `.memories/` there.

    A Serena project is the folder holding `.serena/`, not always the git root:
    chen-uui/MustADB keeps its own in `ccc/astrobiology/`, and `serve` started there
    answered that it had no memories."""
    root = find_git_root(cwd)
    if root is None:
        return None
    here = Path(os.path.abspath(cwd))
    for folder in (here, *here.parents):
        serena = folder / ".serena" / "memories"
        if serena.is_dir():
            return serena
        if folder == root:
            break
    return root / ".memories"


def resolve_store(
    *,
    directory: str | None,
    name: str | None,
    cwd: Path,
    env: Mapping[str, str],
) -> StoreLocation:
    """The store a command works on: --dir, else --store, else project, else global."""
    if directory and name:
        raise InvalidInputError("give either --dir or --store, not both")
    if directory:
        root = Path(os.path.abspath(cwd / Path(directory).expanduser()))
        if root.exists() and not root.is_dir():
            raise StoreError(f"--dir {directory!r} is not a folder")
        return StoreLocation(root, root.name, "dir")
    if name:
        return named_store(name, cwd=cwd, env=env)
    project = project_store(cwd)
    if project is not None:
        return StoreLocation(project, "project", "project")
    return StoreLocation(global_store(env), "global", "global")


def named_store(name: str, *, cwd: Path, env: Mapping[str, str]) -> StoreLocation:
    if name == "global":
        return StoreLocation(global_store(env), "global", "global")
    if name == "project":
        project = project_store(cwd)
        if project is None:
            raise StoreError(f"no project store: {cwd} is not inside a git repository")
        return StoreLocation(project, "project", "project")
    registry = Registry(tool_home(env))
    stores = registry.load()
    if name not in stores:
        known = ", ".join([*BUILTIN_NAMES, *sorted(stores)])
        raise NotFoundError(f"unknown store {name!r} (known: {known})")
    return StoreLocation(Path(stores[name]), name, "named")


# Names of stores created on demand (by an MCP client's first write): one plain folder
# name, so the store lands in `stores/NAME` under the tool's home and nowhere else.
STORE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MAX_CREATED_STORES = 100  # registered stores, past which no more are created on demand


def check_new_store_name(name: str) -> None:
    """Refuse a store name that an MCP client may not create (InvalidInputError)."""
    if not STORE_NAME.fullmatch(name) or name in BUILTIN_NAMES or name.endswith("."):
        shown = name if len(name) <= 80 else f"{name[:80]}... ({len(name)} characters)"
        raise InvalidInputError(
            f"invalid store name {shown!r}: a new store's name is 1 to 64 ASCII letters, "
            "digits, '.', '_' or '-', starting with a letter or digit (no '~', '$' or '/', "
            "no Chinese or Japanese characters)"
        )


class Registry:
    """Named stores, kept in `stores.yaml` under the tool's home."""

    def __init__(self, home: Path) -> None:
        self.file = home / REGISTRY_FILE

    def load(self) -> dict[str, str]:
        if not self.file.is_file():
            return {}
        import yaml

        from memory_enhancement.store.formats import yamlload

        try:
            data = yamlload.load(self.file.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError, yamlload.YamlLimitError) as exc:
            raise StoreError(f"{self.file}: unreadable store registry: {exc}") from None
        stores = data.get("stores") if isinstance(data, dict) else None
        if not isinstance(stores, dict):
            raise StoreError(f"{self.file}: expected a 'stores:' mapping of name to folder")
        return {str(k): str(v) for k, v in stores.items()}

    def add(self, name: str, root: Path, *, limit: int | None = None) -> None:
        """Register name for root; the name must be usable as one folder name. With
        `limit`, refuse a new name once that many stores are registered.

        The MCP server creates a named store at `stores/NAME` on first write, so
        '.', '..', backslashes and control characters are refused: '..' would put
        the store at the tool's home (outside `stores/`) and NUL crashed the write
        after the name was already registered.
        """
        if (
            not name
            or name in BUILTIN_NAMES
            or name in (".", "..")
            or any(c in name for c in "/\\")
            or not name.isprintable()
            or name != name.strip()
        ):
            raise InvalidInputError(f"invalid store name {name!r}")
        with self._locked():
            stores = self.load()
            if limit is not None and name not in stores and len(stores) >= limit:
                raise StoreError(
                    f"cannot create store {name!r}: {len(stores)} stores are registered, "
                    f"the most that are created on demand; remove unused ones with "
                    "`memory-enhancement store remove NAME`"
                )
            if name in stores and Path(stores[name]) != root:
                raise StoreError(f"store {name!r} is already registered at {stores[name]}")
            stores[name] = str(root)
            self._save(stores)

    def remove(self, name: str) -> str:
        with self._locked():
            stores = self.load()
            if name not in stores:
                raise NotFoundError(f"unknown store {name!r}")
            root = stores.pop(name)
            self._save(stores)
        return root

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold an flock on `stores.yaml.lock` for a read-modify-write of the registry.

        The MCP server registers stores on first write from worker threads and
        from several processes at once; unlocked, concurrent registrations
        overwrote each other and stores whose memories were written were lost.
        """
        self.file.parent.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no flock; the write stays atomic
            yield
            return
        fd = os.open(self.file.with_name(REGISTRY_FILE + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _save(self, stores: dict[str, str]) -> None:
        import yaml

        from memory_enhancement.store.atomic import write_file

        self.file.parent.mkdir(parents=True, exist_ok=True)
        text = yaml.safe_dump({"stores": dict(sorted(stores.items()))}, sort_keys=False)
        write_file(self.file, text.encode("utf-8"), mode=0o644)
