"""Helpers for the verification tests: a real git repository whose clock the test sets.

Verification maps a citation's `verified` stamp to the commit HEAD was at, by
commit time, and commit times have one-second resolution. So every commit here
gets an explicit author and committer date an hour after the previous one, and
`stamp()` gives a verified stamp a minute after the last commit: no sleeping,
and no two commits that history cannot tell apart.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_enhancement.core.model import Citation, Memory, MemoryMeta
from memory_enhancement.core.verdicts import CitationCheck, MemoryVerification
from memory_enhancement.service import MemoryService
from memory_enhancement.store import formats
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.repo import Repository

START = 1_767_225_600  # 2026-01-01T00:00:00Z
FIXED_NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)
STORE = ".serena/memories"


def numbered(count: int, prefix: str = "line") -> list[str]:
    """`count` distinct lines: `line_1 = 1`, `line_2 = 2`, ..."""
    return [f"{prefix}_{n} = {n}" for n in range(1, count + 1)]


def code(name: str, count: int) -> list[str]:
    """`count` distinct lines, each naming its file and number: `src_app_py_3 = 3`."""
    stem = name.replace("/", "_").replace(".", "_")
    return [f"{stem}_{n} = {n}" for n in range(1, count + 1)]


class GitRepo:
    """A folder of code, optionally a git repository, with a hand-driven clock."""

    def __init__(self, root: Path, *, init: bool = True) -> None:
        self.root = root
        self.time = START
        root.mkdir(parents=True, exist_ok=True)
        if init:
            self.git("init", "-q", "-b", "main")

    # -- files ------------------------------------------------------------------

    def write(self, rel: str, text: str | bytes) -> Path:
        file = self.root / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            file.write_bytes(text)
        else:
            file.write_text(text, encoding="utf-8")
        return file

    def write_lines(self, rel: str, lines: Iterable[str]) -> Path:
        return self.write(rel, "".join(line + "\n" for line in lines))

    def lines(self, rel: str) -> list[str]:
        return (self.root / rel).read_text(encoding="utf-8").splitlines()

    # -- git --------------------------------------------------------------------

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            [
                "git",
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
                *args,
            ],
            cwd=self.root,
            check=True,
            capture_output=True,
            text=True,
            env={
                **os.environ,
                "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_CONFIG_NOSYSTEM": "1",
                **(env or {}),
            },
        )
        return done.stdout

    def commit(self, message: str = "change") -> str:
        """Commit everything, an hour after the previous commit; return the sha."""
        self.time += 3600
        date = f"@{self.time} +0000"
        self.git("add", "-A")
        self.git(
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
            env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date},
        )
        return self.head()

    def mv(self, source: str, target: str) -> None:
        """`git mv`, creating the target's folder first."""
        (self.root / target).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", source, target)

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def stamp(self) -> str:
        """A verified stamp one minute after the last commit (so it maps to that commit)."""
        moment = datetime.fromtimestamp(self.time + 60, UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")

    # -- memories ---------------------------------------------------------------

    @property
    def store_root(self) -> Path:
        return self.root / STORE

    def memory(
        self,
        path: str,
        citations: Sequence[Citation],
        *,
        fmt: str = "frontmatter",
        content: str = "# Note\n\nSomething true about the code.\n",
    ) -> Path:
        """Write a memory file holding exactly these citations (snippets as given)."""
        memory = Memory(path, content, MemoryMeta(citations=tuple(citations)), (), fmt)
        text = formats.by_name(fmt).render(None, memory)
        return self.write(f"{STORE}/{path}.md", text)

    def service(self, *, code_root: Path | None = None) -> MemoryService:
        return MemoryService(
            Store(self.store_root), Repository(code_root or self.root), clock=lambda: FIXED_NOW
        )

    def verify(self, *citations: Citation, name: str = "note") -> tuple[CitationCheck, ...]:
        """Write one memory with these citations and verify it, as `verify` would."""
        return self.verify_memory(citations, name=name).checks

    def verify_memory(
        self, citations: Sequence[Citation], name: str = "note"
    ) -> MemoryVerification:
        self.memory(name, citations)
        return self.service().verify(name).results[0]


def coded(root: Path, files: dict[str, int]) -> GitRepo:
    """A repository whose first commit holds these files of `code` lines (name: count)."""
    repo = GitRepo(root)
    for name, count in files.items():
        repo.write_lines(name, code(name, count))
    repo.commit("code")
    return repo


def git_of(repo: GitRepo) -> Git:
    """The repository's Git (the test made it one)."""
    git = Git.discover(repo.root)
    assert git is not None
    return git


def store_cli(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    """The tool as a process of its own, on the repository's Serena store, with a home
    beside the repository."""
    env = {**os.environ, "MEMORY_ENHANCEMENT_HOME": str(repo.root.parent / "home")}
    command = [sys.executable, "-m", "memory_enhancement", *args, "--dir", STORE]
    return subprocess.run(command, cwd=repo.root, env=env, capture_output=True, text=True)


def fixed_after_rename(repo: GitRepo, text: str) -> list[tuple[str, str]]:
    """Write `text` as a memory, rename lib/old.py to lib/new.py, run `verify-all --fix`:
    checks the memory is the text with only the path rewritten, byte for byte, and gives
    each mention and its verdict afterwards."""
    file = repo.write(f"{STORE}/notes.md", text.encode("utf-8"))
    repo.commit("memory")
    repo.mv("lib/old.py", "lib/new.py")
    repo.commit("rename")
    done = store_cli(repo, "verify-all", "--fix")
    assert done.returncode in (0, 1), done.stderr
    assert file.read_bytes() == text.replace("lib/old.py", "lib/new.py").encode("utf-8")
    after = json.loads(store_cli(repo, "verify-all", "--json").stdout)
    return [(c["mention"], c["status"]) for m in after for c in m["mentions"]]


def git_commands(monkeypatch: Any) -> list[tuple[str, ...]]:
    """Every git command the tool runs from now on (its arguments, in order), each still run
    by the real git: for tests that a run asks git nothing more than it needs."""
    from memory_enhancement.verify import git_objects

    asked: list[tuple[str, ...]] = []
    real = git_objects.run_git_bytes

    def counting(git: Git, *args: str, stdin: bytes | None = None) -> bytes:
        asked.append(args)
        return real(git, *args, stdin=stdin)

    monkeypatch.setattr(git_objects, "run_git_bytes", counting)
    return asked


def logging_git(folder: Path) -> tuple[dict[str, str], Path]:
    """An environment whose `git` logs each call's arguments, a line each, to the file
    returned (made on the first call), then runs the real one; its tool home in `folder`."""
    tools, calls = folder / "bin", folder / "git-calls"
    tools.mkdir()
    real = shutil.which("git")
    (tools / "git").write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {real} "$@"\n')
    (tools / "git").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "MEMORY_ENHANCEMENT_HOME": str(folder / "home"),
    }
    return env, calls


def aged(*paths: Path) -> None:
    """Set files' times 5 s back, older than the racy window (store/freshness.py): a run
    right after a write keeps no verdict naming a file (or git's index) that recent, since
    a second write within the filesystem's resolution could keep its size and time; a
    test that means "a run a moment later" ages what it just wrote."""
    for path in paths:
        ns = path.stat().st_mtime_ns - 5 * 10**9
        os.utime(path, ns=(ns, ns))


def note(repo: GitRepo, *lines: str, name: str = "notes") -> Path:
    """A memory `name` of the repository's store: a title, a blank line, then `lines`."""
    return repo.write_lines(f"{STORE}/{name}.md", ["# Notes", "", *lines])


def fixed_service(repo: GitRepo, state: State | None = None) -> MemoryService:
    """The repository's store served at FIXED_NOW, with `state` (none kept by default)."""
    return MemoryService(
        Store(repo.store_root), Repository(repo.root), state=state or State(None),
        clock=lambda: FIXED_NOW,
    )  # fmt: skip


def form_checks(
    repo: GitRepo, form: str, name: str = "notes", state: State | None = None
) -> dict[str, CitationCheck]:
    """The verdicts on a memory's mentions of one form (`file`, `folder`), by the mention
    as written, from `verify NAME` in process."""
    result = fixed_service(repo, state).verify(name).results[0]
    return {c.mention.text: c for c in result.mentions if c.mention and c.mention.form == form}


def file_mention_checks(repo: GitRepo, state: State | None = None) -> dict[str, CitationCheck]:
    """The verdicts on notes.md's file mentions, by their path (a rooted one's `/` left
    out), from `verify notes` in process."""
    from memory_enhancement.core.file_mentions import FILE

    result = fixed_service(repo, state).verify("notes").results[0]
    return {c.mention.path: c for c in result.mentions if c.mention and c.mention.form == FILE}
