"""Words inside code identifiers, for the full-text index.

SQLite's `unicode61` tokenizer already parts `verify_all_mentions`, `get-user-profile`
and `app.config.load` into their words (`_`, `-` and `.` separate tokens), but keeps a
camelCase or PascalCase name whole: `documentEmbeddings` is the one token
`documentembeddings`, so `search embeddings` missed a memory that names it only so, and
`search "memory service"` missed `MemoryService`. Memories about code write such names
constantly (on six real stores, 29 to 100% of the memories hold a word only inside one:
docs/benchmarks.md, issue 13, session 36).

`parts` gives the words of every such name in a text (`document embeddings`, `memory
service`, `http server` for `HTTPServer`), which the index keeps in a full-text table of
their own (schema.py, `memories_parts_fts`), searched after the text's own words
(lexical.py): the text's table, and so the BM25 ranking of every memory by its words,
stays exactly as it was, and a memory holding the word itself still ranks above one
holding it only inside a name. A word glued to a number is found too (`python` in
`python3`, `sqlite` in `sqlite3`, `fts` in `fts5`: 566 of 5,580 real memories hold a word
only so, docs/benchmarks.md, session 37). Only ASCII names are parted: the tokenizer keeps
accented and CJK letters in one token with their neighbours anyway (cjk.py segments
CJK), and code names are ASCII in nearly every memory (in Cyrillic in 1 store of 78
measured: docs/benchmarks.md, session 37).
"""

from __future__ import annotations

import functools

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see cjk.py)
if TYPE_CHECKING:
    import re


def _kind(code: int) -> int:
    char = chr(code)
    if char.isascii() and char.isalnum():
        return ord("a" if char.islower() else "A" if char.isupper() else "0")
    return ord(" ")


# Each byte of a text's UTF-8 as its kind: `a` a lower-case ASCII letter, `A` a capital, `0`
# a digit, a space anything else (other scripts' bytes too: a name glued to CJK text,
# `documentEmbeddingsを修正`, is a token of its own in the segmented text, cjk.py).
_KINDS = bytes(map(_kind, range(256)))
# Where a name steps from one word to the next: `userId`, `utf8Decoder`, `HTTPServer`; and
# where a word meets a number (`python3`, `SHA256`, `1girl`), for the word alone (parts).
_STEPS = (b"aA", b"0A", b"AAa", b"a0", b"A0", b"0a")
_DIGITS = "0123456789"
_HEX = frozenset("0123456789abcdef")
# A name's words: an acronym (not the capital that starts the next word), a capitalised
# or lower-case word, digits kept with the letters before them (`utf8`, `base64`, `v2`).
_PART = r"[A-Z]+(?![a-z])[0-9]*|[A-Z]?[a-z]+[0-9]*|[0-9]+"


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    """A pattern compiled on first use (an English query in a new process needs no `re`)."""
    import re

    return re.compile(pattern)


@functools.lru_cache(maxsize=8192)
def split(name: str) -> tuple[str, ...]:
    """The words of one identifier, lower-cased: `documentEmbeddings` -> `document`,
    `embeddings`; `HTTPServer` -> `http`, `server`; a name of one word is itself."""
    return tuple(part.lower() for part in _regex(_PART).findall(name)) or (name.lower(),)


def names(text: str) -> list[str]:
    """The camelCase and PascalCase names of a text, in order, each time it writes one.

    Asked of every memory a sync writes, so not with `re`: a pattern for such names,
    tried at every character, cost 2 s of CPU over the 23 MB of a generated store of
    10,000 memories (a cold build is 3.4 s); the bytes' kinds (`bytes.translate`) and
    `find` for the steps cost a tenth of that. A name is the run of ASCII letters and
    digits around a step.
    """
    raw = text.encode("utf-8", "surrogatepass")
    kinds = raw.translate(_KINDS)
    steps: list[int] = []
    for step in _STEPS:
        at = kinds.find(step)
        while at >= 0:
            steps.append(at)
            at = kinds.find(step, at + 1)
    found = []
    end = -1
    for at in sorted(steps):
        if at < end:
            continue  # a later step of the name just taken
        # Each byte is looked at once: a name of 100,000 steps (a crafted file) is one name.
        start = kinds.rfind(b" ", end + 1, at) + 1 or max(end + 1, 0)
        end = kinds.find(b" ", at)
        end = end if end >= 0 else len(raw)
        found.append(raw[start:end].decode("ascii"))
    return found


def parts(text: str) -> str | None:
    """The words of the camelCase and PascalCase names of a text, in order, then the words
    its names glue to a number (`python` of `python3`, `float` of `Float64Array`, `girl` of
    `1girl`), or None when it holds none: what `memories_parts_fts` indexes for a memory.

    Every occurrence is kept, so a memory that names `MemoryService` often ranks above
    one naming it once, as BM25 ranks words. The words before a number come after all the
    names' words, so the phrase of a name (`"float64 array"`) still finds it. A word of one
    letter (`v2`, `x86`) gives nothing, nor a lower-case hex number (`e9be`, `3abfa07`,
    a commit or a UUID: `feed1` of a hash is no feed)."""
    found = names(text)
    if not found:
        return None
    words: list[str] = []
    stems: list[str] = []
    for name in found:
        if name.islower() and _HEX.issuperset(name):
            continue
        pieces = split(name)
        if len(pieces) > 1:
            words += pieces
        for piece in pieces:
            stem = piece.rstrip(_DIGITS)
            if stem != piece and len(stem) > 1 and stem.isalpha():
                stems.append(stem)
    return " ".join(words + stems) or None


def is_compound(word: str) -> bool:
    """Whether a word as typed is a camelCase or PascalCase name (`MemoryService`), as
    `_COMPOUND` reads one; without `re`, which an English query in a new process does
    not import (cjk.regex)."""
    if not word.isascii() or not word.isalnum() or word.islower() or word.isupper():
        return False
    after = word[1:]
    return any(
        ((a.islower() or a.isdigit()) and b.isupper())
        or (a.isupper() and b.isupper() and c.islower())
        for a, b, c in zip(word, after, after[1:] + " ", strict=False)
    )
