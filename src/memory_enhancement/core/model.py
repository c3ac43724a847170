"""The pure model: memories, their metadata, citations and links.

Values are frozen dataclasses so that a parsed memory can be compared with an
edited one field by field; the file formats use that comparison to rewrite only
what changed. This module imports nothing that touches disk, YAML or the CLI.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.core.files import MEMORY_SUFFIX as MEMORY_SUFFIX
from memory_enhancement.core.timestamps import maybe_timestamp

# The most a count a caller gives (a limit, a number of uses) is taken to mean: more than
# any store holds, and an integer SQLite can bind (it refuses 2^63 and more, and a limit
# of 10^20 is "all" to whoever typed it).
MAX_COUNT = 2**31 - 1


class CitationKind(enum.Enum):
    """What a citation points at."""

    FILE = "file"
    URL = "url"


@dataclass(frozen=True, slots=True)
class Citation:
    """A reference from a memory to the source it was learned from.

    `target` is a repository-relative file path or a URL. `line`/`end_line` are
    1-based and inclusive. `snippet` is the text of the cited line(s) when the
    citation was written; it is what lets verification tell a line that moved
    from a line that changed. `verified` is kept as written in the file (a date
    or an ISO timestamp) so an untouched citation is rewritten byte for byte.
    `extra` keeps fields the tool does not know (another table column, another
    YAML key) as written, so rewriting a citation never drops them.
    """

    target: str
    line: int | None = None
    end_line: int | None = None
    snippet: str | None = None
    verified: str | None = None
    commit: str | None = None
    extra: tuple[tuple[str, str], ...] = ()

    @property
    def kind(self) -> CitationKind:
        return CitationKind.URL if self.is_url else CitationKind.FILE

    @property
    def is_url(self) -> bool:
        return "://" in self.target and is_url(self.target)  # a path is told apart in C

    @property
    def ref(self) -> str:
        """The canonical one-line form: `path`, `path:17`, `path:17-25` or the URL."""
        if self.line is None or self.is_url:
            return self.target
        if self.end_line is not None and self.end_line != self.line:
            return f"{self.target}:{self.line}-{self.end_line}"
        return f"{self.target}:{self.line}"

    @property
    def verified_at(self) -> datetime | None:
        """The verified stamp as a datetime, or None when absent or unreadable."""
        try:
            return maybe_timestamp(self.verified)
        except InvalidInputError:
            return None

    def with_snippet(self, snippet: str | None) -> Citation:
        return replace(self, snippet=snippet)


def is_url(target: str) -> bool:
    """A target with a scheme (`https://`, `http://`, `file://`) is a URL."""
    head, sep, _ = target.partition("://")
    return bool(sep) and head.isascii() and head.isalpha()


class LinkKind(enum.Enum):
    """How a link was written, which decides how it is resolved."""

    MARKDOWN = "markdown"  # [text](other.md)
    WIKI = "wiki"  # [[other]]
    BARE = "bare"  # "- other" under ## Links / ## Related
    TYPED = "typed"  # [link:depends_on](other)
    MEM_ID = "mem_id"  # [mem:a7Bc3x]
    FRONTMATTER = "frontmatter"  # links: / related: keys
    MEM_REF = "mem_ref"  # mem:beta (Serena's convention): a memory by name or path
    # Candidates: links only when they name a memory (or a repository file).
    ITEM = "item"  # the entry a list item or table row starts with: "- `beta` - why"
    NAMED = "named"  # a name in the items of a related-material section

    @property
    def candidate(self) -> bool:
        """Whether a target that names nothing is simply not a link (rather than broken)."""
        return self._value_ in ("item", "named")  # asked per link when indexing: no lookups


@dataclass(frozen=True)
class Link:
    """A link a memory makes to another memory, as written.

    `target` is the text as written (without anchors); resolving it to a memory
    is the graph's job, because it needs to know which memories exist.
    """

    target: str
    type: str = "link"
    kind: LinkKind = LinkKind.BARE
    line: int | None = None

    @property
    def spec(self) -> str:
        """The form accepted back on input: `target` or `type:target`."""
        return self.target if self.type == "link" else f"{self.type}:{self.target}"


# A line as str.splitlines ends it (the title is read as that would).
_FIRST_LINE = re.compile("[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]*")


@dataclass(frozen=True)
class MemoryMeta:
    """Metadata of a memory. `extra` holds what the tool does not interpret."""

    created_at: datetime | None = None
    updated_at: datetime | None = None
    tags: tuple[str, ...] = ()
    source: str | None = None
    expires_at: datetime | None = None
    citations: tuple[Citation, ...] = ()
    confidence: float | None = None
    last_verified: datetime | None = None
    citation_id: str | None = None  # declared once the memory moved, so its ID survives
    extra: Mapping[str, Any] = field(default_factory=dict)

    def is_expired(self, moment: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= moment

    @property
    def keywords(self) -> tuple[str, ...]:
        """Tags another tool writes under its own key (`keywords: [a, b]`, `topics:`; on
        lane-core/pane 183 memories, none with `tags:`), read-only.

        A companion of `tags`, not merged into it: `tags` is the key the tool writes (an
        edit renders it, `update --tag` replaces it), so keywords merged there would be
        written back as a `tags:` line the file never had, or replaced by an update. They
        stay in `extra`, whose lines every edit keeps byte for byte, and are read from it:
        `every_tag` is what search, `list --tag` and `context` count."""
        found: list[str] = []
        for key in TAG_KEYS:
            value = self.extra.get(key)
            if isinstance(value, str):
                value = value.split(",")
            if isinstance(value, list | tuple):
                found += [t for t in (str(v).strip() for v in value if _scalar(v)) if t]
        return tuple(dict.fromkeys(found))

    @property
    def every_tag(self) -> tuple[str, ...]:
        """`tags`, then the `keywords` it does not hold: what the index files a memory under."""
        keywords = self.keywords
        if not keywords:
            return self.tags
        return tuple(dict.fromkeys((*self.tags, *keywords)))


# The keys other tools write a memory's tags under (MemoryMeta.keywords).
TAG_KEYS = ("keywords", "topics")


def _scalar(value: object) -> bool:
    """A list item that reads as a tag: a string or a number, not a mapping or a list."""
    return isinstance(value, str | int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class Memory:
    """A memory: its store-relative path (its identity), content and metadata.

    `links` lists the links written in the file, in document order. It is None
    when the file was read without extracting links (listings skip that work).
    """

    path: str
    content: str
    meta: MemoryMeta = field(default_factory=MemoryMeta)
    links: tuple[Link, ...] | None = ()
    format: str = "frontmatter"

    @property
    def title(self) -> str:
        """The first `# ` heading of the content, else the title or name its frontmatter
        declares (`name: No defensive fallbacks`: Claude Code's memories have no heading),
        else the last path segment."""
        head = self.content.lstrip()
        if head.startswith("# "):  # most memories open with their title: read one line
            first = _FIRST_LINE.match(head)
            line = first[0].strip() if first else head
            if line.startswith("# "):
                return line[2:].strip().strip("#").strip()
        fence = ""
        for raw in self.content.splitlines():
            line = raw.strip()
            if line.startswith(("```", "~~~")):
                marker = line[:3]
                fence = "" if fence == marker else (fence or marker)
                continue
            if not fence and line.startswith("# "):
                return line[2:].strip().strip("#").strip()
        extra = self.meta.extra
        for key in ("title", "name"):
            declared = extra.get(key) if extra else None
            if isinstance(declared, str) and declared.strip() and "\n" not in declared:
                return declared.strip()
        return self.path.rsplit("/", 1)[-1]

    @property
    def category(self) -> str:
        return self.path.rpartition("/")[0]


@dataclass(frozen=True)
class Fix:
    """What a fix did (or, with a dry run, would do) to one memory file: its diff; how
    many citations and prose mentions it changed, and the confidence it recorded in the
    file (if any)."""

    path: str
    diff: str
    written: bool
    citations_fixed: int = 0
    mentions_fixed: int = 0
    confidence: float | None = None


# A memory as verification needs it: the memory (its content only when mentions are
# checked), each citation's line in its file, and its citation ID.
Verifiable = tuple[Memory, tuple[int | None, ...], str | None]
