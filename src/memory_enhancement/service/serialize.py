"""The documented JSON shapes, shared by `--json` output and the MCP server.

Keeping them in one place is what makes the CLI and the server answer alike.
Timestamps are ISO 8601 UTC strings (`2026-01-31T12:00:00.000Z`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from json.encoder import encode_basestring as _str  # C; the encoder's own, ensure_ascii=False
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.batch_verdicts import BatchVerdicts
from memory_enhancement.core.links import Resolution
from memory_enhancement.core.model import Citation, Link, Memory
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.core.verdict_rows import (
    Recalled,
    encode_check,
    encode_mention,
    mention_json,
    verification_tail,
)
from memory_enhancement.service.results import Summary

if TYPE_CHECKING:
    from memory_enhancement.core.verdicts import CitationCheck, MemoryVerification, VerifyRun
    from memory_enhancement.service.context import SearchResult


def memory_dict(
    memory: Memory, citation_id: str = "", linked: Sequence[tuple[Link, Resolution]] = ()
) -> dict[str, Any]:
    """The documented JSON shape of a memory (`get --json`, MCP get_memory). With `linked`
    (what `get` fetched), `links` lists every link with what it finds now (`linked_dict`)."""
    meta = memory.meta
    return {
        "path": memory.path,
        "id": f"mem:{citation_id}" if citation_id else None,
        "content": memory.content,
        "metadata": {
            "created_at": _time(meta.created_at),
            "updated_at": _time(meta.updated_at),
            "tags": list(meta.tags),
            "source": meta.source,
            "expires_at": _time(meta.expires_at),
            "citations": [c.ref for c in meta.citations],
            # another tool's `keywords:`/`topics:`, filed as tags, never written (MemoryMeta)
            **({"keywords": list(meta.keywords)} if meta.keywords else {}),
        },
        "links": [linked_dict(*pair) for pair in linked]
        if linked
        else [link_dict(link) for link in memory.links or ()],
        "title": memory.title,
        "format": memory.format,
        "citations": [citation_dict(c) for c in meta.citations],
        "confidence": meta.confidence,
        "last_verified": _time(meta.last_verified),
        "extra": {k: _plain(v) for k, v in meta.extra.items()},
    }


def citation_dict(citation: Citation) -> dict[str, Any]:
    return {
        "ref": citation.ref,
        "kind": citation.kind.value,
        "path": None if citation.is_url else citation.target,
        "url": citation.target if citation.is_url else None,
        "line": citation.line,
        "end_line": citation.end_line,
        "snippet": citation.snippet,
        "verified": citation.verified,
    }


def link_dict(link: Link) -> dict[str, Any]:
    return {"target": link.target, "type": link.type, "kind": link.kind.value, "line": link.line}


def linked_dict(link: Link, found: Resolution) -> dict[str, Any]:
    """A link and what it finds, as `get` gives it: `status` in the words of `links`
    (resolved, dangling, ambiguous, external; repository or missing for a repository file),
    `resolved` the memory or repository path it finds, `candidates` an ambiguous one's."""
    return link_dict(link) | {
        "status": found.status.value,
        "resolved": found.target if found.status.value in _FOUND else None,
        "candidates": list(found.candidates),
    }


_FOUND = ("resolved", "repository", "external")  # a dangling or missing link finds nothing


def related_dict(memory: str, backlinks: Sequence[Any]) -> dict[str, Any]:
    """`related --json` / `related_memories`: each linking memory once, however often it
    links (`type` and `line` of its first link, `links` all of them)."""
    by_source: dict[str, list[Any]] = {}
    for backlink in backlinks:
        by_source.setdefault(backlink.source, []).append(backlink)
    return {
        "memory": memory,
        "related": [
            {
                "path": source,
                "type": found[0].type,
                "line": found[0].line,
                "links": [{"type": b.type, "line": b.line} for b in found],
            }
            for source, found in by_source.items()
        ],
    }


def summary_dict(summary: Summary) -> dict[str, Any]:
    meta = summary.meta
    return {
        "path": summary.path,
        "title": summary.title,
        "format": summary.format,
        "tags": list(meta.tags),
        "created_at": _time(meta.created_at),
        "updated_at": _time(meta.updated_at),
        "expires_at": _time(meta.expires_at),
        "expired": summary.expired,
        "source": meta.source,
        "citations": summary.citation_count,
        "id": f"mem:{summary.citation_id}" if summary.citation_id else None,
    }


def _time(moment: datetime | None) -> str | None:
    return format_timestamp(moment) if moment else None


def _plain(value: Any) -> Any:
    """YAML values made JSON-safe (dates become ISO strings)."""
    if isinstance(value, datetime):
        return format_timestamp(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def check_dict(check: CitationCheck) -> dict[str, Any]:
    """One citation's verdict: as written in the memory, then what verification found."""
    citation = check.citation
    return {
        "path": citation.target,
        "line": citation.line,
        "end_line": citation.end_line,
        "snippet": citation.snippet,
        "status": check.status._value_,  # not `.value`: a Python-level property, 30k times a run
        "current_path": check.current_path,
        "current_line": check.current_line,
        "reason": check.reason,
        "anchored": check.anchored,
        "renamed_to": check.renamed_to,
    }


def mention_dict(check: CitationCheck) -> dict[str, Any]:
    """A prose mention's verdict: a citation's (the path it resolved to, the snippet git
    gave from the commit that last changed its memory line), plus the mention as written,
    where it is in the memory file, that commit, and the files an ambiguous one names."""
    data = check_dict(check)
    mention = check.mention
    data.update(
        {
            "mention": mention.text if mention else None,
            "memory_line": mention.line if mention else None,
            "column": mention.column if mention else None,
            "form": mention.form if mention else None,
            "written_in": check.written_in,
            "candidates": list(check.candidates),
        }
    )
    return data


def verification_dict(result: MemoryVerification) -> dict[str, Any]:
    """The seed's verify result (`memory_id`, `valid`, `confidence`, `stale_citations`) and more.

    `confidence` is the seed's name for `holding` (the share of checked citations that
    hold now), kept for the seed's readers; `holding` says what it is. The confidence
    `health` and search show weighs history too (verify/confidence.py).

    The keys are the documented shape (issue 3): the seed's four, `citations`,
    and `mentions` only when prose mentions were found and checked (a failing
    mention is listed in `stale_citations` too: mentions are citations). Where
    the memory file is (for annotations) is the text formats' business, not this shape's.
    """
    failing = [c for c in result.everything if c.status.failing]
    data: dict[str, Any] = {
        "memory_id": result.path,
        "valid": result.valid,
        "confidence": result.confidence,
        "holding": result.holding,
        "stale_citations": [
            {"path": c.citation.target, "line": c.citation.line, "reason": c.reason}
            for c in failing
        ],
        "citations": [check_dict(c) for c in result.checks],
    }
    if result.mentions:
        data["mentions"] = [mention_dict(c) for c in result.mentions]
    return data


def verification_json(result: MemoryVerification, recalled: Recalled | None = None) -> str:
    """`verification_dict(result)` encoded as `json.JSONEncoder(ensure_ascii=False)` would,
    character for character, without building the dicts.

    `verify-all --json` prints 10,000 of these (30,000 citations); building the
    dicts and encoding them took a fifth of the run. A test checks that both
    give the same text for every verdict, so the shape stays defined once.
    `recalled`: the memory's mentions as a rerun kept them (`result` then holds its
    declared citations alone), written from those rows as they are.
    """
    checks = result.checks
    failing = [(c.citation.target, c.citation.line, c.reason) for c in checks if c.status.failing]
    statuses = [c.status._value_ for c in checks]
    mentions: list[str] = []
    if recalled is not None:
        failing += recalled.failing()
        statuses += recalled.statuses()
        wire = recalled.wire
        mentions = [wire] if wire else list(map(mention_json, recalled.checks, recalled.mentions))
    elif result.mentions:
        said = result.mentions
        failing += [
            (c.citation.target, c.citation.line, c.reason) for c in said if c.status.failing
        ]
        statuses += [c.status._value_ for c in said]
        encode = json.JSONEncoder(ensure_ascii=False).encode
        mentions = [
            encode(mention_dict(c))
            if c.mention is None
            else mention_json(encode_check(c), encode_mention(c.mention))
            for c in said
        ]
    citations = ", ".join(map(_check_json, checks))
    return _verification_text(result.path, failing, statuses, citations, ", ".join(mentions))


def _verification_text(
    path: str, failing: list[tuple[str, int | None, str]], statuses: list[str],
    citations: str, mentions: str,
) -> str:  # fmt: skip
    """`verification_json`'s text from its parts: the failing verdicts, every status, and
    the citations' and the mentions' JSON, each joined by ", " ("": none)."""
    return _memory_text(path, verification_tail(failing, statuses, citations), mentions)


def _memory_text(path: str, tail: str, mentions: str) -> str:
    """A memory's verification JSON from its `verification_tail` and its mentions' JSON."""
    if mentions:
        return f'{{"memory_id": {_str(path)}{tail}, "mentions": [{mentions}]}}'
    return f'{{"memory_id": {_str(path)}{tail}}}'


def run_verifications(run: VerifyRun) -> list[dict[str, Any]]:
    """`verification_dict` of each memory a run verified, with the fix made to it (`fix`:
    the diff, and whether it was written) and, for a memory whose frontmatter does not
    parse, why (`header_error`: its prose was verified, its header was not read)."""
    fixes = {fix.path: fix for fix in run.fixes}
    headers = {path: why for path, _, why in run.headers}
    out = []
    for result in run.results:
        data = verification_dict(result)
        fix = fixes.get(result.path)
        if fix is not None:
            data["fix"] = {"diff": fix.diff, "written": fix.written}
        if result.path in headers:
            data["header_error"] = headers[result.path]
        out.append(data)
    return out


def verifications_json(results: Sequence[MemoryVerification]) -> Iterator[str]:
    """`verification_json` of each result in turn. Of a whole-store run's lazy results
    (`BatchVerdicts`), a memory whose citations all hold on their lines is written
    straight from its index rows, and one that cites nothing but whose mentions' verdicts
    a rerun kept straight from those (`BatchVerdicts.kept`): the same text without
    building its result."""
    if not isinstance(results, BatchVerdicts):
        yield from map(verification_json, results)
        return
    targets: dict[str, str] = {}  # each cited path encoded once
    for j in range(len(results)):
        rows = results.settled(j)
        if rows is None:
            kept = results.kept(j)
            if kept is not None and kept.wire:  # most of a rerun's: no result is built
                memory = results.path(j)
                if kept.tail is not None:  # as the cache kept it
                    yield _memory_text(memory, kept.tail, kept.wire)
                    continue
                yield _verification_text(memory, kept.failing(), kept.statuses(), "", kept.wire)
                continue
            recalled = results.recalled(j)
            yield verification_json(*recalled) if recalled else verification_json(results[j])
            continue
        parts = []
        for target, line, end, snippet, *_ in rows:
            path = targets.get(target)
            if path is None:
                path = targets[target] = _str(target)
            parts.append(
                f'{{"path": {path}, "line": {line}, "end_line": {_int(end)}, '
                f'"snippet": {_opt(snippet)}, "status": "valid", "current_path": {path}, '
                f'"current_line": {line}, "reason": "", "anchored": true, "renamed_to": null}}'
            )
        yield (
            f'{{"memory_id": {_str(results.path(j))}, "valid": true, "confidence": 1.0, '
            f'"holding": 1.0, '
            f'"stale_citations": [], "citations": [{", ".join(parts)}]}}'
        )


def _check_json(check: CitationCheck) -> str:
    c = check.citation
    return (
        f'{{"path": {_str(c.target)}, "line": {_int(c.line)}, "end_line": {_int(c.end_line)}, '
        f'"snippet": {_opt(c.snippet)}, "status": "{check.status._value_}", '
        f'"current_path": {_opt(check.current_path)}, "current_line": {_int(check.current_line)}, '
        f'"reason": {_str(check.reason)}, '
        f'"anchored": {"true" if c.snippet is not None or c.is_url else "false"}, '
        f'"renamed_to": {_opt(check.renamed_to)}}}'
    )


def _int(value: int | None) -> str:
    return "null" if value is None else str(value)


def _opt(value: str | None) -> str:
    return "null" if value is None else _str(value)


def hit_dict(result: SearchResult) -> dict[str, Any]:
    """One search hit: its citation ID, path, score, highlighted snippet and ranks."""
    hit = result.hit
    data = {
        "id": f"mem:{hit.row.citation_id}",
        "path": hit.row.path,
        "title": hit.row.title,
        "score": hit.score,
        "snippet": hit.snippet,
        "lexical_rank": hit.lexical_rank,
        "semantic_rank": hit.semantic_rank,
        # The row alone cannot tell expiry (no clock here): the search result says.
        "memory": summary_dict(replace(Summary.of(hit.row, ""), expired=result.expired)),
    }
    if result.confidence is not None:  # verified: health's figure; the holding is verification's
        data["confidence"] = result.confidence
    if result.verification is not None:
        data["verification"] = verification_dict(result.verification)
    return data
