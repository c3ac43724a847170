"""What every operation of the service works with: the store, the code, the index, the state.

The service is split by kind of operation (memories, verification, retrieval,
the graph, health), one class per module, each building on this one. Every
subsystem below gets from here the collaborators it needs, passed explicitly;
none of them sees the service.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memory_enhancement.core.ids import ID_LENGTH
from memory_enhancement.core.memory_paths import normalize_category
from memory_enhancement.core.model import Citation, Memory
from memory_enhancement.core.timestamps import format_timestamp, now
from memory_enhancement.index.index import Index
from memory_enhancement.service.inputs import prepare_citations
from memory_enhancement.service.results import WriteResult
from memory_enhancement.store import names
from memory_enhancement.store.disk import Loaded, Store
from memory_enhancement.store.repofiles import RepoFiles
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository

if TYPE_CHECKING:
    from memory_enhancement.verify.git import Git


class ServiceBase:
    """Operations on one store, citing code in one repository."""

    def __init__(
        self,
        store: Store,
        repo: Repository,
        *,
        index_path: Path | None = None,
        index: Index | None = None,
        state: State | None = None,
        session: str = "cli",
        semantic_model: str | None = None,
        id_length: int = ID_LENGTH,
        clock: Callable[[], datetime] = now,
    ) -> None:
        """`index_path=None` keeps the index in memory (tests, one-off use); `state=None` too;
        `semantic_model=None` is the model the semantic extra bundles.

        A long-running process passes the same `index` and `state` to every service
        it makes, so their connections stay open between calls.
        """
        self.store = store
        self.repo = repo
        self.clock = clock
        self.session = session
        self.state = state or State(None)
        files = RepoFiles(repo.root, store.root)
        self.index = index or Index(store, index_path, self.state, id_length=id_length, repo=files)
        self.semantic_model = semantic_model

    @cached_property
    def git(self) -> Git | None:
        """The git repository around the cited code, found once per service."""
        from memory_enhancement.verify.git import Git

        return Git.discover(self.repo.root)

    # -- helpers shared by the operations ------------------------------------------

    def _record_use(self, used: Sequence[tuple[str, str]], action: str, query: str | None) -> None:
        """Remember that these memories (citation ID, path) were handed to an agent."""
        from memory_enhancement.index.usage import record_use

        record_use(
            self.state, used, action=action, query=query, session=self.session,
            moment=self.clock(),
        )  # fmt: skip

    def _category(self, category: str | None) -> str | None:
        """A category filter as typed, spelled as its folder is on disk when that is
        another Unicode form (a Mac's decomposed `설계/`, see store.names), or when no
        folder is spelled so, another case: `add NOTES/x` goes into `notes/` (one folder
        on a case-insensitive file system), and names keep their case now, so `list
        decisions` finds the `Decisions/` that `add "Decisions/API"` made."""
        if not category:
            return None
        prefix = normalize_category(category)
        root = self.store.root
        return (
            names.spelled_otherwise(root, prefix, category=True)
            or names.spelled_otherwise(root, prefix, category=True, fold=True)
            or prefix
        )

    def _prepare(
        self, wanted: Sequence[Citation], existing: Sequence[Citation]
    ) -> tuple[list[Citation], list[str]]:
        return prepare_citations(self.repo, format_timestamp(self.clock()), wanted, existing)

    def _edit(
        self,
        target: str,
        change: Callable[[Memory], tuple[Memory, list[str]]],
        *,
        touch: bool,
    ) -> WriteResult:
        """Read, change and write one memory under the lock; skip the write if nothing changed."""
        with self.store.lock():
            loaded = self.store.read(target)
            memory, warnings = change(loaded.doc.memory)
            changed = memory != loaded.doc.memory
            if changed:
                if touch:
                    memory = replace(memory, meta=replace(memory.meta, updated_at=self.clock()))
                self._write(loaded, memory)
        written = self._written(target, warnings, changed=changed)
        return replace(written, before=loaded.doc.memory)

    def _write(self, loaded: Loaded, memory: Memory) -> None:
        from memory_enhancement.store import formats

        fmt = formats.by_name(loaded.doc.memory.format)
        text = fmt.render(loaded.doc, memory)
        if text != loaded.decoded.text:
            self.store.replace(loaded.path, loaded.decoded.encode(text), loaded)

    def _written(
        self, target: str, warnings: Sequence[str], *, changed: bool = True
    ) -> WriteResult:
        """The memory as now on disk, its links as `get` reports them: those the index
        resolved, not the list items and names the parser only offered as candidates
        (a Serena note's `1. **Step**: ...` lines are candidates that name nothing)."""
        loaded = self.store.read(target)
        problems = [*warnings, *loaded.doc.problems]
        citation_id = self.index.citation_id(target, loaded)
        linked = self.index.linked(target, sync=False)  # what it wrote is indexed
        between = tuple(link for link, found in linked if not found.status.to_file)
        memory = replace(loaded.doc.memory, links=between)
        return WriteResult(target, memory, changed, tuple(problems), citation_id, linked=linked)

    def _declare_id(self, path: str) -> None:
        """Write the memory's citation ID into its file, so the ID survives the move."""
        citation_id = self.index.citation_id(path)
        loaded = self.store.read(path)
        memory = loaded.doc.memory
        if memory.meta.citation_id != citation_id:
            declared = replace(memory, meta=replace(memory.meta, citation_id=citation_id))
            self._write(loaded, declared)
