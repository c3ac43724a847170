"""`serve` (the MCP server) and `skill` (the agent skill that explains how to use it)."""

from __future__ import annotations

from pathlib import Path

import click

from memory_enhancement.cli.app import CONTEXT, app, store_options

SKILL_FILE = Path(__file__).resolve().parent.parent / "SKILL.md"


@click.command(context_settings=CONTEXT)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "streamable-http"]),
    default="stdio",
    show_default=True,
    help="stdio for one agent; streamable-http for a shared server.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="With streamable-http.")
@click.option("--port", default=8765, show_default=True, help="With streamable-http.")
@click.option("--log-level", default="WARNING", show_default=True, help="Logging on stderr.")
@store_options
def serve(transport: str, host: str, port: int, log_level: str) -> None:
    """Serve the memories to agents over MCP (stdout is the protocol; logs go to stderr)."""
    import logging
    import sys

    logging.basicConfig(
        level=log_level.upper(), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    state = app()
    state.location()  # a bad --dir/--store fails here, before any client connects
    from memory_enhancement.mcp.server import build_server

    server = build_server(state.service_for)
    if transport == "stdio":
        server.run()
    else:
        server.run("streamable-http", host=host, port=port)


@click.group(context_settings=CONTEXT)
def skill() -> None:
    """The agent skill (SKILL.md): how agents should use these memories."""


@skill.command("show", context_settings=CONTEXT)
def show() -> None:
    """Print SKILL.md."""
    click.echo(SKILL_FILE.read_text(encoding="utf-8"), nl=False)


@skill.command("install", context_settings=CONTEXT)
@click.argument("folder", default=".claude/skills/memory-enhancement")
def install(folder: str) -> None:
    """Copy SKILL.md into FOLDER (default: Claude Code's project skills folder)."""
    import shutil

    target = app().cwd / folder
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SKILL_FILE, target / "SKILL.md")
    click.echo(f"installed {target / 'SKILL.md'}")


COMMANDS = [serve, skill]
