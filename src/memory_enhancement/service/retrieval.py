"""Reads that answer a question: search, prompt context, usage, graduation.

Search applies filters, verifies the hits just in time on request (seed 004
`search_with_verification`), and records which memories were handed to an
agent, in which session and for which query (seed 002 §5).

The default mode, `auto`, is hybrid when the semantic extra is installed and the
semantic index is current (`reindex --semantic`, or an earlier semantic search,
embedded the store; a few memories changed since are embedded on the way), and
lexical otherwise: a search never starts embedding a whole store unasked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.core.memory_paths import normalize_segment
from memory_enhancement.core.model import MAX_COUNT, Link, LinkKind
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.service.context import ContextBlock, SearchResult, render_context
from memory_enhancement.service.inputs import choice
from memory_enhancement.service.results import WriteResult
from memory_enhancement.service.verification import Verification

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memory_enhancement.core.verdicts import MemoryVerification
    from memory_enhancement.index.search import Filters, Mode
    from memory_enhancement.index.semantic import Progress
    from memory_enhancement.index.usage import Popular
    from memory_enhancement.service.memories import Memories


STALE_SLACK = 20  # memories changed since the last embedding that auto still embeds on the way


@dataclass(frozen=True)
class SemanticState:
    """Whether semantic search can answer now, for `auto` and for people asking."""

    available: bool  # the extra is installed
    model: str
    embedded: int  # memories with vectors of this model
    pending: int  # memories still to embed

    @property
    def current(self) -> bool:
        return self.available and self.embedded > 0 and self.pending <= STALE_SLACK


class Retrieval(Verification):
    """Search, context for a prompt, usage statistics and graduation to the global store."""

    def semantic_state(self) -> SemanticState:
        from memory_enhancement.index.embedder import DEFAULT_MODEL, available

        model = self.semantic_model or DEFAULT_MODEL
        if not available():
            return SemanticState(False, model, 0, 0)
        from memory_enhancement.index.embedder import embedder
        from memory_enhancement.index.semantic import pending

        with self.index.connect() as conn:
            embedded, todo = pending(conn, embedder(model).name)
        return SemanticState(True, model, embedded, todo)

    def resolve_mode(self, mode: Mode | str) -> Mode:
        """The mode a search in `mode` runs in: `auto` becomes hybrid or lexical."""
        from memory_enhancement.index.search import Mode

        chosen = choice(Mode, mode, "search mode")
        if chosen is not Mode.AUTO:
            return chosen
        return Mode.HYBRID if self.semantic_state().current else Mode.LEXICAL

    def embed(self, progress: Progress | None = None) -> int:
        """Embed every memory not embedded yet (`reindex --semantic`); return how many."""
        from memory_enhancement.index.embedder import DEFAULT_MODEL, embedder
        from memory_enhancement.index.semantic import refresh

        model = embedder(self.semantic_model or DEFAULT_MODEL)
        with self.index.connect() as conn:
            return refresh(conn, model, progress)

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        mode: Mode | str = "auto",
        category: str | None = None,
        tag: str | None = None,
        include_expired: bool = False,
        verify: bool = False,
        min_confidence: float | None = None,
        min_holding: float | None = None,
        progress: Progress | None = None,
    ) -> list[SearchResult]:
        """`progress` hears how embedding goes when a semantic search must embed first.

        A verified hit carries its confidence, the figure `health` shows (history
        included: 0.70 for a memory verified valid now that nobody confirmed or used);
        `min_confidence` drops the hits below it, `min_holding` those whose share of
        citations holding now is lower (1.0: every citation holds)."""
        from memory_enhancement.index.search import Filters

        filters = Filters(self._category(category), tag, include_expired)
        floors = _Floors(min_confidence, min_holding)
        return self._run_search(
            query, limit=limit, mode=self.resolve_mode(mode), filters=filters,
            verify=verify, floors=floors, progress=progress,
        )  # fmt: skip

    def context(
        self,
        query: str,
        *,
        limit: int = 5,
        max_tokens: int | None = 2000,
        verify: bool = False,
        mode: Mode | str = "auto",
        progress: Progress | None = None,
    ) -> ContextBlock:
        """A prompt-ready markdown block of the memories that answer a query (and how many
        matched it)."""
        from memory_enhancement.index.search import Filters

        results = self._run_search(
            query, limit=limit, mode=self.resolve_mode(mode), filters=Filters(),
            verify=verify, action=None, progress=progress,
        )  # fmt: skip
        text, used = render_context(self.store, results, max_tokens, query)
        handed = [(r.hit.row.citation_id, r.hit.row.path) for r in used]
        self._record_use(handed, "context", query)
        return ContextBlock(text, used, len(results))

    def _run_search(
        self,
        query: str,
        *,
        limit: int,
        mode: Mode,
        filters: Filters,
        verify: bool = False,
        floors: _Floors | None = None,
        action: str | None = "search",
        progress: Progress | None = None,
    ) -> list[SearchResult]:
        """Search, verify the hits just in time if asked, and record their use (unless
        action=None)."""
        from memory_enhancement.index.search import Filters, Mode, search

        floors = floors or _Floors()
        floors.check()
        # A floor can only be applied to verified hits: asking for one implies
        # verification, rather than silently returning stale hits the caller meant to drop.
        verify = verify or floors.any
        now_text = format_timestamp(self.clock())
        filters = Filters(filters.category, filters.tag, filters.include_expired, now_text)
        ranker = None
        if mode is Mode.AUTO:
            mode = self.resolve_mode(mode)
        if mode is not Mode.LEXICAL:
            from memory_enhancement.index.hybrid import ranker as semantic_ranker
            from memory_enhancement.index.semantic import DEFAULT_MODEL

            ranker = semantic_ranker(self.semantic_model or DEFAULT_MODEL, progress)
        fetch = limit * 3 if floors.any else limit
        with self.index.connect() as conn:
            hits = search(conn, query, filters, limit=fetch, mode=mode, semantic=ranker)
        results = [SearchResult(hit, expired=hit.row.expired(filters.now)) for hit in hits]
        if verify and results:
            from memory_enhancement.core.verdicts import VerifyOptions

            run = self._verify_paths([r.hit.row.path for r in results], VerifyOptions())
            results = self._judged(results, run.results)
            results = [r for r in results if floors.keeps(r)]
        results = results[:limit]
        if action:
            used = [(r.hit.row.citation_id, r.hit.row.path) for r in results]
            self._record_use(used, action, query)
        return results

    def _judged(
        self, results: list[SearchResult], verified: Iterable[MemoryVerification]
    ) -> list[SearchResult]:
        """Each hit with its verdicts and its confidence, computed as `health` computes it
        (this verification is already in the history it reads)."""
        from memory_enhancement.verify import confidence, history

        by_path = {v.path: v for v in verified}
        facts = history.evidence(self.state, [r.hit.row.citation_id for r in results])
        now = self.clock()
        judged = []
        for result in results:
            verification = by_path.get(result.hit.row.path)  # none: nothing to verify
            checks = verification.everything if verification is not None else ()
            evidence = facts.get(result.hit.row.citation_id, history.Evidence())
            score = confidence.of_checks(checks, evidence, now).score
            judged.append(replace(result, verification=verification, confidence=score))
        return judged

    # -- usage ------------------------------------------------------------------

    def popular(self, limit: int = 10) -> list[Popular]:
        from memory_enhancement.index.usage import popular

        return popular(self.state, self.index, limit)

    def graduation_candidates(self, min_uses: int = 5, limit: int = 50) -> list[Popular]:
        """Memories used often enough to deserve a place in the global store (seed 002 §5.3)."""
        from memory_enhancement.index.usage import popular

        if min_uses < 1:
            raise InvalidInputError(f"invalid min_uses {min_uses}: it must be at least 1")
        min_uses = min(min_uses, MAX_COUNT)
        with self.index.connect() as conn:
            # Already graduated (it links to its copy), or itself a graduated copy.
            done = {
                str(row[0])
                for row in conn.execute(
                    "SELECT DISTINCT m.path FROM links l JOIN memories m ON m.id = l.memory_id "
                    "WHERE l.type IN ('graduated_to', 'graduated_from')"
                )
            }
        return [
            p
            for p in popular(self.state, self.index, limit, min_uses)
            if p.path is not None and p.path not in done
        ]

    def graduate(self, path: str, target: Memories) -> WriteResult:
        """Copy a memory into another store (the global one), linking the two.

        URL citations travel with it. File citations travel only into a store inside
        this repository: anywhere else (the global store) nothing could verify them,
        so they are dropped, and the result's warnings name each one.
        """
        from memory_enhancement.service import claude  # only writes and Claude folders need it

        if target.store.root == self.store.root:
            raise InvalidInputError("cannot graduate a memory into its own store")
        # action=None: reading the memory to copy it is not an agent using it (seed 002 §5).
        found = self.find(path)  # a path, a [mem:ID] as `stats graduation` shows, or a name
        claude.refuse_index_edit(self.store, found, "graduated")  # it would be linked back
        # Read strictly first: `get` shows a memory whose header does not parse as its text,
        # and copying that would drop its header, then fail to link back (BrokenHeaderError
        # now, before anything is written).
        read = self.store.read(found, links=False)
        source = self.get(found, include_expired=True, action=None).memory
        citations = source.meta.citations
        warnings: list[str] = []
        if not _inside(target.store.root, self.repo.root):
            files = [c for c in citations if not c.is_url]
            citations = tuple(c for c in citations if c.is_url)
            if files:
                refs = ", ".join(c.ref for c in files)
                warnings.append(
                    f"dropped {len(files)} file citation{'s' * (len(files) != 1)} ({refs}): "
                    f"the {target.store.name} store is outside this repository, where nothing "
                    f"could verify them; they stay on {self.store.name}:{source.path}"
                )
        link_back = Link(f"{self.store.name}:{source.path}", "graduated_from", LinkKind.TYPED)
        path = source.path
        if "/" not in path and not target.takes_bare_names():
            # A Serena memory has no category; the global store wants one: its project's.
            path = f"{normalize_segment(self.repo.root.resolve().name) or 'project'}/{path}"
        result = target.add(
            path, source.content, tags=source.meta.tags, expires_at=source.meta.expires_at,
            citations=citations, links=[link_back], source="graduate",
            like=read.decoded.for_copy(),  # its line ending and BOM
        )  # fmt: skip
        link_out = Link(f"{target.store.name}:{result.path}", "graduated_to", LinkKind.TYPED)
        self.add_links(source.path, [link_out])
        return replace(result, warnings=(*warnings, *result.warnings))


def _inside(folder: Path, root: Path) -> bool:
    """Whether folder is root or under it (both resolved)."""
    return folder.resolve().is_relative_to(root.resolve())


@dataclass(frozen=True)
class _Floors:
    """The floors a search's verified hits must reach: their confidence (health's
    figure) and their holding (the share of their citations valid or moved now)."""

    confidence: float | None = None
    holding: float | None = None

    @property
    def any(self) -> bool:
        return bool(self.confidence) or bool(self.holding)

    def check(self) -> None:
        for name, floor in (("min_confidence", self.confidence), ("min_holding", self.holding)):
            if floor is not None and not 0 <= floor <= 1:
                raise InvalidInputError(f"invalid {name} {floor}: use a value in [0, 1]")

    def keeps(self, result: SearchResult) -> bool:
        """A hit with nothing to check is below any floor: a memory without citations
        (or with only unchecked URLs) has shown nothing, zero citations is not "all valid"."""
        verification = result.verification
        holding = verification.holding if verification is not None else None
        if holding is None:
            return not self.any
        if self.holding and holding < self.holding:
            return False
        return not self.confidence or (result.confidence or 0.0) >= self.confidence
