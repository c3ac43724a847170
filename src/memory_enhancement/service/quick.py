"""Read commands answered from an index that needs no sync, without the write path.

`get`, `list`, `related`, `graph` and lexical `search` on a store whose index is in step answer
from a few rows; what made them cost 8-10 times a bare Python start was
importing everything else first (click, the formats, the sync, the service).
`QuickReads` answers them with the index's rows (index/quick.py) and records
their use the way the service does. Every method returns None when it cannot
answer exactly as the service would (an index to sync, a reference to resolve
by name, an expired memory, a file that changed, a problem to report): the
caller then takes the ordinary path, which gives the same output, only slower.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # sqlite3 without `datetime`: see index/quick.py
import os
import time
from collections.abc import Sequence

from memory_enhancement.core.files import MEMORY_SUFFIX
from memory_enhancement.index import quick

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from memory_enhancement.graph.traverse import GraphResult

STATE_VERSION = 10  # len(store.state_schema.MIGRATIONS): an older state database: slow path


class QuickReads:
    """The quick answers for one store; `close()` when done."""

    def __init__(
        self, root: str, index_file: str, state_file: str, session: str,
        repo_root: str | None = None,
    ) -> None:  # fmt: skip
        """`repo_root`: the repository the memories' links to files are read in (the
        service's, see cli/app.repo_root); None: a memory linking to a file steps aside."""
        self.root = root
        self.repo_root = repo_root
        self.state_file = state_file
        self.session = session
        self.now_text = now_text()
        self.conn = quick.open_settled(index_file, root, time_ns())

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()

    def _file(self, path: str) -> os.stat_result | None:
        try:
            return os.stat(os.path.join(self.root, path + MEMORY_SUFFIX))
        except (OSError, ValueError):
            return None

    def find(self, reference: str) -> str | None:
        """An indexed memory named by its exact path or its citation ID, else None (a name,
        a path to normalize: the service's `find` resolves those)."""
        if self.conn is None:
            return None
        if reference.startswith(("mem:", "[mem:")):
            bare = reference.removeprefix("[").removeprefix("mem:").removesuffix("]")
            if not bare.isalnum():
                return None
            path = quick.path_of_id(self.conn, bare)
        else:
            segments = reference.split("/")
            if reference.endswith(MEMORY_SUFFIX) or "\\" in reference:
                return None
            if not all(s and s == s.strip() and s not in (".", "..") for s in segments):
                return None
            path = reference
        if path is None or quick.memory_row(self.conn, path) is None:
            return None
        stat = self._file(path)
        return path if stat is not None and _regular(stat) else None

    def get(self, reference: str) -> Fetched | None:
        """A live memory, its citations and links, when its file is as indexed; its use
        is recorded (action `get`)."""
        path = self.find(reference)
        if path is None or self.conn is None:
            return None
        row = quick.memory_row(self.conn, path)
        stat = self._file(path)
        if row is None or stat is None:
            return None
        (memory_id, _, title, tags, fmt, created, updated, expires, source, cid, mtime, size,
         error, problems, content) = row  # fmt: skip
        if error is not None or problems or not cid or (mtime, size) != _stamp(stat):
            return None  # warnings to show, an ID to assign, a file to read again
        if expires is not None and str(expires) <= self.now_text:
            return None  # expired: the service says so
        links = quick.link_rows(self.conn, int(str(memory_id)))
        if any(link[3] in ("repository", "missing") for link in links):
            if self.repo_root is None:
                return None  # whether the file is there now: the repository's answer
            links = self._files_now(str(path), links)
        fetched = Fetched(
            str(path), str(title), str(tags), fmt, created, updated, expires, source, str(cid),
            quick.citation_rows(self.conn, int(str(memory_id))), links, str(content),
        )  # fmt: skip
        if not self.record_use([(fetched.citation_id, fetched.path)], "get"):
            return None
        return fetched

    def _files_now(self, path: str, links: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
        """The links to repository files checked now, as `Index.linked` checks them (files
        come and go since the memory was indexed): a stat or two each, where handing the
        memory to the service cost 0.2 s of CPU on rjmurillo/ai-agents' usage-mandatory."""
        from pathlib import Path

        from memory_enhancement.store.repofiles import RepoFiles

        assert self.repo_root is not None
        files = RepoFiles(Path(self.repo_root), Path(self.root))
        checked: list[tuple[object, ...]] = []
        for target, kind, line, status, resolved, candidates in links:
            if status in ("repository", "missing"):
                resolved = files.find(path, str(target))
                status = "repository" if resolved is not None else "missing"
            checked.append((target, kind, line, status, resolved, candidates))
        return checked

    def listing(self, limit: int | None) -> list[tuple[object, ...]] | None:
        """(path, title, tags, citation_id) of live memories, when none is unreadable."""
        if self.conn is None:
            return None
        rows, broken = quick.listing_rows(self.conn, self.now_text, limit)
        return None if broken else rows

    def related(self, reference: str) -> tuple[str, list[tuple[str, str, int | None]]] | None:
        """The memory and (source, type, line) of each link to it."""
        from memory_enhancement.graph.traverse import backlinks

        target = self.find(reference)
        if target is None or self.conn is None:
            return None
        return target, [(b.source, b.type, b.line) for b in backlinks(self.conn, target)]

    def graph(self, reference: str, depth: int) -> GraphResult | None:
        """The traversal `graph` shows by default: out along links, breadth first."""
        from memory_enhancement.graph.traverse import traverse

        root = self.find(reference)
        if root is None or self.conn is None:
            return None
        return traverse(self.conn, root, depth=depth)

    def search(self, query: str, limit: int = 10) -> list[tuple[str, str, str, str]] | None:
        """(citation ID, path, title, snippet) of what `search QUERY` finds in its default
        mode when that is lexical (no vectors in the index: see `quick.semantic_possible`),
        ranked by index/lexical.py as the service ranks; the use is recorded (action
        `search`, with the query). None for a query with no words (the service says so)."""
        from memory_enhancement.core.errors import InvalidInputError
        from memory_enhancement.index.columns import where_sql
        from memory_enhancement.index.lexical import ranked

        if self.conn is None or quick.semantic_possible(self.conn):
            return None
        where, args = where_sql(None, None, False, self.now_text)
        try:
            found = ranked(self.conn, query, where, args, limit)
        except InvalidInputError:
            return None
        hits = [(str(row[9]), str(row[0]), str(row[1]), snippet) for row, _, snippet in found]
        if not self.record_use([(cid, path) for cid, path, _, _ in hits], "search", query):
            return None
        return hits

    def record_use(
        self, used: Sequence[tuple[str, str]], action: str, query: str | None = None
    ) -> bool:
        """Record the use as index/usage.py does; False when the state database is missing,
        older, or fails (the service then repairs or migrates it)."""
        if not os.path.isfile(self.state_file):
            return False
        try:
            db = sqlite3.connect(self.state_file, timeout=30, isolation_level=None)
        except sqlite3.Error:
            return False
        try:
            db.execute("PRAGMA busy_timeout = 30000")
            if db.execute("PRAGMA user_version").fetchone()[0] != STATE_VERSION:
                return False
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT INTO usage(citation_id, path, session, used_at, action, query) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(cid, path, self.session, self.now_text, action, query) for cid, path in used],
            )
            db.execute("COMMIT")
            return True
        except sqlite3.Error:
            return False
        finally:
            db.close()


class Fetched:
    """A memory as `get` shows it, from its index rows."""

    __slots__ = (
        "citation_id", "citations", "content", "created", "expires", "format", "links",
        "path", "source", "tags", "title", "updated",
    )  # fmt: skip

    def __init__(
        self, path: str, title: str, tags: str, fmt: object, created: object, updated: object,
        expires: object, source: object, citation_id: str, citations: list[tuple[object, ...]],
        links: list[tuple[object, ...]], content: str,
    ) -> None:  # fmt: skip
        self.path, self.title, self.format = path, title, fmt
        self.tags = tags.split("\x1f") if tags else []
        self.created, self.updated, self.expires, self.source = created, updated, expires, source
        self.citation_id, self.citations, self.links, self.content = (
            citation_id, citations, links, content,
        )  # fmt: skip


def time_ns() -> int:
    return time.time_ns()


def now_text() -> str:
    """`core.timestamps.format_timestamp(now())` (UTC, to the millisecond), without
    importing `datetime` (see index/quick.py)."""
    seconds, ns = divmod(time.time_ns(), 1_000_000_000)
    t = time.gmtime(seconds)
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:"
        f"{t.tm_sec:02d}.{ns // 1_000_000:03d}Z"
    )


def _stamp(stat: os.stat_result) -> tuple[int, int]:
    return stat.st_mtime_ns, stat.st_size


def _regular(stat: os.stat_result) -> bool:
    import stat as kinds

    return kinds.S_ISREG(stat.st_mode)
