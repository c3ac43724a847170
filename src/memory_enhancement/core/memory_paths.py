"""Memory paths: `category/.../slug`, the identity of a memory inside its store.

Two kinds of path meet here. A *new* path is normalized much as Cortex does it
(`"  Hello World  "` becomes `Hello-World`), in the case it was typed (Serena names a
memory file as the agent spelled it: `Tech_Stack.md`), and needs at least a category
and a slug. An *existing* file is addressed exactly as it sits on disk, relative to
the store and without `.md`, whatever its name (`README`, `adr/ADR-014`).
Both refuse anything that could leave the store: `.` or `..` segments, absolute
paths, backslashes and empty segments.
"""

from __future__ import annotations

import re
import unicodedata

from memory_enhancement.core.errors import InvalidPathError
from memory_enhancement.core.model import MEMORY_SUFFIX

_RUNS_OF_HYPHENS = re.compile(r"-{2,}")
# File systems allow 255 bytes per name. A stored file is `SEGMENT.md`, and while it is
# written, `.SEGMENT.md.XXXXXXXX.tmp`: new segments keep room for both.
MAX_NEW_SEGMENT = 200
MAX_SEGMENT = 255 - len(MEMORY_SUFFIX)


def _check_lengths(path: str, segments: list[str], limit: int) -> None:
    for segment in segments:
        size = len(segment.encode("utf-8"))
        if size > limit:
            shown = path if len(path) <= 80 else path[:77] + "..."
            raise InvalidPathError(
                f"invalid memory path {shown!r}: a segment is {size} bytes long (at most {limit})"
            )


def composed(name: str) -> str:
    """A name in NFC, as keyboards type it. A file name a Mac decomposed (`가게.md` in
    NFD) looks the same and is other characters, so names are compared composed: by
    links (core/links.py) and when a memory is looked up on disk (store/names.py)."""
    return name if name.isascii() else unicodedata.normalize("NFC", name)


def _fold(char: str) -> str:
    """A character with its accents folded when it has an ASCII base (`é` -> `e`, `Ａ` ->
    `A`); any other letter in its compatibility form (`代`, `ß`, half-width `ｶ` -> `カ`):
    dropping those would leave nothing of a Chinese or Japanese name."""
    base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return base if base and base.isascii() else unicodedata.normalize("NFKC", char)


def _slug_char(char: str) -> bool:
    """Kept in a slug: ASCII letters and digits, `_`, and the letters, digits and marks
    of other scripts (a Devanagari vowel sign is part of its word)."""
    if char.isascii():
        return char.isalnum() or char == "_"
    return char.isalnum() or unicodedata.category(char).startswith("M")


def normalize_segment(segment: str) -> str:
    """Fold accents and join words with hyphens, keeping the case typed; letters of any
    script are kept, and so is a dot between two of them (`v1.9-scope`, `next.js`: names
    real stores give their memories, which a move into a folder keeps)."""
    folded = "".join(_fold(c) for c in unicodedata.normalize("NFC", segment))
    folded = unicodedata.normalize("NFC", folded)  # ｶ + ﾞ composes to ガ
    kept = [
        c if _slug_char(c) or (c == "." and _dotted(folded, n)) else "-"
        for n, c in enumerate(folded)
    ]
    slug = _RUNS_OF_HYPHENS.sub("-", "".join(kept))
    return slug.strip("-") if any(c.isalnum() or c == "_" for c in slug) else ""


def _dotted(text: str, at: int) -> bool:
    """Whether the dot at `at` stands between two characters a slug keeps (`1.9`, not `a.`,
    `.a` or `a..b`)."""
    return 0 < at < len(text) - 1 and _slug_char(text[at - 1]) and _slug_char(text[at + 1])


def split_path(path: str) -> list[str]:
    """Split a user-given path into raw segments, refusing escapes before anything else."""
    if not isinstance(path, str) or not path.strip():
        raise InvalidPathError(f"invalid memory path {path!r}: it is empty")
    text = path.strip()
    if "\\" in text or "\x00" in text:
        raise InvalidPathError(f"invalid memory path {path!r}: backslashes and NUL are not allowed")
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        raise InvalidPathError(f"invalid memory path {path!r}: it must be relative to the store")
    if text.lower().endswith(MEMORY_SUFFIX):
        text = text[: -len(MEMORY_SUFFIX)]
    segments = text.split("/")
    for segment in segments:
        if segment.strip() in (".", ".."):
            raise InvalidPathError(f"invalid memory path {path!r}: '.' and '..' are not allowed")
    return segments


def normalize_new_path(path: str, *, flat: bool = False) -> str:
    """The normalized path of a memory about to be created: category + slug at least, or a
    lone slug in a `flat` store (Serena's `.serena/memories/` keeps every memory at its
    top level, and its users name new ones so)."""
    segments = [normalize_segment(s) for s in split_path(path)]
    _check_lengths(path, segments, MAX_NEW_SEGMENT)
    if any(not s for s in segments):
        raise InvalidPathError(
            f"invalid memory path {path!r}: a segment is empty after normalization"
        )
    if len(segments) < 2 and not flat:
        raise InvalidPathError(
            f"invalid memory path {path!r}: a new memory needs a category and a slug "
            "(e.g. 'decisions/use-sqlite')"
        )
    return "/".join(segments)


def normalize_category(path: str) -> str:
    """A category filter as the user typed it: existing folders are matched as written.

    One trailing slash is allowed: shell completion adds it to folder names.
    """
    segments = split_path(path.strip().rstrip("/") or path)
    if any(not s.strip() for s in segments):
        raise InvalidPathError(f"invalid category {path!r}: a segment is empty")
    return "/".join(s.strip() for s in segments)


def existing_path_candidates(path: str) -> list[str]:
    """Paths to try for an existing memory: exactly as given, then normalized, then
    as earlier versions named a new memory: in lower case, and with its dots as hyphens
    (`v1.9 Scope` was `v1-9-scope`)."""
    segments = split_path(path)
    if any(not s.strip() for s in segments):
        raise InvalidPathError(f"invalid memory path {path!r}: a segment is empty")
    _check_lengths(path, [s.strip() for s in segments], MAX_SEGMENT)
    exact = "/".join(s.strip() for s in segments)
    normalized = "/".join(normalize_segment(s) for s in segments)
    if not all(normalized.split("/")):
        return [exact]
    undotted = "/".join(normalize_segment(s.replace(".", "-")) for s in segments).lower()
    return list(dict.fromkeys((exact, normalized, normalized.lower(), undotted)))
