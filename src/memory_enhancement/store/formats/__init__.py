"""Memory file formats, one module each, detected per file.

The registry is a plain list tried in order: frontmatter first (a file that
opens with a YAML block), serena last (any other markdown file).
"""

from __future__ import annotations

from memory_enhancement.store.formats.base import Decoded, Document, Format, decode
from memory_enhancement.store.formats.frontmatter import FrontmatterFormat
from memory_enhancement.store.formats.serena import SerenaFormat

FORMATS: list[Format] = [FrontmatterFormat(), SerenaFormat()]


def by_name(name: str) -> Format:
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt
    raise KeyError(name)


def detect(text: str) -> Format:
    """The format a file's text is written in."""
    for fmt in FORMATS:
        if fmt.detect(text):
            return fmt
    return FORMATS[-1]


def parse_text(path: str, text: str, *, links: bool = True) -> Document:
    return detect(text).parse(path, text, links=links)


__all__ = ["FORMATS", "Decoded", "Document", "Format", "by_name", "decode", "detect", "parse_text"]
