"""What the MCP tools that write answer: what the write did, not the memory again.

Until session 33 each of them (add_memory, update_memory, move_memory, add_citation)
answered the whole memory as get_memory does: on rjmurillo/ai-agents' store an agent that
changed one line of its largest memory read 31,248 characters back.
The agent wrote the content (or the line); what it cannot know is what the write made of
it. So a write answers the memory's identity (path, id, title, format) and metadata
(timestamps, tags, expiry, the citations' refs: what seed 003's scenarios read), its
size, a diff of the content when an edit changed it, the citations the write captured
(their snippets and warnings are the verdict at write time), the links it added, and
`read`, the call that gives the whole memory. The CLI's `--json` still prints the memory.
"""

from __future__ import annotations

import difflib
from typing import Any

from memory_enhancement.mcp.answers import shorten, snippets_note, with_cut

# A diff an agent reads back: the hunks of a one-line fix are four or five lines; a whole
# content replaced is bounded, `read` gives the rest.
DIFF_LINES = 40
DIFF_CHARS = 4000
# The citations a write captured, listed: an add with many lists the first ones.
WRITTEN_CITATIONS = 10
ADDED_LINKS = 25


def written_answer(
    result: Any, *, store: str | None, new: bool = False, checked: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A `WriteResult` as a write tool answers it. `new`: the memory did not exist before
    (every citation and link it has, it got now); `checked`: the memory's
    `verification_dict` after the write, when the agent asked to verify it."""
    from memory_enhancement.service import serialize

    memory, before = result.memory, result.before
    whole = serialize.memory_dict(memory, result.citation_id, result.linked)
    data: dict[str, Any] = {
        "path": whole["path"],
        "id": whole["id"],
        "title": whole["title"],
        "format": whole["format"],
        "changed": result.changed,
        "metadata": whole["metadata"],
        "size": {
            "chars": len(memory.content),
            "lines": len(memory.content.splitlines()),
            "chars_before": None if before is None else len(before.content),
        },
    }
    if whole["extra"]:  # what the tool wrote but does not interpret: a Claude memory's type
        data["extra"] = whole["extra"]
    notes: list[str | None] = []
    if before is not None and before.content != memory.content:
        data["diff"], note = content_diff(before.content, memory.content)
        notes.append(note)
    old_citations = () if before is None else before.meta.citations
    captured = [
        serialize.citation_dict(c)
        for c in memory.meta.citations
        if (new or before is not None) and c not in old_citations
    ]
    if len(captured) > WRITTEN_CITATIONS:
        notes.append(
            f"listed the first {WRITTEN_CITATIONS} of the {len(captured)} citations it "
            "captured (metadata.citations names them all; get_memory lists each)"
        )
    data["citations_written"] = captured[:WRITTEN_CITATIONS]
    notes.append(snippets_note(shorten(data["citations_written"])))
    old_links = set() if before is None else {(x.target, x.type) for x in before.links or ()}
    added = [  # with what each finds: an agent learns at once that a link it wrote dangles
        serialize.linked_dict(link, found)
        for link, found in result.linked
        if not found.status.to_file
        and (new or before is not None)
        and (link.target, link.type) not in old_links
    ]
    if len(added) > ADDED_LINKS:
        notes.append(f"listed the first {ADDED_LINKS} of the {len(added)} links it added")
    data["links_added"] = added[:ADDED_LINKS]
    if checked is not None:
        wrote = memory.content if new or before is None else _added_lines(before, memory)
        notes.append(_touched_checks(data, checked, wrote))
    if result.warnings:
        data["warnings"] = list(result.warnings)
    in_store = f", store={store!r}" if store else ""
    data["read"] = f"get_memory(path={memory.path!r}{in_store}) gives the whole memory"
    return with_cut(data, notes)


def content_diff(before: str, after: str) -> tuple[str, str | None]:
    """A unified diff of the content (one line of context, hunks numbered by line) and,
    when it ran past DIFF_LINES lines or DIFF_CHARS characters, the note saying so."""
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=1))[
        2:
    ]  # the ---/+++ header names no file here
    text = "\n".join(lines[:DIFF_LINES])
    if len(lines) <= DIFF_LINES and len(text) <= DIFF_CHARS:
        return text, None
    text = text[:DIFF_CHARS].rstrip() + "…"
    return text, (
        f"the diff is cut to its start ({len(lines)} lines; the first {DIFF_LINES} lines or "
        f"{DIFF_CHARS} characters are shown): `read` gives the memory whole"
    )


def _added_lines(before: Any, after: Any) -> str:
    diff = difflib.unified_diff(
        before.content.splitlines(), after.content.splitlines(), lineterm="", n=0
    )
    return "\n".join(line[1:] for line in list(diff)[2:] if line.startswith("+"))


def _touched_checks(data: dict[str, Any], checked: dict[str, Any], added: str) -> str | None:
    """Keep in `data` the verdicts of what this write touched: the citations it captured
    (`citation_checks`) and the prose mentions written on the lines it added
    (`mention_checks`), at most MEMORY_CHECKS, failed and moved first; `valid`, the whole
    memory's verdict, and `failing`, how many of its checks fail (what is left to fix).
    The note when some were left out."""
    from memory_enhancement.mcp.checks import MEMORY_CHECKS, bound_checks

    captured = {(c["path"], c["line"], c["end_line"]) for c in data["citations_written"]}
    entry = {
        **checked,
        "citations": [
            c for c in checked["citations"] if (c["path"], c["line"], c["end_line"]) in captured
        ],
        "mentions": [
            m for m in checked.get("mentions", ()) if m["mention"] and m["mention"] in added
        ],
    }
    total, shown = bound_checks(entry, limit=MEMORY_CHECKS, offset=0)
    data["valid"] = checked["valid"]
    data["failing"] = len(checked["stale_citations"])  # each failing check, before bounding
    data["citation_checks"] = entry["citations"]
    data["mention_checks"] = entry["mentions"]
    notes = [
        f"listed {shown} of the {total} checks of what it wrote, failed and moved first "
        "(verify_memory lists them all)"
        if shown < total
        else None,
        snippets_note(shorten([*entry["citations"], *entry["mentions"]])),
    ]
    return "; ".join(note for note in notes if note) or None
