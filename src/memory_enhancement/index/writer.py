"""Writing one memory's rows: the memory, its tags, links and citations.

Rows are replaced whole for a memory that changed; FTS is kept in step by the
triggers in schema.py, in the same transaction. Text with CJK is also written in the
segmented form FTS indexes (cjk.py).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from memory_enhancement.core.links import lookup_name, name_key
from memory_enhancement.core.model import Link, LinkKind
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.index.cjk import segment, share
from memory_enhancement.index.identifiers import parts
from memory_enhancement.store.formats.base import Document


def path_key(path: str) -> str:
    """The lookup key of a memory path: its name's key (what links are matched by)."""
    return name_key(path.rpartition("/")[2])


UNMATCHED = "unmatched"  # a candidate starts as no link; resolution may make it one
ANY_NAME = "*"  # the key of links whose target name depends on where they are written


def link_key(link: Link) -> str:
    """The key under which a link is found again when memories of that name come and go."""
    if link.kind is LinkKind.MEM_ID:
        return f"mem:{link.target.strip().removeprefix('mem:')}"
    return lookup_name(link.target) or ANY_NAME


def chunks(items: list[Any], size: int = 500) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Children:
    """The tag, link and citation rows of the memories written in one sync, inserted
    together at the end: one statement per table instead of three per memory."""

    def __init__(self) -> None:
        self.tags: list[tuple[Any, ...]] = []
        self.links: list[tuple[Any, ...]] = []
        self.citations: list[tuple[Any, ...]] = []
        self.sources: dict[int, str] = {}  # memory id -> path, of the memories with links

    def flush(self, conn: sqlite3.Connection, *, links: bool = True) -> None:
        """Insert the rows; with `links` False, the link rows stay (index.linking's
        insert_resolved inserts them resolved, in a build from nothing)."""
        conn.executemany("INSERT INTO tags(memory_id, tag) VALUES (?, ?)", self.tags)
        if links:
            conn.executemany(
                "INSERT INTO links(memory_id, ord, target, type, kind, line, key, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                self.links,
            )
            self.links, self.sources = [], {}
        conn.executemany(
            "INSERT INTO citations(memory_id, ord, target, line, end_line, snippet, verified, "
            "commit_sha, extra, file_line, is_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.citations,
        )
        self.tags, self.citations = [], []


_COLUMNS = (
    "path", "name_key", "title", "tags", "content", "format", "created_at", "updated_at",
    "expires_at", "source", "confidence", "last_verified", "citation_count", "declared_id",
    "mtime_ns", "size", "hash", "error", "problems", "fts_title", "fts_tags", "fts_path",
    "fts_content", "cjk", "mentions", "declared_name", "declared_key", "header_error",
    "fts_parts",
)  # fmt: skip
_UPSERT = (
    f"INSERT INTO memories ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) "
    "ON CONFLICT(path) DO UPDATE SET "
    + ", ".join(f"{k} = excluded.{k}" for k in _COLUMNS if k != "path")
    + " RETURNING id"
)
# A memory written into an index that held none before this sync (apply's cold build): no
# row can conflict, and the plain statement costs SQLite less than the upsert's.
_INSERT = f"INSERT INTO memories ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"


def upsert(
    conn: sqlite3.Connection,
    path: str,
    doc: Document | None,
    error: str | None,
    mtime: int,
    size: int,
    digest: str,
    *,
    fresh: bool = False,
    bulk: bool = False,
    children: Children | None = None,
    mentions: bool = False,
    header_error: str | None = None,
) -> str | None:
    """Write one memory's row; its tags, links and citations go to `children`
    (inserted at once by the caller), or are inserted now when none is given.
    `fresh`: the index holds no row of this memory; `bulk`: it held no memory at all
    before this sync (only inserts, nothing to update). `mentions`: the file's bytes may
    mention code in prose (only those files are read again for their mentions by a
    verification run); `header_error`: why its frontmatter does not parse, the rest of its
    text read as plain markdown (reading.py). Returns the key of the name the memory
    declares, if any (see declared_name)."""
    memory = doc.memory if doc else None
    meta = memory.meta if memory else None
    title = memory.title if memory else ""  # a property that reads the content: once
    tags = "\x1f".join(meta.every_tag) if meta else ""  # `keywords:` too (MemoryMeta)
    # CJK text is also written segmented for FTS (cjk.py); None for text without any.
    fts_title, fts_content = (segment(title), segment(memory.content)) if memory else (None, None)
    cjk = 0.0
    if memory and (fts_title is not None or fts_content is not None):
        cjk = share(f"{title}\n{memory.content}")
    declared = declared_name(path, meta.extra) if meta and meta.extra else None
    declared_key = name_key(declared) if declared is not None else None
    values = (
        path,
        path_key(path),
        title,
        tags,
        memory.content if memory else "",
        memory.format if memory else None,
        _time(meta.created_at if meta else None),
        _time(meta.updated_at if meta else None),
        _time(meta.expires_at if meta else None),
        meta.source if meta else None,
        meta.confidence if meta else None,
        _time(meta.last_verified if meta else None),
        len(meta.citations) if meta else 0,
        meta.citation_id if meta else None,
        mtime,
        size,
        digest,
        error,
        "\n".join(doc.problems) if doc else "",
        fts_title,
        segment(tags) if meta else None,
        segment(path),
        fts_content,
        cjk,
        int(mentions and error is None),
        declared,
        declared_key,
        header_error if error is None else None,
        # The words inside its camelCase names (identifiers.py); None for most prose.
        parts(f"{title}\n{memory.content}") if memory else None,
    )
    if bulk:
        inserted = conn.execute(_INSERT, values).lastrowid
        assert inserted is not None  # set by every INSERT of a row
        memory_id = inserted
    else:
        memory_id = conn.execute(_UPSERT, values).fetchone()[0]
    conn.execute(
        "INSERT OR REPLACE INTO files(path, mtime_ns, size, hash) VALUES (?, ?, ?, ?)",
        (path, mtime, size, digest),
    )
    if memory is None or meta is None:
        if not fresh:
            for table in ("tags", "links", "citations"):
                conn.execute(f"DELETE FROM {table} WHERE memory_id = ?", (memory_id,))
        return None
    links = [
        (
            memory_id,
            n,
            link.target,
            link.type,
            link.kind.value,
            link.line,
            link_key(link),
            UNMATCHED if link.kind.candidate else "dangling",
        )
        for n, link in enumerate(memory.links or ())
    ]
    lines = doc.citation_lines if doc else []
    citations = [
        (
            memory_id,
            n,
            c.target,
            c.line,
            c.end_line,
            c.snippet,
            c.verified,
            c.commit,
            json.dumps(c.extra) if c.extra else None,
            lines[n] if n < len(lines) else None,
            int(c.is_url),
        )
        for n, c in enumerate(meta.citations)
    ]
    try:
        _check_integers(path, [row[5] for row in links], [n for r in citations for n in r[3:5]])
    except UnindexableError as exc:
        # One memory the index cannot hold is recorded as unreadable (and so reported and
        # skipped by every listing) instead of failing the whole sync.
        upsert(conn, path, None, str(exc), mtime, size, digest, children=children)
        return None
    if not fresh:  # a memory seen for the first time has no old rows to clear
        conn.execute("DELETE FROM tags WHERE memory_id = ?", (memory_id,))
        conn.execute("DELETE FROM links WHERE memory_id = ?", (memory_id,))
        if _same_citations(conn, memory_id, citations):
            citations = []  # kept as they are: see _same_citations
        else:
            conn.execute("DELETE FROM citations WHERE memory_id = ?", (memory_id,))
    rows = children or Children()
    rows.tags.extend((memory_id, t) for t in meta.every_tag)
    if links:
        rows.links.extend(links)
        rows.sources[memory_id] = path
    rows.citations.extend(citations)
    if children is None:
        rows.flush(conn)
    return declared_key


def declared_name(path: str, extra: Mapping[str, Any]) -> str | None:
    """The name a memory's frontmatter declares (`name: project-logo`, as Claude Code's
    memories do), when it is one a link can write and not the file's own name already.
    Links written `[[project-logo]]` find `project_logo.md` by it (core/links.py)."""
    name = extra.get("name")
    if not isinstance(name, str):
        return None
    name = name.strip()
    if not name or "/" in name or "\n" in name or len(name) > 200:
        return None
    return None if name_key(name) == path_key(path) else name


def _same_citations(conn: sqlite3.Connection, memory_id: int, rows: list[tuple[Any, ...]]) -> bool:
    """Whether the memory's citation rows are already exactly these.

    A memory rewritten without touching its citations (its text edited, `verify-all
    --write` recording confidence) keeps its rows: replacing them would fire the
    triggers that forget what the last verification learned of every file they cite
    (`settled_files`, schema.py), and the next run would read and judge them all again.
    """
    found = conn.execute(
        "SELECT memory_id, ord, target, line, end_line, snippet, verified, commit_sha, extra, "
        "file_line, is_url FROM citations WHERE memory_id = ? ORDER BY ord",
        (memory_id,),
    ).fetchall()
    return found == rows


class UnindexableError(ValueError):
    """A parsed memory holding a value the index cannot store; the memory is skipped."""


def _check_integers(path: str, *numbers: list[Any]) -> None:
    """Refuse line numbers SQLite cannot store (2^63 and up), before any row is inserted.

    The grammar already refuses such line numbers; this keeps one memory that
    slips past it from failing the whole sync (and every command after it).
    """
    for values in numbers:
        for value in values:
            if value is not None and not -(2**63) <= value < 2**63:
                raise UnindexableError(
                    f"{path}: cannot be indexed: a {value.bit_length()}-bit number "
                    "does not fit the index"
                )


def _time(moment: object) -> str | None:
    return format_timestamp(moment) if isinstance(moment, datetime) else None
