"""`serve` (the MCP server) and `skill` (the agent skill that explains how to use it)."""

from __future__ import annotations

from pathlib import Path

import click

from memory_enhancement.cli.app import CONTEXT, app, store_options, warn

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
@click.option(
    "--auth-token",
    envvar="MEMORY_ENHANCEMENT_AUTH_TOKEN",
    metavar="TOKEN",
    help="With streamable-http: the bearer token every request must carry (required off "
    "loopback; prefer the environment variable MEMORY_ENHANCEMENT_AUTH_TOKEN).",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="HOST[:PORT]",
    help="With streamable-http: another Host header to accept (a proxy's name; repeatable).",
)
@click.option(
    "--allowed-origin",
    "allowed_origins",
    multiple=True,
    metavar="ORIGIN",
    help="With streamable-http: another browser Origin to accept (repeatable).",
)
@click.option("--log-level", default="WARNING", show_default=True, help="Logging on stderr.")
@store_options
def serve(
    transport: str,
    host: str,
    port: int,
    auth_token: str | None,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    log_level: str,
) -> None:
    """Serve the memories to agents over MCP (stdout is the protocol; logs go to stderr).

    Over streamable-http, Host and Origin headers are checked on every address, and an
    address other than loopback needs --auth-token (see docs/security.md).
    """
    import logging
    import sys

    logging.basicConfig(
        level=log_level.upper(), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    state = app()
    state.location()  # a bad --dir/--store fails here, before any client connects
    from memory_enhancement.mcp.server import build_server

    if transport == "stdio":
        build_server(state.service_for).run()
        return
    from memory_enhancement.mcp.http import plan

    token = auth_token or None
    checks = plan(host, port, token, extra_hosts=allowed_hosts, extra_origins=allowed_origins)
    if checks.warning:
        warn([checks.warning])
    server = build_server(state.service_for, auth_token=token)
    server.run("streamable-http", host=host, port=port, transport_security=checks.security)


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
