"""Memory file formats, one module each, detected per file.

The registry is a plain list tried in order: frontmatter first (a file that
opens with a YAML block), serena last (any other markdown file). It is built on first
use: a call that parses no memory file (a verification of an unchanged store) then
never loads the parsers, and importing `formats.base` for its values stays light.
"""

from __future__ import annotations

import functools
from typing import Any

from memory_enhancement.core.errors import BrokenHeaderError
from memory_enhancement.store.formats.base import Decoded, Document, Format, decode


@functools.cache
def registry() -> list[Format]:
    from memory_enhancement.store.formats.frontmatter import FrontmatterFormat
    from memory_enhancement.store.formats.serena import SerenaFormat

    return [FrontmatterFormat(), SerenaFormat()]


def __getattr__(name: str) -> Any:
    if name == "FORMATS":  # the registry, as a module attribute
        return registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def by_name(name: str) -> Format:
    for fmt in registry():
        if fmt.name == name:
            return fmt
    raise KeyError(name)


def detect(text: str) -> Format:
    """The format a file's text is written in."""
    formats = registry()
    for fmt in formats:
        if fmt.detect(text):
            return fmt
    return formats[-1]


def parse_text(path: str, text: str, *, links: bool = True, lenient: bool = False) -> Document:
    """The file's document; `lenient` reads a file whose frontmatter does not parse as
    text (a read-only document: see FrontmatterFormat.parse_text_only) instead of raising."""
    fmt = detect(text)
    if not lenient:
        return fmt.parse(path, text, links=links)
    try:
        return fmt.parse(path, text, links=links)
    except BrokenHeaderError as exc:
        from memory_enhancement.store.formats.frontmatter import FrontmatterFormat

        return FrontmatterFormat().parse_text_only(path, text, exc, links=links)


__all__ = ["Decoded", "Document", "Format", "by_name", "decode", "detect", "parse_text", "registry"]
