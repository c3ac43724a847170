"""Rewriting one memory file in place: under the store lock, with a diff to show.

Both kinds of fix (`verify --fix` moving citations, `links --fix` retargeting
links) and a move's link updates edit a file the same way: read it under the
lock, compute the new text from what is on disk now, write it atomically unless
this is a dry run, and report the unified diff.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from memory_enhancement.core.model import Fix
from memory_enhancement.store.disk import Loaded, Store


def rewrite(
    store: Store,
    path: str,
    change: Callable[[Loaded], str | None],
    *,
    name: str,
    dry_run: bool,
) -> Fix | None:
    """Apply `change` to the memory's current text; None (or the same text) leaves it alone.

    `name` is the file as the diff headers show it (relative to the repository).
    """
    with store.lock():
        loaded = store.read(path, links=False)
        text = change(loaded)
        if text is None or text == loaded.decoded.text:
            return None
        diff = unified_diff(loaded.decoded.text, text, name)
        if not dry_run:
            store.replace(path, loaded.decoded.encode(text), loaded)
    return Fix(path, diff, written=not dry_run)


NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(before: str, after: str, name: str) -> str:
    """The unified diff of a file's text, as git writes it: lines end at `\\n` only (not
    at the other breaks str.splitlines knows, such as U+2028), and a last line without a
    newline (many Serena memories end so) is followed by git's `\\ No newline at end of
    file` marker, so the diff stays one line per line and applies with `git apply`."""
    lines = difflib.unified_diff(_lines(before), _lines(after), f"a/{name}", f"b/{name}")
    return "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}" for line in lines)


def _lines(text: str) -> list[str]:
    lines = [f"{line}\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]
