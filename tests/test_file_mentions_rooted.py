"""Paths written from the root (`./src/a.py`, `/src/a.py`, `/package.json`) and the
path-shaped strings that are not this repository's (a machine's `/etc/x.conf`, a Go module,
a Context7 library id). Real git repositories in temporary folders; `--fix` through the
command line in a process of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_enhancement.core.mentions import find_mentions, may_mention
from memory_enhancement.core.verdicts import Verdict
from memory_enhancement.store.state import State
from verify_support import (
    STORE,
    GitRepo,
    code,
    file_mention_checks,
    fixed_after_rename,
    note,
    store_cli,
)


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    for name in ["lib/old.py", "src/app.py", "bin/run.sh", "bin/old.sh", "dev/seed.py"]:
        repo.write_lines(name, code(name, 10))
    repo.write_lines("package.json", ["{}"])
    repo.write_lines("README.md", ["# project"])
    repo.write_lines(".gitignore", ["tmp/"])
    repo.commit("code")
    return repo


def test_fix_writes_a_renamed_path_from_the_root_as_it_was_written(repo: GitRepo) -> None:
    """`./` and `/` are the repository root for every mention (core/file_list.normalize), so
    the new path is written after them: `./lib/old.py:3` becomes `./lib/new.py:3`, not
    `lib/new.py:3` (which would read the same, but is not what the author wrote)."""
    text = (
        "# Notes\r\n\r\n"
        "- lines: ./lib/old.py:3 and /lib/old.py:4 and @lib/old.py:5;  \r\n"
        "- files: `./lib/old.py`, `/lib/old.py` and `lib/old.py`\r\n"
        "**File:** ./lib/old.py\r\n**Line:** 6\r\n"
        "no newline"
    )
    statuses = dict(fixed_after_rename(repo, text))
    assert set(statuses.values()) == {"valid"}, statuses


def test_a_machines_folder_from_the_root_is_the_repositorys_where_it_tracks_one(
    repo: GitRepo,
) -> None:
    """`/bin/run.sh` in a repository with a `bin/` of its own (108yen/task-orchestrator-mcp,
    agrathwohl/pvp keep one; Meng-Fei/PyFstat an `etc/`, lane-core/pane a `nix/`) is its file
    and is verified; `/etc/hosts.conf` is a machine's (no `etc/` here), and so is
    `/tmp/out.log`: the `tmp/` here is an untracked scratch folder."""
    (repo.root / "tmp").mkdir()
    (repo.root / "tmp/out.log").write_text("scratch\n")
    note(
        repo,
        "- `/bin/run.sh` starts it; `/bin/old.sh` was its helper; `/dev/seed.py` fills the db",
        "- not ours: `/etc/hosts.conf`, `/tmp/out.log`, `/usr/local/bin/tool.sh`",
    )
    repo.commit("memory")
    repo.mv("bin/old.sh", "bin/new.sh")
    repo.commit("rename")
    state = State(repo.root.parent / "state.db")
    for _ in range(2):  # judged, then taken from the cache
        found = file_mention_checks(repo, state)
        assert {text: c.status for text, c in found.items()} == {
            "bin/run.sh": Verdict.VALID,
            "bin/old.sh": Verdict.MOVED,
            "dev/seed.py": Verdict.VALID,
        }
        assert found["bin/old.sh"].renamed_to == "bin/new.sh"


def test_module_and_library_ids_are_not_file_mentions(repo: GitRepo) -> None:
    """A Go module (`gopkg.in/yaml.v2`, iNetworkX/billing_go's tech_stack.md) is not a path
    at all; a Context7 library id (`/vercel/next.js`, 7Spade/xuanwu-platform's mcp/context7.md;
    `/reactjs/react.dev`, Tommy0Storm/Gogga's) is a folder and a name that names no file
    here, then or now, under a first folder the repository has not: it is not reported. A
    path to be created under a folder the repository has is still `skipped`, so is a longer
    one (an author's clone, `/workspaces/LoRAIro/...`), and one that was there is followed."""
    text = (
        "- `gopkg.in/yaml.v2`, `github.com/spf13/cobra/command.go`, `go.uber.org/zap/logger.go`\n"
        "- Context7: `/vercel/next.js`, `/reactjs/react.dev`, `/api/users.json`\n"
        "- to write: `/src/planned.py`; gone: `/lib/old.py`; `/workspaces/x/docs/never.md`"
    )
    assert [(m.path, m.rooted) for m in find_mentions(text)] == [
        ("vercel/next.js", True), ("reactjs/react.dev", True), ("api/users.json", True),
        ("src/planned.py", True), ("lib/old.py", True), ("workspaces/x/docs/never.md", True),
    ]  # fmt: skip
    note(repo, *text.split("\n"))
    repo.commit("memory")
    (repo.root / "lib/old.py").unlink()
    repo.commit("delete")
    found = file_mention_checks(repo)
    assert {text: c.status for text, c in found.items()} == {
        "src/planned.py": Verdict.SKIPPED,
        "lib/old.py": Verdict.MISSING,
        "workspaces/x/docs/never.md": Verdict.SKIPPED,
    }


def test_a_name_from_the_root_needs_no_folder_and_a_bare_name_is_still_not_a_mention(
    repo: GitRepo,
) -> None:
    """`/package.json`: the `/` says it is the repository's own, at its root; a bare
    `package.json` names a file of every project and is still not a mention."""
    line = "- `/package.json`, `/README.md`, `/docs/gone.md` but not `package.json` nor `/.env`"
    assert [(m.column, m.text, m.rooted) for m in find_mentions(line)] == [
        (4, "package.json", True), (21, "README.md", True), (35, "docs/gone.md", True),
    ]  # fmt: skip
    assert may_mention(b"see `/package.json`") and not may_mention(b"see `package.json`")
    note(repo, line)
    repo.commit("memory")
    repo.mv("README.md", "docs/README.md")
    (repo.root / "package.json").unlink()
    repo.commit("move the readme, drop package.json")
    found = file_mention_checks(repo)
    assert {text: c.status for text, c in found.items()} == {
        "package.json": Verdict.MISSING,
        "README.md": Verdict.MOVED,
        "docs/gone.md": Verdict.SKIPPED,  # to be written: `docs/` is a folder here
    }
    assert found["README.md"].renamed_to == "docs/README.md"
    done = store_cli(repo, "verify-all", "--fix")
    assert done.returncode in (0, 1), done.stderr
    assert repo.lines(f"{STORE}/notes.md")[2] == line.replace("/README.md", "/docs/README.md")


def test_library_ids_are_not_reported_in_a_memory_git_does_not_track_either(
    repo: GitRepo,
) -> None:
    """A memory not committed yet (an agent's newest) has no history to say its
    `/vercel/next.js` never named a file; it names none now, under a first folder the work
    tree has not: a library id there too, not `unchecked` (which counts against the
    memory's confidence). A path under a folder the repository has is still `unchecked`."""
    note(repo, "- Context7: `/vercel/next.js`, `/api/users.json`; to write: `/src/planned.py`")
    found = file_mention_checks(repo)
    assert {text: c.status for text, c in found.items()} == {"src/planned.py": Verdict.UNCHECKED}
