"""Prompt context: the memories that answer a query, quoted in one markdown block.

Seed 002 §3.3: each memory is quoted, then `[mem:ID] - date, path`, so an agent
can cite what it relies on. With verification, a memory whose citations failed
is flagged rather than served as truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.core.ids import format_citation_id
from memory_enhancement.core.verdicts import failing_marks
from memory_enhancement.index import cjk
from memory_enhancement.store.disk import Store

if TYPE_CHECKING:
    from memory_enhancement.core.verdicts import MemoryVerification
    from memory_enhancement.index.search import Hit

CHARS_PER_TOKEN = 4  # the estimate Cortex uses, for text in Latin script
# A Chinese, Japanese or Korean character is about a token of its own (often more) in the
# tokenizers models use, so chars / 4 would let a CJK memory overrun the budget four
# times over: such a character counts as a whole token.


def size(text: str) -> int:
    """A text's length in quarter tokens: its characters, a CJK one counting four."""
    return len(text) + (CHARS_PER_TOKEN - 1) * cjk.characters(text)


@dataclass(frozen=True)
class SearchResult:
    hit: Hit
    verification: MemoryVerification | None = None
    expired: bool = False  # by the service's clock; only --include-expired returns such hits
    confidence: float | None = None  # hits of a verified search: health's figure

    @property
    def citation_id(self) -> str:
        return format_citation_id(self.hit.row.citation_id)


class ContextBlock(tuple[str, list[SearchResult]]):
    """`(text, used)`, as `context` returns it, and how many memories matched the query:
    an empty block says either that none matched or that none fit the budget, and a
    person at a terminal is told which."""

    matched: int

    def __new__(cls, text: str, used: list[SearchResult], matched: int) -> ContextBlock:
        block = super().__new__(cls, (text, used))
        block.matched = matched
        return block


def render_context(
    store: Store, results: Sequence[SearchResult], max_tokens: int | None, query: str = ""
) -> tuple[str, list[SearchResult]]:
    """A markdown block for a prompt: each memory quoted, then `[mem:ID] - date, path`.

    With verification, a memory whose citations failed is flagged, not served as
    truth. Memories are added whole while they fit the token budget (chars / 4, a
    Chinese, Japanese or Korean character one token);
    a first memory too long for the budget alone is cut, and says so: from the section
    that holds more of the query's words than its beginning does, if one does (its
    title kept), else from the top. The cut is
    measured on the quoted block (each line gains `> `), so the budget holds; a
    budget too small for even one memory's citation line gives an empty block.
    """
    if max_tokens is not None and max_tokens < 1:
        raise InvalidInputError(f"invalid max_tokens {max_tokens}: it must be at least 1")
    budget = None if max_tokens is None else max_tokens * CHARS_PER_TOKEN
    blocks: list[str] = []
    used: list[SearchResult] = []
    used_size = 0
    for result in results:
        # Lenient: search finds a memory whose header does not parse by its text (formats.md).
        memory = store.read(result.hit.row.path, links=False, lenient=True).doc.memory
        block = _block(memory.content, result)
        if budget is not None and used_size + size(block) > budget:
            if blocks:
                break
            cut = _cut_to_fit(_from_best_section(memory.content, query), result, budget)
            if cut is None:
                break
            block = cut
        blocks.append(block)
        used.append(result)
        used_size += size(block) + 1
    return "\n".join(blocks), used


def _from_best_section(content: str, query: str) -> str:
    """content from the section holding the most different words of the query, when that
    is more than its first section holds: the title, a mark of what is left out, then
    that section on. A 22 KB plan (AstarWorks/AstarManagement) otherwise spent the whole
    budget on the directory tree at its top, far from the `## リスク管理` asked about."""
    from memory_enhancement.store.formats.markdown import headings

    words = {w.lower() for w in cjk.needles(query)}
    lines = content.split("\n")
    heads = [i for i, _, _ in headings(lines)]
    starts = [0, *(i for i in heads if i > 0)]
    if not words or len(starts) < 2:
        return content

    def held(first: int, end: int) -> int:
        text = cjk.composed("\n".join(lines[first:end])).lower()
        return sum(w in text for w in words)

    scores = [held(a, b) for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]
    best = max(range(len(starts)), key=lambda k: (scores[k], -k))
    title = [lines[0], ""] if heads[0] == 0 else []
    skipped = lines[len(title[:1]) : starts[best]]
    if scores[best] <= scores[0] or not any(line.strip() for line in skipped):
        return content
    return "\n".join([*title, "[…]", "", *lines[starts[best] :]])


def _cut_to_fit(content: str, result: SearchResult, budget: int) -> str | None:
    """The longest block of a prefix of content, marked as truncated, within budget."""

    def cut(chars: int) -> str:
        return _block(_closed(content[:chars].rstrip()) + "\n[… truncated to fit]", result)

    if size(cut(0)) > budget:
        return None
    low, high = 0, len(content)  # cut(low) fits; find the largest such prefix
    while low < high:
        middle = (low + high + 1) // 2
        if size(cut(middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    return cut(low)


def _closed(prefix: str) -> str:
    """prefix, with the code fence it ends inside closed: cut inside a fence, the
    truncation note and everything after it in the prompt would read as code."""
    from memory_enhancement.store.formats.markdown import open_fence

    fence = open_fence(prefix.split("\n"))
    return f"{prefix}\n{fence}" if fence else prefix


def _block(content: str, result: SearchResult) -> str:
    row = result.hit.row
    day = (row.updated_at or row.created_at or "")[:10]
    quoted = "\n".join(f"> {line}" if line else ">" for line in content.splitlines())
    footer = f"> {format_citation_id(row.citation_id)} - {day + ', ' if day else ''}{row.path}"
    verification = result.verification
    if verification is not None and verification.everything:  # prose mentions are citations
        state = _verdict_note(verification, result.confidence)
        footer += f" ({state})"
        if not verification.valid:
            quoted = (
                f"> **Warning: stale memory, check before relying on it.** {state}\n>\n{quoted}"
            )
    return f"{quoted}\n>\n{footer}\n"


def _verdict_note(verification: MemoryVerification, confidence: float | None) -> str:
    """What verification says, with the memory's confidence (health's figure: the
    failing citations are already counted apart, the share of them is not repeated)."""
    share = "" if confidence is None else f", confidence {confidence:.2f}"
    checks = verification.everything
    if verification.valid:
        moved = sum(c.status.value == "moved" for c in checks)
        return f"verified{share}" + (f", {moved} citation(s) moved" if moved else "")
    failing = [c for c in checks if c.status.failing]
    what = "citations and mentions" if verification.mentions else "citations"
    marks = failing_marks(checks)  # verify's words: MISSING, not STALE, for a file gone
    return f"{marks}: {len(failing)} of {len(checks)} {what} fail{share}"
