"""The shared beginning of a word's inflections in European languages written with accents
or in Cyrillic, for lexical search (lexical.py searches it as a prefix).

English words are stemmed by SQLite's Porter tokenizer (lexical._stem); it reads ASCII
alone, so a word with an accent or in Cyrillic had no variant at all, and its other forms
were not found: `migrações` found none of the four memories saying `migração`, `ротации`
none saying `ротация`, while `relatorios` typed without its accent found more than
`relatórios` (Porter stemmed the one it could read). Without a dictionary, the usual light
answer is to take the ending off: the longest ending of a short list, so that singular and
plural, noun cases and adjective endings share what is left (`migraç`, `ротац`). A word
that ends in none is its own prefix (`développement` finds `développements`).

Latin endings are compared on the word without its accents (`ões` as `oes`, as the index's
`unicode61 remove_diacritics` tokenizer folds them) and cut from the word as typed; Cyrillic
ones as written (that tokenizer leaves `й` and `ё` alone). At
least four letters stay, so a short word is not cut down to what begins many others.
Letters past Cyrillic (CJK, whose words cjk.py cuts into bigrams; Greek aside) are not
handled here.
"""

from __future__ import annotations

# Spanish, Portuguese, French, Italian and German endings that change between a word's
# forms (plurals, gender, `-ão`/`-ões`, `-el`/`-éis`), as written without accents.
_LATIN_ENDINGS = (
    "oes", "aes", "eis", "ais", "ao", "es", "os", "as", "en", "er", "e", "s", "a", "o", "i",
)  # fmt: skip
# Russian noun and adjective endings (cases, numbers, genders).
_CYRILLIC_ENDINGS = (
    "иями", "ями", "ами", "иях", "ях", "ах", "ией", "ием", "ого", "его", "ому", "ему", "ыми",
    "ими", "ой", "ей", "ий", "ый", "ая", "яя", "ое", "ее", "ые", "ие", "ую", "юю", "ом", "ем",
    "ам", "ям", "ов", "ев", "ию", "ия", "ии", "ью", "ь", "а", "я", "ы", "и", "е", "у", "ю",
    "о", "й",
)  # fmt: skip
# Longest first: the longest ending that comes off is taken.
_LATIN: tuple[str, ...] = tuple(sorted(_LATIN_ENDINGS, key=len, reverse=True))
_CYRILLIC: tuple[str, ...] = tuple(sorted(_CYRILLIC_ENDINGS, key=len, reverse=True))
_KEEP = 4  # letters a cut word keeps at least
_LAST = 0x0530  # past Cyrillic and its supplement: other scripts are not read here


def stem(word: str) -> str | None:
    """The beginning the forms of a lowercase word share (`migrações` -> `migraç`,
    `ротации` -> `ротац`), the word itself when no ending comes off; None for a word
    this does not read (ASCII, digits, CJK) or shorter than five letters."""
    if word.isascii() or not word.isalpha() or len(word) <= _KEEP:
        return None
    if any(ord(c) >= _LAST for c in word):
        return None
    if any(c >= "\u0400" for c in word):  # `й` and `ё` are letters of their own
        bare, endings = word, _CYRILLIC
    else:
        import unicodedata

        folded = unicodedata.normalize("NFD", word)
        bare, endings = "".join(c for c in folded if not unicodedata.combining(c)), _LATIN
        if len(bare) != len(word):  # a letter that is two without its accent: keep it whole
            return word
    for ending in endings:
        if bare.endswith(ending) and len(bare) - len(ending) >= _KEEP:
            return word[: len(word) - len(ending)]
    return word
