"""What a parsed serena file is: its managed sections, where each citation is written,
and the metadata labels the tool writes.

Shared by the reader (serena.py) and the writer (serena_write.py), so that neither
imports the other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory_enhancement.core.model import Citation
from memory_enhancement.store.formats import markdown as md
from memory_enhancement.store.formats.base import Document

CITATIONS, LINKS, METADATA = "citations", "links", "metadata"
MANAGED = (CITATIONS, LINKS, METADATA)

META_WRITE = {
    "created_at": "Created", "updated_at": "Updated", "tags": "Tags", "source": "Source",
    "expires_at": "Expires", "confidence": "Confidence", "last_verified": "Last Verified",
    "citation_id": "ID",
}  # fmt: skip
META_BULLET = re.compile(
    r"^(?P<lead>\s*[-*+]\s+)\*\*(?P<label>[^*]+?)\*\*\s*:?\s*(?P<value>.*?)\s*$"
)


@dataclass(frozen=True)
class CitationEntry:
    """Where a citation is written: a table row, or an inline `[cite:TYPE](TARGET)`."""

    citation: Citation
    line: int
    span: tuple[int, int] | None = None  # columns of an inline citation
    cite_type: str = "file"


@dataclass(frozen=True)
class Table:
    header: int
    end: int  # exclusive: the line after the last row
    columns: tuple[str, ...]


@dataclass
class SerenaDocument(Document):
    lines: list[str] = field(default_factory=list)
    sections: list[md.Section] = field(default_factory=list)
    entries: list[CitationEntry] = field(default_factory=list)
    table: Table | None = None
    meta_lines: dict[str, int] = field(default_factory=dict)

    def section(self, key: str) -> md.Section | None:
        return md.first_section(self.sections, key)
