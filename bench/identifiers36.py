"""Issue 13, session 36: words inside code identifiers, on real stores.

    PYTHONPATH=src .venv/bin/python bench/identifiers36.py NAME=FOLDER [NAME=FOLDER ...]
        [--out OUT.json]

Run it with `PYTHONPATH` at each side's `src/` to compare. For each store (a folder of
memories), truth by a script over the raw files, written apart from the index's code: a
word is in a memory when it is a token (`[^\\W_]+`, as unicode61 reads ASCII) or a part of
one (`[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+`). Asked: up to 80 words (hash order) of four
letters or more that some memory holds only inside a name, half dev and half test by a hash
of the word; the metric is the share of words whose lexical search (every hit) finds at
least 0.9 of the memories holding it. Then 60 camelCase names (hash order): whether the
memories writing the name as typed rank first, and the share of them the phrase of its words
(`"memory service"`) finds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import zlib
from pathlib import Path

from memory_enhancement.index.search import Filters, lexical
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository

TOKEN = re.compile(r"[^\W_]+")
PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
NAME = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][a-z]+[A-Z][A-Za-z]*(?![A-Za-z0-9_])")
EVERY = Filters(include_expired=True, now="")


def _hashed(words: list[str]) -> list[str]:
    return sorted(words, key=lambda w: hashlib.sha1(w.encode()).hexdigest())


def words_of(text: str) -> tuple[set[str], set[str]]:
    """(the tokens of a text, the parts of its compound ASCII tokens), lower-cased."""
    whole: set[str] = set()
    parts: set[str] = set()
    for token in TOKEN.findall(text):
        whole.add(token.lower())
        pieces = PART.findall(token) if token.isascii() else []
        if len(pieces) > 1:
            parts.update(p.lower() for p in pieces)
    return whole, parts


def measure(folder: Path) -> dict[str, object]:
    files = {
        p.relative_to(folder).as_posix()[:-3]: p.read_text("utf-8", "replace")
        for p in sorted(folder.rglob("*.md"))
    }
    per = {path: words_of(text) for path, text in files.items()}
    inside = _hashed(
        sorted(
            {
                w
                for whole, parts in per.values()
                for w in parts - whole
                if len(w) >= 4 and w.isalpha()
            }
        )
    )[:80]
    home = Path(tempfile.mkdtemp(prefix="ids36-"))
    service = MemoryService(
        Store(folder), Repository(folder), index_path=home / "i.db", state=State(home / "s.db")
    )
    rows = []
    names: dict[str, set[str]] = {}
    for path, text in files.items():
        for name in set(NAME.findall(text)):
            names.setdefault(name, set()).add(path)
    first = phrase_found = phrase_all = 0
    sample = _hashed(sorted(names))[:60]
    with service.index.connect() as conn:
        for word in inside:
            truth = {p for p, (whole, parts) in per.items() if word in whole | parts}
            only = {p for p, (whole, parts) in per.items() if word in parts - whole}
            hits = {h.row.path for h in lexical(conn, word, EVERY, 10**6)}
            split = "dev" if zlib.crc32(word.encode()) % 2 == 0 else "test"
            rows.append((split, len(truth), len(truth & hits), len(only), len(only & hits)))
        for name in sample:
            holders = names[name]
            ranked = [h.row.path for h in lexical(conn, name, EVERY, 10**6)]
            first += set(ranked[: len(holders)]) == holders
            phrase = " ".join(p.lower() for p in PART.findall(name))
            found = {h.row.path for h in lexical(conn, f'"{phrase}"', EVERY, 10**6)}
            phrase_found += len(found & holders)
            phrase_all += len(holders)
    result: dict[str, object] = {"memories": len(files)}
    for half in ("dev", "test"):
        mine = [r for r in rows if r[0] == half]
        result[half] = {
            "words": len(mine),
            "met": round(sum(r[2] >= 0.9 * r[1] for r in mine) / max(len(mine), 1), 3),
            "only_inside_found": f"{sum(r[4] for r in mine)}/{sum(r[3] for r in mine)}",
        }
    result["names"] = {
        "asked": len(sample),
        "exact_first": first,
        "phrase_recall": round(phrase_found / max(phrase_all, 1), 3),
    }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stores", nargs="+", help="NAME=FOLDER")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    results = {}
    for spec in args.stores:
        name, folder = spec.split("=", 1)
        results[name] = measure(Path(folder))
        print(name, json.dumps(results[name]))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
