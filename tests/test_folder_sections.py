"""A partial folder of several, told apart by the folder its section's heading names.

Butterfingrz/cutlass's `codebase_structure` memory lists `**arch/**`, `**gemm/**`,
`**thread/**` under `## CUTLASS 核心库 (`include/cutlass/`)` and `**arch/**`, `**util/**`
under `## CuTe 库 (`include/cute/`)`: 21 of its 43 folder mentions were `ambiguous`,
each naming the one folder under its heading's among 2 to 13. Real git repositories in
temporary folders; the memory is written here (a few lines after cutlass's layout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_enhancement.core.folder_mentions import FOLDER
from verify_support import GitRepo, fixed_service, note


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    for name in [
        "include/cutlass/arch/mma.h", "include/cute/arch/copy.hpp",
        "include/cutlass/thread/simt.h", "include/cutlass/gemm/thread/mma.h",
        "test/unit/core/a.cu", "test/unit/cute/core/b.cu", "test/unit/util/c.cu",
        "tools/util/d.h",
    ]:  # fmt: skip
        repo.write_lines(name, [f"// {name}", "int x = 1;"])
    repo.commit("code")
    return repo


def verdicts(repo: GitRepo) -> list[tuple[int, str, str, str | None]]:
    """(memory line, mention, verdict, folder) of notes.md's folder mentions."""
    result = fixed_service(repo).verify("notes").results[0]
    return [
        (c.mention.line, c.mention.text, c.status.value, c.current_path)
        for c in result.mentions
        if c.mention is not None and c.mention.form == FOLDER
    ]


def test_a_partial_folder_is_the_one_under_the_folder_its_sections_heading_names(
    repo: GitRepo,
) -> None:
    """The nearest heading enclosing the mention that names a folder decides: the folder
    right under it (`thread/`, though include/cutlass/gemm/thread/ is under it too), else
    the one folder anywhere under it (`util/`: test/unit/util/). A heading inside a fenced
    block is no heading (nor its folder a mention); two folders under it (`core/`) leave
    the mention ambiguous."""
    note(
        repo,
        "## Core library (`include/cutlass/`)",
        "",
        "### Modules",
        "- **arch/** - architecture features",
        "- **thread/** - SIMT code",
        "",
        "## CuTe (`include/cute/`)",
        "- **arch/** - PTX wrappers",
        "",
        "## Tests (`test/`)",
        "```bash",
        "# build the tools (`tools/`)",
        "```",
        "- **util/** - helpers",
        "- **core/** - core tests",
    )
    repo.commit("memory")
    assert verdicts(repo) == [
        (3, "include/cutlass/", "valid", "include/cutlass"),
        (6, "arch/", "valid", "include/cutlass/arch"),
        (7, "thread/", "valid", "include/cutlass/thread"),
        (9, "include/cute/", "valid", "include/cute"),
        (10, "arch/", "valid", "include/cute/arch"),
        (12, "test/", "valid", "test"),
        (16, "util/", "valid", "test/unit/util"),
        (17, "core/", "ambiguous", None),
    ]
    result = fixed_service(repo).verify("notes").results[0]
    reasons = {c.mention.line: c.reason for c in result.mentions if c.mention is not None}
    assert reasons[6].startswith("arch/ read as include/cutlass/arch/, under `include/cutlass/`")
    assert "heading (line 3)" in reasons[6]


def test_an_earlier_section_or_a_heading_naming_no_folder_tells_nothing(repo: GitRepo) -> None:
    """A section before the mention's own, at its level, is another section; a heading
    below the mention, a later one."""
    note(
        repo,
        "## Core library (`include/cutlass/`)",
        "Its modules are below.",
        "## Other notes",
        "- **arch/** - architecture features",
        "## CuTe (`include/cute/`)",
    )
    repo.commit("memory")
    assert [v[1:3] for v in verdicts(repo) if v[1] == "arch/"] == [("arch/", "ambiguous")]


def test_a_partial_folder_is_the_one_under_the_folder_its_parent_list_item_names(
    repo: GitRepo,
) -> None:
    """Casecommons/pg_search lists `features/`, `configuration/` and `multisearch/` as the
    items under `- `lib/pg_search/``; each also names a folder of spec/lib/pg_search/, and
    all three were ambiguous. The nearest enclosing item naming a folder decides (an item
    naming none, `Tests`, hands over to the one it is nested in), before the section's
    heading; a line of text at the margin ends the list, so an item after it has no parent."""
    note(
        repo,
        "## Layout (`include/cute/`)",
        "- `include/cutlass/` - core",
        "  - `arch/` - architecture features",
        "",
        "  - `thread/` - SIMT code",
        "    wrapped description",
        "- `test/`",
        "  - Tests",
        "    1. `util/` - helpers",
        "- `include/cute/`",
        "\t- `arch/` - PTX wrappers",
        "",
        "Loose text at the margin.",
        "  - `util/` - not under the tests any more",
    )
    repo.commit("memory")
    assert verdicts(repo) == [
        (3, "include/cute/", "valid", "include/cute"),
        (4, "include/cutlass/", "valid", "include/cutlass"),
        (5, "arch/", "valid", "include/cutlass/arch"),
        (7, "thread/", "valid", "include/cutlass/thread"),
        (9, "test/", "valid", "test"),
        (11, "util/", "valid", "test/unit/util"),
        (12, "include/cute/", "valid", "include/cute"),
        (13, "arch/", "valid", "include/cute/arch"),
        (16, "util/", "ambiguous", None),
    ]
    result = fixed_service(repo).verify("notes").results[0]
    reasons = {c.mention.line: c.reason for c in result.mentions if c.mention is not None}
    assert reasons[5].startswith("arch/ read as include/cutlass/arch/, under `include/cutlass/`")
    assert "list item it is nested in (line 4)" in reasons[5]


def test_a_partial_folder_is_the_one_beside_a_file_its_line_names(tmp_path: Path) -> None:
    """Found on 2sem/WhoCallMe (QA round 38): "Strings in
    `Resources/Strings/Base.lproj/Localizable.strings` (English) and `ko.lproj/` (Korean)"
    left `ko.lproj/` ambiguous among the Strings, Storyboards and infoPlist folders of that
    name, though the file named beside it is in Strings/. The nearest file named around a
    partial folder decides, when exactly one candidate is beside it (their parent folder
    holds it); a line naming none leaves the mention ambiguous."""
    repo = GitRepo(tmp_path / "project")
    for name in [
        "Projects/App/Resources/Strings/Base.lproj/Localizable.strings",
        "Projects/App/Resources/Strings/ko.lproj/Localizable.strings",
        "Projects/App/Resources/Storyboards/ko.lproj/Main.strings",
        "Projects/App/Resources/infoPlist/ko.lproj/InfoPlist.strings",
    ]:
        repo.write_lines(name, [f"/* {name} */"])
    repo.commit("code")
    note(
        repo,
        "## Localisation",
        "- Strings in `Resources/Strings/Base.lproj/Localizable.strings` (English) and"
        " `ko.lproj/` (Korean)",
        "- Storyboard localised via `Storyboards/ko.lproj/Main.strings`",
        "",
        "## Other",
        "",
        "",
        "",
        "",
        "",
        "",
        "",
        "",
        "",
        "- Korean strings live in `ko.lproj/` too",
    )
    repo.commit("memory")
    assert verdicts(repo) == [
        (4, "ko.lproj/", "valid", "Projects/App/Resources/Strings/ko.lproj"),
        (17, "ko.lproj/", "ambiguous", None),
    ]


def test_a_file_named_on_another_line_does_not_tell_a_partial_folder(tmp_path: Path) -> None:
    """NEXTAltair/LoRAIro lists a deleted `tests/gui/` with its `controllers/` nested under
    it, and a file of tests/unit/gui/widgets/ three lines on: the folder it meant is gone,
    and the file does not make it tests/unit/gui/controllers/."""
    repo = GitRepo(tmp_path / "project")
    for name in ["src/gui/controllers/a.py", "tests/unit/gui/controllers/test_a.py"]:
        repo.write_lines(name, ["x = 1"])
    repo.write_lines("tests/unit/gui/widgets/test_w.py", ["x = 1"])
    repo.commit("code")
    note(
        repo,
        "Deleted:",
        "- `tests/gui/` - the old layout",
        "  - `controllers/` (empty)",
        "- `tests/unit/gui/widgets/test_w.py` - a duplicate",
    )
    repo.commit("memory")
    assert verdicts(repo) == [
        (4, "tests/gui/", "skipped", None),
        (5, "controllers/", "ambiguous", None),
    ]
