"""What the MCP tools that answer about a whole store return: what an agent needs first,
and a `cut` note saying what was left out and which argument brings it.

Agents read every answer into their context window. On rjmurillo/ai-agents' store (1,026
memories, with its git history) `verify_memories` was 113,886 characters (49 invalid
memories, each with every citation and mention that held), `memory_health` 66,149 (50
ranked memories, the graph the HTML report draws, 90 days of history) and
`traverse_graph` from its `memory-index` 552,893 at the default depth (from README with
`direction="both"`, 50 memories and the 157 links among them were still 40,542: hence 25).
Each answer keeps its fields and their meaning (a client written against the full answer
still reads this one); only how many entries a list holds changes, and `cut` says so.
A snippet is the one field cut short: a citation of a range holds every line of it
(filter_mate's `modules/tasks/layer_management_task.py:814-926` was 6,365 characters of
the 50,072 `verify_memories` answered; a 200-line citation added over MCP, 7,000 in each
answer that echoed the memory). Session 32 bounded what grows with one memory: its
checks (`mcp/checks.py`; filter_mate's `verify_memories` 41,945 -> 16,964 characters,
`search_memories(verify=true)` 83,008 -> 19,718), its links (ai-agents' `memory-index`,
47,068 -> 31,061 in `get_memory`) and its problems in `memory_health`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.exceptions import ToolError

from memory_enhancement.mcp.checks import (
    HIT_CHECKS,
    acted_on_left_out,
    bound_checks,
    cap_note,
    held_left_out,
)

if TYPE_CHECKING:
    from memory_enhancement.core.verdicts import MemoryVerification, VerifyRun


# The checks run before the tool asks the service anything, once: a page asked for
# wrongly is the agent's mistake, not a reason to verify the whole store and record the
# run. The answers below take arguments the tool has checked.


def check_offset(offset: int) -> None:
    if offset < 0:
        raise ToolError(f"invalid offset {offset}: it must be 0 or more")


def check_page(limit: int, offset: int = 0, name: str = "limit") -> None:
    if limit < 1:
        raise ToolError(f"invalid {name} {limit}: it must be at least 1")
    check_offset(offset)


def check_health(limit: int, offset: int, history_days: int) -> None:
    if limit < 1:
        raise ToolError(f"limit must be at least 1, not {limit}")
    check_offset(offset)
    if history_days < 0:
        raise ToolError(f"invalid history_days {history_days}: it must be 0 or more")


# A snippet identifies the cited text; its first lines do that. Longer ones end in "…".
SNIPPET_CHARS = 300
SNIPPET_LINES = 5


def short_snippets(data: dict[str, Any]) -> dict[str, Any]:
    """data (a memory, a verification, or a memory with its `verification`) with every
    citation's and mention's snippet cut short, and a `cut` note when one was."""
    entries = [*data.get("citations", ()), *data.get("mentions", ())]
    verification = data.get("verification")
    if verification:
        entries += [*verification.get("citations", ()), *verification.get("mentions", ())]
    return with_cut(data, [data.pop("cut", None), snippets_note(shorten(entries))])


# A memory's links listed in an answer: its content names every one of them.
MEMORY_LINKS = 25


def memory_answer(data: dict[str, Any]) -> dict[str, Any]:
    """A memory (`memory_dict`, perhaps with its `verification`) as an answer holds it: its
    snippets cut short, and its first MEMORY_LINKS links, in the order written. An index
    memory links to everything: rjmurillo/ai-agents' `memory-index` listed 188 links,
    18,528 of its 47,068 characters, each a target its content already names."""
    links = data["links"]
    note = None
    if len(links) > MEMORY_LINKS:
        data["links"] = links[:MEMORY_LINKS]
        note = (
            f"listed the first {MEMORY_LINKS} of its {len(links)} links (its content names "
            "them all; traverse_graph or related_memories follows them)"
        )
    return short_snippets(with_cut(data, [data.pop("cut", None), note]))


def shorten(entries: list[dict[str, Any]]) -> int:
    """Cut each entry's snippet to its first SNIPPET_LINES lines and SNIPPET_CHARS
    characters, ending in "…"; how many were cut."""
    cut = 0
    for entry in entries:
        snippet = entry.get("snippet")
        if snippet is None:
            continue
        short = "\n".join(snippet.split("\n")[:SNIPPET_LINES])[:SNIPPET_CHARS]
        if short != snippet:
            entry["snippet"] = short.rstrip() + "…"
            cut += 1
    return cut


def snippets_note(cut: int) -> str | None:
    if not cut:
        return None
    return (
        f"{cut} snippets longer than {SNIPPET_LINES} lines or {SNIPPET_CHARS} characters are "
        "cut to their start, ending in '…' (a citation's is whole in the memory file, "
        "memory://STORE/PATH; a mention's is the lines `line`-`end_line` of `path` at its "
        "`written_in` commit)"
    )


def page_note(
    what: str, offset: int, shown: int, total: int, order: str,
    then: str = "offset={offset} for the next",
) -> str | None:  # fmt: skip
    """`listed X 51-100 of 1026, ORDER: offset=100 for the next`, or None when nothing
    lies beyond this page (and nothing before it was skipped). `then` is what brings the
    next page, `{offset}` standing for its offset."""
    if total == 0 or (offset == 0 and shown >= total):
        return None
    if shown == 0:
        return f"offset {offset} is past the last of the {total} {what}"
    note = f"listed {what} {offset + 1}-{offset + shown} of {total}, {order}"
    if offset + shown < total:
        note += ": " + then.format(offset=offset + shown)
    return note


def with_cut(data: dict[str, Any], notes: list[str | None]) -> dict[str, Any]:
    said = [note for note in notes if note]
    if said:
        data["cut"] = "; ".join(said)
    return data


def verify_summary(
    run: VerifyRun, *, limit: int, offset: int, include_valid: bool, checks: int
) -> dict[str, Any]:
    """The run's counts, then its invalid memories, worst first (the lowest share of
    citations and mentions that hold), a page of them; each lists at most `checks` of what
    failed or moved (and, with `include_valid`, of what held), `left_out` counting the rest."""
    from memory_enhancement.core.verdicts import Verdict
    from memory_enhancement.service import serialize

    invalid = sorted((r for r in run.results if not r.valid), key=_worst_first)
    page = invalid[offset : offset + limit]
    entries = [serialize.verification_dict(r) for r in page]
    for entry in entries:
        bound_checks(entry, limit=checks, include_valid=include_valid)
    held = 0 if include_valid else sum(map(held_left_out, entries))
    capped = sum(1 for entry in entries if acted_on_left_out(entry))
    snippets_cut = shorten(
        [check for entry in entries for check in entry["citations"] + entry.get("mentions", [])]
    )
    data = {
        "memories": len(run.results),
        "citations": run.citations,
        "counts": {v.value: run.count(v) for v in Verdict},
        # Prose mentions fail memories too: without these, a store whose every
        # declared citation holds reads as all valid beside a list of invalid ones.
        "mentions": run.mentions,
        "mention_counts": {v.value: run.count_mentions(v) for v in Verdict},
        "valid": run.ok(),
        "invalid": entries,
        "invalid_total": len(invalid),
        "skipped": run.skipped,
        # Verified for their prose; their frontmatter (and any citation in it) unread.
        "unparsed_headers": [f"{path}: {why}" for path, _, why in run.headers],
    }
    return with_cut(
        data,
        [
            page_note("invalid memories", offset, len(page), len(invalid), "worst first"),
            f"the {held} citations and mentions of these memories that held or were not "
            "judged (skipped, ambiguous, in_submodule, unchecked) are left out "
            "(include_valid=true lists them)"
            if held
            else None,
            cap_note(capped, checks, "checks=N lists more; verify_memory pages through one"),
            snippets_note(snippets_cut),
        ],
    )


def checks_page(entry: dict[str, Any], *, limit: int, offset: int, then: str) -> str | None:
    """Keep in `entry` (a `verification_dict`) a page of its checks, those that failed or
    moved first; the note saying which page, or None when it holds them all. `then` is
    what brings the next page, `{offset}` standing for its offset."""
    total, shown = bound_checks(entry, limit=limit, offset=offset)
    return page_note("checks", offset, shown, total, "failed and moved first", then)


def listed(summary: dict[str, Any]) -> dict[str, Any]:
    """A memory's `summary_dict` without its fields that are null, empty, false or 0 (the
    title stays, even empty): on rjmurillo/ai-agents' Serena store (no dates, tags, source)
    they were 5,400 of a 12,353-character page of list_memories."""
    return {key: value for key, value in summary.items() if value or key == "title"}


def hits_answer(hits: list[dict[str, Any]]) -> str | None:
    """Bound each search hit's verification (with `verify`) as `verify_memories` bounds a
    memory's, cut its snippets, leave out its memory's empty fields (`listed`) and those the
    hit gives (id, path, title); the note saying what was cut, or None."""
    for hit in hits:
        hit["memory"] = {k: v for k, v in listed(hit["memory"]).items() if hit.get(k) != v}
    checked = [hit["verification"] for hit in hits if "verification" in hit]
    for entry in checked:
        bound_checks(entry, limit=HIT_CHECKS, include_valid=False)
    left_out = any(entry.get("left_out") for entry in checked)
    cut = shorten([c for entry in checked for c in entry["citations"] + entry.get("mentions", [])])
    notes = [
        "a hit's verification lists only the checks that failed or moved, at most "
        f"{HIT_CHECKS}; `left_out` counts the others by status (verify_memory lists them)"
        if left_out
        else None,
        snippets_note(cut),
    ]
    said = [note for note in notes if note]
    return "; ".join(said) if said else None


def _worst_first(result: MemoryVerification) -> tuple[float, str]:
    holding = result.holding
    return (0.0 if holding is None else holding, result.path)


def health_answer(
    report: Any, *, limit: int, offset: int, include_graph: bool, history_days: int
) -> dict[str, Any]:
    """A `HealthReport` as `health --format json` gives it, for a page of the ranked
    memories, the last `history_days` days of verdicts, and the link graph only when asked
    for (it is the HTML report's drawing: nodes and edges an agent rarely needs)."""
    from memory_enhancement.health.render import as_json

    data = as_json(report, limit, offset)
    notes = [
        page_note("memories", offset, len(data["memories"]), report.total, "most urgent first")
    ]
    # ui_system on filter_mate listed 22 problems (4,129 characters), each a failing check;
    # its `citations` and `mentions` count them all, verify_memory lists them.
    capped = [m for m in data["memories"] if len(m["problems"]) > HIT_CHECKS]
    for memory in capped:
        memory["problems"] = memory["problems"][:HIT_CHECKS]
    if capped:
        notes.append(
            f"{len(capped)} memories list only their first {HIT_CHECKS} problems (their "
            "`citations` and `mentions` count them all; verify_memory lists each)"
        )
    # Each entry's two 11-verdict dictionaries were mostly zeros (rjmurillo/ai-agents: 20
    # of 22 counts in a typical entry); the summary keeps every verdict, once.
    for memory in data["memories"]:
        memory["citations"] = nonzero(memory["citations"])
        memory["mentions"] = nonzero(memory["mentions"])
    days = data["history"]
    for day in days:
        day["counts"] = nonzero(day["counts"])
    if len(days) > history_days:
        data["history"] = days[len(days) - history_days :] if history_days else []
        notes.append(
            f"history holds the last {history_days} of {len(days)} days "
            f"(history_days={len(days)} for all)"
        )
    if not include_graph:
        graph = data.pop("graph")
        if graph["nodes"]:
            notes.append(
                f"the link graph around the worst memories ({len(graph['nodes'])} memories, "
                f"{len(graph['edges'])} links) is left out (include_graph=true adds it)"
            )
    skipped = data.pop("skipped")
    data["skipped"] = skipped  # last, as in the CLI's JSON
    return with_cut(data, notes)


def nonzero(counts: dict[str, int]) -> dict[str, int]:
    """The counts that are not 0 (a verdict left out counted none)."""
    return {verdict: n for verdict, n in counts.items() if n}


def graph_answer(result: Any, *, limit: int) -> dict[str, Any]:
    """A `GraphResult` as `graph --json` gives it, but of the `limit` memories nearest the
    root (the root first) and the links among them; `visited_count` and
    `max_depth_reached` still describe the whole traversal."""
    from memory_enhancement.graph.render import as_dict

    data = as_dict(result)
    notes: list[str | None] = []
    if len(result.depths) > limit:
        notes.append(_nearest(data, result, limit))
    cycles = data["cycles"]
    if len(cycles) > ANSWER_CYCLES:  # kqc-real/arsnova.eu: 9,100 of 25,236 characters
        data["cycles"] = cycles[:ANSWER_CYCLES]
        notes.append(
            f"listed {ANSWER_CYCLES} of the {len(cycles)} cycles among these memories "
            "(a smaller limit or depth has fewer)"
        )
    return with_cut(data, notes)


# The loops a traversal found, shown in an answer: a few show a store's memories link back.
ANSWER_CYCLES = 10


def _nearest(data: dict[str, Any], result: Any, limit: int) -> str:
    """Keep in `data` the `limit` memories nearest the root and the links among them; the
    note that says so."""
    kept = set(sorted(result.depths, key=result.depths.__getitem__)[:limit])
    data["nodes"] = {
        node: [other for other in linked if other in kept]
        for node, linked in result.nodes.items()
        if node in kept
    }
    data["edges"] = [e for e in data["edges"] if e["source"] in kept and e["target"] in kept]
    data["cycles"] = [cycle for cycle in result.cycles if kept.issuperset(cycle)]
    data["depths"] = {node: d for node, d in result.depths.items() if node in kept}
    data["dangling"] = [d for d in data["dangling"] if d["source"] in kept]
    return (
        f"listed the {limit} memories nearest {result.root} of the {len(result.depths)} "
        f"reached, and only the links among them (limit={len(result.depths)} lists all; "
        "a smaller depth, fewer)"
    )
