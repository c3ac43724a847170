"""Paths written from the root: the repository's, a machine's, or a library's id.

A file mention written from the root (`/src/app.py`, `/package.json`) is the
repository's path (core/file_mentions.py), but only where the repository has its
first folder: `/usr/local/bin/x.sh` and `/tmp/out.log` are a machine's unless the
repository keeps a `usr/` or `tmp/` of its own (such mentions are not verified) or the
path runs through the author's clone of it (`/home/me/<name>/src/x.py`), and
a rooted `/owner/name.ext` that named no file here, then or now (`skipped`; or now,
in a memory file git has no history of: `unchecked`), under a first folder the
repository has not is a library's id (Context7's `/vercel/next.js`) or a web route
(`/api/users.json`): it is not reported either. A folder mention from the root
(`/pane/dev/`, core/folder_mentions.py) is reported whatever it named.

Every verify-all asks this of every memory with mentions, reruns included, so it
asks the work tree (one stat per first folder) and git's list of files only for a
machine's folder name the work tree has (`bin/`: often an untracked build folder).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memory_enhancement.core.file_mentions import on_machine
from memory_enhancement.core.folder_mentions import FOLDER
from memory_enhancement.core.mentions import Mention
from memory_enhancement.core.verdict_rows import (
    MENTION_FORM,
    MENTION_PATH,
    MENTION_ROOTED,
    STATUS,
    EncodedMentions,
    Recalled,
)
from memory_enhancement.core.verdicts import CitationCheck
from memory_enhancement.verify.mention_reading import Written

if TYPE_CHECKING:
    from memory_enhancement.core.file_list import FileList

# The verdicts on a file mention that names no file now: never one (`skipped`), or none
# now and no history to ask (`unchecked`: a memory file git does not track).
_NO_FILE = frozenset({"skipped", "unchecked"})


class Folders:
    """Whether the repository has a first folder of a name, asked once per name a run."""

    def __init__(
        self,
        root: str,
        files_now: Callable[[], FileList],
        clones: Callable[[], frozenset[str]] = frozenset,
    ) -> None:
        self.root = root
        self.files_now = files_now  # git's list of files now (asked only when needed)
        self.clones = clones  # what the author's clone is named (FileList.clones)
        self._known: dict[tuple[str, bool], bool] = {}

    def has(self, name: str, *, tracked: bool = False) -> bool:
        """A first folder of this name in the work tree (`tracked`: one git tracks)."""
        if (name, tracked) not in self._known:
            there = os.path.isdir(os.path.join(self.root, name))
            if there and tracked:
                there = self.files_now().has_folder(name)
            self._known[name, tracked] = there
        return self._known[name, tracked]

    def here(self, found: Sequence[Written | None]) -> list[Written | None]:
        """The memories' mentions less those under a machine's first folder (`/etc/`,
        `/tmp/`) that the repository does not track a folder of: paths on a machine."""
        out: list[Written | None] = []
        for item in found:
            if item is not None and _on_machine(item.mentions):
                item = item.with_mentions([m for m in item.mentions if self._ours(m)])
            out.append(item)
        return out

    def shown(
        self, checks: tuple[CitationCheck, ...] | Recalled
    ) -> tuple[CitationCheck, ...] | Recalled:
        """The verdicts less those on a library's id or a web route (see above). A longer
        path from the root may be the author's clone (`/workspaces/LoRAIro/src/...`,
        NEXTAltair/LoRAIro's) and stays. Kept verdicts are read as their rows."""
        if isinstance(checks, Recalled):
            if not checks.rooted:
                return checks
            keep = [
                n
                for n, (check, said) in enumerate(zip(checks.checks, checks.mentions, strict=True))
                if said[MENTION_FORM] == FOLDER
                or not self._left_out(check[STATUS], said[MENTION_ROOTED], said[MENTION_PATH])
            ]
            if len(keep) == len(checks):
                return checks
            return Recalled([checks.checks[n] for n in keep], [checks.mentions[n] for n in keep])
        return tuple(
            c
            for c in checks
            if c.mention is None
            or c.mention.form == FOLDER
            or not self._left_out(c.status._value_, c.mention.rooted, c.mention.path)
        )

    def _ours(self, mention: Mention) -> bool:
        folder = on_machine(mention.path) if mention.rooted else None
        return folder is None or self.has(folder, tracked=True) or self._clone(mention.path)

    def _clone(self, path: str) -> bool:
        """Whether a path on a machine lies in the author's clone of this repository: under
        a folder named as it (`/home/me/<name>/src/x.py`, `/workspaces/<name>/...`; 18
        such paths naming files in 5 of 121 fetched stores). The work tree's own name is
        asked first, the origin remote's (one `git config`) only when that is not it."""
        parts = [part.lower() for part in path.split("/")[1:-1]]
        if os.path.basename(self.root).lower() in parts:
            return True
        return bool(parts) and not self.clones().isdisjoint(parts)

    def _left_out(self, status: str, rooted: bool, path: str) -> bool:
        """Whether a verdict is on a library's id or a web route: one that found no file,
        on a path from the root of one folder and a name, under a folder not here; or on a
        machine's path kept for a folder named as the repository that named no file of it
        (`/etc/pane/services.toml` in lane-core/pane: the system's, not the clone's)."""
        if not hidable(status, rooted, path):
            return False
        folder = on_machine(path)
        return self._elsewhere(path) or (folder is not None and not self.has(folder, tracked=True))

    def _elsewhere(self, path: str) -> bool:
        """A path of one folder and a name under a first folder the repository has not."""
        parts = path.split("/")
        return len(parts) == 2 and not self.has(parts[0])


def _on_machine(mentions: Sequence[Mention]) -> bool:
    """Whether any of these mentions is a path from the root under a machine's folder;
    mentions a rerun took from the cache are asked as their rows (not decoded for it)."""
    if isinstance(mentions, EncodedMentions):
        if not mentions.rooted:
            return False
        rows = mentions.rows
        return any(row[MENTION_ROOTED] and on_machine(row[MENTION_PATH]) for row in rows)
    return any(m.rooted and on_machine(m.path) for m in mentions)


def hidable(status: str, rooted: bool, path: str) -> bool:
    """Whether a verdict may be left out, or not, by the folders of the work tree alone
    (`Folders._left_out`): one on a path from the root that named no file, of one folder
    and a name or under a machine's first folder."""
    return rooted and status in _NO_FILE and (path.count("/") == 1 or bool(on_machine(path)))


def hidable_check(check: CitationCheck) -> bool:
    """`hidable` of a verdict on a mention. Never one on a folder (`/pane/dev/`): no
    library's id is written so, and each folder mention gets its verdict, `skipped` when
    the repository never had that folder."""
    m = check.mention
    return m is not None and m.form != FOLDER and hidable(check.status._value_, m.rooted, m.path)
