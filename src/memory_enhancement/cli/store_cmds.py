"""`store ...`: create, list, register and unregister stores."""

from __future__ import annotations

from pathlib import Path

import click

from memory_enhancement.cli.app import CONTEXT, app, emit_json, fail, json_option


@click.group(context_settings=CONTEXT)
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
