"""Link syntax inside one line: markdown links, `[[wiki]]`, `[mem:ID]` and `mem:name`
(also as a markdown link's destination `memory:name`).

What is a link and what is code is CommonMark's to say, so markdown-it-py decides
whenever a line is not plain. Most lines that hold links are plain, though, and
importing and running the parser for them is most of what indexing a store would
otherwise cost; so a line is first read here without the parser when that gives
the same answer:

- a line that holds nothing any link could be made of (no `.md`, `[[`, `mem:`,
  `](memory:`, `link:`, `%` or `&`) has no link, whatever its syntax;
- a line whose only inline syntax is code spans and `[text](destination)` links
  (no escape, entity, HTML, autolink or image outside a code span, no code span
  inside a destination, no nesting or title, no emphasis that could split a
  wiki link or a `mem:` reference) reads the same to CommonMark and to the
  regular expressions below. tests/test_links_real_forms.py checks this
  against markdown-it on generated lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import TYPE_CHECKING
from urllib.parse import unquote

from memory_enhancement.core.model import Link, LinkKind, is_url
from memory_enhancement.store.formats import link_grammar as g

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_BACKTICKS = re.compile(r"`+")
_IN_WORD = re.compile(r"(?<=[^\W_])_+(?=[^\W_])")  # underscores inside a word: `build_all`
# What only the parser reads right: a backslash escape (of punctuation, or of a backtick
# that starts a masked code span), an HTML tag or autolink, an entity, an image.
_PLAIN_SYNTAX = re.compile(
    r"\\[!-/:-@\[-`{-~\x00]|<(?=[A-Za-z/!?])|<[^\s<>]*>"
    r"|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});|!\["
)
_SCHEME = re.compile(r"[A-Za-z][\w+.-]*:")
_MASK = "\x00"  # stands for a code span's characters while links are matched
_MEMORY_SCHEME = "memory:"
# `[x](serena:read?memory=x.md)`: a memory by name in a Serena tool call written as a link
# (zoryon-dev/maquina-de-conteudo's index of its 28 memories).
_SERENA_READ = re.compile(r"serena:read\?(?:[^#]*&)?memory=([^&#]+)")
# How far before a `mem:` reference its lead-in is read (`e.g. `, `like "frontend: `): the
# lead-in is short, and reading the whole line before each reference made a line of many
# references quadratic (a 200 KB line of `mem:a` took minutes).
_LEAD_IN = 120


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


# The longest line whose links are kept (_links_of): a store's repeated lines are short,
# and a long line kept would hold its memory for the rest of the process.
_KEPT_LINE = 1000


def inline_links(line: str, default_type: str, number: int) -> list[Link]:
    """The links written in one line, in order (a line's block structure is the caller's).

    A store writes the same line in many memories (a list of related memories copied
    from one to the next: the shared corpus's 3,377 lines with links are 1,399 lines), so
    a line's links are read once and given each line's number."""
    if not _may_hold_link(line):
        return []
    if len(line) > _KEPT_LINE:
        return list(_read_links(line, default_type, number))
    return [
        Link(target, kind_type, kind, number)
        for target, kind_type, kind in _links_of(line, default_type)
    ]


@lru_cache(maxsize=4096)
def _links_of(line: str, default_type: str) -> tuple[tuple[str, str, LinkKind], ...]:
    """The links of a line as (target, type, kind): what inline_links gives, but its number."""
    return tuple((link.target, link.type, link.kind) for link in _read_links(line, default_type, 0))


def _read_links(line: str, default_type: str, number: int) -> Iterator[Link]:
    simple = simple_links(line, default_type, number)
    if simple is not None:
        yield from simple
        return
    yield from parsed_links(line, default_type, number)


def _may_hold_link(line: str) -> bool:
    """Whether any link could be read from the line: each kind needs one of these texts.

    Markdown links count only with a `.md` target (percent-escaped or as an entity:
    `%`, `&`), a folder one (`/)`, `/#`), a `memory:` one or a `link:` label; wiki links
    need `[[`, references `mem:`.
    """
    if "[[" in line or "mem:" in line or "link:" in line or "%" in line or "&" in line:
        return True
    if "](memory:" in line or "/)" in line or "/#" in line:
        return True
    return ".md" in line or ".MD" in line or ".md" in line.lower()


def parsed_links(line: str, default_type: str, number: int) -> Iterator[Link]:
    """The links of a line as markdown-it reads it."""
    tokens = _parser().parseInline(line.strip())
    children = tokens[0].children if tokens and tokens[0].children else []
    href: str | None = None
    label: list[str] = []
    before = ""  # the text since the last code span or link, for _mem_refs
    for child in children:
        if child.type == "link_open":
            href = str(child.attrGet("href") or "")
            label = []
        elif child.type == "link_close" and href is not None:
            link = _markdown_link(href, "".join(label), default_type, number)
            if link:
                yield link
            href, before = None, ""
        elif child.type in ("text", "code_inline"):
            if href is not None:
                label.append(child.content)
            elif child.type == "text":
                yield from _text_links(child.content, default_type, number)
                before = (before + child.content)[-_LEAD_IN:]
            else:
                yield from _mem_refs(child.content, default_type, number, before)
                before = ""


def simple_links(line: str, default_type: str, number: int) -> list[Link] | None:
    """The links of a plain line, found without the parser; None when the parser is needed.

    Code spans are found first (a run of backticks up to the next run of the same
    length, as CommonMark pairs them) and masked, so a `](` inside code is no link;
    any other inline syntax outside them, a code span inside a destination, or a
    `](` that does not open a simple `[text](destination)` sends the line to the
    parser.
    """
    spans = code_spans(line) if "`" in line else []
    masked = line
    if spans:
        parts, at = [], 0
        for start, end, _ in spans:
            parts += [line[at:start], _MASK * (end - start)]
            at = end
        masked = "".join([*parts, line[at:]])
    if _PLAIN_SYNTAX.search(masked) or _emphasis_matters(masked):
        return None
    matches = list(g.SIMPLE_LINK.finditer(masked))
    if len(matches) != masked.count("]("):
        return None
    links: list[Link] = []
    at = 0
    for match in matches:
        destination = match[2]
        if _MASK in destination or "<" in destination:
            return None
        links.extend(_outside_links(line, spans, at, match.start(), default_type, number))
        label = _unmasked(line, spans, match.start(1), match.end(1))
        link = _markdown_link(destination, label, default_type, number)
        if link:
            links.append(link)
        at = match.end()
    links.extend(_outside_links(line, spans, at, len(line), default_type, number))
    return links


def _emphasis_matters(masked: str) -> bool:
    """Whether emphasis could change what the regexes read: `__mem:x__` is bold text
    `mem:x` to the parser, `[[a*b*]]` no wiki link; `**x**: mem:y` reads the same. An
    underscore between two letters or digits (`build_all`) neither opens nor closes
    emphasis (CommonMark's rule for `_` inside a word): one such line of the shared corpus
    made indexing it import markdown-it, 7% of the run's instructions."""
    if "[[" in masked:
        return "*" in masked or ("_" in masked and "_" in _IN_WORD.sub("", masked))
    return "mem:" in masked and "_" in masked and "_" in _IN_WORD.sub("", masked)


def code_spans(line: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of each code span of a line, CommonMark's way.

    A run of n backticks opens a span that the next run of exactly n backticks
    closes; a run with no such closer is literal text and the scan goes on after
    it. The content drops one space at each end when it has one at both ends.
    """
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(runs):
        start, opened = runs[i]
        width = opened - start
        for j in range(i + 1, len(runs)):
            if runs[j][1] - runs[j][0] == width:
                content = line[opened : runs[j][0]]
                if len(content) > 1 and content[0] == content[-1] == " " and content.strip():
                    content = content[1:-1]
                spans.append((start, runs[j][1], content))
                i = j + 1
                break
        else:
            i += 1
    return spans


def _unmasked(line: str, spans: list[tuple[int, int, str]], start: int, end: int) -> str:
    """The text of line[start:end] as the parser would give it: code spans by their content."""
    inside = [s for s in spans if start <= s[0] and s[1] <= end]
    if not inside:
        return line[start:end]
    parts, at = [], start
    for span_start, span_end, content in inside:
        parts += [line[at:span_start], content]
        at = span_end
    return "".join([*parts, line[at:end]])


def _outside_links(
    line: str,
    spans: list[tuple[int, int, str]],
    start: int,
    end: int,
    default_type: str,
    number: int,
) -> Iterator[Link]:
    """Links in line[start:end], outside markdown links: text, then code spans (`mem:x`)."""
    at = start
    for span_start, span_end, content in spans:
        if span_start < start or span_end > end:
            continue
        yield from _text_links(line[at:span_start], default_type, number)
        yield from _mem_refs(content, default_type, number, line[at:span_start])
        at = span_end
    yield from _text_links(line[at:end], default_type, number)


def _markdown_link(href: str, label: str, default_type: str, line: int) -> Link | None:
    """`[text](other.md)`: a memory or a file of the repository; URLs and anchors are neither."""
    if label.startswith(g.TYPED_PREFIX):
        kind = label[len(g.TYPED_PREFIX) :].strip() or "link"
        target = unquote(href.split("#", 1)[0]).strip()
        return Link(target, kind, LinkKind.TYPED, line) if target else None
    if label.startswith("cite:") or is_url(href) or href.startswith(("mailto:", "#")):
        return None
    if href.startswith(_MEMORY_SCHEME) and not href.startswith("memory://"):
        # `[项目概览](memory:project_overview)` (aqbjqtd/MoonTV): a memory by name, as `mem:`.
        target = unquote(href[len(_MEMORY_SCHEME) :].split("#", 1)[0]).strip()
        return Link(target, default_type, LinkKind.MEM_REF, line) if target else None
    if (read := _SERENA_READ.match(href)) is not None:
        target = unquote(read[1]).strip()
        return Link(target, default_type, LinkKind.MEM_REF, line) if target else None
    if _SCHEME.match(href):  # another scheme (file:, vscode:, ...)
        return None
    target = unquote(href.split("#", 1)[0].split("?", 1)[0]).strip()
    if not target.lower().endswith(".md") and not is_folder(target):
        return None
    return Link(target, default_type, LinkKind.MARKDOWN, line)


def is_folder(target: str) -> bool:
    """`[profiler](../tools/profiler/)`: a link to a folder of the repository, written as
    markdown (and GitHub) write one, with its `/`; checked as a file link is. A path
    without the slash (`src/app`, `LICENSE`) may be a file that is not markdown: not read."""
    return target.endswith("/") and target.strip("/.") != ""


def _text_links(text: str, default_type: str, line: int) -> Iterator[Link]:
    if "[" not in text and "mem:" not in text:
        return
    found = []
    for match in g.WIKI.finditer(text):
        target = match[1].strip()
        if target:
            found.append((match.start(), Link(target, default_type, LinkKind.WIKI, line)))
    for match in g.MEM_ID.finditer(text):
        found.append((match.start(), Link(f"mem:{match[1]}", default_type, LinkKind.MEM_ID, line)))
    for at, link in _mem_ref_matches(text, default_type, line):
        found.append((at, link))
    for _, link in sorted(found, key=lambda pair: pair[0]):
        yield link


def _mem_refs(text: str, default_type: str, line: int, before: str = "") -> Iterator[Link]:
    """`mem:beta` inside a code span (the Serena convention is to backtick it); `before`
    is the text that leads to the span."""
    for _, link in _mem_ref_matches(text, default_type, line, before):
        yield link


def _mem_ref_matches(
    text: str, default_type: str, line: int, before: str = ""
) -> Iterator[tuple[int, Link]]:
    """`mem:beta`, `mem:notes/beta.md`: a memory by name or path (or a citation ID).

    One given as an example (`e.g. `mem:frontend/core``, `like "x: `mem:y``) is a link
    only if it names a memory: Serena's own memory_maintenance template shows the
    convention with references to memories most stores do not have."""
    if "mem:" not in text:
        return
    for match in g.MEM_REF.finditer(text):
        target = match[1].rstrip(".,;:")
        if target:
            at = match.start()
            lead = text[max(0, at - _LEAD_IN) : at]
            if len(lead) < _LEAD_IN and before:
                lead = before[len(lead) - _LEAD_IN :] + lead
            example = g.EXAMPLE.search(lead)
            kind = LinkKind.NAMED if example else LinkKind.MEM_REF
            yield match.start(), Link(target, default_type, kind, line)
