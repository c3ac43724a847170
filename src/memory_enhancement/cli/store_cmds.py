"""`store ...` (create, list, register and unregister stores) and `doctor` (which store,
index, repository and extras a command would use, and what is wrong with them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memory_enhancement.cli.app import (
    CONTEXT,
    EXIT_PROBLEMS,
    Group,
    app,
    emit_json,
    fail,
    json_option,
    store_options,
)


@click.group(cls=Group, context_settings=CONTEXT)
def store() -> None:
    """Create, list and register memory stores."""


@store.command("init", context_settings=CONTEXT)
@click.argument("path", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["frontmatter", "serena"]),
    help="Format of new memories in this store (written to its config).",
)
@json_option
def init(path: str | None, fmt: str | None, as_json: bool) -> None:
    """Create a store at PATH (default: the project store, else the global store)."""
    from memory_enhancement.service.factory import init_store

    state = app()
    if path:
        root = (state.cwd / Path(path).expanduser()).resolve()
    else:
        root = state.location(create=True).root
    created, chosen = init_store(root, fmt)
    if as_json:
        emit_json({"path": str(root), "created": created, "format": chosen})
    else:
        click.echo(f"{'created' if created else 'existing'} store {root} (new memories: {chosen})")


@store.command("list", context_settings=CONTEXT)
@json_option
def list_stores(as_json: bool) -> None:
    """List the project store, the global store and the registered ones."""
    from memory_enhancement.store.locations import Registry, global_store, project_store, tool_home

    state = app()
    rows = []
    project = project_store(state.cwd)
    if project is not None:
        rows.append(("project", project))
    rows.append(("global", global_store(state.env)))
    rows += [(name, Path(p)) for name, p in sorted(Registry(tool_home(state.env)).load().items())]
    if as_json:
        emit_json([{"name": n, "path": str(p), "exists": p.is_dir()} for n, p in rows])
        return
    width = max(len(name) for name, _ in rows)
    for name, root in rows:
        missing = "" if root.is_dir() else "  (not created yet)"
        click.echo(f"{name:<{width}}  {root}{missing}")


@store.command("add", context_settings=CONTEXT)
@click.argument("name")
@click.argument("path")
@json_option
def add_store(name: str, path: str, as_json: bool) -> None:
    """Register the folder PATH as the store NAME (created on first write)."""
    from memory_enhancement.store.locations import Registry, tool_home

    state = app()
    root = (state.cwd / Path(path).expanduser()).resolve()
    if root.exists() and not root.is_dir():
        fail(f"cannot register {str(root)!r}: it is a file")
    Registry(tool_home(state.env)).add(name, root)
    if as_json:
        emit_json({"name": name, "path": str(root)})
    else:
        click.echo(f"registered store {name} -> {root}")


@store.command("remove", context_settings=CONTEXT)
@click.argument("name")
@json_option
def remove_store(name: str, as_json: bool) -> None:
    """Unregister the store NAME. Its files are left where they are."""
    from memory_enhancement.store.locations import Registry, tool_home

    root = Registry(tool_home(app().env)).remove(name)
    if as_json:
        emit_json({"name": name, "path": root, "removed": True})
    else:
        click.echo(f"unregistered store {name} (files kept in {root})")


@click.command(context_settings=CONTEXT)
@click.option("--load-model", is_flag=True, help="Also load the semantic model (slow: seconds).")
@json_option
@store_options
def doctor(load_model: bool, as_json: bool) -> None:
    """Show the effective configuration and check it. Exits 1 naming each problem found.

    The store a command here would use (and how it was chosen), its format, the
    index and state files, the repository root and HEAD, git, the semantic extra
    and its model. Nothing is created or changed.
    """
    from memory_enhancement.service.diagnose import diagnose

    state = app()
    location = state.location()
    index_file, state_file = state.database_files(location)
    found = diagnose(
        store_root=location.root,
        store_name=location.name,
        chosen_by={
            "dir": "given by --dir",
            "named": "given by --store",
            "project": "the project store: nearest .serena/memories, else the git root's .memories",
        }.get(location.kind, "the global store: no git repository here"),
        index_file=index_file,
        state_file=state_file,
        repo_root=state.repo_root(location.root),
        model=state.env.get("MEMORY_ENHANCEMENT_MODEL") or _configured_model(location.root),
        load_model=load_model,
    )
    if as_json:
        emit_json(found.as_dict())
    else:
        _print_diagnosis(found.facts, found.problems, found.notes)
    if found.problems:
        raise SystemExit(EXIT_PROBLEMS)


def _configured_model(root: Path) -> str | None:
    from memory_enhancement.core.errors import MemoryToolError
    from memory_enhancement.service.factory import configured_model

    try:
        return configured_model(root)
    except MemoryToolError:
        return None  # an unreadable config is reported as a problem by diagnose


def _print_diagnosis(facts: dict[str, Any], problems: list[str], notes: list[str]) -> None:
    store, index, db = facts["store"], facts["index"], facts["state"]
    repo, git, sem = facts["repository"], facts["git"], facts["semantic"]
    python = facts["python"]
    if store["exists"]:
        count = store["memories"]
        holding = f"{count} memor{'y' if count == 1 else 'ies'}, " if count is not None else ""
        detail = f"{holding}new memories: {store['format'] or '?'}"
    else:
        detail = "not created yet"
    head = repo["head"][:12] if repo["head"] else "no commit"
    branch = f" on {repo['branch']}" if repo["branch"] else ""
    if sem["installed"]:
        found = {True: "found", False: "NOT FOUND", None: "not checked"}[sem["model_found"]]
        loaded = {True: ", loads", False: ", does NOT load", None: ""}[sem["model_loaded"]]
        semantic = f"installed; model {sem['model']} {found}{loaded}"
    else:
        from memory_enhancement.service.diagnose import EXTRA_HINT

        semantic = f"not installed: {EXTRA_HINT}"
    rows = [
        ("version", f"memory-enhancement {facts['version']}, Python {python['version']}"),
        ("python", python["executable"]),
        ("store", f"{store['path']}  ({store['chosen_by']})"),
        ("", detail),
        ("config", store["config"] or "none (defaults)"),
        ("index", _file_line(index)),
        ("state", _file_line(db)),
        ("repository", repo["root"] + (f"  (git, HEAD {head}{branch})" if repo["git"] else "")),
        ("git", git["version"] or "NOT FOUND"),
        ("semantic", semantic),
    ]
    for label, value in rows:
        click.echo(f"{label:<12}{value}")
    for note in notes:
        click.echo(f"note: {note}")
    for problem in problems:
        click.echo(f"problem: {problem}")
    count = len(problems)
    click.echo(f"{count or 'no'} problem{'s' * (count != 1)} found")


def _file_line(info: dict[str, Any]) -> str:
    if not info["exists"]:
        return f"{info['path']}  (not created yet)"
    return f"{info['path']}  ({info['bytes']:,} bytes)"


COMMANDS = [store, doctor]
