"""Issue 13, session 27: hybrid's misses read one by one, and the variants they suggested.

    .venv/bin/python bench/fusion13.py dump --cache DIR --out OUT.json    # first, once
    .venv/bin/python bench/variants27.py misses [--dump OUT.json] [--sets corpus,paraphrase]
    .venv/bin/python bench/variants27.py score [--dump OUT.json] [--split dev] [--only ...]
    .venv/bin/python bench/variants27.py closeness [--dump OUT.json]

`misses` prints every query whose labelled answers are not all in the shipped hybrid top
5 (dev and test): the query, each answer's title, first lines, length and hybrid, lexical
and semantic ranks and scores (in each side's first 100), its cosine with the first
result, and the top 5 with the same. `score` ranks the dev (or test) halves under the
variants the misses suggested, each printed as fusion13.py does (the mean of R@5 +
MRR@10 over the four sets, then R@5 / MRR@10 per set):

* **neighbours** of the first result over the whole store (mean chunk vectors): its
  nearest k with cosine >= tau, after it and its near-duplicates (or at a fixed place);
  only mutual nearest neighbours; or its score lent to them (`smooth`); or the memories
  whose titles, embedded alone, are closest to its (`titled`) or share most of its
  title's words (`title_words`).
* **span floors**: min-max scaling over at least a given span (semantic: in cosine;
  lexical: a share of its top), the scaling before session 27 with a floor for flat lists.
* **spread**: each list from its floor in standard deviations (search._spread, adopted).
* **word forms** on hybrid's lexical side (BM25 again in Python, variants26.Lex): Porter's
  y -> i kept apart (`copy` -> `copi*`, `copy*`), and a word that is its own stem also
  searched in the plural.
* **the one-word rule** for CJK questions glued to Latin letters (a single \\w+ run).

`closeness` compares four measures of how alike two memories are, for answers of the
same query against the first result's nearest non-answers (area under the ROC curve).
Choices on dev only (docs/benchmarks.md, issue 13, session 27).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from memory_enhancement.index import cjk
from memory_enhancement.index.lexical import _WORD, STOPWORDS, _stem, _terms

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import fusion13 as f13  # noqa: E402
import variants26 as v26  # noqa: E402

Rank = Callable[[dict[str, Any]], list[str]]


def load(dump: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(dump.read_text())
    arrays = np.load(dump.with_suffix(".npz"))
    data["arrays"] = arrays
    for n in f13.SETS:
        for qid, entry in data["sets"][n].items():
            entry["vector"] = arrays[f"q.{n}.{qid}"]
            if entry["group"] not in f13._VECTORS:
                f13._VECTORS[entry["group"]] = f13._Vectors(arrays, entry["group"])
    return data


# -- misses ------------------------------------------------------------------------------


def _ranks(
    out: list[str], lex: dict[str, tuple[int, float]], sem: dict[str, tuple[int, float]]
) -> Callable[[str], str]:
    def ranks(p: str) -> str:
        hybrid = out.index(p) + 1 if p in out else "-"
        a = f"{lex[p][0]} {lex[p][1]:.2f}" if p in lex else "-"
        b = f"{sem[p][0]} {sem[p][1]:.3f}" if p in sem else "-"
        return f"hybrid {hybrid!s:>4}  lexical {a:>10}  semantic {b:>10}  {p}"

    return ranks


def misses(data: dict[str, Any], dump: Path, sets: list[str]) -> None:
    conns: dict[str, sqlite3.Connection] = {}

    def memory(group: str, path: str) -> tuple[str, str]:
        if group not in conns:
            conns[group] = sqlite3.connect(dump.with_suffix(".groups") / group / "i.db")
        found = (
            conns[group]
            .execute("SELECT title, content FROM memories WHERE path = ?", (path,))
            .fetchone()
        )
        return (str(found[0]), str(found[1])) if found else ("?", "")

    for n in sets:
        for qid, d in data["sets"][n].items():
            relevant, out = data["relevant"][f"{n}/{qid}"], f13.near()(d)
            if all(r in out[:5] for r in relevant):
                continue
            lex = {p: (i, s) for i, (p, s) in enumerate(d["lex"], 1)}
            sem = {
                p: (i, s) for i, (p, s, _) in enumerate(sorted(d["sem"], key=lambda x: -x[1]), 1)
            }
            ranks = _ranks(out, lex, sem)
            split = data["split"][f"{n}/{qid}"]
            print(f"\n=== {n}/{qid} [{split}] weight {d['weight']:.2f}: {d['query']}")
            group = f13._VECTORS[d["group"]]
            first = group.means[group.row_of[out[0]]]
            for r in relevant:
                title, text = memory(d["group"], r)
                cosine = float(group.means[group.row_of[r]] @ first) if r in group.row_of else None
                lines = " | ".join(line.strip() for line in text.splitlines() if line.strip())
                print(f"  WANT {ranks(r)}  ({len(text.split())} words, cosine to first {cosine})")
                print(f"       {title}: {lines[:240]}")
            for p in out[:5]:
                print(f"  TOP  {ranks(p)}{'  <- labelled' if p in relevant else ''}")


# -- neighbours of the first result ------------------------------------------------------


def _block(d: dict[str, Any], inner: Rank | None = None) -> tuple[list[str], int]:
    """fusion13.near(inner)'s ranking (its defaults: cosine 0.85, at most 5, memories of
    at most 20% CJK), and how many it put first: the first result and those moved."""
    out = (inner or f13.convex())(d)
    if d["weight"] >= 1.0 or not out or d["cjk"].get(out[0], 1.0) > 0.2:
        return out, 1
    g = f13._VECTORS[d["group"]]
    semd = {p: first for p, first, _ in d["sem"]}
    found = {p for p, _ in d["lex"][: f13.FETCH]}
    found |= set(sorted(semd, key=lambda p: -semd[p])[: f13.FETCH])
    mine = g.means[g.row_of[out[0]]]
    close = sorted(
        ((float(g.means[g.row_of[p]] @ mine), p) for p in found
         if p != out[0] and d["cjk"].get(p, 1.0) <= 0.2),
        key=lambda pair: (-pair[0], pair[1]),
    )  # fmt: skip
    keep = [p for cosine, p in close[:5] if cosine >= 0.85]
    return [out[0], *keep, *(p for p in out[1:] if p not in keep)], 1 + len(keep)


def whole(
    k: int, tau: float, place: int | None = None, *, mutual: int = 0, inner: Rank | None = None
) -> Rank:
    """The first result's k nearest memories in the whole store (cosine >= tau), after
    its block or at `place`; with `mutual`, only those that have the first result among
    their own `mutual` nearest."""

    def rank(d: dict[str, Any]) -> list[str]:
        out, block = _block(d, inner)
        if d["weight"] >= 1.0 or not out or d["cjk"].get(out[0], 1.0) > 0.2:
            return out
        g = f13._VECTORS[d["group"]]
        top = g.row_of[out[0]]
        cosines = g.means @ g.means[top]
        picks: list[str] = []
        for i in np.argsort(-cosines)[: k + 1].tolist():
            if i == top or cosines[i] < tau:
                continue
            if mutual:
                back = g.means @ g.means[i]
                back[i] = -2.0
                if top not in np.argsort(-back)[:mutual].tolist():
                    continue
            picks += g.owners[i]
        at = block if place is None else place
        keep = [p for p in picks[:k] if p not in out[:at]]
        return [*out[:at], *keep, *(p for p in out[at:] if p not in keep)]

    return rank


def titled(tau: float, most: int = 1) -> Rank:
    """The memories whose title, embedded alone (fusion13's dump), is closest to the first
    result's (cosine >= tau; whole store), after it and its near-duplicates."""

    def rank(d: dict[str, Any]) -> list[str]:
        out, block = _block(d)
        if d["weight"] >= 1.0 or not out or d["cjk"].get(out[0], 1.0) > 0.2:
            return out
        g = f13._VECTORS[d["group"]]
        titles = _TITLES[d["group"]]
        a = g.row_of[out[0]]
        cosines = titles @ titles[a]
        order = np.argsort(-cosines)[: most + 1].tolist()
        picks = [g.owners[i][0] for i in order if i != a and cosines[i] >= tau][:most]
        keep = [p for p in picks if p not in out[:block]]
        return [*out[:block], *keep, *(p for p in out[block:] if p not in keep)]

    return rank


_TITLES: dict[str, Any] = {}
_TITLE_WORDS: dict[str, dict[str, set[str]]] = {}


def _title_words(title: str) -> set[str]:
    words = set()
    for word in _WORD.findall(title.lower().replace("_", " ")):
        if word not in STOPWORDS:
            plural = len(word) > 3 and word.endswith("s") and not word.endswith("ss")
            words.add(word[:-1] if plural else word)
    return words


def title_words(least: float, most: int = 1) -> Rank:
    """The memories whose titles share the most words with the first result's (Jaccard
    >= least, the words without function words and a plural -s; whole store), after it
    and its near-duplicates: `titled` without a title vector."""

    def rank(d: dict[str, Any]) -> list[str]:
        out, block = _block(d)
        if d["weight"] >= 1.0 or not out or d["cjk"].get(out[0], 1.0) > 0.2:
            return out
        words = _TITLE_WORDS[d["group"]]
        mine = words.get(out[0], set())
        if len(mine) < 2:
            return out
        alike = sorted(
            ((len(mine & theirs) / len(mine | theirs), p) for p, theirs in words.items()
             if p != out[0] and theirs),
            reverse=True,
        )  # fmt: skip
        picks = [p for share, p in alike[:most] if share >= least]
        keep = [p for p in picks if p not in out[:block]]
        return [*out[:block], *keep, *(p for p in out[block:] if p not in keep)]

    return rank


def _fused(
    d: dict[str, Any], scaled: Callable[[dict[str, float]], dict[str, float]]
) -> dict[str, float]:
    semd = {p: s for p, s, _ in d["sem"]}
    best = sorted(semd, key=lambda p: -semd[p])[: f13.FETCH]
    sem = scaled({p: semd[p] for p in best})
    lex = scaled({p: s for p, s in d["lex"][: f13.FETCH]})
    w = d["weight"]
    return {
        p: w * lex.get(p, 0) + (1 - w) * sem.get(p, 0) * (1 - d["cjk"].get(p, 0))
        for p in {*lex, *sem}
    }


def smooth(lam: float, c0: float) -> Rank:
    """(Min-max, before the near-duplicates:) lam x (cosine - c0) / (1 - c0) x the first
    result's fused score added to each memory of the store closer to it than c0."""

    def inner(d: dict[str, Any]) -> list[str]:
        base = f13.convex(scale="range")(d)
        if d["weight"] >= 1.0 or not base or d["cjk"].get(base[0], 1.0) > 0.2:
            return base
        scores, g = _fused(d, f13._scaled), f13._VECTORS[d["group"]]
        cosines = g.means @ g.means[g.row_of[base[0]]]
        for i in np.argsort(-cosines)[:50].tolist():
            for p in g.owners[i]:
                if p != base[0] and cosines[i] >= c0:
                    lent = lam * (cosines[i] - c0) / (1 - c0) * scores[base[0]]
                    scores[p] = scores.get(p, 0.0) + lent
        order = {p: n for n, p in enumerate(base)}
        return sorted(scores, key=lambda p: (-scores[p], order.get(p, 10**9), p))

    return f13.near(inner)


# -- scaling -----------------------------------------------------------------------------


def span_floor(semantic: float = 0.0, lexical: float = 0.0) -> Rank:
    """Min-max over at least `semantic` of cosine and `lexical` x the top BM25."""

    def scaled(scores: dict[str, float], floor: float) -> dict[str, float]:
        if not scores:
            return {}
        top, bottom = max(scores.values()), min(scores.values())
        span = max(top - bottom, floor)
        return {p: (s - bottom) / span if span > 0 else 1.0 for p, s in scores.items()}

    def inner(d: dict[str, Any]) -> list[str]:
        semd = {p: s for p, s, _ in d["sem"]}
        best = sorted(semd, key=lambda p: -semd[p])[: f13.FETCH]
        hits = {p: s for p, s in d["lex"][: f13.FETCH]}
        sem = scaled({p: semd[p] for p in best}, semantic)
        lex = scaled(hits, lexical * max(hits.values(), default=0.0))
        w, lex_rank = d["weight"], {p: n for n, p in enumerate(hits)}
        sem_rank = {p: n for n, p in enumerate(best)}
        score = {p: w * lex.get(p, 0) + (1 - w) * sem.get(p, 0) * (1 - d["cjk"].get(p, 0))
                 for p in {*lex, *sem}}  # fmt: skip
        return sorted(
            score, key=lambda p: (-score[p], lex_rank.get(p, 10**9), sem_rank.get(p, 10**9), p)
        )

    return f13.near(inner)


def weighted(base: float) -> Rank:
    return f13.near(f13.convex(base=base))


def one_word_up_to(letters: int) -> Rank:
    """The one-word rule (lexical weight 1) only for a CJK query of at most `letters`."""

    def rank(d: dict[str, Any]) -> list[str]:
        words = _WORD.findall(d["query"])
        if len(words) == 1 and len(words[0]) > letters and cjk.has_cjk(d["query"]):
            found = [c for c in d["query"] if c.isalnum()]
            share = sum(1 for c in found if cjk.has_cjk(c)) / len(found)
            d = dict(d, weight=0.5 + 0.5 * share)
        return f13.near()(d)

    return rank


# -- word forms on the lexical side ------------------------------------------------------

_PORTER = sqlite3.connect(":memory:")
_PORTER.execute("CREATE VIRTUAL TABLE s USING fts5(x, tokenize='porter ascii')")
_PORTER.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'row')")


def _porter(word: str) -> str:
    _PORTER.execute("DELETE FROM s")
    _PORTER.execute("INSERT INTO s VALUES (?)", (word,))
    found = _PORTER.execute("SELECT term FROM v").fetchone()
    return str(found[0]) if found else word


def forms(kind: str, shortest: int = 4) -> Callable[[str], list[str | tuple[str, ...]]]:
    """Hybrid's lexical terms (as variants26._fts_terms), each word's variant replaced:
    `yi`: Porter's y -> i kept apart (stems of `shortest` letters or more); `plural`: a
    word that is its own stem also searched with -s / -es."""

    def terms(query: str) -> list[str | tuple[str, ...]]:
        _, searched, alone = _terms(query, True)
        out = [t for t in v26._fts_terms(query) if not (isinstance(t, str) and t.endswith("*"))]
        for word in searched:
            stem = _stem(word) if word.isascii() else None
            porter = _porter(word) if word.isascii() and word.isalpha() and len(word) >= 4 else word
            n = len(porter)
            if kind == "yi" and n >= shortest and porter.endswith("i") and word[n - 1 : n] == "y":
                out += [porter + "*", word[:n] + "*"]
            elif kind == "plural" and stem is None and porter == word and len(word) >= 4:
                out.append(word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s"))
            elif stem is not None:
                out.append(stem + "*")
        if alone:
            out.append(alone + "*")
        return list(dict.fromkeys(out))

    return terms


def lexical_forms(groups: dict[str, v26.Lex], terms: Callable[[str], list[Any]]) -> Rank:
    def rank(d: dict[str, Any]) -> list[str]:
        scores = groups[d["group"]].search(d["query"], terms=terms(d["query"]))
        mine = [[p, scores[p]] for p in sorted(scores, key=lambda p: (-scores[p], p))[:100]]
        floor = mine[-1][1] if mine else 1.0
        mine += [[p, floor * 0.99 ** (n + 1)] for n, (p, _) in enumerate(
            [x for x in d["lex"] if x[0] not in scores])]  # fmt: skip
        return f13.near()(dict(d, lex=mine[: f13.FETCH]))

    return rank


# -- closeness ---------------------------------------------------------------------------


def closeness(data: dict[str, Any]) -> None:
    pairs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for n in ("corpus", "paraphrase"):
        for qid, d in data["sets"][n].items():
            relevant, out = data["relevant"][f"{n}/{qid}"], f13.near()(d)
            g, titles = f13._VECTORS[d["group"]], data["arrays"][f"{d['group']}.titles"]
            titles = (
                titles.astype(np.float32)
                / np.linalg.norm(titles.astype(np.float32), axis=1)[:, None]
            )
            ends = [*g.starts[1:].tolist(), len(g.rows)]
            a = g.row_of[out[0]]
            cosines = g.means @ g.means[a]
            near = [g.owners[i][0] for i in np.argsort(-cosines)[1:4].tolist()]
            others = [(r, True) for r in relevant if r != out[0] and out[0] in relevant]
            for p, answer in [*others, *((p, False) for p in near if p not in relevant)]:
                b = g.row_of[p]
                ca, cb = g.rows[g.starts[a] : ends[a]], g.rows[g.starts[b] : ends[b]]
                pairs[answer].append({
                    "mean": float(g.means[a] @ g.means[b]),
                    "best chunk pair": float((ca @ cb.T).max()),
                    "first chunks": float(ca[0] @ cb[0]),
                    "titles": float(titles[a] @ titles[b]),
                })  # fmt: skip
    for measure in pairs[True][0]:
        yes = [m[measure] for m in pairs[True]]
        no = [m[measure] for m in pairs[False]]
        auc = float(np.mean([[1.0 if y > x else 0.5 if y == x else 0.0 for x in no] for y in yes]))
        print(f"{measure:16} answers {len(yes)} median {np.median(yes):.3f}  "
              f"non-answers {len(no)} median {np.median(no):.3f}  AUC {auc:.3f}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["misses", "score", "closeness"])
    parser.add_argument("--dump", type=Path, default=BENCH / "out" / "fusion13.json")
    parser.add_argument("--sets", default="corpus,paraphrase")
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--only", default="neighbours,scaling,forms,one-word")
    args = parser.parse_args(argv)
    data = load(args.dump)
    if args.command == "misses":
        misses(data, args.dump, args.sets.split(","))
        return 0
    if args.command == "closeness":
        closeness(data)
        return 0
    only, show = args.only.split(","), lambda label, rank: v26.show(data, label, rank, args.split)
    show("shipped (spread, near-duplicates)", f13.near())
    show("s26: range, near-duplicates", f13.near(f13.convex(scale="range")))
    if "neighbours" in only:
        for scale in ("range", "spread"):
            inner = f13.convex(scale=scale)
            for k in (1, 2, 3):
                for tau in (0.6, 0.65, 0.7, 0.75, 0.8):
                    show(f"{scale}: nearest {k}, cosine >= {tau}", whole(k, tau, inner=inner))
                    for need in (1, 2):
                        if k < 3 and tau >= 0.65:
                            rank = whole(k, tau, mutual=need, inner=inner)
                            show(f"{scale}: mutual ({need}) nearest {k}, >= {tau}", rank)
            for place in (3, 4):
                show(
                    f"{scale}: nearest 1, >= 0.7, put at {place + 1}",
                    whole(1, 0.7, place, inner=inner),
                )
        for group in f13._VECTORS:
            made = data["arrays"][f"{group}.titles"].astype(np.float32)
            _TITLES[group] = made / np.linalg.norm(made, axis=1, keepdims=True)
        for tau in (0.8, 0.85, 0.9, 0.95):
            for most in (1, 2):
                show(f"spread: title neighbours {most}, >= {tau}", titled(tau, most))
        for group in f13._VECTORS:
            db = sqlite3.connect(args.dump.with_suffix(".groups") / group / "i.db")
            rows = db.execute("SELECT path, title FROM memories WHERE error IS NULL")
            _TITLE_WORDS[group] = {p: _title_words(t or "") for p, t in rows}
        for least in (0.4, 0.5, 0.6, 0.7):
            for most in (1, 2):
                show(f"spread: title words {most}, Jaccard >= {least}", title_words(least, most))
        for lam in (0.3, 0.5, 0.7, 1.0):
            for c0 in (0.5, 0.6, 0.7):
                show(f"range: lend {lam} x the first's score from {c0}", smooth(lam, c0))
    if "scaling" in only:
        for floor in (0.1, 0.15, 0.2, 0.25, 0.3):
            show(f"range, semantic span >= {floor}", span_floor(semantic=floor))
        for share in (0.5, 0.7, 0.9):
            show(f"range, lexical span >= {share} x top", span_floor(lexical=share))
        for base in (0.4, 0.45, 0.55, 0.6):
            show(f"spread, lexical weight {base}", weighted(base))
    if "forms" in only:
        names = {entry["group"] for n in f13.SETS for entry in data["sets"][n].values()}
        groups = {g: v26.Lex(v26.Group(args.dump.with_suffix(".groups") / g), headings=False)
                  for g in names}  # fmt: skip
        show("spread, Lex again (the shipped terms)", lexical_forms(groups, v26._fts_terms))
        show("spread, y -> i apart (stems >= 4)", lexical_forms(groups, forms("yi")))
        show("spread, y -> i apart (stems >= 3)", lexical_forms(groups, forms("yi", 3)))
        show("spread, plurals", lexical_forms(groups, forms("plural")))
    if "one-word" in only:
        for letters in (8, 12, 16):
            show(f"spread, one-word rule up to {letters} CJK", one_word_up_to(letters))
    return 0


if __name__ == "__main__":
    sys.exit(main())
