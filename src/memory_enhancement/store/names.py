"""What names a memory file: its spelling on disk, whether a name is free, what kind
of file sits there.

`가게` or `ガイド` can be written two ways: composed (NFC, what keyboards, agents and
Linux tools write) or decomposed (NFD, what macOS's HFS+ wrote and what a copy from it
keeps). The two look the same and are different bytes, so on Linux `가게.md` typed by an
agent does not open the `가게.md` a Mac left in the store: the memory reads as "not found",
and `add` would create its visual twin beside it. Comparing names in NFC finds it.

Only a name that is not ASCII can differ so, and the folder is listed only when the name
as given is not there: the common case costs nothing more than before.

Names keep the case they were typed in, and a case-insensitive file system (macOS,
Windows) sees `Foo.md` and `foo.md` as one file: a new name that differs from a memory
only in case is refused as taken, so a store stays whole when cloned there, and a move
may respell a name in another case (the same file, found under both names there).
"""

from __future__ import annotations

import os
from pathlib import Path
from stat import S_ISBLK, S_ISCHR, S_ISFIFO, S_ISSOCK

from memory_enhancement.core.errors import AlreadyExistsError
from memory_enhancement.core.memory_paths import composed
from memory_enhancement.core.model import MEMORY_SUFFIX


def spelled_otherwise(
    root: Path, path: str, *, category: bool = False, fold: bool = False
) -> str | None:
    """The memory path of the file (or with `category`, the path of the folder) whose
    name is path in another Unicode normal form (with `fold`, or in another case),
    segment by segment as it sits on disk; None when path is spelled as on disk, or
    nothing matches, or two would (then no guess is made)."""
    if path.isascii() and not fold:
        return None
    folder, found = root, []
    segments = path.split("/")
    suffix = "" if category else MEMORY_SUFFIX
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        name = segment + suffix if last else segment
        entry = name if os.path.lexists(folder / name) else _sole_match(folder, name, fold=fold)
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
    name, in the same or another Unicode form or case (the memory `moving` there excepted:
    a move may respell a name)."""
    if os.path.lexists(file) and not _is_file_of(root, file, moving):
        raise AlreadyExistsError(f"memory already exists: {path!r}")
    twin = spelled_otherwise(root, path)
    if twin is not None and twin != moving:
        raise AlreadyExistsError(
            f"memory already exists: {twin!r} (the name {path!r} in another Unicode form)"
        )
    twin = _case_twin(root, path)
    if twin is not None and twin != moving:
        raise AlreadyExistsError(
            f"memory already exists: {twin!r} (the name {path!r} in another case)"
        )


def _is_file_of(root: Path, file: Path, moving: str | None) -> bool:
    """Whether file is the memory moving's own file under another spelling (a case-
    insensitive file system finds `foo.md` when asked for `Foo.md`)."""
    if moving is None:
        return False
    try:
        return os.path.samefile(file, root / (moving + MEMORY_SUFFIX))
    except OSError:
        return False


def _case_twin(root: Path, path: str) -> str | None:
    """The memory path of a file beside path's whose name differs from it only in case
    (or Unicode form), else None."""
    folder, _, name = path.rpartition("/")
    file = name + MEMORY_SUFFIX
    try:
        entries = os.listdir(root / folder if folder else root)
    except OSError:
        return None
    wanted = composed(file).casefold()
    twins = sorted(e for e in entries if e != file and composed(e).casefold() == wanted)
    if not twins:
        return None
    twin = twins[0][: -len(MEMORY_SUFFIX)]
    return f"{folder}/{twin}" if folder else twin


def rename(source: Path, target: Path) -> None:
    """Rename a memory file. A name respelled only in case is the same file on a case-
    insensitive file system, where a rename onto itself may change nothing (Linux's
    case-folding folders): it then goes through a name of its own, and the file is found
    under one name or the other at every step."""
    os.rename(source, target)
    if source.parent != target.parent or source.name == target.name:
        return
    if composed(source.name).casefold() != composed(target.name).casefold():
        return
    if target.name in os.listdir(target.parent):
        return
    step = target.with_name(f"{target.name[: -len(MEMORY_SUFFIX)]}.respelled-{os.getpid()}.md")
    os.rename(target, step)
    os.rename(step, target)


def in_folders_as_on_disk(root: Path, path: str) -> str:
    """A new memory's path with each of its folders that exists in another Unicode form
    spelled as on disk: `설계/new` typed composed beside the `설계/` a Mac decomposed goes
    into that folder, not into a composed twin of it that `list 설계` would then find
    alone; `Notes/new` beside `notes/` goes into `notes/`, one folder on a case-insensitive
    file system. Folders not there yet stay as typed."""
    if "/" not in path:
        return path
    *folders, name = path.split("/")
    at, spelled = root, []
    for segment in folders:
        entry = (
            segment
            if os.path.lexists(at / segment)
            else _sole_match(at, segment) or _sole_match(at, segment, fold=True)
        )
        if entry is None:
            break
        spelled.append(entry)
        at = at / entry
    return "/".join([*spelled, *folders[len(spelled) :], name])


def _sole_match(folder: Path, name: str, *, fold: bool = False) -> str | None:
    """The one entry of folder whose name is name in NFC (with `fold`, in any case too),
    else None."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    wanted = composed(name).casefold() if fold else composed(name)
    matches = [
        entry
        for entry in entries
        if (composed(entry).casefold() if fold else composed(entry)) == wanted
    ]
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
