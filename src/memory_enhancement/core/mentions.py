"""Prose mentions of code: `src/app.py:42` and the other ways people cite lines in passing.

Real memories rarely keep a citations table; they write `main_window.py:817-827`,
`[the handler](src/api.py#L10-L20)`, paste `src/tool.py:7:5:` from a linter, link
a blob URL, or glue the mention to Japanese text (`src/app.py:11以降`). This
module is the grammar: it finds each mention, and remembers exactly which characters
hold its path and line numbers (so `--fix` can rewrite those and nothing else);
core/file_list.py resolves the path as written against a list of the repository's files.
Verifying a mention needs history (verify/mentions.py); nothing here does I/O.

Forms, each with or without backticks:

    path:L   path:L-E   path:L–E   path:L〜E (～ ~)   path:L:C   path:LL   path:L1,L2-E2 (a list)
    path#LL  path#LL-LE  path#LLCc-LECc        (markdown links, GitHub anchors)
    https://github.com/OWNER/NAME/blob/REF/path#LL-LE   (GitLab: /-/blob/)
    `path` lines L-E, path (L12), Line L of `path`, path（行L-E）  (core/prose_mentions.py)
    `src/app.py`   **src/app.py**   (a whole file, no line: core/file_mentions.py)
    `src/api/`     **src/api/**     (a folder: core/folder_mentions.py)

A path is `/`-joined ASCII segments whose last one has an extension. What comes
before it must not continue a path or a word in ASCII, so CJK text may touch it
and URL hosts (`example.com:8080/x.py:3`) are not mentions; a bare host name
(`api.example.com:443`) is not a file either. A name in any script: files.name_start.
"""

from __future__ import annotations

import bisect
import re
import zlib
from dataclasses import dataclass, replace

from memory_enhancement.core import file_mentions as files
from memory_enhancement.core import folder_mentions as folders
from memory_enhancement.core import prose_mentions as prose
from memory_enhancement.core.file_mentions import FILE
from memory_enhancement.core.folder_mentions import FOLDER

# The forms, as `Mention.form` names them.
COLON, RANGE, COLUMN, ANCHOR, ANCHOR_RANGE, LIST, URL = (
    "colon", "range", "column", "anchor", "anchor_range", "list", "url",
)  # fmt: skip

_SEGMENT = r"[A-Za-z0-9_.@~+-]+"
# A range's dash; Japanese and Chinese write `app.py:10〜12` (wave dash), `app.py:1～55`
# (full-width tilde) or `~`, as in prose's word forms.
_TO = prose.TO
# Later lines of the same file in spans of their own: `` `run.py:170`, `:208`, `:235` `` (a
# form of real memories, 3 of 10 `find_string` hits of `` `, `: ``); the items are read from
# the digits as the comma's are.
_MORE_SPANS = rf"`,[ ]?`:\d{{1,7}}(?:{_TO}\d{{1,7}})?(?=`)"
_MENTION = re.compile(
    r"(?<![A-Za-z0-9_./@~+\\\-\])])"  # nor after `]`, `)`: see prose.FOLDERS
    # nor in a glob or a template (`versions/127_*.py:11:1`, `{name}.py:3`): the `.py` there
    # is no file's name; a `*` of bold or italics stands after a space or another `*`
    r"(?<![A-Za-z0-9_/.\-]\*)(?<!\})"
    rf"(?P<path>(?:\.{{1,2}}/|/)?{prose.FOLDERS}(?:{prose.BRACKETED})?{_SEGMENT})"
    r"(?:"
    r"\#L(?P<a1>\d{1,7})(?:C\d{1,5})?(?:[-–]L?(?P<a2>\d{1,7})(?:C\d{1,5})?)?"
    r"|"
    rf":L?(?P<c1>\d{{1,7}})(?:{_TO}L?(?P<c2>\d{{1,7}})|:(?P<col>\d{{1,5}}))?"
    rf"(?P<more>(?:,[ ]?\d{{1,7}}(?:{_TO}\d{{1,7}})?|{_MORE_SPANS})*)"
    r")(?![0-9])"
)
_ITEM = re.compile(rf"(\d+)(?:{_TO}(\d+))?")
_BLOB = re.compile(
    r"https?://(?P<host>[A-Za-z0-9.-]+)/(?P<repo>[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+?)"
    r"/(?:-/)?blob/(?P<ref>[^/\s#?]+)/(?P<path>[^\s#?)\]>\"'`|]+)"
    r"#L(?P<a1>\d{1,7})(?:C\d{1,5})?(?:-L?(?P<a2>\d{1,7})(?:C\d{1,5})?)?"
)
_ANY_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s)\]>\"'`]+")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")
# Where a mention may be: `.ext:digit`, `.ext#Ldigit`, a backticked path, or prose's forms
# (CJK ones off ASCII).
_HINT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}(?::L?\d|#L\d)")
_ASCII = (_HINT, files.HINT, *prose.ASCII_HINTS, folders.HINT)
_SCANS = {True: _ASCII, False: (*_ASCII, *prose.CJK_HINTS)}
# In bytes, for may_mention: a file mention's hint first (nearly half of real memories hold
# one, and the search stops at the first hint found), in a form of its own (file_mentions).
_SCANS_BYTES = {
    k: (
        files.HINT_BYTES,
        *(re.compile(h.pattern.encode()) for h in v if h not in (files.HINT, folders.HINT)),
        folders.HINT_BYTES,
    )
    for k, v in _SCANS.items()
}
# A bare name ending like a host name is a host, not a file: `api.example.com:443`.
_HOST_ENDINGS = frozenset({
    "com", "org", "net", "io", "dev", "local", "localhost", "internal", "cloud", "ai", "app",
    "co", "edu", "gov", "info", "biz", "us", "uk", "de", "jp", "cn", "fr", "ru", "in", "br", "eu",
})  # fmt: skip
# Which grammar read a memory file: readings kept by another (verify/mention_cache.py) are read
# again. REVISION counts rule changes outside the patterns (2: author's paths; 3, 4: labels;
# 5: `~/` paths, names told apart by their neighbours, endings no file has; 6: `~/` paths only
# under a folder named as the repository; 7: not on a citations table's rows, see
# verify/mention_reading.py; 8: still on a prose line with an inline citation; 9: whole files;
# 10: whole files from the root said so (`rooted`), a machine's too, no folder; Go modules not;
# 11: paths in bold, and a path through the author's clone of the repository resolved;
# 12: folders left out, `src/main/java/.../x/Y.java`, resolved; 13: a path under a first
# folder the repository never had skipped, see verify/mention_checks.py; 14: a mention of the
# same line as a declared citation without a snippet is read, see verify/mention_reading.py;
# 15: folders, `src/api/`, see core/folder_mentions.py; 16: no git range, `origin/main...HEAD`,
# is a file mention; 17, 18: `docs/設計.md:12` is that file, files.name_start; 19: `、N行目`).
REVISION = 19
GRAMMAR = zlib.crc32(
    "\0".join(
        (str(REVISION), _MENTION.pattern, files.PATTERN, folders.PATTERN, *prose.PATTERNS)
    ).encode()
)
_PERMALINK = re.compile(r"[0-9a-f]{40}")
_ROOTED = re.compile(r"@?(?:\.?/)*")  # how a path as written says it is from the root


@dataclass(frozen=True)
class Mention:
    """One mention as written: where it is in the memory file and what it cites.

    `line` is the 1-based line of the memory file and `column` the offset of
    `text` in it. The `*_at` spans are offsets inside `text`: the path (None for
    the later items of a list, which name no path) and the cited line numbers.
    A file mention (form FILE) cites the whole file: no `start`, no `start_at`; a folder
    mention (form FOLDER) the folder, its `path` without the last `/` that `text` keeps.
    """

    line: int
    column: int
    text: str
    path: str  # as written; for a list item, the path of the mention it continues
    start: int | None  # the first cited line; None for a whole file
    end: int | None  # the last cited line; None for one line
    form: str
    path_at: tuple[int, int] | None
    start_at: tuple[int, int] | None
    end_at: tuple[int, int] | None = None
    repository: str | None = None  # URL form: host/owner/name as in the URL
    ref: str | None = None  # URL form: the branch or commit in the URL
    in_code: bool = False  # inside a fenced code block
    rooted: bool = False  # a file mention written from the root: a `/` before `column`

    @property
    def ref_text(self) -> str:
        """The canonical `path:start[-end]` (`path` for a whole file), the path as written."""
        if self.start is None:
            return self.text if self.form == FOLDER else self.path
        tail = f"-{self.end}" if self.end is not None else ""
        return f"{self.path}:{self.start}{tail}"

    @property
    def permalink(self) -> bool:
        """A blob URL pinned to a commit: its line numbers belong to that commit forever."""
        return self.ref is not None and _PERMALINK.fullmatch(self.ref) is not None


def may_mention(data: bytes) -> bool:
    """Whether a memory file's bytes may hold a mention at all (checked before decoding:
    most memories mention nothing, and a verify-all reads them all)."""
    ascii = data.isascii()
    if any(h.search(data) for h in _SCANS_BYTES[ascii]) or files.bold_in(data):
        return True
    return not ascii and prose.european(data) and prose.eu_hint_bytes().search(data) is not None


def find_mentions(text: str) -> list[Mention]:
    """Every mention in a memory file's text, in order. YAML frontmatter is read too
    (`sources: [Looper.cpp:1162-1280]`; not its citation records, see prose.frontmatter_end):
    the caller drops mentions that repeat a declared citation.

    Most memories mention nothing, so one search over the whole text finds the
    lines that might (a dotted name followed by `:digit` or `#Ldigit`) and only
    those are parsed; a verify-all reads every memory of the store.
    """
    ascii = text.isascii()
    european = not ascii and prose.european(text.encode())
    scans = (*_SCANS[ascii], prose.eu_hint()) if european else _SCANS[ascii]
    if "**" in text or "__" in text:  # a file mention in bold (file_mentions.bold)
        scans = (*scans, *files.bold())
    hits = sorted(m.start() for h in scans for m in h.finditer(text))
    if not hits:
        return []
    fences = _fence_lines(text)
    front = prose.frontmatter_end(text)
    found: list[Mention] = []
    labels: set[tuple[int, int]] = set()  # (line, column) of the paths File labels give
    done, number, counted = 0, 1, 0  # `number`: the (1-based) line of `counted`
    for at in hits:
        number += text.count("\n", counted, at)
        counted = at
        if number <= done:
            continue
        done = number
        first = text.rfind("\n", 0, at) + 1
        last = text.find("\n", at)
        last = len(text) if last < 0 else last
        raw = text[first:last].rstrip("\r")
        in_code = bisect.bisect_left(fences, number) % 2 == 1 and number not in fences
        mentions = _in_line(raw, number, in_code, european)
        if not mentions and not in_code and number > front:  # `**Line:** 12` under a File
            above = text[_lines_up(text, first, 4) : first]
            labelled = prose.find_labelled(raw, above, _is_file)
            mentions = [Mention(number, *f, in_code=in_code) for f in labelled]
            if labelled and (named := prose.file_label(above)) is not None:
                labels.add((number - named[0], named[1]))
        found.extend(mentions)
    # The `**File:**` label's path is the Line label's file, not a file mention of its own.
    return [m for m in found if (m.line, m.column) not in labels] if labels else found


def _fence_lines(text: str) -> list[int]:
    """The (1-based) lines that open or close a fenced code block: up to three spaces or
    tabs, then ```` ``` ```` or `~~~`. Found from the marks, searched for as strings: a
    pattern anchored at every line's start, or one of the two marks, took the grammar a
    tenth of its time on the corpus's memories."""
    starts = set()
    for mark in ("```", "~~~"):
        at = text.find(mark)
        while at >= 0:
            first = text.rfind("\n", 0, at) + 1
            if at - first <= 3 and not text[first:at].strip(" \t"):
                starts.add(first)
            at = text.find(mark, at + 3)
    lines: list[int] = []
    number, counted = 1, 0
    for first in sorted(starts):
        number += text.count("\n", counted, first)
        counted = first
        lines.append(number)
    return lines


def _lines_up(text: str, first: int, count: int) -> int:
    """Where the line `count` lines above the one starting at `first` starts (the text's
    start when there are fewer)."""
    for _ in range(count):
        if first == 0:
            break
        first = text.rfind("\n", 0, first - 1) + 1
    return first


def _in_line(raw: str, number: int, in_code: bool, european: bool) -> list[Mention]:
    found: list[Mention] = []
    urls = [m.span() for m in _ANY_URL.finditer(raw)] if "://" in raw else []
    for m in _BLOB.finditer(raw):
        start, end = int(m["a1"]), _end(m["a1"], m["a2"])
        base = m.start()
        found.append(
            Mention(
                number, base, m.group(0), m["path"], start, end, URL,
                _rel(m.span("path"), base), _rel(m.span("a1"), base),
                _rel(m.span("a2"), base) if end is not None else None,
                f"{m['host'].lower()}/{m['repo']}", m["ref"], in_code,
            )
        )  # fmt: skip
    # A line mention's path ends in an extension and `:digit` or `#Ldigit` follow (_HINT):
    # most lines read hold none (they hold a file mention), and the pattern, tried at
    # every character, was a seventh of the grammar's time.
    for m in _MENTION.finditer(raw) if _HINT.search(raw) is not None else ():
        if any(a <= m.start() < b for a, b in urls):
            continue  # part of a URL (blob URLs were taken above)
        path = m["path"]
        if not _is_file(path):
            continue
        found.extend(_colon_or_anchor(m, number, in_code))
    if prose.may_hold(raw, european):
        taken = [(f.column, f.column + len(f.text)) for f in found] + urls
        for f in prose.find_in_line(raw, _is_file, european):  # not `(line 10)` after `x.py:10`
            if not any(x < f[0] + len(f[1]) and f[0] < y for x, y in taken):
                found.append(Mention(number, *f, in_code=in_code))
    if not in_code and ("`" in raw or "**" in raw or "__" in raw):  # a whole file: `src/app.py`
        taken = [(f.column, f.column + len(f.text)) for f in found] + urls
        for at, path, rooted in files.find_in_line(raw):
            if not any(x < at + len(path) and at < y for x, y in taken):
                span = (0, len(path))
                found.append(Mention(number, at, path, path, None, None, FILE, span, None,
                                     rooted=rooted))  # fmt: skip
        if "/`" in raw or "/**" in raw or "/__" in raw:  # a folder: `src/api/`
            taken = [(f.column, f.column + len(f.text)) for f in found] + urls
            for at, path, rooted in folders.find_in_line(raw):
                if not any(x < at + len(path) and at < y for x, y in taken):
                    span = (0, len(path))
                    found.append(Mention(number, at, path + "/", path, None, None, FOLDER, span,
                                         None, rooted=rooted))  # fmt: skip
    found.sort(key=lambda mention: mention.column)
    return found if raw.isascii() else _whole_names(raw, found)


def _whole_names(raw: str, found: list[Mention]) -> list[Mention]:
    """The mentions, each path that a name in another script continues given that name."""
    out: list[Mention] = []
    named = ("", "")  # the last path as matched and its whole name, for its list's items
    for m in found:
        if m.path_at is None:  # a list's later item: the path of the mention before
            out.append(replace(m, path=named[1]) if m.path == named[0] else m)
            continue
        start = files.name_start(raw, at := m.column + m.path_at[0])  # None off a span
        named = (m.path, m.path if start is None else raw[start:at] + m.path)
        if start is None:  # (a name `_is_file` took stays one with more letters before it)
            out.append(m)
            continue
        column, shift = min(m.column, start), min(0, start - m.column)  # shift: 0 or less
        out.append(
            replace(
                m, column=column, text=raw[column : m.column + len(m.text)], path=named[1],
                path_at=(start - column, m.path_at[1] - shift),
                start_at=m.start_at and _rel(m.start_at, shift),
                end_at=m.end_at and _rel(m.end_at, shift),
            )
        )  # fmt: skip
    return out


def _colon_or_anchor(m: re.Match[str], number: int, in_code: bool) -> list[Mention]:
    base = m.start()
    path = m["path"]
    more = m["more"] or ""
    if m["a1"]:
        first, last, form = "a1", "a2", ANCHOR_RANGE if m["a2"] else ANCHOR
    else:
        first, last = "c1", "c2"
        form = RANGE if m["c2"] else (COLUMN if m["col"] else COLON)
    start, end = int(m[first]), _end(m[first], m[last])
    head_text = m.group(0)[: len(m.group(0)) - len(more)]
    out = [
        Mention(
            number, base, head_text, path, start, end, form,
            _rel(m.span("path"), base), _rel(m.span(first), base),
            _rel(m.span(last), base) if m[last] else None, in_code=in_code,
        )
    ]  # fmt: skip
    at = m.start("more") if more else 0
    for item in _ITEM.finditer(more):
        a, b = int(item.group(1)), _end(item.group(1), item.group(2))
        column = at + item.start()
        out.append(
            Mention(
                number, column, item.group(0), path, a, b, LIST, None,
                (0, len(item.group(1))),
                _rel(item.span(2), item.start()) if item.group(2) else None,
                in_code=in_code,
            )
        )  # fmt: skip
    return out


def _end(first: str, last: str | None) -> int | None:
    return None if not last or int(last) == int(first) else int(last)


def _rel(span: tuple[int, int], base: int) -> tuple[int, int]:
    return span[0] - base, span[1] - base


def _is_file(path: str) -> bool:
    last = path.rsplit("/", 1)[-1]
    ending = _EXTENSION.search(last)
    if ending is None or last.startswith("..") or "//" in path:
        return False
    return "/" in path or ending.group(0)[1:].lower() not in _HOST_ENDINGS


# -- rewriting (--fix) -----------------------------------------------------------


def relocated(
    mention: Mention, line: int | None, end: int | None, path: str | None = None, was: str = ""
) -> str:
    """The mention's text with new line numbers (and path), every other character kept:
    `#L` links stay `#L` links, a column or an en dash stays as written, and so does the
    way a new path is written to the file (`as_written`; `was`: the file the path as
    written named). A file mention has no line to change (`line` is None)."""
    edits: list[tuple[tuple[int, int], str]] = []
    if mention.start_at is not None and line is not None:
        edits.append((mention.start_at, str(line)))
    if mention.end_at is not None:  # `12-12` has an end as written but none as cited
        edits.append((mention.end_at, str(end if end is not None else line)))
    if path is not None and mention.path_at is not None:
        a, b = mention.path_at
        edits.append((mention.path_at, as_written(mention.text[a:b], path, was)))
    text = mention.text
    for (a, b), new in sorted(edits, reverse=True):
        text = text[:a] + new + text[b:]
    return text


def as_written(written: str, path: str, was: str = "") -> str:
    """A new (repository-relative) path written the way `written` reaches the file it
    named (`was`, repository-relative): what leads to the root is kept, and only the
    file's path after it changes. `./src/a.py` renamed stays `./`, `/src/a.py` keeps its
    `/`, `@src/a.py` its `@`, a relative link `../../src/a.py` its `../../` (a link from the
    memory's folder: the repository-relative path would not reach the file from there),
    an author's clone `/home/me/repo/src/a.py` its folders. A partial path (`a.py` for
    `src/a.py`) is written in full: a partial one might name another file now."""
    if was and written.endswith(was):
        lead = written[: len(written) - len(was)]
        if not lead or lead.endswith("/") or lead == "@":
            return lead + path
    root = _ROOTED.match(written)
    prefix = root[0] if root else ""
    return path if path.startswith(prefix) else prefix + path
