"""Which cited files git would find no change in since a base commit, asked once per run.

A citation whose line still holds its text but which history must confirm (a copy of
the line elsewhere, a range) is valid when git has no line map for its file: the file
did not exist at the citation's base commit, or it is byte for byte what that commit
held. Asking `git diff` per base commit costs two processes a base (a store stamped
on many days has dozens); one `git cat-file --batch-check` tells for every (base, file)
pair at once whether the base held the file and as which blob, and the work-tree file
hashed as git hashes a blob says whether it is still that blob. Only the files that did
change go to `git diff`.

The hash is of the bytes as they are on disk: where git would first convert them
(line endings, a clean filter), the hashes differ and the file simply takes the diff.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from memory_enhancement.verify.git import Git, GitError
from memory_enhancement.verify.git_objects import blob_hash, run_git
from memory_enhancement.verify.repo import Repository

MAX_HASHED_BYTES = 20 * 1024 * 1024  # as `repo.MAX_SOURCE_BYTES`: bigger files take the diff


def without_map(
    git: Git, repo: Repository, wanted: Mapping[str, Iterable[str]]
) -> dict[str, set[str]]:
    """Per base commit, those of its paths (repository-relative) git has no line map for
    since that commit: absent from it, or unchanged in the work tree. Paths it cannot
    tell about (gone from the work tree, unreadable, git failing) are left out: the
    caller asks `git diff` for them."""
    pairs = [(base, path) for base, paths in wanted.items() for path in sorted(set(paths))]
    if not pairs:
        return {}
    request = "".join(f"{base}:{git._to_git(path)}\n" for base, path in pairs)
    try:
        answer = run_git(git, "cat-file", "--batch-check", stdin=request).split("\n")
    except GitError:
        return {}
    found: dict[str, set[str]] = {}
    hashes: dict[str, str | None] = {}
    for (base, path), line in zip(pairs, answer, strict=False):
        blob, kind, *_ = [*line.split(" "), "", ""]
        if line.endswith(" missing") or kind not in ("blob", ""):
            found.setdefault(base, set()).add(path)  # no file there at the base: no map
            continue
        if kind != "blob":
            continue
        if path not in hashes:
            hashes[path] = _blob_hash(repo, path)
        if hashes[path] == blob:
            found.setdefault(base, set()).add(path)
    return found


def _blob_hash(repo: Repository, path: str) -> str | None:
    """The file's bytes hashed as git hashes a blob; None when it cannot be read here."""
    file = repo.resolve(path)
    if file is None:
        return None
    try:
        if os.path.getsize(file) > MAX_HASHED_BYTES:
            return None
        with open(file, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return blob_hash(data)
