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
