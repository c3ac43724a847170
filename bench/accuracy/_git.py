"""Tiny, hermetic wrapper around the ``git`` executable for the accuracy bench.

Why a wrapper at all: the benchmark's ground truth is *git's own* view of the
history, so every call must see the same repository regardless of who runs it.
A developer's global config can silently change what ``git diff`` prints
(``diff.noprefix``, ``diff.algorithm``, ``core.quotePath``, external diff
drivers, hooks, GPG signing...), and a caller's environment may carry
``GIT_DIR``/``GIT_WORK_TREE`` (e.g. when the bench is launched from a git hook).
Both would corrupt the truth without any error. This module pins the settings
that matter and strips the environment variables that redirect git.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# Variables that would make git operate on some other repository/index.
_REDIRECTING_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_COMMON_DIR",
)

# Config overrides applied to every call; they only affect *this* process.
_PINNED_CONFIG = (
    "core.quotePath=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.hooksPath=/dev/null",
    "commit.gpgsign=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.external=",
    "color.ui=never",
)


class GitError(RuntimeError):
    """A git command exited non-zero; the message carries its stderr."""


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a git subprocess: the caller's, minus redirections."""
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTING_ENV}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    if extra:
        env.update(extra)
    return env


def git(
    repo: Path,
    *args: str,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
) -> bytes:
    """Run ``git -C repo <args>`` and return raw stdout bytes.

    Bytes, not text: file contents and paths are decoded by the callers, which
    know whether they want strict UTF-8 (sampling) or a lenient decode.
    """
    cmd = ["git", "-C", str(repo)]
    for item in _PINNED_CONFIG:
        cmd += ["-c", item]
    cmd += list(args)
    proc = subprocess.run(
        cmd,
        input=input,
        capture_output=True,
        env=git_env(env),
        check=False,
    )
    if proc.returncode != 0:
        raise GitError(
            f"{' '.join(cmd[:3])} {' '.join(args)} failed ({proc.returncode}): "
            f"{proc.stderr.decode('utf-8', 'replace').strip()}"
        )
    return proc.stdout


def rev_parse(repo: Path, rev: str) -> str:
    """Full SHA of ``rev`` (so cases and reports never hold ambiguous refs)."""
    return git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}").decode().strip()


# --------------------------------------------------------------------------- tree and diff reading

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    sha: str


@dataclass
class FilePair:
    """One entry of ``git diff --raw``, plus its hunks from the patch."""

    status: str  # A, D, M, R, T, ...
    old_path: str | None
    new_path: str | None
    hunks: list[tuple[int, int, int, int]] = field(default_factory=list)


def ls_tree(repo: Path, rev: str) -> dict[str, TreeEntry]:
    out = git(repo, "ls-tree", "-r", "-z", "--full-tree", rev)
    entries: dict[str, TreeEntry] = {}
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, otype, sha = meta.decode().split()
        if otype == "blob":
            entries[path.decode("utf-8", "surrogateescape")] = TreeEntry(mode, sha)
    return entries


def cat_blobs(repo: Path, shas: list[str]) -> dict[str, bytes]:
    """Read many blobs with a single ``git cat-file --batch``."""
    unique = sorted(set(shas))
    if not unique:
        return {}
    out = git(repo, "cat-file", "--batch", input=("\n".join(unique) + "\n").encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for _ in unique:
        nl = out.index(b"\n", pos)
        sha, _type, size = out[pos:nl].decode().split()
        start = nl + 1
        blobs[sha] = out[start : start + int(size)]
        pos = start + int(size) + 1  # content is followed by a newline
    return blobs


def diff_pairs(repo: Path, old: str, new: str, algorithm: str) -> list[FilePair]:
    """File pairs between ``old`` and ``new`` with their ``-U0`` hunks.

    Two calls because each is exact at one thing: ``--raw -z`` gives statuses
    and paths without any quoting; the ``-U0`` patch gives minimal hunk ranges.
    The patch has one ``diff --git`` section per raw entry, in the same order,
    except type changes (T), which git prints as a deletion plus an addition.
    """
    common = [
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "-M",
        "-l0",
        f"--diff-algorithm={algorithm}",
    ]
    raw = git(repo, "diff", "--raw", "-z", *common, old, new).split(b"\0")
    pairs: list[FilePair] = []
    i = 0
    while i < len(raw) and raw[i]:
        status = raw[i].decode().split()[-1]
        letter = status[0]
        p1 = raw[i + 1].decode("utf-8", "surrogateescape")
        if letter in "RC":
            p2 = raw[i + 2].decode("utf-8", "surrogateescape")
            i += 3
        else:
            p2 = p1
            i += 2
        pairs.append(
            FilePair(
                status=letter,
                old_path=None if letter == "A" else p1,
                new_path=None if letter == "D" else p2,
            )
        )

    patch = git(repo, "diff", "-U0", "--src-prefix=a/", "--dst-prefix=b/", *common, old, new)
    sections: list[list[tuple[int, int, int, int]]] = []
    headers: list[bytes] = []
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            sections.append([])
            headers.append(line)
        elif line.startswith(b"@@"):
            m = _HUNK.match(line)
            if m is None:  # pragma: no cover - would be a git format change
                raise ValueError(f"unparsable hunk header: {line!r}")
            a, b, c, d = m.groups()
            sections[-1].append(
                (int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d))
            )

    expected = sum(2 if p.status == "T" else 1 for p in pairs)
    if expected != len(sections):
        raise RuntimeError(
            f"diff mismatch: {len(pairs)} raw entries vs {len(sections)} patch sections"
        )
    k = 0
    for p in pairs:
        if p.status == "T":
            k += 2  # file <-> symlink etc.: the old file is gone as a regular file
            continue
        want = f"diff --git a/{p.old_path or p.new_path} b/{p.new_path or p.old_path}".encode(
            "utf-8", "surrogateescape"
        )
        if headers[k] != want and b'"' not in headers[k]:
            raise RuntimeError(f"diff sections out of order: {headers[k]!r} != {want!r}")
        p.hunks = sections[k]
        k += 1
    return pairs
