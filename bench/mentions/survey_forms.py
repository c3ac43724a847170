"""Which ways of naming a line next to a file do real stores write that we do not read?

For every memory file of the shared corpus and of each fetched store (`/work/.mirror/*/repo`,
the `.serena/memories/` at HEAD, or just before the commit that deleted them), every token that
looks like a code file (`name.py`, `src/x.rs`) with a line-ish word (line, lines, L12, 行, 行目,
第..行, 행, 줄, 라인, línea, Zeile, ligne, строка) and a number within a few characters of it
is a candidate. A candidate the tool's detector (`core.mentions.find_mentions`) does not turn
into a mention is an unread form: it is printed with a shape (digits as N, the path as P, the
few characters around them) so the shapes can be counted.

    PYTHONPATH=src .venv/bin/python bench/mentions/survey_forms.py [--top 40] [--examples 3]
        [--mirrors /work/.mirror] [--corpus /work/shared/corpus/ai-agents-memories]

Nothing is written; the counts go to stdout (docs/benchmarks.md, issue 17, "Session 25").
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

from memory_enhancement.core.mentions import find_mentions

EXTENSIONS = str.split(
    "py pyi js jsx mjs cjs ts tsx vue svelte go rs java kt kts swift c h cc cpp cxx hpp hh cs "
    "rb php dart scala sh bash zsh ps1 psm1 lua m mm sql ex exs erl hs ml clj fs zig nim r jl "
    "yaml yml json toml gd gdscript sol tf proto astro"
)
_PATH = re.compile(
    r"(?<![A-Za-z0-9_./@~+\\-])(?P<path>(?:[A-Za-z0-9_.@~+\[\]()-]+/)*[A-Za-z0-9_.@~+-]*"
    r"\.(?i:" + "|".join(EXTENSIONS) + r"))(?![A-Za-z0-9_/@~+-])"
)
_LINE_WORD = re.compile(
    r"(?i:\blines?\b|\bL(?=\d)|línea|linea|zeilen?|lignes?|строк[аиуе]?|\bln\b)"
    r"|行目|行|第|행|줄|라인"
)
_NUMBER = re.compile(r"\d+")
WINDOW = 16  # characters either side of the path


def memories(mirrors: Path, corpus: Path) -> dict[str, dict[str, str]]:
    """Store name -> memory path -> text."""
    stores: dict[str, dict[str, str]] = {}
    if corpus.is_dir():
        stores["corpus:ai-agents"] = {
            str(p.relative_to(corpus)): p.read_text("utf-8", "replace")
            for p in sorted(corpus.rglob("*.md"))
        }
    for git_dir in sorted(mirrors.glob("*/repo")):
        name = git_dir.parent.name.replace("+", "/")
        if name == "rjmurillo/ai-agents" and "corpus:ai-agents" in stores:
            continue  # the corpus is its memories
        files = _store_files(git_dir)
        if files:
            stores[name] = files
    return stores


def _git(git_dir: Path, *args: str) -> str:
    run = subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True)
    return run.stdout.decode("utf-8", "replace")


def _store_files(git_dir: Path) -> dict[str, str]:
    where = ".serena/memories"
    commit = "HEAD"
    listed = _git(git_dir, "ls-tree", "-r", "--name-only", commit, "--", where).split("\n")
    if not any(listed):  # deleted at HEAD: just before the commit that deleted them
        last = _git(git_dir, "rev-list", "-1", "HEAD", "--", where).strip()
        if not last:
            return {}
        commit = last + "^"
        listed = _git(git_dir, "ls-tree", "-r", "--name-only", commit, "--", where).split("\n")
    names = [n for n in listed if n.endswith(".md")]
    if not names:
        return {}
    batch = "".join(f"{commit}:{n}\n" for n in names).encode()
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"], input=batch,
        capture_output=True,
    ).stdout  # fmt: skip
    texts: dict[str, str] = {}
    at = 0
    for name in names:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split()
        if len(header) < 3 or header[1] != b"blob":
            at = header_end + 1
            continue
        size = int(header[2])
        texts[name] = out[header_end + 1 : header_end + 1 + size].decode("utf-8", "replace")
        at = header_end + 1 + size + 1
    return texts


_WORD_NUMBER = re.compile(
    rf"(?:{_LINE_WORD.pattern})[ \t]*(?:\d+(?:[ \t]*[-–~〜,][ \t]*L?\d+)*)"
    rf"|\d+(?:[ \t]*[-–~〜][ \t]*\d+)?[ \t]*(?:{_LINE_WORD.pattern})"
)


def shape(line: str, start: int, end: int) -> str:
    """The path as P, what joins it to the nearest word-and-number, and that (digits as N,
    backticks and bold marks dropped, spaces squeezed): the form, without the prose around."""
    right = _WORD_NUMBER.search(line, end, end + WINDOW + 8)
    left = None
    for m in _WORD_NUMBER.finditer(line, max(0, start - WINDOW - 8), start):
        left = m
    if right is not None and (left is None or right.start() - end <= start - left.end()):
        text = "P" + line[end : right.end()]
    elif left is not None:
        text = line[left.start() : start] + "P"
    else:
        text = "P ? " + line[max(0, start - WINDOW) : end + WINDOW].replace(line[start:end], "P")
    text = re.sub(r"\d+", "N", text.replace("`", "").replace("**", ""))
    return re.sub(r"[ \t]+", " ", text).strip()


_LENGTH = re.compile(
    r"N\+?[ \t]*(?i:lines?|líneas?|lignes?|zeilen?|строк\w*)|N[ \t]*(?:行(?!目)|줄|행)(?![ \t]*N)"
)


def kind(key: str) -> str:
    """`length` when the shape's number comes before its word (`N lines`, `N行`, `N줄`): a
    size, not a place (`N行目` is a place); else `place?`."""
    if "第" in key or "行目" in key:
        return "place?"
    return "length" if _LENGTH.search(key) else "place?"


def candidates(line: str) -> list[tuple[int, int]]:
    """Path tokens with a line-ish word and a number within WINDOW characters."""
    out = []
    for m in _PATH.finditer(line):
        near = line[max(0, m.start() - WINDOW) : m.end() + WINDOW]
        around = near.replace(m["path"], " ")
        if _LINE_WORD.search(around) and _NUMBER.search(around):
            out.append(m.span("path"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    corpus = Path("/work/shared/corpus/ai-agents-memories")
    parser.add_argument("--corpus", type=Path, default=corpus)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--examples", type=int, default=3)
    parser.add_argument("--grep", help="print the unread whose shape matches this regex")
    parser.add_argument("--all", action="store_true", help="list lengths (`N lines`) too")
    args = parser.parse_args()
    stores = memories(args.mirrors, args.corpus)
    read = unread = 0
    shapes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    per_store: Counter[str] = Counter()
    for store, files in stores.items():
        for name, text in files.items():
            covered: dict[int, list[tuple[int, int]]] = defaultdict(list)
            for mention in find_mentions(text):
                if mention.path_at is not None:
                    a, b = mention.path_at
                    covered[mention.line].append((mention.column + a, mention.column + b))
            for number, line in enumerate(text.split("\n"), 1):
                for start, end in candidates(line):
                    if any(a < end and start < b for a, b in covered.get(number, ())):
                        read += 1
                        continue
                    unread += 1
                    per_store[store] += 1
                    key = shape(line, start, end)
                    kinds[kind(key)] += 1
                    if args.all or kind(key) != "length":
                        shapes[key] += 1
                    where = f"{store}:{name}:{number}: {line.strip()[:160]}"
                    if args.grep and re.search(args.grep, key):
                        print(where)
                    if len(examples[key]) < args.examples:
                        examples[key].append(where)
    files = sum(len(f) for f in stores.values())
    print(f"{len(stores)} stores, {files} memory files; candidates read {read}, unread {unread}")
    print("unread by kind:", dict(kinds))
    print("unread per store:", ", ".join(f"{s} {n}" for s, n in per_store.most_common()))
    for key, count in shapes.most_common(args.top):
        print(f"\n{count:4}  {key}")
        for where in examples[key]:
            print("        " + where)


if __name__ == "__main__":
    main()
