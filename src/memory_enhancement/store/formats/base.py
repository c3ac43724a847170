"""What a file format is, and the bits of text handling both formats share.

A format is a plug-in with three verbs: `detect` (is this file mine?), `parse`
(text to a Document holding the Memory and where each part sits in the text),
and `render` (a Document and an edited Memory to new text). Rendering compares
the edited memory with the parsed one field by field and splices only what
changed, so a save that changes nothing returns the text it was given, and an
edit to one citation touches only that citation's line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from memory_enhancement.core.errors import InvalidInputError, UnreadableMemoryError
from memory_enhancement.core.model import Link, Memory

MAX_FILE_BYTES = 2 * 1024 * 1024
_BOM = "\ufeff"


def check_size(path: str, data: bytes) -> None:
    """Refuse, before writing, a memory too large to be read back (decode's limit)."""
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInputError(
            f"memory {path!r} would be {len(data)} bytes; the limit is {MAX_FILE_BYTES} bytes "
            "(nothing was written)"
        )


class Format(Protocol):
    """A memory file format (a dialect)."""

    name: str

    def detect(self, text: str) -> bool:
        """Whether text (already decoded, `\\n` newlines) is written in this format."""
        ...

    def parse(self, path: str, text: str, *, links: bool = True) -> Document:
        """Parse text; raise UnreadableMemoryError when it cannot be understood."""
        ...

    def render(self, doc: Document | None, memory: Memory) -> str:
        """New text for memory; with a doc, edit the doc's text in place."""
        ...


@dataclass
class Document:
    """A parsed memory file: the memory and the text it came from.

    Formats subclass this to remember where each part of the memory sits.
    `problems` lists what was skipped while parsing (a citation row that does
    not parse, a metadata value that is not a date), for the caller to warn about.
    `citation_lines` gives, per citation, the 1-based line of the file it is
    written on, so reports (GitHub annotations) can point at it.
    """

    memory: Memory
    text: str
    problems: list[str] = field(default_factory=list)
    citation_lines: list[int | None] = field(default_factory=list)


@dataclass(frozen=True)
class Decoded:
    """File bytes turned into the text the formats work on, and back.

    `newline` is the ending every line of the file has (CRLF, LF, or CR alone: an old
    Mac file), which the text holds as `\\n`. A file of mixed endings is read with
    `\\n` and keeps its carriage returns as line content."""

    text: str
    newline: str = "\n"
    bom: bool = False

    def encode(self, text: str) -> bytes:
        """text (an edit of `self.text`) as the file's bytes: its BOM, its line ending.
        In a file of mixed endings the lines the edit added (a new content, a section
        appended) end as most of the file's lines do (`dominant_ending`); every line
        it kept keeps its own."""
        if self.newline != "\n":
            text = text.replace("\n", self.newline)
        elif "\r" in self.text:
            text = _added_lines_ended(self.text, text, dominant_ending(self.text))
        return ((_BOM if self.bom else "") + text).encode("utf-8")

    def for_copy(self) -> Decoded:
        """How a new file made from this one is encoded (`graduate`'s copy): its BOM,
        and every line ended as most of this file's lines are."""
        ending = self.newline if self.newline != "\n" else dominant_ending(self.text)
        return Decoded("", ending, self.bom)


def dominant_ending(text: str) -> str:
    """The line ending most lines of a decoded file end with: CRLF, CR alone or LF (a
    tie goes to LF, then CRLF). A file all CRLF is decoded to `\\n` lines, so it is
    `Decoded.newline` that says so; this counts the endings a mixed file kept."""
    crlf = text.count("\r\n")
    counts = {"\n": text.count("\n") - crlf, "\r\n": crlf, "\r": text.count("\r") - crlf}
    return max(counts, key=lambda ending: counts[ending])  # first of equals: LF, CRLF


def _added_lines_ended(old: str, new: str, ending: str) -> str:
    """new with the LF-ended lines it does not share with old (as a diff aligns them)
    ended by `ending`; a line kept from old keeps its bytes, whatever its ending."""
    import difflib  # mixed files only

    if ending == "\n":
        return new
    old_lines, new_lines = as_lines(old), as_lines(new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, _, _, start, end in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            for i in range(start, end):
                line = new_lines[i]
                if line.endswith("\n") and not line.endswith("\r\n"):
                    new_lines[i] = line[:-1] + ending
    return "".join(new_lines)


def decode(path: str, data: bytes, size: int | None = None) -> Decoded:
    """Decode a memory file strictly: UTF-8 only, size-limited, newline style kept.

    `size`: the file's, when data is only its first bytes (a reader stops past the
    limit); a 2.2 MB memory was reported as 2097153 bytes, the bytes read."""
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableMemoryError(
            f"{path}: file is too large ({max(size or 0, len(data))} bytes; "
            f"the limit is {MAX_FILE_BYTES})"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableMemoryError(
            f"{path}: not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None
    if "\x00" in text:
        raise UnreadableMemoryError(f"{path}: binary file (contains NUL bytes)")
    bom = text.startswith(_BOM)
    if bom:
        text = text[1:]
    # Only a file that uses CRLF (or CR alone) throughout is normalized; a mixed file
    # keeps its carriage returns as line content, so an edit cannot change other lines.
    newline = uniform_ending(text)
    if newline != "\n":
        text = text.replace(newline, "\n")
    return Decoded(text, newline, bom)


def uniform_ending(text: str) -> str:
    """CRLF when every line of text ends so, CR when its lines end with CR alone (an old
    Mac file, which has no LF), else LF (LF files, and files of mixed endings)."""
    lf = text.count("\n")
    if lf:
        return "\r\n" if text.count("\r\n") == lf else "\n"
    return "\r" if "\r" in text else "\n"


class LineEdits:
    """Replacements of line ranges, applied together from the bottom up.

    Formats describe an edit as "lines [start, end) become these lines", which
    keeps every other line of the file exactly as it was.
    """

    def __init__(self) -> None:
        self._edits: list[tuple[int, int, list[str]]] = []

    def replace(self, start: int, end: int, new_lines: list[str]) -> None:
        self._edits.append((start, end, new_lines))

    def insert(self, at: int, new_lines: list[str]) -> None:
        self._edits.append((at, at, new_lines))

    def delete(self, start: int, end: int) -> None:
        self._edits.append((start, end, []))

    def __bool__(self) -> bool:
        return bool(self._edits)

    def apply(self, lines: list[str]) -> list[str]:
        result = list(lines)
        ordered = sorted(enumerate(self._edits), key=lambda e: (e[1][0], e[1][1], e[0]))
        for _, (start, end, new_lines) in reversed(ordered):
            result[start:end] = new_lines
        return result


def added_links(old: Memory, new: Memory) -> list[Link]:
    """Links in the edited memory that the file does not have yet (formats only add links)."""
    if new.links is None:
        return []
    present = {(link.target, link.type) for link in old.links or ()}
    return [link for link in new.links if (link.target, link.type) not in present]


def content_of(text: str) -> str:
    """Content as reported and compared: no leading or trailing blank lines."""
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def as_lines(text: str) -> list[str]:
    """Lines with their newlines kept, so joining them gives the text back exactly."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def closed_text(text: str) -> str:
    """Text as the writers edit it: ending with a newline (unless empty).

    Many real memories (every file Serena writes) end without one; edits that append
    after the last line would otherwise glue their first line onto it. The writers work
    on the closed text and `keep_final_newline` takes the added newline back off.
    """
    return text if not text or text.endswith("\n") else text + "\n"


def keep_final_newline(before: str, after: str) -> str:
    """after, ending with a newline exactly when before did: an edit never adds or
    removes the file's final newline (a Serena file stays without one, so adding and
    then removing a citation gives the file back byte for byte).

    Usually after ends with the one newline `closed_text` added; when the edit removed
    the file's last lines, it may end with a section's blank lines, which go too."""
    if before and not before.endswith("\n"):
        return after.rstrip("\n")
    return after


def ensure_newline(lines: list[str]) -> list[str]:
    if lines and not lines[-1].endswith("\n"):
        lines = [*lines[:-1], lines[-1] + "\n"]
    return lines
