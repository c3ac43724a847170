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
ALIASES = {
    "created_at": ("created", "date_created", "created_on"),
    "updated_at": ("updated", "last_updated", "last_modified", "modified", "updated_on"),
}


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
    item_valid: bool = True  # every citation item parsed
    aliases: dict[str, str] = field(default_factory=dict)  # field -> its key here (ALIASES)
    header_error: str | None = None  # read as text only: why (FrontmatterFormat.parse_text_only)


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
