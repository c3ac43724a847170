"""Broken links: which ones, what they most likely meant, and rewriting just their targets.

About one real link in eight points at a memory that no longer exists. Links
to repository files (`[README](README.md)`) are never dangling memory links:
they are their own kind, checked to exist when the report is made (the index
resolved them when their memory was last written; files come and go since),
and reported `missing` when the file is not there. Each
dangling or ambiguous link is reported with its memory file and line; when a
single existing memory is the likely target (the file git says it was renamed
to, the only candidate in the same folder, the only nearly identical name) it
is offered as the fix. `--fix` rewrites only the target text of those links,
on their own lines, and leaves every other byte of the file alone.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from memory_enhancement.core.errors import UnreadableMemoryError
from memory_enhancement.core.link_text import link_text_for
from memory_enhancement.core.links import LinkStatus, Resolution, Resolver
from memory_enhancement.core.model import Fix, Link, LinkKind
from memory_enhancement.index.index import Index
from memory_enhancement.index.linking import whole_store
from memory_enhancement.store.disk import Loaded, Store
from memory_enhancement.store.edits import rewrite


@dataclass(frozen=True)
class BrokenLink:
    source: str
    file: str
    line: int | None
    target: str
    kind: str
    type: str
    status: str
    candidates: tuple[str, ...]
    suggestion: str | None
    replacement: str | None


def broken_links(
    index: Index, repo_root: Path, renames: Callable[[], Mapping[str, str]]
) -> list[BrokenLink]:
    """Every dangling or ambiguous link, with the fix offered when there is one.

    `renames` gives memory path -> the path git says its file was renamed to; it is
    asked only when something is broken (it costs a git call).
    """
    with index.connect() as conn:
        rows = conn.execute(
            "SELECT m.path, l.target, l.kind, l.type, l.line, l.status, l.candidates "
            "FROM links l JOIN memories m ON m.id = l.memory_id "
            "WHERE l.status IN ('dangling', 'ambiguous', 'missing', 'repository') "
            "ORDER BY m.path, l.line, l.ord"
        ).fetchall()
        paths = [r[0] for r in conn.execute("SELECT path FROM memories WHERE error IS NULL")]
    rows = [row for row in rows if _still_broken(index, row)]
    resolver = Resolver(paths)
    moved = renames() if any(row[5] != LinkStatus.MISSING.value for row in rows) else {}
    found = []
    for source, target, kind, kind_type, line, status, candidates in rows:
        if status in (LinkStatus.REPOSITORY.value, LinkStatus.MISSING.value):
            file = os.path.relpath(index.store.file_for(source), repo_root)
            found.append(
                BrokenLink(source, file, line, target, kind, kind_type, "missing", (), None, None)
            )
            continue
        link = Link(target, kind_type, LinkKind(kind), line)
        choices = tuple(candidates.split("\x1f")) if candidates else ()
        resolution = Resolution(LinkStatus(status), None, choices)
        suggestion = resolver.suggest(source, link, resolution, moved)
        replacement = link_text_for(source, suggestion, link) if suggestion else None
        if kind == LinkKind.MEM_ID.value:
            replacement = None
        file = os.path.relpath(index.store.file_for(source), repo_root)
        broken = BrokenLink(
            source, file, line, target, kind, kind_type, status, choices, suggestion, replacement
        )
        found.append(broken)
    return found


def _still_broken(index: Index, row: tuple[str, str, str, str, int, str, str]) -> bool:
    """A memory link as the index says; a repository link only if its file is not there now."""
    source, target, _, _, _, status, _ = row
    if status not in (LinkStatus.REPOSITORY.value, LinkStatus.MISSING.value):
        return True
    return index.repo is None or index.repo.find(source, target) is None


def fix_links(
    store: Store, broken: list[BrokenLink], *, dry_run: bool
) -> tuple[list[Fix], list[str]]:
    """Rewrite the target text of every broken link that has a single likely fix; and
    why the files the tool does not edit (a header that does not parse) were left alone.
    One such file used to stop the run at it, the files after it unfixed."""
    by_source: dict[str, list[BrokenLink]] = defaultdict(list)
    for item in broken:
        if item.replacement and item.line:
            by_source[item.source].append(item)
    fixes: list[Fix] = []
    skipped: list[str] = []
    for source, items in sorted(by_source.items()):

        def change(loaded: Loaded, items: list[BrokenLink] = items) -> str:
            lines = loaded.decoded.text.split("\n")
            for item in items:
                assert item.line is not None and item.replacement is not None
                at = item.line - 1
                if 0 <= at < len(lines):
                    lines[at] = _retarget(lines[at], item)
            return "\n".join(lines)

        try:
            done = rewrite(store, source, change, name=items[0].file, dry_run=dry_run)
        except UnreadableMemoryError as exc:
            skipped.append(f"{exc} (its links are left as written)")
            continue
        if done is not None:
            fixes.append(done)
    return fixes, skipped


def _retarget(line: str, item: BrokenLink) -> str:
    """The line with this link's target text replaced, and nothing else."""
    old, new = item.target, item.replacement or item.target
    if item.kind in (LinkKind.MARKDOWN.value, LinkKind.TYPED.value):
        # A destination may be in <angle brackets> (it can then hold spaces) and be
        # followed by a title: `[t](<a b.md> "Title")`. Matching only a bare
        # destination closed at once by `)` offered a fix, then silently left
        # such links as they were.
        for match in _DESTINATION.finditer(line):
            angled = match[1] is not None
            href = match[1] if angled else match[2]
            path, hash_, anchor = href.partition("#")
            path, ask, query = path.partition("?")  # `x.md?plain=1`: the query stays
            if unquote(path).strip() == old:
                start, end = match.span(1 if angled else 2)
                target = new if angled or " " not in new else new.replace(" ", "%20")
                return line[:start] + target + ask + query + hash_ + anchor + line[end:]
        return line
    if item.kind == LinkKind.WIKI.value:
        pattern = re.compile(r"\[\[\s*" + re.escape(old) + r"(?=\s*[\]|#])")
        return pattern.sub(lambda m: "[[" + new, line, count=1)
    if item.kind == LinkKind.BARE.value:
        pattern = re.compile(r"^(\s*[-*+]\s+(?:\*\*[^*]*\*\*:?\s*)?)" + re.escape(old) + r"\b")
        replaced = pattern.sub(lambda m: m[1] + new, line, count=1)
        return replaced if replaced != line else _replace_word(line, old, new)
    if item.kind == LinkKind.MEM_REF.value:
        # `mem:alpha`, `[text](memory:alpha)`, `[text](serena:read?memory=alpha.md)`: the
        # reference, not the word `alpha` of the sentence or of the link's text; every one
        # of them on the line (one given as an example, `e.g. `mem:alpha``, is no link of
        # its own when another names the same). A name ends at a sentence's full stop
        # (`see mem:alpha.`), not at `.md`.
        pattern = re.compile(
            r"((?<![\w\[/])mem:|\]\(memory:|\]\(serena:read\?(?:[^#)]*&)?memory=)"
            + re.escape(old)
            + r"(?![\w/-]|\.+[\w/-])"
        )
        return pattern.sub(lambda m: m[1] + new, line)
    if item.kind in _BY_WORD:
        return _replace_word(line, old, new, marked=item.kind == LinkKind.NAMED.value)
    return line


# Links written as a name among other text: the name alone is replaced, so a
# backticked or bold entry stays backticked or bold.
_BY_WORD = {
    LinkKind.FRONTMATTER.value,
    LinkKind.ITEM.value,
    LinkKind.NAMED.value,
}


_DESTINATION = re.compile(
    r"\]\(\s*(?:<([^<>\n]*)>|([^\s)<>]+))"  # ](<destination> or ](destination
    r"""(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)"""  # an optional "title", then )
)


def _replace_word(line: str, old: str, new: str, *, marked: bool = False) -> str:
    """Replace old where it stands alone (not inside a longer name or path); `marked`, a
    backticked or bold one first. A name a sentence points at is marked: in `The alpha
    design: see `alpha`.` the first word was rewritten instead (the link left dangling,
    the sentence changed). A list item's entry is its first word, marked or not."""
    if marked:
        span = re.compile(r"(?<=[`*])" + re.escape(old) + r"(?=[`*])")
        replaced = span.sub(lambda m: new, line, count=1)
        if replaced != line:
            return replaced
    pattern = re.compile(r"(?<![\w/.-])" + re.escape(old) + r"(?![\w/.-])")
    return pattern.sub(lambda m: new, line, count=1)


# -- keeping links working when a memory moves -------------------------------------


@dataclass(frozen=True)
class _Held:
    """A link that resolved before a move: from where, as written, and to what."""

    source: str
    link: Link
    resolved: str
    by_name: bool  # it found its memory by a unique name, not by its path


def links_touching(index: Index, path: str) -> list[_Held]:
    """Before a move: the resolved links into this memory, and its own resolved links."""
    with index.connect() as conn:
        rows = conn.execute(
            "SELECT m.path, l.target, l.kind, l.type, l.line, l.resolved "
            "FROM links l JOIN memories m ON m.id = l.memory_id "
            "WHERE l.status = 'resolved' AND l.kind != ? AND (l.resolved = ? OR m.path = ?)",
            (LinkKind.MEM_ID.value, path, path),
        ).fetchall()
        resolver = whole_store(conn)
    held = []
    for source, target, kind, kind_type, line, resolved in rows:
        link = Link(target, kind_type, LinkKind(kind), line)
        by_name = resolver.by_path(source, link) != resolved
        held.append(_Held(source, link, resolved, by_name))
    return held


def follow_move(
    index: Index, repo_root: Path, origin: str, target: str, held: list[_Held]
) -> tuple[list[Fix], list[str]]:
    """After a move: rewrite the target text of each link the move broke or sent elsewhere,
    in the memories linking to the moved one and in the moved one itself (its relative
    links start from a new folder). Links that still find their memory are left alone;
    `[mem:ID]` links never need it, the ID moves with the memory. A memory the tool does
    not edit keeps its links as written, and is named (the move is made all the same).

    A name is rewritten as the memory's whole path in a Serena store, where a memory's
    name is its path (`read_memory("architecture/duckdb")`): `duckdb` written for
    `architecture/duckdb`, since unique, named no memory Serena could read."""
    with index.connect() as conn:
        resolver = whole_store(conn)  # the names memories declare too: `[[name]]` still finds
    paths_are_names = index.store.default_format() == "serena"
    items = []
    for item in held:
        source = target if item.source == origin else item.source
        wanted = target if item.resolved == origin else item.resolved
        if resolver.by_path(source, item.link) == wanted:
            continue  # its path still names it
        if item.by_name and resolver.resolve(source, item.link) == Resolution(
            LinkStatus.RESOLVED, wanted
        ):
            continue  # written as a bare name, and the name still finds it alone
        name = wanted.rpartition("/")[2]
        unique = not paths_are_names and len(resolver.by_name.get(name, ())) == 1
        replacement = link_text_for(source, wanted, item.link, name_is_unique=unique)
        file = os.path.relpath(index.store.file_for(source), repo_root)
        link = item.link
        items.append(
            BrokenLink(source, file, link.line, link.target, link.kind.value, link.type,
                       "moved", (), wanted, replacement)
        )  # fmt: skip
    return fix_links(index.store, items, dry_run=False)
