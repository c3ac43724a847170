"""Bad files (issue 2 §7): reported with the file and the reason, skipped, never rewritten."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import RunCli
from memory_enhancement.core.errors import InvalidPathError, UnreadableMemoryError
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.formats.base import MAX_FILE_BYTES
from memory_enhancement.verify.repo import Repository

BAD_FILES: dict[str, tuple[bytes, str]] = {
    "bad/yaml": (b"---\ntags: [unclosed\nsource: cli\n---\nBody\n", "malformed YAML"),
    "bad/not-a-mapping": (b"---\n- just\n- a list\n---\nBody\n", "must be a mapping"),
    "bad/latin1": ("# Caf\u00e9\n\nNot UTF-8.\n".encode("latin-1"), "not UTF-8"),
    "bad/binary": (b"# Title\n\x00\x01\x02 binary\n", "binary"),
    "bad/huge": (b"# Huge\n\n" + b"x" * (MAX_FILE_BYTES + 1), "too large"),
}


@pytest.fixture
def store_with_bad_files(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    (root / "bad").mkdir(parents=True)
    (root / "good").mkdir()
    (root / "good" / "fine.md").write_text(
        "---\ntags: [ok]\nsource: cli\n---\nA fine memory.\n", encoding="utf-8"
    )
    for path, (data, _) in BAD_FILES.items():
        (root / f"{path}.md").write_bytes(data)
    return root


@pytest.fixture
def escaping_link(store_with_bad_files: Path, tmp_path: Path) -> Path:
    """A memory file that is a symlink to a file outside the store."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.md"
    secret.write_text("---\ntags: [secret]\n---\nOutside the store.\n", encoding="utf-8")
    (store_with_bad_files / "bad" / "escape.md").symlink_to(secret)
    return secret


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


@pytest.mark.parametrize("path", sorted(BAD_FILES))
def test_reading_a_bad_file_says_which_file_and_why(store_with_bad_files: Path, path: str) -> None:
    with pytest.raises(UnreadableMemoryError) as info:
        Store(store_with_bad_files).read(path)
    assert path in str(info.value)
    assert BAD_FILES[path][1] in str(info.value)


def test_a_memory_symlinked_out_of_the_store_is_refused(
    store_with_bad_files: Path, escaping_link: Path
) -> None:
    with pytest.raises(InvalidPathError, match="outside the store"):
        Store(store_with_bad_files).read("bad/escape")


HEADER_ONLY = ("bad/not-a-mapping", "bad/yaml")  # the frontmatter alone does not parse


def test_listing_skips_bad_files_with_a_warning_each_and_exits_1(
    store_with_bad_files: Path, escaping_link: Path, run_cli: RunCli
) -> None:
    """A file whose header alone does not parse is listed (its text is read) and warned
    about all the same."""
    result = run_cli(["list", "--dir", store_with_bad_files])
    assert result.exit_code == 1  # issue 14: the exit code says something was skipped
    listed = [re.sub(r"^\[mem:\w+\]  ", "", line).split() for line in result.stdout.splitlines()]
    assert listed == [
        ["bad/not-a-mapping", "not-a-mapping"],
        ["bad/yaml", "yaml"],
        ["good/fine", "fine", "#ok"],
    ]
    warnings = result.stderr.splitlines()
    assert len(warnings) == len(BAD_FILES) + 1
    assert all(line.startswith("warning: ") for line in warnings)
    for path, (_, reason) in BAD_FILES.items():
        assert any(path in line and reason in line for line in warnings), path
    assert any("bad/escape" in line and "outside the store" in line for line in warnings)


def test_a_memory_far_over_the_size_limit_is_reported_with_its_own_size(
    tmp_path: Path,
) -> None:
    """A 2.2 MB memory was reported as 2097153 bytes, the bytes the reader stopped at."""
    root = tmp_path / "store"
    root.mkdir()
    size = MAX_FILE_BYTES + 120_000
    (root / "huge.md").write_bytes(b"# Huge\n" + b"x" * (size - 7))
    with pytest.raises(UnreadableMemoryError, match=f"too large \\({size} bytes;"):
        Store(root).read("huge")


def test_listing_as_json_skips_bad_files_too(
    store_with_bad_files: Path, escaping_link: Path, run_cli: RunCli
) -> None:
    import json

    result = run_cli(["list", "--json", "--dir", store_with_bad_files])
    assert result.exit_code == 1
    assert [m["path"] for m in json.loads(result.stdout)] == [*HEADER_ONLY, "good/fine"]
    assert "bad/yaml" in result.stderr


def test_recent_and_prune_skip_bad_files_and_leave_them_alone(
    store_with_bad_files: Path, escaping_link: Path, run_cli: RunCli
) -> None:
    before = snapshot(store_with_bad_files)
    outside = escaping_link.read_bytes()
    assert run_cli(["recent", "--dir", store_with_bad_files]).exit_code == 1
    result = run_cli(["prune", "--dir", store_with_bad_files])
    assert result.exit_code == 1
    assert "0 expired memories removed" in result.stdout
    assert "bad/yaml" in result.stderr
    assert snapshot(store_with_bad_files) == before
    assert escaping_link.read_bytes() == outside


@pytest.mark.parametrize(
    "path", [*(p for p in sorted(BAD_FILES) if p not in HEADER_ONLY), "bad/escape"]
)
def test_get_of_a_bad_file_fails_with_exit_2_naming_it(
    store_with_bad_files: Path, escaping_link: Path, run_cli: RunCli, path: str
) -> None:
    result = run_cli(["get", path, "--dir", store_with_bad_files])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert path in result.stderr


@pytest.mark.parametrize("path", HEADER_ONLY)
def test_get_of_a_file_whose_header_alone_does_not_parse_shows_its_text_with_a_warning(
    store_with_bad_files: Path, run_cli: RunCli, path: str
) -> None:
    result = run_cli(["get", path, "--dir", store_with_bad_files])
    assert result.exit_code == 0
    assert result.stdout.endswith("\nBody\n")
    assert result.stderr.startswith(f"warning: {path}: ")
    assert BAD_FILES[path][1] in result.stderr and "read as plain text" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["update", "{path}", "--tag", "x"],
        ["update", "{path}", "--content", "overwritten"],
        ["update", "{path}", "--clear-citations"],
        ["citation", "add", "{path}", "src/app.py:1"],
    ],
)
@pytest.mark.parametrize("path", [*sorted(BAD_FILES), "bad/escape"])
def test_a_bad_file_is_never_rewritten(
    store_with_bad_files: Path,
    escaping_link: Path,
    run_cli: RunCli,
    path: str,
    args: list[str],
) -> None:
    before = snapshot(store_with_bad_files)
    outside = escaping_link.read_bytes()
    result = run_cli([*(a.format(path=path) for a in args), "--dir", store_with_bad_files])
    assert result.exit_code == 2
    assert path in result.stderr
    assert snapshot(store_with_bad_files) == before
    assert escaping_link.read_bytes() == outside
    leftovers = [p.name for p in store_with_bad_files.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_adding_over_a_bad_file_is_refused(store_with_bad_files: Path, tmp_path: Path) -> None:
    service = MemoryService(Store(store_with_bad_files), Repository(tmp_path))
    before = snapshot(store_with_bad_files)
    with pytest.raises(Exception, match="already exists"):
        service.add("bad/yaml", "New body.")
    assert snapshot(store_with_bad_files) == before


def test_adding_through_a_symlinked_category_out_of_the_store_is_refused(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "store"
    root.mkdir()
    (root / "linked").symlink_to(outside, target_is_directory=True)
    service = MemoryService(Store(root), Repository(tmp_path))
    with pytest.raises(InvalidPathError, match="outside the store"):
        service.add("linked/memory", "Body")
    assert list(outside.iterdir()) == []


def test_a_metadata_value_that_cannot_be_read_is_a_warning_not_an_error(
    tmp_path: Path, run_cli: RunCli
) -> None:
    root = tmp_path / "store"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "vague.md").write_text(
        "# Vague\n\n## Metadata\n\n- **Confidence**: HIGH\n", encoding="utf-8"
    )
    result = run_cli(["get", "notes/vague", "--dir", root])
    assert result.exit_code == 0
    assert "warning: notes/vague" in result.stderr
    assert "'HIGH'" in result.stderr
