"""The `memory-enhancement` command line.

`main` first offers the command to the quick read path (fast.py), which answers
`get`, `list`, `related`, `graph` and lexical `search` from an index in step without importing
click or the service, and then ends the process at once; anything it does not take runs
through the click group (group.py), imported only then.
"""

from __future__ import annotations

import sys

QUICK_COMMANDS = frozenset({"get", "show", "list", "related", "graph", "search"})  # see fast.py


def main() -> None:
    if sys.argv[1:2] and sys.argv[1] in QUICK_COMMANDS:
        from memory_enhancement.cli.fast import answer

        if answer(sys.argv[1:]):
            # Answered: printed, flushed, every database closed. Python's own shutdown
            # (tearing every module down, a last garbage collection) would cost a quick
            # read ~4 ms more, as much as its imports; nothing is left for it to do.
            import os

            os._exit(0)
    from memory_enhancement.cli.group import run

    run()


def __getattr__(name: str) -> object:
    """`cli` and `LAZY_COMMANDS` from group.py, loaded on first use."""
    if name in ("cli", "LAZY_COMMANDS"):
        from memory_enhancement.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["main"]
