"""What names a memory file: its spelling on disk, whether a name is free, what kind
of file sits there.

`가게` or `ガイド` can be written two ways: composed (NFC, what keyboards, agents and
Linux tools write) or decomposed (NFD, what macOS's HFS+ wrote and what a copy from it
keeps). The two look the same and are different bytes, so on Linux `가게.md` typed by an
agent does not open the `가게.md` a Mac left in the store: the memory reads as "not found",
and `add` would create its visual twin beside it. Comparing names in NFC finds it.

Only a name that is not ASCII can differ so, and the folder is listed only when the name
as given is not there: the common case costs nothing more than before.
"""

from __future__ import annotations

import os
from pathlib import Path
from stat import S_ISBLK, S_ISCHR, S_ISFIFO, S_ISSOCK

from memory_enhancement.core.errors import AlreadyExistsError
from memory_enhancement.core.memory_paths import composed
from memory_enhancement.core.model import MEMORY_SUFFIX


def spelled_otherwise(root: Path, path: str, *, category: bool = False) -> str | None:
    """The memory path of the file (or with `category`, the path of the folder) whose
    name is path in another Unicode normal form, segment by segment as it sits on disk;
    None when path is spelled as on disk, or nothing matches, or two would (then no
    guess is made)."""
    if path.isascii():
        return None
    folder, found = root, []
    segments = path.split("/")
    suffix = "" if category else MEMORY_SUFFIX
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        name = segment + suffix if last else segment
        entry = name if os.path.lexists(folder / name) else _sole_match(folder, name)
        if entry is None:
            return None
        folder = folder / entry
        found.append(entry[: len(entry) - len(suffix)] if last else entry)
    if folder.is_dir() != category:
        return None
    spelled = "/".join(found)
    return spelled if spelled != path else None


def refuse_taken(root: Path, file: Path, path: str, *, moving: str | None = None) -> None:
    """AlreadyExistsError when a new memory at path would sit beside a file of the same
    name, in the same or another Unicode form (the memory `moving` there excepted: a move
    may respell a name)."""
    if os.path.lexists(file):
        raise AlreadyExistsError(f"memory already exists: {path!r}")
    twin = spelled_otherwise(root, path)
    if twin is not None and twin != moving:
        raise AlreadyExistsError(
            f"memory already exists: {twin!r} (the name {path!r} in another Unicode form)"
        )


def in_folders_as_on_disk(root: Path, path: str) -> str:
    """A new memory's path with each of its folders that exists in another Unicode form
    spelled as on disk: `설계/new` typed composed beside the `설계/` a Mac decomposed goes
    into that folder, not into a composed twin of it that `list 설계` would then find
    alone. Folders not there yet stay as typed."""
    if path.isascii() or "/" not in path:
        return path
    *folders, name = path.split("/")
    at, spelled = root, []
    for segment in folders:
        entry = segment if os.path.lexists(at / segment) else _sole_match(at, segment)
        if entry is None:
            break
        spelled.append(entry)
        at = at / entry
    return "/".join([*spelled, *folders[len(spelled) :], name])


def _sole_match(folder: Path, name: str) -> str | None:
    """The one entry of folder whose name is name in NFC, else None."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    wanted = composed(name)
    matches = [entry for entry in entries if composed(entry) == wanted]
    return matches[0] if len(matches) == 1 else None


def special_kind(mode: int) -> str:
    """What a file that is neither a regular file nor a folder is, in words."""
    if S_ISFIFO(mode):
        return "a FIFO"
    if S_ISSOCK(mode):
        return "a socket"
    if S_ISCHR(mode) or S_ISBLK(mode):
        return "a device"
    return "a special file"
