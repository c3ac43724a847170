"""The twelve reproduced cases of issue 14: one bad value or small file never breaks a store.

Each test is the reproduction turned around: the bad input is refused or skipped
with a message naming it, nothing else is affected, nothing is written half or
lost, and nothing hangs (cases that used to hang run as bounded child processes).
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from pathlib import Path

import pytest

from conftest import RunCli
from hostile_support import (
    ALIAS_BOMB,
    DEEP_BUT_PARSEABLE,
    DEEP_YAML,
    python_bounded,
    run_bounded,
    snapshot,
)
from memory_enhancement.store.formats.base import MAX_FILE_BYTES
from memory_enhancement.store.locations import cache_home, data_home, store_key

HUGE_LINE = "99999999999999999999"  # > 2^63


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """An empty memories folder (`--dir` must name an existing folder)."""
    root = tmp_path / "store"
    root.mkdir()
    return root


def cli(run_cli: RunCli, store: Path, repo: Path, *args: str) -> object:
    return run_cli([*args, "--dir", store, "--repo-root", repo], cwd=repo)


MANY = [
    ["list"],
    ["search", "memory"],
    ["recent"],
    ["reindex"],
    ["verify-all"],
    ["health"],
    ["links"],
]


# -- 1. a line number past 2^63 ------------------------------------------------------


def test_a_citation_line_past_2_63_is_refused_before_writing_and_breaks_nothing(
    run_cli: RunCli, store: Path, git_repo: Path
) -> None:
    assert cli(run_cli, store, git_repo, "add", "notes/base", "-c", "A base memory.").exit_code == 0
    before = snapshot(store)
    result = cli(run_cli, store, git_repo, "citation", "add", "notes/base", f"src/a.py:{HUGE_LINE}")
    assert result.exit_code == 2
    assert HUGE_LINE in result.stderr and "largest line number" in result.stderr
    assert snapshot(store) == before
    for args in MANY:
        outcome = cli(run_cli, store, git_repo, *args)
        assert outcome.exit_code == 0, (args, outcome.stderr)
        assert "Traceback" not in outcome.stderr and "OverflowError" not in outcome.stderr


@pytest.mark.parametrize(
    "text",
    [
        f"---\ncitations:\n  - src/app.py:{HUGE_LINE}\n---\nWritten by hand, memory.\n",
        f"---\ncitations:\n  - path: src/app.py\n    line: {HUGE_LINE}\n---\nBy hand, memory.\n",
        "By hand, memory.\n\n## Citations\n\n| File | Line |\n|---|---|\n"
        f"| src/app.py | {HUGE_LINE} |\n",
    ],
    ids=["frontmatter-ref", "frontmatter-mapping", "serena-table"],
)
def test_a_hand_written_line_past_2_63_is_a_problem_of_that_memory_only(
    run_cli: RunCli, store: Path, git_repo: Path, text: str
) -> None:
    (store / "notes").mkdir(parents=True)
    (store / "notes" / "hand.md").write_text(text, encoding="utf-8")
    (store / "notes" / "fine.md").write_text("A fine memory.\n", encoding="utf-8")
    for args in MANY:
        outcome = cli(run_cli, store, git_repo, *args)
        assert outcome.exit_code == 0, (args, outcome.stderr)
        assert "OverflowError" not in outcome.stderr
    listed = cli(run_cli, store, git_repo, "list", "--json")
    assert {m["path"] for m in json.loads(listed.stdout)} == {"notes/fine", "notes/hand"}
    got = cli(run_cli, store, git_repo, "get", "notes/hand")
    assert got.exit_code == 0 and HUGE_LINE in got.stderr  # the row is named as a problem


# -- 2. deeply nested YAML -------------------------------------------------------------


@pytest.mark.parametrize("text", [DEEP_YAML, DEEP_BUT_PARSEABLE], ids=["25000", "900"])
def test_deeply_nested_yaml_is_skipped_and_named_by_every_listing(
    isolated_home: Path, store: Path, git_repo: Path, text: str
) -> None:
    (store / "n").mkdir(parents=True)
    (store / "n" / "deep.md").write_text(text, encoding="utf-8")
    (store / "n" / "ok.md").write_text("An ordinary memory.\n", encoding="utf-8")
    where = ["--dir", store, "--repo-root", git_repo]
    for args in MANY:
        result = run_bounded([*args, *where], home=isolated_home, cwd=git_repo)
        assert result.returncode in (0, 1), (args, result.returncode, result.stderr[-500:])
        if args[0] in ("list", "recent", "reindex", "verify-all", "health"):
            assert result.returncode == 1, args  # something was skipped
            assert "n/deep" in result.stderr and "nested too deeply" in result.stderr
    listed = run_bounded(["list", "--json", *where], home=isolated_home, cwd=git_repo)
    assert [m["path"] for m in json.loads(listed.stdout)] == ["n/ok"]
    got = run_bounded(["get", "n/deep", *where], home=isolated_home, cwd=git_repo)
    assert got.returncode == 2 and "n/deep" in got.stderr and "nested too deeply" in got.stderr


def _block_nested(levels: int) -> str:
    return "".join(f"{'  ' * n}k{n}:\n" for n in range(levels)) + f"{'  ' * levels}leaf\n"


@pytest.mark.parametrize(
    "text",
    [
        _block_nested(60),  # indentation only: no bracket, no anchor
        "a:\n" + "".join(f"{'  ' * n}- k{n}:\n" for n in range(30)) + f"{'  ' * 30}- leaf\n",
        "x: " + "[" * 51 + "]" * 51,
        "x:\n  " + "- " * 60 + "y",
    ],
    ids=["block", "sequences-of-mappings", "flow", "compact"],
)
def test_yaml_nested_past_the_limit_is_refused_whatever_the_syntax(text: str) -> None:
    from memory_enhancement.store.formats.yamlload import MAX_DEPTH, YamlLimitError, load

    with pytest.raises(YamlLimitError, match=f"more than {MAX_DEPTH}"):
        load(text)
    assert load(_block_nested(10)) is not None  # ordinary nesting still loads


# -- 3. a YAML alias bomb ----------------------------------------------------------------


def test_a_yaml_alias_bomb_is_refused_in_moments(
    isolated_home: Path, store: Path, git_repo: Path
) -> None:
    assert len(ALIAS_BOMB) < 500
    (store / "n").mkdir(parents=True)
    (store / "n" / "bomb.md").write_text(ALIAS_BOMB, encoding="utf-8")
    where = ["--dir", store, "--repo-root", git_repo]
    got = run_bounded(["get", "n/bomb", "--json", *where], home=isolated_home, cwd=git_repo)
    assert got.returncode == 2
    assert "n/bomb" in got.stderr and "aliases expand" in got.stderr
    listed = run_bounded(["list", *where], home=isolated_home, cwd=git_repo)
    assert listed.returncode == 1 and "n/bomb" in listed.stderr


# -- 4. FIFOs --------------------------------------------------------------------------


def test_a_fifo_in_the_repository_neither_hangs_nor_holds_the_lock(
    isolated_home: Path, store: Path, git_repo: Path
) -> None:
    os.mkfifo(git_repo / "src" / "fifo")
    where = ["--dir", store, "--repo-root", git_repo]
    home, cwd = isolated_home, git_repo
    assert (
        run_bounded(["add", "notes/ok", "-c", "Fine.", *where], home=home, cwd=cwd).returncode == 0
    )
    added = run_bounded(["citation", "add", "notes/ok", "src/fifo:1", *where], home=home, cwd=cwd)
    assert added.returncode == 0, added.stderr
    assert "src/fifo" in added.stderr and "a FIFO, not a regular file" in added.stderr
    # The lock was released: another writer gets through.
    other = run_bounded(["add", "notes/other", "-c", "Also.", *where], home=home, cwd=cwd)
    assert other.returncode == 0
    verified = run_bounded(["verify", "notes/ok", "--json", *where], home=home, cwd=cwd)
    assert verified.returncode == 1
    checks = json.loads(verified.stdout)["citations"]
    assert [(c["path"], c["status"]) for c in checks] == [("src/fifo", "invalid")]
    assert "FIFO" in checks[0]["reason"]


def test_check_urls_never_opens_a_file_url_not_even_a_fifo(
    isolated_home: Path, store: Path, git_repo: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "outside-fifo"
    os.mkfifo(fifo)
    where = ["--dir", store, "--repo-root", git_repo]
    home, cwd = isolated_home, git_repo
    exists = f"file://{git_repo / 'README.md'}"
    args = ["add", "n/u", "-c", "Urls.", "--citation", exists, "--citation", f"file://{fifo}"]
    assert run_bounded([*args, *where], home=home, cwd=cwd).returncode == 0
    result = run_bounded(["verify-all", "--check-urls", "--json", *where], home=home, cwd=cwd)
    statuses = {
        c["path"]: (c["status"], c["reason"]) for c in json.loads(result.stdout)[0]["citations"]
    }
    for url in (exists, f"file://{fifo}"):
        status, reason = statuses[url]
        assert status == "skipped"  # never "valid": no existence oracle outside the repository
        assert "only http and https" in reason and "file://" in reason


def test_a_fifo_among_the_memory_files_is_skipped_and_named(
    isolated_home: Path, store: Path, git_repo: Path
) -> None:
    (store / "n").mkdir(parents=True)
    (store / "n" / "ok.md").write_text("Fine.\n", encoding="utf-8")
    os.mkfifo(store / "n" / "pipe.md")
    where = ["--dir", store, "--repo-root", git_repo]
    for args in (["list"], ["verify-all"], ["health"], ["add", "n/new", "-c", "x"]):
        result = run_bounded([*args, *where], home=isolated_home, cwd=git_repo)
        assert result.returncode in (0, 1), (args, result.stderr)
        if args[0] != "add":
            assert "n/pipe" in result.stderr and "FIFO" in result.stderr
    got = run_bounded(["get", "n/pipe", *where], home=isolated_home, cwd=git_repo)
    assert got.returncode == 2 and "FIFO" in got.stderr
    gone = run_bounded(["remove", "n/pipe", *where], home=isolated_home, cwd=git_repo)
    assert gone.returncode == 2 and "FIFO" in gone.stderr and "n/pipe" in gone.stderr
    assert (store / "n" / "pipe.md").exists()  # `remove` deletes memories, not what else is there


# -- 5. a damaged state database, an index path that is a folder ------------------------


def _state_and_index(home: Path, store: Path) -> tuple[Path, Path]:
    env = {"MEMORY_ENHANCEMENT_HOME": str(home)}
    key = store_key(store)
    return data_home(env) / "state" / f"{key}.db", cache_home(env) / "indexes" / f"{key}.db"


def _damage(state: Path) -> None:
    """Keep the first page (header and schema) and overwrite every other with garbage."""
    conn = sqlite3.connect(state)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(state.read_bytes())
    data[page:] = bytes((i * 7) % 256 for i in range(page, len(data)))
    state.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(f"{state}{suffix}").unlink(missing_ok=True)


@pytest.mark.parametrize(
    "args",
    [["get", "n/a"], ["search", "alpha"], ["verify-all"], ["health"], ["list"],
     ["add", "n/b", "-c", "Beta memory."]],
    ids=["get", "search", "verify-all", "health", "list", "add"],
)  # fmt: skip
def test_a_state_database_with_garbage_after_its_header_is_moved_aside(
    run_cli: RunCli, isolated_home: Path, store: Path, git_repo: Path, args: list[str]
) -> None:
    """Pages past the first overwritten: the issue's reproduction. Every command that uses
    the state (all but `list`, which reads only the index) moves it aside and answers."""
    added = cli(
        run_cli, store, git_repo, "add", "n/a", "-c", "Alpha.", "--citation", "src/app.py:3"
    )
    assert added.exit_code == 0
    assert cli(run_cli, store, git_repo, "get", "n/a").exit_code == 0
    assert cli(run_cli, store, git_repo, "verify-all").exit_code == 0
    state, index = _state_and_index(isolated_home, store)
    _damage(state)
    index_inode = index.stat().st_ino
    result = cli(run_cli, store, git_repo, *args)
    assert result.exit_code == 0, result.stderr
    assert index.stat().st_ino == index_inode  # the healthy index was kept
    if args[0] == "list":
        assert result.stderr == ""
        return
    assert "moved aside" in result.stderr and str(state) in result.stderr
    aside = [p.name for p in state.parent.iterdir() if p.name.startswith(state.name + ".")]
    assert any(".unreadable-" in name for name in aside)
    for again in (["get", "n/a"], ["health"]):  # and from now on all is quiet
        followed = cli(run_cli, store, git_repo, *again)
        assert followed.exit_code == 0 and followed.stderr == ""
    conn = sqlite3.connect(state)
    assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)
    conn.close()
    if args[0] == "add":
        assert (store / "n" / "b.md").is_file()


def test_an_index_path_that_is_a_folder_is_a_clear_error(
    run_cli: RunCli, store: Path, git_repo: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "index-folder"
    folder.mkdir()
    result = run_cli(["list", "--dir", store, "--index", folder], cwd=git_repo)
    assert result.exit_code == 2
    assert str(folder) in result.stderr and "is a folder" in result.stderr


# -- 6. a symlink out of the store ------------------------------------------------------


def test_a_symlink_out_of_the_store_is_skipped_and_named_not_fatal_to_add(
    run_cli: RunCli, store: Path, git_repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("Secret.\n", encoding="utf-8")
    (store / "notes").mkdir(parents=True)
    (store / "notes" / "a.md").write_text("A memory.\n", encoding="utf-8")
    (store / "notes" / "link.md").symlink_to(outside)
    assert cli(run_cli, store, git_repo, "add", "notes/b", "-c", "Another.").exit_code == 0
    listed = cli(run_cli, store, git_repo, "list")
    assert listed.exit_code == 1
    assert "notes/link" in listed.stderr and "outside the store" in listed.stderr
    assert "notes/a" in listed.stdout and "notes/b" in listed.stdout
    assert outside.read_text(encoding="utf-8") == "Secret.\n"


# -- 7. content over the size limit -----------------------------------------------------


def test_content_over_the_size_limit_is_refused_before_anything_is_written(
    run_cli: RunCli, store: Path, git_repo: Path, tmp_path: Path
) -> None:
    big = tmp_path / "big.txt"
    big.write_text("x" * (MAX_FILE_BYTES + 300_000), encoding="utf-8")
    result = cli(run_cli, store, git_repo, "add", "notes/big", "--file", str(big))
    assert result.exit_code == 2
    assert "notes/big" in result.stderr and str(MAX_FILE_BYTES) in result.stderr
    assert not (store / "notes" / "big.md").exists()
    big.write_text("small now", encoding="utf-8")
    assert cli(run_cli, store, git_repo, "add", "notes/big", "--file", str(big)).exit_code == 0
    before = snapshot(store)
    grown = cli(run_cli, store, git_repo, "update", "notes/big", "-c", "y" * MAX_FILE_BYTES)
    assert grown.exit_code == 2 and "notes/big" in grown.stderr
    assert snapshot(store) == before


# -- 8. serena's reserved headings ---------------------------------------------------------


@pytest.fixture
def serena_store(store: Path) -> Path:
    (store / ".memory-enhancement.yaml").write_text("format: serena\n", encoding="utf-8")
    return store


@pytest.mark.parametrize("heading", ["Metadata", "Citations", "Links"])
def test_content_with_a_reserved_serena_heading_is_refused_naming_it(
    run_cli: RunCli, serena_store: Path, git_repo: Path, heading: str
) -> None:
    content = f"Intro.\n\n## {heading}\n\nMy own section, not the tool's."
    result = cli(run_cli, serena_store, git_repo, "add", "n/own", "-t", "a", "-c", content)
    assert result.exit_code == 2
    assert f"## {heading}" in result.stderr and "n/own" in result.stderr
    assert not (serena_store / "n" / "own.md").exists()


def test_a_citation_added_behind_an_unclosed_fence_is_refused_not_reported_changed(
    run_cli: RunCli, serena_store: Path, git_repo: Path
) -> None:
    text = "Body.\n\n## Citations\n\n```\n| File | Line |\n|---|---|\n"
    (serena_store / "fence.md").write_text(text, encoding="utf-8")
    result = cli(run_cli, serena_store, git_repo, "citation", "add", "fence", "src/app.py:3")
    assert result.exit_code == 2
    assert "never closed" in result.stderr and "fence" in result.stderr
    assert (serena_store / "fence.md").read_text(encoding="utf-8") == text


def test_whatever_a_serena_write_reports_reads_back(
    run_cli: RunCli, serena_store: Path, git_repo: Path
) -> None:
    added = cli(
        run_cli, serena_store, git_repo,
        "add", "n/ok", "-t", "alpha", "-t", "beta", "-c", "Intro.\n\n## Notes\n\nKept.",
        "--citation", "src/app.py:3", "--json",
    )  # fmt: skip
    assert added.exit_code == 0
    written = json.loads(added.stdout)
    again = json.loads(cli(run_cli, serena_store, git_repo, "get", "n/ok", "--json").stdout)
    assert again["content"] == written["content"] == "Intro.\n\n## Notes\n\nKept."
    assert again["metadata"]["tags"] == ["alpha", "beta"]
    assert again["metadata"]["citations"] == written["metadata"]["citations"] == ["src/app.py:3"]


def test_a_citation_put_first_in_a_serena_table_reads_back_first() -> None:
    """Found by the read-back check: a new first citation was appended after the last
    row, so the file read back in another order than the one written."""
    from dataclasses import replace

    from memory_enhancement.core.model import Citation, Memory, MemoryMeta
    from memory_enhancement.store import formats

    kept = Citation("src/a.py", 1, 2, "x = 1")
    memory = Memory("n/m", "Body.", MemoryMeta(citations=(kept,)), (), "serena")
    serena = formats.by_name("serena")
    doc = formats.parse_text("n/m", serena.render(None, memory))
    wanted = (Citation("src/first.py"), kept)
    edited = serena.render(
        doc, replace(doc.memory, meta=replace(doc.memory.meta, citations=wanted))
    )
    assert formats.parse_text("n/m", edited).memory.meta.citations == wanted


# -- 11 (CLI side) and 12 ------------------------------------------------------------------


def test_year_one_expiry_round_trips(run_cli: RunCli, store: Path, git_repo: Path) -> None:
    result = cli(
        run_cli, store, git_repo, "add", "n/old", "-c", "Old.", "--expires-at", "0001-01-01"
    )
    assert result.exit_code == 0
    assert "expires_at: 0001-01-01T00:00:00.000Z" in (store / "n" / "old.md").read_text()
    got = cli(run_cli, store, git_repo, "get", "n/old", "--include-expired", "--json")
    assert got.exit_code == 0, got.stderr
    assert json.loads(got.stdout)["metadata"]["expires_at"].startswith("0001-01-01")
    listed = cli(run_cli, store, git_repo, "list", "--include-expired")
    assert listed.exit_code == 0 and "n/old" in listed.stdout


def test_an_expiry_outside_the_calendar_in_utc_is_refused_naming_it(
    run_cli: RunCli, store: Path, git_repo: Path
) -> None:
    value = "0001-01-01T00:00:00+05:00"
    result = cli(run_cli, store, git_repo, "add", "n/x", "-c", "X.", "--expires-at", value)
    assert result.exit_code == 2 and value in result.stderr
    assert not store.exists() or not list(store.rglob("*.md"))


def test_temporary_files_of_a_killed_writer_are_removed_by_the_next_write(
    run_cli: RunCli, store: Path, git_repo: Path
) -> None:
    assert cli(run_cli, store, git_repo, "add", "n/a", "-c", "A.").exit_code == 0
    leftover = store / "n" / ".a.md.k2j4h6g8.tmp"
    leftover.write_text("half a write", encoding="utf-8")
    other_folder = store / "m"
    other_folder.mkdir()
    elsewhere = other_folder / ".b.md.abcdefgh.tmp"
    elsewhere.write_text("half", encoding="utf-8")
    assert cli(run_cli, store, git_repo, "add", "n/b", "-c", "B.").exit_code == 0
    assert not leftover.exists()
    assert elsewhere.exists()  # only the folder written to is cleaned
    assert cli(run_cli, store, git_repo, "update", "n/a", "-c", "A2.").exit_code == 0
    not_ours = store / "n" / ".notes.txt"
    not_ours.write_text("a hidden file of the user's", encoding="utf-8")
    assert cli(run_cli, store, git_repo, "update", "n/a", "-c", "A3.").exit_code == 0
    assert not_ours.exists()


@pytest.mark.parametrize("kind", ["fifo", "socket"])
def test_a_citation_target_that_is_no_regular_file_is_invalid_without_opening_it(
    isolated_home: Path, store: Path, git_repo: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(git_repo / "src")
    server = socket.socket(socket.AF_UNIX)
    if kind == "fifo":
        os.mkfifo("special")  # opening it for reading would block
    else:
        server.bind("special")  # relative: a socket path must be short
    where = ["--dir", store, "--repo-root", git_repo]
    home, cwd = isolated_home, git_repo
    with server:
        assert run_bounded(["add", "n/s", "-c", "S.", *where], home=home, cwd=cwd).returncode == 0
        added = run_bounded(["citation", "add", "n/s", "src/special:1", *where], home=home, cwd=cwd)
        assert added.returncode == 0
        shown = "a FIFO" if kind == "fifo" else "a socket"
        assert f"{shown}, not a regular file" in added.stderr
        result = run_bounded(["verify", "n/s", "--json", *where], home=home, cwd=cwd)
    assert result.returncode == 1
    check = json.loads(result.stdout)["citations"][0]
    assert check["status"] == "invalid" and "not a regular file" in check["reason"]


def test_a_device_is_never_opened_as_a_cited_file() -> None:
    # The repository is /dev itself, so /dev/zero is inside it: reading it would never end.
    result = python_bounded(
        "from pathlib import Path\n"
        "from memory_enhancement.verify.repo import Repository\n"
        "source = Repository(Path('/dev')).read('zero')\n"
        "print(source.status.value, source.reason, sep='|')\n"
    )
    assert result.stdout == "unreadable|a device, not a regular file\n", result.stderr[-300:]


# -- the principle: skipped, named, exit code ------------------------------------------


def test_verify_all_names_a_skipped_file_in_every_format_and_exits_1(
    run_cli: RunCli, store: Path, git_repo: Path
) -> None:
    assert cli(run_cli, store, git_repo, "add", "n/ok", "-c", "Fine.").exit_code == 0
    (store / "n" / "bad.md").write_text("---\ntags: [unclosed\n---\nBody\n", encoding="utf-8")
    text = cli(run_cli, store, git_repo, "verify-all")
    assert text.exit_code == 1 and "n/bad" in text.stderr
    assert "1 memory whose frontmatter does not parse" in text.stdout
    github = cli(run_cli, store, git_repo, "verify-all", "--format", "github")
    assert github.exit_code == 1
    errors = [line for line in github.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and "n/bad" in errors[0] and "malformed YAML" in errors[0]
    as_json = cli(run_cli, store, git_repo, "verify-all", "--json")
    assert as_json.exit_code == 1 and "n/bad" in as_json.stderr
    listed = json.loads(as_json.stdout)  # stdout stays valid JSON, and names the file
    assert [item["memory_id"] for item in listed if "header_error" in item] == ["n/bad"]
    health = cli(run_cli, store, git_repo, "health", "--format", "json")
    assert health.exit_code == 1
    assert any("n/bad" in reason for reason in json.loads(health.stdout)["skipped"])
    reindexed = cli(run_cli, store, git_repo, "reindex", "--json")
    assert reindexed.exit_code == 1
    assert any("n/bad" in reason for reason in json.loads(reindexed.stdout)["skipped"])


def test_a_memory_the_index_cannot_hold_is_skipped_not_fatal_to_the_sync(
    store: Path, tmp_path: Path
) -> None:
    """The safety net under the grammar: a value SQLite cannot store (here built by hand,
    as a future parser bug might) makes that one memory unreadable, not the whole index."""
    from dataclasses import replace

    from memory_enhancement.core.model import Citation
    from memory_enhancement.index.index import Index
    from memory_enhancement.store.disk import Store
    from memory_enhancement.store.state import State

    (store / "n").mkdir(parents=True)
    (store / "n" / "ok.md").write_text("Fine.\n", encoding="utf-8")
    (store / "n" / "odd.md").write_text("Odd.\n", encoding="utf-8")
    memories = Store(store)
    index = Index(memories, tmp_path / "index.db", State(tmp_path / "state.db"))
    loaded = memories.read("n/odd")
    meta = replace(loaded.doc.memory.meta, citations=(Citation("a.py", 2**70),))
    loaded.doc.memory = replace(loaded.doc.memory, meta=meta)
    with index.connect(sync=False) as conn:
        index.refresh(conn, ["n/odd"], {"n/odd": loaded})
        errors = dict(conn.execute("SELECT path, error FROM memories"))
    assert "cannot be indexed" in errors["n/odd"] and "71-bit" in errors["n/odd"]
    with index.connect() as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 2
