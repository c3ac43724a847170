"""The prose mentions of a store's memory files, read as they are on disk.

A verify-all reads every memory of the store, and most mention no code: a file that
held no mention when last read, and has the same size and modification time now, is
not read again (`mention_free`); one that held mentions is not read, parsed and
hashed again either while the mention cache's row for it was written at that size
and time (the mentions are kept there with the verdicts). So a rerun with nothing
changed reads no memory file for its mentions.
"""

from __future__ import annotations

import functools
import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence

from memory_enhancement.core.errors import MemoryToolError
from memory_enhancement.core.mentions import GRAMMAR, Mention, find_mentions, may_mention
from memory_enhancement.core.model import Memory, Verifiable
from memory_enhancement.core.verdict_rows import EncodedMentions
from memory_enhancement.store import freshness
from memory_enhancement.store.disk import Store
from memory_enhancement.store.formats.base import MAX_FILE_BYTES
from memory_enhancement.store.scan import Snapshot
from memory_enhancement.store.state import State
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.mention_cache import Cached, MentionFree
from memory_enhancement.verify.repo import Repository


class Written:
    """One memory's mentions, and the memory file they were read from. (A plain class:
    every verify-all with mentions imports this module, and making a dataclass costs half
    a millisecond.)"""

    __slots__ = ("blob", "count", "file", "folder", "mentions", "path", "stamp")

    def __init__(
        self,
        path: str,  # the memory's store-relative path
        mentions: Sequence[Mention],  # read from the file, or as the cache kept them
        file: str,  # relative to the git work tree ("" when outside it)
        folder: str,  # the memory's folder relative to the repository root (for ../ links)
        blob: str,
        count: int = 0,  # its number of lines, as git counts them
        stamp: tuple[int, int] | None = None,  # (size, mtime_ns) when read, for the next run
    ) -> None:
        self.path, self.mentions, self.file, self.folder = path, mentions, file, folder
        self.blob, self.count, self.stamp = blob, count, stamp

    def with_mentions(self, mentions: Sequence[Mention]) -> Written:
        """The same memory file with only these of its mentions."""
        return Written(
            self.path, mentions, self.file, self.folder, self.blob, self.count, self.stamp
        )


class MentionReader:
    """Reads the mentions of one store's memory files. (A plain class, as MentionChecker:
    every verify-all imports this module, and making a dataclass costs more than the
    run's use of it.)"""

    def __init__(
        self,
        store: Store,
        repo: Repository,
        git: Git | None,
        state: State,
        scanned: Snapshot | None = None,
    ) -> None:
        self.store, self.repo, self.git, self.state = store, repo, git, state
        self.scanned = scanned  # the index's stats of this call (store/scan.py), if all

    def read_all(
        self,
        paths: Sequence[str],
        verifiable: Callable[[int], Verifiable],
        rows: Mapping[str, Cached],
    ) -> list[Written | None]:
        """Each memory's mentions (`paths[k]`, the memory `verifiable(k)` gives); a file
        that held none when last read, and has the same size and modification time now,
        is not read again, and one that held mentions is not read again either while its
        cached row says what they were (`rows`: the mention cache, by work-tree path).
        A memory (its citations) is asked for only when its file is read: a rerun reads
        none, and building 500 memories it never looks at cost as much as its lstats.

        A regular file's size and time are the index's sync's of this call when it stat-ed
        every file (`scanned`), else an `lstat` now; a symbolic link is read through the
        store every time. A stamp is kept for the next run only when the file's time is
        older than the stat by more than the filesystem's resolution (`freshness.settled`): a
        file written again within it may keep its size and time."""
        free = MentionFree(self.state)
        known = free.load()
        quiet: dict[str, tuple[int, int]] = {}
        noisy: list[str] = []
        found: list[Written | None] = []
        scanned = self.scanned
        since = scanned.taken_ns if scanned is not None else time.time_ns()
        files = scanned.files if scanned is not None else {}
        links = scanned.links if scanned is not None and scanned.links is not None else ()
        root = self._root + os.sep  # joined by hand: 1,000 memories are stat-ed per run
        for k, path in enumerate(paths):
            name = path + ".md"
            got = files.get(path)
            if got is not None and path not in links:
                stamp, link = (got[1], got[0]), False
            else:
                try:
                    seen = os.lstat(root + name)
                except OSError:
                    found.append(None)
                    continue
                stamp, link = (seen.st_size, seen.st_mtime_ns), stat.S_ISLNK(seen.st_mode)
            if not link:
                if known.get(name) == stamp:
                    found.append(None)
                    continue
                if rows and (item := self._as_read(path, stamp, rows)) is not None:
                    found.append(item)
                    continue
            data = self._bytes(path)
            item = None
            settled = freshness.settled(stamp[1], since)
            if data is not None:
                memory, lines, _ = verifiable(k)
                item = self._read(memory, lines, data, stamp if settled else None)
            found.append(item)
            if data is not None and (item is None or not item.mentions):
                if settled:
                    quiet[name] = stamp
                elif name in known:
                    noisy.append(name)
            elif name in known:
                noisy.append(name)
        free.save(quiet, noisy)
        return found

    def _read(
        self,
        memory: Memory,
        lines: Sequence[int | None],
        data: bytes,
        stamp: tuple[int, int] | None,
    ) -> Written | None:
        """The memory's mentions, read from its file as it is on disk (frontmatter
        included: `sources: [x.py:12]` is a mention the content alone would not show).

        Not on the rows of its citations table (`lines`, where the format read each
        declared citation): a snippet there quotes the cited file (`assert
        parse(".cs:5000")`), which the citation itself verifies; it is not the memory
        naming a line of code. A prose line holding an inline `[cite:file](...)` is
        the memory's own words: the other code it names there is still a mention."""
        if not may_mention(data):
            return None
        text = data.decode("utf-8", "replace").removeprefix("\ufeff")  # as edits see it
        if "\n" not in text:  # CR alone ends an old Mac file's lines (formats.decode)
            text = text.replace("\r", "\n")
        found = find_mentions(text)
        if not found:
            return None
        # A declared citation with a snippet verifies itself; one without is a line number
        # alone, as a mention is: its mentions (the frontmatter's `citations: [x.py:4]`, the
        # prose's) are judged from history, or it would read `valid` from a line count.
        # (An inline `[cite:file](x.py:4)` is itself a declared citation: not its own mention.)
        cited = memory.meta.citations
        declared = {c.ref for c in cited if c.snippet is not None}
        own = {(c.ref, n) for c, n in zip(cited, lines, strict=False) if c.snippet is None}
        rows = _table_rows(text, lines)
        mentions = [
            m
            for m in found
            if m.ref_text not in declared and (m.ref_text, m.line) not in own and m.line not in rows
        ]
        inside, folder = self._places(memory.path)
        count = text.count("\n") + (not text.endswith("\n") and bool(text))
        from memory_enhancement.verify.git_objects import blob_hash  # not on a rerun

        return Written(memory.path, mentions, inside, folder, blob_hash(data), count, stamp)

    def _as_read(
        self, path: str, stamp: tuple[int, int], rows: Mapping[str, Cached]
    ) -> Written | None:
        """The memory's mentions as the last run read them, if its file has the same size
        and modification time now (a rerun does not read, parse and hash it again)."""
        inside, folder = self._places(path)
        row = rows.get(inside) if inside else None
        if row is None:
            return None
        try:
            checked = row.checked
            if checked is None or checked.get("st") != [*stamp, GRAMMAR]:
                return None
            # Read only if judged again (or rooted.py must look at them).
            mentions = EncodedMentions(checked["w"], int(checked["k"]), bool(checked["r"]))
            count = int(checked["n"])
        except (ValueError, TypeError, KeyError):  # a damaged row: the file is read
            return None
        return Written(path, mentions, inside, folder, row.blob, count, stamp)

    def _places(self, path: str) -> tuple[str, str]:
        """The memory file's path in the git work tree ("" outside it), and its folder
        relative to the repository root (for `../` paths). Lexical, from where the store
        lies, worked out once per store folder (a memory path is a clean relative path)."""
        where, _, name = path.rpartition("/")
        found = self._folders.get(where)
        if found is None:
            found = self._folders[where] = self._folder_places(where)
        folder, top = found
        return ("" if top is None else f"{top}{name}.md"), folder

    def _folder_places(self, where: str) -> tuple[str, str | None]:
        """A store folder's `_places`: the folder relative to the repository root, and
        the prefix of its files' paths in the work tree (None outside it)."""
        to_repo, to_top = self._store_places
        folder = os.path.normpath(os.path.join(to_repo, where)).replace(os.sep, "/")
        folder = "" if folder == "." or folder.startswith("..") else folder
        if to_top is None:
            return folder, None
        rel = os.path.normpath(os.path.join(to_top, where, "x")).replace(os.sep, "/")
        return folder, (None if rel.startswith("..") else rel[:-1])

    @functools.cached_property
    def _folders(self) -> dict[str, tuple[str, str | None]]:
        """`_folder_places` of each store folder met so far (a store's memories share a
        few folders; each memory's places were worked out alone before)."""
        return {}

    @functools.cached_property
    def _store_places(self) -> tuple[str, str | None]:
        """The store folder relative to the repository root, and to the git work tree
        (None without git)."""
        store = os.path.abspath(self.store.root)
        to_top = os.path.relpath(store, self.git.toplevel) if self.git is not None else None
        return os.path.relpath(store, self.repo.root), to_top

    def _bytes(self, path: str) -> bytes | None:
        """A memory file's bytes, None when it cannot be read now (the index reports it).

        Every memory of the store is read on every run, so a plain file from the
        store's own scan is read directly; a symlink takes the store's full check
        (it must not lead out of the store)."""
        file = os.path.join(self._root, path + ".md")
        if os.path.islink(file):
            try:
                return self.store.read_bytes(path)[0]
            except MemoryToolError:
                return None
        try:
            with open(file, "rb") as handle:
                return handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return None

    @functools.cached_property
    def _root(self) -> str:
        return str(self.store.root)


def _table_rows(text: str, lines: Sequence[int | None]) -> set[int]:
    """The lines of `lines` that are not prose with an inline citation (Serena's
    `[cite:file](src/x.py:5)`, read as a declared citation where it stands): a table's
    row is one even when its snippet quotes such a citation."""
    if not any(lines):
        return set()
    split = text.split("\n")
    return {
        n
        for n in lines
        if n is not None
        and 0 < n <= len(split)
        and ("[cite:" not in split[n - 1] or split[n - 1].lstrip().startswith("|"))
    }
