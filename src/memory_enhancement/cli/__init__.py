"""The `memory-enhancement` command line."""

from __future__ import annotations

import gc

import click

from memory_enhancement import __version__
from memory_enhancement.cli.app import CONTEXT, App, Group, store_options
from memory_enhancement.cli.graph_cmds import COMMANDS as GRAPH_COMMANDS
from memory_enhancement.cli.health_cmds import COMMANDS as HEALTH_COMMANDS
from memory_enhancement.cli.index_cmds import COMMANDS as INDEX_COMMANDS
from memory_enhancement.cli.memory_cmds import COMMANDS as MEMORY_COMMANDS
from memory_enhancement.cli.serve_cmds import COMMANDS as SERVE_COMMANDS
from memory_enhancement.cli.store_cmds import COMMANDS as STORE_COMMANDS
from memory_enhancement.cli.verify_cmds import COMMANDS as VERIFY_COMMANDS


@click.group(cls=Group, context_settings=CONTEXT)
@click.version_option(__version__, "--version", "-V", prog_name="memory-enhancement")
@store_options
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Memories for AI coding agents, with citations verified against your code.

    Without --dir or --store, commands use the project store (.serena/memories/
    or .memories/ at the git root) inside a git repository, else the global store.
    """
    ctx.ensure_object(App)


for command in [
    *MEMORY_COMMANDS,
    *VERIFY_COMMANDS,
    *INDEX_COMMANDS,
    *GRAPH_COMMANDS,
    *SERVE_COMMANDS,
    *HEALTH_COMMANDS,
    *STORE_COMMANDS,
]:
    cli.add_command(command)
cli.add_command(MEMORY_COMMANDS[1], "show")


def main() -> None:
    # A run builds hundreds of thousands of small objects (citations, verdicts, rows) and
    # almost no cycles; at the default threshold (700) the cyclic collector ran hundreds
    # of times over all of them, 10-15% of a 10k-memory verify-all. Objects alive after
    # start-up (modules, classes) are frozen out of its scans.
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    cli(prog_name="memory-enhancement")


__all__ = ["cli", "main"]
