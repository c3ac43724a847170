"""Build a two-commit git repository from two real releases of a PyPI package.

Why: the accuracy benchmark needs *real* code churn (edits, block moves,
renames, deletions) with a ground truth that nobody hand-labelled. Two
released source distributions of the same project give exactly that, and the
only network they need is PyPI, which is reachable from the sandbox:

    commit A = tree of the first sdist   (e.g. requests 2.28.0)
    commit B = tree of the second sdist  (e.g. requests 2.32.3)

Git then sees the renames/deletions/edits between A and B, and ``truth.py``
derives the expected verdict of each citation from ``git diff -M A B``.

Commits are made with a fixed author, committer and date, so the same two
sdists always produce the same two SHAs (handy for caching and for comparing
runs). Downloads are cached (default ``bench/.cache/``; the folder is created
with a ``.gitignore`` containing ``*`` so it never gets committed).

Usage::

    python bench/accuracy/make_history_repo.py                      # requests 2.28.0 -> 2.32.3
    python bench/accuracy/make_history_repo.py --preset rich        # rich 12.6.0 -> 13.7.1
    python bench/accuracy/make_history_repo.py --old rich==12.6.0 --new rich==13.7.1 --repo /tmp/r

or from Python: ``make_history_repo("requests==2.28.0", "requests==2.32.3")``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _git import git, rev_parse

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = HERE.parent / ".cache"  # bench/.cache/

PRESETS: dict[str, tuple[str, str]] = {
    "requests": ("requests==2.28.0", "requests==2.32.3"),
    "rich": ("rich==12.6.0", "rich==13.7.1"),
}

# Fixed identity and dates => reproducible commit SHAs for identical inputs.
_COMMIT_ENV_A = {
    "GIT_AUTHOR_NAME": "accuracy-bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "accuracy-bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
}
_COMMIT_ENV_B = {
    **_COMMIT_ENV_A,
    "GIT_AUTHOR_DATE": "2024-01-02T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2024-01-02T00:00:00+0000",
}

_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip")


@dataclass(frozen=True)
class HistoryRepo:
    """Where the benchmark repository lives and which commits to compare."""

    path: Path
    old: str  # full SHA of commit A
    new: str  # full SHA of commit B (HEAD; the working tree is checked out here)
    old_spec: str
    new_spec: str

    def to_dict(self) -> dict[str, str]:
        d = asdict(self)
        d["path"] = str(self.path)
        return d


# --------------------------------------------------------------------------- download


def _normalize_name(name: str) -> str:
    """PEP 503 normalisation, so ``Foo_Bar`` finds ``foo-bar-1.0.tar.gz``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _split_spec(spec: str) -> tuple[str, str]:
    """``'requests==2.28.0'`` -> ``('requests', '2.28.0')``; only pins make sense here."""
    if "==" not in spec:
        raise ValueError(f"need a pinned spec like 'requests==2.28.0', got {spec!r}")
    name, version = spec.split("==", 1)
    return name.strip(), version.strip()


def find_cached_sdist(spec: str, cache_dir: Path) -> Path | None:
    """Return a cached archive for ``spec`` if one was downloaded before."""
    if not cache_dir.is_dir():
        return None
    name, version = _split_spec(spec)
    tail = "-" + version.lower()
    for candidate in sorted(cache_dir.iterdir()):
        low = candidate.name.lower()
        suffix = next((s for s in _ARCHIVE_SUFFIXES if low.endswith(s)), None)
        if suffix is None:
            continue
        stem = low[: -len(suffix)]
        if stem.endswith(tail) and _normalize_name(stem[: -len(tail)]) == _normalize_name(name):
            return candidate
    return None


def ensure_cache_dir(cache_dir: Path) -> Path:
    """Create the cache folder, self-ignored so its archives are never committed."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    ignore = cache_dir / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# download cache of the accuracy bench; never commit\n*\n")
    return cache_dir


def download_sdist(spec: str, cache_dir: Path = DEFAULT_CACHE) -> Path:
    """Return the path of the sdist for ``spec``, downloading it once via pip.

    ``--no-binary :all: --no-deps`` makes pip fetch the source distribution of
    exactly this project. The download goes to a temporary folder first and is
    moved into the cache only when complete, so an interrupted run never leaves
    a truncated archive that later runs would trust.
    """
    cached = find_cached_sdist(spec, cache_dir)
    if cached is not None:
        return cached
    ensure_cache_dir(cache_dir)
    with tempfile.TemporaryDirectory(prefix="sdist-dl-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-binary",
            ":all:",
            "--no-deps",
            "--disable-pip-version-check",
            "--quiet",
            "-d",
            tmp,
            spec,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"pip download {spec} failed:\n{proc.stderr.strip()}")
        archives = [p for p in Path(tmp).iterdir() if p.name.lower().endswith(_ARCHIVE_SUFFIXES)]
        if len(archives) != 1:
            raise RuntimeError(f"pip download {spec}: expected one archive, got {archives}")
        target = cache_dir / archives[0].name
        shutil.move(str(archives[0]), target)
    found = find_cached_sdist(spec, cache_dir)
    if found is None:  # archive named unexpectedly; trust what pip produced
        return target
    return found


# --------------------------------------------------------------------------- unpack


def unpack_sdist(archive: Path, dest: Path) -> Path:
    """Extract ``archive`` into ``dest`` and return the project root inside it.

    sdists wrap everything in one ``name-version/`` folder; that wrapper is
    returned so both versions are committed at the same relative paths.
    Tar extraction uses the ``data`` filter (no absolute paths, no links
    escaping the folder) since the archive comes from the network.
    """
    dest.mkdir(parents=True, exist_ok=True)
    if archive.name.lower().endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                p = Path(member)
                if p.is_absolute() or ".." in p.parts:
                    raise RuntimeError(f"unsafe member {member!r} in {archive}")
            zf.extractall(dest)
    else:
        with tarfile.open(archive) as tf:
            if hasattr(tarfile, "data_filter"):
                tf.extractall(dest, filter="data")
            else:  # pragma: no cover - Python < 3.11.4
                tf.extractall(dest)
    entries = [p for p in dest.iterdir()]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return dest


def _is_generated_metadata(rel: Path) -> bool:
    """Files setuptools writes into an sdist, not project source.

    They churn mechanically between releases and nobody would cite them, so
    by default they are left out of the commits.
    """
    if rel.parts == ("PKG-INFO",):
        return True
    return any(part.endswith(".egg-info") for part in rel.parts[:-1])


def _is_binary(path: Path) -> bool:
    with path.open("rb") as fh:
        return b"\0" in fh.read(8192)


def copy_tree(src_root: Path, worktree: Path, *, all_files: bool = False) -> int:
    """Copy the project files of ``src_root`` into ``worktree``; return the count.

    Default: every regular, non-binary file except generated packaging metadata
    (``PKG-INFO``, ``*.egg-info/``). ``all_files=True`` copies everything.
    Symlinks are skipped: they are rare in sdists and would only add
    type-change noise to the diff.
    """
    count = 0
    for path in sorted(src_root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(src_root)
        if ".git" in rel.parts:
            continue
        if not all_files and (_is_generated_metadata(rel) or _is_binary(path)):
            continue
        target = worktree / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        count += 1
    return count


def _clear_worktree(worktree: Path) -> None:
    """Remove everything but ``.git`` from a worktree this module created."""
    for child in worktree.iterdir():
        if child.name == ".git":
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _commit_all(repo: Path, message: str, env: dict[str, str]) -> str:
    # --force: an sdist may ship its own .gitignore that would hide files.
    git(repo, "add", "--all", "--force", ".")
    git(repo, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", message, env=env)
    return rev_parse(repo, "HEAD")


# --------------------------------------------------------------------------- main API


def build_history_repo(
    old_tree: Path,
    new_tree: Path,
    repo: Path,
    *,
    old_label: str = "old",
    new_label: str = "new",
    all_files: bool = False,
) -> HistoryRepo:
    """Commit ``old_tree`` then ``new_tree`` into a fresh repository at ``repo``.

    Separate from the download step so tests (and other sources of history,
    e.g. two checkouts) can reuse it without network access.
    """
    repo.mkdir(parents=True, exist_ok=True)
    if any(repo.iterdir()):
        raise FileExistsError(f"{repo} is not empty; refusing to build a history repo there")
    git(repo, "init", "--quiet", "--initial-branch=bench")
    git(repo, "config", "user.name", _COMMIT_ENV_A["GIT_AUTHOR_NAME"])
    git(repo, "config", "user.email", _COMMIT_ENV_A["GIT_AUTHOR_EMAIL"])

    copy_tree(old_tree, repo, all_files=all_files)
    old_sha = _commit_all(repo, f"A: {old_label}", _COMMIT_ENV_A)

    _clear_worktree(repo)
    copy_tree(new_tree, repo, all_files=all_files)
    new_sha = _commit_all(repo, f"B: {new_label}", _COMMIT_ENV_B)
    return HistoryRepo(path=repo, old=old_sha, new=new_sha, old_spec=old_label, new_spec=new_label)


def make_history_repo(
    old_spec: str = PRESETS["requests"][0],
    new_spec: str = PRESETS["requests"][1],
    repo: Path | None = None,
    *,
    cache_dir: Path = DEFAULT_CACHE,
    all_files: bool = False,
) -> HistoryRepo:
    """Download (or reuse) both sdists and build the A/B repository.

    ``repo=None`` creates a fresh temporary folder (not deleted afterwards:
    the caller will point the verifier at it). The working tree is left at
    commit B, i.e. "the code has changed since the memories were written".
    """
    old_archive = download_sdist(old_spec, cache_dir)
    new_archive = download_sdist(new_spec, cache_dir)
    if repo is None:
        name = _normalize_name(_split_spec(old_spec)[0])
        repo = Path(tempfile.mkdtemp(prefix=f"mem-acc-{name}-"))
    with tempfile.TemporaryDirectory(prefix="sdist-unpack-") as tmp:
        old_tree = unpack_sdist(old_archive, Path(tmp) / "old")
        new_tree = unpack_sdist(new_archive, Path(tmp) / "new")
        return build_history_repo(
            old_tree,
            new_tree,
            Path(repo),
            old_label=old_spec,
            new_label=new_spec,
            all_files=all_files,
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="requests",
        help="pair of releases to use when --old/--new are not given",
    )
    ap.add_argument("--old", help="first release, e.g. rich==12.6.0")
    ap.add_argument("--new", help="second release, e.g. rich==13.7.1")
    ap.add_argument(
        "--repo",
        type=Path,
        help="target folder (must be empty or absent); default: a new temp folder",
    )
    ap.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help=f"download cache (default {DEFAULT_CACHE})",
    )
    ap.add_argument(
        "--all-files", action="store_true", help="also commit PKG-INFO, *.egg-info and binary files"
    )
    ap.add_argument(
        "--json", action="store_true", help="print a JSON object instead of three lines"
    )
    args = ap.parse_args(argv)
    old_spec = args.old or PRESETS[args.preset][0]
    new_spec = args.new or PRESETS[args.preset][1]
    hist = make_history_repo(
        old_spec, new_spec, args.repo, cache_dir=args.cache, all_files=args.all_files
    )
    if args.json:
        print(json.dumps(hist.to_dict(), indent=2))
    else:
        print(f"repo: {hist.path}")
        print(f"old:  {hist.old}  ({old_spec})")
        print(f"new:  {hist.new}  ({new_spec})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
