"""Read access to the code a store cites, confined to the repository root.

Citations name files relative to the repository root. Nothing here ever reads
outside that root: absolute paths, `..` escapes and symlinks that point out are
reported, not followed. Each file is read at most once per Repository object,
so one verification run reads each cited file once however often it is cited.
"""

from __future__ import annotations

import enum
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from memory_enhancement.store.names import special_kind

MAX_SOURCE_BYTES = 20 * 1024 * 1024
_BINARY_PROBE = 8192
# What str.split() counts as whitespace: the ASCII ones but the newline, deleted from the
# bytes in C, and the others as UTF-8 (a file holding any takes the slow way).
_ASCII_SPACE = b" \t\r\x0b\x0c\x1c\x1d\x1e\x1f"
# Every character past ASCII that `str.isspace` calls whitespace (one `in` each on the
# decoded text: faster than a regex over the bytes).
_UNICODE_SPACE = "\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
    map(chr, range(0x2000, 0x200B))
)


class SourceStatus(enum.Enum):
    TEXT = "text"
    MISSING = "missing"
    OUTSIDE = "outside"
    BINARY = "binary"
    UNREADABLE = "unreadable"


@dataclass(frozen=True)
class SourceFile:
    """A cited file as found: its text, and its lines (without newlines) when asked."""

    path: str
    status: SourceStatus
    text: str = field(default="", repr=False)
    reason: str = ""
    # The file's stat when it was opened (size, mtime, inode, ctime): a record that the
    # file's citations held names it (verify/settled.py).
    stamp: tuple[int, int, int, int] | None = field(default=None, repr=False, compare=False)

    @property
    def is_text(self) -> bool:
        return self.status is SourceStatus.TEXT

    @cached_property
    def squashed(self) -> str | None:
        """The text with every whitespace character but newlines removed, when that can be
        done on the bytes in C (see `squashed_text`): verification compares in that form.
        Worked out on first use: a citation that still holds on its line needs only its
        line squashed, not the whole file."""
        return squashed_text(self.text.encode("utf-8"), self.text) if self.is_text else None

    @cached_property
    def lines(self) -> Sequence[str]:
        """The lines, split on first use: verifying a citation that still holds needs only
        the squashed text, and splitting every line of every cited file is a cost."""
        lines = self.text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if "\r" in self.text:
            lines = [line.rstrip("\r") for line in lines]
        return lines


@dataclass
class Repository:
    """The code a store's citations point into."""

    root: Path
    _cache: dict[str, SourceFile] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(os.path.abspath(self.root))
        self._root = str(self.root)
        self._real_root = os.path.realpath(self.root)
        self._inside_dirs: dict[str, bool] = {}

    def resolve(self, rel: str) -> Path | None:
        """The file a repository-relative path names, or None when it would leave the root."""
        found = self._locate(rel)
        if found is None or (os.path.islink(found) and not self._link_inside(found)):
            return None
        return Path(found)

    def is_folder(self, rel: str) -> bool:
        """Whether the work tree has this folder (inside the root) with a file in it: a
        folder mention of one git does not track, `dist/` or `.venv/`, still names something
        there. Empty folders (what `git mv` of every file leaves behind) and compiled Python
        (`__pycache__/`, left when its sources went) are not counted."""
        found = self.resolve(rel)
        return found is not None and found.is_dir() and _holds_file(str(found))

    def _link_inside(self, file: str) -> bool:
        return _within(os.path.realpath(file), self._real_root)

    def _locate(self, rel: str) -> str | None:
        """The file a path names, unless the path or a folder on the way (a symlink) leads
        out of the root; the file itself may still be a symlink (the caller checks)."""
        if not rel or os.path.isabs(rel) or "\x00" in rel or rel.startswith("\\"):
            return None
        if "//" in rel or "/." in "/" + rel or rel.endswith("/"):
            candidate = os.path.normpath(os.path.join(self._root, rel))
            if not _within(candidate, self._root):
                return None
        else:  # a plain relative path (most are): nothing to normalize
            candidate = os.path.join(self._root, rel)
        return candidate if self._folder_inside(os.path.dirname(candidate)) else None

    def _folder_inside(self, folder: str) -> bool:
        """Whether a folder, symlinks resolved, is inside the root: once per folder per run
        (a run reads thousands of files in a few hundred folders; realpath stats every
        component of the path)."""
        inside = self._inside_dirs.get(folder)
        if inside is None:
            inside = self._inside_dirs[folder] = _within(os.path.realpath(folder), self._real_root)
        return inside

    def read(self, rel: str) -> SourceFile:
        """The cited file's lines, read once and cached."""
        cached = self._cache.get(rel)
        if cached is None:
            cached = self._cache[rel] = self._read(rel)
        return cached

    def stamp(self, rel: str) -> tuple[int, int, int, int] | None:
        """The file's stat now, as `SourceFile.stamp` records it; None when it cannot be
        read as a regular file inside the repository."""
        file = self._locate(rel)
        try:
            info = self._stat(file) if file is not None else None
        except OSError:
            return None
        if info is None or not stat.S_ISREG(info.st_mode):
            return None
        return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns)

    def _stat(self, file: str) -> os.stat_result | None:
        """The file's stat, a symlink followed only when it stays inside the repository
        (None when it leads out)."""
        info = os.lstat(file)
        if stat.S_ISLNK(info.st_mode):
            return os.stat(file) if self._link_inside(file) else None
        return info

    def forget(self, rel: str) -> None:
        """Let go of a file read (a long run keeps only the files it still needs)."""
        self._cache.pop(rel, None)

    def _read(self, rel: str) -> SourceFile:
        file = self._locate(rel)
        if file is None:
            return _outside(rel)
        try:
            # Only regular files are opened: opening a FIFO blocks until a writer
            # comes (under the store's write lock, for `citation add`), and a
            # device may act on being opened. The stat decides before any open;
            # O_NONBLOCK and a second look cover a file swapped in between. A symlink
            # is followed only when it stays inside the repository.
            found = self._stat(file)
            if found is None:
                return _outside(rel)
            refused = _not_regular(rel, found.st_mode)
            if refused is not None:
                return refused
            fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with open(fd, "rb") as handle:
                info = os.fstat(handle.fileno())
                refused = _not_regular(rel, info.st_mode)
                if refused is not None:
                    return refused
                if info.st_size > MAX_SOURCE_BYTES:
                    return SourceFile(rel, SourceStatus.UNREADABLE, reason="file is too large")
                data = handle.read()
        except FileNotFoundError:
            return SourceFile(rel, SourceStatus.MISSING, reason="file not found")
        except IsADirectoryError:
            return SourceFile(rel, SourceStatus.UNREADABLE, reason="is a directory")
        except OSError as exc:
            return SourceFile(rel, SourceStatus.UNREADABLE, reason=exc.strerror or str(exc))
        if b"\x00" in data[:_BINARY_PROBE]:
            return SourceFile(rel, SourceStatus.BINARY, reason="binary file")
        text = data.decode("utf-8", errors="replace")
        stamp = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns)
        return SourceFile(rel, SourceStatus.TEXT, text, stamp=stamp)


def squashed_text(data: bytes, text: str) -> str | None:
    """The file's text with all whitespace but newlines removed, computed on the bytes:
    line by line it equals `squash(line)`, at a fraction of the cost of squashing each of
    a big file's lines. None when the file holds invalid UTF-8 or non-ASCII whitespace
    (then the caller squashes line by line)."""
    if not data.isascii() and ("\ufffd" in text or any(ch in text for ch in _UNICODE_SPACE)):
        return None
    return data.translate(None, _ASCII_SPACE).decode("utf-8")


def _outside(rel: str) -> SourceFile:
    return SourceFile(rel, SourceStatus.OUTSIDE, reason="path leaves the repository root")


def _not_regular(rel: str, mode: int) -> SourceFile | None:
    """An unreadable source for anything but a regular file (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return SourceFile(rel, SourceStatus.UNREADABLE, reason="is a directory")
    kind = special_kind(mode)
    return SourceFile(rel, SourceStatus.UNREADABLE, reason=f"{kind}, not a regular file")


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def cited_text(source: SourceFile, line: int, end_line: int | None) -> str | None:
    """The text of lines [line, end_line], stripped and joined by newlines; None if out of range."""
    last = end_line or line
    if not source.is_text or line < 1 or last > len(source.lines):
        return None
    return "\n".join(text.strip() for text in source.lines[line - 1 : last])


def _holds_file(folder: str) -> bool:
    """Whether a folder holds a file at any depth, outside `__pycache__/` (stops at the first,
    its own files read before any subfolder's)."""
    folders = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_file():
                    return True
                if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                    folders.append(entry.path)
    except OSError:
        return False
    return any(_holds_file(path) for path in folders)
