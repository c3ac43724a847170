"""Snippets: the window of a memory's text where a query's words meet, its matches in bold.

The index's FTS5 snippet serves most memories; a memory indexed in segmented form
(CJK text as bigrams, see cjk.py) would show bigrams, so its snippet is cut here from
the original text. `emphasised` turns the marks of either into markdown bold without
doubling the text's own `**`.
"""

from __future__ import annotations

from memory_enhancement.index.cjk import composed, pair_needles

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see cjk.py)
if TYPE_CHECKING:
    from collections.abc import Iterator


def snippet(content: str, needles: list[str], *, before: int = 30, after: int = 90) -> str:
    """A window of the original text where the most different needles meet (the first
    such), needles in bold.

    Used for memories indexed in segmented form, whose FTS5 snippet would show bigrams.
    Not simply the first needle found: for `リスク管理 ロールバック` in a long plan, that
    was a `# 経費管理機能` comment in a directory tree, far from the section holding both.
    """
    content = composed(content)  # as segment() indexed it
    found = _firsts(content, needles) or _firsts(content, pair_needles(needles))
    if not found:
        start, end = 0, before + after
    else:
        at = _densest(content, [n for _, _, n in found], after) if len(found) > 1 else found[0][0]
        start, end = max(0, at - before), at + after
        end += content[end - 1 : end + 1] == "**"  # not `**Bold*…`: the pair cut in two
    window = " ".join(content[start:end].split())
    marked = window
    if found:  # one pass, longest first, so no needle is marked inside another
        longest = sorted({n for _, _, n in found}, key=len, reverse=True)
        import re

        # Needles that touch (`ブランチ` `削除` in `ブランチ削除`) are one bold run, not
        # `**ブランチ****削除**`, which markdown shows with its asterisks.
        pattern = "|".join(_pattern(n) for n in longest)
        marked = re.sub(f"((?:{pattern})+)", f"{OPEN}\\1{CLOSE}", window, flags=re.IGNORECASE)
    return emphasised(("…" if start > 0 else "") + marked + ("…" if end < len(content) else ""))


def _firsts(text: str, needles: list[str]) -> list[tuple[int, int, str]]:
    """Each needle the text holds, by its first place (longest first at one place)."""
    firsts = ((next(_places(text, n), -1), n) for n in {n.lower() for n in needles if n})
    return sorted((at, -len(n), n) for at, n in firsts if at >= 0)


def _densest(text: str, found: list[str], span: int, most: int = 200) -> int:
    """Where a window of span characters starting at a needle holds the most different
    needles (whole), the first such; each needle's first `most` places are looked at."""
    from itertools import islice

    spots = sorted((at, n) for n in found for at in islice(_places(text, n), most))
    best, best_at = 0, spots[0][0]
    for i, (at, _) in enumerate(spots):
        inside = set()
        for place, needle in spots[i:]:
            if place > at + span:
                break
            if place + len(needle) <= at + span:
                inside.add(needle)
        if len(inside) > best:
            best, best_at = len(inside), at
            if best == len(found):
                break
    return best_at


def _places(text: str, needle: str) -> Iterator[int]:
    """Where needle (lower-cased) stands in the text, in any case, as `_pattern` marks it."""
    import re

    return (found.start() for found in re.finditer(_pattern(needle), text, re.IGNORECASE))


def _pattern(needle: str) -> str:
    """A needle as a regular expression: a CJK piece anywhere; an English word where a
    word starts, and ends unless it is long enough to be searched as a prefix (lexical.py:
    a word of four letters or more alone, a stem). Marked anywhere, `is` was bold in
    `th**is**` and `id` in `**Id**entifier` in every memory with a Korean line
    (2sem/realtornote), where the index had found the words themselves. `_` parts words
    there as it does in the index (unicode61): `id` found `user_id`. A word of a camelCase
    name starts and ends where its capital does (identifiers.py): `service` in
    `MemoryService`, `get` in `getUser`. For text matched ignoring case."""
    import re

    if not needle.isascii():
        return re.escape(needle)
    step = "(?-i:(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]))"  # inside a camelCase name
    end = "" if len(needle) >= 4 else f"(?:(?![0-9A-Za-z])|{step})"
    return f"(?:(?<![0-9A-Za-z])|{step}){re.escape(needle)}{end}"


# What a snippet's matches are marked with until `emphasised` makes them bold: characters
# no memory text holds, so the text's own `**` can be told from the marks.
OPEN, CLOSE = "\x02", "\x03"


def emphasised(marked: str) -> str:
    """A snippet with its matches (between OPEN and CLOSE) in bold, and the text's own bold
    dropped: `**Important**` matched would read `****Important****`, which markdown shows
    with its asterisks. Balanced pairs go, and a closing `**` whose opening the window cut
    off; `**kwargs` and `x**2` in code stay."""
    if "**" in marked:
        marked = _without_bold(marked)
    return marked.replace(CLOSE + OPEN, "").replace(OPEN, "**").replace(CLOSE, "**")


def _without_bold(text: str) -> str:
    """The text without its `**` pairs (an opening `**` before a non-space, paired with the
    next closing one after a non-space, as markdown reads them) nor a closing `**` with no
    opening before it that ends a word, nor an opening one a cut text leaves unclosed. A
    scan, not a regex: an English search in a new process imports no `re` (cjk.regex)."""
    drop: list[int] = []
    pending = -1
    at = text.find("**")
    while at != -1:
        before, after = text[at - 1 : at], text[at + 2 : at + 3]
        closes = before not in ("", "*") and not before.isspace()
        opens = after not in ("", "*") and not after.isspace()
        if pending >= 0 and closes:
            drop += [pending, at]
            pending = -1
        elif opens:
            pending = at
        elif closes and not (after.isalnum() or after == "_"):
            drop.append(at)  # its opening was cut off by the window
        at = text.find("**", at + 2)
    if pending >= 0 and text.endswith("…") and not text[pending - 1 : pending].strip():
        drop.append(pending)  # `- **Singleton…`: its closing was cut off by the window
    for at in reversed(drop):
        text = text[:at] + text[at + 2 :]
    return text
