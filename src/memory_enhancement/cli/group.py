"""The `memory-enhancement` command line: the click group and its lazily loaded commands."""

from __future__ import annotations

import difflib
import gc
import importlib

import click

from memory_enhancement import __version__
from memory_enhancement.cli.app import CONTEXT, App, Group, store_options

# Each command and the module defining it (in that module's COMMANDS):
# a command's module is imported only when it runs, so `get` does not load `verify-all`.
LAZY_COMMANDS = {
    "add": "memory_cmds",
    "get": "memory_cmds",
    "show": "memory_cmds",  # an alias of get
    "update": "memory_cmds",
    "remove": "memory_cmds",
    "move": "memory_cmds",
    "list": "memory_cmds",
    "recent": "memory_cmds",
    "prune": "memory_cmds",
    "citation": "memory_cmds",
    "verify": "verify_cmds",
    "verify-all": "verify_cmds",
    "search": "index_cmds",
    "context": "index_cmds",
    "resolve": "index_cmds",
    "reindex": "index_cmds",
    "stats": "index_cmds",
    "graduate": "index_cmds",
    "graph": "graph_cmds",
    "related": "graph_cmds",
    "roots": "graph_cmds",
    "orphans": "graph_cmds",
    "links": "graph_cmds",
    "serve": "serve_cmds",
    "skill": "serve_cmds",
    "health": "health_cmds",
    "reinforce": "health_cmds",
    "expire": "health_cmds",
    "store": "store_cmds",
    "doctor": "store_cmds",
}
_ALIASES = {"show": "get"}


class LazyGroup(Group):
    """The top-level group: commands are looked up in their module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*LAZY_COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = self.commands.get(cmd_name)
        if found is not None or cmd_name not in LAZY_COMMANDS:
            return found
        module = importlib.import_module(f"memory_enhancement.cli.{LAZY_COMMANDS[cmd_name]}")
        wanted = _ALIASES.get(cmd_name, cmd_name)
        for command in module.COMMANDS:
            if command.name == wanted:
                return command  # type: ignore[no-any-return]
        return None  # pragma: no cover - tests/test_cli.py checks the table

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click answers an unknown name with the near ones among `self.commands`, which a
        lazy group fills only as commands run: with none, `serach` got no "Did you mean".
        Here the guess is made from every command, and a subcommand or an option typed
        as a command (`init`, `popular`, `fix`) is named where it is."""
        name = click.utils.make_str(args[0]) if args else ""
        known = not name or name.startswith("-") or self.get_command(ctx, name) is not None
        if not known and not ctx.resilient_parsing:
            raise click.UsageError(_unknown(self, ctx, name), ctx)
        return super().resolve_command(ctx, args)


def _unknown(group: click.Group, ctx: click.Context, name: str) -> str:
    """The "No such command" message, with what was likely meant: a subcommand of that name (`store
    init`), else the commands taking it as an option (`verify-all --fix`; not an option
    most take, `--json`), else the commands whose names are near it (difflib, as click does)."""
    commands = {n: group.get_command(ctx, n) for n in group.list_commands(ctx)}
    meant = [
        f"{n} {name}"
        for n, command in commands.items()
        if isinstance(command, click.Group) and command.get_command(ctx, name) is not None
    ]
    if not meant:
        option = f"--{name}"
        meant = [
            f"{n} {option}"
            for n, command in commands.items()
            if command is not None and any(option in p.opts for p in command.params)
        ]
        meant = meant if len(meant) <= 3 else []
    meant = meant or difflib.get_close_matches(name, list(commands))
    text = f"No such command {name!r}."
    if meant:
        quoted = list(map(repr, meant))
        either = f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
        text += f" Did you mean {either}?"
    return text


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", "-V", prog_name="memory-enhancement")
@store_options
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Memories for AI coding agents, with citations verified against your code.

    Without --dir or --store, commands use the project store (.serena/memories/
    or .memories/ at the git root) inside a git repository, else the global store.
    """
    ctx.ensure_object(App)


def run() -> None:
    # A run builds hundreds of thousands of small objects (citations, verdicts, rows) and
    # almost no cycles; at the default threshold (700) the cyclic collector ran hundreds
    # of times over all of them, 10-15% of a 10k-memory verify-all. Objects alive after
    # start-up (modules, classes) are frozen out of its scans.
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    cli(prog_name="memory-enhancement")


__all__ = ["LAZY_COMMANDS", "cli", "run"]
