"""What verifying a memory's mentions found, kept in the state database between runs.

Two answers are kept per memory file (`mention_history`, one row per file), and one per
name no file of the repository has (`mention_names`, see `NamesEver`):

- what history says each mention cited (the commit that last changed its memory
  line, the file and text then), valid while the file's blob hash is the same:
  a rerun does not blame again. A line not committed yet has no commit, and its
  answer changes once it is committed, so such a row also remembers HEAD.
- the verdicts themselves, with a fingerprint of what they depend on now: HEAD,
  git's index, and the size and modification time of every file they name. A
  rerun with nothing changed takes them as they are and asks git nothing but HEAD;
  any change to those files, a commit or a `git add` makes them be judged again.
"""

from __future__ import annotations

import json
import json.scanner
import os
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from memory_enhancement.core.mentions import GRAMMAR
from memory_enhancement.core.verdicts import CitationCheck
from memory_enhancement.store.state import State
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.history import MENTION_CACHE, cache_generation

VERSION = 19  # of the verdicts (encoding, judging, wording, what they depend on): a new one
# makes fingerprints differ (11: bare names settled by their memory, mention_context.py;
# 12: rows kept as bytes, the fingerprint after the parts instead of in the header;
# 13: a file missing since its mention, renamed by the commit deleting it, deletions.py;
# lines of a file git never tracked, mention_checks.untracked; lines a shorter rewrite
# left behind told gone, decisions.stale; 14: a gone folder's reason names the commit its
# last file went in, deletions.py; 15: a partial folder told by its section's heading,
# mention_context.py; 16: a file's path that is a folder now, `App.xcodeproj`, valid,
# file_checks.py; 17: a partial folder told by the list item it is nested in,
# mention_context.py; 18: a file renamed by its deleting commit and renamed again since,
# followed to its last name, deletions.renamed_by; 19: a file renamed in a commit since
# and again by a staged `git mv`, followed to the index, mention_diffs._through_staged; a
# folder moved by a staged `git mv`, folder_checks.renames_from; a partial folder told by a
# file named beside it, mention_context._beside)
_GRAMMAR_ROW = "grammar"  # in mention_free, where every memory file's name ends in `.md`
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class Cached:
    """One memory file's row: what history said, and the verdicts last given.

    The JSON is decoded only when asked for: a rerun with nothing changed reads
    the verdicts and never the (larger) history part.
    """

    def __init__(
        self,
        blob: str,
        head: str | None,
        data: Mapping[str, Any] | str,
        checked: Mapping[str, Any] | bytes | None = None,
    ) -> None:
        self.blob = blob
        self.head = head  # HEAD when some answer depended on it, else None
        self._data = data
        self._checked = checked

    @property
    def data(self) -> Mapping[str, Any]:
        """What history said; ValueError when the row is damaged (not a JSON object)."""
        data = self._data
        if not isinstance(data, dict):
            data = self._data = _object(_decoded(data) if isinstance(data, str) else None)
        return data

    @property
    def checked(self) -> Mapping[str, Any] | None:
        """The verdicts last given, or None: {"fp": fingerprint (`Fingerprints.of`; ""
        for none), "s": [status, ...], "f": [[target, line, reason] of each failing one],
        "h": whether verify/rooted.py may show or hide one by the work tree's folders
        alone (`hidable`), "c": their rows, "j": their JSON as front ends show it, "p": the
        memory's JSON around them when it cites nothing else ("": it does;
        core/verdict_rows.py)} and, while the memory file is as it was read, {"st":
        [size, mtime, grammar], "n": its lines, "k": its mentions' count, "r": whether one
        is rooted, "w": their rows}. "c" and "w" stay JSON, as the UTF-8 bytes kept, and
        "j" and "p" text: a rerun reads them as they are and the rows only if something asks
        (core/verdict_rows.Recalled).

        Kept as bytes sealed with their CRC-32 (`_seal`): a row whose bytes changed
        since it was written (a damaged database), or text (an older version's row),
        raises ValueError, as one that does not parse, and is judged again. So the
        verdicts a rerun hands on as rows, unbuilt and unchecked, are exactly the ones
        a run wrote."""
        checked = self._checked
        if checked is not None and not isinstance(checked, dict):
            sealed = checked if isinstance(checked, bytes) else b""  # text, a number: not ours
            header, rows, said, wire, tail, fingerprint = _unsealed(sealed)
            checked = _object(_header(header.decode()))
            if checked.get("e") != len(fingerprint):  # its lines are the row's last
                raise ValueError("a cached row is not in this version's form")
            self._checked = checked
            checked["c"], checked["w"] = rows, said
            checked["j"], checked["p"] = wire.decode(), tail.decode()
            checked["fp"] = fingerprint.decode()
        return checked

    def with_checked(self, checked: Mapping[str, Any]) -> Cached:
        return Cached(self.blob, self.head, self._data, checked)

    def encoded(self) -> tuple[str, bytes | None]:
        data = self._data if isinstance(self._data, str) else _ENCODE(self._data)
        checked = self._checked
        if checked is not None and not isinstance(checked, bytes):
            checked = _seal(_joined(checked))
        return data, checked


# What a verdicts row keeps after its header, in this order, each on a line of its own (JSON
# has no break), but the fingerprint: last, as its lines are (`Fingerprints.of`)
_PARTS = ("c", "w", "j", "p", "fp")


def _joined(checked: Mapping[str, Any]) -> bytes:
    """A verdicts row as kept: its header, then "c" and "w" as JSON, "j", "p" and the
    fingerprint as they are, each from a line of its own (a part given as bytes, as read, is kept as
    it is). The fingerprint is not a JSON string in the header: a rerun reads 500 headers,
    and scanning the fingerprints' escaped breaks and tabs was half of it."""
    fingerprint = (checked.get("fp") or "").encode()
    header = {key: value for key, value in checked.items() if key not in _PARTS}
    header["e"] = len(fingerprint)  # a line more or fewer is another form, not a fingerprint
    parts = [
        value if isinstance(value := checked.get(key), bytes) else _ENCODE(value).encode()
        for key in ("c", "w")
    ]
    wire, tail = checked.get("j", "").encode(), checked.get("p", "").encode()
    return b"\n".join([_ENCODE(header).encode(), *parts, wire, tail, fingerprint])


def _decoded(text: str) -> Any:
    """JSON text as the cache wrote it; ValueError for any other, nested past what the
    decoder's recursion allows included (`[` a hundred thousand times: a damaged row)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("a cached value is nested too deep") from None


# C: what json.loads runs, bare (typeshed types the argument as the scanner's own context)
_SCAN: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(
    json.JSONDecoder()  # type: ignore[arg-type]
)


def _header(text: str) -> Any:
    """A verdicts row's header, JSON as `_ENCODE` writes it (no space around it); ValueError
    for any other. Read by the decoder's scanner itself: a rerun reads 500 of them, and
    `json.loads` adds three Python calls and two regular-expression matches to each."""
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:  # not a JSON value at all
        raise ValueError("a cached row's header is not JSON") from None
    except RecursionError:
        raise ValueError("a cached value is nested too deep") from None
    if end != len(text):
        raise ValueError("a cached row's header is not JSON")
    return value


def _object(value: Any) -> dict[str, Any]:
    """A row's JSON as the tool writes it (an object): a damaged database may hold
    another type in the column (SQLite keeps any), read as a row that does not parse."""
    if not isinstance(value, dict):
        raise ValueError("a cached row is not a JSON object")
    return value


def _seal(row: bytes) -> bytes:
    """The row behind its CRC-32 in hex (0.5 ms for a store's 800 KB of verdicts)."""
    return b"%08x%b" % (zlib.crc32(row), row)


def _unsealed(sealed: bytes) -> list[bytes]:
    """A sealed row's header and `_PARTS`; ValueError when its bytes changed since it was
    written, or it has fewer lines (another version's row).

    Bytes, as SQLite keeps them: a row kept as text was decoded from UTF-8 by SQLite and
    encoded again for the checksum (2 MB a rerun). The lines are found with `bytes.find`,
    which skips to each break: `split` looks at every byte, and a rerun unseals a store's
    2 MB of rows (10M instructions, as much as the checksum)."""
    if sealed[:8] != b"%08x" % zlib.crc32(memoryview(sealed)[8:]):
        raise ValueError("a kept verdict row changed since it was written")
    lines = []
    start = 8
    for _ in _PARTS:  # the header, then each part but the last
        end = sealed.find(b"\n", start)
        if end < 0:
            raise ValueError("a cached row is not in this version's form")
        lines.append(sealed[start:end])
        start = end + 1
    lines.append(sealed[start:])  # the fingerprint, its lines and all
    return lines


class MentionCache:
    """The `mention_history` table of the state database.

    `seen` is the cache's generation as this run read it (`load_all`) or wrote it
    (`save`): a token each save rewrites (verify/history.py keeps it beside its marks).
    The history vouches for kept verdicts without comparing them only while the cache is
    still at that generation; None when another run saved verdicts between this run's
    reading and its own save (what this run kept may not be what the cache holds)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.seen: str | None = None

    def load_all(self) -> dict[str, Cached]:
        """Every row, by memory file (work-tree path), and the generation they are of,
        read together."""
        with self.state.connect() as db:
            db.execute("BEGIN")
            try:
                self.seen = cache_generation(db)
                rows = db.execute(
                    "SELECT path, blob, head, data, checked FROM mention_history"
                ).fetchall()
            finally:
                db.execute("COMMIT")
        return {path: Cached(blob, head, data, checked) for path, blob, head, data, checked in rows}

    def save(self, rows: Mapping[str, Cached]) -> None:
        """Keep these rows, and move the cache to a new generation (`seen`)."""
        if not rows:
            return
        values = [(p, c.blob, c.head, *c.encoded()) for p, c in rows.items()]
        token = uuid.uuid4().hex
        with self.state.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                unchanged = cache_generation(db) == self.seen
                db.executemany(
                    "INSERT OR REPLACE INTO mention_history(path, blob, head, data, checked) "
                    "VALUES (?, ?, ?, ?, ?)",
                    values,
                )
                db.execute(
                    "INSERT OR REPLACE INTO history_marks(key, value) VALUES (?, ?)",
                    (MENTION_CACHE, token),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        self.seen = token if unchanged else None


class MentionFree:
    """The memory files (store-relative) that held no mention when last read, by size
    and modification time: a rerun does not read them again while those hold. A row
    no memory file can have (`_GRAMMAR_ROW`) says which grammar read them: under
    another, every file is read again."""

    def __init__(self, state: State) -> None:
        self.state = state
        self._stale = False  # the rows were written by another grammar

    def load(self) -> dict[str, tuple[int, int]]:
        with self.state.connect() as db:
            rows = db.execute("SELECT path, size, mtime_ns FROM mention_free").fetchall()
        known = {path: (size, mtime) for path, size, mtime in rows}
        if known.pop(_GRAMMAR_ROW, None) != (GRAMMAR, 0):
            self._stale = True
            return {}
        return known

    def save(self, quiet: Mapping[str, tuple[int, int]], gone: Iterable[str]) -> None:
        gone = list(gone)
        if not quiet and not gone and not self._stale:
            return
        with self.state.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                if self._stale:
                    db.execute("DELETE FROM mention_free")
                    quiet = {**quiet, _GRAMMAR_ROW: (GRAMMAR, 0)}
                db.executemany("DELETE FROM mention_free WHERE path = ?", [(p,) for p in gone])
                db.executemany(
                    "INSERT OR REPLACE INTO mention_free(path, size, mtime_ns) VALUES (?, ?, ?)",
                    [(p, size, mtime) for p, (size, mtime) in quiet.items()],
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise


class CloneNames:
    """What an author's clone of the repository is called (`GitHistory.clone_names`: the
    root's folder and the origin remote's repository name), kept while git's config file
    is the same file, unchanged (`_config_stamp`). Every run of a store with a path on a
    machine under folders (`/Users/me/repo/file.json`) asks it (verify/rooted.py), and
    asking meant a `git config` and the history walker's import: 5 ms of a rerun."""

    def __init__(self, state: State) -> None:
        self.state = state

    def of(self, git: Git) -> frozenset[str]:
        config = git.toplevel / ".git" / "config"  # a linked work tree's is elsewhere: asked
        stamp = _config_stamp(str(config)) if config.parent.is_dir() else "-"
        where = [str(git.toplevel), git.prefix, stamp]
        if stamp != "-":
            with self.state.connect() as db:
                row = db.execute("SELECT value FROM facts WHERE key = 'clone_names'").fetchone()
            try:
                kept = _decoded(row[0]) if row and isinstance(row[0], str) else None
            except ValueError:  # a damaged value: asked again, and written over
                kept = None
            if isinstance(kept, list) and len(kept) == 2 and kept[0] == where:
                names = kept[1]
                if isinstance(names, list) and all(isinstance(name, str) for name in names):
                    return frozenset(names)
        from memory_enhancement.verify.blame import GitHistory  # only when not kept

        found = GitHistory(git).clone_names()
        if stamp != "-":
            value = _ENCODE([where, sorted(found)])
            with self.state.connect() as db:
                db.execute(
                    "INSERT OR REPLACE INTO facts(key, value) VALUES ('clone_names', ?)", (value,)
                )
        return found


class NamesEver:
    """`GitHistory.ever_named`'s answers, kept between runs for the HEAD they were asked
    at: a store outside the work tree has its mentions judged again by every run (no
    memory file of it has history to key a cache on), and each name no file now has
    would walk the whole history again (a second per name on 2,600 commits)."""

    def __init__(self, state: State) -> None:
        self.state = state

    def load(self, head: str) -> dict[str, bool]:
        with self.state.connect() as db:
            rows = db.execute("SELECT name, named FROM mention_names WHERE head = ?", (head,))
            return {name: bool(named) for name, named in rows}

    def save(self, head: str, answers: Mapping[str, bool]) -> None:
        if not answers:
            return
        with self.state.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM mention_names WHERE head != ?", (head,))
                db.executemany(
                    "INSERT OR REPLACE INTO mention_names(name, head, named) VALUES (?, ?, ?)",
                    [(name, head, int(named)) for name, named in answers.items()],
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise


def _config_stamp(file: str) -> str:
    """git's config file as CloneNames keeps it: its size, modification and change times
    and inode (a file put back with its old mtime, `cp -p`, still has a new change time)."""
    try:
        found = os.stat(file)
    except (OSError, ValueError):
        return "-"
    return f"{found.st_size}:{found.st_mtime_ns}:{found.st_ctime_ns}:{found.st_ino}"


# Where a reason points a gone file's code to: `ELSEWHERE path`, `ENDING ending NOW_IS path`
ELSEWHERE = "; the one file of that name now is "
ENDING, NOW_IS, HAS = "; the one file ending in ", " now is ", ", which has "  # HAS: its lines


def pointed_to(reason: str) -> str | None:
    """The file a reason points to as where a gone file's code may live now, if any."""
    ending = reason.rpartition(ENDING)[2].partition(NOW_IS)[2] if ENDING in reason else ""
    found = reason.rpartition(ELSEWHERE)[2] if ELSEWHERE in reason else ending
    return found.partition(HAS)[0] or None


def named_paths(checks: Iterable[CitationCheck]) -> list[str]:
    """The files a memory's verdicts depend on: each cited, where it is now, one pointed to."""
    paths = set()
    for check in checks:
        for path in (check.citation.target, check.current_path, check.renamed_to,
                     pointed_to(check.reason)):  # fmt: skip
            if path and not check.citation.is_url:
                paths.add(path)
    return sorted(paths)
