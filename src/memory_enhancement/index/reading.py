"""Reading the memory files a sync must (re)index, in parallel for a cold build.

Parsing is most of the cost of building an index (YAML frontmatter above all),
and it is independent per file, so a build of thousands of files parses them
in worker processes, one per core, while a small sync reads in-process. Workers
send back only what the index stores, not the whole parsed document.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from memory_enhancement.core.errors import MemoryToolError, NotFoundError
from memory_enhancement.core.mentions import may_mention
from memory_enhancement.store.disk import Store
from memory_enhancement.store.formats.base import Document

PARALLEL_FROM = 2000  # files; below this, starting workers costs more than it saves
_CHUNK = 250


class Outcome(NamedTuple):
    """What reading one file gave: a parsed document, an error, or nothing new. (A named
    tuple: a bulk rewrite of a store makes one per file, and a tuple is made fastest.)"""

    path: str
    kind: str  # "doc" (doc or error set), "same" (content unchanged), "gone"
    doc: Document | None = None
    error: str | None = None
    mtime: int = 0
    size: int = 0
    digest: str = ""
    mentions: bool = False  # the bytes may mention code in prose (core.mentions.may_mention)
    header: str | None = None  # why its frontmatter does not parse (doc: the rest, as text)


def read_one(store: Store, path: str, known_digest: str | None) -> Outcome:
    try:
        data, stat = store.read_bytes(path, scanned=True)
    except NotFoundError:
        return Outcome(path, "gone")  # vanished between the scan and the read
    except MemoryToolError as exc:
        return Outcome(path, "doc", error=str(exc))
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    if digest == known_digest:
        return Outcome(path, "same", mtime=stat.st_mtime_ns, size=stat.st_size, digest=digest)
    header = None
    try:
        # Lenient: one bad line in a header (`description: Logo: v2`) must not hide the
        # memory's text from search nor its links from the graph; the rest is read as text.
        doc: Document | None = store.parse(path, data, stat, lenient=True).doc
        error = None
        header = getattr(doc, "header_error", None)
    except MemoryToolError as exc:
        doc, error = None, str(exc)
    mentions = may_mention(data)
    return Outcome(
        path, "doc", doc, error, stat.st_mtime_ns, stat.st_size, digest, mentions, header
    )


def unchanged(
    store: Store, paths: list[str], known: Mapping[str, str]
) -> tuple[list[tuple[int, int, str]], list[str]]:
    """Of these paths, (mtime, size, path) of each file the index knows that still holds
    the bytes it hashed, and the others (changed, new, unreadable: `read_many` them).

    Done first, file after file, with the least work, when many files are to be read: a
    bulk rewrite of the same bytes (a checkout, a formatter, a sync tool) then costs a
    read and a hash per file, not a parse or a pool of worker processes. A few are left
    to `read_one` (which tells "same" too), so that an edited file is read once."""
    if len(paths) < PARALLEL_FROM:
        return [], list(paths)
    same: list[tuple[int, int, str]] = []
    rest: list[str] = []
    read, blake2b = store.read_bytes, hashlib.blake2b
    for path in paths:
        digest = known.get(path)
        if digest is not None:
            try:
                data, stat = read(path, scanned=True)
            except MemoryToolError:
                rest.append(path)  # read_one says what is wrong
                continue
            if blake2b(data, digest_size=16).hexdigest() == digest:
                same.append((stat.st_mtime_ns, stat.st_size, path))
                continue
        rest.append(path)
    return same, rest


def read_many(store: Store, paths: list[str], known: Mapping[str, str]) -> Iterator[Outcome]:
    """Outcomes for paths, in order; known maps path -> the digest indexed before. Many
    are parsed in worker processes (see `unchanged` for files that merely were touched)."""
    workers = min(os.cpu_count() or 1, 8)
    if len(paths) < PARALLEL_FROM or workers < 2:
        for path in paths:
            yield read_one(store, path, known.get(path))
        return
    yield from _parsed(store, paths, known, workers)


def _parsed(
    store: Store, paths: list[str], known: Mapping[str, str], workers: int
) -> Iterator[Outcome]:
    if len(paths) < PARALLEL_FROM:
        for path in paths:
            yield read_one(store, path, known.get(path))
        return
    chunks = [paths[n : n + _CHUNK] for n in range(0, len(paths), _CHUNK)]
    roots = [str(store.root)] * len(chunks)
    digests = [{p: known[p] for p in chunk if p in known} for chunk in chunks]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # Forking a process that runs threads (the MCP server) can deadlock a child: spawn there.
    method = "spawn" if threading.active_count() > 1 else None
    try:
        context = multiprocessing.get_context(method)
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for outcomes in pool.map(_work, roots, chunks, digests):
                yield from outcomes
    except (OSError, RuntimeError):  # no process support here (a sandbox, a frozen app)
        for path in paths:
            yield read_one(store, path, known.get(path))


def _work(root: str, paths: list[str], known: dict[str, str]) -> list[Outcome]:
    store = Store(Path(root))
    outcomes = []
    for path in paths:
        outcome = read_one(store, path, known.get(path))
        doc = outcome.doc
        if doc is not None:  # send back what the index keeps, not the whole document
            light = Document(doc.memory, "", doc.problems, doc.citation_lines)
            outcome = Outcome(path, outcome.kind, light, None, outcome.mtime, outcome.size,
                              outcome.digest, outcome.mentions, outcome.header)  # fmt: skip
        outcomes.append(outcome)
    return outcomes
