"""Edits of memory files written by others change only what they mean to change.

Each test is a byte found moved, lost or added while editing real stores (QA round s23,
named in each docstring), shrunk to a minimal file of its shape.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GIT_ENV, git
from memory_enhancement.core.errors import MemoryToolError
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.verify.repo import Repository


def _serena(git_repo: Path, clock: object, files: dict[str, str | bytes]) -> MemoryService:
    store = git_repo / ".serena" / "memories"
    return _service(git_repo, store, clock, files)


def _service(
    git_repo: Path, store: Path, clock: object, files: dict[str, str | bytes]
) -> MemoryService:
    store.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        file = store / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return MemoryService(Store(store), Repository(git_repo), clock=clock)  # type: ignore[arg-type]


# -- the final newline ----------------------------------------------------------------


def test_adding_then_removing_a_citation_gives_a_file_without_final_newline_back(
    git_repo: Path, clock: object
) -> None:
    """Serena writes its memories without a final newline (24taro/TypoChecker's
    chrome_extension_architecture.md): the round trip used to leave one behind."""
    original = "# Note\n\nText without a final newline."
    service = _serena(git_repo, clock, {"note.md": original})
    file = git_repo / ".serena" / "memories" / "note.md"
    service.add_citation("note", "src/app.py:3")
    assert file.read_text().endswith("| 2026-01-31T12:00:00.000Z |")  # still no final newline
    service.remove_citation("note", "src/app.py:3")
    assert file.read_bytes() == original.encode()


def test_a_citation_added_after_a_last_table_row_without_newline_gets_a_row_of_its_own(
    git_repo: Path, clock: object
) -> None:
    """The row used to be glued onto the last one, and the edit refused."""
    table = (
        "# Note\n\n## Citations\n\n| File | Line | Snippet | Verified |\n"
        "|------|------|---------|----------|\n"
        "| src/app.py | 3 | `API_VERSION = 'v2'` | 2026-01-01T00:00:00.000Z |"
    )
    service = _serena(git_repo, clock, {"note.md": table})
    service.add_citation("note", "src/app.py:1")
    text = (git_repo / ".serena" / "memories" / "note.md").read_text()
    assert text == table + "\n| src/app.py | 1 | `import os` | 2026-01-31T12:00:00.000Z |"


def test_new_content_without_the_last_lines_keeps_a_file_without_final_newline(
    git_repo: Path, clock: object
) -> None:
    """Content after the managed sections, last in a file without a final newline: new
    content without it left the file ending with the Metadata section's blank line."""
    original = "Intro.\n\n## Metadata\n\n- **Tags**: a\n\n## Related\n\n- notes/near"
    service = _serena(git_repo, clock, {"note.md": original})
    service.update("note", content="New intro.")
    text = (git_repo / ".serena" / "memories" / "note.md").read_text()
    stamp = "- **Updated**: 2026-01-31T12:00:00.000Z"
    assert text == "New intro.\n## Metadata\n\n- **Tags**: a\n" + stamp


# -- content updates ------------------------------------------------------------------


def test_new_content_keeps_the_blank_line_after_the_frontmatter_and_the_end_of_the_file(
    git_repo: Path, clock: object
) -> None:
    """A Claude Code memory (4444J99/application-pipeline, .claude/memory/*.md) lost the
    blank line between its `---` and its text when its content was updated."""
    head = "---\nname: pivot\ndescription: why we pivoted\ntype: project\n---\n\n"
    service = _service(git_repo, git_repo / "mem", clock, {"pivot.md": head + "Old text.\n\n"})
    service.update("pivot", content="New text.")
    text = (git_repo / "mem" / "pivot.md").read_text()
    stamp = "updated_at: 2026-01-31T12:00:00.000Z\n"
    assert text == head.replace("type: project\n", "type: project\n" + stamp) + "New text.\n\n"


def test_content_given_with_crlf_line_endings_is_written_in_the_files_own(
    git_repo: Path, clock: object
) -> None:
    """An agent on Windows sends `update_memory(content="# T\\r\\n\\r\\nbody\\r\\n")`: in
    an LF file (En-Nam/ennam-agents-scaffold's decisions/v1.9-scope.md) the new lines kept
    their `\\r`s beside LF ones, and the content read back ended in a stray `\\r`; in a
    CRLF file (fizic37/Delcampe) they became `\\r\\r\\n`. The CLI's `--file` reads text
    with universal newlines; every caller now gets the same."""
    head = "---\nname: scope\n---\n\n"
    crlf = b"# Old\r\n\r\nText.\r\n"
    service = _service(
        git_repo, git_repo / "mem", clock, {"lf.md": head + "Old.\n", "crlf.md": crlf}
    )
    given = "# T\r\n\r\nbody\r\nlast\r"
    assert service.update("lf", content=given).memory.content.rstrip("\n") == "# T\n\nbody\nlast"
    service.update("crlf", content=given)
    service.add("notes/new", given)
    lf = (git_repo / "mem" / "lf.md").read_bytes()
    assert b"\r" not in lf and lf.endswith(b"---\n\n# T\n\nbody\nlast\n")
    windows = (git_repo / "mem" / "crlf.md").read_bytes()
    assert windows.startswith(b"# T\r\n\r\nbody\r\nlast\r\n") and b"\r\r" not in windows
    assert b"\r" not in (git_repo / "mem" / "notes" / "new.md").read_bytes()


def test_new_content_of_a_bodyless_frontmatter_file_without_final_newline_goes_below_it(
    git_repo: Path, clock: object
) -> None:
    """`---` as the last bytes of the file: the body used to be glued onto it (`---New`)
    and the edit refused with "frontmatter has no closing '---' line"."""
    service = _service(git_repo, git_repo / "mem", clock, {"t/only.md": "---\ntags: [a]\n---"})
    service.update("t/only", content="New body")
    text = (git_repo / "mem" / "t" / "only.md").read_text()
    assert text == "---\nupdated_at: 2026-01-31T12:00:00.000Z\ntags: [a]\n---\nNew body"


def test_a_content_update_leaves_an_authors_citations_section_in_its_place(
    git_repo: Path, clock: object
) -> None:
    """122sp7/xuanwu-app's repo/agents-md-authority-framework.md has a `## Citations`
    list of its own in mid-file: a content update moved it below the rest."""
    original = (
        "# Rules\n\nIntro.\n\n## Citations\n\n- AGENTS.md (the framework)\n\n"
        "## Template\n\nfeat: x\n"
    )
    service = _serena(git_repo, clock, {"rules.md": original})
    content = service.get("rules").memory.content
    service.update("rules", content=content + "\n\nAppended.")
    text = (git_repo / ".serena" / "memories" / "rules.md").read_text()
    assert text.startswith(original + "\nAppended.\n\n## Metadata\n")


# -- citations sections of the author's own --------------------------------------------


def test_removing_the_only_citation_from_an_authors_citations_list_removes_its_table(
    git_repo: Path, clock: object
) -> None:
    """122sp7/xuanwu-app's repo/skill-fact-context7.md: adding and removing a citation
    left an empty table header in the author's `## Citations` list."""
    original = "# Context7\n\nText.\n\n## Citations\n\n- Context7 MCP tool\n- its docs\n"
    service = _serena(git_repo, clock, {"ctx.md": original})
    service.add_citation("ctx", "src/app.py:3")
    service.remove_citation("ctx", "src/app.py:3")
    assert (git_repo / ".serena" / "memories" / "ctx.md").read_text() == original


@pytest.mark.parametrize(
    "original",
    [
        "# Note\n\nText.\n\n\n",  # blank lines at the end
        "# Note\n\nText.\n\t\n",  # a line of blanks at the end
        "# Note\n\nText.\n## Metadata\n\n- **Tags**: a\n",  # a heading right after text
    ],
)
def test_adding_then_removing_a_citation_gives_back_the_blank_lines_around_it(
    git_repo: Path, clock: object, original: str
) -> None:
    """The new section came with a blank line that its removal did not take back (before
    a heading), or its removal took the file's own blank lines at the end with it."""
    service = _serena(git_repo, clock, {"note.md": original})
    service.add_citation("note", "src/app.py:3")
    service.remove_citation("note", "src/app.py:3")
    assert (git_repo / ".serena" / "memories" / "note.md").read_text() == original


# -- frontmatter styles ------------------------------------------------------------------


def test_new_tags_keep_the_block_style_of_the_tags_they_replace(
    git_repo: Path, clock: object
) -> None:
    """Yeseh/cortex writes `tags:` as a block sequence; an update made it `[a, b]`."""
    original = (
        "---\ncreated_at: 2026-01-29T19:53:51.691Z\ntags:   # what it is about\n"
        "    - standard\n    - mcp\nsource: mcp\n---\nBody.\n"
    )
    service = _service(git_repo, git_repo / "mem", clock, {"s/wrap.md": original})
    service.update("s/wrap", tags=["standard", "server"])
    text = (git_repo / "mem" / "s" / "wrap.md").read_text()
    assert "tags:   # what it is about\n    - standard\n    - server\nsource: mcp\n" in text


def test_a_new_value_keeps_the_comment_and_the_key_spelling_of_its_line(
    git_repo: Path, clock: object
) -> None:
    """Found editing hand-written frontmatter: `tags: [a, b]  # topics` lost its
    comment and `'tags':` its quotes when the tags changed."""
    original = (
        "---\n'tags': [a, 'b #1']  # topics\nupdated_at: 2026-01-29T10:00:00Z  # last edit\n"
        "---\nBody.\n"
    )
    service = _service(git_repo, git_repo / "mem", clock, {"c/n.md": original})
    service.update("c/n", tags=["x", "y"])
    assert (git_repo / "mem" / "c" / "n.md").read_text() == (
        "---\n'tags': [x, y]  # topics\nupdated_at: 2026-01-31T12:00:00.000Z  # last edit\n"
        "---\nBody.\n"
    )


def test_new_tags_keep_the_lines_of_the_block_items_that_stay(
    git_repo: Path, clock: object
) -> None:
    """A new tag rewrote every item of a block sequence: the quotes of the ones that
    stayed and the comments after them were lost."""
    original = '---\ntags:\n  - a  # first\n  # why b\n  - "b"\nsource: mcp\n---\nBody.\n'
    service = _service(git_repo, git_repo / "mem", clock, {"c/n.md": original})
    service.update("c/n", tags=["a", "b", "c"])
    text = (git_repo / "mem" / "c" / "n.md").read_text()
    assert 'tags:\n  - a  # first\n  # why b\n  - "b"\n  - c\nsource: mcp\n' in text


def test_an_indented_comment_after_a_block_of_tags_survives_new_tags(
    git_repo: Path, clock: object
) -> None:
    """The comment line under the last item was taken for part of the value and
    rewritten away with it (only comments at the start of a line were kept)."""
    original = "---\ntags:\n  - a\n  # more to come\nsource: mcp\n---\nBody.\n"
    service = _service(git_repo, git_repo / "mem", clock, {"c/n.md": original})
    service.update("c/n", tags=["a", "b"])
    text = (git_repo / "mem" / "c" / "n.md").read_text()
    assert "tags:\n  - a\n  - b\n  # more to come\nsource: mcp\n" in text


def test_a_hash_line_of_a_snippet_block_stays_in_the_snippet_when_a_citation_is_added(
    git_repo: Path, clock: object
) -> None:
    """A `#` line at the end of a block-scalar snippet is code, not a comment after the
    citations: a new citation must not go between it and the rest of the snippet."""
    original = (
        "---\ncitations:\n  - path: src/app.py\n    line: 1\n    snippet: |\n"
        "      import os\n      # the settings\n---\nBody.\n"
    )
    service = _service(git_repo, git_repo / "mem", clock, {"c/n.md": original})
    service.add_citation("c/n", "src/app.py:3")
    text = (git_repo / "mem" / "c" / "n.md").read_text()
    assert "    snippet: |\n      import os\n      # the settings\n  - path: src/app.py\n" in text
    assert service.get("c/n").memory.meta.citations[0].snippet == "import os\n# the settings\n"


def test_a_new_value_keeps_the_carriage_return_of_its_line_in_a_file_of_mixed_endings(
    git_repo: Path, clock: object
) -> None:
    """A file with CRLF and LF lines keeps its `\r`s as they are (store decoding): the
    rewritten `tags:` line lost its own."""
    original = b"---\r\ntags: [a]  # topics\r\nsource: mcp\n---\nBody.\n"
    service = _service(git_repo, git_repo / "mem", clock, {"c/n.md": original})
    service.update("c/n", tags=["b"])
    data = (git_repo / "mem" / "c" / "n.md").read_bytes()
    assert data.startswith(b"---\r\n")
    assert b"\ntags: [b]  # topics\r\nsource: mcp\n---\nBody.\n" in data


def test_editing_a_frontmatter_written_as_one_flow_mapping_is_refused_without_blaming_it(
    git_repo: Path, clock: object
) -> None:
    """Yeseh/cortex's runbooks/user-test-mcp-server.md holds `{created_at: ..., tags: [...]}`:
    the refusal said the user's file was "malformed YAML"."""
    original = "---\n{created_at: 2026-02-14T21:05:49.211Z, tags: [qa], source: mcp}\n---\n# R\n"
    service = _service(git_repo, git_repo / "mem", clock, {"r/run.md": original})
    assert service.get("r/run").memory.meta.tags == ("qa",)
    with pytest.raises(MemoryToolError) as caught:
        service.update("r/run", tags=["other"])
    message = str(caught.value)
    assert "cannot edit this frontmatter in place" in message
    assert "not written one per line" in message
    assert "malformed" not in message
    assert (git_repo / "mem" / "r" / "run.md").read_text() == original


def _cli(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "MEMORY_ENHANCEMENT_HOME": str(home)}
    command = [sys.executable, "-m", "memory_enhancement", "--dir", "mem", *args]
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)


def test_verify_all_write_records_the_other_memories_when_one_cannot_be_edited(
    git_repo: Path, isolated_home: Path
) -> None:
    """In Yeseh/cortex, features/category-hierarchy-enforcement.md (a flow mapping)
    stopped `verify-all --write` midway: the files after it were never written."""
    flow = "---\n{tags: [a], citations: [src/app.py:3]}\n---\nFlow.\n"
    block = "---\ntags: [b]\ncitations:\n  - src/app.py:3\n---\nBlock.\n"
    files = {"a/first.md": flow, "b/second.md": block, "c/third.md": block}
    for name, text in files.items():
        (git_repo / "mem" / name).parent.mkdir(parents=True, exist_ok=True)
        (git_repo / "mem" / name).write_text(text)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "memories")
    done = _cli(git_repo, isolated_home, "verify-all", "--write")
    assert done.returncode == 1, done.stderr
    assert "warning: a/first: cannot edit this frontmatter in place" in done.stderr
    assert "1 memory file left unchanged" in done.stdout
    assert (git_repo / "mem" / "a" / "first.md").read_text() == flow
    for name in ("b/second.md", "c/third.md"):
        assert "last_verified: " in (git_repo / "mem" / name).read_text()


def test_a_memory_at_the_top_of_a_frontmatter_store_can_be_renamed_at_the_top(
    git_repo: Path, clock: object
) -> None:
    """Claude Code keeps its memories at the top of `.claude/memory/` (Aleslammer/
    deathwatch_foundryvtt): `move` asked for a category and a slug."""
    files = {
        "testing.md": "---\nname: testing\ntype: project\n---\n\nSee [[old_name]].\n",
        "old_name.md": "---\nname: old\ntype: feedback\n---\n\nBody.\n",
    }
    service = _service(git_repo, git_repo / ".claude" / "memory", clock, files)
    service.move("old_name", "new_name")
    folder = git_repo / ".claude" / "memory"
    assert not (folder / "old_name.md").exists()
    assert (folder / "testing.md").read_text().endswith("See [[new_name]].\n")
    service.add("lonely", "A new memory may be a bare name in this flat store too.")
    assert (folder / "lonely.md").is_file()


# -- links a memory already has ----------------------------------------------------------


def test_adding_a_link_a_memory_already_has_leaves_its_file_alone(
    git_repo: Path, clock: object
) -> None:
    """Found on kqc-real/arsnova.eu's Serena store: `update conventions/naming --link core`
    on a note whose `## Verwandte Memories:` list already held `mem:core` said changed and wrote a
    `## Metadata` section stamping the time, though no link was added."""
    serena = "# Naming\n\n## Verwandte Memories:\n\n- `mem:core`\n"
    front = "---\nname: api\nlinks:\n  - core\n---\n\nThe API.\n"
    service = _serena(
        git_repo, clock, {"naming.md": serena, "api.md": front, "core.md": "# Core\n"}
    )
    store = git_repo / ".serena" / "memories"
    for path, text in (("naming", serena), ("api", front)):
        assert service.update(path, links=["core"]).changed is False
        assert service.add_links(path, ["core"]).changed is False
        assert (store / f"{path}.md").read_text() == text
    assert service.update("naming", links=["core", "api"]).changed is True
    assert (store / "naming.md").read_text().count("mem:core") == 1


def test_a_link_asked_for_twice_at_once_is_added_once(git_repo: Path, clock: object) -> None:
    """`update conv --link x1 --link x1` wrote `- x1` twice under `## Links`."""
    service = _serena(git_repo, clock, {"conv.md": "# Conv\n\nText.\n", "x1.md": "# X1\n"})
    service.update("conv", links=["x1", "x1"])
    assert (git_repo / ".serena" / "memories" / "conv.md").read_text().count("- x1") == 1


def test_citations_the_tool_cannot_read_stay_as_written_when_others_are_added_or_removed(
    git_repo: Path, clock: object
) -> None:
    """phenobarbital/querysource's findings cite `lines: 9, 20-25` and a folder's `lines: directory
    contents` beside readable `lines: 1-3`: adding a citation dropped the two it could not
    read and respelled the third as `line:`/`end_line:` (QA round s27)."""
    original = (
        "---\nid: F006\ncitations:\n  - path: src/app.py\n    lines: 1-3\n    symbols: [main]\n"
        "  - path: src/app.py\n    lines: 9, 20-25\n"
        "  - path: src/\n    lines: directory contents\n---\n\n# F006\n"
    )
    service = _service(git_repo, git_repo / "mem", clock, {"f/F006.md": original})
    file = git_repo / "mem" / "f" / "F006.md"
    service.add_citation("f/F006", "src/app.py:3")
    added = "  - path: src/app.py\n    line: 3\n"
    assert file.read_text().startswith(original.split("---\n\n")[0] + added)
    service.remove_citation("f/F006", "src/app.py:3")
    assert file.read_text() == original
    service.remove_citation("f/F006", "src/app.py:1-3")
    assert file.read_text() == original.replace(
        "  - path: src/app.py\n    lines: 1-3\n    symbols: [main]\n", ""
    )


def test_a_citation_edit_that_would_drop_one_the_tool_cannot_read_is_refused(
    git_repo: Path, clock: object
) -> None:
    original = "---\ncitations: [src/app.py:1, {path: src/, lines: folder}]\n---\nBody.\n"
    service = _service(git_repo, git_repo / "mem", clock, {"c/n.md": original})
    with pytest.raises(MemoryToolError, match="cannot read"):
        service.add_citation("c/n", "src/app.py:3")
    assert (git_repo / "mem" / "c" / "n.md").read_text() == original


# -- symlinked memories ------------------------------------------------------------------


def test_an_edit_through_a_symlink_inside_the_store_writes_the_file_it_names(
    git_repo: Path, clock: object
) -> None:
    """A memory symlinked to another memory of the store (QA round s33: `update inlink
    --tag a`, inlink.md -> a CRLF memory of ACSshiga/nissei) is read through its link;
    the write used to rename a new file over the link, which left a copy beside the
    memory it named, that one unchanged."""
    original = b"# Shared\r\n\r\nText.\r\n"
    service = _serena(git_repo, clock, {"shared.md": original})
    store = git_repo / ".serena" / "memories"
    (store / "alias.md").symlink_to("shared.md")
    service.update("alias", tags=["a"])
    assert (store / "alias.md").is_symlink()
    assert os.readlink(store / "alias.md") == "shared.md"
    written = (store / "shared.md").read_bytes()
    assert written.startswith(original)  # the tag is added after the text, in CRLF
    assert written.endswith(b"- **Tags**: a\r\n")
    assert sorted(p.name for p in store.iterdir()) == ["alias.md", "shared.md"]


def test_a_file_changed_on_disk_during_an_edit_is_left_as_its_other_writer_wrote_it(
    git_repo: Path, clock: object
) -> None:
    """An editor (or Serena, which takes no lock) writing a memory between the tool's
    read and its rename lost its bytes to the tool's older copy; now the edit is refused
    and names the memory. The other writer here writes inside the edit's change."""
    from memory_enhancement.store.edits import rewrite

    service = _serena(git_repo, clock, {"note.md": b"# Note\r\n\r\nsrc/app.py:3\r\n"})
    file = git_repo / ".serena" / "memories" / "note.md"
    theirs = b"# Note\r\n\r\nsrc/app.py:3 and a line of theirs\r\n"

    def change(loaded: object) -> str:
        file.write_bytes(theirs)
        return "# Note\n\nsrc/app.py:4\n"

    with pytest.raises(MemoryToolError, match="note: changed on disk while being edited"):
        rewrite(service.store, "note", change, name="note.md", dry_run=False)
    assert file.read_bytes() == theirs
    assert sorted(p.name for p in file.parent.iterdir()) == ["note.md"]  # no temporary left


# -- line endings and the byte order mark ------------------------------------------------


def test_a_section_appended_to_an_old_mac_file_ends_its_lines_with_cr_as_the_file_does(
    git_repo: Path, clock: object
) -> None:
    """A file whose lines end with CR alone was read as one line: a citation added to it
    appended a `## Citations` table in LF lines after the CRs (left from session 33)."""
    original = b"# Old Mac\r\rThe version is in src/app.py.\r"
    service = _serena(git_repo, clock, {"mac.md": original})
    assert service.get("mac").memory.content == "# Old Mac\n\nThe version is in src/app.py."
    service.add_citation("mac", "src/app.py:3")
    data = (git_repo / ".serena" / "memories" / "mac.md").read_bytes()
    assert data.startswith(original) and b"\n" not in data
    assert b"\r| src/app.py | 3 | `API_VERSION = 'v2'` |" in data
    assert data.endswith(b" |\r")


def test_new_content_takes_the_ending_of_most_lines_of_a_file_of_mixed_endings(
    git_repo: Path, isolated_home: Path
) -> None:
    """`update --content` on a file mostly CRLF with one LF line wrote the new content's
    lines with LF; they end as most of the file's lines do, and a line the edit kept
    keeps its own (the frontmatter's LF `source:` line)."""
    original = b"\xef\xbb\xbf---\r\ntags: [a]\r\nsource: mcp\n---\r\n# Old\r\n\r\nText.\r\n"
    (git_repo / "mem").mkdir()
    (git_repo / "mem" / "n.md").write_bytes(original)
    done = _cli(git_repo, isolated_home, "update", "n", "--content", "# New\n\nOne.\nTwo.\n")
    assert done.returncode == 0, done.stderr
    data = (git_repo / "mem" / "n.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\r\nupdated_at: ")  # a new line: CRLF
    assert data.endswith(b"Z\r\ntags: [a]\r\nsource: mcp\n---\r\n# New\r\n\r\nOne.\r\nTwo.\r\n")
    assert data.count(b"\n") - data.count(b"\r\n") == 1  # only the line the file had


def test_new_content_of_a_crlf_file_with_a_bom_keeps_both(git_repo: Path, clock: object) -> None:
    """A file all CRLF stays all CRLF, its byte order mark kept, whatever ending the new
    content is given in."""
    service = _serena(git_repo, clock, {"w.md": b"\xef\xbb\xbf# Old\r\n\r\nText.\r\n"})
    service.update("w", content="# New\n\nOne.\r\nTwo.\r")
    data = (git_repo / ".serena" / "memories" / "w.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# New\r\n\r\nOne.\r\nTwo.\r\n")
    assert data.count(b"\n") == data.count(b"\r\n")


def test_a_graduated_copy_keeps_its_sources_line_ending_and_bom(
    git_repo: Path, isolated_home: Path, tmp_path: Path, clock: object
) -> None:
    """`graduate` wrote its copy with LF and no BOM; the copy keeps the source's bytes
    for what it does not change (its new frontmatter ends its lines as the source did)."""
    original = b"\xef\xbb\xbf# Windows\r\n\r\nKept as written.\r\n"
    project = _serena(git_repo, clock, {"win.md": original})
    target = MemoryService(
        Store(isolated_home / "memories", "global"),
        Repository(git_repo),
        index_path=tmp_path / "global.db",
        clock=clock,  # type: ignore[arg-type]
    )
    result = project.graduate("win", target)
    data = (isolated_home / "memories" / f"{result.path}.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\r\n")
    assert data.endswith(b"---\r\n# Windows\r\n\r\nKept as written.\r\n")
    assert data.count(b"\n") == data.count(b"\r\n")
    assert target.get(result.path).memory.content == "# Windows\n\nKept as written."
