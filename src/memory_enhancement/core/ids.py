"""Citation IDs: `[mem:a7Bc3x]`, short handles agents quote (seed 002).

An ID is `mem:` plus 6 base62 characters taken from the SHA-256 of the
memory's identity (its path when first indexed, or the ID its file declares
after a move). Characters are drawn by rejection sampling (bytes >= 248 are
skipped) so every character is equally likely: `byte % 62` would favour the
first 8 characters. A collision is resolved by hashing again with a salt,
`identity#1`, `identity#2`, ..., so the outcome depends only on the identities
and the order they were first seen, never on randomness.
"""

from __future__ import annotations

import hashlib
import re

from memory_enhancement.core.errors import InvalidInputError

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
ID_LENGTH = 6
PREFIX = "mem:"
_LIMIT = 256 - 256 % len(ALPHABET)  # 248: the largest multiple of 62 that fits a byte
_ID_TEXT = re.compile(r"^\[?\s*(?:mem:)?\s*([A-Za-z0-9]+)\s*\]?$")


def citation_id(identity: str, salt: int = 0, length: int = ID_LENGTH) -> str:
    """The ID (without `mem:`) for an identity and a collision salt."""
    seed = identity if salt == 0 else f"{identity}#{salt}"
    digest = hashlib.sha256(seed.encode("utf-8")).digest()
    chars: list[str] = []
    while len(chars) < length:
        for byte in digest:
            if byte < _LIMIT:
                chars.append(ALPHABET[byte % len(ALPHABET)])
                if len(chars) == length:
                    break
        digest = hashlib.sha256(digest).digest()
    return "".join(chars)


def parse_citation_id(text: str) -> str:
    """Accept `mem:a7Bc3x`, `[mem:a7Bc3x]` or `a7Bc3x`; return the bare characters."""
    match = _ID_TEXT.match(text.strip()) if isinstance(text, str) else None
    if match is None or not 4 <= len(match[1]) <= 12:
        raise InvalidInputError(
            f"invalid citation ID {text!r} (expected mem:XXXXXX, [mem:XXXXXX] or XXXXXX)"
        )
    return match[1]


def format_citation_id(bare: str) -> str:
    """The quoted form agents write: `[mem:a7Bc3x]`."""
    return f"[{PREFIX}{bare}]"
