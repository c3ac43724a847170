"""Mentions that name their line in words: `` `app.go` lines 28-76 ``, `app.py (L12)`.

A sibling of core/mentions.py (the `path:L` grammar), kept apart because that
module is near its size limit and because these forms need guards of their own:
prose is full of numbers that are not line numbers. Only forms found in real
Serena memories are read (counts in docs/benchmarks.md, "Issue 17"):

    `path` lines 28-76    path (line 5)    path: Lines 1-3, 9    path (lines 13-14, 95-97)
    path L112-113         path (L125-155)  path L676, L732
    Line 316 of `path`    lines 695-718 in `path`
    `path`（行1258-1298付近）               path: 3行目に    `path` 第 69-84 行
    path 라인 77-84    path 라인938~982
    path at line 41   path, around line 400-500   path (line ~960)   path ~line 417
    path - Lines 955-1089   **Line 1114** in `path`   (also near, on)
    pathの30行目   path の Line 22   path 的第 1903-1912 行   path의 라인 77   path 30번째 줄
    path，第 56 行   path 第11行~第40行   path 第 5 行到第 7 行   pathの10行目〜12行目
    path 第233-237行和第244行   path 第35行、第39～42行   path（595-618行目、331-342行目）
    path の 88 行目から 103 行目   path 라인 938~라인 982   path 라인 938부터 982까지
    `path` lines 10 to 12   path line 10 to line 12   lines 10 through 12 of `path`

The path comes first, closed by a backtick or `**` at most, then a space, a colon,
a comma or an opening parenthesis, then the words; or the words come first and
`of` / `in` joins them to the path. Nothing else may stand between. So `app.py
(120 lines)`, `3 lines`, "lines of code", "Line 115: `x.py` → `y.py`" (a line of
some other file) are not mentions, and neither is Japanese `app.py（394行）` or
`app.py の359行` (a length, not a line) nor `N-M行` alone (also used for sizes:
`（新規、200-300行）`). An `L12` directly followed by a word (`cache.py L2 cache`)
is not taken either. Chinese `第N行` is read right after its path only (1morr/FMP:
`track_thumbnail.dart` 第 69-84 行); on a line of its own it is away from the path
it belongs to, and `第 3 项`, `第 3 列` (item, column) are not lines. Korean writes the
English word: `manager.py 라인 229-233`, `solver.py 라인 1603에서` (the number after it,
as `line 42`; `N줄` and `N행` after a path are as often lengths, and are not read).

A line may also be named by a label under its file's label, the layout of bug reports:
`**File:** `path`` then `**Line:** 264` (other labels may come between, in the same
paragraph; not in a code block, where `path:` and `line:` are configuration). Alone under
a file, `**Lines:** 388` is as often its length, so the plural is read only with a range or
a list (`59–70, 183`); `1,341`, `768 -> ~350`, `95,707/95,887` are counts.

Session 25 (bench/mentions/survey_forms.py over 91 stores) added the joining words: `at`,
`around`, `near`, `on`, a dash before the English word, `~` ("about") before it or its number
(not a number an arrow touches: `Lines 376→395` is a move), and the
possessives `の` / `的` / `의` before a word form; `app.rs의 30행` stays unread (`N행` is as
often a length), and so do table cells (`| path | L273-293 |`, the column says what it is).

Other languages in Latin or Cyrillic letters write the word after the path the English way, in
their own words: Spanish `` `dian.go` línea 125 ``, `` `settings.py` (líneas 283-284) ``,
Portuguese `` `init.php` linha 34 ``, French `` `index.ts` ligne 1622 ``, Italian `` `Finder.ts`
righe 141-155 ``, German `` `route.ts` Zeile 48 ``, `` `bambu-mqtt.ts` Zeilen 14-23 und 66-114
``, Russian `` `ProductCard.tsx` строка 55 ``, `` `mockup-crm.html` строки 37-65 ``, Vietnamese
`` `payroll.service.ts` dòng 624–625 ``, `` `chat_service.py` dòng 248, 303 `` (forms found with
`find_string` in real memories: of 20 hits of `` .ts` dòng `` and `` .py` dòng ``, 12 a line
number right after, session 33), lists joined by their `and` (`y`, `e`, `et`, `und`, `и`, `và`).
Only after the path: the number comes right after the word, as in English, so `(120 líneas)`,
`250 строк` (lengths) are not read, nor `línea ~651` (an estimate). They are looked for only in
a memory holding a European letter (european()): English memories do not pay for them.

Each mention records where its digits are, as core/mentions.py does, so `--fix`
rewrites the numbers and leaves the words alone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

_SEGMENT = r"[A-Za-z0-9_.@~+-]+"
# Route folders of web frameworks (Next.js, SvelteKit, Nuxt): `[id]`, `[...slug]`,
# `[[...slug]]`, `[[lang]]`, `(auth)`, whole segments; a file may start with one
# (`[id].tsx`). The brackets pair up: with `\[{1,2}...\]{1,2}`, a `[[a]]/[[a]]/...` line was
# also read from the second `[` of every `[[` to its end (a 200 KB line took minutes), and
# the `[` of a markdown link became part of a path (`[[id]/page.tsx:4](url)`).
BRACKETED = r"(?:\[\[(?:\.\.\.)?[A-Za-z0-9_-]+\]\]|\[(?:\.\.\.)?[A-Za-z0-9_-]+\])"
FOLDERS = rf"(?:(?:{_SEGMENT}|{BRACKETED}|\([A-Za-z0-9_.-]+\))/)*"
_PATH = (
    rf"(?P<path>(?:\.{{1,2}}/|/)?{FOLDERS}(?:{BRACKETED})?[A-Za-z0-9_.@~+-]*"
    r"\.[A-Za-z][A-Za-z0-9]{0,9})(?![A-Za-z0-9_/@~+-])"
)
# Nor may a path start right after a character that continues one: `]` or `)` close
# a route folder (`[id]/route.js` is one path, not a `/route.js` of the root).
_BEFORE_PATH = r"(?<![A-Za-z0-9_./@~+\\\-\])])"
_DASH = r"[ \t]?[-–][ \t]?"
# In words: `lines 10 to 12`, `line 10 to line 12`, `lines 10 through 12` (read as line 10
# alone, `--fix` moved one end); a word after `to` is prose (`line 42 to handle it`).
_DASH_W = rf"(?:{_DASH}|[ \t]+(?:to|through|thru)[ \t]+(?:[Ll]ines?[ \t]+)?)"
_WORD = r"[Ll]ines?[ \t]+"
# A number ends where no digit, letter or decimal part goes on.
_ENDS = r"(?![0-9A-Za-z_]|\.[0-9])"


def _list(ands: str, prose: str, about: str) -> tuple[str, str]:
    """The later items of a list after the first number: `, 95-97` (any number of them), then
    one joined by a word of `ands` (` and 272`); `prose`, after an item, makes it a word of a
    sentence instead (`line 64, 3 tests`), unless that word is the `and` before the last item
    (`lines 10, 12 and 14`: the 12 was taken for prose, and the list read as line 10 alone);
    `about` may stand before a number (`~432`). A range is an item whole or not at all: `, 14-16
    changed` is prose, where backtracking read it as line 14."""
    number = rf"{about}\d{{1,7}}(?:{_DASH}\d{{1,7}})?{_ENDS}(?!{_DASH}\d)"
    last = rf"{number}{prose}"
    item = rf"{number}(?:(?=,?[ \t]{ands}[ \t]{last})|{prose})"
    return rf"(?:,[ \t]?{item})*", rf"(?:,?[ \t]{ands}[ \t]{last})?"


# Further items of a list: `, 95-97`, ` and 272`, ` and ~432` (`, L104` after an `L` number); an
# item followed by a word is prose (`line 64, 3 tests`), not an item.
_ITEMS, _AND = _list("and", r"(?![ \t]*[A-Za-z])", about="~?")
_MORE = rf"(?P<more_w>{_ITEMS}{_AND})"
_MORE_L = rf"(?P<more_l>(?:,[ \t]?L\d{{1,7}}(?:[-–]L?\d{{1,7}})?{_ENDS}(?![ \t]*[A-Za-z]))*)"

# Between the path and the words: `at`, `around`, `near`, `on` (`app.py at line 42`), and
# the possessives `の` `的` `의` ("of": `app.pyの Line 22`, `app.py 的第 30 行`, `app.rs의 라인 7`);
# `~` before the number is "about" (`(line ~960)`, `~line 417`), as `付近` after it. A dash
# may join too (`` `app.R` - Lines 955-1089 ``), but not a number an arrow touches: `Lines
# 376→395` is a move.
_JOIN = r"(?:(?:at|around|near|on)[ \t]+|~[ \t]?)?"
_OF = r"(?:[の的의][ \t]?)?"
TO = r"[-–~〜～]"  # a range's dash, in every script (core/mentions.py too)
_AFTER = (
    _BEFORE_PATH + _PATH + r"`?(?:\*\*?)?[ \t]*(?:[:,(（：，][ \t]*|[-–—][ \t]+)?"
    r"(?:"
    rf"{_JOIN}{_OF}{_WORD}(?:~[ \t]?)?(?P<w1>\d{{1,7}})(?:{_DASH_W}(?P<w2>\d{{1,7}}))?{_ENDS}"
    rf"(?!->|→){_MORE}"
    r"|"
    rf"L(?P<l1>\d{{1,7}})(?:[-–]L?(?P<l2>\d{{1,7}}))?{_ENDS}(?![ \t]*[A-Za-z]){_MORE_L}"
    r"|"
    rf"行[ \t]?(?P<j1>\d{{1,7}})(?:{TO}(?P<j2>\d{{1,7}}))?(?![0-9])"
    r"|"
    rf"{_OF}(?P<k1>\d{{1,7}})"
    rf"(?:[ \t]?(?:行目[ \t]?)?(?:{TO}|から)[ \t]?(?P<k2>\d{{1,7}}))?[ \t]?行目"
    rf"(?P<more_k>(?:[ \t]?[、，,][ \t]?\d{{1,7}}(?:[ \t]?{TO}[ \t]?\d{{1,7}})?[ \t]?行目)*)"
    r"|"
    rf"{_OF}第[ \t]?(?P<z1>\d{{1,7}})"
    rf"(?:[ \t]?(?:行[ \t]?)?(?:{TO}|至|到)[ \t]?(?:第[ \t]?)?(?P<z2>\d{{1,7}}))?[ \t]?行"
    rf"(?P<more_z>(?:[ \t]?[和及与、，,][ \t]?第[ \t]?\d{{1,7}}"
    rf"(?:[ \t]?(?:{TO}|至|到)[ \t]?\d{{1,7}})?[ \t]?行)*)"
    r"|"
    rf"{_OF}라인[ \t]?(?P<r1>\d{{1,7}})"
    rf"(?:[ \t]?(?:{TO}|부터)[ \t]?(?:라인[ \t]?)?(?P<r2>\d{{1,7}}))?(?![0-9])"
    r"|"
    rf"{_OF}(?P<b1>\d{{1,7}})(?:[ \t]?{TO}[ \t]?(?P<b2>\d{{1,7}}))?[ \t]?번째[ \t]?(?:줄|라인|행)"
    r")"
)
_BEFORE = (
    rf"(?<![A-Za-z0-9_]){_WORD}(?P<w1>\d{{1,7}})(?:{_DASH_W}(?P<w2>\d{{1,7}}))?{_ENDS}"
    rf"(?P<more_w>{_list('and', '', about='')[0]}{_AND})"
    rf"(?:\*\*)?[ \t]+(?:of|in)[ \t]+(?:`|\*\*?)?{_BEFORE_PATH}{_PATH}"
)
# The European words (module docstring); an item followed by a word in any script is prose.
_EU_WORD = (
    r"(?:[Ll][ií]neas?|[Ll]inhas?|[Ll]ignes?|[Rr]ig(?:a|he)|Zeilen?|[Сс]трок(?:а|е|и|у|ах)|[Dd]òng)"
)
_EU_PROSE = r"(?![ \t]*[^\W\d_])"
_EU_ITEMS, _EU_AND = _list("(?:and|y|e|et|und|и|và)", _EU_PROSE, about="")
# A range in words: `líneas 12 a 20`, `lignes 12 à 20`, `Zeilen 12 bis 20`, `linhas 12 até 20`
# (read as the first line alone, `--fix` moved one end), a number after the word or no range.
_TO_EU = r"(?:a|à|al|bis|até|hasta|tot|до|по|đến)"
_DASH_EU = rf"(?:{_DASH}|[ \t]+{_TO_EU}[ \t]+(?:{_EU_WORD}[ \t]+)?)"
_AFTER_EU = (
    _BEFORE_PATH + _PATH + r"(?:`|\*\*?)?[ \t]*(?:[:,(（：][ \t]*)?"
    rf"{_EU_WORD}[ \t]+(?P<w1>\d{{1,7}})(?:{_DASH_EU}(?P<w2>\d{{1,7}}))?{_ENDS}"
    rf"(?P<more_w>{_EU_ITEMS}{_EU_AND})"
)
_ITEM = re.compile(r"L?(\d+)(?:[ \t]?[-–][ \t]?L?(\d+))?")
_ITEM_CJK = re.compile(rf"(\d+)(?:[ \t]?(?:{TO}|至|到)[ \t]?(\d+))?")  # `和第39～42行`
# The label form: a `Line` label (its number where the words are), and the `File` label
# (a path and nothing else but a closing mark or a note in brackets) a few lines above it,
# only labels between.
_LABEL = r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)?"
_COLON = r"(?:\*\*|__)?[ \t]*[:：](?:\*\*|__)?[ \t]*"
_LINE_LABEL = (
    _LABEL + rf"(?i:(?P<many>lines)|line){_COLON}"
    rf"(?P<w1>\d{{1,7}})(?:{_DASH}(?P<w2>\d{{1,7}}))?{_ENDS}"
    rf"(?P<more_w>(?:,[ \t]\d{{1,7}}(?:{_DASH}\d{{1,7}})?{_ENDS}(?![ \t]*[A-Za-z]))*)"
    r"(?![ \t]*(?:->|→|/|%|,\d))"
)
_FILE_LABEL = (
    _LABEL
    + rf"(?i:file|file path|path|location|source){_COLON}(?:`|\*\*?)?"
    + _BEFORE_PATH
    + _PATH
    + r"(?:`|\*\*?)?[ \t]*(?:$|[(（])"
)
_ANY_LABEL = re.compile(_LABEL + r"[A-Za-z][A-Za-z /-]{0,30}" + _COLON)
PATTERNS = (_AFTER, _BEFORE, _LINE_LABEL, _FILE_LABEL, _AFTER_EU)


@functools.cache
def _compiled() -> tuple[re.Pattern[str], ...]:
    """The forms above, compiled when a line is first parsed for them. Indexing asks only
    the hints below whether a memory may mention code, and compiling these took 5 ms of
    every index run (15 million instructions on the shared corpus, `_AFTER` 3 ms alone)."""
    return tuple(map(re.compile, PATTERNS))


# Where such a mention may be (a line is parsed only when one of these finds something in
# it). Each starts with a literal, which the regex engine scans for fast: one pattern with
# alternatives tried at every character cost a verify-all of 1,000 memories 80 ms. Each
# scan costs about 1.5 ms over the corpus, so the forms sharing a literal share a scan, and
# text in ASCII alone (most memories) is not scanned for the Chinese, Japanese and Korean.
# `(?::|：)`, not `[:：]`: the hints also search a file's bytes, where a class holding `：`
# is a class of its three UTF-8 bytes, each alone.
_LABEL_HINT = r"(?:\*\*|__)?[ \t]*(?::|：)(?:\*\*|__)?[ \t]*\d"
_ASCII_HINTS = (r"ines?(?:[ \t]+~?[ \t]?\d|" + _LABEL_HINT + ")", "INES?" + _LABEL_HINT, r"L\d")
_CJK_HINTS = (r"行(?:[ \t]?\d|目)", r"第[ \t]?\d", r"라인[ \t]?\d", r"번째")
# The European words, looked for only in text holding a letter of Latin-1, Latin Extended or
# Cyrillic (european()): as five literal scans in every memory they cost indexing the shared
# corpus 110 million instructions (2.5%), for English memories that hold none of these
# words; Spanish, Portuguese, French, Italian, German and Russian prose hardly runs a
# paragraph without such a letter (á, ç, é, ü, ß, д; Vietnamese's `dòng` holds one itself).
# In the few memories that have one, a single pattern (slower per character than a literal,
# but compiled once, when the first such memory is met: compiling each word's own hint, for
# text and bytes, cost 10 million).
_EU_HINT = r"(?:eilen?|ignes?|inhas?|neas?|rig(?:a|he)|трок(?:а|е|и|у|ах)|òng)[ \t]+\d"
ASCII_HINTS = tuple(map(re.compile, _ASCII_HINTS))
CJK_HINTS = tuple(map(re.compile, _CJK_HINTS))


@functools.cache
def eu_hint() -> re.Pattern[str]:
    return re.compile(_EU_HINT)


@functools.cache
def eu_hint_bytes() -> re.Pattern[bytes]:
    return re.compile(_EU_HINT.encode())


# The UTF-8 lead bytes of U+00C0-U+024F (C3-C9: á, ç, ß, ł) and U+0400-U+04FF (D0-D3:
# Cyrillic). Eleven `in` tests of bytes (memchr) cost a tenth of one regex class scan.
_EUROPEAN_LEADS = tuple(bytes([b]) for b in (*range(0xC3, 0xCA), *range(0xD0, 0xD4)))


def european(data: bytes) -> bool:
    """Whether UTF-8 text holds a letter of Latin-1, Latin Extended or Cyrillic."""
    return any(lead in data for lead in _EUROPEAN_LEADS)


# The forms, as `Mention.form` names them.
WORDS, L_NUMBER, CJK_WORDS, LABEL = "words", "l_number", "cjk_words", "label"

Span = tuple[int, int]
# Mention's fields after `line`: (column, text, path, start, end, form, path_at, start_at,
# end_at); path_at is None for a list item (`, 95-97`), which names no path.
Found = tuple[int, str, str, int, int | None, str, Span | None, Span, Span | None]


# A line's own hints, for `may_hold`: the European words with their first letter in either
# case (`Riga 42`: the memory-wide hint takes `riga` only).
_EU_LINE_HINT = _EU_HINT.replace("rig(", "[Rr]ig(")


@functools.cache
def _eu_line_hint() -> re.Pattern[str]:
    return re.compile(_EU_LINE_HINT)


def may_hold(raw: str, european: bool) -> bool:
    """Whether a line may hold a mention `find_in_line` reads: each of its forms holds one
    of the hints (a word and a number, `L` and a digit, a CJK word), and most lines read
    hold none (they hold a file mention); its patterns, tried at every character of every
    such line, were a fifth of the grammar's time on the corpus's memories."""
    if any(hint.search(raw) for hint in ASCII_HINTS):
        return True
    if not raw.isascii() and any(hint.search(raw) for hint in CJK_HINTS):
        return True
    return european and _eu_line_hint().search(raw) is not None


def find_in_line(raw: str, is_file: Callable[[str], bool], european: bool) -> list[Found]:
    """The word-form mentions of one line of a memory, in order; the European words only
    in a memory holding a European letter."""
    found: list[Found] = []
    after, before, _, _, after_eu = _compiled()
    for pattern in (after, before, after_eu) if european else (after, before):
        for m in pattern.finditer(raw):
            path = m["path"].replace("[...", "[")  # `[...slug]` is a route folder, but
            if is_file(m["path"]) and "..." not in path:  # `base...HEAD` is a git range
                found.extend(_mention(m))
    found.sort(key=lambda f: f[0])
    return found


def _mention(m: re.Match[str]) -> list[Found]:
    key = next(k for k in ("w", "l", "j", "k", "z", "r", "b") if m.groupdict().get(k + "1"))
    first, last = key + "1", key + "2"
    form = {"w": WORDS, "l": L_NUMBER}.get(key, CJK_WORDS)
    base = m.start()
    start = int(m[first])
    end = int(m[last]) if m[last] and int(m[last]) != start else None
    more = m.groupdict().get("more_" + key)
    text = m.group(0)
    if more and m.end("more_" + key) == m.end():  # words before the path come after a list
        text = text[: m.start("more_" + key) - base]
    out: list[Found] = [
        (
            base, text, m["path"], start, end, form, _rel(m.span("path"), base),
            _rel(m.span(first), base), _rel(m.span(last), base) if m[last] else None,
        )
    ]  # fmt: skip
    if more:
        items = _ITEM_CJK if key in "zk" else _ITEM
        out.extend(_items(more, m.start("more_" + key), m["path"], items))
    return out


def _items(more: str, at: int, path: str, items: re.Pattern[str] = _ITEM) -> list[Found]:
    """The later items of a list (`, 95-97`, ` and 272`, `和第244行`) starting at column
    `at`."""
    out: list[Found] = []
    for item in items.finditer(more):
        a = int(item.group(1))
        b = int(item.group(2)) if item.group(2) and int(item.group(2)) != a else None
        ends = _rel(item.span(2), item.start(1)) if item.group(2) else None
        digits = (0, len(item.group(1)))
        text = more[item.start(1) : item.end()]
        out.append((at + item.start(1), text, path, a, b, "list", None, digits, ends))
    return out


def _rel(span: Span, base: int) -> Span:
    return span[0] - base, span[1] - base


_FRONT_OPEN = re.compile(r"\ufeff?---[ \t]*\r?\n")  # after a byte order mark too
_FRONT_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)


def frontmatter_end(text: str) -> int:
    """The line of the closing `---` of a memory's YAML frontmatter, 0 without one. Its
    `- path: app/x.py` then `line: 11` are citation records, not labels: the label form is
    not read there (mentions on one line, `sources: [x.cpp:12]`, still are)."""
    opened = _FRONT_OPEN.match(text)
    closed = _FRONT_CLOSE.search(text, opened.end()) if opened else None
    return text.count("\n", 0, closed.start()) + 1 if closed else 0


def find_labelled(raw: str, above: str, is_file: Callable[[str], bool]) -> list[Found]:
    """The mentions of a `Line:` label line (`raw`) whose file a `File:` label names in
    `above`, the few lines over it; none when a blank line or prose comes first."""
    m = _compiled()[2].match(raw)
    if m is None or (m["many"] and not m["w2"] and not m["more_w"]):
        return []
    named = file_label(above)
    if named is None:
        return []
    lines = above.split("\n")
    up, start, end = named
    path = lines[len(lines) - 1 - up][start:end]
    return _labelled(m, path) if is_file(path) and "..." not in path else []


def file_label(above: str) -> tuple[int, int, int] | None:
    """Where the path of the `File:` label that a `Line:` label reads its file from is
    written in `above` (the lines over the Line label, each ending in a newline): how many
    lines up (1: the line just above) and the path's span in that line; None when a
    blank line or prose comes first. `--fix` rewrites those characters after a rename."""
    lines = above.split("\n")[:-1]
    for up, line in enumerate(reversed(lines), 1):
        line = line.rstrip("\r")
        named = _compiled()[3].match(line)
        if named is not None:
            return up, *named.span("path")
        if _ANY_LABEL.match(line) is None:
            return None
    return None


def _labelled(m: re.Match[str], path: str) -> list[Found]:
    base = m.start("w1")
    end = int(m["w2"]) if m["w2"] and int(m["w2"]) != int(m["w1"]) else None
    last = m.end("w2") if m["w2"] else m.end("w1")
    w2 = _rel(m.span("w2"), base) if m["w2"] else None
    out: list[Found] = [
        (base, m.string[base:last], path, int(m["w1"]), end, LABEL, None,
         _rel(m.span("w1"), base), w2)
    ]  # fmt: skip
    return out + _items(m["more_w"], m.start("more_w"), path)
