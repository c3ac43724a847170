"""The quick read path (cli/fast.py): the same bytes as the click commands, or nothing.

On the real corpus, `get`, `list`, `related` and `graph` answered by the quick
path must print exactly what the click commands print, record the same usage,
and step aside (print nothing, return False) whenever they could not answer
exactly: options they do not know, names to resolve, expired memories, a store
that changed since the last sync. The quick path answers for stores above the
index's full-check limit between its periodic checks; the tests lower that limit.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import RunCli
from memory_enhancement.cli.fast import answer
from memory_enhancement.core.model import MEMORY_SUFFIX
from memory_enhancement.core.timestamps import format_timestamp, now, parse_timestamp
from memory_enhancement.index import quick
from memory_enhancement.service import quick as quick_service
from memory_enhancement.store.homes import cache_dir, data_dir, store_key
from memory_enhancement.store.state import MIGRATIONS
from quick_support import QUERY_SHAPES, settled_index


@pytest.fixture
def corpus_store(tmp_path: Path, corpus: Path) -> Path:
    store = tmp_path / "store"
    shutil.copytree(corpus, store, ignore=shutil.ignore_patterns(".*"))
    return store


@pytest.fixture
def quick_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every store counts as big, and its files as checked just now."""
    monkeypatch.setattr(quick, "FULL_CHECK_LIMIT", 0)
    monkeypatch.setattr(quick, "FULL_CHECK_INTERVAL", 1e9)


def quick_answer(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[bool, str]:
    capsys.readouterr()
    answered = answer(list(args), dict(os.environ))
    return answered, capsys.readouterr().out


def usage_count(store: Path) -> int:
    state = Path(data_dir(os.environ)) / "state" / f"{store_key(store)}.db"
    with sqlite3.connect(state) as db:
        return int(db.execute("SELECT count(*) FROM usage").fetchone()[0])


def memories_of(store: Path) -> list[str]:
    return sorted(
        str(p.relative_to(store))[: -len(MEMORY_SUFFIX)] for p in store.rglob("*" + MEMORY_SUFFIX)
    )


def test_the_constants_it_copies_to_stay_light_match_their_sources() -> None:
    assert len(MIGRATIONS) == quick_service.STATE_VERSION


def test_its_timestamp_is_the_one_the_service_writes() -> None:
    before = format_timestamp(now())
    text = quick_service.now_text()
    after = format_timestamp(now())
    assert before <= text <= after
    assert format_timestamp(parse_timestamp(text)) == text


def test_quick_answers_equal_the_click_commands_on_the_real_corpus(
    corpus_store: Path, quick_limits: None, run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    where = ["--dir", str(corpus_store)]
    assert run_cli(["list", *where]).exit_code == 0  # builds the index
    paths = memories_of(corpus_store)
    sample = paths[:: max(1, len(paths) // 40)]
    compared = 0
    for command in [["list"], ["list", "--limit", "20"], ["list", "-n", "3"]]:
        answered, out = quick_answer(capsys, *command, *where)
        assert answered, command
        assert out == run_cli([*command, *where]).output, command
        compared += 1
    for path in sample:
        for command in (["related", path], ["graph", path], ["graph", path, "--depth", "1"]):
            answered, out = quick_answer(capsys, *command, *where)
            expected = run_cli([*command, *where])
            assert answered, command
            assert expected.exit_code == 0
            assert out == expected.output, command
            compared += 1
        before = usage_count(corpus_store)
        answered, out = quick_answer(capsys, "get", path, *where)
        if answered:  # not for memories with warnings or an expiry past
            assert usage_count(corpus_store) == before + 1
            expected = run_cli(["get", path, *where])
            assert out == expected.output, path
            assert usage_count(corpus_store) == before + 2
            compared += 1
        else:
            assert out == ""
    assert compared > 100


def test_a_process_answered_the_quick_way_ends_with_its_whole_answer(
    corpus_store: Path, run_cli: RunCli
) -> None:
    """main() ends the process as soon as the quick path has answered (no shutdown of the
    interpreter: no atexit handler runs), with every byte printed and exit code 0."""
    where = ["--dir", str(corpus_store)]
    settled_index(run_cli, where)
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('shut down', file=sys.stderr))\n"
        "from memory_enhancement.cli import main\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    for command in (["list"], ["search", "worktree"], ["search", "worktree", "--json"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *command, *where],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout == run_cli([*command, *where]).output, command
        quick = "--json" not in command
        assert done.stderr == ("" if quick else "shut down\n"), command


def test_a_citation_id_names_the_memory_as_its_path_does(
    corpus_store: Path, quick_limits: None, run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    """`[mem:ID]` and `mem:ID` as `get` and `related` take them, and the path."""
    where = ["--dir", str(corpus_store)]
    listing = run_cli(["list", *where]).output.splitlines()
    cid, path = listing[5].split()[:2]
    by_id = quick_answer(capsys, "related", cid, *where)
    by_path = quick_answer(capsys, "related", path, *where)
    assert by_id == by_path
    assert by_id[0]
    # `show` is `get`; `--dir=PATH` is `--dir PATH`
    shown = quick_answer(capsys, "show", cid.strip("[]"), f"--dir={corpus_store}")
    assert shown[0]
    assert shown[1] == run_cli(["show", path, *where]).output


def test_it_steps_aside_without_printing_whenever_it_cannot_answer_exactly(
    corpus_store: Path, quick_limits: None, run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    where = ["--dir", str(corpus_store)]
    run_cli(["list", *where])
    path = memories_of(corpus_store)[3]
    name = path.rpartition("/")[2]
    for command in (
        ["get", path, "--json", *where],  # an option it does not render
        ["get", path],  # no --dir: the store is chosen by the click path
        ["get", name, *where],  # a bare name is resolved by the service
        ["get", path + ".md", *where],  # a path to normalize
        ["get", "no/such/memory", *where],  # the error comes from the click path
        ["graph", path, "--depth", "-1", *where],
        ["graph", path, "--direction", "in", *where],
        ["list", "--limit", "0", *where],
        ["list", "--limit", "x", *where],
        ["related", *where],
        ["verify-all", *where],
        ["get", path, "--dir", str(corpus_store / "missing")],
    ):
        assert quick_answer(capsys, *command) == (False, ""), command
    assert quick_answer(capsys, "related", path, *where)[0]
    time.sleep(0.05)
    (corpus_store / "new-note.md").write_text("# New\n\nA new memory.\n", encoding="utf-8")
    assert quick_answer(capsys, "related", path, *where) == (False, ""), "the store changed"
    assert "new-note" in run_cli(["list", *where]).output
    time.sleep(0.05)  # a folder changed within the timestamp resolution of a sync stays
    run_cli(["list", *where])  # suspect until a later sync settles it
    assert quick_answer(capsys, "related", path, *where)[0], "synced again"


def test_an_expired_memory_or_an_edited_file_goes_the_ordinary_way(
    tmp_path: Path, quick_limits: None, run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "small"
    where = ["--dir", str(store)]
    assert run_cli(["add", "notes/old", "-c", "# Old\n\nGone.", "--expires-at", "2001-01-01",
                    *where]).exit_code == 0  # fmt: skip
    assert run_cli(["add", "notes/live", "-c", "# Live\n\nHere.", *where]).exit_code == 0
    run_cli(["list", *where])
    time.sleep(0.05)  # past the timestamp resolution of the folders just written
    run_cli(["list", *where])
    assert quick_answer(capsys, "get", "notes/old", *where) == (False, "")
    assert quick_answer(capsys, "get", "notes/live", *where)[0]
    listed = quick_answer(capsys, "list", *where)
    assert listed[0] and "notes/old" not in listed[1]
    live = store / "notes" / "live.md"
    live.write_text(live.read_text(encoding="utf-8") + "More.\n", encoding="utf-8")
    assert quick_answer(capsys, "get", "notes/live", *where) == (False, "")
    assert "More." in run_cli(["get", "notes/live", *where]).output


def test_main_offers_the_quick_path_exactly_the_commands_it_takes() -> None:
    from memory_enhancement.cli import QUICK_COMMANDS
    from memory_enhancement.cli.fast import COMMANDS

    assert set(COMMANDS) == QUICK_COMMANDS


def test_a_small_store_is_answered_after_every_file_is_checked(
    corpus_store: Path, run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    """Below the full-check limit the quick path stats every file, as a sync does: an
    edit in place (the folder's mtime unchanged) sends the read the ordinary way."""
    where = ["--dir", str(corpus_store)]
    run_cli(["list", *where])
    time.sleep(0.05)
    run_cli(["list", *where])  # settles the folders written just before the first sync
    path = memories_of(corpus_store)[7]
    answered, out = quick_answer(capsys, "graph", path, *where)
    assert answered
    assert out == run_cli(["graph", path, *where]).output
    folder_mtime = (corpus_store / path).parent.stat().st_mtime_ns
    target = corpus_store / (path + MEMORY_SUFFIX)
    with target.open("a", encoding="utf-8") as handle:
        handle.write("\nEdited in place.\n")
    assert (corpus_store / path).parent.stat().st_mtime_ns == folder_mtime
    assert quick_answer(capsys, "graph", path, *where) == (False, "")
    assert quick_answer(capsys, "list", "-n", "2", *where) == (False, "")
    assert "Edited in place." in run_cli(["get", path, *where]).output


def write_cjk_memories(store: Path) -> None:
    """Japanese and Chinese memories beside the corpus's English ones (it has none)."""
    from test_search_cjk import JA, ZH

    for path, (title, body) in {**JA, **ZH}.items():
        target = store / "cjk" / (path + MEMORY_SUFFIX)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"# {title}\n\n{body}\n", encoding="utf-8")


SEARCHES = [
    *QUERY_SHAPES,
    "xyzzyq plugh",  # no matches
    "ヘッドレス",
    "offscreenモードのQMessageBoxハング",
    "本番に反映する前のマイグレーションの手順は？",
    "一意制約",
    "守护进程",
    "数据源配置在哪里？",
    "菜单",
]


def test_quick_search_equals_the_click_command_and_records_the_query(
    corpus_store: Path, quick_limits: None, run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    write_cjk_memories(corpus_store)
    where = ["--dir", str(corpus_store)]
    settled_index(run_cli, where)
    state = Path(data_dir(os.environ)) / "state" / f"{store_key(corpus_store)}.db"
    for query in SEARCHES:
        before = usage_count(corpus_store)
        answered, out = quick_answer(capsys, "search", query, *where)
        assert answered, query
        expected = run_cli(["search", query, *where])
        assert expected.exit_code == 0
        assert out == expected.output, query
        shown = out.count("\n   ")
        assert shown or query.startswith("xyzzyq"), query
        assert usage_count(corpus_store) == before + 2 * shown, query
        if shown:
            with sqlite3.connect(state) as db:
                rows = db.execute(
                    "SELECT citation_id, path, action, query FROM usage ORDER BY id DESC LIMIT ?",
                    (2 * shown,),
                ).fetchall()
            assert rows[:shown] == rows[shown:], query  # click's rows, then the quick path's
            assert {(action, q) for _, _, action, q in rows} == {("search", query)}
    assert "**ヘッドレス**" in quick_answer(capsys, "search", "ヘッドレス", *where)[1]


def test_quick_search_steps_aside_for_options_and_other_modes(
    corpus_store: Path, quick_limits: None, run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    where = ["--dir", str(corpus_store)]
    run_cli(["list", *where])
    assert quick_answer(capsys, "search", "worktree", *where)[0]
    for command in (
        ["search", "worktree", "--limit", "3", *where],
        ["search", "worktree", "-n", "3", *where],
        ["search", "worktree", "--mode", "lexical", *where],
        ["search", "worktree", "--category", "github-skill", *where],
        ["search", "worktree", "--tag", "git", *where],
        ["search", "worktree", "--include-expired", *where],
        ["search", "worktree", "--verify", *where],
        ["search", "worktree", "--json", *where],
        ["search", "worktree"],  # no --dir
        ["search", "worktree", "pull", *where],  # two arguments: click's error
        ["search", "?!", *where],  # no words: the service says so
        ["search", "", *where],
        ["search", *where],
    ):
        assert quick_answer(capsys, *command) == (False, ""), command
    # Vectors in the index: the service decides between hybrid and a stale-index note.
    index = Path(cache_dir(os.environ)) / "indexes" / f"{store_key(corpus_store)}.db"
    with sqlite3.connect(index) as conn:
        conn.execute("INSERT INTO meta(key, value) VALUES ('embedded:some-model', 'x')")
    assert quick_answer(capsys, "search", "worktree", *where) == (False, "")
    with sqlite3.connect(index) as conn:
        conn.execute("DELETE FROM meta WHERE key = 'embedded:some-model'")
    assert quick_answer(capsys, "search", "worktree", *where)[0]


def test_a_memory_linking_to_repository_files_is_answered_with_them_checked_now(
    git_repo: Path,
    quick_limits: None,
    run_cli: RunCli,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`get` of a memory linking to repository files was handed to the service (to check
    each file is there now), 0.2 s of CPU against 0.04 s on rjmurillo/ai-agents'
    usage-mandatory. The quick path checks them itself: the same bytes as the click
    command while the file is there, after it is deleted, and with --repo-root."""
    serena = git_repo / ".serena" / "memories"
    serena.mkdir(parents=True)
    (git_repo / "docs").mkdir()
    (git_repo / "docs" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    (serena / "a.md").write_text(
        "# A\n\nRead [the guide](docs/guide.md), [the agents](../../AGENTS.md) and [[b]].\n",
        encoding="utf-8",
    )
    (serena / "b.md").write_text("# B\n", encoding="utf-8")
    monkeypatch.chdir(git_repo / "docs")  # the repository is found from the store, not here
    where = ["--dir", str(serena)]
    settled_index(run_cli, where)

    def both(*extra: str) -> str:
        answered, out = quick_answer(capsys, "get", "a", *where, *extra)
        assert answered
        assert out == run_cli(["get", "a", *where, *extra]).output
        return out

    assert "docs/guide.md  [line 3]  -> docs/guide.md (repository file)" in both()
    assert "../../AGENTS.md  [line 3]  missing: no such repository file or folder" in both()
    (git_repo / "AGENTS.md").write_text("# Agents\n", encoding="utf-8")
    (git_repo / "docs" / "guide.md").unlink()
    now = both()
    assert "../../AGENTS.md  [line 3]  -> AGENTS.md (repository file)" in now
    assert "docs/guide.md  [line 3]  missing: no such repository file or folder" in now
    elsewhere = both("--repo-root", str(serena))  # no docs/ there: both read as missing
    assert "links (3, 2 broken):" in elsewhere
