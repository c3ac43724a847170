"""What verifying a memory's mentions found, kept in the state database between runs.

Two answers are kept per memory file (`mention_history`, one row per file), and one per
name no file of the repository has (`mention_names`, see `NamesEver`):

- what history says each mention cited (the commit that last changed its memory
  line, the file and text then), valid while the file's blob hash is the same:
  a rerun does not blame again. A line not committed yet has no commit, and its
  answer changes once it is committed, so such a row also remembers HEAD.
- the verdicts themselves, with a fingerprint of what they depend on now: HEAD,
  git's index, and the size and modification time of every file they name. A
  rerun with nothing changed takes them as they are and asks git nothing at all;
  any change to those files, a commit or a `git add` makes them be judged again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memory_enhancement.core.mentions import GRAMMAR, Mention
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.store.state import State

VERSION = 5  # of the verdicts (encoding, judging, wording): a new one makes fingerprints differ
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
        checked: Mapping[str, Any] | str | None = None,
    ) -> None:
        self.blob = blob
        self.head = head  # HEAD when some answer depended on it, else None
        self._data = data
        self._checked = checked

    @property
    def data(self) -> Mapping[str, Any]:
        data = self._data
        if isinstance(data, str):
            data = self._data = json.loads(data)
        assert not isinstance(data, str)
        return data

    @property
    def checked(self) -> Mapping[str, Any] | None:
        """{"fp": fingerprint, "paths": [...], "c": [check, ...]}, or None."""
        checked = self._checked
        if isinstance(checked, str):
            checked = self._checked = json.loads(checked)
        assert not isinstance(checked, str)
        return checked

    def with_checked(self, checked: Mapping[str, Any]) -> Cached:
        return Cached(self.blob, self.head, self._data, checked)

    def encoded(self) -> tuple[str, str | None]:
        data = self._data if isinstance(self._data, str) else _ENCODE(self._data)
        checked = self._checked
        if checked is not None and not isinstance(checked, str):
            checked = _ENCODE(checked)
        return data, checked


class MentionCache:
    """The `mention_history` table of the state database."""

    def __init__(self, state: State) -> None:
        self.state = state

    def load(self, paths: Sequence[str]) -> dict[str, Cached]:
        wanted = set(paths)
        if not wanted:
            return {}
        return {path: row for path, row in self.load_all().items() if path in wanted}

    def load_all(self) -> dict[str, Cached]:
        """Every row, by memory file (work-tree path)."""
        with self.state.connect() as db:
            rows = db.execute("SELECT path, blob, head, data, checked FROM mention_history")
            return {
                path: Cached(blob, head, data, checked) for path, blob, head, data, checked in rows
            }

    def save(self, rows: Mapping[str, Cached]) -> None:
        if not rows:
            return
        values = [(p, c.blob, c.head, *c.encoded()) for p, c in rows.items()]
        with self.state.connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT OR REPLACE INTO mention_history(path, blob, head, data, checked) "
                    "VALUES (?, ?, ?, ?, ?)",
                    values,
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise


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


class Fingerprints:
    """The fingerprints of one run: where git's index is, worked out once (a run takes one
    per memory file with mentions, twice), the files stat-ed by string paths."""

    def __init__(self, repo_root: Path, toplevel: Path | None) -> None:
        self.root = str(repo_root)
        git_dir = toplevel / ".git" if toplevel is not None else None
        self.index = str(git_dir / "index") if git_dir is not None and git_dir.is_dir() else None

    def of(self, head: str | None, paths: Iterable[str]) -> str:
        return fingerprint(head, self.index, self.root, paths, self._stats)

    @functools.cached_property
    def _stats(self) -> dict[str, list[int] | None]:
        """Each file stat-ed once per run: memories name the same files (a store's file
        mentions name the same few hundred files again and again)."""
        return {}


def fingerprint(
    head: str | None,
    index: str | None,
    repo_root: str,
    paths: Iterable[str],
    stats: dict[str, list[int] | None] | None = None,
) -> str:
    """What a memory's verdicts depend on now: the grammar that read its mentions, HEAD,
    git's index (`index`: its file), and each named file (its size and modification time,
    or its absence; `stats`: those of this run so far). Stats only: no file is read."""
    parts: list[Any] = [VERSION, GRAMMAR, head, _stat(index) if index else None]
    known = {} if stats is None else stats
    for path in sorted(set(paths)):
        if path not in known:
            known[path] = _stat(os.path.join(repo_root, path))
        parts.append([path, known[path]])
    return hashlib.sha1(_ENCODE(parts).encode()).hexdigest()


def _stat(file: str) -> list[int] | None:
    try:
        found = os.stat(file)
    except (OSError, ValueError):
        return None
    return [found.st_size, found.st_mtime_ns]


def named_paths(checks: Iterable[CitationCheck]) -> list[str]:
    """The files a memory's verdicts depend on: each cited file, where it is now."""
    paths = set()
    for check in checks:
        for path in (check.citation.target, check.current_path, check.renamed_to):
            if path and not check.citation.is_url:
                paths.add(path)
    return sorted(paths)


def encode_check(check: CitationCheck) -> list[Any]:
    c = check.citation
    return [
        c.target, c.line, c.end_line, c.snippet, c.commit, check.status._value_,
        check.current_path, check.current_line, check.reason, check.renamed_to,
        check.written_in, list(check.candidates), check.current_end,
    ]  # fmt: skip


def encode_mention(m: Mention) -> list[Any]:
    return [
        m.line, m.column, m.text, m.path, m.start, m.end, m.form, m.path_at, m.start_at,
        m.end_at, m.repository, m.ref, m.in_code, m.rooted,
    ]  # fmt: skip


def decode_mention(row: list[Any]) -> Mention:
    line, column, text, path, start, end, form, path_at, start_at, end_at, repo, ref, code, at = row
    return Mention(
        line, column, text, path, start, end, form, _span(path_at), _span(start_at),
        _span(end_at), repo, ref, code, bool(at),
    )  # fmt: skip


def _pair(value: list[int]) -> tuple[int, int]:
    first, last = value
    return int(first), int(last)


def _span(value: list[int] | None) -> tuple[int, int] | None:
    return None if value is None else _pair(value)


def decode_check(row: list[Any], mention: Mention) -> CitationCheck:
    target, line, end, snippet, commit, status, path, at, reason, renamed, written, cands, last = (
        row
    )
    citation = Citation(target, line, end, snippet, commit=commit)
    return CitationCheck(
        citation, Verdict(status), path, at, reason, renamed, mention, written, tuple(cands), last
    )
