"""Cited files as the last whole-store verification judged them, kept while nothing changed.

A verification of the whole store judges every citation of every cited file. Most
files are exactly as they were at the last such run, and so are their citations, HEAD
and the files git tracks: the verdicts would be the same. So a whole-store run records (in the
index, `settled_files`) each cited file it read, with its verdicts (only those that
are not "valid on its line", by the citation's position among the file's) and what
they depended on:

- the file's stat when it was read: size, modification time, inode and change time
  (as git and this index tell a changed file: a write changes them);
- HEAD, the files git tracks and the repository root (which commit a citation's stamp
  names, whether history can tell about a file, which files are compared, what git's
  diffs say);
- the citations of the file: any change to one (a memory edited, added, removed)
  forgets the file's record, in the same transaction (the index's triggers), and a run
  records nothing if a citation changed while it judged.

A later whole-store run that finds the same stamp takes the verdicts as recorded: it
neither reads the file nor asks git about it. A file written within the filesystem's
timestamp resolution before it was read is not recorded (a second write in the same
tick would not show in its stat); a file that is missing, binary or outside the
repository is never recorded (it has no stamp), and `verify-all --recheck` judges
every file again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from memory_enhancement.core.batch import CitedBatch
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.store.freshness import RACY_NS
from memory_enhancement.verify.git import Git

Stamp = tuple[int, int, int, int]  # size, mtime_ns, inode, ctime_ns
Record = tuple[str, str | None]  # the stamp as text, the verdicts that are not valid (JSON)


class SettledFiles:
    """What a whole-store run knows of each cited file from the last one, and learns.

    `known` maps a file to its record (from the index); after the run `found` holds
    the record of every file judged or found unchanged, and `changed` tells whether
    that differs from `known` (only then is it written back).
    """

    def __init__(
        self,
        known: Mapping[str, Record],
        git: Git | None,
        repo_root: str,
        started_ns: int,
        mark: str = "",
    ) -> None:
        self.known = known
        self.mark = mark  # the index and its count of citation changes, when `known` was read
        self.found: dict[str, Record] = {}
        self._racy_after = started_ns - RACY_NS
        self._git = git
        self._root = repo_root
        self._context: str | None = None

    def recall(self, target: str, now: Stamp | None) -> dict[str, list[object]] | None:
        """The verdicts recorded for the file (by position; those not listed were valid on
        their lines) when it is as it was then, else None."""
        record = self.known.get(target)
        if record is None or now is None or record[0] != self._text(now):
            return None
        try:
            verdicts = json.loads(record[1]) if record[1] else {}
        except ValueError:
            return None  # a damaged record: the file is judged again
        if not isinstance(verdicts, dict):
            return None
        self.found[target] = record
        return verdicts

    def record(self, target: str, stamp: Stamp | None, checks: Mapping[int, CitationCheck]) -> None:
        """The file was read at this stamp and judged: these are its citations' verdicts
        that are not "valid on its line", by position (unless the file was written too
        recently for its stat to tell a later write apart)."""
        if stamp is None or stamp[1] >= self._racy_after:
            self.found.pop(target, None)  # a record recalled but not taken: let it go
            return
        verdicts = {str(n): _encode(check) for n, check in checks.items()}
        self.found[target] = (self._text(stamp), json.dumps(verdicts) if verdicts else None)

    @property
    def changed(self) -> bool:
        return self.found != self.known

    @property
    def context(self) -> str:
        """What every cited file's verdicts depend on besides the file: the repository
        root, HEAD and the files git tracks (which citations history can tell about).
        Asked when first needed: a run whose history was walked knows HEAD already.
        (Not git's index file itself: `git diff` rewrites it when it refreshes the
        stat data it caches, which changes nothing a verdict reads.)"""
        if self._context is None:
            git = self._git
            if git is None:
                self._context = f"{self._root}|no git"
            else:
                head = git.current_commit() or "no HEAD"
                listed = "\0".join(sorted(git.tracked)).encode("utf-8", "surrogateescape")
                tracked = hashlib.sha1(listed, usedforsecurity=False).hexdigest()
                self._context = f"{self._root}|{head}|{tracked}"
        return self._context

    def _text(self, stamp: Stamp) -> str:
        return f"{stamp[0]}:{stamp[1]}:{stamp[2]}:{stamp[3]}|{self.context}"


def give(
    recorded: dict[str, list[object]],
    indexes: list[int],
    batch: CitedBatch,
    valid: bytearray,
    checks: dict[int, CitationCheck],
) -> bool:
    """Give a file's citations (rows `indexes`) the verdicts recorded for them; False, and
    nothing given, when the record does not fit them (a damaged record)."""
    if any(not key.isdigit() or int(key) >= len(indexes) for key in recorded):
        return False
    given: dict[int, CitationCheck] = {}
    try:
        for key, saved in recorded.items():
            k = indexes[int(key)]
            given[k] = recalled(batch.citation(k), saved)
    except (ValueError, TypeError):
        return False
    checks.update(given)
    for k in indexes:
        if k not in given:
            valid[k] = 1
    return True


def recalled(citation: Citation, saved: list[object]) -> CitationCheck:
    """A recorded verdict on this citation, as it was given."""
    status, path, line, reason, renamed, end = saved
    return CitationCheck(
        citation, Verdict(status), _opt_str(path), _opt_int(line), str(reason),
        _opt_str(renamed), current_end=_opt_int(end),
    )  # fmt: skip


def _encode(check: CitationCheck) -> list[object]:
    return [check.status._value_, check.current_path, check.current_line, check.reason,
            check.renamed_to, check.current_end]  # fmt: skip


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def _opt_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
