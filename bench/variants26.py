"""Issue 13, session 26: hybrid variants beyond the fusion, scored offline on dev.

    .venv/bin/python bench/fusion13.py dump --cache DIR --out OUT.json    # first, once
    .venv/bin/python bench/variants26.py [--dump OUT.json] [--cache DIR] [--split dev]

Reads fusion13's dump (every query's two lists, the chunk vectors of each group) and the
groups' indexes it keeps beside it (`OUT.groups/`), and ranks every query under:

* **outline chunks**: one more vector per memory, its title and headings (`outline`),
  embedded here (cached in `DIR/outline.db`, so a rerun embeds nothing), its cosine
  counting for the memory as `max(best chunk, share x outline)`, or `best + share x
  max(0, outline - best)`; for long memories only (more than the two embedded chunks'
  words) or for all; headings after the embedded part only, or all; with each section's
  first sentence.
* **BM25 variants for hybrid's lexical side** (`Lex`): FTS5's BM25 computed again in
  Python over the same tokens (it reproduces the index's ranking exactly with k1 1.2,
  b 0.75, equal weights), with other k1 and b, headings as a column of their own
  weighted apart, and BM25F (each column normalised by its own length).
* **passage BM25** (`PLex`): each memory cut at its headings or into windows of words,
  a memory scoring its whole-text BM25 plus a share of its best passage's.
* **link smoothing**: a share of each of the first k results' fused score added to the
  memories they link to or that link to them (resolved links of the index).

Each prints the mean of R@5 + MRR@10 over the four sets and R@5 / MRR@10 per set, as
fusion13.py does; they are compared with `shipped` there (the fusion, then the first
result's near-duplicates). Choices on dev only (docs/benchmarks.md, issue 13, session 26).
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import itertools
import json
import math
import re
import sqlite3
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from memory_enhancement.index import semantic
from memory_enhancement.index.lexical import _terms, _variants

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import fusion13 as f13  # noqa: E402
from bench_search_quality import metrics  # noqa: E402

SETS = f13.SETS
COLUMNS = ("title", "tags", "heads", "body")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
Rank = Callable[[dict[str, Any]], list[str]]


class Group:
    """One group's index (kept by fusion13's dump) and its memories' texts."""

    def __init__(self, folder: Path) -> None:
        self.conn = sqlite3.connect(folder / "i.db")
        self.mem: dict[str, dict[str, Any]] = {}
        for path, title, content, cjk, mid in self.conn.execute(
            "SELECT path, title, content, cjk, id FROM memories WHERE error IS NULL"
        ):
            self.mem[path] = {"title": title or "", "content": content, "cjk": cjk, "id": mid}
        self.path_of = {m["id"]: p for p, m in self.mem.items()}


# -- outline chunks ---------------------------------------------------------------------


def _clean(text: str) -> str:
    text = semantic.width_folded(text)
    return " ".join(semantic._MARKUP.sub(" ", semantic._URL.sub(" ", text)).split())


def outline(
    title: str, content: str, *, words: int, only_long: bool, unseen: bool, sentences: bool
) -> str | None:
    """A memory's title and headings (each with its section's first sentence if asked),
    cut at `words`; None when there is nothing to add."""
    body = semantic._FENCE.sub(" ", semantic.width_folded(content))
    limit = semantic.CHUNK_WORDS * semantic.MAX_CHUNKS
    if only_long and len(semantic._UNIT.findall(_clean(body))) <= limit:
        return None
    head, seen, items, current = _clean(title), 0, [], None
    first: dict[int, str] = {}
    for line in body.splitlines():
        found = _HEADING.match(line)
        if found:
            text = _clean(found.group(2))
            current = None
            if text and text != head and not (unseen and seen < limit):
                items.append(text)
                current = len(items) - 1
        elif sentences and current is not None and current not in first and line.strip():
            first[current] = re.split(r"(?<=[.!?。])\s", _clean(line))[0]
        seen += len(semantic._UNIT.findall(_clean(line)))
    texts = [t + (f": {first[n]}" if n in first else "") for n, t in enumerate(items)]
    texts = list(dict.fromkeys(t for t in texts if t))
    if not texts:
        return None
    cut = " ".join(semantic._UNIT.findall(" ".join(texts))[:words])
    return f"{head}. {cut}" if head else cut


class Outlines:
    """Outline vectors, embedded once per distinct text (cached in a SQLite file)."""

    def __init__(self, cache: Path) -> None:
        cache.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(cache / "outline.db")
        self.db.execute("CREATE TABLE IF NOT EXISTS v (k TEXT PRIMARY KEY, data BLOB)")
        self.model: Any = None
        self.embedded = 0

    def vectors(self, group: Group, **how: Any) -> dict[str, Any]:
        texts = {}
        for path, m in group.mem.items():
            text = outline(m["title"], m["content"], **how)
            if text:
                texts[path] = text
        keys = {p: hashlib.sha1(t.encode()).hexdigest() for p, t in texts.items()}
        have = dict(self.db.execute("SELECT k, data FROM v"))
        todo = [p for p in texts if keys[p] not in have]
        if todo:
            self.model = self.model or semantic.embedder()
            self.embedded += len(todo)
            made = self.model.encode([texts[p] for p in todo])
            with self.db:
                for p, vector in zip(todo, made, strict=True):
                    have[keys[p]] = vector.astype(np.float32).tobytes()
                    self.db.execute(
                        "INSERT OR REPLACE INTO v VALUES (?, ?)", (keys[p], have[keys[p]])
                    )
        return {p: np.frombuffer(have[keys[p]], dtype=np.float32) for p in texts}


def with_outline(vectors: dict[str, dict[str, Any]], mix: str, share: float) -> Rank:
    def rank(d: dict[str, Any]) -> list[str]:
        if d["weight"] >= 1.0:
            return f13.near()(d)
        group = f13._VECTORS[d["group"]]
        best = np.maximum.reduceat(group.rows @ d["vector"], group.starts)
        mine = vectors[d["group"]]
        scores = {}
        for i, paths in enumerate(group.owners):
            for p in paths:
                s = float(best[i])
                if p in mine:
                    o = float(mine[p] @ d["vector"])
                    s = max(s, share * o) if mix == "max" else s + share * max(0.0, o - s)
                scores[p] = s
        top = sorted(scores, key=lambda p: -scores[p])[: f13.DEPTH]
        return f13.near()(dict(d, sem=[[p, scores[p], None] for p in top]))

    return rank


# -- BM25 again, in Python --------------------------------------------------------------


class Lex:
    """FTS5's BM25 (k1, b, column weights; document length over all columns) over
    title, tags, headings and body, or over passages of each memory (`passages`)."""

    def __init__(self, group: Group, *, headings: bool, passages: str = "", window: int = 150):
        mem = sqlite3.connect(":memory:")
        mem.execute(f"CREATE VIRTUAL TABLE t USING fts5({', '.join(COLUMNS)}, "
                    "tokenize='unicode61 remove_diacritics 2')")  # fmt: skip
        mem.execute("CREATE VIRTUAL TABLE vi USING fts5vocab(t, 'instance')")
        self.owner: dict[int, int] = {}
        rows = group.conn.execute("SELECT id, title, tags, content FROM memories_text").fetchall()
        for rid, title, tags, content in rows:
            for part in self._parts(content or "", passages, window):
                heads = "\n".join(m.group(2) for m in _HEADING.finditer(part)) if headings else ""
                body = _HEADING.sub(" ", part) if headings else part
                pid = len(self.owner) + 1
                self.owner[pid] = rid
                mem.execute(
                    "INSERT INTO t(rowid, title, tags, heads, body) VALUES (?, ?, ?, ?, ?)",
                    (pid, title, tags, heads, body),
                )
        self.tf: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0] * 4))
        self.pos: dict[str, dict[int, set[tuple[int, int]]]] = defaultdict(lambda: defaultdict(set))
        self.dl: dict[int, list[int]] = defaultdict(lambda: [0] * 4)
        for term, doc, col, offset in mem.execute("SELECT term, doc, col, offset FROM vi"):
            c = COLUMNS.index(col)
            self.tf[term][doc][c] += 1
            self.pos[term][doc].add((c, offset))
            self.dl[doc][c] += 1
        self.terms = sorted(self.tf)
        self.n = len(self.owner)
        self.path_of = group.path_of

    @staticmethod
    def _parts(content: str, passages: str, window: int) -> list[str]:
        if passages == "sections":
            cuts = [m.start() for m in _HEADING.finditer(content) if m.start() > 0]
            bounds = [0, *cuts, len(content)]
            return [content[a:b] for a, b in itertools.pairwise(bounds)]
        if passages == "windows":
            words = content.split()
            step = window // 2
            return [" ".join(words[i : i + window]) for i in range(0, max(len(words), 1), step)]
        return [content]

    def _docs(self, term: str | tuple[str, ...]) -> dict[int, list[int]]:
        if isinstance(term, tuple):  # a phrase: consecutive positions in one column
            found: dict[int, list[int]] = {}
            for doc, starts in self.pos.get(term[0], {}).items():
                counts = [0] * 4
                for c, off in starts:
                    if all((c, off + n) in self.pos.get(w, {}).get(doc, ()) for n, w in
                           enumerate(term[1:], 1)):  # fmt: skip
                        counts[c] += 1
                if any(counts):
                    found[doc] = counts
            return found
        if not term.endswith("*"):
            return self.tf.get(term, {})
        prefix, total = term[:-1], defaultdict(lambda: [0] * 4)
        i = bisect.bisect_left(self.terms, prefix)
        while i < len(self.terms) and self.terms[i].startswith(prefix):
            for doc, counts in self.tf[self.terms[i]].items():
                total[doc] = [a + b for a, b in zip(total[doc], counts, strict=True)]
            i += 1
        return total

    def search(
        self, query: str, k1: float = 1.2, b: float = 0.75, w: tuple[float, ...] = (1, 1, 1, 1),
        per_column: bool = False, terms: list[str | tuple[str, ...]] | None = None,
    ) -> dict[str, float]:  # fmt: skip
        """Each memory's score (its best passage's, when cut into passages); `terms`
        instead of the query's own (variants27.py's word forms)."""
        totals = [sum(d[c] for d in self.dl.values()) for c in range(4)]
        average, per = sum(totals) / self.n, [t / self.n or 1 for t in totals]
        scores: dict[int, float] = defaultdict(float)
        for term in _fts_terms(query) if terms is None else terms:
            docs = self._docs(term)
            idf = max(math.log((self.n - len(docs) + 0.5) / (len(docs) + 0.5)), 1e-6)
            for doc, counts in docs.items():
                if per_column:
                    tf = sum(w[c] * counts[c] / (1 - b + b * self.dl[doc][c] / per[c])
                             for c in range(4) if counts[c])  # fmt: skip
                    scores[doc] += idf * tf * (k1 + 1) / (tf + k1)
                else:
                    tf = sum(w[c] * counts[c] for c in range(4))
                    norm = 1 - b + b * sum(self.dl[doc]) / average
                    scores[doc] += idf * tf * (k1 + 1) / (tf + k1 * norm)
        best: dict[str, float] = {}
        for doc, score in scores.items():
            path = self.path_of.get(self.owner[doc])
            if path is not None and score > best.get(path, float("-inf")):
                best[path] = score
        return best


def _fts_terms(query: str) -> list[str | tuple[str, ...]]:
    """hybrid_lexical's terms, as tokens: words, `prefix*`, phrases as tuples."""
    exact, searched, alone = _terms(query, True)
    out: list[str | tuple[str, ...]] = []
    for term in [*exact, *_variants(exact, searched, alone)]:
        tokens = re.findall(r"[^\W_]+", term.rstrip("*").strip('"'))
        if len(tokens) > 1:
            out.append(tuple(tokens))
        elif tokens:
            out.append(tokens[0] + ("*" if term.endswith("*") else ""))
    return out


def lexical_side(lexes: dict[str, Lex], passages: dict[str, Lex] | None = None,
                 share: float = 0.0, **how: Any) -> Rank:  # fmt: skip
    """Hybrid with its lexical list from `Lex` (plus `share` x the best passage's BM25);
    what BM25 over the text does not find keeps the shipped list's path tier after it."""

    def rank(d: dict[str, Any]) -> list[str]:
        scores = lexes[d["group"]].search(d["query"], **how)
        if passages is not None:
            extra = passages[d["group"]].search(d["query"], **how)
            scores = {p: scores.get(p, 0) + share * extra.get(p, 0) for p in {*scores, *extra}}
        mine = [[p, scores[p]] for p in sorted(scores, key=lambda p: (-scores[p], p))[:100]]
        floor = mine[-1][1] if mine else 1.0
        rest = [p for p, _ in d["lex"] if p not in scores]
        mine += [[p, floor * 0.99 ** (n + 1)] for n, p in enumerate(rest)]
        return f13.near()(dict(d, lex=mine[: f13.FETCH]))

    return rank


# -- links ------------------------------------------------------------------------------


def linked(groups: dict[str, Group], share: float, k: int) -> Rank:
    """(Before the near-duplicates:) the fusion's scores, plus `share` x the score of each
    of the first k results for the memories linked with it (either way; index memories
    left out)."""
    near: dict[str, dict[str, set[str]]] = {}
    for name, group in groups.items():
        near[name] = defaultdict(set)
        for mid, target in group.conn.execute(
            "SELECT memory_id, resolved FROM links "
            "WHERE status = 'resolved' AND resolved IS NOT NULL"
        ):
            source, target = group.path_of.get(mid), target.removesuffix(".md")
            if source and target in group.mem and target != source:
                near[name][source].add(target)
                near[name][target].add(source)

    def rank(d: dict[str, Any]) -> list[str]:
        first = f13.convex()(d)
        lex = f13._scaled({p: s for p, s in d["lex"][: f13.FETCH]})
        semd = {p: s for p, s, _ in d["sem"]}
        sem = f13._scaled({p: semd[p] for p in sorted(semd, key=lambda p: -semd[p])[: f13.FETCH]})
        w = d["weight"]
        score = {p: w * lex.get(p, 0) + (1 - w) * sem.get(p, 0) * (1 - d["cjk"].get(p, 0))
                 for p in {*lex, *sem}}  # fmt: skip
        bonus: dict[str, float] = defaultdict(float)
        for top in first[:k]:
            for other in near[d["group"]].get(top, ()):
                if "index" not in other.rsplit("/", 1)[-1]:
                    bonus[other] = max(bonus[other], share * score.get(top, 0))
        final = {p: score.get(p, 0) + bonus.get(p, 0) for p in {*score, *bonus}}
        order = {p: n for n, p in enumerate(first)}
        return sorted(final, key=lambda p: (-final[p], order.get(p, 10**9), p))

    return rank


# -- scoring ----------------------------------------------------------------------------


def show(data: dict[str, Any], label: str, rank: Rank, split: str) -> None:
    cells, total = [], 0.0
    for name in SETS:
        chosen = [q for q in data["sets"][name] if data["split"][f"{name}/{q}"] == split]
        ranked = {q: rank(data["sets"][name][q]) for q in chosen}
        queries = [f13._Q(q, tuple(data["relevant"][f"{name}/{q}"])) for q in chosen]
        m = metrics(ranked, queries, lambda q: q.relevant)  # type: ignore[arg-type,return-value]
        cells.append(f"{name} {m['R@5']:.3f}/{m['MRR@10']:.3f}")
        total += m["R@5"] + m["MRR@10"]
    print(f"{label:40} {total / len(SETS):.3f}  " + "  ".join(cells), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path, default=BENCH / "out" / "fusion13.json")
    parser.add_argument("--cache", type=Path, default=BENCH / "out" / "issue13-cache")
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--only", default="outline,bm25,passages,links")
    args = parser.parse_args(argv)
    data = json.loads(args.dump.read_text())
    arrays = np.load(args.dump.with_suffix(".npz"))
    names = {entry["group"] for n in SETS for entry in data["sets"][n].values()}
    for n in SETS:
        for qid, entry in data["sets"][n].items():
            entry["vector"] = arrays[f"q.{n}.{qid}"]
    f13._VECTORS.update({g: f13._Vectors(arrays, g) for g in names})
    groups = {g: Group(args.dump.with_suffix(".groups") / g) for g in names}
    split, only = args.split, args.only.split(",")
    show(data, "shipped", f13.near(), split)
    if "outline" in only:
        outlines = Outlines(args.cache)
        for label, how in {
            "long, unseen headings, 64": dict(words=64, only_long=True, unseen=True),
            "long, all headings, 64": dict(words=64, only_long=True, unseen=False),
            "all, all headings, 64": dict(words=64, only_long=False, unseen=False),
            "long, all headings, 120": dict(words=120, only_long=True, unseen=False),
            "long, unseen, first sentences, 120": dict(
                words=120, only_long=True, unseen=True, sentences=True
            ),
        }.items():
            how.setdefault("sentences", False)
            vectors = {g: outlines.vectors(groups[g], **how) for g in names}
            for mix, share in (("max", 1.0), ("max", 0.95), ("max", 0.85), ("add", 0.5)):
                show(
                    data,
                    f"outline {label}: {mix} {share}",
                    with_outline(vectors, mix, share),
                    split,
                )
        print(f"(outline texts embedded in this run: {outlines.embedded})", file=sys.stderr)
    if "bm25" in only:
        plain = {g: Lex(groups[g], headings=False) for g in names}
        heads = {g: Lex(groups[g], headings=True) for g in names}
        for k1 in (0.9, 1.2, 1.6, 2.0):
            for b in (0.4, 0.6, 0.75, 0.9):
                show(data, f"BM25 k1 {k1} b {b}", lexical_side(plain, k1=k1, b=b), split)
        for title in (1, 2, 3):
            for heading in (1, 2, 3):
                how = {"w": (title, 1, heading, 1)}
                show(
                    data,
                    f"BM25 title x{title} headings x{heading}",
                    lexical_side(heads, **how),
                    split,
                )
        for title, heading in ((1, 1), (1, 2), (2, 1), (2, 2)):
            how = {"w": (title, 1, heading, 1), "per_column": True}
            show(
                data, f"BM25F title x{title} headings x{heading}", lexical_side(heads, **how), split
            )
    if "passages" in only:
        plain = {g: Lex(groups[g], headings=False) for g in names}
        for cut, window in (("sections", 0), ("windows", 150), ("windows", 80)):
            parts = {g: Lex(groups[g], headings=False, passages=cut, window=window) for g in names}
            for share in (0.5, 1.0, 2.0):
                label = f"passage BM25 {cut} {window or ''} + {share}"
                show(data, label, lexical_side(plain, parts, share), split)
    if "links" in only:
        for share in (0.1, 0.2, 0.3, 0.5):
            for k in (1, 3, 5):
                rank = f13.near(linked(groups, share, k))
                show(data, f"links {share} of the first {k}", rank, split)
    return 0


if __name__ == "__main__":
    sys.exit(main())
