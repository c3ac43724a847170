"""How a link is written again when what it names moved: in the style it was written.

Resolving links (links.py) reads what authors wrote; a move and `links --fix` write a new
target into that same text, so the link must read as the author's others do: a markdown
link relative to its memory or from the repository root, a name with or without `.md`
and the store's folder.
"""

from __future__ import annotations

import posixpath

from memory_enhancement.core.links import STORE_MARK, strip_md
from memory_enhancement.core.model import MEMORY_SUFFIX, Link, LinkKind


def link_text_for(source: str, target: str, link: Link, *, name_is_unique: bool = False) -> str:
    """How to write a link to target in the style of the original link: a markdown link
    relative to its memory (`./` kept) or from the repository's root as written (LoRAIro);
    a name (and `related: [x.md]`) keeps its `.md`, its `.serena/memories/` prefix, and
    stays bare when the new name is unique, but `mem:NAME`, which Serena reads as a path."""
    if link.kind is LinkKind.MEM_ID:
        return link.target
    written = link.target.strip()
    suffix = written[-len(MEMORY_SUFFIX) :] if written.lower().endswith(MEMORY_SUFFIX) else ""
    head, marker, _ = strip_md(written).rpartition(STORE_MARK)
    if link.kind is LinkKind.MARKDOWN:  # `../` would start from the memory's folder
        if marker and head.endswith(("/", ".")) and not head.startswith(".."):
            return head + marker + target + MEMORY_SUFFIX
        rel = posixpath.relpath(target, posixpath.dirname(source) or ".") + MEMORY_SUFFIX
        return "./" + rel if written.startswith("./") and rel[0] != "." else rel
    if link.kind not in (LinkKind.BARE, LinkKind.ITEM, LinkKind.NAMED, LinkKind.MEM_REF):
        return target + suffix if link.kind is LinkKind.FRONTMATTER else target
    if marker and (not head or head.endswith(("/", "."))):
        return head + marker + target + suffix
    if name_is_unique and "/" not in written and link.kind is not LinkKind.MEM_REF:
        return target.rpartition("/")[2] + suffix
    return target + suffix
