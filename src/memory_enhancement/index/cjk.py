"""Words inside Chinese, Japanese and Korean text, for the full-text index.

SQLite's `unicode61` tokenizer splits on spaces and punctuation, and CJK text has
neither between words: `ヘッドレス環境でテストがハングする` is one token, so a search
for `ヘッドレス` finds nothing. Without a dictionary, the usual answer is character
bigrams: every CJK run is indexed as its overlapping pairs (`ヘッ ッド ドレ レス ス環 …`),
so any word of two or more characters inside it is a phrase of consecutive bigrams.
Latin text is left exactly as it was, so English ranks as before, and `offscreen`
glued to Japanese text becomes a word of its own.

The index stores the segmented text beside the original only for memories that
contain CJK (see schema.py); snippets for those are cut from the original here.

On the query side (`query_terms`), a CJK run is first cut where the script changes
(kanji, katakana, hiragana: Japanese writes particles in hiragana between content
words in kanji or katakana), hiragana pieces are dropped when something else is
left, and each piece becomes its phrase (the exact word, ranked first) and its
bigrams (so a sentence-long Chinese question still matches the words it shares).
Korean puts spaces between words but glues particles and endings to them (`캐시를`,
`조회하는`): a Hangul piece is also searched without its ending (`hangul_stem`), and
an ending glued to a Latin word (`Redis의`) is not searched at all.
"""

from __future__ import annotations

import functools

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    import re

RANGES = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3005-\u3007"  # 々 〆 〇
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana (with ー)
    "\u3131-\u318e"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width katakana
    "\U00020000-\U0003134f"  # CJK extensions B-G
)
_CJK = f"[{RANGES}]+"
_CJK_SPLIT = f"([{RANGES}]+)"


@functools.cache
def regex(pattern: str) -> re.Pattern[str]:
    """A pattern compiled, with `re` imported, on first use.

    A search in a new process (cli/fast.py) costs about three bare Python starts;
    importing `re` (with `enum`) and compiling these patterns was a fifth of that.
    An English query needs none of them: ASCII text is split into words by
    `WORDS` and never holds CJK, so only text that might is handed to `re`.
    """
    import re

    return re.compile(pattern)


# ASCII punctuation, spaces and controls to a space; letters, digits and `_` kept.
_APART = {c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}


class Words:
    r"""`findall(text)`: the runs of word characters of a text, exactly what
    `re.findall(r"\w+", text)` returns; ASCII text without `re` (see `regex`)."""

    __slots__ = ()

    def findall(self, text: str) -> list[str]:
        if text.isascii():
            return text.translate(_APART).split()
        return regex(r"\w+").findall(text)


WORDS = Words()  # the words of a text, as `\w+` finds them


# Full-width digits and Latin letters, and half-width katakana with its sound marks.
_ODD_WIDTHS = "[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff65-\uff9f]+"


def width_folded(text: str) -> str:
    """text with `ＡＰＩ` and `ﾃｽﾄ` (typed by an input method in the other width) in the
    widths memories use, `API` and `テスト`, which is what a model's vocabulary knows.

    Only letters, digits and katakana are folded: full-width punctuation (`？`, `（`),
    which Japanese and Chinese are written with, is read by the model as it is.
    """
    if text.isascii():
        return text
    import unicodedata

    return regex(_ODD_WIDTHS).sub(lambda run: unicodedata.normalize("NFKC", run[0]), text)


@functools.cache
def _maybe_cjk() -> re.Pattern[bytes]:
    """The UTF-8 lead bytes of every range of RANGES (and a few neighbours): U+3000-U+DFFF,
    Hangul Jamo, the compatibility ideographs, half-width katakana, extensions B-G."""
    import re

    return re.compile(rb"[\xe3-\xed]|\xe1[\x84-\x87]|\xef[\xa4-\xab\xbd\xbe]|\xf0[\xa0-\xb1]")


def has_cjk(text: str) -> bool:
    """Whether text holds a CJK character. Asked of every memory a sync writes: ASCII text
    (most English memories) is answered without a scan, and text whose only other letters
    are dashes, arrows and emoji by a look at its bytes: compiling the CJK pattern (its
    ranges are some 70,000 characters, looped over one by one) was 0.3% of indexing the
    shared corpus, whose 213 memories with such characters hold no CJK (issue 12's bound)."""
    if text.isascii():
        return False
    if _maybe_cjk().search(text.encode("utf-8", "surrogatepass")) is None:
        return False
    return regex(_CJK).search(text) is not None


def share(text: str) -> float:
    """The share of a text's letters and digits that are CJK (0 for English, ~1 for Chinese)."""
    if not has_cjk(text):
        return 0.0
    cjk = sum(len(run) for run in regex(_CJK).findall(text))
    if not cjk:
        return 0.0
    other = sum(1 for c in text if c.isalnum()) - cjk
    return round(cjk / (cjk + max(other, 0)), 3)


def characters(text: str) -> int:
    """How many CJK characters a text holds (0 for ASCII text, answered without a scan)."""
    if not has_cjk(text):
        return 0
    return sum(len(run) for run in regex(_CJK).findall(text))


def bigrams(run: str) -> list[str]:
    """The overlapping character pairs of a CJK run; a single character stands alone."""
    if len(run) < 2:
        return [run]
    return [run[n : n + 2] for n in range(len(run) - 1)]


def segment(text: str) -> str | None:
    """The text with every CJK run replaced by its bigrams, or None when it has no CJK.

    Runs are set apart by spaces, so Latin words glued to them become tokens. The text
    is composed first (see `composed`), so a memory a Mac wrote in NFD is found by the
    words every query is typed in.
    """
    if not has_cjk(text):
        return None
    text = composed(text)
    return regex(_CJK).sub(lambda match: f" {' '.join(bigrams(match.group()))} ", text)


def composed(text: str) -> str:
    """text in NFC: Hangul that macOS decomposed into jamo (`ᄒ ᅡ ᆫ` for `한`) and kana
    with a separate voicing mark (`カ ゙` for `ガ`) as the syllables queries are typed
    in. A decomposed memory was found by no query, and its snippet could end inside a
    syllable (`환경` shown as `환겨`)."""
    if text.isascii():
        return text
    import unicodedata

    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def _script(char: str) -> str:
    if "\u3040" <= char <= "\u309f":
        return "hiragana"
    if "\u30a0" <= char <= "\u30ff" or "\u31f0" <= char <= "\u31ff" or "\uff66" <= char <= "\uff9f":
        return "katakana"
    if _hangul(char):
        return "hangul"
    return "other"


def _hangul(char: str) -> bool:
    return (
        "\uac00" <= char <= "\ud7af" or "\u1100" <= char <= "\u11ff" or "\u3131" <= char <= "\u318e"
    )


# Particles and endings Korean glues to a word, as a query writes them: `캐시를` is the
# word `캐시` (cache) plus `를`, and a memory says `캐시는`, `캐시가` or `캐시`. Bigrams
# find a longer word's stem among its pairs, but a two-syllable word plus a one-syllable
# particle is two pairs that must both match (`캐시 시를`), so `캐시를` found nothing in a
# store where nine memories say `캐시`. Left out on purpose: endings that end common
# nouns too (`인` in `로그인`, `서` in `문서`, `나`, `고`).
_PARTICLES = """은 는 이 가 을 를 의 에 로 와 과 도 만
    에서 으로 에게 한테 까지 부터 처럼 보다 마다 이나 이랑 하고 에는 에도 에선 와의 과의
    로의 로는 로도 로서 로써 만의 만을 만은 밖에 조차 께서 이며 이고 이란 이라 이다 이면
    인데 인지 에서는 에서도 에서의 으로는 으로도 으로의 으로서 으로써 에게서 로부터 이라는
    이라고 입니다 으로부터"""
# The endings of verbs made with 하다 and 되다 (`조회하는` is `조회` plus `하는`), and of
# questions (`해제하나`, `저장되나요`).
_VERB_ENDINGS = """하는 하기 하면 하여 해서 해야 해도 하지 한다 했다 하게 하던 했던 하며 합니다
    하세요 하려면 하려고 하도록 할 한 함 되는 되면 된다 되어 되지 됩니다 되도록 된 됨
    하나 하나요 할까 할까요 하죠 되나 되나요 인가요"""
_ENDINGS = frozenset(_PARTICLES.split() + _VERB_ENDINGS.split())
_LONGEST_ENDING = max(map(len, _ENDINGS))


def hangul_stem(word: str) -> str | None:
    """A Hangul word without the longest particle or ending it ends with, when at least
    two syllables are left (`캐시를` -> `캐시`, `조회하는` -> `조회`), else None.

    Two syllables at least, as a one-syllable stem would match every bigram starting
    with it: `결과` (result) is not `결` plus `과`. A stem taken from a word that was not
    inflected (`게이트웨이` -> `게이트웨`) is a prefix of the word itself, so it costs
    little; the word as written is searched too, and ranks first.
    """
    for size in range(min(_LONGEST_ENDING, len(word) - 2), 0, -1):
        if word[-size:] in _ENDINGS:
            return word[:-size]
    return None


def _korean_ending(piece: str) -> bool:
    """Whether a piece is only a particle or an ending (`를` in `JWT를`)."""
    return piece in _ENDINGS


def _pieces(run: str) -> list[str]:
    """A CJK run cut where the script changes; hiragana-only pieces dropped if others remain."""
    from itertools import groupby

    # Grouped, not grown a character at a time: `pieces[-1] += char` copies the piece
    # each time, and a 200 KB query of one script took seconds.
    pieces = ["".join(group) for _, group in groupby(run, _script)]
    content = [p for p in pieces if _script(p[0]) != "hiragana"]
    return content or pieces


def _phrase(tokens: list[str]) -> str:
    return '"' + " ".join(tokens) + '"'


def query_terms(word: str) -> list[str]:
    """FTS5 terms (quoted, to be OR-ed) for one word of a query that may contain CJK.

    A word with no CJK is itself. A word mixing scripts (`Qt依存`, `offscreenモード`,
    `引き継ぎ`) is the phrase of all its tokens (as the index segments it) plus the terms
    of each part. A CJK piece is its phrase of bigrams plus, when longer than a word
    usually is, each bigram alone (of four characters, its two halves). (`引き継ぎ` was
    `引`* `継`*: kana dropped as particles.)
    """
    lowered = word.lower()
    if not has_cjk(lowered):
        return [_phrase([lowered])]
    terms: list[str] = []
    parts = [p for p in regex(_CJK_SPLIT).split(lowered) if p]
    if len(parts) > 1 or _pieces(lowered) != [lowered]:
        tokens = [t for p in parts for t in (bigrams(p) if has_cjk(p) else WORDS.findall(p))]
        terms.append(_phrase(tokens))
    for part in parts:
        if not has_cjk(part):
            terms += [_phrase([t]) for t in WORDS.findall(part)]
            continue
        pieces = _pieces(part)
        if len(parts) > 1:  # `Redis의`: the particle says nothing about the memory
            pieces = [p for p in pieces if not _korean_ending(p)]
        if len(parts) > 1 or len(pieces) > 1:  # a lone character among words says little
            pieces = [p for p in pieces if len(p) > 1] or pieces
        for piece in pieces:
            pairs = bigrams(piece)
            if len(piece) == 1:
                terms.append(f'"{piece}"*')  # the first character of any bigram
            else:
                terms.append(_phrase(pairs))
            stem = hangul_stem(piece) if _hangul(piece[0]) else None
            if stem:  # `캐시를`: also `캐시`, and the pairs of the stem, not of its particle
                pairs = bigrams(stem)
                terms.append(_phrase(pairs))
            if len(pairs) > 2:
                # Four characters are two words of two (`保存方法`, `导出函数`): its halves, not
                # the pair across them (`存方` is in `依存方向`, a rare pair that ranked it first).
                alone = pairs[::2] if len(pairs) == 3 else pairs
                terms += [_phrase([pair]) for pair in alone]
    return list(dict.fromkeys(terms))


def pair_needles(needles: list[str]) -> list[str]:
    """The pairs `query_terms` searched a needle's longer CJK pieces by, to highlight when
    no needle stands whole in a memory: a Chinese question is one run of hanzi
    (`如何检查服务是否正常`), found by the words it shares (`检查`, `服务`), and its snippet
    was the memory's first line with nothing in bold (Await-d/TgGod)."""
    found: list[str] = []
    for needle in needles:
        pairs = bigrams(needle) if has_cjk(needle) else []
        if len(pairs) > 2:
            found += pairs[::2] if len(pairs) == 3 else pairs
    return list(dict.fromkeys(found))


def needles(query: str) -> list[str]:
    """What a snippet highlights for a query: its words, and the CJK pieces inside them."""
    found: list[str] = []
    for word in WORDS.findall(query):
        if not has_cjk(word):
            found.append(word)
            continue
        for part in regex(_CJK_SPLIT).split(word):
            if part and has_cjk(part):
                found += [part] if _pieces(part) != [part] else []  # `引き継ぎ` whole
                for piece in (p for p in _pieces(part) if len(p) > 1):
                    stem = hangul_stem(piece) if _hangul(piece[0]) else None
                    found += [piece, stem] if stem else [piece]
            elif part:
                found += WORDS.findall(part)
    return found
