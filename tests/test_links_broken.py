"""Broken links: reported where they are, fixed when one memory is the likely target,
and kept in step as memories come and go (issue 5 "Link resolution", `links`).

The stores here live in a real git repository (`.memories`, the project store),
so renames made with `git mv` are what git reports, not a mock.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from conftest import RunCli, git
from graph_support import broken, out_links, write, write_all
from memory_enhancement.index.index import SyncStats
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository


@pytest.fixture
def memories(git_repo: Path) -> Path:
    """The project store of the test repository."""
    return git_repo / ".memories"


@pytest.fixture
def project(memories: Path, git_repo: Path) -> MemoryService:
    return MemoryService(Store(memories), Repository(git_repo))


def commit(repo: Path, message: str = "memories") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


# -- reporting -------------------------------------------------------------------------


def test_dangling_and_ambiguous_links_are_reported_with_file_and_line(
    project: MemoryService, memories: Path
) -> None:
    write_all(
        memories,
        {
            "notes/a": "# A\n\nSee [gone](gone.md).\n\n## Links\n\n- cache-policy\n",
            "notes/sub/cache-policy": "# One\n",
            "ops/cache-policy": "# Two\n",
        },
    )
    found = project.broken_links()
    assert [(b.file, b.line, b.target, b.kind, b.status, b.candidates) for b in found] == [
        (".memories/notes/a.md", 3, "gone.md", "markdown", "dangling", ()),
        (
            ".memories/notes/a.md",
            7,
            "cache-policy",
            "bare",
            "ambiguous",
            ("notes/sub/cache-policy", "ops/cache-policy"),
        ),
    ]
    assert all(b.suggestion is None and b.replacement is None for b in found)


def test_a_dangling_link_is_reported_in_the_traversal_too(
    project: MemoryService, memories: Path
) -> None:
    write(memories, "a", "# A\n\n[[gone]] and [[b]]\n")
    write(memories, "b", "# B\n")
    result = project.graph("a")
    assert result.dangling == [("a", "gone")]
    assert list(result.nodes) == ["a", "b"]


# -- fixes offered ----------------------------------------------------------------------


def test_a_link_to_a_unique_name_now_in_another_folder_still_resolves(
    project: MemoryService, memories: Path
) -> None:
    """The Resolver finds a unique name anywhere, so such a link is not broken at all."""
    write_all(
        memories,
        {
            "notes/a": "# A\n\n[R](runbook.md), [[old/runbook]]\n\n## Links\n\n- notes/runbook\n",
            "ops/runbook": "# Runbook, moved from notes/\n",
        },
    )
    assert out_links(project, "notes/a") == [("ops/runbook", "link")]
    assert broken(project) == []


def test_an_ambiguous_link_is_offered_the_one_candidate_in_its_own_folder(
    project: MemoryService, memories: Path
) -> None:
    write_all(
        memories,
        {
            "notes/a": "# A\n\n[[old/cache-policy]] and [C](archive/cache-policy.md)\n",
            "notes/cache-policy": "# Ours\n",
            "ops/cache-policy": "# Theirs\n",
            "ops/x": "# X\n\n[[old/cache-policy]]\n",  # its own folder has one candidate
            "arch/y": "# Y\n\n[[old/cache-policy]]\n",  # none in arch/: no fix
        },
    )
    found = {
        (b.source, b.kind): (b.status, b.suggestion, b.replacement) for b in project.broken_links()
    }
    assert found == {
        ("notes/a", "wiki"): ("ambiguous", "notes/cache-policy", "notes/cache-policy"),
        ("notes/a", "markdown"): ("ambiguous", "notes/cache-policy", "cache-policy.md"),
        ("ops/x", "wiki"): ("ambiguous", "ops/cache-policy", "ops/cache-policy"),
        ("arch/y", "wiki"): ("ambiguous", None, None),
    }


@pytest.mark.parametrize("committed", [False, True], ids=["staged", "committed"])
def test_a_memory_renamed_with_git_mv_is_offered_as_the_fix(
    project: MemoryService, memories: Path, git_repo: Path, committed: bool
) -> None:
    write_all(
        memories,
        {
            "notes/deploy-steps": "# Deploy steps\n\nThe whole procedure.\n",
            "notes/a": (
                "# A\n\n[steps](deploy-steps.md) and [[notes/deploy-steps#Rollback|roll back]]\n\n"
                "## Links\n\n- notes/deploy-steps - the procedure\n"
            ),
            "ops/b": "# B\n\n[link:depends_on](notes/deploy-steps)\n",
        },
    )
    commit(git_repo)
    git(git_repo, "mv", ".memories/notes/deploy-steps.md", ".memories/notes/release-runbook.md")
    if committed:
        commit(git_repo, "rename")
    assert broken(project) == [
        ("notes/a", 3, "deploy-steps.md", "dangling", "notes/release-runbook"),
        ("notes/a", 3, "notes/deploy-steps", "dangling", "notes/release-runbook"),
        ("notes/a", 7, "notes/deploy-steps", "dangling", "notes/release-runbook"),
        ("ops/b", 3, "notes/deploy-steps", "dangling", "notes/release-runbook"),
    ]
    assert [b.replacement for b in project.broken_links()] == [
        "release-runbook.md",  # markdown links stay relative to the linking file
        "notes/release-runbook",
        "notes/release-runbook",
        "notes/release-runbook",
    ]


def test_a_close_name_is_offered_only_when_it_is_the_only_one(
    project: MemoryService, memories: Path
) -> None:
    write_all(
        memories,
        {
            "notes/a": "# A\n\n[[deploy-rollbak]] and [[cache-polcy]]\n",
            "ops/deploy-rollback": "# Rollback\n",
            "ops/cache-policy-a": "# Cache A\n",
            "ops/cache-policy-b": "# Cache B\n",
        },
    )
    assert broken(project) == [
        ("notes/a", 3, "deploy-rollbak", "dangling", "ops/deploy-rollback"),
        ("notes/a", 3, "cache-polcy", "dangling", None),
    ]


def test_a_wiki_link_written_as_the_title_is_offered_the_memory_it_names(
    project: MemoryService, memories: Path
) -> None:
    """`[[Cache Settings]]` and `[[캐시 설정]]` are too short for a nearly identical name
    (difflib's ratio is below its cutoff), yet they differ from the memory's name only in
    case and separators: that memory is the fix, when it is the only one."""
    write_all(
        memories,
        {
            "notes/a": "# A\n\n[[Cache Settings]], [[캐시 설정]] and [[Deploy Steps]]\n",
            "ops/cache-settings": "# Cache\n",
            "ops/캐시-설정": "# 캐시\n",
            "ops/deploy_steps": "# Deploy, one\n",
            "ops/deploy-steps": "# Deploy, another\n",
        },
    )
    assert broken(project) == [
        ("notes/a", 3, "Cache Settings", "dangling", "ops/cache-settings"),
        ("notes/a", 3, "캐시 설정", "dangling", "ops/캐시-설정"),
        ("notes/a", 3, "Deploy Steps", "dangling", None),  # two memories: no guess
    ]


def test_a_dangling_citation_id_gets_no_fix(project: MemoryService, memories: Path) -> None:
    write_all(memories, {"a": "# A\n\n[mem:ABCDEF]\n", "abcdef": "# Same letters, not the ID\n"})
    assert [(b.target, b.status, b.replacement) for b in project.broken_links()] == [
        ("mem:ABCDEF", "dangling", None)
    ]


# -- kept in step as memories come and go ----------------------------------------------


class CountingStore(Store):
    """A real store that remembers which memory files it opened."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: list[str] = []

    def read_bytes(self, path: str, *, scanned: bool = False) -> tuple[bytes, os.stat_result]:
        self.reads.append(path)
        return super().read_bytes(path, scanned=scanned)


@pytest.fixture
def counting(store_dir: Path, git_repo: Path, tmp_path: Path) -> MemoryService:
    write_all(
        store_dir,
        {
            "notes/a": "# A\n\n[[runbook]] and [R](ops/runbook.md)\n",
            "notes/b": "# B\n\n## Related\n\n- runbook\n",
            "notes/c": "# C\n\n[[notes/b]]\n",
        },
    )
    return MemoryService(
        CountingStore(store_dir),
        Repository(git_repo),
        index_path=tmp_path / "index.db",
        state=State(tmp_path / "state.db"),
    )


def sync(service: MemoryService) -> tuple[SyncStats, list[str]]:
    """Sync the index and return what it did and which files it read."""
    store = service.store
    assert isinstance(store, CountingStore)
    store.reads.clear()
    with service.index.connect(sync=False) as conn:
        stats = service.index.sync(conn)
    return stats, sorted(store.reads)


def test_adding_the_missing_memory_resolves_dangling_links_reading_only_it(
    counting: MemoryService, store_dir: Path
) -> None:
    sync(counting)
    assert [b[2] for b in broken(counting)] == ["runbook", "ops/runbook.md", "runbook"]
    write(store_dir, "ops/runbook", "# Runbook\n")
    stats, reads = sync(counting)
    assert (stats.added, stats.updated, reads) == (1, 0, ["ops/runbook"])
    assert out_links(counting, "notes/a") == [("ops/runbook", "link")]
    assert out_links(counting, "notes/b") == [("ops/runbook", "related")]
    assert broken(counting) == []


def test_removing_a_memory_makes_the_links_to_it_dangle_reading_nothing(
    counting: MemoryService, store_dir: Path
) -> None:
    write(store_dir, "ops/runbook", "# Runbook\n")
    sync(counting)
    assert broken(counting) == []
    (store_dir / "ops" / "runbook.md").unlink()
    stats, reads = sync(counting)
    assert (stats.removed, stats.updated, reads) == (1, 0, [])
    assert [(b[0], b[2], b[3]) for b in broken(counting)] == [
        ("notes/a", "runbook", "dangling"),
        ("notes/a", "ops/runbook.md", "dangling"),
        ("notes/b", "runbook", "dangling"),
    ]
    assert out_links(counting, "notes/c") == [("notes/b", "link")]


def test_a_second_memory_of_the_same_name_makes_name_resolved_links_ambiguous(
    counting: MemoryService, store_dir: Path
) -> None:
    write(store_dir, "ops/runbook", "# Runbook\n")
    sync(counting)
    write(store_dir, "archive/runbook", "# The old runbook\n")
    stats, reads = sync(counting)
    assert (stats.added, stats.updated, reads) == (1, 0, ["archive/runbook"])
    found = counting.broken_links()
    assert [(b.source, b.target, b.status, b.candidates) for b in found] == [
        ("notes/a", "runbook", "ambiguous", ("archive/runbook", "ops/runbook")),
        ("notes/b", "runbook", "ambiguous", ("archive/runbook", "ops/runbook")),
    ]
    # The markdown link names its folder from the store root, so it still resolves.
    assert out_links(counting, "notes/a") == [("ops/runbook", "link")]
    (store_dir / "archive" / "runbook.md").unlink()
    sync(counting)
    assert broken(counting) == []


def test_an_edited_memory_has_its_links_resolved_again(
    counting: MemoryService, store_dir: Path
) -> None:
    write(store_dir, "ops/runbook", "# Runbook\n")
    sync(counting)
    write(store_dir, "notes/c", "# C\n\nNow [[gone-away]] and [[ops/runbook]].\n")
    stats, reads = sync(counting)
    assert (stats.updated, reads) == (1, ["notes/c"])
    assert out_links(counting, "notes/c") == [("ops/runbook", "link")]
    assert broken(counting) == [("notes/c", 3, "gone-away", "dangling", None)]


# -- links --fix ----------------------------------------------------------------------

BEFORE_A = (
    "---\n"
    "created_at: 2026-01-01T00:00:00.000Z\n"
    "related: [notes/deploy-steps, ops/keep]  # a comment stays\n"
    "---\n"
    "# Deploy notes \u2014 caf\u00e9\n"
    "\n"
    "Trailing spaces stay.   \n"
    '\tA tab, then [the steps](deploy-steps.md "Steps") and [[deploy-steps#Rollback|rb]].\n'
    "Untouched: [keep](../ops/keep.md), `[x](deploy-steps.md)`, deploy-steps in prose.\n"
    "\n"
    "## Links\n"
    "\n"
    "- notes/deploy-steps - why: the procedure\n"
    "- [link:depends_on](<deploy-steps.md#one>)\n"
    "- ops/keep\n"
    "- [[old/cache-policy]]\n"
    "no final newline"
)
AFTER_A = (
    "---\n"
    "created_at: 2026-01-01T00:00:00.000Z\n"
    "related: [notes/release-runbook, ops/keep]  # a comment stays\n"
    "---\n"
    "# Deploy notes \u2014 caf\u00e9\n"
    "\n"
    "Trailing spaces stay.   \n"
    '\tA tab, then [the steps](release-runbook.md "Steps") and '
    "[[notes/release-runbook#Rollback|rb]].\n"
    "Untouched: [keep](../ops/keep.md), `[x](deploy-steps.md)`, deploy-steps in prose.\n"
    "\n"
    "## Links\n"
    "\n"
    "- notes/release-runbook - why: the procedure\n"
    "- [link:depends_on](<notes/release-runbook#one>)\n"
    "- ops/keep\n"
    "- [[notes/cache-policy]]\n"
    "no final newline"
)
BEFORE_B = b"\xef\xbb\xbf# B\r\n\r\nSee [[deploy-steps]] here.\r\n"
AFTER_B = b"\xef\xbb\xbf# B\r\n\r\nSee [[notes/release-runbook]] here.\r\n"
CLEAN = "# Clean\n\nNothing broken: [[ops/keep]].\n"


@pytest.fixture
def to_fix(memories: Path, git_repo: Path) -> Path:
    """A store with links broken by a `git mv`, one ambiguous link without a fix and one with."""
    write_all(
        memories,
        {
            "notes/a": BEFORE_A,
            "notes/deploy-steps": "# Steps\n",
            "notes/cache-policy": "# Ours\n",
            "ops/cache-policy": "# Theirs\n",
            "ops/keep": "# Keep\n",
            "ops/clean": CLEAN,
            "arch/y": "# Y\n\n[[old/cache-policy]]\n",  # no candidate in arch/: no fix
        },
    )
    (memories / "notes" / "b.md").write_bytes(BEFORE_B)
    commit(git_repo)
    git(git_repo, "mv", ".memories/notes/deploy-steps.md", ".memories/notes/release-runbook.md")
    return memories


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(f.relative_to(root)): (f.read_bytes(), f.stat().st_mtime_ns)
        for f in sorted(root.rglob("*.md"))
    }


def test_links_fix_rewrites_only_the_link_targets(
    run_cli: RunCli, to_fix: Path, git_repo: Path
) -> None:
    before = snapshot(to_fix)
    result = run_cli(["links", "--fix"], cwd=git_repo)
    assert "fixed notes/a\nfixed notes/b\n" in result.stdout
    assert (to_fix / "notes" / "a.md").read_bytes() == AFTER_A.encode("utf-8")
    assert (to_fix / "notes" / "b.md").read_bytes() == AFTER_B
    after = snapshot(to_fix)
    untouched = set(before) - {"notes/a.md", "notes/b.md", "notes/deploy-steps.md"}
    assert {name: after[name] for name in untouched} == {name: before[name] for name in untouched}
    # What --fix could not fix is still reported, and the exit code says so.
    assert result.exit_code == 1
    again = run_cli(["links"], cwd=git_repo)
    assert again.exit_code == 1
    assert again.stdout == (
        "ambiguous .memories/arch/y.md:3  -> old/cache-policy  "
        "(candidates: notes/cache-policy, ops/cache-policy)\n"
        "1 broken link (0 dangling, 1 ambiguous), 0 with a fix\n"
    )


def test_links_fix_dry_run_prints_the_diff_and_writes_nothing(
    run_cli: RunCli, to_fix: Path, git_repo: Path
) -> None:
    before = snapshot(to_fix)
    result = run_cli(["links", "--fix", "--dry-run"], cwd=git_repo)
    assert result.exit_code == 1
    assert snapshot(to_fix) == before
    out = result.stdout
    assert "--- a/.memories/notes/a.md\n+++ b/.memories/notes/a.md\n" in out
    assert "-related: [notes/deploy-steps, ops/keep]  # a comment stays\n" in out
    assert "+related: [notes/release-runbook, ops/keep]  # a comment stays\n" in out
    assert "+- [[notes/cache-policy]]\n" in out
    assert "--- a/.memories/notes/b.md\n+++ b/.memories/notes/b.md\n" in out
    assert "fixed" not in out
    assert out.endswith("8 broken links (6 dangling, 2 ambiguous), 7 with a fix\n")


def test_a_dry_run_diff_of_a_file_without_a_final_newline_is_a_patch_git_applies(
    memories: Path, git_repo: Path, tmp_path: Path
) -> None:
    """Many Serena memories end without a newline (ssaattww/cdr_cs: all 36): the diff marks
    it as git does, so the next text printed does not run on from the last `+` line."""
    write_all(memories, {"ops/deploy-rollback": "# R\n"})
    (memories / "a.md").write_bytes("2025-09-14: 手順は [[deploy-rollbak]] を参照。".encode())
    commit(git_repo)
    src = Path(__file__).resolve().parents[1] / "src"
    result = subprocess.run(
        [sys.executable, "-m", "memory_enhancement", "links", "--fix", "--dry-run"],
        capture_output=True, text=True, cwd=git_repo,
        env={**os.environ, "PYTHONPATH": str(src), "MEMORY_ENHANCEMENT_HOME": str(tmp_path / "h")},
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert result.stdout.endswith(
        "-2025-09-14: 手順は [[deploy-rollbak]] を参照。\n\\ No newline at end of file\n"
        "+2025-09-14: 手順は [[ops/deploy-rollback]] を参照。\n\\ No newline at end of file\n"
        "1 broken link (1 dangling, 0 ambiguous), 1 with a fix\n"
    )
    patch = tmp_path / "fix.diff"
    patch.write_text(result.stdout.rpartition("1 broken link")[0], encoding="utf-8")
    git(git_repo, "apply", "--check", str(patch))
    assert (memories / "a.md").read_bytes().endswith("を参照。".encode())  # nothing written


def test_links_exits_0_once_every_broken_link_is_fixed(
    run_cli: RunCli, memories: Path, git_repo: Path
) -> None:
    write_all(memories, {"a": "# A\n\n[[deploy-rollbak]]\n", "ops/deploy-rollback": "# R\n"})
    first = run_cli(["links"], cwd=git_repo)
    assert (first.exit_code, first.stdout) == (
        1,
        "dangling  .memories/a.md:3  -> deploy-rollbak  fix: ops/deploy-rollback\n"
        "1 broken link (1 dangling, 0 ambiguous), 1 with a fix\n",
    )
    fixed = run_cli(["links", "--fix"], cwd=git_repo)
    assert fixed.exit_code == 0
    assert (memories / "a.md").read_text() == "# A\n\n[[ops/deploy-rollback]]\n"
    # Found on 23min/FlowTime: the summary after a written fix said "1 broken link" alone,
    # as if the fix had not happened; it now says what is left.
    assert fixed.stdout.endswith(
        "fixed a\n1 broken link (1 dangling, 0 ambiguous), 1 with a fix; 0 broken links left\n"
    )
    clean = run_cli(["links", "--dangling"], cwd=git_repo)
    assert (clean.exit_code, clean.stdout) == (
        0,
        "0 broken links (0 dangling, 0 ambiguous), 0 with a fix\n",
    )


def test_links_json_lists_each_broken_link_with_its_fix(
    run_cli: RunCli, memories: Path, git_repo: Path
) -> None:
    write_all(memories, {"notes/a": "# A\n\n[R](rollbak.md)\n", "ops/rollback": "# R\n"})
    result = run_cli(["links", "--json"], cwd=git_repo)
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "broken": [
            {
                "memory": "notes/a",
                "file": ".memories/notes/a.md",
                "line": 3,
                "target": "rollbak.md",
                "kind": "markdown",
                "type": "link",
                "status": "dangling",
                "candidates": [],
                "suggestion": "ops/rollback",
                "replacement": "../ops/rollback.md",
            }
        ],
        "fixes": [],
        "skipped": [],
        "remaining": 1,
    }


def test_links_dry_run_without_fix_is_a_usage_error(run_cli: RunCli, git_repo: Path) -> None:
    result = run_cli(["links", "--dry-run"], cwd=git_repo)
    assert result.exit_code == 2
    assert "--dry-run only applies with --fix" in result.stderr


def test_fixing_a_link_with_spaces_keeps_the_markdown_valid(
    project: MemoryService, memories: Path
) -> None:
    write_all(
        memories,
        {
            "a": "# A\n\n[x](<my notess.md>) and [y](my%20notess.md)\n",
            "my notes": "# A name with a space\n",
        },
    )
    project.fix_links()
    assert (memories / "a.md").read_text() == "# A\n\n[x](<my notes.md>) and [y](my%20notes.md)\n"
    assert broken(project) == []
    assert out_links(project, "a") == [("my notes", "link")]


# -- the real corpus ------------------------------------------------------------------


def test_fixing_the_real_corpus_rewrites_only_reported_lines_and_leaves_the_rest_broken(
    corpus: Path, tmp_path: Path, git_repo: Path
) -> None:
    """About one real link in eight dangles; each fix offered must resolve, nothing else move."""
    copy = tmp_path / "corpus"
    shutil.copytree(corpus, copy)
    service = MemoryService(Store(copy), Repository(git_repo))
    found = service.broken_links()
    assert len(found) > 300
    for item in found:
        line = (copy / f"{item.source}.md").read_text(encoding="utf-8").split("\n")[item.line - 1]
        assert item.target.split("#")[0] in unquote(line), (item, line)
        if item.suggestion is not None:
            assert (copy / f"{item.suggestion}.md").is_file()
    offered = [item for item in found if item.replacement]
    assert len(offered) > 50
    before = {f: f.read_bytes() for f in copy.rglob("*.md")}
    _, fixes, _ = service.fix_links()
    assert {f.path for f in fixes} == {item.source for item in offered}
    lines_reported = {(item.source, item.line) for item in offered}
    for file, old in before.items():
        new = file.read_bytes()
        if new == old:
            continue
        source = file.relative_to(copy).as_posix().removesuffix(".md")
        old_lines, new_lines = old.split(b"\n"), new.split(b"\n")
        assert len(old_lines) == len(new_lines)
        pairs = enumerate(zip(old_lines, new_lines, strict=True), start=1)
        changed = {n for n, (a, b) in pairs if a != b}
        assert {(source, n) for n in changed} <= lines_reported
    remaining = service.broken_links()
    assert len(remaining) == len(found) - len(offered)


# -- a move keeps links working ----------------------------------------------------------


def _moving_store(project: MemoryService, memories: Path) -> str:
    write_all(
        memories,
        {
            "decisions/deploy": "# Deploy\n\nRollback first: [runbook](../ops/runbook.md).\n",
            "notes/other": "# Other\n",
        },
    )
    deploy_id = project.citation_id("decisions/deploy")
    write(
        memories,
        "ops/runbook",
        "# Runbook\n\n"
        "Read [the decision](../decisions/deploy.md#why) and [[decisions/deploy|it]].\n"
        f"Also [[deploy]], {deploy_id} and [link:depends_on](decisions/deploy).\n\n"
        "## Related\n\n"
        "- decisions/deploy - why we deploy this way\n"
        "- [other](../notes/other.md)\n",
    )
    return deploy_id


def test_moving_a_memory_rewrites_only_the_links_it_would_break(
    project: MemoryService, memories: Path
) -> None:
    deploy_id = _moving_store(project, memories)
    result = project.move("decisions/deploy", "archive/old/deploy")
    assert result.links_updated == ("archive/old/deploy", "ops/runbook")
    assert (memories / "ops/runbook.md").read_text() == (
        "# Runbook\n\n"
        "Read [the decision](../archive/old/deploy.md#why) and [[archive/old/deploy|it]].\n"
        f"Also [[deploy]], {deploy_id} and [link:depends_on](archive/old/deploy).\n\n"
        "## Related\n\n"
        "- archive/old/deploy - why we deploy this way\n"
        "- [other](../notes/other.md)\n"
    )  # the unique name and the citation ID still find it: left as written
    assert (
        (memories / "archive/old/deploy.md")
        .read_text()
        .startswith("# Deploy\n\nRollback first: [runbook](../../ops/runbook.md).\n")
    )  # then the ## Metadata ID that keeps its citation ID
    assert broken(project) == []
    assert {t for t, _ in out_links(project, "ops/runbook")} == {
        "archive/old/deploy",
        "notes/other",
    }


def test_a_move_can_leave_other_memories_alone(
    project: MemoryService, memories: Path, run_cli: RunCli
) -> None:
    _moving_store(project, memories)
    before = (memories / "ops/runbook.md").read_bytes()
    result = run_cli(
        ["move", "decisions/deploy", "archive/deploy", "--no-update-links", "--json",
         "--dir", memories]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["links_updated"] == []
    assert (memories / "ops/runbook.md").read_bytes() == before
    assert "[runbook](../ops/runbook.md)" in (memories / "archive/deploy.md").read_text()
