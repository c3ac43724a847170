"""Mentions from the command line: `--fix` rewriting only a moved mention's characters,
`--format github` annotations, unreadable files in `--json`, `--no-mentions`, and the
health report ranking prose-only memories by their mentions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from conftest import RunCli
from memory_enhancement.core.model import Citation
from verify_support import STORE, GitRepo, code, coded


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return coded(tmp_path / "project", {"src/app.py": 30, "lib/old.py": 10})


@pytest.fixture
def cli(repo: GitRepo, run_cli: RunCli) -> Any:
    def run(*args: str) -> Result:
        return run_cli([*args, "--dir", str(repo.store_root)], cwd=repo.root)

    return run


def shift(repo: GitRepo, by: int = 3) -> None:
    """Lines inserted at the top of app.py; old.py renamed."""
    repo.write_lines("src/app.py", [f"# {n}" for n in range(by)] + code("src/app.py", 30))
    repo.mv("lib/old.py", "lib/new.py")
    repo.commit("move code")


# -- --fix ----------------------------------------------------------------------------------


NOTE = (
    "\ufeff# Notes\r\n"
    "\r\n"
    "- see `src/app.py:10` — and [the block](src/app.py#L12-L14), `src/app.py:9:4:` too\r\n"
    "- 日本語: src/app.py:11以降は処理\r\n"
    "- list: src/app.py:5,20-21 and a helper lib/old.py:7\r\n"
    "- untouched: src/app.py:99 and trailing spaces   \r\n"
    "no newline at the end"
)


def test_fix_rewrites_only_the_moved_numbers_and_paths_keeping_every_other_byte(
    repo: GitRepo, cli: Any
) -> None:
    file = repo.write(f"{STORE}/notes.md", NOTE.encode("utf-8"))
    repo.commit("memory")
    shift(repo)
    before = file.read_bytes()
    dry = cli("verify-all", "--fix", "--dry-run")
    assert file.read_bytes() == before  # a dry run writes nothing
    assert "-- see `src/app.py:10`" in dry.stdout and "+- see `src/app.py:13`" in dry.stdout
    done = cli("verify", "notes", "--fix")
    assert "fixed 7 mentions in notes" in done.stdout
    expected = (
        NOTE.replace("src/app.py:10`", "src/app.py:13`")
        .replace("src/app.py#L12-L14", "src/app.py#L15-L17")
        .replace("src/app.py:9:4:", "src/app.py:12:4:")
        .replace("src/app.py:11以降", "src/app.py:14以降")
        .replace("src/app.py:5,20-21", "src/app.py:8,23-24")
        .replace("lib/old.py:7", "lib/new.py:7")
    )
    assert file.read_bytes() == expected.encode("utf-8")  # BOM, CRLF, no final newline kept
    again = cli("verify", "notes", "--json")
    statuses = {m["mention"]: m["status"] for m in json.loads(again.stdout)["mentions"]}
    assert statuses["src/app.py:13"] == "valid"
    assert statuses["src/app.py#L15-L17"] == "valid"
    assert statuses["src/app.py:99"] == "out_of_range"  # failing mentions are left alone


def test_a_route_folder_path_is_one_mention_moved_and_fixed_like_any_other(
    repo: GitRepo, cli: Any
) -> None:
    """Next.js route folders (`[id]`, found in doublefx/9router) are part of the path: the
    mention was `/route.js`, a file of the root, ambiguous among every route."""
    for folder in ("[id]", "i", "d"):  # a glob `[id]` would name `i` and `d`
        repo.write_lines(f"src/api/{folder}/route.js", code(f"route {folder}", 20))
    repo.commit("routes")
    note = "# Notes\n\n- `src/api/[id]/route.js:5` hides secrets\n"
    file = repo.write(f"{STORE}/notes.md", note)
    repo.commit("memory")
    repo.write_lines("src/api/[id]/route.js", ["// a", "// b", *code("route [id]", 20)])
    repo.commit("two lines on top")
    found = json.loads(cli("verify", "notes", "--json").stdout)["mentions"]
    assert [(m["mention"], m["status"], m["current_line"]) for m in found] == [
        ("src/api/[id]/route.js:5", "moved", 7)
    ]
    cli("verify", "notes", "--fix")
    assert file.read_text() == note.replace(":5`", ":7`")


@pytest.mark.parametrize(
    "note",
    [
        # Japanese and Chinese write a range with a wave dash, a full-width tilde (found with
        # find_string in a real memory) or `~`: read as line 10 alone, `--fix` made `13〜12`.
        "# メモ\n\n- src/app.py:10〜12 で初期化\n- src/app.py:10～12\n- src/app.py:10~12\n",
        # In English words, the same: a word after `to` stays prose (`line 42 to handle it`).
        "# Notes\n\n- `src/app.py` lines 10 to 12 set it up\n"
        "- src/app.py line 10 to line 12\n- lines 10 through 12 of `src/app.py`\n",
    ],
)
def test_a_range_written_with_a_dash_or_words_is_moved_whole_by_fix(
    repo: GitRepo, cli: Any, note: str
) -> None:
    """Each form was read as its first line alone, so `--fix` moved one end: a range
    ending before it starts, and the lines after the first never checked."""
    file = repo.write(f"{STORE}/notes.md", note)
    repo.commit("memory")
    shift(repo)
    found = json.loads(cli("verify", "notes", "--json").stdout)["mentions"]
    assert [(m["line"], m["end_line"], m["status"]) for m in found] == [(10, 12, "moved")] * 3
    cli("verify", "notes", "--fix")
    assert file.read_text(encoding="utf-8") == note.replace("10", "13").replace("12", "15")


def test_a_mention_in_an_old_mac_file_is_read_on_its_line_and_fixed_in_cr_lines(
    repo: GitRepo, cli: Any
) -> None:
    """A file whose lines end with CR alone was one line to the reader and the writers:
    its mention was on line 1 and `--fix` could not place it."""
    note = b"# Notes\r\r- `src/app.py:10` sets it up\r"
    file = repo.write(f"{STORE}/notes.md", note)
    repo.commit("memory")
    shift(repo)
    found = json.loads(cli("verify", "notes", "--json").stdout)["mentions"]
    assert [(m["memory_line"], m["line"], m["status"]) for m in found] == [(3, 10, "moved")]
    cli("verify", "notes", "--fix")
    assert file.read_bytes() == note.replace(b":10", b":13")


def test_later_lines_in_spans_of_their_own_are_verified_and_fixed_as_the_file_s(
    repo: GitRepo, cli: Any
) -> None:
    """`` `src/app.py:10`, `:20` ``: the `:20` was no mention, left behind by `--fix`."""
    note = "# Notes\n\n- `src/app.py:10`, `:20`, `:22-23` set it up\n"
    file = repo.write(f"{STORE}/notes.md", note)
    repo.commit("memory")
    shift(repo)
    found = json.loads(cli("verify", "notes", "--json").stdout)["mentions"]
    assert [(m["line"], m["status"]) for m in found] == [
        (10, "moved"),
        (20, "moved"),
        (22, "moved"),
    ]
    cli("verify", "notes", "--fix")
    assert file.read_text(encoding="utf-8") == note.replace(":10`", ":13`").replace(
        ":20`", ":23`"
    ).replace(":22-23", ":25-26")


def test_fix_moves_mentions_and_declared_citations_of_one_memory_in_one_write(
    repo: GitRepo, cli: Any
) -> None:
    cited = Citation("src/app.py", 20, snippet="src_app_py_20 = 20", verified=repo.stamp())
    repo.memory("both", [cited], content="# Both\n\nThe setup is at src/app.py:10.\n")
    repo.commit("memory")
    shift(repo)
    result = cli("verify", "both", "--fix", "--dry-run")
    diffs = [line for line in result.stdout.splitlines() if line.startswith(("+", "-"))]
    assert "+The setup is at src/app.py:13." in diffs
    assert sum(line.startswith("+++") for line in diffs) == 1  # one diff for the file
    cli("verify", "both", "--fix")
    data = json.loads(cli("verify", "both", "--json").stdout)
    assert data["citations"][0]["line"] == 23 and data["citations"][0]["status"] == "valid"
    assert data["mentions"][0]["mention"] == "src/app.py:13"


def test_fix_leaves_a_mention_alone_when_the_file_changed_since_it_was_read(
    repo: GitRepo,
) -> None:
    from memory_enhancement.core.mentions import find_mentions
    from memory_enhancement.verify.fixes import MentionEdit, splice_mentions

    text = "a src/app.py:10 b\nc src/app.py:20 d\n"
    first, second = find_mentions(text)
    edits = [
        MentionEdit(first.line, first.column, first.text, "src/app.py:13"),
        MentionEdit(second.line, second.column, "src/app.py:21", "src/app.py:24"),  # not there
    ]
    assert splice_mentions(text, text, edits) == "a src/app.py:13 b\nc src/app.py:20 d\n"
    shifted = "# added above\n" + text  # a rendered header moved the lines down
    assert splice_mentions(text, shifted, edits[:1]) == (
        "# added above\na src/app.py:13 b\nc src/app.py:20 d\n"
    )


# -- reporting ------------------------------------------------------------------------------


def test_github_annotations_name_mentions_on_their_lines_and_unreadable_files(
    repo: GitRepo, cli: Any
) -> None:
    repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "see src/app.py:10", "old src/app.py:99"])
    repo.write(f"{STORE}/broken.md", b"---\ntags: [unclosed\n---\nbody src/app.py:10\n")
    repo.write(f"{STORE}/latin1.md", b"caf\xe9 src/app.py:10\n")
    repo.commit("memory")
    shift(repo)
    result = cli("verify-all", "--format", "github")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "::error file=.serena/memories/latin1.md,title=unreadable memory latin1::not UTF-8 text"
    )
    assert lines[1].startswith(
        "::error file=.serena/memories/broken.md,title=frontmatter of memory broken::malformed YAML"
    )
    assert (  # its prose is verified all the same
        "::notice file=.serena/memories/broken.md,line=4,title=memory broken::"
        "moved mention src/app.py:10: found at line 13 (was 10)"
    ) in lines
    assert (
        "::notice file=.serena/memories/notes.md,line=3,title=memory notes::"
        "moved mention src/app.py:10: found at line 13 (was 10)"
    ) in lines
    assert any(
        line.startswith("::warning file=.serena/memories/notes.md,line=4,")
        and "out_of_range mention src/app.py:99" in line
        for line in lines
    )
    strict = cli("verify-all", "--format", "github", "--strict")
    assert any(
        line.startswith("::warning") and "moved mention src/app.py:10" in line
        for line in strict.stdout.splitlines()
    )


def test_json_lists_unreadable_memory_files_with_the_reason(repo: GitRepo, cli: Any) -> None:
    repo.write(f"{STORE}/latin1.md", b"caf\xe9\n")
    repo.write(f"{STORE}/broken.md", b"---\ntags: [unclosed\n---\nbody\n")
    result = cli("verify-all", "--json")
    assert result.exit_code == 1
    unreadable, unparsed = json.loads(result.stdout)
    assert unreadable["memory_id"] == "latin1" and unreadable["valid"] is False
    assert unreadable["unreadable"].startswith("not UTF-8 text")
    assert unparsed["memory_id"] == "broken" and unparsed["valid"] is False
    assert unparsed["header_error"].startswith("malformed YAML frontmatter")


def test_text_never_calls_a_memory_valid_over_a_failing_mention(repo: GitRepo, cli: Any) -> None:
    repo.write_lines(f"{STORE}/notes.md", ["# Notes", "", "gone: src/none.py:3"])
    repo.commit("memory")
    result = cli("verify", "notes")
    assert result.exit_code == 1
    first, second = result.stdout.splitlines()[:2]
    assert first.startswith("INVALID  notes")
    assert second.startswith("  mention MISSING      src/none.py:3 (memory line 3)")
    off = cli("verify", "notes", "--no-mentions")
    assert off.exit_code == 0 and "mention" not in off.stdout


def test_health_counts_mentions_and_ranks_drifted_prose_memories_first(
    repo: GitRepo, cli: Any
) -> None:
    repo.write_lines(f"{STORE}/good.md", ["# Good", "", "stays at src/app.py:30"])
    repo.write_lines(f"{STORE}/drifted.md", ["# Drifted", "", "the flag at src/app.py:20"])
    repo.write_lines(f"{STORE}/plain.md", ["# Plain", "", "no code here"])
    repo.commit("memories")
    app = code("src/app.py", 30)
    app[19] = "changed = 20"
    repo.write_lines("src/app.py", app)
    repo.commit("edit")
    data = json.loads(cli("health", "--format", "json").stdout)
    ranked = [(m["path"], m["status"]) for m in data["memories"]]
    assert ranked == [("drifted", "stale"), ("plain", "uncited"), ("good", "orphan")]
    good = next(m for m in data["memories"] if m["path"] == "good")
    assert good["mentions"]["valid"] == 1 and good["citations"]["total"] == 0
    assert (
        good["confidence"]
        > next(m for m in data["memories"] if m["path"] == "drifted")["confidence"]
    )
    off = json.loads(cli("health", "--format", "json", "--no-mentions").stdout)
    assert {m["status"] for m in off["memories"]} == {"uncited"}


def test_a_list_of_lines_is_named_with_its_path_in_annotations_and_in_the_health_report(
    repo: GitRepo, cli: Any
) -> None:
    """Found in doublefx/9router: `` `oauth.js` (lines 32, 55, 68) ``; the annotations
    named the later items `55` and `68` alone, and the health report quoted the first as
    `` `oauth.js` (lines 32 `` inside a code span its backtick closed."""
    repo.write_lines(f"{STORE}/secrets.md", ["# Secrets", "", "- `src/app.py` (lines 5, 20)"])
    repo.commit("memory")
    app = code("src/app.py", 30)
    app[4], app[19] = "moved_out = 5", "moved_out = 20"
    repo.write_lines("src/app.py", app)
    repo.commit("secrets removed")
    github = cli("verify-all", "--format", "github").stdout
    assert "stale mention src/app.py:20: line 20 now reads" in github
    report = cli("health").stdout
    assert "- `secrets`: `src/app.py:5 (memory line 3)`: line 5 now reads `moved_out = 5`" in report
    assert (
        "- `secrets`: `src/app.py:20 (memory line 3)`: line 20 now reads `moved_out = 20`" in report
    )


BROKEN_HEADER = b"---\ntags: [unclosed\n---\n# Broken\n\nthe flag at src/app.py:20\n"


def test_a_memory_whose_header_does_not_parse_has_its_prose_verified_and_fixes_refused(
    repo: GitRepo, cli: Any
) -> None:
    """Found on real stores (session 25): such a memory was skipped by every verification,
    so its drifted mention went unreported and health called it uncited."""
    file = repo.write(f"{STORE}/broken.md", BROKEN_HEADER)
    repo.commit("memory")
    shift(repo)
    one = cli("verify", "broken")
    assert one.exit_code == 1 and "broken: malformed YAML" in one.stderr
    assert "mention moved        src/app.py:20 (memory line 6) -> src/app.py:23" in one.stdout
    whole = cli("verify-all", "--json")
    (item,) = json.loads(whole.stdout)
    assert item["header_error"].startswith("malformed YAML") and whole.exit_code == 1
    assert [(m["status"], m["current_line"]) for m in item["mentions"]] == [("moved", 23)]
    health = json.loads(cli("health", "--format", "json").stdout)
    (memory,) = health["memories"]
    assert memory["status"] != "uncited" and memory["mentions"]["moved"] == 1
    fixed = cli("verify-all", "--fix")
    assert fixed.exit_code == 1 and "1 memory file left unchanged" in fixed.stdout
    assert file.read_bytes() == BROKEN_HEADER  # every edit of it is refused, this one too


def test_a_first_run_tracing_many_memory_files_says_so_on_a_terminal_only(repo: GitRepo) -> None:
    """On a real store of 88 memory files with 3,600 commits, the first run took seconds
    with nothing on the screen; the next reads the cache and has nothing to say."""
    import os
    import pty
    import subprocess
    import sys

    for n in range(20):
        repo.write_lines(f"{STORE}/note{n}.md", [f"# Note {n}", "", f"see src/app.py:{n + 1}"])
    repo.commit("memories")
    command = [sys.executable, "-m", "memory_enhancement", "verify-all", "--dir", STORE]

    def run(*, terminal: bool) -> str:
        leader, follower = pty.openpty()
        done = subprocess.run(
            command, cwd=repo.root, stdout=subprocess.PIPE,
            stderr=follower if terminal else subprocess.PIPE, check=True,
        )  # fmt: skip
        os.close(follower)
        try:
            shown = os.read(leader, 65536).decode() if terminal else done.stderr.decode()
        except OSError:  # nothing was written to the terminal (Linux: EIO once it is closed)
            shown = ""
        os.close(leader)
        assert done.stdout.decode().endswith("20 mentions: 20 valid\n")
        return shown

    first = run(terminal=True)
    assert first.startswith("note: checking 20 mentions in 20 memory files against git history")
    assert run(terminal=True) == ""  # the cache answers
    repo.write_lines(f"{STORE}/note0.md", ["# Note 0", "", "see src/app.py:2"])
    assert run(terminal=False) == ""  # piped: never
