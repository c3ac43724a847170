"""Lexical search made cheap for a new process (issue 15), ranking exactly as before.

index/lexical.py ranks a tier in the FTS table alone, reads only the best rows, and
computes snippets only for those it keeps; `_joined`, the single query joining every
match's row, is what it must equal, hit for hit, score for score, snippet for snippet,
ties included. Words are split without `re` for ASCII text, and stems are computed
only when a tier needs them; the quick search of an English question imports no `re`.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import RunCli
from index_support import disk_service, write_memory
from memory_enhancement.index import cjk, columns, lexical
from quick_support import QUERY_SHAPES, settled_index
from test_search_cjk import JA, ZH

NOW = "2026-06-01T00:00:00.000Z"
QUERIES = [
    *QUERY_SHAPES,
    "the",
    "ヘッドレス",
    "offscreenモードのQMessageBoxハング",
    "数据源配置在哪里？",
]
TWIN = "Twin memory: the worktree cleanup script prunes stale worktree folders after merge."


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> sqlite3.Connection:
    """The corpus with Japanese and Chinese memories, three identical memories (equal
    scores: ties) and an expired one that ranks first for `worktree`, indexed."""
    tmp = tmp_path_factory.mktemp("window")
    store = tmp / "store"
    shutil.copytree(corpus, store, ignore=shutil.ignore_patterns(".*"))
    for path, (title, body) in {**JA, **ZH}.items():
        write_memory(store, f"cjk/{path}", body, title=title)
    for folder in ("zz-twins", "aa-twins", "mm-twins"):
        write_memory(store, f"{folder}/twin", TWIN, title="Twin")
    write_memory(
        store, "aa-twins/expired", "worktree worktree worktree " * 20, title="Worktree",
        expires="2026-01-01T00:00:00Z",
    )  # fmt: skip
    disk_service(store, tmp, tmp).search("worktree", mode="lexical")  # builds the index
    conn = sqlite3.connect(tmp / "index.db")
    yield conn
    conn.close()


def shown(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """A tier's rows as ranked() uses them: the FTS snippet of a memory whose snippet is cut
    from its original text (CJK, found by path) is never shown, so _tier does not make it."""
    return [row if row[-1] is None else (*row[:-2], None, row[-1]) for row in rows]


def test_a_tier_ranked_apart_equals_the_single_joined_query(
    index: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = lexical._joined
    fallbacks: list[int] = []

    def joined(*args: object) -> object:
        fallbacks.append(1)
        return reference(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(lexical, "_joined", joined)
    filters = [
        (None, None, False),
        (None, None, True),
        ("aa-twins", None, False),  # narrow: the window rarely holds enough
        ("pr-review", None, False),
        (None, "git", False),
    ]
    compared = 0
    for query in QUERIES:
        exact, variants = lexical.query_terms(query)
        for table in ("memories_fts", "memories_path_fts"):
            for terms in {tuple(exact), (*exact, *variants)}:
                match = " OR ".join(terms)
                marked = " OR ".join(lexical.marked_terms(list(terms)))
                for category, tag, expired in filters:
                    where, args = columns.where_sql(category, tag, expired, NOW)
                    for wanted in (1, 10, 50):
                        for snippets in (True, False):
                            got = lexical._tier(  # the corpus: no word in half of it
                                index, table, list(terms), marked, where, args, wanted, snippets
                            )
                            want = reference(
                                index, table, match, marked, where, args, wanted, snippets
                            )
                            assert shown(got) == shown(want), (
                                query,
                                table,
                                match,
                                category,
                                tag,
                                wanted,
                            )
                            compared += 1
    assert 0 < len(fallbacks) < compared / 2  # both ways were taken, the window mostly


def test_equal_scores_come_in_the_order_the_memories_were_indexed(
    index: sqlite3.Connection,
) -> None:
    where, args = columns.where_sql(None, None, False, NOW)
    hits = lexical.ranked(index, "twin memory cleanup script prunes", where, args, 3)
    by_id = index.execute("SELECT path FROM memories WHERE path LIKE '%-twins/twin' ORDER BY id")
    assert [row[0] for row, _, _ in hits] == [path for (path,) in by_id]
    assert len({score for _, score, _ in hits}) == 1


def test_the_expired_memory_in_the_window_is_left_out(index: sqlite3.Connection) -> None:
    live = columns.where_sql(None, None, False, NOW)
    every = columns.where_sql(None, None, True, NOW)
    assert lexical.ranked(index, "worktree", *every, 1)[0][0][0] == "aa-twins/expired"
    assert "aa-twins/expired" not in [
        row[0] for row, _, _ in lexical.ranked(index, "worktree", *live, 10)
    ]


def test_stems_are_computed_only_when_the_words_do_not_fill_the_limit(
    index: sqlite3.Connection,
) -> None:
    where, args = columns.where_sql(None, None, False, NOW)
    lexical._stem.cache_clear()
    assert len(lexical.ranked(index, "worktree merge conflicts", where, args, 5)) == 5
    assert lexical._stem.cache_info().misses == 0
    lexical.ranked(index, "worktree merge conflicts", where, args, 2000)
    assert lexical._stem.cache_info().misses > 0


def test_words_are_split_as_the_regex_splits_them() -> None:
    ascii_chars = [chr(c) for c in range(128)]
    assert [cjk.WORDS.findall(c) for c in ascii_chars] == [
        re.findall(r"\w+", c) for c in ascii_chars
    ]
    rng = random.Random(15)
    alphabet = [*ascii_chars, "é", "日本", "ー", "\u00a0", "٣"]  # non-ASCII: the regex itself
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert cjk.WORDS.findall(text) == re.findall(r"\w+", text), repr(text)


def test_the_quick_search_of_an_english_question_imports_neither_re_nor_datetime(
    tmp_path: Path, corpus: Path, run_cli: RunCli
) -> None:
    store = tmp_path / "store"
    shutil.copytree(corpus, store, ignore=shutil.ignore_patterns(".*"))
    where = ["--dir", str(store)]
    settled_index(run_cli, where)
    probe = (
        "import sys\n"
        "names = ('re', 'datetime')\n"
        "before = [name in sys.modules for name in names]\n"
        "from memory_enhancement.cli.fast import answer\n"
        "answered = answer(sys.argv[1:])\n"
        "print(answered, *(not b and n in sys.modules for b, n in zip(before, names)),\n"
        "      file=sys.stderr)\n"
    )
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    for query, imports_re in [("how do I merge a worktree", False), ('"git worktree"', True)]:
        done = subprocess.run(
            [sys.executable, "-c", probe, "search", query, *where],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
        assert "1. [mem:" in done.stdout
        assert done.stderr.split() == ["True", str(imports_re), "False"], (query, done.stderr)
