"""Files and folders of past commits, read from git for a mention run; git's output read
through a temporary file.

A mention is judged against what its cited lines said at the commit that wrote its
memory line, so a first run reads a few hundred objects at past commits: the cited
files, and the folders whose line maps are asked. What a run knows it will read is
asked of one `git cat-file --batch` at once (`fetch`), its answer written to a
temporary file; anything else from a long-lived `git cat-file --batch`, one object at
a time.

Why a temporary file: git prints most answers in small pieces while it works (the
walk of the memory folder's history for a tenth of a second), and a parent reading a
pipe wakes for each piece. On the corpus's repository that cost the Python process
13 ms of CPU for the walk alone, 1 ms through a file (`run_git`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO

from memory_enhancement.verify.git import Git, GitError

ENV = {"GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
_BINARY_PROBE = 8192
_COUNTING = threading.Lock()
MAX_BLOB_BYTES = 20 * 1024 * 1024
# The objects read at past commits are kept for the run up to this many (and bytes): a
# run asks whether each mention's file was there, then reads it, then the Verifier
# reads it again; a store's first run reads a few hundred, mostly small.
_KEPT = 1024
_KEPT_BYTES = 64 * 1024 * 1024
_ASKED_BYTES = 16 * 1024  # requests written at once to `git cat-file` (a pipe holds 64 KiB)

Found = tuple[bytes, bytes, str]  # (type, content, object id)
_ENTRY = re.compile(rb"([0-7]+) ([^\0]*)\0")


def blob_hash(data: bytes) -> str:
    """The git blob hash of these bytes (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Tree:
    """One folder of one commit, as git stores it: its id, and its entries read when first
    asked (a run asks one or two names of each folder, often of folders with hundreds of
    files, and of a root tree only its id)."""

    def __init__(self, oid: str, data: bytes) -> None:
        self.oid = oid
        self._data = data
        self._entries: dict[bytes, tuple[bytes, bytes]] | None = None

    def get(self, name: str) -> tuple[str, str] | None:
        """(mode, object id) of the entry of that name (None: no such entry)."""
        entry = self.entry(name.encode("utf-8", "surrogateescape"))
        if entry is None:
            return None
        return entry[0].decode("ascii").zfill(6), entry[1].hex()

    def entry(self, name: bytes) -> tuple[bytes, bytes] | None:
        """The entry of that name as git stores it: (mode, object id's bytes)."""
        return self.entries().get(name)

    def entries(self) -> dict[bytes, tuple[bytes, bytes]]:
        """Every entry, by name as git stores it: (mode, object id's bytes)."""
        entries = self._entries
        if entries is None:
            entries = self._entries = {}
            data, width, at, end = self._data, len(self.oid) // 2, 0, len(self._data)
            match = _ENTRY.match  # "<mode> <name>\0" then the object id's bytes
            while at < end:
                found = match(data, at)
                if found is None:
                    break
                at = found.end()
                entries[found.group(2)] = (found.group(1), data[at : at + width])
                at += width
        return entries


def run_git(git: Git, *args: str, stdin: str | None = None) -> str:
    """What `git <args>` prints (fed `stdin`), read from a temporary file once git is done
    (see the module's docstring); through a pipe when no temporary file can be made."""
    data = stdin.encode("utf-8", "surrogateescape") if stdin is not None else None
    return run_git_bytes(git, *args, stdin=data).decode("utf-8", "surrogateescape")


def run_git_bytes(git: Git, *args: str, stdin: bytes | None = None) -> bytes:
    """`run_git`, its output as git printed it."""
    with _COUNTING:  # blames run from several threads (GitHistory.blame_all)
        git.calls += 1
    command = ["git", "-C", str(git.toplevel), *args]
    env = {**os.environ, **ENV}
    with contextlib.ExitStack() as stack:
        try:
            out: IO[bytes] | int = stack.enter_context(tempfile.TemporaryFile())
        except OSError:
            out = subprocess.PIPE
        try:
            done = subprocess.run(command, input=stdin, stdout=out, stderr=subprocess.PIPE, env=env)
        except OSError as exc:
            raise GitError(str(exc)) from None
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise GitError(message[-1] if message else f"git {args[0]} failed")
        if isinstance(out, int):
            return done.stdout
        out.seek(0)
        return out.read()
    raise AssertionError("unreachable")  # pragma: no cover  (mypy: the with block returns)


def to_git(git: Git, path: str) -> str:
    return f"{git.prefix}/{path}" if git.prefix else path


def from_git(git: Git, path: str) -> str | None:
    """A work-tree path made repository-relative; None outside the repository root."""
    if not git.prefix:
        return path
    head = git.prefix + "/"
    return path[len(head) :] if path.startswith(head) else None


@dataclass
class GitObjects:
    """Objects of past commits (`<commit>:<path>`), read for one run. Close it (or use
    `with`): it may hold a `git cat-file` process open."""

    git: Git
    _cat: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _found: dict[str, Found | None] = field(default_factory=dict, repr=False)
    _kept_bytes: int = field(default=0, repr=False)  # the size of the objects kept
    _ids: dict[tuple[str, str], str | None] = field(default_factory=dict, repr=False)
    _sizes: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    # (commit, path) -> the file's object id there (None: no such file), for the run
    _trees: dict[str, Tree | None] = field(default_factory=dict, repr=False)

    def __enter__(self) -> GitObjects:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._cat is not None:
            for stream in (self._cat.stdin, self._cat.stdout):
                if stream is not None:
                    stream.close()
            self._cat.wait()
            self._cat = None

    def fetch(self, specs: Iterable[str]) -> None:
        """Read these objects (`<commit>:<path>`) at once, for the reads that follow: asked
        of the run's `git cat-file --batch` together, then its answers read, so that the
        two processes do not wait for each other once per object. (Several one-shot
        processes would cost git more: each starts cold, without the objects the others
        already unpacked.)"""
        wanted = sorted({s for s in specs if s not in self._found and "\n" not in s})
        chunk: list[str] = []
        size = 0
        for spec in wanted:
            chunk.append(spec)
            size += len(spec) + 1
            if size >= _ASKED_BYTES:  # within a pipe's buffer: the writes never wait
                self._ask(chunk)
                chunk, size = [], 0
        if chunk:
            self._ask(chunk)

    def _ask(self, specs: list[str]) -> None:
        stdin, stdout = self._streams()
        stdin.write("".join(s + "\n" for s in specs).encode("utf-8", "surrogateescape"))
        stdin.flush()
        for spec in specs:
            self._keep(spec, _answer(stdout))

    # -- files ----------------------------------------------------------------------

    def exists(self, commit: str, path: str) -> bool:
        """Whether the repository had a file at that path at that commit."""
        self.object_id(commit, path)
        return self._sizes.get((commit, path), MAX_BLOB_BYTES + 1) <= MAX_BLOB_BYTES

    def object_id(self, commit: str, path: str) -> str | None:
        """The id of the file at that path at that commit (None: no such file); asked
        of git once per run, whether the file was read or not."""
        key = (commit, path)
        if key not in self._ids:
            self._blob(commit, path)  # kept too: a file asked about is usually read next
        return self._ids[key]

    def size(self, commit: str, path: str) -> int | None:
        """The size in bytes of the file at that path at that commit (None: no such file)."""
        return None if self.object_id(commit, path) is None else self._sizes[(commit, path)]

    def read(self, commit: str, path: str) -> list[str] | None:
        """The lines of a repository file at a commit; None when it was not a text file there."""
        data = self._blob(commit, path)
        if data is None or b"\0" in data[:_BINARY_PROBE]:
            return None
        text = data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if "\r" not in text:  # most files: nothing to strip, no second pass over the lines
            return lines
        return [line.rstrip("\r") for line in lines]

    def cited(self, commit: str, path: str, start: int, end: int) -> tuple[int, str | None] | None:
        """A repository file's number of lines at a commit, and its lines `start` to `end`
        joined by newlines (None past its end): what `read` gives, without decoding and
        splitting the whole file (a first run reads a hundred files for a line or two of
        each). None when it was not a text file there."""
        data = self._blob(commit, path)
        if data is None or b"\0" in data[:_BINARY_PROBE]:
            return None
        count = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        if end > count:
            return count, None
        if start < 1:  # not a line number a mention gives; read as `read` would slice it
            lines = self.read(commit, path) or []
            return count, "\n".join(lines[start - 1 : end])
        # A newline byte is never part of a UTF-8 sequence: decoding line by line gives
        # what decoding the whole file does, and a "\r" is stripped where `read` strips it.
        parts = data.split(b"\n", end)[start - 1 : end]
        return count, "\n".join(p.decode("utf-8", "replace").rstrip("\r") for p in parts)

    def spec(self, commit: str, path: str) -> str:
        """How `git cat-file` names a repository file at a commit."""
        return f"{commit}:{to_git(self.git, path)}"

    def _blob(self, commit: str, path: str) -> bytes | None:
        found = self._object(self.spec(commit, path))
        key = (commit, path)
        if found is not None and found[0] == b"blob":
            self._ids[key] = found[2]
            self._sizes[key] = len(found[1])
            return found[1] if len(found[1]) <= MAX_BLOB_BYTES else None
        self._ids[key] = None
        return None

    # -- folders --------------------------------------------------------------------

    def tree(self, spec: str) -> Tree | None:
        """A tree (`<commit>:<folder>`, `<commit>:` for the root). None when there is no
        such tree."""
        if spec in self._trees:
            return self._trees[spec]
        found = self._object(spec)
        tree = Tree(found[2], found[1]) if found is not None and found[0] == b"tree" else None
        self._trees[spec] = tree
        return tree

    def parent(self, commit: str) -> str | None:
        """A commit's first parent (None for a root commit), read from the run's cat-file
        rather than by a `git rev-parse` of its own."""
        found = self._object(commit)
        if found is None or found[0] != b"commit":
            return None
        for line in found[1].split(b"\n"):
            if line.startswith(b"parent "):
                return line[7:].decode("ascii", "replace").strip()
            if not line:
                break
        return None

    # -- objects --------------------------------------------------------------------

    def _object(self, spec: str) -> Found | None:
        if spec in self._found:
            return self._found[spec]
        found = self._cat_object(spec)
        self._keep(spec, found)
        return found

    def _keep(self, spec: str, found: Found | None) -> None:
        """Keep an object for the run, within `_KEPT` objects and `_KEPT_BYTES`: a
        mention's file is asked for again when it is read (one over `MAX_BLOB_BYTES`
        is not kept: it is not read)."""
        size = len(found[1]) if found is not None else 0
        if size > MAX_BLOB_BYTES:
            return
        self._kept_bytes += size
        while self._found and (len(self._found) >= _KEPT or self._kept_bytes > _KEPT_BYTES):
            gone = self._found.pop(next(iter(self._found)))
            self._kept_bytes -= len(gone[1]) if gone is not None else 0
        self._found[spec] = found

    def _cat_object(self, spec: str) -> Found | None:
        """(type, content, id) of an object, from the run's `git cat-file --batch`."""
        if "\n" in spec:
            return None
        stdin, stdout = self._streams()
        stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
        stdin.flush()
        return _answer(stdout)

    def _streams(self) -> tuple[IO[bytes], IO[bytes]]:
        """The run's `git cat-file --batch` (started on first use): its input and output."""
        if self._cat is None:
            self._cat = subprocess.Popen(
                ["git", "-C", str(self.git.toplevel), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={**os.environ, **ENV},
            )
            self.git.calls += 1
        stdin, stdout = self._cat.stdin, self._cat.stdout
        assert stdin is not None and stdout is not None
        return stdin, stdout


def _answer(stdout: IO[bytes]) -> Found | None:
    """One answer of `git cat-file --batch`: an object, or None ("<spec> missing")."""
    header = stdout.readline().split()
    if len(header) != 3 or not header[2].isdigit():  # "<spec> missing" (or ambiguous)
        return None
    size = int(header[2])
    data = _read_exactly(stdout, size)
    stdout.read(1)  # the newline after the object
    return header[1], data, header[0].decode("ascii")


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks, left = [], size
    while left > 0:
        chunk = stream.read(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
