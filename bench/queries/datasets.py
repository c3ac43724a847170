"""The labelled query sets for the retrieval benches and the stores they label.

    .venv/bin/python bench/queries/datasets.py --check        # verify every set
    .venv/bin/python bench/queries/datasets.py --list         # counts per set/kind/split

In a bench (with bench/ on sys.path):

    from queries.datasets import load, materialised
    qset = load("ja")
    with materialised(qset) as roots:           # {store spec: folder of memories}
        for q in qset.split("dev"):
            run(roots[q.store.spec], q.query, q.relevant)

Sets (files beside this one, described in README.md):

* ``corpus``: corpus_queries.yaml, over the vendored corpus (corpus/ai-agents-memories/).
* ``paraphrase``: paraphrase_queries.yaml, same store, vocabulary-mismatch questions.
* ``ja``: ja_queries.yaml, Japanese queries over real Japanese Serena stores.
* ``zh``: zh_queries.yaml, Chinese queries over real Chinese Serena stores.
* ``small``: small_queries.yaml, queries over small real Serena stores, run per store.

Every query names its store as ``owner/repo@commit:path``; a relevant path is a memory's
path relative to that folder, without ``.md``. Fetched stores are never copied into this
repository: they are read from the mirror's bare git directory at run time
(``$MEMORY_BENCH_MIRRORS/owner+repo/repo``, by default ``/work/.mirror``), extracted with
``git archive COMMIT:PATH``. A missing mirror raises StoreMissing naming the repository to
fetch. The corpus store is the vendored copy of rjmurillo/ai-agents at the same commit.

Each query carries ``split: dev`` or ``split: test``: tune on dev, report test. The marks are
not chosen by hand: :func:`assign_splits` shuffles the set's ids with a fixed seed and puts
the first half in dev; ``--check`` fails if a file's marks differ from it. corpus_queries.yaml
predates the marks, so its split is computed here the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
CORPUS = REPO_ROOT / "corpus" / "ai-agents-memories"
CORPUS_SPEC = "rjmurillo/ai-agents@70241a006f60813fb0f994dd22872d395b3f4245:.serena/memories"
DEFAULT_MIRRORS = Path("/work/.mirror")
SPLIT_SEED = 13

SETS: dict[str, str] = {
    "corpus": "corpus_queries.yaml",
    "paraphrase": "paraphrase_queries.yaml",
    "ja": "ja_queries.yaml",
    "zh": "zh_queries.yaml",
    "small": "small_queries.yaml",
}
KINDS = {"symptom", "howto", "decision", "concept", "paraphrase", "word", "phrase", "question"}
SPLITS = ("dev", "test")
_SPEC = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)@(?P<commit>[0-9a-f]{40}):(?P<path>\S+)$")


class DatasetError(Exception):
    """A query file is malformed or disagrees with its stores."""


class StoreMissing(DatasetError):
    """A store's repository (or its commit) is not in the local mirror."""


@dataclass(frozen=True)
class Store:
    """A folder of memories at one commit of one public repository."""

    repo: str
    commit: str
    path: str

    @classmethod
    def parse(cls, spec: str) -> Store:
        m = _SPEC.match(spec)
        if not m:
            raise DatasetError(f"store {spec!r} is not owner/repo@<40-hex commit>:path")
        return cls(m["repo"], m["commit"], m["path"].strip("/"))

    @property
    def spec(self) -> str:
        return f"{self.repo}@{self.commit}:{self.path}"

    @property
    def slug(self) -> str:
        """A folder name for this store when several are materialised side by side."""
        return f"{self.repo.replace('/', '__')}@{self.commit[:10]}"

    @property
    def vendored(self) -> bool:
        return self.spec == CORPUS_SPEC


@dataclass(frozen=True)
class Query:
    id: str
    set: str
    kind: str
    query: str
    relevant: tuple[str, ...]
    store: Store
    split: str
    word: bool = False


@dataclass
class QuerySet:
    name: str
    path: Path
    queries: list[Query]
    stores: dict[str, Store] = field(default_factory=dict)

    def split(self, which: str) -> list[Query]:
        if which not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, not {which!r}")
        return [q for q in self.queries if q.split == which]

    def words(self) -> list[Query]:
        return [q for q in self.queries if q.word]


def assign_splits(set_name: str, ids: Sequence[str], seed: int = SPLIT_SEED) -> dict[str, str]:
    """dev for the first half of the ids shuffled by ``Random(f"{seed}:{set_name}")``."""
    order = sorted(ids)
    random.Random(f"{seed}:{set_name}").shuffle(order)
    half = len(order) // 2
    return {qid: ("dev" if i < half else "test") for i, qid in enumerate(order)}


def load(name: str) -> QuerySet:
    """One query set by name (see SETS)."""
    if name not in SETS:
        raise DatasetError(f"unknown query set {name!r}; known: {', '.join(SETS)}")
    path = HERE / SETS[name]
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        raise DatasetError(f"{path.name}: no 'queries' list")
    default_store = data.get("store", CORPUS_SPEC)
    raw: list[dict[str, object]] = data["queries"]
    ids = [str(q.get("id")) for q in raw]
    dupes = [i for i, n in Counter(ids).items() if n > 1]
    if dupes:
        raise DatasetError(f"{path.name}: duplicate ids {dupes}")
    computed = assign_splits(name, ids)
    stores: dict[str, Store] = {}
    queries = []
    for q in raw:
        qid = str(q.get("id"))
        for key in ("query", "relevant", "kind"):
            if not q.get(key):
                raise DatasetError(f"{path.name} {qid}: missing {key!r}")
        kind = str(q["kind"])
        if kind not in KINDS:
            raise DatasetError(f"{path.name} {qid}: kind {kind!r} is not one of {sorted(KINDS)}")
        relevant = q["relevant"]
        if not isinstance(relevant, list) or not all(isinstance(r, str) for r in relevant):
            raise DatasetError(f"{path.name} {qid}: relevant must be a list of paths")
        spec = str(q.get("store", default_store))
        store = stores.setdefault(spec, Store.parse(spec))
        split = str(q.get("split", computed[qid]))
        if split not in SPLITS:
            raise DatasetError(f"{path.name} {qid}: split {split!r} is not dev or test")
        queries.append(
            Query(
                id=qid,
                set=name,
                kind=kind,
                query=str(q["query"]),
                relevant=tuple(relevant),
                store=store,
                split=split,
                word=bool(q.get("word", False)),
            )
        )
    return QuerySet(name, path, queries, stores)


def load_all() -> dict[str, QuerySet]:
    return {name: load(name) for name in SETS}


def mirrors_root() -> Path:
    return Path(os.environ.get("MEMORY_BENCH_MIRRORS", DEFAULT_MIRRORS))


def git_dir(store: Store) -> Path:
    """The bare git directory holding the store's repository, or StoreMissing."""
    owner, name = store.repo.split("/")
    base = mirrors_root() / f"{owner}+{name}"
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            break
    else:
        raise StoreMissing(
            f"{store.repo} is not mirrored under {mirrors_root()}: fetch github:{store.repo} "
            f"(the set needs commit {store.commit}, folder {store.path})"
        )
    probe = subprocess.run(
        ["git", f"--git-dir={candidate}", "cat-file", "-e", f"{store.commit}^{{commit}}"],
        capture_output=True,
    )
    if probe.returncode != 0:
        raise StoreMissing(
            f"the mirror of {store.repo} at {candidate} lacks commit {store.commit}: "
            f"fetch github:{store.repo} again"
        )
    return candidate


def materialise(store: Store, dest: Path) -> Path:
    """Write the store's memories (the folder at its commit) into dest; return dest."""
    dest.mkdir(parents=True, exist_ok=True)
    if store.vendored and CORPUS.is_dir():
        for src in CORPUS.rglob("*"):
            if src.is_file():
                target = dest / src.relative_to(CORPUS)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(src.read_bytes())
        return dest
    gd = git_dir(store)
    archive = subprocess.run(
        ["git", f"--git-dir={gd}", "archive", "--format=tar", f"{store.commit}:{store.path}"],
        capture_output=True,
    )
    if archive.returncode != 0:
        err = archive.stderr.decode(errors="replace").strip()
        raise StoreMissing(f"{store.spec}: git archive failed: {err}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout), mode="r:") as tar:
        tar.extractall(dest, filter="data")
    return dest


@contextlib.contextmanager
def materialised(qset: QuerySet, root: Path | None = None) -> Iterator[dict[str, Path]]:
    """Each store of the set in its own folder (``root/<slug>``); removed afterwards
    unless root was given. Yields {store spec: folder}."""
    with contextlib.ExitStack() as stack:
        base = root or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="qsets-")))
        yield {spec: materialise(s, base / s.slug) for spec, s in qset.stores.items()}


def union_path(query: Query, relevant: str) -> str:
    """A relevant path as seen when every store of a set is materialised under one root
    (``<slug>/<path>``), for benches that index all of a set's stores together."""
    return f"{query.store.slug}/{relevant}"


def pool_relevant(query: Query) -> tuple[str, ...]:
    """The query's relevant paths in the pooled layout (see union_path)."""
    return tuple(union_path(query, r) for r in query.relevant)


def memory_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.md") if p.is_file())


def containing(folder: Path, word: str) -> int:
    """How many memories contain word (plain case-insensitive substring)."""
    needle = word.casefold()
    return sum(
        needle in p.read_text(encoding="utf-8", errors="replace").casefold()
        for p in memory_files(folder)
    )


# -- command line -----------------------------------------------------------------------------


def _summary(qsets: dict[str, QuerySet]) -> list[str]:
    lines = []
    for name, qs in qsets.items():
        kinds = Counter(q.kind for q in qs.queries)
        splits = Counter(q.split for q in qs.queries)
        lines.append(
            f"{name:<11} {len(qs.queries):>3} queries, {len(qs.stores)} store(s); "
            f"dev {splits['dev']}, test {splits['test']}; "
            + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
        )
    return lines


def check(qsets: dict[str, QuerySet]) -> int:
    """Verify marks and labels against the stores; print word counts. Returns problems."""
    problems = 0
    for name, qs in qsets.items():
        problems += _check_splits(name, qs)
        try:
            with materialised(qs) as roots:
                problems += _check_labels(name, qs, roots)
        except StoreMissing as exc:
            print(f"{name}: {exc}")
            problems += 1
    return problems


def _check_splits(name: str, qs: QuerySet) -> int:
    data = yaml.safe_load(qs.path.read_text(encoding="utf-8"))
    marked = {str(q["id"]): q.get("split") for q in data["queries"]}
    problems = 0
    for qid, want in assign_splits(name, [q.id for q in qs.queries]).items():
        if marked[qid] is not None and marked[qid] != want:
            print(f"{name} {qid}: split {marked[qid]} but the seeded split is {want}")
            problems += 1
    return problems


def _check_labels(name: str, qs: QuerySet, roots: dict[str, Path]) -> int:
    problems = 0
    print(f"== {name}: {len(qs.queries)} queries over {len(qs.stores)} store(s)")
    for spec, root in roots.items():
        print(f"   {spec}: {len(memory_files(root))} memories")
    for q in qs.queries:
        root = roots[q.store.spec]
        texts = {}
        for rel in q.relevant:
            path = root / f"{rel}.md"
            if path.is_file():
                texts[rel] = path.read_text(encoding="utf-8", errors="replace")
            else:
                print(f"   {q.id}: relevant {rel!r} is not a memory of {q.store.repo}")
                problems += 1
        if not q.word:
            continue
        n = containing(root, q.query)
        line = f"   {q.id} word {q.query!r}: {n} memories of its store contain it"
        line += f" (search must return >= {-(-9 * n // 10)})"
        if len(roots) > 1:
            pool = sum(containing(r, q.query) for r in roots.values())
            line += f"; {pool} in the set's pool (>= {-(-9 * pool // 10)})"
        print(f"{line}; labelled {len(q.relevant)}")
        for rel, text in texts.items():
            if q.query.casefold() not in text.casefold():
                print(f"   {q.id}: relevant {rel!r} does not contain {q.query!r}")
                problems += 1
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="verify every set against its stores")
    parser.add_argument("--list", action="store_true", help="counts per set, kind and split")
    parser.add_argument("sets", nargs="*", help=f"sets to use (default all: {', '.join(SETS)})")
    args = parser.parse_args(argv)
    try:
        qsets = {name: load(name) for name in (args.sets or SETS)}
    except DatasetError as exc:
        print(exc, file=sys.stderr)
        return 2
    for line in _summary(qsets):
        print(line)
    if args.check:
        problems = check(qsets)
        print("OK" if not problems else f"{problems} problem(s)")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
