"""Finding a memory from what a person or an agent typed: a path, a citation ID or a name."""

from __future__ import annotations

import difflib
import sqlite3
from typing import TYPE_CHECKING

from memory_enhancement.core.errors import InvalidInputError, NotFoundError
from memory_enhancement.core.ids import format_citation_id, parse_citation_id
from memory_enhancement.core.links import LinkStatus
from memory_enhancement.core.model import Link, LinkKind
from memory_enhancement.index import queries
from memory_enhancement.index.index import Index
from memory_enhancement.store.state import State

if TYPE_CHECKING:
    from memory_enhancement.store.disk import Store


def resolve_id(index: Index, state: State, text: str) -> str:
    """The path of the memory a citation ID names; says whose it was when it is gone."""
    bare = parse_citation_id(text)
    with index.connect() as conn:
        path = queries.path_of(conn, bare)
    if path is None:
        with state.connect() as db:
            owner = db.execute("SELECT identity FROM ids WHERE citation_id = ?", (bare,)).fetchone()
        gone = f" (it belonged to {owner[0]!r}, which no longer exists)" if owner else ""
        raise NotFoundError(f"unknown citation ID {format_citation_id(bare)}{gone}")
    return path


def find(index: Index, state: State, reference: str) -> str:
    """An existing memory from a path, a citation ID or a unique name."""
    store = index.store
    try:
        return store.locate(reference)
    except NotFoundError:
        pass
    text = reference.strip()
    if text.startswith(("mem:", "[mem:")):
        try:
            return resolve_id(index, state, text)
        except InvalidInputError:  # not an ID's shape: a name, or nothing at all
            named = serena_reference(store, text)
            if named is None:
                raise NotFoundError(
                    f"memory not found: {reference!r} is neither a citation ID (mem:XXXXXX) "
                    f"nor mem:NAME of a memory (store {store.root})"
                ) from None
            return named
        except NotFoundError:  # an ID's shape, and no memory has that ID
            named = serena_reference(store, text)  # `mem:gotchas`, as Serena's memories say
            if named is None:
                raise
            return named
    from memory_enhancement.index.linking import whole_store  # loads the writer: only here

    with index.connect() as conn:
        resolver = whole_store(conn)  # a unique file name, else a unique declared name
    found = resolver.resolve("", Link(text, "link", LinkKind.BARE))
    if found.status is LinkStatus.RESOLVED and found.target:
        return found.target
    if found.candidates:
        raise InvalidInputError(f"{reference!r} is ambiguous: {', '.join(found.candidates[:5])}")
    if text.isascii() and text.isalnum():  # a bare citation ID (`a7Bc3x`), as `resolve` takes
        with index.connect() as conn:  # one; a memory's name comes first (looked up above)
            path = queries.path_of(conn, text)
        if path is not None:
            return path
    with index.connect() as conn:
        near = _near(conn, text)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise NotFoundError(f"memory not found: {reference!r} (store {store.root}){hint}")


def _near(conn: sqlite3.Connection, text: str) -> list[str]:
    """Up to three memories a shortened or mistyped name may have meant: those whose path
    holds what was typed (`xml-save-mechanism` for `xml-save-mechanism-_originalXml`, the
    long names Serena stores keep), else the closest by difflib's ratio. A person who
    mistyped one letter was told only "not found", and had to `list` a store of 23 to
    find the name."""
    wanted = text.casefold().strip("/")
    if not wanted:
        return []
    paths = sorted(str(p) for (p,) in conn.execute("SELECT path FROM memories"))
    holding = sorted((p for p in paths if wanted in p.casefold()), key=len)
    if holding:
        return holding[:3]
    folded = {p.casefold(): p for p in paths}
    return [folded[p] for p in difflib.get_close_matches(wanted, list(folded), n=3, cutoff=0.75)]


def serena_reference(store: Store, text: str) -> str | None:
    """The memory a Serena `mem:NAME` names (Serena reads NAME as an exact path), else None.

    Serena's memories point at each other so (`see mem:gotchas`, `mem:pipeline/order`) and
    the link graph follows them; an agent that passes what it read is asking for that
    memory, not for a citation ID. A citation ID comes first (the caller tries it)."""
    name = text.removeprefix("[").removeprefix("mem:").removesuffix("]").strip()
    if not name:
        return None
    try:
        return store.locate(name)
    except (InvalidInputError, NotFoundError):
        return None


def exact(index: Index, state: State, reference: str) -> str:
    """The memory a reference names exactly: its path or its citation ID (or Serena's
    `mem:NAME`), never a name looked up across folders: what `remove` takes.

    A name that `find` would take is refused with the path to pass: on strata an agent's
    `remove_memory` given the [mem:ID] search had handed it answered "memory not found"
    of a memory that was there."""
    store = index.store
    try:
        return store.locate(reference)
    except NotFoundError as exc:
        missing = exc
    if reference.strip().startswith(("mem:", "[mem:")):
        return find(index, state, reference)
    try:
        named = find(index, state, reference)
    except (InvalidInputError, NotFoundError):
        raise missing from None
    raise InvalidInputError(
        f"no memory has the path {reference!r}; it names {named!r}: pass that path "
        "(or its citation ID) to remove it"
    )
