"""Where stores live (issue 2 §4): project, global and named stores, and their format."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_enhancement.core.errors import InvalidInputError, NotFoundError, StoreError
from memory_enhancement.store.disk import CONFIG_FILE, Store
from memory_enhancement.store.locations import (
    Registry,
    find_git_root,
    global_store,
    project_store,
    resolve_store,
    tool_home,
)


def env(home: Path) -> dict[str, str]:
    return {"MEMORY_ENHANCEMENT_HOME": str(home)}


def test_the_project_store_is_dot_memories_at_the_git_root(git_repo: Path) -> None:
    nested = git_repo / "src" / "util"
    assert find_git_root(nested) == git_repo
    assert project_store(nested) == git_repo / ".memories"


def test_the_project_store_prefers_serena_memories_when_they_exist(git_repo: Path) -> None:
    (git_repo / ".memories").mkdir()
    (git_repo / ".serena" / "memories").mkdir(parents=True)
    assert project_store(git_repo / "src") == git_repo / ".serena" / "memories"


def test_a_folder_outside_any_repository_has_no_project_store(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    assert project_store(outside) is None


def test_the_global_store_lives_under_memory_enhancement_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert tool_home(env(home)) == home
    assert global_store(env(home)) == home / "memories"


def test_without_the_override_the_tool_home_follows_xdg(tmp_path: Path) -> None:
    assert tool_home({"XDG_CONFIG_HOME": str(tmp_path / "xdg")}) == (
        tmp_path / "xdg" / "memory-enhancement"
    )
    assert tool_home({"HOME": str(tmp_path / "user")}) == (
        tmp_path / "user" / ".config" / "memory-enhancement"
    )


def test_inside_a_repository_the_project_store_is_used(git_repo: Path, tmp_path: Path) -> None:
    location = resolve_store(directory=None, name=None, cwd=git_repo / "src", env=env(tmp_path))
    assert (location.root, location.kind) == (git_repo / ".memories", "project")


def test_outside_a_repository_the_global_store_is_used(tmp_path: Path) -> None:
    cwd = tmp_path / "plain"
    cwd.mkdir()
    location = resolve_store(directory=None, name=None, cwd=cwd, env=env(tmp_path / "home"))
    assert (location.root, location.kind) == (tmp_path / "home" / "memories", "global")


def test_dir_wins_over_the_project_store_and_is_relative_to_the_current_folder(
    git_repo: Path, tmp_path: Path
) -> None:
    location = resolve_store(directory="mems", name=None, cwd=git_repo, env=env(tmp_path))
    assert (location.root, location.kind) == (git_repo / "mems", "dir")


def test_dir_and_store_together_are_an_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="not both"):
        resolve_store(directory="a", name="b", cwd=tmp_path, env=env(tmp_path))


def test_dir_naming_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(StoreError, match=r"file\.txt"):
        resolve_store(directory="file.txt", name=None, cwd=tmp_path, env=env(tmp_path))


def test_named_stores_are_registered_listed_and_resolved(tmp_path: Path) -> None:
    home = tmp_path / "home"
    registry = Registry(home)
    registry.add("work", tmp_path / "work-memories")
    registry.add("play", tmp_path / "play-memories")
    assert registry.load() == {
        "play": str(tmp_path / "play-memories"),
        "work": str(tmp_path / "work-memories"),
    }
    location = resolve_store(directory=None, name="work", cwd=tmp_path, env=env(home))
    assert (location.root, location.name, location.kind) == (
        tmp_path / "work-memories",
        "work",
        "named",
    )


def test_global_and_project_are_always_known_store_names(git_repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert resolve_store(directory=None, name="global", cwd=git_repo, env=env(home)).root == (
        home / "memories"
    )
    assert resolve_store(directory=None, name="project", cwd=git_repo, env=env(home)).root == (
        git_repo / ".memories"
    )
    outside = tmp_path / "plain"
    outside.mkdir()
    with pytest.raises(StoreError, match="not inside a git repository"):
        resolve_store(directory=None, name="project", cwd=outside, env=env(home))


def test_an_unknown_store_name_is_an_error_listing_the_known_ones(tmp_path: Path) -> None:
    home = tmp_path / "home"
    Registry(home).add("work", tmp_path / "w")
    with pytest.raises(NotFoundError, match=r"'nope'.*project, global, work"):
        resolve_store(directory=None, name="nope", cwd=tmp_path, env=env(home))


@pytest.mark.parametrize("name", ["", "global", "project", "a/b", " padded "])
def test_a_store_name_that_is_empty_builtin_or_a_path_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidInputError):
        Registry(tmp_path).add(name, tmp_path / "x")


def test_registering_a_taken_name_at_another_folder_is_an_error(tmp_path: Path) -> None:
    registry = Registry(tmp_path)
    registry.add("work", tmp_path / "a")
    registry.add("work", tmp_path / "a")  # the same registration again is fine
    with pytest.raises(StoreError, match="already registered"):
        registry.add("work", tmp_path / "b")


def test_removing_a_registration_never_deletes_files(tmp_path: Path) -> None:
    root = tmp_path / "work-memories"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "keep.md").write_text("keep me\n")
    registry = Registry(tmp_path / "home")
    registry.add("work", root)
    assert registry.remove("work") == str(root)
    assert registry.load() == {}
    assert (root / "notes" / "keep.md").read_text() == "keep me\n"
    with pytest.raises(NotFoundError, match="'work'"):
        registry.remove("work")


def test_an_unreadable_registry_is_a_store_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "stores.yaml").write_text("stores: [not, a, mapping]\n")
    with pytest.raises(StoreError, match=r"stores\.yaml"):
        Registry(tmp_path).load()


# -- the format of new memories ------------------------------------------------------


def test_an_empty_store_writes_the_frontmatter_format(tmp_path: Path) -> None:
    assert Store(tmp_path / "new").default_format() == "frontmatter"


def test_a_store_holding_serena_files_writes_the_serena_format(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "a").mkdir(parents=True)
    (root / "a" / "one.md").write_text("# One\n")
    (root / "two.md").write_text("# Two\n")
    assert Store(root).default_format() == "serena"


def test_a_store_holding_mostly_frontmatter_files_writes_frontmatter(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "one.md").write_text("---\ntags: []\n---\nOne\n")
    (root / "two.md").write_text("---\ntags: []\n---\nTwo\n")
    (root / "three.md").write_text("# Three\n")
    assert Store(root).default_format() == "frontmatter"


def test_a_serena_memories_folder_writes_the_serena_format_even_when_empty(
    git_repo: Path,
) -> None:
    root = git_repo / ".serena" / "memories"
    root.mkdir(parents=True)
    assert Store(root).default_format() == "serena"


def test_a_store_configuration_chooses_the_format(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "one.md").write_text("# One\n")
    (root / CONFIG_FILE).write_text("format: frontmatter\n")
    assert Store(root).default_format() == "frontmatter"


def test_the_store_configuration_file_is_not_a_memory(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / CONFIG_FILE).write_text("format: serena\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.md").write_text("hidden\n")
    (root / "notes.txt").write_text("not markdown\n")
    assert list(Store(root).iter_paths()) == []


def test_a_new_store_file_gets_ordinary_permissions(tmp_path: Path) -> None:
    from memory_enhancement.store.atomic import write_file

    root = tmp_path / "store"
    root.mkdir()
    old = os.umask(0o022)
    try:
        write_file(root / "x.md", b"x", mode=None)
    finally:
        os.umask(old)
    assert (root / "x.md").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in root.iterdir()] == ["x.md"]


def test_writing_a_file_never_sets_the_process_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading the umask means setting it, for the whole process: a server thread creating
    a folder in that instant would get it world-writable. The kernel applies it instead."""
    from memory_enhancement.store.atomic import write_file

    def refused(mask: int) -> int:
        raise AssertionError(f"os.umask({mask:o}) called")

    monkeypatch.setattr(os, "umask", refused)
    write_file(tmp_path / "x.md", b"x", mode=None)
    write_file(tmp_path / "x.md", b"y", mode=0o600)
    assert (tmp_path / "x.md").read_bytes() == b"y"
    assert (tmp_path / "x.md").stat().st_mode & 0o777 == 0o600
