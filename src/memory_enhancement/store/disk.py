"""A store on disk: a folder of markdown memories, read and written safely.

Files are the truth. Writes are atomic (a temporary file in the same folder,
fsync, `os.replace`) and serialized by an exclusive lock on the store, so two
processes never lose each other's change and a reader never sees half a file.
Every path is checked to stay inside the store, symlinks included.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG

from memory_enhancement.core.errors import (
    ChangedOnDiskError,
    InvalidPathError,
    MemoryToolError,
    NotFoundError,
    StoreError,
    UnreadableMemoryError,
    os_error_text,
)
from memory_enhancement.core.memory_paths import existing_path_candidates
from memory_enhancement.core.model import MEMORY_SUFFIX
from memory_enhancement.store import atomic, names
from memory_enhancement.store.formats.base import MAX_FILE_BYTES, Decoded, Document, check_size
from memory_enhancement.store.names import special_kind
from memory_enhancement.store.scan import full_scan

CONFIG_FILE = ".memory-enhancement.yaml"
_SAMPLE = 64
_CLEAN_EVERY = 10.0  # seconds between two looks for leftovers in one folder


@dataclass(frozen=True)
class Loaded:
    """A memory file as read: its bytes decoded, its document parsed, its stat."""

    path: str
    decoded: Decoded
    doc: Document
    mtime_ns: int
    size: int
    data: bytes = b""  # the bytes as read, so the index can take them without reading again


class Store:
    """One memories folder. Memory paths are relative to it, without `.md`."""

    def __init__(self, root: Path, name: str | None = None) -> None:
        self.root = Path(os.path.abspath(root))
        self.name = name or self.root.name
        self._cleaned: dict[Path, float] = {}  # folder -> when its leftovers were removed
        # Folders to fsync when a batch ends, per thread: a long-lived Store (the MCP
        # server's) writes from several, and only the batch's own writes wait for it.
        self._batch = threading.local()

    @property
    def _real_root(self) -> str:
        # Not cached: the store folder may be created (or replaced by a symlink) later.
        return os.path.realpath(self.root)

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    # -- paths ----------------------------------------------------------------

    def file_for(self, path: str) -> Path:
        """The file of a memory path, refusing anything that resolves outside the store."""
        return self._inside(self.root / (path + MEMORY_SUFFIX), path)

    def folder_for(self, category: str) -> Path:
        return self._inside(self.root / category, category)

    def _inside(self, target: Path, path: str) -> Path:
        real_root = self._real_root
        probe = target
        while not os.path.lexists(probe) and probe != self.root and probe.parent != probe:
            probe = probe.parent
        real = os.path.realpath(probe)
        if real != real_root and not real.startswith(real_root + os.sep):
            raise InvalidPathError(f"invalid memory path {path!r}: it resolves outside the store")
        return target

    def locate(self, path: str) -> str:
        """The memory path of an existing memory, as given or normalized, else as the
        disk spells it in another Unicode form, else in another case (see `names`): names
        keep the case typed, so `add "Tech Stack"` writes `Tech-Stack.md`, which
        `update tech-stack` finds as it did when new names were lower case."""
        candidates = existing_path_candidates(path)
        for candidate in candidates:
            file = self.file_for(candidate)
            # Not only regular files: a FIFO or socket named like a memory is found, so
            # reading it says what it is instead of "not found".
            if os.path.lexists(file) and not file.is_dir():
                return candidate
        for fold in (False, True):
            for candidate in candidates:
                spelled = names.spelled_otherwise(self.root, candidate, fold=fold)
                if spelled is not None:
                    self.file_for(spelled)  # confined to the store like any path
                    return spelled
        raise NotFoundError(f"memory not found: {path!r} (store {self.root})")

    def refuse_taken(self, path: str, *, moving: str | None = None) -> None:
        """AlreadyExistsError when path is taken (see `names.refuse_taken`)."""
        names.refuse_taken(self.root, self.file_for(path), path, moving=moving)

    def exists(self, path: str) -> bool:
        return self.file_for(path).is_file()

    def iter_paths(self, category: str | None = None) -> Iterator[str]:
        """Memory paths under a category (recursively), sorted; hidden files and folders skipped."""
        yield from sorted(self.scan(category))

    def scan(self, category: str | None = None) -> dict[str, tuple[int, int]]:
        """Every memory path under a category with its file's (mtime_ns, size).

        One stat per file and no reads: this is what keeps the index in step with the files
        cheaply. Hidden files and folders (`.git`, `.obsidian`, temporary files of an
        interrupted write) are skipped, and symlinked folders are not followed."""
        top = self.folder_for(category) if category else self.root
        prefix = "" if not category else category.strip("/") + "/"
        return full_scan(str(top), prefix).files

    # -- reading --------------------------------------------------------------

    def read(self, path: str, *, links: bool = True, lenient: bool = False) -> Loaded:
        """Read and parse one memory; UnreadableMemoryError says what is wrong with it.
        `lenient` (a read that writes nothing) takes a file whose frontmatter alone does not
        parse as text (formats.parse_text)."""
        data, stat = self.read_bytes(path)
        return self.parse(path, data, stat, links=links, lenient=lenient)

    def parse(
        self,
        path: str,
        data: bytes,
        stat: os.stat_result,
        *,
        links: bool = True,
        lenient: bool = False,
    ) -> Loaded:
        # The formats (their parsers, YAML, markdown) are loaded when a file is parsed:
        # a call whose index is in step parses nothing and need not load them.
        from memory_enhancement.store import formats

        decoded = formats.decode(path, data, stat.st_size)
        doc = formats.parse_text(path, decoded.text, links=links, lenient=lenient)
        return Loaded(path, decoded, doc, stat.st_mtime_ns, stat.st_size, data)

    def read_bytes(self, path: str, *, scanned: bool = False) -> tuple[bytes, os.stat_result]:
        """A memory file's bytes (at most the size limit plus one) and its stat.

        `scanned` paths come from this store's own scan, which never follows a
        symlinked folder; only a symlinked file can then point out, so the full
        real-path check is made for those alone (it is the dearest part of a read).
        """
        if scanned:
            quick = self._read_plain(path)
            if quick is not None:
                return quick
        file: str | Path = self.file_for(path)
        try:
            # Non-blocking, and only a regular file is read: a FIFO named `x.md` would
            # otherwise hang every listing (and a sync holds the index's write lock).
            fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with open(fd, "rb") as handle:
                stat = os.fstat(handle.fileno())
                if S_ISDIR(stat.st_mode):
                    raise IsADirectoryError
                if not S_ISREG(stat.st_mode):
                    raise UnreadableMemoryError(
                        f"{path}: {special_kind(stat.st_mode)}, not a regular file"
                    )
                if stat.st_size > MAX_FILE_BYTES:
                    data = handle.read(MAX_FILE_BYTES + 1)
                else:
                    data = handle.read()
        except FileNotFoundError:
            raise NotFoundError(f"memory not found: {path!r} (store {self.root})") from None
        except IsADirectoryError:
            raise NotFoundError(f"{path!r} is a category, not a memory") from None
        except OSError as exc:
            raise UnreadableMemoryError(f"{path}: cannot read file: {exc.strerror}") from None
        return data, stat

    def _read_plain(self, path: str) -> tuple[bytes, os.stat_result] | None:
        """`read_bytes` of a scanned path that names a plain file, with the fewest calls
        (a bulk rewrite of a store re-reads every file): None for anything else (a
        symlink, a FIFO, an error), which then takes the full way and its messages."""
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(f"{self._root_text}{path}{MEMORY_SUFFIX}", flags)
        except OSError:
            return None
        try:
            stat = os.fstat(fd)
            if not S_ISREG(stat.st_mode):
                return None
            # The whole file, or one byte past the limit (the caller tells it too large).
            want = MAX_FILE_BYTES + 1 if stat.st_size > MAX_FILE_BYTES else stat.st_size
            chunks: list[bytes] = []
            got = 0
            while got < want:
                chunk = os.read(fd, want - got)
                if not chunk:
                    break  # shorter than its stat said: truncated while read
                chunks.append(chunk)
                got += len(chunk)
        except OSError:
            return None
        finally:
            os.close(fd)
        return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), stat

    @functools.cached_property
    def _root_text(self) -> str:
        return os.path.join(str(self.root), "")

    def default_format(self) -> str:
        """The format of new memories: configured, else what the store already holds."""
        configured = self.config().get("format")
        if configured in ("serena", "frontmatter"):
            return str(configured)
        if configured is not None:  # a typo must not silently give the other format
            raise StoreError(
                f"{self.root / CONFIG_FILE}: format {configured!r} is not one of: "
                "frontmatter, serena"
            )
        if self.root.parts[-2:] == (".serena", "memories"):
            return "serena"
        counts = {"serena": 0, "frontmatter": 0}
        for n, path in enumerate(self.iter_paths()):
            if n >= _SAMPLE:
                break
            try:  # a file that cannot be read (a symlink out, a FIFO) does not vote
                head = self._head(path)
            except (OSError, MemoryToolError):
                continue
            counts["frontmatter" if head.startswith(b"---") else "serena"] += 1
        return "serena" if counts["serena"] > counts["frontmatter"] else "frontmatter"

    def _head(self, path: str) -> bytes:
        """The first bytes of a memory file, read as safely as `read_bytes` reads it all."""
        fd = os.open(self.file_for(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as handle:
            if not S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise UnreadableMemoryError(f"{path}: not a regular file")
            return handle.read(4)

    def config(self) -> dict[str, object]:
        """The store's own settings, from `.memory-enhancement.yaml` in its folder."""
        file = self.root / CONFIG_FILE
        if not file.is_file():
            return {}
        import yaml

        from memory_enhancement.store.formats import yamlload

        try:
            data = yamlload.load(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError, yamlload.YamlLimitError) as exc:
            raise StoreError(f"{file}: unreadable store configuration: {exc}") from None
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise StoreError(f"{file}: store configuration must be a mapping")
        return data

    # -- writing --------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store's exclusive write lock (an flock on the store folder)."""
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows has no flock; writes stay atomic
            yield
            return
        fd = os.open(self.root, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def create(self, path: str, data: bytes) -> None:
        """Write a new memory; the caller holds the lock. Refuses an existing file,
        and content the store could not read back (checked before anything is written)."""
        file = self.file_for(path)
        check_size(path, data)
        self.refuse_taken(path)
        with _os_errors("write", path):
            file.parent.mkdir(parents=True, exist_ok=True)
            self._clean(file.parent)
            atomic.write_file(file, data, mode=None, sync_folder=self._folder_synced(file.parent))

    def replace(self, path: str, data: bytes, read: Loaded | tuple[int, int] | None) -> None:
        """Rewrite a memory atomically, keeping its mode (under the lock): refused if it changed
        since `read` (or its (mtime_ns, size)); through a symlink in the store, into its file."""
        file = Path(os.path.realpath(self.file_for(path)))
        check_size(path, data)
        was = (read.mtime_ns, read.size) if isinstance(read, Loaded) else read
        with _os_errors("write", path):
            self._clean(file.parent)
            now = os.stat(file)
            if was is not None and (now.st_mtime_ns, now.st_size) != was:
                raise ChangedOnDiskError(f"{path}: changed on disk while being edited; not written")
            synced = self._folder_synced(file.parent)
            atomic.write_file(file, data, mode=now.st_mode & 0o7777, sync_folder=synced)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Many writes in a row (`verify-all --fix` or `--write`): each file is written
        as always (its data synced, then renamed into place), but each folder is synced
        once, when the batch ends, instead of after every file in it (half the fsyncs of
        a bulk rewrite). A crash in between leaves every file whole, old or new."""
        if getattr(self._batch, "unsynced", None) is not None:
            yield
            return
        folders: set[Path] = set()
        self._batch.unsynced = folders
        try:
            yield
        finally:
            self._batch.unsynced = None
            for folder in sorted(folders):
                atomic.fsync_folder(folder)

    def _folder_synced(self, folder: Path) -> bool:
        """Whether a write into folder syncs it now (False: the batch will)."""
        unsynced: set[Path] | None = getattr(self._batch, "unsynced", None)
        if unsynced is not None:
            unsynced.add(folder)
        return unsynced is None

    def _clean(self, folder: Path) -> None:
        """Remove a killed writer's leftovers from folder before writing there, at most once
        every few seconds per folder: listing it for each file made bulk rewrites quadratic."""
        now = time.monotonic()
        if now - self._cleaned.get(folder, -_CLEAN_EVERY) >= _CLEAN_EVERY:
            atomic.clean_stale_temporaries(folder)
            self._cleaned[folder] = now

    def delete(self, path: str) -> None:
        """Delete a memory file, or only its link; a FIFO or device is no memory to delete."""
        file = self.file_for(path)
        try:
            if not (S_ISREG(mode := os.lstat(file).st_mode) or S_ISLNK(mode)):
                raise UnreadableMemoryError(f"{path}: {special_kind(mode)}, not deleted")
            file.unlink()
        except FileNotFoundError:
            raise NotFoundError(f"memory not found: {path!r}") from None
        except OSError as exc:
            raise StoreError(f"cannot delete memory {path!r}: {os_error_text(exc)}") from None
        self._prune_empty_dirs(file.parent)

    def prepare_move(self, source: str, target: str) -> None:
        """Create target's folder, so a move that cannot happen fails before it writes."""
        with _os_errors("move", source, f" to {target!r}"):
            self.file_for(target).parent.mkdir(parents=True, exist_ok=True)

    def rename(self, source: str, target: str) -> None:
        src, dst = self.file_for(source), self.file_for(target)
        self.refuse_taken(target, moving=source)
        self.prepare_move(source, target)
        with _os_errors("move", source, f" to {target!r}"):
            names.rename(src, dst)
        atomic.fsync_folder(dst.parent)
        self._prune_empty_dirs(src.parent)

    def _prune_empty_dirs(self, folder: Path) -> None:
        """Remove category folders left empty, up to (not including) the store root."""
        while folder != self.root and self.root in folder.parents:
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent


@contextlib.contextmanager
def _os_errors(verb: str, path: str, more: str = "") -> Iterator[None]:
    """What the system refuses (a read-only folder, a file where a category folder should
    be, a full disk) is an error naming the memory, not a traceback; writes are atomic, so
    the memory file is as it was."""
    try:
        yield
    except OSError as exc:
        raise StoreError(f"cannot {verb} memory {path!r}{more}: {os_error_text(exc)}") from None
