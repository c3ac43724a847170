"""File mentions: a backticked repository path with no line, `` `src/app/handler.py` ``.

Most real memories name the code they describe this way, not with a line number:
over 102 public Serena stores, 6,025 backticked paths against a few hundred `path:L`
mentions, and 763 of those paths named files that git history had and HEAD no
longer has (docs/benchmarks.md, "File mentions"). A memory whose files are gone is
the memory that rotted, and without these it was called "uncited". What such a
mention claims is only that the file is there, so that is what is verified: the
file now (valid), renamed since the memory line was written (moved, and to where),
deleted since (missing), or never a file of this repository (skipped: an example
path, another project's).

The form is narrow on purpose, because a path-shaped string in prose is often not a
file of this repository:

- the whole inline code span is the path (`` `x/y.py` ``, not `` `cat x/y.py` ``), or
  the whole bold span (`**x/y.py**`, `__x/y.py__`: 142 over 121 fetched stores, 131 of them
  files of the repository and 7 deleted since; docs/benchmarks.md, "Session 30");
- it has a folder (`src/app.py`; a bare `package.json` names a file of every project),
  or is written from the root (below);
- its last segment has an extension, as every mention's path (core/mentions.py);
- it is in the repository: not `~/x.md`, `../x.py`, nor a host's (`github.com/o/r.md`,
  `gopkg.in/yaml.v3`: a Go module's); a leading `./` or `/` is the repository root, as many
  memories write it (`` `/app/globals.css` ``, `` `/docs/PRD.md` ``: four of 23 stores of a
  QA round, 50-odd paths), so from the root a name needs no folder (`` `/package.json` ``,
  13 over the 102 stores). The `/` is left out of the mention's text and path (`--fix`
  keeps it), and said by `Mention.rooted`. One under a machine's first folder (`/etc/`,
  `/usr/`, `/tmp/`, `/Users/`...: `on_machine`) is read too: the verifier keeps it only
  where git tracks such a folder of the repository's own (a `bin/`, a `dev/`: 8 of those
  102 repositories have one), which only it can tell (verify/rooted.py);
- not in a fenced code block (commands, trees and configuration there);
- not where a line mention already stands (`` `x.py:12` `` is one, not two);
- not a git range (`` `origin/main...HEAD` ``: a last segment holding `..`).
"""

from __future__ import annotations

import functools
import re

from memory_enhancement.core import prose_mentions as prose

FILE = "file"  # `Mention.form` of these


# First folders of a rooted path that name a machine's, not the repository's: `/etc/x.conf`.
_SYSTEM = (
    r"(?:etc|usr|var|tmp|opt|home|Users|root|proc|sys|dev|mnt|media|srv|run|private|"
    r"Library|System|Applications|Volumes|nix|snap|bin|sbin|boot)"
)
_ON_MACHINE = re.compile(rf"({_SYSTEM})/")


def _path(name: str) -> str:
    """The pattern of a file mention's path whose segments are made of `name`'s
    characters, after an optional root (group `root`); a route folder may be a segment
    (`[id]`, `(auth)`), as in every mention's path. From the root (`/`), a name needs no
    folder (`/package.json`, not `/.env`)."""
    folder = rf"(?:{name}+|{prose.BRACKETED}|\([A-Za-z0-9_.-]+\))/"
    last = rf"(?:{prose.BRACKETED})?{name}*"
    folders = rf"(?(root)(?:(?:{folder})+{last}|{name}+)|(?:\./)?(?:{folder})+{last})"
    return rf"(?P<root>/)?(?P<path>{folders}\.[A-Za-z][A-Za-z0-9]{{0,9}})"


# Names in any script (`docs/要件定義書_EscapeNine.md`, a real memory's), as git keeps them.
_NAME = r"[\w.@+-]"
_ASCII_NAME = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@+-"  # name_start
# Each form opens with a literal, then looks behind it: a pattern opening with a literal is
# searched for that literal alone (the look first made indexing 7% costlier). `__` is bold
# only off a word (`a__b.py__` is not), as markdown reads it.
_SPAN = re.compile(rf"`(?<!``){_path(_NAME)}`(?!`)")
_BOLD = (rf"\*\*{_path(_NAME)}\*\*", rf"__(?<!\w__){_path(_NAME)}__(?!\w)")
HINT = _SPAN
# Whether a memory may hold one (core/mentions.may_mention), in its bytes: a looser form
# (anything after the first folder; any byte of a UTF-8 sequence in a name) that takes
# every file mention, and costs indexing a third of the exact one (the index reads every
# memory's bytes through it).
_FOLDER = rb"(?:/|(?:\./)?[A-Za-z0-9_.@+\x80-\xff\[\]()-]+/)"
_EXTENSION = rb"\.[A-Za-z][A-Za-z0-9]{0,9}"
HINT_BYTES = re.compile(rb"`(?<!``)" + _FOLDER + rb"[^`\s]*" + _EXTENSION + rb"`")
_STARS_BYTES = re.compile(rb"\*\*" + _FOLDER + rb"[^`*\s]*" + _EXTENSION + rb"\*\*")
_UNDERSCORES_BYTES = re.compile(rb"__" + _FOLDER + rb"[^`*\s]*" + _EXTENSION + rb"__")
PATTERN = "\0".join((_SPAN.pattern, *_BOLD))  # for the checksum (mentions.GRAMMAR)
# A first segment naming a host: `github.com/owner/repo/README.md` is a web address, and
# `gopkg.in/yaml.v3` a Go module.
_HOST = re.compile(r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?:com|org|net|io|dev|ai|app|co|in)/")


def find_in_line(raw: str) -> list[tuple[int, str, bool]]:
    """The file mentions of one line of a memory: (column of the path, the path, whether
    it is written from the root: a `/` before the column)."""
    found = []
    for form in (_SPAN, *bold()) if "**" in raw or "__" in raw else (_SPAN,):
        for m in form.finditer(raw):
            path = m["path"]
            if ".." in path.split("/") or _HOST.match(path) or "//" in path:
                continue
            if ".." in path.rpartition("/")[2]:  # a git range, `origin/main...HEAD`: no name
                continue
            if form is not _SPAN and raw.count("`", 0, m.start()) % 2:
                continue  # inside a code span: `**/src/*.py**` is no bold
            found.append((m.start("path"), path, m["root"] is not None))
    return sorted(found) if len(found) > 1 else found


@functools.cache
def bold() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The bold forms, compiled when a memory's text is first read for mentions: indexing
    reads none (it asks `bold_in`), and compiling them cost it 0.3% of its instructions."""
    return re.compile(_BOLD[0]), re.compile(_BOLD[1])


def bold_in(data: bytes) -> bool:
    """Whether a memory's bytes may hold a file mention in bold (`**src/app.py**`), searched
    after every other hint (few memories hold one): `__` only where the bytes hold it at
    all, which the search for a literal finds at a fraction of a regex's cost."""
    if _STARS_BYTES.search(data) is not None:
        return True
    return b"__" in data and _UNDERSCORES_BYTES.search(data) is not None


def name_start(raw: str, at: int) -> int | None:
    """Where the name of a file starts in `raw` when a line mention's path starting at `at`
    touches letters of another script that continue it, else None. A line mention's path is
    ASCII so that prose may touch it (`処理はsrc/app.py:12`). In a code span or a link's
    target nothing does, and the whole name is the file's, as a file mention reads it
    (`` `docs/設計.md:12` ``, `[x](docs/設計.md#L12)`). Elsewhere the name goes on through
    its folders (`docs/05_機能一覧表.md:12`), from its first folder's ASCII letters when
    prose touches them (`詳細はdocs/設計.md:12`: `docs/設計.md`); letters with no folder
    are prose (`設定は.env:3`)."""
    if at == 0 or raw[at - 1].isascii() or not raw[at - 1].isalnum():
        return None
    start = at
    while start > 0 and (raw[start - 1].isalnum() or raw[start - 1] in "_.@+-/"):
        start -= 1
    name = raw[start:at]
    if ".." in name or "//" in name:
        return None
    if start > 0 and raw[start - 1] == "`" and raw.count("`", 0, start - 1) % 2 == 0:
        return start  # the span opens there
    if start >= 2 and raw.startswith("](", start - 2):
        return start
    if "/" not in name:
        return None
    first = name.partition("/")[0]
    ascii_tail = len(first) - len(first.rstrip(_ASCII_NAME))  # after the prose in it
    return start + len(first) - ascii_tail if 0 < ascii_tail < len(first) else start


def on_machine(path: str) -> str | None:
    """The first folder of a file mention's path written from the root when it is one a
    machine has (`/usr/local/bin/x.sh`, `/tmp/out.log`), else None: the verifier keeps
    such a mention only where the repository has a first folder of that name."""
    found = _ON_MACHINE.match(path)
    return found.group(1) if found else None
