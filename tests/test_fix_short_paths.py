"""`--fix` after a rename keeps a partial path partial when the new one still names that
file alone. 2sem/sendadv-ios's memories write `Configs/app.release.xcconfig` for
`Projects/App/Configs/app.release.xcconfig` (the section says which project); renamed to
`app.prod.xcconfig`, the fix wrote `Projects/App/Configs/app.prod.xcconfig`, a form the
author never used. Written as it was, `Configs/app.prod.xcconfig`, it reads as before and
is verified as the same file. Real git repositories in temporary folders; `--fix` through
the command line in a process of its own."""

from __future__ import annotations

import json
from pathlib import Path

from verify_support import STORE, GitRepo, code, store_cli


def fixed(repo: GitRepo, text: str) -> str:
    """The memory `text` after `verify-all --fix`, once every path below was committed
    and then changed by the test."""
    done = store_cli(repo, "verify-all", "--fix")
    assert done.returncode in (0, 1), done.stderr
    return (repo.root / STORE / "notes.md").read_text(encoding="utf-8")


def statuses(repo: GitRepo) -> dict[str, str]:
    after = json.loads(store_cli(repo, "verify-all", "--json").stdout)
    return {c["mention"]: c["status"] for m in after for c in m["mentions"]}


def test_a_partial_path_renamed_in_its_folder_stays_partial(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    for name in ["Projects/App/Configs/app.release.xcconfig", "Projects/App/Sources/App.swift"]:
        repo.write_lines(name, code(name, 20))
    repo.commit("code")
    text = (
        "# Release\n\n"
        "- Bump the version in `Configs/app.release.xcconfig` before a release\n"
        "- Ads start in `Sources/App.swift:5`\n\n"
        "**File:** `Sources/App.swift`\n**Line:** 7\n"
    )
    repo.write(f"{STORE}/notes.md", text)
    repo.commit("memory")
    repo.mv("Projects/App/Configs/app.release.xcconfig", "Projects/App/Configs/app.prod.xcconfig")
    repo.mv("Projects/App/Sources/App.swift", "Projects/App/Sources/SendApp.swift")
    repo.commit("renamed in their folders")
    dry = store_cli(repo, "verify-all", "--fix", "--dry-run")
    assert "+- Bump the version in `Configs/app.prod.xcconfig` before a release" in dry.stdout
    assert fixed(repo, text) == text.replace("app.release", "app.prod").replace(
        "App.swift", "SendApp.swift"
    )
    assert set(statuses(repo).values()) == {"valid"}


def test_a_partial_path_is_written_in_full_when_its_new_form_is_not_that_file_alone(
    tmp_path: Path,
) -> None:
    """Renamed to a name another folder has too (`Configs/app.prod.xcconfig` would name
    two files), or out of the folder the author left unsaid (`Projects/App/`), or deeper
    (the written form would name another folder): the new path in full, as before."""
    repo = GitRepo(tmp_path / "project")
    for name in [
        "Projects/App/Configs/a.xcconfig",
        "Projects/App/Configs/b.xcconfig",
        "Projects/App/Configs/c.xcconfig",
        "Projects/Widget/Configs/prod.xcconfig",
    ]:
        repo.write_lines(name, code(name, 20))
    repo.commit("code")
    text = (
        "# Configs\n\n"
        "- `Configs/a.xcconfig` is the release one\n"
        "- `Configs/b.xcconfig` is the debug one\n"
        "- `Configs/c.xcconfig` is the test one\n"
    )
    repo.write(f"{STORE}/notes.md", text)
    repo.commit("memory")
    repo.mv("Projects/App/Configs/a.xcconfig", "Projects/App/Configs/prod.xcconfig")
    (repo.root / "Shared").mkdir()
    repo.mv("Projects/App/Configs/b.xcconfig", "Shared/b.xcconfig")
    (repo.root / "Projects/App/Configs/Test").mkdir()
    repo.mv("Projects/App/Configs/c.xcconfig", "Projects/App/Configs/Test/c.xcconfig")
    repo.commit("renamed")
    assert fixed(repo, text) == (
        "# Configs\n\n"
        "- `Projects/App/Configs/prod.xcconfig` is the release one\n"
        "- `Shared/b.xcconfig` is the debug one\n"
        "- `Projects/App/Configs/Test/c.xcconfig` is the test one\n"
    )
