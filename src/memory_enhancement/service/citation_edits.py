"""Editing one memory's citations in place: add one, remove one, replace one.

Only the citations change (and `updated_at` when the memory keeps one), so a Serena
note that records no timestamps gains no Metadata section for them; the rest of the
file is left as written. Apart from memories.py, which holds the edits of a whole
memory these build on (`_to_change`, `_prepare`, `_edit`).
"""

from __future__ import annotations

from dataclasses import replace

from memory_enhancement.core.errors import NotFoundError
from memory_enhancement.core.model import Memory
from memory_enhancement.service.inputs import CitationInput, one_citation, same_ref
from memory_enhancement.service.memories import Memories
from memory_enhancement.service.results import WriteResult


class CitationEdits(Memories):
    """Add, remove and replace one citation of a memory."""

    def add_citation(
        self, path: str, ref: CitationInput, *, snippet: str | None = None
    ) -> WriteResult:
        """Append one citation, capturing its snippet from the code when none is given.

        Only the citations change, and `updated_at` when the memory keeps one: a
        Serena note that records no timestamps gains no Metadata section for it.
        """
        citation = one_citation(ref, snippet)
        target = self._to_change(path)

        def change(memory: Memory) -> tuple[Memory, list[str]]:
            existing = memory.meta.citations
            if any(c.ref == citation.ref and c.snippet == citation.snippet for c in existing):
                return memory, [f"citation {citation.ref} is already on {target}"]
            if citation.snippet is None and any(c.ref == citation.ref for c in existing):
                return memory, [f"citation {citation.ref} is already on {target}"]
            prepared, warnings = self._prepare([citation], ())
            meta = replace(memory.meta, citations=(*existing, *prepared))
            if meta.updated_at is not None:
                meta = replace(meta, updated_at=self.clock())
            return replace(memory, meta=meta), warnings

        return self._edit(target, change, touch=False)

    def remove_citation(self, path: str, ref: str) -> WriteResult:
        """Drop one citation (every citation with that reference); the others stay as written.

        `ref` is matched as written in the file or in canonical form (`src/x.py:3`,
        `src/x.py:17-25`, a URL); a reference the memory does not cite is an error
        that lists what it does cite.
        """
        target = self._to_change(path)

        def change(memory: Memory) -> tuple[Memory, list[str]]:
            existing = memory.meta.citations
            kept = tuple(c for c in existing if not same_ref(c.ref, ref))
            if len(kept) == len(existing):
                cited = ", ".join(c.ref for c in existing) or "none"
                raise NotFoundError(f"{target!r} does not cite {ref!r} (its citations: {cited})")
            meta = replace(memory.meta, citations=kept)
            if meta.updated_at is not None:
                meta = replace(meta, updated_at=self.clock())
            return replace(memory, meta=meta), []

        return self._edit(target, change, touch=False)

    def replace_citation(
        self, path: str, old: str, new: CitationInput, *, snippet: str | None = None
    ) -> WriteResult:
        """Replace one citation by another in its place; the others stay as written.
        The new one's snippet is captured from the code when none is given."""
        citation = one_citation(new, snippet)
        target = self._to_change(path)

        def change(memory: Memory) -> tuple[Memory, list[str]]:
            existing = memory.meta.citations
            where = [n for n, c in enumerate(existing) if same_ref(c.ref, old)]
            if not where:
                cited = ", ".join(c.ref for c in existing) or "none"
                raise NotFoundError(f"{target!r} does not cite {old!r} (its citations: {cited})")
            prepared, warnings = self._prepare([citation], ())
            kept = [c for n, c in enumerate(existing) if n not in where[1:]]
            kept[where[0]] = prepared[0]
            meta = replace(memory.meta, citations=tuple(kept))
            if meta.updated_at is not None:
                meta = replace(meta, updated_at=self.clock())
            return replace(memory, meta=meta), warnings

        return self._edit(target, change, touch=False)
