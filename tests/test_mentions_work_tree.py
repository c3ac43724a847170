"""A file a memory names, deleted from the work tree and not committed: the verdict is
`missing` as for a committed deletion, and the reason says it is not committed yet. It said
"deleted after the memory line was written (dfbb954)", naming the memory line's commit, and
a person looked in `git log` for a deletion no commit holds (a Russian store of session 33,
whose bundle file was absent from its work tree)."""

from __future__ import annotations

import json
from pathlib import Path

from verify_support import STORE, GitRepo, coded, store_cli

NOTE = "# Заметки\n\n- `src/gone.py` holds it, line `src/gone.py:3` too; `src/app.py:5` stays\n"
UNCOMMITTED = ": from the work tree, not committed yet (git still lists it)"


def reasons(repo: GitRepo) -> dict[str, tuple[str, str]]:
    done = store_cli(repo, "verify", "notes", "--json")
    assert done.returncode == 1, done.stderr
    return {m["mention"]: (m["status"], m["reason"]) for m in json.loads(done.stdout)["mentions"]}


def test_a_deletion_not_committed_yet_is_said_so_and_no_longer_once_committed(
    tmp_path: Path,
) -> None:
    repo = coded(tmp_path / "project", {"src/app.py": 30, "src/gone.py": 10})
    repo.write(f"{STORE}/notes.md", NOTE)
    written = repo.commit("memory")[:7]
    (repo.root / "src/gone.py").unlink()
    deleted = f"src/gone.py was deleted after the memory line was written ({written})"
    assert reasons(repo) == {
        "src/gone.py": ("missing", deleted + UNCOMMITTED),
        "src/gone.py:3": ("missing", deleted + UNCOMMITTED),
        "src/app.py:5": ("valid", f"unchanged since the memory line was written ({written})"),
    }
    by = repo.commit("the deletion")[:7]
    after = reasons(repo)
    day = repo.git("log", "-1", "--format=%cs").strip()
    told = deleted.replace("deleted after", f"deleted in {by}, {day}, after")  # deletions.py
    assert after["src/gone.py"] == ("missing", told)
    assert after["src/gone.py:3"] == ("missing", told)


def test_lines_of_a_file_git_ignores_are_checked_in_the_work_tree_or_skipped_when_absent(
    tmp_path: Path,
) -> None:
    """7Spade/Xuanwu: `Source: .serena/project.local.yml:9-14`, a file `.serena/.gitignore`
    ignores, was `missing` ("no file ... in the repository") and failed its memory even in
    the work tree that had the file. There, its line count is what can be checked; in a
    clone without it, git ignoring the path says it is a local file."""
    repo = coded(tmp_path / "project", {"src/app.py": 30})
    repo.write("conf/.gitignore", "local.yml\n")
    repo.write_lines("conf/local.yml", [f"key{n}: {n}" for n in range(1, 21)])
    repo.write(f"{STORE}/notes.md", "# Notes\n\n- conf/local.yml:9-14 sets the keys\n")
    repo.commit("memory")

    def verdict() -> tuple[str, str]:
        done = store_cli(repo, "verify", "notes", "--json")
        (mention,) = json.loads(done.stdout)["mentions"]
        return mention["status"], mention["reason"]

    untracked = "(not tracked by git)"
    assert verdict() == (
        "unchecked",
        f"the file is there {untracked}: only its line count was checked",
    )
    repo.write_lines("conf/local.yml", ["key: 1"])
    assert verdict() == (
        "out_of_range",
        "line 14 is past the end of conf/local.yml (1 lines, not tracked by git)",
    )
    (repo.root / "conf/local.yml").unlink()
    assert verdict() == (
        "skipped",
        "no file conf/local.yml here, and git ignores it (conf/.gitignore:1): a local file",
    )


def test_a_memory_whose_only_mentions_are_unchecked_is_headed_unsure_not_valid(
    tmp_path: Path,
) -> None:
    """A QA round's new user read `valid (0 of 1 ... hold, 1 unchecked)` as a pass: nothing
    was verified, so the memory is headed `unsure`, and the run still does not fail."""
    repo = coded(tmp_path / "project", {"src/app.py": 30})
    repo.write("conf/.gitignore", "local.yml\n")
    repo.write_lines("conf/local.yml", [f"key{n}: {n}" for n in range(1, 21)])
    repo.write(f"{STORE}/notes.md", "# Notes\n\n- conf/local.yml:9-14 sets the keys\n")
    repo.commit("memory")
    done = store_cli(repo, "verify", "notes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "unsure   notes  (0 of 1 citations and mentions hold, 1 unchecked)"
    )
    repo.write(f"{STORE}/notes.md", "# Notes\n\n- conf/local.yml:9-14 and src/app.py:3\n")
    repo.commit("memory, a checked mention too")
    head = store_cli(repo, "verify", "notes").stdout.splitlines()[0]
    assert head == "valid    notes  (1 of 2 citations and mentions hold, 1 unchecked)"
