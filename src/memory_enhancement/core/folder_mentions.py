"""Folder mentions: a backticked repository folder, `` `src/api/handlers/` ``.

Memories describe a project's layout with folders ("handlers live in `src/api/handlers/`"),
and a reorganisation that moves or removes one leaves them wrong. Over 70 fetched stores
(the corpus and the `.serena/memories/` of /work/.mirror), inline code spans holding a path
that ends with `/` are 2,228 over 59 stores (1,911 plain, 207 from the root, 56 in a home,
19 globs, 22 URL schemes, 13 `../`), bold ones 70 over 11; this grammar reads 2,015 of them
in 599 memory files (docs/benchmarks.md, "Session 34").
What such a mention claims is that the repository has that folder: it is verified as file
mentions are (verify/folder_checks.py), from the files git tracks under it.

The form follows file mentions (core/file_mentions.py):

- the whole inline code span, or the whole bold span, is the path, and it ends with `/`
  (a span without the slash, `` `src/claude` ``, is as often a branch, `origin/main`, a
  module or a package name: not read);
- a leading `./` or `/` is the repository's root (`Mention.rooted` for the `/`), but not a
  machine's first folder (`/usr/local/`, `/tmp/`: file_mentions.on_machine), nor a home
  (`~/.claude/`), nor `../`, nor a host (`github.com/owner/`), nor a glob (`src/**/`) or a URL
  (`file:///x/`): their characters are no folder name's;
- not in a fenced code block, nor where another mention stands.

The mention's `path` is the folder as written without its last `/`; `text` keeps it.
"""

from __future__ import annotations

import functools
import re

from memory_enhancement.core import prose_mentions as prose
from memory_enhancement.core.file_mentions import on_machine

FOLDER = "folder"  # `Mention.form` of these

_NAME = r"[\w.@+-]"
_SEGMENT = rf"(?:{_NAME}+|{prose.BRACKETED}|\([A-Za-z0-9_.-]+\))"
_PATH = rf"(?P<root>/)?(?P<path>(?:\./)?(?:{_SEGMENT}/)*{_SEGMENT})/"
# Each opens with a literal (a pattern opening with one is searched for it alone).
_SPAN = rf"`(?<!``){_PATH}`(?!`)"
_BOLD = rf"\*\*{_PATH}\*\*|__(?<!\w__){_PATH.replace('?P<', '?P<u')}__(?!\w)"
# Where a memory's text or bytes may hold one: a `/` closing a span or a bold run. The
# literals cost a search for two characters, not a regex's.
HINT = re.compile(r"/`|/\*\*|/__")
HINT_BYTES = re.compile(rb"/`|/\*\*|/__")
PATTERN = "\0".join((_SPAN, _BOLD))  # for the checksum (mentions.GRAMMAR)
# `github.com/owner/`: a web address.
_HOST = r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?:com|org|net|io|dev|ai|app|co|in)(?:/|$)"


@functools.cache
def _compiled() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The forms, compiled when a memory's text is first read for folders: a rerun that
    reads no memory compiles none of them (compiling them cost every run's import 13 M
    instructions, 2% of a rerun of the corpus)."""
    # a folder's name has a letter or a digit
    return re.compile(_SPAN), re.compile(_BOLD), re.compile(_HOST), re.compile(r"[^\W_]")


def find_in_line(raw: str) -> list[tuple[int, str, bool]]:
    """The folder mentions of one line of a memory: (column of the path, the path without
    its last `/`, whether it is written from the root: a `/` before the column)."""
    found = []
    span, bold, host, letter = _compiled()
    for form in (span, bold) if "**" in raw or "__" in raw else (span,):
        for m in form.finditer(raw):
            named = "path" if m["path"] is not None else "upath"
            root = m["root"] if named == "path" else m["uroot"]
            path = m[named]
            parts = path.removeprefix("./").split("/")
            if any(p in (".", "..", "...") for p in parts):
                continue
            if host.match(path) or not all(letter.search(p) for p in parts):
                continue
            if root is not None and on_machine(path + "/") is not None:
                continue  # `/usr/local/`, `/tmp/`: a machine's folder
            if form is bold and raw.count("`", 0, m.start()) % 2:
                continue  # inside a code span
            found.append((m.start(named), path, root is not None))
    return sorted(found) if len(found) > 1 else found
