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

- the whole inline code span is the path (`` `x/y.py` ``, not `` `cat x/y.py` ``);
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
- not where a line mention already stands (`` `x.py:12` `` is one, not two).
"""

from __future__ import annotations

import re

from memory_enhancement.core import prose_mentions as prose

FILE = "file"  # `Mention.form` of these


# First folders of a rooted path that name a machine's, not the repository's: `/etc/x.conf`.
_SYSTEM = (
    r"(?:etc|usr|var|tmp|opt|home|Users|root|proc|sys|dev|mnt|media|srv|run|private|"
    r"Library|System|Applications|Volumes|nix|snap|bin|sbin|boot)"
)
_ON_MACHINE = re.compile(rf"({_SYSTEM})/")


def _span(name: str) -> str:
    """The pattern of a file mention whose segments are made of `name`'s characters; a
    route folder may be a segment (`[id]`, `(auth)`), as in every mention's path. From the
    root (`/`), a name needs no folder (`/package.json`, not `/.env`)."""
    folder = rf"(?:{name}+|{prose.BRACKETED}|\([A-Za-z0-9_.-]+\))/"
    last = rf"(?:{prose.BRACKETED})?{name}*"
    folders = rf"(?(root)(?:(?:{folder})+{last}|{name}+)|(?:\./)?(?:{folder})+{last})"
    path = rf"{folders}\.[A-Za-z][A-Za-z0-9]{{0,9}}"
    # The backtick first, then the look behind it: a pattern opening with a literal is
    # searched for that character alone (the look first made indexing 7% costlier).
    return rf"`(?<!``)(?P<root>/)?(?P<path>{path})`(?!`)"


# Names in any script (`docs/要件定義書_EscapeNine.md`, a real memory's), as git keeps them.
_SPAN = re.compile(_span(r"[\w.@+-]"))
HINT = _SPAN
# Whether a memory may hold one (core/mentions.may_mention), in its bytes: a looser form
# (anything after the first folder; any byte of a UTF-8 sequence in a name) that takes
# every file mention, and costs indexing a third of the exact one (the index reads every
# memory's bytes through it).
HINT_BYTES = re.compile(
    rb"`(?<!``)(?:/|(?:\./)?[A-Za-z0-9_.@+\x80-\xff\[\]()-]+/)[^`\s]*\.[A-Za-z][A-Za-z0-9]{0,9}`"
)
PATTERN = _SPAN.pattern  # for the grammar's checksum (core/mentions.GRAMMAR)
# A first segment naming a host: `github.com/owner/repo/README.md` is a web address, and
# `gopkg.in/yaml.v3` a Go module.
_HOST = re.compile(r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?:com|org|net|io|dev|ai|app|co|in)/")


def find_in_line(raw: str) -> list[tuple[int, str, bool]]:
    """The file mentions of one line of a memory: (column of the path, the path, whether
    it is written from the root: a `/` before the column)."""
    found = []
    for m in _SPAN.finditer(raw):
        path = m["path"]
        if ".." in path.split("/") or _HOST.match(path) or "//" in path:
            continue
        found.append((m.start("path"), path, m["root"] is not None))
    return found


def on_machine(path: str) -> str | None:
    """The first folder of a file mention's path written from the root when it is one a
    machine has (`/usr/local/bin/x.sh`, `/tmp/out.log`), else None: the verifier keeps
    such a mention only where the repository has a first folder of that name."""
    found = _ON_MACHINE.match(path)
    return found.group(1) if found else None
