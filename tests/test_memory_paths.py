"""Memory paths (seed 001): category/.../slug, normalized, never leaving the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import RunCli
from memory_enhancement.core.errors import InvalidPathError, NotFoundError
from memory_enhancement.core.memory_paths import (
    existing_path_candidates,
    normalize_category,
    normalize_new_path,
    normalize_segment,
)
from memory_enhancement.store.disk import Store


def test_a_single_level_category_and_slug_is_a_valid_memory_path() -> None:
    assert normalize_new_path("category/memory") == "category/memory"


def test_a_multi_level_path_is_a_valid_memory_path_of_any_depth() -> None:
    path = "category/subcategory/nested/memory"
    assert normalize_new_path(path) == path
    deep = "/".join(f"level{n}" for n in range(12))
    assert normalize_new_path(deep) == deep


def test_segments_are_normalized_like_cortex_does_in_the_case_typed() -> None:
    assert normalize_segment("  Hello World  ") == "Hello-World"
    assert normalize_new_path("  Global  /  Hello World  ") == "Global/Hello-World"
    assert normalize_new_path("Décisions/Use SQLite!") == "Decisions/Use-SQLite"
    assert normalize_new_path("a/snake_case_kept") == "a/snake_case_kept"


def test_a_dot_between_two_letters_or_digits_is_kept_in_a_new_name() -> None:
    """En-Nam/ennam-agents-scaffold names its decisions `decisions/v1.9-scope`: moved into
    a folder, the memory kept its name only as `v1-9-scope`, and `move` back to
    `decisions/v1.9-scope` answered `unchanged decisions/v1-9-scope (same path)`."""
    assert normalize_new_path("decisions/v1.9-scope") == "decisions/v1.9-scope"
    assert normalize_new_path("Notes/Next.js Setup") == "Notes/Next.js-Setup"
    assert normalize_segment(".hidden.") == "hidden"
    assert normalize_segment("a..b") == "a-b"
    assert normalize_segment("v1. 9") == "v1-9"


@pytest.mark.parametrize(
    ("segment", "slug"),
    [
        ("代码 规范", "代码-规范"),  # Chinese: the whole name, not an empty segment
        ("設計メモ", "設計メモ"),
        ("ｶﾞｲﾄﾞ", "ガイド"),  # half-width kana in their usual form
        ("한국어 메모", "한국어-메모"),
        ("Straße", "Straße"),  # a letter with no ASCII base is kept, not dropped
        ("Ａｂｃ！", "Abc"),  # full-width ASCII folds to ASCII
        ("हिन्दी नोट", "हिन्दी-नोट"),  # vowel signs stay with their word
        ("🙂", ""),
        ("\u0301", ""),  # a lone mark is no name
    ],
)
def test_letters_of_every_script_survive_normalization(segment: str, slug: str) -> None:
    assert normalize_segment(segment) == slug


def test_a_path_in_nfd_normalizes_like_the_same_path_in_nfc() -> None:
    import unicodedata

    path = "メモ/ガイド"
    assert normalize_new_path(unicodedata.normalize("NFD", path)) == path


def test_a_trailing_md_suffix_is_not_part_of_the_path() -> None:
    assert normalize_new_path("notes/todo.md") == "notes/todo"


def test_a_flat_store_takes_a_lone_slug() -> None:
    assert normalize_new_path("Tech_Stack", flat=True) == "Tech_Stack"
    assert normalize_new_path("notes/Tech Stack", flat=True) == "notes/Tech-Stack"


def test_a_new_memory_needs_a_category_and_a_slug() -> None:
    with pytest.raises(InvalidPathError) as info:
        normalize_new_path("lonely")
    assert "'lonely'" in str(info.value)
    assert "category and a slug" in str(info.value)


@pytest.mark.parametrize(
    "path",
    [
        "../escape",
        "a/../b",
        "a/./b",
        "./a/b",
        "../../etc/passwd",
        "a/ .. /b",
        "/etc/passwd",
        "/abs/path",
        "C:/windows/x",
        "a\\b",
        "a//b",
        "a/b/",
        "a/!!!/b",
        "",
        "   ",
    ],
)
def test_paths_that_could_leave_the_store_or_are_empty_are_rejected_naming_the_path(
    path: str,
) -> None:
    with pytest.raises(InvalidPathError) as info:
        normalize_new_path(path)
    assert repr(path) in str(info.value)


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "a/../../b", "a\\..\\b", "a//b"])
def test_existing_paths_refuse_the_same_escapes(path: str) -> None:
    with pytest.raises(InvalidPathError) as info:
        existing_path_candidates(path)
    assert repr(path) in str(info.value)


@pytest.mark.parametrize("path", ["../x", "/etc", "a/./b"])
def test_category_filters_refuse_the_same_escapes(path: str) -> None:
    with pytest.raises(InvalidPathError):
        normalize_category(path)


@pytest.mark.parametrize(
    ("path", "candidates"),
    [
        ("notes/a..b", ["notes/a..b", "notes/a-b"]),
        ("Notes/Tech Stack", ["Notes/Tech Stack", "Notes/Tech-Stack", "notes/tech-stack"]),
        ("notes/x", ["notes/x"]),
        (
            "notes/v1.9 Scope",
            ["notes/v1.9 Scope", "notes/v1.9-Scope", "notes/v1.9-scope", "notes/v1-9-scope"],
        ),
    ],
)
def test_an_existing_path_is_tried_as_typed_normalized_and_as_earlier_versions_named_it(
    path: str, candidates: list[str]
) -> None:
    assert existing_path_candidates(path) == candidates


def test_an_existing_file_is_addressed_exactly_as_it_is_on_disk(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "adr").mkdir(parents=True)
    (root / "README.md").write_text("top-level readme\n")
    (root / "adr" / "ADR-014 Use SQLite.md").write_text("an ADR\n")
    store = Store(root)
    assert store.locate("README") == "README"
    assert store.locate("adr/ADR-014 Use SQLite") == "adr/ADR-014 Use SQLite"
    assert store.locate("adr/ADR-014 Use SQLite.md") == "adr/ADR-014 Use SQLite"


def test_an_existing_file_is_also_found_by_its_normalized_spelling(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "hello-world.md").write_text("hi\n")
    assert Store(root).locate("Notes/Hello World") == "notes/hello-world"


def test_a_path_that_does_not_exist_is_not_found_and_named(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="'notes/nothing'"):
        Store(tmp_path).locate("notes/nothing")


def test_a_symlinked_category_pointing_out_of_the_store_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    root = tmp_path / "store"
    root.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InvalidPathError, match="outside the store"):
        Store(root).file_for("link/secret")


def test_a_category_filter_is_matched_as_written_and_may_end_in_a_slash() -> None:
    assert normalize_category("projects/Alpha") == "projects/Alpha"
    assert normalize_category("projects/alpha/") == "projects/alpha"
    with pytest.raises(InvalidPathError):
        normalize_category("/")


def test_a_segment_too_long_for_a_file_name_is_an_invalid_path_not_a_crash(
    tmp_path: Path, run_cli: RunCli
) -> None:
    store = tmp_path / "store"
    longest = "a/" + "x" * 200
    ok = run_cli(["add", longest, "--content", "Fits: its temporary file too.", "--dir", store])
    assert ok.exit_code == 0, ok.output
    assert (store / "a" / ("x" * 200 + ".md")).is_file()

    refused = run_cli(["add", "a/" + "x" * 250, "--content", "x", "--dir", store])
    assert refused.exit_code == 2
    assert "invalid memory path 'a/xxx" in refused.stderr and "250 bytes long" in refused.stderr
    missing = run_cli(["get", "a/" + "y" * 300, "--dir", store])
    assert missing.exit_code == 2
    assert "300 bytes long" in missing.stderr
    assert sorted(p.name for p in (store / "a").iterdir()) == ["x" * 200 + ".md"]
