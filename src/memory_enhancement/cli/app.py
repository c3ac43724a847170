"""The CLI's composition root: global options, the chosen store, errors and output.

Commands stay thin: they parse arguments, call one service method and render.
This module is the only place that reads the environment and the current
folder. Store options (`--dir`, `--store`, `--repo-root`) are accepted both
before the command and after it, as the seed writes them
(`memory-enhancement verify-all --dir D`); the later one wins.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from memory_enhancement.core.errors import MemoryToolError, os_error_text

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class ToolError(click.ClickException):
    """A library error shown as `error: ...` on stderr with exit code 2."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


class Group(click.Group):
    """A command group that turns library errors into clean CLI errors."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """A group typed alone (`stats`, `store`, the tool itself) prints its help on stdout
        and succeeds: the user asked what it holds. click 8.2 made that a usage error
        (the help on stderr, exit 2), which a script or a pager reads as a failure."""
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(EXIT_OK)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemoryToolError as exc:
            raise ToolError(str(exc)) from None
        except BrokenPipeError:  # `memory-enhancement list | head`
            sys.stderr.close()
            raise SystemExit(EXIT_OK) from None
        except OSError as exc:  # a folder it may not read or write, a full disk: no traceback
            raise ToolError(os_error_text(exc)) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list with each summary's whole first sentence, wrapped.

        click cuts summaries to the width left on one line ("answering QUERY,...");
        a summary that stops mid-sentence tells less than one that wraps.
        """
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, summary(command)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def summary(command: click.Command) -> str:
    """A command's short help, else the first sentence of its help, never cut."""
    if command.short_help:
        return command.short_help
    text = " ".join((command.help or "").split("\n\n")[0].split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


class _Warnings(logging.Handler):
    """What the library logs as a warning (a damaged state database moved aside) is shown
    the way the CLI shows every warning: `warning: ...` on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(f"warning: {record.getMessage()}", err=True)


def _show_library_warnings() -> None:
    logger = logging.getLogger("memory_enhancement")
    if not any(isinstance(h, _Warnings) for h in logger.handlers):
        logger.addHandler(_Warnings(logging.WARNING))
        logger.propagate = False  # once, not again through a root handler (`serve`)


def log_through_root() -> None:
    """Let the library's messages reach the root logger's handlers instead (`serve`)."""
    logger = logging.getLogger("memory_enhancement")
    for handler in [h for h in logger.handlers if isinstance(h, _Warnings)]:
        logger.removeHandler(handler)
    logger.propagate = True


class App:
    """Per-invocation state: where the store and the code are, built lazily."""

    def __init__(self, env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
        _show_library_warnings()
        self.env = dict(os.environ if env is None else env)
        self.cwd = cwd or Path.cwd()
        self.options: dict[str, Any] = {}
        self._service: Any = None
        self._shared: dict[str, Any] = {}  # per store, for the server: see build()

    def location(self, *, create: bool = False) -> Any:
        """The chosen store. A --dir that does not exist is a mistake (a typo would
        otherwise show an empty store and leave an index behind), unless the command
        creates memories (`create`) and the folder's parent exists."""
        from memory_enhancement.store.locations import resolve_store

        location = resolve_store(
            directory=self.options.get("dir"),
            name=self.options.get("store"),
            cwd=self.cwd,
            env=self.env,
        )
        if location.kind == "dir" and not location.root.is_dir():
            given = self.options.get("dir")
            if not (create and location.root.parent.is_dir()):
                raise ToolError(
                    f"--dir {given!r}: no such folder ({location.root}); give an existing "
                    "memories folder, or create it with `store init PATH`"
                )
        return location

    def repo_root(self, store_root: Path) -> Path:
        """--repo-root, else the git top-level of the store's folder, else the current folder."""
        from memory_enhancement.store.locations import find_git_root

        given = self.options.get("repo_root")
        if given:
            root = (self.cwd / Path(given).expanduser()).resolve()
            if not root.is_dir():
                raise ToolError(f"--repo-root {given!r} is not a folder")
            return root
        probe = store_root
        while not probe.exists() and probe.parent != probe:
            probe = probe.parent
        return find_git_root(probe) or self.cwd

    def service(self, location: Any = None, *, create: bool = False) -> Any:
        """The service for the chosen store (or for `location`, e.g. the global store);
        `create` for commands that may make the --dir folder (see location())."""
        if location is not None:
            return self.build(location, self.session(), default=False)
        if self._service is None:
            chosen = self.location(create=create)
            self._service = self.build(chosen, self.session(), default=True)
        return self._service

    def build(self, location: Any, session: str, *, default: bool, persistent: bool = False) -> Any:
        """A fresh service: its index in the cache folder, its state in the data folder.

        With `persistent` (the MCP server), the store's index and state objects are
        made once and shared by the services of every call, keeping their database
        connections open; the repository is new for each call, so cited files and
        git history are always read as they are now.
        """
        from memory_enhancement.service.factory import open_parts, open_service
        from memory_enhancement.store.locations import store_key

        key = store_key(location.root)
        parts = self._shared.get(key) if persistent else None
        if parts is None:
            index_file, state_file = self.database_files(location, default=default)
            parts = open_parts(
                location.root, location.name, index_file=index_file, state_file=state_file,
                repo_root=self.repo_root(location.root), persistent=persistent,
            )  # fmt: skip
            if persistent:
                self._shared[key] = parts
        return open_service(
            parts,
            repo_root=self.repo_root(parts.store.root),
            session=session,
            model=self.env.get("MEMORY_ENHANCEMENT_MODEL"),
        )

    def database_files(self, location: Any, *, default: bool = True) -> tuple[Path, Path]:
        """The store's index (--index, else in the cache folder) and state database."""
        from memory_enhancement.store.locations import cache_home, data_home, store_key

        key = store_key(location.root)
        given = self.options.get("index") if default else None
        index_file = Path(given) if given else cache_home(self.env) / "indexes" / f"{key}.db"
        return index_file, data_home(self.env) / "state" / f"{key}.db"

    def service_for(self, store: str | None, session: str, *, create: bool = False) -> Any:
        """What the MCP server calls per tool call: a named store (created on first write) or
        the default one chosen by the command-line options. The --dir folder checked when
        `serve` started may be gone since (a branch switched): the tool error says so, where
        a CLI error raised here reached the agent as `Error executing tool X`, no reason."""
        from memory_enhancement.core.errors import NotFoundError

        if store is None:
            try:
                location = self.location(create=True)
                return self.build(location, session, default=True, persistent=True)
            except ToolError as exc:
                raise NotFoundError(exc.format_message()) from None
        from memory_enhancement.store.locations import (
            MAX_CREATED_STORES,
            Registry,
            StoreLocation,
            check_new_store_name,
            named_store,
            tool_home,
        )

        try:
            location = named_store(store, cwd=self.cwd, env=self.env)
        except NotFoundError:
            if not create:
                raise
            check_new_store_name(store)  # before anything is registered or created
            root = tool_home(self.env) / "stores" / store
            Registry(tool_home(self.env)).add(store, root, limit=MAX_CREATED_STORES)
            location = StoreLocation(root, store, "named")
        return self.build(location, session, default=False, persistent=True)

    def session(self) -> str:
        """--session, else MEMORY_ENHANCEMENT_SESSION, else one per calling shell."""
        given = self.options.get("session") or self.env.get("MEMORY_ENHANCEMENT_SESSION")
        return str(given) if given else f"cli-{os.getppid()}"


def _remember(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None:
            ctx.ensure_object(App).options[name] = value
        return value

    return callback


def store_options(func: F) -> F:
    """--dir/--store/--repo-root, accepted on the group and on every command."""
    options = [
        click.option(
            "--dir",
            "store_dir",
            metavar="PATH",
            expose_value=False,
            callback=_remember("dir"),
            help="Memories folder to use (overrides project/global store).",
        ),
        click.option(
            "--store",
            "store_name",
            metavar="NAME",
            expose_value=False,
            callback=_remember("store"),
            help="Named store (see `store list`); 'project' and 'global' always exist.",
        ),
        click.option(
            "--repo-root",
            "repo_root",
            metavar="PATH",
            expose_value=False,
            callback=_remember("repo_root"),
            help="Root of the code that citations point into (default: git top-level).",
        ),
        click.option(
            "--index",
            "index_path",
            metavar="FILE",
            expose_value=False,
            callback=_remember("index"),
            help="Index database to use (default: in the user's cache folder).",
        ),
        click.option(
            "--session",
            "session",
            metavar="ID",
            expose_value=False,
            callback=_remember("session"),
            help="Session ID for usage tracking (default: $MEMORY_ENHANCEMENT_SESSION).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def app() -> App:
    return click.get_current_context().ensure_object(App)


def emit_json(data: Any) -> None:
    """Pretty JSON; a long list is written one compact item per line, which is still
    valid JSON, reads well in a diff, and is several times faster for 10,000 items."""
    if isinstance(data, list) and len(data) > 50:
        encode = json.JSONEncoder(ensure_ascii=False).encode
        sys.stdout.write("[\n" + ",\n".join(map(encode, data)) + "\n]\n")
        sys.stdout.flush()
        return
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def warn(messages: Iterable[str]) -> None:
    for message in messages:
        click.echo(f"warning: {message}", err=True)


def terminal_notice() -> Callable[[str], None] | None:
    """`note: ...` on stderr when a run starts long work, only when a person watches."""
    if not sys.stderr.isatty():
        return None
    return lambda text: click.echo(f"note: {text}", err=True)


class ProblemsFound(ToolError):
    """A check that ran and found problems: exit code 1."""

    exit_code = EXIT_PROBLEMS


def exit_if_skipped(skipped: Iterable[str]) -> None:
    """A command over many memories that skipped some (each named in a warning) still
    answers for the rest, and exits 1 so a script or CI sees that something was left out."""
    if skipped:
        raise SystemExit(EXIT_PROBLEMS)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    raise (ProblemsFound if code == EXIT_PROBLEMS else ToolError)(message)


def plural(count: int, one: str, many: str | None = None) -> str:
    """`1 memory`, `2 memories`."""
    return f"{count} {one if count == 1 else (many or one + 's')}"
