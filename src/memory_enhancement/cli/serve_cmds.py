"""`serve` (the MCP server) and `skill` (the agent skill that explains how to use it)."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from memory_enhancement.cli.app import (
    CONTEXT,
    Group,
    app,
    emit_json,
    fail,
    json_option,
    log_through_root,
    store_options,
    warn,
)
from memory_enhancement.store.atomic import write_output

SKILL_FILE = Path(__file__).resolve().parent.parent / "SKILL.md"
LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


@click.command(context_settings=CONTEXT)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "streamable-http"]),
    default="stdio",
    show_default=True,
    help="stdio for one agent; streamable-http for a shared server.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="With streamable-http.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="With streamable-http.",
)
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
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default="WARNING",
    show_default=True,
    help="Logging on stderr.",
)
@click.option("--json", "as_json", is_flag=True, help="Log JSON lines on stderr.")
@store_options
def serve(
    transport: str,
    host: str,
    port: int,
    auth_token: str | None,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    log_level: str,
    as_json: bool,
) -> None:
    """Serve the memories to agents over MCP (stdout is the protocol; logs go to stderr).

    An agent starts this command and talks to it; run by hand on a terminal, it waits
    for an MCP client on stdio (Ctrl-C stops it). Over streamable-http, Host and Origin
    headers are checked on every address, and an address other than loopback needs
    --auth-token (see docs/security.md).
    """
    import logging
    import sys

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonLines() if as_json else logging.Formatter(LOG_FORMAT))
    logging.basicConfig(level=log_level.upper(), handlers=[handler])
    state = app()
    log_through_root()  # the server's log format (text or JSON lines) for every message
    state.location(create=True)  # a bad --dir/--store fails here, before any client connects
    from memory_enhancement.mcp.server import build_server

    if transport == "stdio":
        from memory_enhancement.mcp.stdio import run_stdio

        if sys.stdin.isatty():
            click.echo(
                "memory-enhancement: waiting for an MCP client on stdio (an agent starts this "
                "command itself; see README, Connecting an agent). Ctrl-C stops it.",
                err=True,
            )
        try:
            run_stdio(build_server(state.service_for))
        except KeyboardInterrupt:
            raise SystemExit(130) from None
        return
    from memory_enhancement.mcp.http import plan

    token = auth_token or None
    checks = plan(host, port, token, extra_hosts=allowed_hosts, extra_origins=allowed_origins)
    if checks.warning:
        warn([checks.warning])
    server = build_server(state.service_for, auth_token=token)
    click.echo(f"memory-enhancement: serving MCP at http://{host}:{port}/mcp", err=True)
    server.run("streamable-http", host=host, port=port, transport_security=checks.security)


class _JsonLines(logging.Formatter):
    """One JSON object per log record: time, level, logger, message."""

    def format(self, record: logging.LogRecord) -> str:
        import json

        data = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False)


@click.group(cls=Group, context_settings=CONTEXT)
def skill() -> None:
    """The agent skill (SKILL.md): how agents should use these memories."""


@skill.command("show", context_settings=CONTEXT)
@json_option
def show(as_json: bool) -> None:
    """Print SKILL.md."""
    text = SKILL_FILE.read_text(encoding="utf-8")
    if as_json:
        emit_json({"path": str(SKILL_FILE), "content": text})
    else:
        click.echo(text, nl=False)


@skill.command("install", context_settings=CONTEXT)
@click.argument("folder", required=False)
@click.option("--force", is_flag=True, help="Overwrite a SKILL.md that differs from this one.")
@json_option
def install(folder: str | None, force: bool, as_json: bool) -> None:
    """Copy SKILL.md into FOLDER (default: Claude Code's project skills folder,
    .claude/skills/memory-enhancement at the git root, as the project store is).

    A SKILL.md already there that differs (edited by hand, or from another version)
    is kept unless --force is given.
    """
    from memory_enhancement.store.locations import find_git_root

    bundled = SKILL_FILE.read_bytes()
    cwd = app().cwd
    if folder is None:  # from a subfolder too: Claude Code reads the project's root
        folder = str((find_git_root(cwd) or cwd) / ".claude" / "skills" / "memory-enhancement")
    target = cwd / folder / "SKILL.md"
    try:
        present = target.read_bytes() if target.is_file() else None
    except OSError as exc:
        fail(f"cannot read {target}: {exc}")
    if present is not None and present != bundled and not force:
        fail(
            f"{target} differs from the bundled skill (edited locally, or from another "
            "version); keep it, or overwrite it with --force"
        )
    status = "unchanged" if present == bundled else "overwritten" if present else "installed"
    if present != bundled:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_output(target, bundled)  # whole or not at all; through a symlinked SKILL.md
    if as_json:
        emit_json({"path": str(target), "status": status})
    else:
        click.echo(f"{status} {target}")


COMMANDS = [serve, skill]
