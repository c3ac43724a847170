"""The CLI's composition root: global options, the chosen store, errors and output.

Commands stay thin: they parse arguments, call one service method and render.
This module is the only place that reads the environment and the current
folder. Store options (`--dir`, `--store`, `--repo-root`) are accepted both
before the command and after it, as the seed writes them
(`memory-enhancement verify-all --dir D`); the later one wins.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from ..errors import MemoryToolError

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

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemoryToolError as exc:
            raise ToolError(str(exc)) from None
        except BrokenPipeError:  # `memory-enhancement list | head`
            sys.stderr.close()
            raise SystemExit(EXIT_OK) from None


class App:
    """Per-invocation state: where the store and the code are, built lazily."""

    def __init__(self, env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
        self.env = dict(os.environ if env is None else env)
        self.cwd = cwd or Path.cwd()
        self.options: dict[str, Any] = {}
        self._service: Any = None

    def location(self) -> Any:
        from ..stores import resolve_store

        return resolve_store(
            directory=self.options.get("dir"),
            name=self.options.get("store"),
            cwd=self.cwd,
            env=self.env,
        )

    def repo_root(self, store_root: Path) -> Path:
        """--repo-root, else the git top-level of the store's folder, else the current folder."""
        from ..stores import find_git_root

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

    def service(self) -> Any:
        if self._service is None:
            from ..repo import Repository
            from ..service import MemoryService
            from ..storage import Store

            location = self.location()
            store = Store(location.root, location.name)
            self._service = MemoryService(store, Repository(self.repo_root(store.root)))
        return self._service


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
    ]
    for option in reversed(options):
        func = option(func)
    return func


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def app() -> App:
    return click.get_current_context().ensure_object(App)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def warn(messages: Iterable[str]) -> None:
    for message in messages:
        click.echo(f"warning: {message}", err=True)


class ProblemsFound(ToolError):
    """A check that ran and found problems: exit code 1."""

    exit_code = EXIT_PROBLEMS


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    raise (ProblemsFound if code == EXIT_PROBLEMS else ToolError)(message)
