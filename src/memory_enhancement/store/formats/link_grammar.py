"""What the link scan looks for: keyword lists and patterns (see links.py for how).

Kept apart from the scan so the grammar can be read, and extended (a language's
related-material words, a new entry style), in one place.
"""

from __future__ import annotations

import re

MANAGED_LINKS = "links"
RELATED = "related"
# The sections the tool writes its own fields into: their bullets are never candidates.
MANAGED_FIELDS = frozenset({"metadata", "citations"})
# The memory's own citation ID among them (`- **ID**: mem:a7Bc3x`, written by `move`):
# a `mem:` reference to the memory itself, not a link.
ID_FIELD = re.compile(r"\s*[-*+]\s+\*\*(?:citation\s+)?id\*\*\s*:", re.IGNORECASE)

# Words of a heading (or of a `Related:` line) that introduce related material.
# Latin-script words match whole words; CJK ones anywhere in the heading.
RELATED_WORDS = frozenset(
    {
        "related", "see also", "references", "reference", "cross-references",
        "cross-reference", "further reading", "links", "backlinks",
        "relacionado", "relacionados", "relacionada", "relacionadas", "ver también",
        "véase", "veja também", "referencias", "referências", "enlaces",
        "voir aussi", "liens", "références", "siehe auch", "verwandt", "verweise",
        # `## Verwandte Memories`, `### Mémoires associées`, `## Связанные memories`, `Ver
        # também` (headings of real memories, found with find_string), and their kin.
        "verwandte", "querverweise", "ver também", "associées", "associés", "voir également",
        "correlati", "correlate", "vedi anche", "collegamenti", "riferimenti",
        "связанные", "связанное", "см также", "смотрите также", "ссылки",
    }
)  # fmt: skip
# Korean `## 연관 메모리` (associated memories) and `## 함께 보기` (see also), found with
# find_string in real memories; `연관` alone is not enough (`연관관계 매핑`: an ORM's mapping).
RELATED_CJK = (
    "関連", "参照", "参考", "相关", "相關", "参见", "另见", "관련", "참고", "연관 메모", "함께 보기"
)  # fmt: skip
# The exact tests of links.is_related, each one search: a CJK word anywhere; a
# Latin-script word (or words) whole, in the title's letter runs joined by spaces.
RELATED_CJK_ANY = re.compile("|".join(RELATED_CJK))
WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
RELATED_WORD_ANY = re.compile(
    " (?:" + "|".join(re.escape(w) for w in sorted(RELATED_WORDS, key=len, reverse=True)) + ") "
)
# A quick test that a case-folded title may hold one of the words above (implied by them).
# Each alternative's first letter is tried at every character, so the words are reached by
# letters already there (`soc` for associées, `leg` for collegamenti, `fer` for riferimenti;
# `rel` holds correlati): `a` and `c` first cost indexing the corpus 15M instructions.
MAYBE_RELATED = re.compile(
    "rel|see|ref|réf|link|further|v[eé]|voir|lien|siehe|verw|enlac|soc|leg|fer|"
    "связ|см|ссыл|" + "|".join(RELATED_CJK)
)
# The same test for an ASCII title (its ASCII words; `verw` is in `ve`), grouped by first
# letter: most titles and labels a store's scan asks about are ASCII, and most fail it.
MAYBE_RELATED_ASCII = re.compile(
    "re[lf]|s(?:ee|iehe|oc)|l(?:ink|ien|eg)|f(?:urther|er)|v(?:e|oir)|enlac"
)

# Not right after an identifier (`FUN(X[[i]])`) nor a slash: `app/[[...slug]]/page.tsx` is a
# route folder (Next.js), which links to nothing (122sp7/xuanwu-app heads a section with one).
WIKI = re.compile(r"(?<![\w\])/])\[\[(?![\s:])([^\[\]|#\n]+)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
MEM_ID = re.compile(r"\[mem:([A-Za-z0-9]{4,12})\]")
# Not one that runs into a brace pattern (`mem:checkpoint/{ceo,cfo}-x`): it names several
# memories, none of them `checkpoint/`. (A `*` after one is emphasis: `**mem:core**`.)
MEM_REF = re.compile(r"(?<![\w\[/])mem:((?:[^\W_]|[_.-])[\w./-]*+)(?!\{)")
# What leads to a reference given as an example: `e.g. `, `for instance `, `like "x: `.
EXAMPLE = re.compile(
    r"(?:\be\.g\.|\bfor (?:example|instance)|\bsuch as|\blike)[ \t,:]*(?:\"[^\"`]*)?$",
    re.IGNORECASE,
)
SIMPLE_LINK = re.compile(r"\[([^\[\]]*)\]\(([^()\s]+)\)")
ITEM = re.compile(r"\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
# An item of the `## Links` / `## Related` sections that is a name alone (or a name and
# its why): a link of its own. In any script, as the tool writes what an agent gave it:
# `- 없는_메모리` had been a mere candidate, so a link to a memory not yet written vanished.
BARE_ID = re.compile(r"^([^\W_][\w./-]*)(?:\s+[-–—:]\s.*|\s*[-–—])?$")
# The entry a list item starts with: a name, bare, `backticked` or **bold** (either
# way round), then the end of the item or a separator before the why.
NAME = r"[\w@][\w.@/-]*"
# The name is atomic (no backtracking into it: a prose item fails at once), and stops
# before `->`, the one separator made of name characters. Written as runs of name
# characters between such hyphens, not as one alternation per character: every list
# item of a store is matched against it, and the alternation cost indexing the shared
# corpus 33M instructions more. The separators after it (`rest`) begin with different
# characters, so one `\s*` serves those that allow no space too.
LEAD_NAME = r"(?>[\w@][\w.@/]*+(?:-(?!>)[\w.@/]*+)*+)"
LEAD = re.compile(
    rf"^(?P<open>\*\*`|`\*\*|\*\*|__|`|\*)?(?P<name>(?:\.{{1,2}}/)*\.?{LEAD_NAME})(?P<close>`\*\*|\*\*`|\*\*|__|`|\*)?"
    r"(?P<rest>$|\s*(?::(?:\s|$)|[：（(→]|->)|\s+[-–—]+(?:\s|$))"
)
# A name a sentence sends the reader to: a store path (`.serena/memories/x.md`), or
# "`x` memory", "memory `x`", "see `x`", "`x` を参照", "`x`に記録", "メモ `x`", "メモリー `x`",
# Chinese "详见 `x`" / "参见 `x`" (see) and "`x` 记忆" / "`x` 記憶" (the x memory: 1morr/FMP),
# Korean "`x` 메모리를 참고", "`x` 참조" (see x) and "메모리 `x`".
PROSE_REF = re.compile(
    r"`(?P<name>(?:[\w.@-]+/)*memories/[\w.@/-]+)`"
    r"|(?:(?<![\w])(?:[Ss]ee|[Mm]emory|[Mm]emories|[Mm]emory:)\s+|(?:メモリー?|メモ|메모리)\s*"
    r"|(?:详见|詳見|参见|參見)[：:]?\s*)"
    r"`(?=[\w@])(?P<after>[\w.@/-]+)`"
    r"|`(?P<before>[\w@][\w.@/-]*)`\s*"
    r"(?:memory|memories|メモ|を参照|に記録|参照|记忆|記憶|메모리|참고|참조)"
)
# "See (also) `x`" in the European languages, only in a memory that is not plain ASCII
# (links.extract_links): Portuguese "ver `x`", "veja `x`", "ver também `x`" (three links of
# davidsonsilva/fintwin's project_overview: `ver `planning/vs10-...` para o detalhe`),
# Spanish "véase", French "voir (aussi)", German "siehe (auch)", Italian "vedi", Dutch "zie".
PROSE_REF_EU = re.compile(
    r"(?<![\w])(?:[Vv]er|[Vv]eja|[Vv]ide|[Vv]éase|[Vv]oir|[Ss]iehe|[Vv]edi|[Zz]ie)"
    r"(?:\s+(?:também|también|aussi|auch|anche|ook))?\s+`(?=[\w@])(?P<after>[\w.@/-]+)`"
)
# A list item that is a short label and nothing but `code` names after it: an index's
# `- Bridge: `bridge_native_codemapper`, `bridge_rubic_codemapper`` (kynesyslabs/sdks),
# `- **Sequent calculus:** `dissection_of_l`, `grokking_sequent_calculus`` (lane-core/pane).
# Its names are candidates: links only where they name a memory. A name holds no space:
# `- Negative patterns: `all-globs: ["!x"]`` is code (rjmurillo/ai-agents has many).
LABEL_LIST = (  # compiled where used (links._label_list): rare, and dear to compile
    r"(?:\*\*)?(?>[^`:：*\n]{1,40})(?:\*\*)?[ \t]*[:：][ \t]*(?:\*\*)?[ \t]*"
    r"(?P<names>`[^`\s]+`(?:[ \t]*[,、][ \t]*`[^`\s]+`)*)[ \t]*$"
)
# A table cell holding one name, bare, `backticked` or **bold**: `| `alpha` | why |`. Matched
# whole against the text between two pipes (links._cells): searched for in a row, it was
# tried after every pipe of every table row of a store (and, starting with a look-behind,
# at every character). A separator row (`|---|:-:|`) holds no name: a name starts with a
# letter, a digit, `_` or `@`.
NAME_CELL = re.compile(rf"[ \t]*(?:\*\*)?`?(?P<name>(?>{NAME}))`?(?:\*\*)?[ \t]*")
# Link syntax and URLs are skipped. Neither may scan past where it could start again (a
# `[` or `(` inside, a URL's scheme begun mid-word): each was tried from every `[`, `:` or
# letter to the end of the line, so a 200 KB line of `[[[` or `:::` in a Related item took
# minutes.
NAMES = re.compile(
    r"`(?P<code>[^`\n]+)`|\*\*(?P<bold>[^*\n]+)\*\*"
    r"|\[[^\[\]\n]*\]\([^()\n]*\)|\[\[[^\[\]\n]*\]\]"
    r"|(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://\S+"
    r"|(?<![\w./@-])(?P<token>[\w@][\w.@]*(?:[_/-][\w.@/-]*|\.[mM][dD]\b))"
)
TOKEN = re.compile(rf"(?<![\w./@-]){NAME}")
TYPED_PREFIX = "link:"
NOT_A_NAME = re.compile(r"[\d.,:/-]+|v?\d+(?:\.\d+)+\w*")  # 42, 1.2.3, v2.0rc1, 2025-01-02
ITEM_STARTS = frozenset("-*+0123456789")

# An entry written as a file name (`- **`beta.md`** ✓`): whatever follows it.
MD_ENTRY = re.compile(
    r"^(?:\*\*`|`\*\*|\*\*|`)(?P<name>[\w@.][\w.@/-]*\.[mM][dD])(?:`\*\*|\*\*`|\*\*|`)"
)
# An item marker, then (optionally) an entry that reads as a name: one match says both.
ITEM_ENTRY = re.compile(
    rf"(?P<marker>{ITEM.pattern})(?:{LEAD.pattern.removeprefix('^')}"
    rf"|{MD_ENTRY.pattern.removeprefix('^').replace('(?P<name>', '(?:')})?"
)
