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
        diff = "".join(
            difflib.unified_diff(
                loaded.decoded.text.splitlines(keepends=True),
                text.splitlines(keepends=True),
                f"a/{name}",
                f"b/{name}",
            )
        )
        if not dry_run:
            store.replace(path, loaded.decoded.encode(text))
    return Fix(path, diff, written=not dry_run)
