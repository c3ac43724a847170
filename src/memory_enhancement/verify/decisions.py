"""What git's diff since a citation's base commit says about a citation the files alone
could not settle: where its line went, whether a copy of its text is its own line or
somebody else's, what the line says now when it changed.

`Verifier` (verifier.py) finds, per citation, the lines that hold its snippet now and
waits (`Pending`) for git; these decisions then take the line map of the citation's file
(`line_maps.LineMap`: how lines moved from the base commit to the work tree) or no map at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_enhancement.core.citations import squash
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.verify.line_maps import LineMap
from memory_enhancement.verify.repo import Repository, SourceFile


@dataclass
class Pending:
    """A citation whose verdict needs history: where to look and what was found."""

    citation: Citation
    path: str  # where the file is now (after a rename)
    candidates: list[int]
    renamed_to: str | None = None
    result: CitationCheck | None = None
    at_line: bool = False  # the cited line still holds the snippet (maybe as part of more)
    wanted: str = ""  # the snippet, squashed


def stale(
    citation: Citation,
    source: SourceFile,
    path: str,
    where: str,
    line_map: LineMap | None = None,
) -> CitationCheck:
    """A stale verdict whose reason quotes what is there now.

    With history, "there" is where git's diff put the cited line: after lines
    were inserted above an edited line, the cited line number holds some
    other line, and quoting it would send the reader to the wrong place.
    """
    if citation.line is None:
        return CitationCheck(citation, Verdict.STALE, path, None, f"{where}snippet not in file")
    start = citation.line
    if line_map is not None:
        if citation.end_line is None and line_map.deleted(start):
            reason = f"{where}line {start} was deleted"
            return CitationCheck(citation, Verdict.STALE, path, None, reason)
        end = citation.end_line or start
        if (h := line_map.outnumbered(start, end)) is not None:
            # 20 lines rewritten as 3: "line 50 changed: it is line 43 now" said the
            # cited line had moved to a line that only took the place of others
            # (7Spade/Xuanwu's prompt file, its Chinese section rewritten in English).
            reason = (
                f"{where}{_span(start, end - start + 1)} {'are' if end > start else 'is'} gone: "
                f"{_span(h.old_start, h.old_count)} became {_span(h.new_start, h.new_count)}"
            )
            return CitationCheck(citation, Verdict.STALE, path, None, reason)
        start = line_map.expected(start)
    line = first_changed(citation, source, start)
    cited = citation.line + (line - start)
    now = None
    if line > len(source.lines):
        reason = f"line {line} is past the end of {path} ({len(source.lines)} lines)"
    else:
        now = source.lines[line - 1].strip()
        text = f"now reads `{quote(now, snippet_line(citation, cited))}`" if now else "is blank"
        if line != cited:  # "line 314 reads" alone left readers asking what 314 was
            text = f"changed: it is line {line} now, which {text.removeprefix('now ')}"
        reason = f"line {cited} {text}"
    return CitationCheck(citation, Verdict.STALE, path, None, where + reason, now=now)


def decide(item: Pending, line_map: LineMap | None, repo: Repository) -> CitationCheck:
    citation, candidates = item.citation, item.candidates
    line = citation.line or 1
    where = f"renamed to {item.path}; " if item.renamed_to else ""
    if not candidates:
        usable = line_map if line_map is not None and line_map.new_path == item.path else None
        return stale(citation, repo.read(item.path), item.path, where, usable)
    if item.at_line:
        return at_line(item, line_map, repo)
    if line_map is None or line_map.new_path != item.path:
        # No history (no git, no verified stamp, or the file did not change since):
        # the occurrence nearest to the cited line is the best guess.
        return moved(item, nearest(candidates, line), where)
    mapped = line_map.forward(line)
    if mapped is not None:
        # The line itself survived; if its text is not there, the citation was
        # already off when verified, and the nearest occurrence is the best guess.
        target = mapped if mapped in candidates else nearest(candidates, mapped)
        return moved(item, target, where)
    fresh = [n for n in candidates if line_map.backward(n) is None]
    added = fresh
    source = repo.read(item.path)
    if was_whole_line(item, line_map.removed.get(line)):
        # The snippet was the whole cited line: only a line that still says exactly
        # that is where it moved; a new, longer line merely containing it is a rewrite.
        wanted = item.wanted
        added = [n for n in fresh if squash(source.lines[n - 1]) == wanted]
    if added:
        return moved(item, nearest(added, line_map.expected(line)), where)
    expected = line_map.expected(line)
    now = None
    if line_map.deleted(line) or not 0 < expected <= len(source.lines):
        # A deleted line has no "now": quoting a neighbour would mislead.
        changed = f"line {line} was deleted"
    else:
        now = source.lines[expected - 1].strip()
        said_then = snippet_line(citation, line)
        changed = f"line {line} changed (now line {expected}: `{quote(now, said_then)}`)"
    # A line added since that holds the text in a longer one is a rewrite, not an
    # older line (found in doublefx/9router: `isValid = ...` became `const isValid = ...`).
    older = [n for n in candidates if n not in fresh]
    said = [f"the same text at {_lines(older)} was already there"] if older else []
    if fresh:
        holds = "hold" if len(fresh) > 1 else "holds"
        said.insert(0, f"{_lines(fresh)}, added since, {holds} it in a longer line (a rewrite)")
    reason = f"{where}{changed}; " + "; ".join(said)
    return CitationCheck(citation, Verdict.STALE, item.path, None, reason, now=now)


def _span(first: int, count: int) -> str:
    """`line 5`, `lines 5-7`."""
    return f"lines {first}-{first + count - 1}" if count > 1 else f"line {first}"


def _lines(numbers: list[int]) -> str:
    """`line 5`, `lines 4, 9` (the first three)."""
    listed = ", ".join(str(n) for n in numbers[:3])
    return f"lines {listed}" if len(numbers) > 1 else f"line {listed}"


def at_line(item: Pending, line_map: LineMap | None, repo: Repository) -> CitationCheck:
    """The cited line holds the snippet; is it still the line that was cited?

    - The line is unchanged since the citation was verified: valid.
    - It survived but moved, and another copy of the text took its place: moved.
    - It was rewritten, the snippet was the whole old line, and it is only part
      of the new one (`testpaths = [` became `testpaths = ["tests"]`): stale,
      unless the whole old line was added back elsewhere (a block move).
    """
    citation, line = item.citation, item.citation.line or 1
    valid = CitationCheck(citation, Verdict.VALID, item.path, line)
    if line_map is None or line_map.new_path != item.path:
        return valid
    mapped = line_map.forward(line)
    if mapped is not None:
        if mapped != line and mapped in item.candidates:
            return moved(item, mapped, "")
        return valid
    if not was_whole_line(item, line_map.removed.get(line)):
        return valid  # a partial snippet that still holds, or a range: containment is enough
    wanted = item.wanted
    source = repo.read(item.path)
    exact = [n for n in item.candidates if squash(source.lines[n - 1]) == wanted]
    added = [n for n in exact if line_map.backward(n) is None]
    if added:
        return moved(item, nearest(added, line_map.expected(line)), "")
    if line in exact:
        return valid
    now = source.lines[line - 1].strip()
    reason = f"line {line} was rewritten; it now reads `{quote(now, snippet_line(citation, line))}`"
    return CitationCheck(citation, Verdict.STALE, item.path, None, reason, now=now)


def moved(item: Pending, line: int, where: str) -> CitationCheck:
    was = item.citation.line
    verdict = Verdict.MOVED if (line != was or item.renamed_to) else Verdict.VALID
    reason = f"{where}found at line {line}" + (f" (was {was})" if was else "")
    return CitationCheck(item.citation, verdict, item.path, line, reason, item.renamed_to)


def described(item: Pending, line_map: LineMap, repo: Repository) -> bool:
    """Whether the base commit held the snippet at the cited line(s), as far as the diff
    tells: a changed line's old text is in the diff, an unchanged one is where it went."""
    citation = item.citation
    if citation.line is None or not citation.snippet or line_map.new_path != item.path:
        return True
    mapped = line_map.forward(citation.line)
    if mapped is not None and mapped in item.candidates:
        return True  # the common case, at no cost: the line survived and still says it
    source = repo.read(item.path)
    old: list[str] = []
    for number in range(citation.line, (citation.end_line or citation.line) + 1):
        text = line_map.removed.get(number)
        if text is None:
            now = line_map.forward(number)
            if now is None or not 0 < now <= len(source.lines):
                return False  # past the end of the file at that commit
            text = source.lines[now - 1]
        old.append(text)
    return item.wanted in squash("".join(old))


def was_whole_line(item: Pending, old: str | None) -> bool:
    """Whether the snippet was the entire cited line when the citation was verified."""
    if old is None or item.citation.end_line or not item.wanted:
        return False
    return squash(old) == item.wanted


def span_of(citation: Citation) -> int:
    if citation.line is None or citation.end_line is None:
        return 1
    return citation.end_line - citation.line + 1


def first_changed(citation: Citation, source: SourceFile, line: int) -> int:
    """The line of a cited range (now starting at `line`) to quote: the first that changed.

    Quoting the first line of a range whose third line changed would show text
    that is still right; when the snippet's lines do not match the range's, the
    first line is quoted.
    """
    parts = (citation.snippet or "").split("\n")
    if citation.line is None or citation.end_line is None:
        return line
    if len(parts) != citation.end_line - citation.line + 1:
        return line
    for at, part in enumerate(parts, start=line):
        if at > len(source.lines) or squash(part) not in squash(source.lines[at - 1]):
            return at
    return line


def nearest(lines: Sequence[int], target: int) -> int:
    return min(lines, key=lambda n: (abs(n - target), n))


def short(text: str, limit: int = 80) -> str:
    text = text.replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(text: str, beside: str | None = None, limit: int = 80) -> str:
    """`text` (a line) clipped for a reason; beside the line it is told against (what
    the cited line said before), from a little before where the two first differ when a
    plain clip would show only what they share: both clipped at the 79th character read
    alike, and the reader could not see what changed (found in imDrOne/mtg-bro)."""
    text = text.strip()
    if beside is None or len(text) <= limit:
        return short(text, limit)
    other = beside.strip()
    shared = 0
    for a, b in zip(text, other, strict=False):
        if a != b:
            break
        shared += 1
    if shared < limit - _CONTEXT:
        return short(text, limit)
    return "…" + short(text[shared - _CONTEXT :], limit - 1)


_CONTEXT = 20  # characters shown before the first difference


def snippet_line(citation: Citation, line: int) -> str | None:
    """What the citation's snippet holds for its line `line`: a prose mention's snippet
    is the cited lines as they read then, one per line; a declared citation's is one line
    (or a range squashed to one, which no single line can be told against)."""
    if citation.snippet is None or citation.line is None:
        return None
    lines = citation.snippet.split("\n")
    at = line - citation.line
    if len(lines) == 1 and citation.end_line not in (None, citation.line):
        return None
    return lines[at] if 0 <= at < len(lines) else None
