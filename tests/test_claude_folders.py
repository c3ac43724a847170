"""Claude Code memory folders, written the way Claude Code writes them.

Claude Code loads `MEMORY.md` into every session and opens a memory only from its line
there, `- [Title](file.md) — hook`; each memory declares `name`, `description` and
`type`. A memory added here is declared and listed so; one removed or pruned loses its
line; `MEMORY.md` itself is never removed, moved, updated, cited, expired or pruned.
The folders are `tests/claude_folders/` (see its README: one copied from a real store,
one written by hand in the newer shape), copied per test; every byte a write does not
mean to change stays as it was.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Clock, RunCli
from memory_enhancement.core.errors import ChangedOnDiskError, InvalidInputError
from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.core.verdicts import VerifyOptions
from memory_enhancement.service import MemoryService
from memory_enhancement.store import claude_index
from memory_enhancement.store.disk import Store
from memory_enhancement.store.formats.base import MAX_FILE_BYTES
from memory_enhancement.verify.repo import Repository

if TYPE_CHECKING:
    from mcp_support import Agent
    from memory_enhancement.cli.app import App

FOLDERS = Path(__file__).parent / "claude_folders"
PROPERTY = settings(
    max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
DASH = "\u2014"


def copy(name: str, to: Path) -> Path:
    shutil.copytree(FOLDERS / name, to)
    return to


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def changed(before: dict[str, bytes], folder: Path) -> dict[str, bytes | None]:
    """The files of folder that differ from before: their new bytes, None if gone."""
    after = snapshot(folder)
    return {
        name: after.get(name)
        for name in sorted(set(before) | set(after))
        if before.get(name) != after.get(name)
    }


def service_for(folder: Path, git_repo: Path, clock: Clock) -> MemoryService:
    return MemoryService(Store(folder), Repository(git_repo), clock=clock)


@pytest.fixture
def pipeline(tmp_path: Path) -> Path:
    """The older shape: `type:` at the top, MEMORY.md grouped under a heading per type."""
    return copy("pipeline", tmp_path / "pipeline")


@pytest.fixture
def recent(tmp_path: Path) -> Path:
    """The newer shape: `type` under `metadata:`, MEMORY.md one list under a title."""
    return copy("recent", tmp_path / "recent")


# -- add -----------------------------------------------------------------------------------


def test_a_memory_added_to_an_index_grouped_by_type_goes_under_its_types_heading(
    pipeline: Path, git_repo: Path, clock: Clock
) -> None:
    before = snapshot(pipeline)
    service = service_for(pipeline, git_repo, clock)
    result = service.add(
        "feedback_run_tests",
        "Run the whole suite before a release.\n\n**Why:** a skipped test hid a bug.",
    )
    assert result.links_updated == ("MEMORY",)
    index = before["MEMORY.md"].decode()
    hygiene = next(line for line in index.splitlines() if "(feedback_base_not_output.md)" in line)
    new_line = (
        f"- [feedback_run_tests](feedback_run_tests.md) {DASH} Run the whole suite before a "
        "release."
    )
    assert changed(before, pipeline) == {
        "MEMORY.md": index.replace(hygiene, f"{hygiene}\n{new_line}").encode(),
        "feedback_run_tests.md": (
            b"---\nname: feedback_run_tests\ndescription: Run the whole suite before a release.\n"
            b"type: feedback\n---\n\nRun the whole suite before a release.\n\n"
            b"**Why:** a skipped test hid a bug.\n"
        ),
    }


@pytest.mark.parametrize(
    ("path", "kind", "after"),
    [
        ("user_timezone", "user", "(user_engineering_timeline.md)"),
        ("project_launch", "project", "(project_portfolio_blockers.md)"),
        ("reference_grafana", "reference", "(reference_openclaw_setup_2026-03-31.md)"),
        ("launch_checklist", "project", "(project_portfolio_blockers.md)"),
    ],
)
def test_a_new_memorys_type_comes_from_its_file_name_else_it_is_a_project(
    pipeline: Path, git_repo: Path, clock: Clock, path: str, kind: str, after: str
) -> None:
    """`## User` holds the user memory, not `## User Preferences`, which holds notes."""
    service_for(pipeline, git_repo, clock).add(path, "A fact.")
    assert f"\ntype: {kind}\n" in (pipeline / f"{path}.md").read_text(encoding="utf-8")
    lines = (pipeline / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    at = next(n for n, line in enumerate(lines) if after in line)
    assert lines[at + 1] == f"- [{path}]({path}.md) {DASH} A fact."


def test_a_memory_added_to_a_newer_folder_declares_its_type_under_metadata(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    """As the folder's own memories do: `metadata: ` (its blank too), `node_type: memory`;
    no time, no source, no empty tags. One list: the new line goes last."""
    before = snapshot(recent)
    service = service_for(recent, git_repo, clock)
    service.add(
        "rollout",
        "# Staged rollout\n\nShip to 5% first, then everyone after a day.",
        description="Roll out in two stages: 5%, then everyone",
        memory_type="Feedback",
        tags=["deploy"],
    )
    line = f"- [Staged rollout](rollout.md) {DASH} Roll out in two stages: 5%, then everyone\n"
    assert changed(before, recent) == {
        "MEMORY.md": before["MEMORY.md"] + line.encode(),
        "rollout.md": (
            b"---\nname: rollout\ndescription: 'Roll out in two stages: 5%, then everyone'\n"
            b"metadata: \n  node_type: memory\n  type: feedback\ntags: [deploy]\n---\n\n"
            b"# Staged rollout\n\nShip to 5% first, then everyone after a day.\n"
        ),
    }
    memory = service.get("rollout").memory
    assert (memory.meta.tags, memory.meta.extra["description"]) == (
        ("deploy",),
        "Roll out in two stages: 5%, then everyone",
    )


def test_the_index_keeps_its_newlines_its_blanks_and_its_missing_final_newline(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    index = recent / "MEMORY.md"
    text = index.read_text(encoding="utf-8").replace("# Memory Index\n", "# Memory Index  \n")
    index.write_bytes(text.rstrip("\n").replace("\n", "\r\n").encode())
    before = index.read_bytes()
    service_for(recent, git_repo, clock).add("feedback_tabs", "Indent with tabs.")
    assert index.read_bytes() == (
        before + f"\r\n- [feedback_tabs](feedback_tabs.md) {DASH} Indent with tabs.".encode()
    )


def test_an_index_that_already_lists_the_file_gets_no_second_line(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    index = recent / "MEMORY.md"
    index.write_text(
        index.read_text(encoding="utf-8") + "- [Old](feedback_tabs.md) - gone once\n",
        encoding="utf-8",
    )
    before = index.read_bytes()
    result = service_for(recent, git_repo, clock).add("feedback_tabs", "Indent with tabs.")
    assert index.read_bytes() == before
    assert result.links_updated == ()
    assert "MEMORY.md already lists feedback_tabs.md" in result.warnings[0]


def test_a_line_past_what_claude_code_loads_is_a_warning(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    """Claude Code reads the first 200 lines of MEMORY.md (25 KB) into a session."""
    index = recent / "MEMORY.md"
    notes = "".join(f"- note {n}\n" for n in range(200))
    text = index.read_text(encoding="utf-8")
    index.write_text(text.replace("# Memory Index\n", f"# Memory Index\n{notes}"), "utf-8")
    result = service_for(recent, git_repo, clock).add("project_late", "Late.")
    assert result.warnings == (
        "project_late.md is listed on line 206 of MEMORY.md, past what Claude Code loads into "
        "a session (its first 200 lines, 25 KB): it will not see it until the index is "
        "shortened",
    )


def test_a_memory_whose_index_line_cannot_be_written_is_not_kept(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    """An index a few bytes under the size limit takes no line: the new memory goes again,
    as Claude Code could not see it, and the index is as it was."""
    index = recent / "MEMORY.md"
    text = index.read_bytes()
    index.write_bytes(b"<!-- " + b"x" * (MAX_FILE_BYTES - len(text) - 20) + b" -->\n" + text)
    before = snapshot(recent)
    with pytest.raises(InvalidInputError, match="the limit is"):
        service_for(recent, git_repo, clock).add("feedback_tabs", "Indent with tabs.")
    assert changed(before, recent) == {}


def test_a_memory_added_where_memory_md_cannot_be_read_says_it_is_not_listed(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    """A MEMORY.md that is not UTF-8 (or a FIFO, or too large) makes the folder an ordinary
    store: the memory is written, with a warning, and the index is left as it was."""
    index = recent / "MEMORY.md"
    index.write_bytes(index.read_bytes() + b"caf\xe9\n")
    before = index.read_bytes()
    result = service_for(recent, git_repo, clock).add("feedback_tabs", "Indent with tabs.")
    (warning,) = result.warnings
    assert warning.startswith("MEMORY.md could not be read (MEMORY.md: not UTF-8 text")
    assert warning.endswith("): the memory is not listed in it")
    assert index.read_bytes() == before and (recent / "feedback_tabs.md").exists()
    index.unlink()  # no index at all: an ordinary store, nothing to say
    assert service_for(recent, git_repo, clock).add("feedback_more", "More.").warnings == ()


def test_a_memory_md_far_over_the_size_limit_is_named_with_its_own_size(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    """Its reader stops past the limit; the warning gave those bytes, not the file's size."""
    index = recent / "MEMORY.md"
    size = MAX_FILE_BYTES + 50_000
    index.write_bytes(index.read_bytes().ljust(size, b"\n"))
    result = service_for(recent, git_repo, clock).add("feedback_tabs", "Indent with tabs.")
    (warning,) = result.warnings
    assert f"MEMORY.md: file is too large ({size} bytes;" in warning


def test_a_type_claude_code_does_not_know_is_refused_and_nothing_written(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    before = snapshot(recent)
    with pytest.raises(InvalidInputError, match="user, feedback, project, reference"):
        service_for(recent, git_repo, clock).add("x", "Text.", memory_type="decision")
    assert changed(before, recent) == {}


def test_a_description_or_type_is_refused_in_a_store_that_is_no_claude_code_folder(
    service: MemoryService, store_dir: Path
) -> None:
    service.add("notes/plain", "A plain memory.")
    with pytest.raises(InvalidInputError, match="only into a Claude Code memory folder"):
        service.add("notes/more", "More.", description="More")
    assert not (store_dir / "notes" / "more.md").exists()


def test_a_serena_store_with_a_memory_md_hub_is_no_claude_code_folder(
    tmp_path: Path, git_repo: Path, clock: Clock
) -> None:
    """lane-core/psh keeps a `MEMORY.md` hub among its Serena memories."""
    folder = tmp_path / ".serena" / "memories"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Index\n\n- [status](status.md) - now\n", "utf-8")
    (folder / "status.md").write_text(
        "---\nname: status\ndescription: now\ntype: x\n---\n", "utf-8"
    )
    before = snapshot(folder)
    service_for(folder, git_repo, clock).add("next", "Next steps.")
    assert set(changed(before, folder)) == {"next.md"}


# -- remove, move, prune ----------------------------------------------------------------------


def test_removing_a_memory_drops_exactly_its_index_line(
    pipeline: Path, git_repo: Path, clock: Clock
) -> None:
    """A note that only mentions the file is no index line: it stays (`links` reports it)."""
    index = pipeline / "MEMORY.md"
    mention = "- Observations stay: see [data hygiene](feedback_data_hygiene.md).\n"
    text = index.read_text(encoding="utf-8").replace("## Feedback\n", f"{mention}\n## Feedback\n")
    index.write_text(text, encoding="utf-8")
    before = snapshot(pipeline)
    removed = service_for(pipeline, git_repo, clock).remove("feedback_data_hygiene")
    assert (removed.path, removed.links_updated) == ("feedback_data_hygiene", ("MEMORY",))
    line = next(x for x in text.splitlines(True) if x.startswith("- [Data hygiene]"))
    assert changed(before, pipeline) == {
        "MEMORY.md": text.replace(line, "").encode(),
        "feedback_data_hygiene.md": None,
    }


class _ClaudeCodeWrites(Store):
    """A store whose MEMORY.md Claude Code rewrites (it takes no lock) just before the
    tool's write of it: the moment between the tool's read and its rename."""

    theirs = b"# Memory index\n\n- [Theirs](theirs.md) - written by Claude Code\n"

    def replace(self, path: str, data: bytes, read: object) -> None:
        if path == "MEMORY":
            (self.root / "MEMORY.md").write_bytes(self.theirs)
        super().replace(path, data, read)  # type: ignore[arg-type]


@pytest.mark.parametrize("verb", ["add", "remove"])
def test_a_memory_md_claude_code_changed_since_the_tool_read_it_is_left_as_it_wrote_it(
    recent: Path, git_repo: Path, clock: Clock, verb: str
) -> None:
    """Neither index write passed what it had read: a MEMORY.md Claude Code wrote between
    the tool's read and its write lost its lines to the tool's copy. The write is refused,
    naming the file; an added memory goes again, a removed one is said still listed."""
    service = MemoryService(_ClaudeCodeWrites(recent), Repository(git_repo), clock=clock)
    before = snapshot(recent)
    with pytest.raises(ChangedOnDiskError) as caught:
        if verb == "add":
            service.add("feedback_tabs", "Indent with tabs.")
        else:
            service.remove("feedback_no_force_push")
    message = str(caught.value)
    assert message.startswith("MEMORY.md changed on disk while ")
    assert (recent / "MEMORY.md").read_bytes() == _ClaudeCodeWrites.theirs
    gone = {} if verb == "add" else {"feedback_no_force_push.md": None}
    assert changed(before, recent) == {"MEMORY.md": _ClaudeCodeWrites.theirs, **gone}
    if verb == "remove":
        assert message.endswith("feedback_no_force_push removed, still listed there")


def test_removing_the_last_line_of_an_index_without_a_final_newline_keeps_it_without(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    index = recent / "MEMORY.md"
    index.write_bytes(index.read_bytes().rstrip(b"\n"))
    service_for(recent, git_repo, clock).remove("reference_dashboards")
    assert index.read_bytes().endswith(b"freeze the Friday before")


def test_moving_a_memory_rewrites_the_target_of_its_index_line_alone(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    before = snapshot(recent)
    service = service_for(recent, git_repo, clock)
    service.move("reference_dashboards", "reference_grafana")
    after = changed(before, recent)
    assert after["MEMORY.md"] == before["MEMORY.md"].replace(
        b"(reference_dashboards.md)", b"(reference_grafana.md)"
    )
    assert after["reference_dashboards.md"] is None
    declared = f"\ncitation_id: {service.citation_id('reference_grafana').strip('[]')}"
    assert after["reference_grafana.md"] == before["reference_dashboards.md"].replace(
        b"\n---\n\nLatency", f"{declared}\n---\n\nLatency".encode()
    )  # its citation ID goes with it


def test_memory_md_is_never_removed_moved_expired_or_pruned(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    service = service_for(recent, git_repo, clock)
    with pytest.raises(InvalidInputError, match="index of this Claude Code memory folder"):
        service.remove("MEMORY")
    with pytest.raises(InvalidInputError, match="not moved as a memory"):
        service.move("MEMORY", "index")
    clock.advance(days=400)
    chosen = service.apply_expiry_policy(after_days=90, grace_days=0)
    assert "MEMORY" not in [path for path, _ in chosen] and chosen
    index = recent / "MEMORY.md"  # an expiry a user wrote by hand (update refuses the index)
    yesterday = format_timestamp(clock() - timedelta(days=1))
    index.write_text(f"---\nexpires_at: {yesterday}\n---\n{index.read_text('utf-8')}", "utf-8")
    assert service.get("MEMORY", include_expired=True).memory.meta.expires_at is not None
    pruned = [s.path for s in service.prune().memories]
    assert "MEMORY" not in pruned and (recent / "MEMORY.md").is_file()
    assert sorted(pruned) == [
        "feedback_no_force_push",
        "project_release_train",
        "reference_dashboards",
    ]
    assert "](" not in (recent / "MEMORY.md").read_text(encoding="utf-8")  # no line left


def test_memory_md_is_never_updated_cited_linked_or_graduated_as_a_memory(
    recent: Path, git_repo: Path, clock: Clock, tmp_path: Path
) -> None:
    """Each appended a section (`## Citations`, `## Links`, frontmatter) to the index Claude
    Code loads into every session; remove and move already refused it."""
    before = snapshot(recent)
    service = service_for(recent, git_repo, clock)
    elsewhere = service_for(tmp_path / "global", git_repo, clock)
    for write in (
        lambda: service.update("MEMORY", content="# Index\n"),
        lambda: service.update("MEMORY", tags=["index"]),
        lambda: service.add_citation("MEMORY", "src/app.py:3"),
        lambda: service.replace_citation("MEMORY", "src/app.py:3", "src/app.py:5"),
        lambda: service.add_links("MEMORY", ["project_release_train"]),
        lambda: service.graduate("MEMORY", elsewhere),
    ):
        with pytest.raises(InvalidInputError, match=r"^MEMORY\.md is the index of this Claude"):
            write()
    assert changed(before, recent) == {}
    assert not (tmp_path / "global").exists()


def test_verify_write_records_nothing_in_memory_md(git_repo: Path, clock: Clock) -> None:
    """`--write` stamps confidence and Last Verified in each memory verified; MEMORY.md,
    verified for its mentions, got a `## Metadata` section at its end, in the index Claude
    Code loads into every session."""
    folder = copy("recent", git_repo / ".claude" / "memory")
    index = folder / "MEMORY.md"
    index.write_text(index.read_text("utf-8") + "\nThe version is at `src/app.py:3`.\n", "utf-8")
    with (folder / "project_release_train.md").open("a", encoding="utf-8") as notes:
        notes.write("\nThe version is at `src/app.py:3`.\n")
    subprocess.run(["git", "add", "-A"], cwd=git_repo, check=True)
    subprocess.run(["git", "commit", "-qm", "memories"], cwd=git_repo, check=True)
    before = index.read_bytes()
    run = service_for(folder, git_repo, clock).verify_all(options=VerifyOptions(write=True))
    assert sorted(r.path for r in run.results) == ["MEMORY", "project_release_train"]
    assert index.read_bytes() == before
    written = (folder / "project_release_train.md").read_text(encoding="utf-8")
    assert "confidence:" in written and "last_verified:" in written


# -- update --------------------------------------------------------------------------------


def test_an_update_stamps_modified_under_metadata_as_claude_code_does(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    file = recent / "reference_dashboards.md"
    text = file.read_text(encoding="utf-8")
    service = service_for(recent, git_repo, clock)
    service.update("reference_dashboards", tags=["ops"])
    stamped = text.replace(
        "  originSessionId: 7a3e9c41-5b2d-4f08-8e6a-c19d0b4a7e22\n",
        "  originSessionId: 7a3e9c41-5b2d-4f08-8e6a-c19d0b4a7e22\n"
        "  modified: 2026-01-31T12:00:00.000Z\n",
    ).replace("---\n\nLatency", "tags: [ops]\n---\n\nLatency")
    assert file.read_text(encoding="utf-8") == stamped
    assert service.get("reference_dashboards").memory.meta.updated_at == clock()


def test_a_link_added_to_a_memory_with_a_metadata_mapping_goes_below_its_modified_stamp(
    recent: Path, git_repo: Path, clock: Clock
) -> None:
    # The stamp goes last into `metadata:` and `links:` opens at the end of the
    # frontmatter: the same line. Written links first, `modified:` landed under `links:`
    # and every `update --link` on such a memory was refused (0WAQ/gsim-ops, all 35).
    file = recent / "reference_dashboards.md"
    text = file.read_text(encoding="utf-8")
    service = service_for(recent, git_repo, clock)
    service.update("reference_dashboards", links=["feedback_no_force_push"])
    linked = text.replace(
        "  originSessionId: 7a3e9c41-5b2d-4f08-8e6a-c19d0b4a7e22\n",
        "  originSessionId: 7a3e9c41-5b2d-4f08-8e6a-c19d0b4a7e22\n"
        "  modified: 2026-01-31T12:00:00.000Z\n"
        "links:\n"
        "  - feedback_no_force_push\n",
    )
    assert file.read_text(encoding="utf-8") == linked
    memory = service.get("reference_dashboards").memory
    assert [link.target for link in memory.links or ()] == ["feedback_no_force_push"]
    assert memory.meta.updated_at == clock()


# -- the front ends -------------------------------------------------------------------------


def test_the_cli_adds_and_removes_through_the_index_in_a_real_process(
    recent: Path, git_repo: Path
) -> None:
    base = [sys.executable, "-m", "memory_enhancement", "--dir", str(recent)]
    run = {"capture_output": True, "text": True, "cwd": git_repo, "env": os.environ}
    added = subprocess.run(
        [*base, "add", "user_editor", "-c", "Uses vim.", "-d", "Edits in vim", "--type", "user"],
        **run,
    )
    assert (added.returncode, added.stderr) == (0, "")
    assert added.stdout.endswith("\n  updated links in MEMORY\n"), added.stdout
    assert f"- [user_editor](user_editor.md) {DASH} Edits in vim\n" in (
        recent / "MEMORY.md"
    ).read_text(encoding="utf-8")
    removed = subprocess.run([*base, "remove", "user_editor"], **run)
    assert removed.stdout == "removed user_editor\n  updated links in MEMORY\n"
    assert "user_editor" not in (recent / "MEMORY.md").read_text(encoding="utf-8")
    refused = subprocess.run([*base, "remove", "MEMORY"], **run)
    assert refused.returncode == 2 and "index of this Claude Code memory folder" in refused.stderr


def test_the_cli_refuses_to_update_or_cite_memory_md_in_a_real_process(
    recent: Path, git_repo: Path
) -> None:
    before = snapshot(recent)
    base = [sys.executable, "-m", "memory_enhancement", "--dir", str(recent)]
    run = {"capture_output": True, "text": True, "cwd": git_repo, "env": os.environ}
    edits = (["update", "MEMORY", "-c", "# Index"], ["citation", "add", "MEMORY", "src/app.py:3"])
    for args in edits:
        refused = subprocess.run([*base, *args], **run)
        assert (refused.returncode, refused.stdout) == (2, ""), args
        assert "MEMORY.md is the index of this Claude Code memory folder" in refused.stderr, args
        assert "it is not edited as a memory" in refused.stderr, args
    assert changed(before, recent) == {}


def test_the_add_help_says_what_a_claude_code_folder_gets(run_cli: RunCli) -> None:
    text = run_cli(["add", "--help"]).stdout
    for words in ("--description", "--type", "MEMORY.md", "feedback_x, else project"):
        assert words in " ".join(text.split()), words


@pytest.fixture
def app(isolated_home: Path, git_repo: Path) -> App:
    """The server's default store: a Claude Code folder committed as `.claude/memory`."""
    from memory_enhancement.cli.app import App

    copy("recent", git_repo / ".claude" / "memory")
    built = App(env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(isolated_home)}, cwd=git_repo)
    built.options["dir"] = str(git_repo / ".claude" / "memory")
    return built


@pytest.mark.anyio
async def test_an_agent_adds_and_removes_a_claude_code_memory_over_mcp(
    agent: Agent, git_repo: Path
) -> None:
    folder = git_repo / ".claude" / "memory"
    data = await agent.call(
        "add_memory",
        path="feedback_small_prs",
        content="Keep pull requests under 400 lines.",
        description="Small pull requests",
        memory_type="feedback",
    )
    assert (data["links_updated"], data["extra"]["metadata"]["type"]) == (["MEMORY"], "feedback")
    index = (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert index.endswith(
        f"- [feedback_small_prs](feedback_small_prs.md) {DASH} Small pull requests\n"
    )
    removed = await agent.call("remove_memory", path="feedback_small_prs")
    assert removed == {
        "path": "feedback_small_prs",
        "removed": True,
        "links_updated": ["MEMORY"],
        "linked_from": [],
    }
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == index.replace(
        f"- [feedback_small_prs](feedback_small_prs.md) {DASH} Small pull requests\n", ""
    )
    message = await agent.fail("add_memory", path="x", content="X.", memory_type="decision")
    assert "memory_type" in message
    assert "not removed as a memory" in await agent.fail("remove_memory", path="MEMORY")


@pytest.mark.anyio
async def test_an_agent_cannot_update_or_cite_memory_md_over_mcp(
    agent: Agent, git_repo: Path
) -> None:
    folder = git_repo / ".claude" / "memory"
    before = snapshot(folder)
    for tool, arguments in (
        ("update_memory", {"content": "# Index"}),
        ("update_memory", {"links": ["project_release_train"]}),
        ("add_citation", {"citation": "src/app.py:3"}),
    ):
        message = await agent.fail(tool, path="MEMORY", **arguments)
        assert message == (
            "MEMORY.md is the index of this Claude Code memory folder (Claude Code loads it "
            "into every session); it is not edited as a memory"
        ), tool
    assert changed(before, folder) == {}


# -- where a line goes, and how it is written --------------------------------------------


def claude_memory(name: str, kind: str) -> str:
    return f"---\nname: {name}\ndescription: about {name}\ntype: {kind}\n---\n\n{name}.\n"


TOPICAL = (
    "# Project Memory\n\n## Workspace\n- `src/` holds the code\n\n"
    "## Working rules & preferences\n- [No fallbacks](feedback_a.md) - let errors surface\n\n"
    "## Player metadata\n- [Players](project_b.md) - ids are canonical\n\n"
    "## Engine\n- [Kernel](project_c.md) - shared deduction\n"
)


@pytest.mark.parametrize(
    ("path", "after"),
    [
        ("feedback_new", "(feedback_a.md)"),  # the only heading that holds feedback alone
        ("project_new", "(project_c.md)"),  # two hold projects alone: at the end
        ("user_new", "(project_c.md)"),  # none names users or holds them: at the end
    ],
)
def test_an_index_grouped_by_topic_takes_a_line_where_its_type_alone_is_kept(
    tmp_path: Path, git_repo: Path, clock: Clock, path: str, after: str
) -> None:
    """As AnotherSava/bga-assistant keeps its feedback under `## User Preferences`; a
    document title naming `Project` is no heading of projects. Its own hyphen and bullet."""
    folder = tmp_path / ".claude" / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(TOPICAL, encoding="utf-8")
    for name, kind in (
        ("feedback_a", "feedback"),
        ("project_b", "project"),
        ("project_c", "project"),
    ):
        (folder / f"{name}.md").write_text(claude_memory(name, kind), encoding="utf-8")
    service_for(folder, git_repo, clock).add(path, "A fact.")
    lines = (folder / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    at = next(n for n, line in enumerate(lines) if after in line)
    assert lines[at + 1] == f"- [{path}]({path}.md) - A fact."
    assert len(lines) == len(TOPICAL.splitlines()) + 1


def test_an_empty_heading_named_for_the_type_takes_its_first_line(
    tmp_path: Path, git_repo: Path, clock: Clock
) -> None:
    folder = tmp_path / "memory"
    folder.mkdir()
    text = "# Memory\n\n## Feedback\n\n## Projects\n* [B](project_b.md) \u2013 b\n"
    (folder / "MEMORY.md").write_text(text, encoding="utf-8")
    (folder / "project_b.md").write_text(claude_memory("project_b", "project"), "utf-8")
    service_for(folder, git_repo, clock).add("feedback_x", "X.")
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == text.replace(
        "## Feedback\n", "## Feedback\n* [feedback_x](feedback_x.md) \u2013 X.\n"
    )


def test_a_claude_folder_with_no_memory_yet_writes_as_claude_code_writes_now(
    tmp_path: Path, git_repo: Path, clock: Clock
) -> None:
    """A `MEMORY.md` in a `.claude` folder is Claude Code's, listing something or not."""
    folder = tmp_path / ".claude" / "projects" / "-home-me-app" / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Memory Index\n", encoding="utf-8")
    service_for(folder, git_repo, clock).add(
        "reference_ci", "# CI runners\n\nThe runners are in `ci/runners.tf`.\n"
    )
    assert (folder / "reference_ci.md").read_text(encoding="utf-8") == (
        "---\nname: reference_ci\ndescription: The runners are in `ci/runners.tf`.\n"
        "metadata:\n  node_type: memory\n  type: reference\n---\n\n# CI runners\n\n"
        "The runners are in `ci/runners.tf`.\n"
    )
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == (
        f"# Memory Index\n- [CI runners](reference_ci.md) {DASH} The runners are in "
        "`ci/runners.tf`.\n"
    )


_LINE = st.sampled_from(
    [
        "# Memory",
        "## Feedback",
        "## Projects",
        "",
        "   ",
        "- a note",
        "- [Old](old.md) \u2014 hook",
        "  - nested under it",
        "```",
        "- [In a fence](fenced.md) - not an item",
        "\tindented",
        "trailing blanks  ",
    ]
)


@PROPERTY
@given(
    lines=st.lists(_LINE, max_size=12),
    final=st.booleans(),
    kind=st.sampled_from(["user", "feedback", "project", "reference"]),
)
def test_a_line_added_then_dropped_gives_the_index_back_byte_for_byte(
    lines: list[str], final: bool, kind: str
) -> None:
    text = "\n".join(lines) + ("\n" if final and lines else "")
    index = claude_index.read(text)
    at = claude_index.place(index, kind, {"old.md": "project"})
    line = claude_index.entry_line(index, at, "New [one]", "new.md", "a  hook\nhere")
    added = claude_index.insert(text, at, line)
    assert [e.file for e in claude_index.read(added).entries].count("new.md") == 1
    assert claude_index.drop(added, "new.md") == text
