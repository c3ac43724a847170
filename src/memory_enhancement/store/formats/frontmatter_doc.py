"""What a parsed frontmatter file is, and the YAML helpers its reader and writer share.

Shared by the reader (frontmatter.py) and the writer (frontmatter_write.py), so that
neither imports the other. PyYAML is imported on first use only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cache
from typing import Any

from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.store.formats import yamlload
from memory_enhancement.store.formats.base import Document

ITEM_LINE = re.compile(r"^(?P<indent>[ \t]*)-(?:[ \t]|$)")
KEY_LINE = re.compile(r"""^(?P<key>[A-Za-z_][\w.-]*|"[^"]*"|'[^']*')[ \t]*:(?:[ \t]|$)""")

# Fields the tool writes, in the order it writes them.
FIELDS = (
    "created_at",
    "updated_at",
    "tags",
    "source",
    "expires_at",
    "citations",
    "confidence",
    "last_verified",
    "citation_id",
)
TIMES = ("created_at", "updated_at", "expires_at", "last_verified")
# The keys other tools keep the same times under, by field: a file with one of these and not
# the tool's own key has its time read from it, and written back to it in its own format.
# `metadata.modified`: a key of a mapping (Claude Code keeps `metadata: {type, modified}`).
ALIASES = {
    "created_at": ("created", "date_created", "created_on"),
    "updated_at": (
        "updated", "last_updated", "last_modified", "modified", "updated_on", "metadata.modified",
    ),
}  # fmt: skip


@cache
def yaml_module() -> Any:
    """PyYAML, imported on first use: a store of serena files never needs it."""
    import yaml

    return yaml


def yaml_loader() -> Any:
    return yamlload.safe_loader()


@dataclass(frozen=True)
class Block:
    """A top-level key and the lines its value spans (trailing blanks/comments excluded)."""

    key: str
    start: int
    end: int
    items: tuple[int, ...] = ()  # first line of each block-sequence item


@dataclass
class FrontmatterDocument(Document):
    lines: list[str] = field(default_factory=list)
    close: int = 0  # index of the closing `---` line
    blocks: dict[str, Block] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    citation_items: list[int] = field(default_factory=list)  # each citation's item
    item_count: int = 0  # the items of `citations:`, read or not
    aliases: dict[str, str] = field(default_factory=dict)  # field -> its key here (ALIASES)
    header_error: str | None = None  # read as text only: why (FrontmatterFormat.parse_text_only)

    @property
    def item_valid(self) -> bool:
        """Every item of `citations:` was read as a citation."""
        return len(self.citation_items) == self.item_count


def text_of(value: Any) -> str | None:
    """YAML scalars back to text; timestamps in the form the tool writes them."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def flow(value: Any) -> str:
    """One value as single-line YAML (flow style; strings quoted when YAML needs it).

    The reader needs it too: a citation's unknown keys are read back as their YAML
    text. Both call it through this module (bench/gen_store.py memoizes it by
    replacing it here)."""
    yaml = yaml_module()
    if isinstance(value, str) and ("\n" in value or value != value.strip()):
        dumped = yaml.safe_dump(value, default_style='"', width=2**31, allow_unicode=True)
    else:
        dumped = yaml.safe_dump(value, default_flow_style=True, width=2**31, allow_unicode=True)
    return str(dumped).removesuffix("\n").removesuffix("\n...").strip()


def alias_line(doc: FrontmatterDocument, key: str) -> int | None:
    """The line holding the one-line value of an alias key (ALIASES), if it has one:
    `updated: 2026-05-01`, or `  modified: ...` among the lines of `metadata:`."""
    parent, _, child = key.rpartition(".")
    block = doc.blocks.get(parent or key)
    if block is None:
        return None
    if not parent:
        return block.start if block.end - block.start == 1 else None
    indent = None
    for i in range(block.start + 1, block.end):
        line = doc.lines[i]
        stripped = line.lstrip(" ")
        if not stripped.strip() or stripped.startswith("#"):
            continue
        depth = len(line) - len(stripped)
        indent = depth if indent is None else indent
        if depth == indent and KEY_LINE.match(stripped) and stripped.split(":", 1)[0] == child:
            after = doc.lines[i + 1] if i + 1 < block.end else ""
            deeper = after.strip() and len(after) - len(after.lstrip(" ")) > depth
            return None if deeper or not stripped.split(":", 1)[1].strip() else i
    return None
