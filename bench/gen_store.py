"""Generate realistic, deterministic memory stores for the benchmarks.

Usable as a script::

    python bench/gen_store.py OUT --count 10000 --format frontmatter|serena \
        [--citations-per-memory 3] [--links-per-memory 4] [--source-tree PATH] [--seed 0]

and as a module (the benchmarks of issues 2-5 reuse it)::

    from gen_store import cached_store, generate_store, default_source_tree, make_source_repo

Every memory is rendered by the library's own formats (`formats.by_name(...).render`),
so the files are exactly what the tool writes. A memory has a hierarchical
category (2-3 levels), a `# Title`, a few paragraphs of technical prose drawn
from word lists and a large pool of made-up identifiers (so full-text search
has distinct terms to find), tags, timestamps, sometimes an expiry (a few per
cent already expired), links to other memories in both styles, and citations
of real non-blank lines of a real source tree, with the line's text as snippet.

Links: markdown `[Title](relative/path.md)` and `[[wiki]]` bullets under
`## Related` in the body; bare ids and typed `[link:TYPE](id)` under the
tool-managed `## Links` section for serena, and under `## Related` for
frontmatter (whose tool-written `links:` key is left to the tool). A small
share of links dangle (point at memories that do not exist), as in real stores.

Next to the memories the generator writes `.gen-store.json` (hidden, so stores
ignore it): the parameters and, per memory, its path, link targets and styles,
citation count and whether it is expired, for benchmarks that need the truth.
Identical arguments give byte-identical stores, whatever `--jobs` is.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import posixpath
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memory_enhancement.core.memory_paths import normalize_segment
from memory_enhancement.core.model import Citation, Link, Memory, MemoryMeta
from memory_enhancement.store import formats

GENERATOR_VERSION = 2
MANIFEST = ".gen-store.json"
BENCH_DIR = Path(__file__).resolve().parent
CACHE_DIR = BENCH_DIR / ".cache"
DEFAULT_PACKAGE = "rich"
SOURCE_COMMIT_DATE = "2023-12-31T12:00:00+00:00"
_TEXT_SUFFIXES = {".py", ".pyi", ".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".json"}
_TEXT_SUFFIXES |= {".yaml", ".yml", ".js", ".ts", ".html", ".css", ".sh", ".typed"}

# -- vocabulary -----------------------------------------------------------------


def _wordlist(text: str) -> list[str]:
    return text.split()


CATEGORIES = _wordlist("""
architecture/api architecture/api/versioning architecture/data-model architecture/caching
architecture/messaging architecture/storage architecture/decisions
testing/unit testing/integration testing/e2e testing/flaky testing/fixtures
ci/github-actions ci/release ci/build ci/build/cache
security/auth security/auth/oauth security/secrets security/supply-chain
performance/database performance/database/indexes performance/startup performance/memory
debugging/incidents debugging/incidents/2025 debugging/tools
conventions/python conventions/python/typing conventions/typescript conventions/git
conventions/docs deployment/kubernetes deployment/terraform deployment/rollbacks
data/pipelines data/migrations data/analytics agents/prompts agents/tools agents/tools/mcp
agents/memory dependencies/pinning dependencies/upgrades
""")

TECH = _wordlist("""
postgres redis kafka sqlite docker kubernetes terraform nginx grpc graphql react django
fastapi flask pytest mypy ruff celery rabbitmq elasticsearch prometheus grafana
opentelemetry webpack vite typescript rust golang numpy pandas pydantic sqlalchemy alembic
git github-actions gitlab-ci helm ansible jenkins bazel poetry uv npm pnpm eslint prettier
jest playwright cypress sentry datadog s3 dynamodb lambda cloudfront vault consul envoy
istio minio clickhouse duckdb airflow dbt spark mongodb cassandra memcached websockets
oauth jwt openapi protobuf hypothesis click asyncio uvicorn httpx
""")

COMPONENTS = _wordlist("""
auth-middleware billing-service ingestion-pipeline search-indexer rate-limiter session-store
feature-flags migration-runner job-scheduler cache-layer api-gateway event-bus
notification-worker report-generator config-loader plugin-registry cli-parser retry-policy
connection-pool health-check audit-log permission-model upload-handler webhook-dispatcher
metrics-exporter log-shipper build-cache release-pipeline test-harness fixture-factory
query-planner schema-registry token-refresher backup-job data-exporter import-wizard
graph-resolver citation-verifier memory-index dependency-resolver lockfile-updater docs-site
status-page admin-console payment-adapter email-sender pdf-renderer image-resizer
i18n-catalog search-ranking recommendation-model embedding-store prompt-builder agent-loop
tool-router context-window
""")

PROBLEMS = _wordlist("""
race-condition memory-leak deadlock timeout retry-storm n-plus-one-queries cold-start
flaky-test schema-drift clock-skew encoding-error off-by-one stale-cache thundering-herd
connection-exhaustion lock-contention silent-truncation unicode-normalization
path-traversal token-expiry version-skew circular-import slow-startup large-payload
backpressure partial-write duplicate-delivery ordering-violation dangling-reference
orphaned-record zombie-process disk-pressure cpu-throttling hot-partition
fan-out-explosion missing-index stale-snapshot broken-symlink permission-denied
rate-limit-exceeded tls-handshake dns-resolution locale-mismatch timezone-bug
float-rounding integer-overflow regex-backtracking
""")

ACTIONS = [
    "Fix", "Avoid", "Diagnose", "Prevent", "Handle", "Debug", "Mitigate", "Detect",
    "Document", "Measure", "Reduce", "Understand", "Work around", "Guard against",
    "Test for", "Recover from",
]  # fmt: skip

VERBS = _wordlist("""
load save parse render resolve fetch flush build merge split validate normalize encode
decode schedule retry cancel index rank sync prune compact refresh rotate verify
""")
NOUNS = _wordlist("""
state config token batch record snapshot cursor buffer manifest entry request response
handle lease window segment payload header schema plan graph queue worker session
""")
FILLER = _wordlist("""
in practice the root cause turned out to be subtle because several layers were involved
and the logs alone did not show the ordering of events under load during the rollout
""")

_SYLLABLES = _wordlist("""
ka lo ri vex mon dar sel tu pra zin qua bel or tha mi nex ul gor fen si plo ter van
kri dol ash mur eb zo lan tes wik
""")

SENTENCES = [
    "The {C} relies on {T} and started to show {P} once traffic grew past {N} requests per second.",
    "We traced the {P} to `{F}` in the {C}, which held a {T} connection across an await point.",
    "Pinning {T} to {V} made the {P} disappear, but the real fix was to {a} it in `{K}`.",
    "`{K}` wraps the {T} client; every call goes through `{F}` so retries stay in one place.",
    "When {T2} is slow, the {C} falls back to the {I} path, which is where the {P} comes from.",
    "A test that reproduces the {P} needs {N} concurrent workers and a fake {T} clock.",
    "Do not call `{F}` from inside the {C}: it re-enters {T} and the {P} comes back.",
    "The {I} flag controls whether the {C} uses {T} or {T2}; the default changed in {V}.",
    "Measured on the staging cluster, `{F}` takes {M} ms at p50 and about {M2} ms at p99.",
    "After the upgrade to {T} {V}, `{K}` raised on empty batches, which looked like a {P}.",
    "The {C} writes through `{F}` and reads through `{K}`; keep both in step with the {T} schema.",
    "Logging the {I} id at the start of `{F}` made the {P} easy to find in {T2} traces.",
    "The fix for the {P} in the {C} was reviewed twice; the second review found the {I} case.",
    "Our {T} settings for the {C}: pool size {N}, timeout {M} ms, and {I} mode enabled.",
    "Agents asking about the {C} usually want `{F}`, not the older `{K}` helper.",
]

PARAGRAPH_LEADS = [
    "Context.",
    "What happened.",
    "Why it matters.",
    "How we fixed it.",
    "",
    "",
    "",
]

BASE_TIME = datetime(2024, 1, 1, tzinfo=UTC)
END_TIME = datetime(2025, 12, 31, 23, 59, 59, tzinfo=UTC)
FUTURE_TIME = datetime(2031, 1, 1, tzinfo=UTC)


def _pseudo_words(count: int) -> list[str]:
    rng = random.Random(20240101)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < count:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 3, 3, 4))))
        if word not in seen and len(word) > 4:
            seen.add(word)
            words.append(word)
    return words


IDENTS = _pseudo_words(5000)


def _zipf_pick(rng: random.Random, items: list[str]) -> str:
    """A log-uniform pick: a few items are common, most are rare."""
    return items[int(len(items) ** rng.random()) - 1]


def _words(hyphenated: str) -> str:
    return hyphenated.replace("-", " ")


# -- the source tree cited ------------------------------------------------------


@dataclass
class SourceTree:
    """Text files under a root and their citable lines (non-blank, meaningful)."""

    root: Path
    files: list[str] = field(default_factory=list)
    lines: dict[str, list[str]] = field(default_factory=dict)
    candidates: dict[str, list[int]] = field(default_factory=dict)
    weights: list[float] = field(default_factory=list)

    @classmethod
    def scan(cls, root: Path) -> SourceTree:
        tree = cls(Path(root).resolve())
        found = []
        for folder, dirs, names in os.walk(tree.root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for name in names:
                if Path(name).suffix in _TEXT_SUFFIXES or name in ("LICENSE", "README"):
                    found.append(Path(folder, name).relative_to(tree.root).as_posix())
        for rel in sorted(found):
            try:
                data = (tree.root / rel).read_bytes()
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if "\x00" in text:
                continue
            lines = text.split("\n")  # lines as the library's repo.py counts them
            if lines and lines[-1] == "":
                lines.pop()
            lines = [line.rstrip("\r") for line in lines]
            good = [n + 1 for n, line in enumerate(lines) if _citable(line)]
            if good:
                tree.files.append(rel)
                tree.lines[rel] = lines
                tree.candidates[rel] = good
                tree.weights.append(math.sqrt(len(good)))  # big data tables less dominant
        if not tree.files:
            raise SystemExit(f"no citable text files under {root}")
        return tree


def _citable(line: str) -> bool:
    text = line.strip()
    return 8 <= len(text) <= 160 and sum(c.isalnum() for c in text) >= 4


def default_source_tree() -> Path:
    """A git repository holding a copy of an installed pure-Python package (cached)."""
    module = __import__(DEFAULT_PACKAGE)
    version = _package_version(DEFAULT_PACKAGE)
    dest = CACHE_DIR / "source-trees" / f"{DEFAULT_PACKAGE}-{version}"
    if not (dest / ".git").is_dir():
        make_source_repo(dest, Path(module.__file__ or "").parent)
    return dest


def _package_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def make_source_repo(dest: Path, package_dir: Path | str) -> Path:
    """Copy a package folder into `dest/<name>/`, `git init` and commit it reproducibly.

    `package_dir` is a folder, or the name of an importable package. The commit
    has fixed author, committer and dates, so the same files give the same hash.
    """
    if isinstance(package_dir, str) and not Path(package_dir).is_dir():
        module = __import__(package_dir)
        package_dir = Path(module.__file__ or "").parent
    source = Path(package_dir)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".source-", dir=dest.parent))
    try:
        shutil.copytree(
            source, work / source.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid",
            "GIT_AUTHOR_DATE": SOURCE_COMMIT_DATE,
            "GIT_COMMITTER_DATE": SOURCE_COMMIT_DATE,
        }
        git = ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
        subprocess.run([*git, "init", "-q"], cwd=work, check=True, env=env)
        subprocess.run([*git, "add", "-A"], cwd=work, check=True, env=env)
        message = f"{source.name} as installed"
        subprocess.run([*git, "commit", "-q", "-m", message], cwd=work, check=True, env=env)
        if dest.exists():
            shutil.rmtree(dest)
        work.rename(dest)
    finally:
        if work.exists():
            shutil.rmtree(work)
    return dest


# -- planning -------------------------------------------------------------------


@dataclass(frozen=True)
class Params:
    count: int
    format: str
    citations_per_memory: int = 3
    links_per_memory: int = 4
    seed: int = 0
    source_tree: str | None = None
    expired_fraction: float = 0.03
    expiring_fraction: float = 0.05
    dangling_fraction: float = 0.02
    url_fraction: float = 0.0
    verified_from: str | None = None  # ISO dates: Verified stamps drawn between them
    verified_to: str | None = None  # (default: the memory's updated date)


@dataclass(frozen=True)
class Plan:
    """What every memory of the store is called, decided before any is written."""

    paths: list[str]
    titles: list[str]
    topics: list[tuple[str, str, str, str]]  # tech, component, problem, action


def _rng(seed: int, index: int, salt: int) -> random.Random:
    return random.Random((seed * 1_000_003 + index) * 7 + salt)


def plan_store(params: Params) -> Plan:
    cat_weights = [1 / (n + 1) ** 0.8 for n in range(len(CATEGORIES))]
    order = list(CATEGORIES)
    random.Random(params.seed).shuffle(order)
    paths, titles, topics = [], [], []
    used: set[str] = set()
    for i in range(params.count):
        rng = _rng(params.seed, i, 1)
        category = rng.choices(order, cat_weights)[0]
        tech, component = rng.choice(TECH), rng.choice(COMPONENTS)
        problem, action = rng.choice(PROBLEMS), rng.choice(ACTIONS)
        style = rng.randrange(3)
        if style == 0:
            title = f"{action} {_words(problem)} in the {_words(component)}"
        elif style == 1:
            title = f"{_words(component).capitalize()}: {_words(problem)} with {tech}"
        else:
            title = f"{action} {tech} {_words(problem)} ({_words(component)})"
        slug = normalize_segment(title)
        name, n = slug, 2
        while name in used:
            name, n = f"{slug}-{n}", n + 1
        used.add(name)
        paths.append(f"{category}/{name}")
        titles.append(title)
        topics.append((tech, component, problem, action))
    return Plan(paths, titles, topics)


# -- one memory -----------------------------------------------------------------

_STATE: dict[str, Any] = {}


def _stamp(moment: datetime) -> datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _sentence(rng: random.Random, topic: tuple[str, str, str, str], idents: list[str]) -> str:
    tech, component, problem, action = topic
    ident = rng.choice(idents)
    template = rng.choice(SENTENCES)
    return template.format(
        C=_words(component),
        T=tech,
        T2=rng.choice(TECH),
        P=_words(problem),
        F=f"{rng.choice(VERBS)}_{ident}_{rng.choice(NOUNS)}",
        K=f"{ident.capitalize()}{rng.choice(NOUNS).capitalize()}",
        I=rng.choice(idents),
        N=rng.choice((4, 8, 16, 50, 200, 1000, 5000)),
        M=rng.randint(2, 400),
        M2=rng.randint(400, 4000),
        V=f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}",
        a=action.lower(),
    )


def _prose(rng: random.Random, topic: tuple[str, str, str, str], wiki: list[str]) -> str:
    idents = [_zipf_pick(rng, IDENTS) for _ in range(rng.randint(2, 4))]
    paragraphs = []
    for _ in range(rng.randint(2, 4)):
        sentences = [_sentence(rng, topic, idents) for _ in range(rng.randint(2, 5))]
        if rng.random() < 0.3:
            sentences.append(" ".join(rng.sample(FILLER, 8)).capitalize() + ".")
        lead = rng.choice(PARAGRAPH_LEADS)
        paragraphs.append((f"**{lead}** " if lead else "") + " ".join(sentences))
    roll = rng.random()
    if roll < 0.25:
        steps = [_sentence(rng, topic, idents) for _ in range(rng.randint(2, 4))]
        paragraphs.append("Steps:\n\n" + "\n".join(f"{n}. {s}" for n, s in enumerate(steps, 1)))
    elif roll < 0.45:
        ident = idents[0]
        call = f"{rng.choice(VERBS)}_{ident}_{rng.choice(NOUNS)}"
        code = f"```python\nresult = {call}(batch_size={rng.choice((8, 64, 512))})\n```"
        paragraphs.append(f"Call it like this:\n\n{code}")
    for target in wiki:
        paragraphs.append(f"See [[{target}]] for the {_words(topic[1])} side of this.")
    return "\n\n".join(paragraphs)


def _times(rng: random.Random) -> tuple[datetime, datetime]:
    span = (END_TIME - BASE_TIME).total_seconds()
    created = BASE_TIME + timedelta(seconds=rng.random() * span * 0.9)
    updated = created + timedelta(seconds=rng.random() * 120 * 86400)
    return _stamp(created), _stamp(min(updated, END_TIME))


def _citations(rng: random.Random, n: int, verified: str, params: Params) -> list[Citation]:
    tree: SourceTree | None = _STATE.get("tree")
    out: list[Citation] = []
    file = None
    while len(out) < n:
        if rng.random() < params.url_fraction or tree is None:
            page = _zipf_pick(rng, IDENTS)
            out.append(Citation(f"https://docs.example.com/{rng.choice(TECH)}/{page}"))
            continue
        if file is None or rng.random() < 0.35:
            file = rng.choices(tree.files, tree.weights)[0]
        line = rng.choice(tree.candidates[file])
        lines = tree.lines[file]
        snippet = " ".join(lines[line - 1].split())
        end_line = None
        if rng.random() < 0.15:
            end_line = min(len(lines), line + rng.randint(1, 6))
            end_line = end_line if end_line > line else None
        out.append(Citation(file, line, end_line, snippet, verified))
    return out


def _link_styles(rng: random.Random, n: int) -> list[str]:
    styles = []
    for _ in range(n):
        roll = rng.random()
        style = "markdown" if roll < 0.5 else "wiki" if roll < 0.75 else "bare"
        if style == "bare" and rng.random() < 0.2:
            style = "typed"
        styles.append(style)
    return styles


def _link_targets(rng: random.Random, i: int, n: int, plan: Plan, params: Params) -> list[int]:
    """Indices of linked memories (-1 = dangling): mostly near neighbours, some far."""
    count = len(plan.paths)
    targets: list[int] = []
    for _ in range(n):
        if count < 2:
            break
        if rng.random() < params.dangling_fraction:
            targets.append(-1)
            continue
        for _attempt in range(8):
            near = rng.random() < 0.6
            j = (i + rng.randint(-50, 50)) % count if near else rng.randrange(count)
            if j != i and j not in targets:
                break
        targets.append(j)
    return targets


def build_memory(i: int) -> tuple[Memory, dict[str, Any]]:
    """Memory number i of the planned store, and its manifest row."""
    params: Params = _STATE["params"]
    plan: Plan = _STATE["plan"]
    rng = _rng(params.seed, i, 2)
    path, title, topic = plan.paths[i], plan.titles[i], plan.topics[i]
    folder = posixpath.dirname(path)
    targets = _link_targets(rng, i, params.links_per_memory, plan, params)
    styles = _link_styles(rng, len(targets))
    wiki_inline, related, managed = [], [], []
    for j, style in zip(targets, styles, strict=True):
        target_path = plan.paths[j] if j >= 0 else f"{folder}/{_zipf_pick(rng, IDENTS)}-removed"
        target_title = plan.titles[j] if j >= 0 else "A memory that was removed"
        name = target_path.rsplit("/", 1)[-1]
        if style == "markdown":
            rel = posixpath.relpath(target_path + ".md", folder)
            related.append(f"- [{target_title}]({rel})")
        elif style == "wiki":
            wiki = target_path if rng.random() < 0.5 else name
            if rng.random() < 0.3:
                wiki_inline.append(wiki)
            else:
                related.append(f"- [[{wiki}]]")
        else:
            kind = (
                rng.choice(("depends_on", "supersedes", "related")) if style == "typed" else "link"
            )
            managed.append(Link(target_path, kind))
    body = f"# {title}\n\n{_prose(rng, topic, wiki_inline)}\n"
    if params.format == "frontmatter":
        related += [
            f"- [link:{k.type}]({k.target})" if k.type != "link" else f"- {k.target}"
            for k in managed
        ]
        managed = []
    if related:
        body += "\n## Related\n\n" + "\n".join(related) + "\n"

    created, updated = _times(rng)
    expires = None
    roll = rng.random()
    if roll < params.expired_fraction:
        expires = _stamp(
            updated + timedelta(seconds=rng.random() * (END_TIME - updated).total_seconds())
        )
    elif roll < params.expired_fraction + params.expiring_fraction:
        expires = _stamp(FUTURE_TIME + timedelta(days=rng.randrange(900)))
    tech, component, problem, _ = topic
    tags = [tech, path.split("/", 1)[0], component.split("-")[0], problem.split("-")[0]]
    tags = list(dict.fromkeys(tags[: rng.randint(2, 4)]))
    verified = updated.date().isoformat()
    if params.verified_from and params.verified_to:
        # A separate generator, so that stores without the option stay byte-identical.
        first = datetime.fromisoformat(params.verified_from)
        span = (datetime.fromisoformat(params.verified_to) - first).days
        verified = (first + timedelta(days=_rng(params.seed, i, 3).randint(0, span))).date()
        verified = verified.isoformat()
    citations = _citations(rng, params.citations_per_memory, verified, params)
    meta = MemoryMeta(
        created_at=created,
        updated_at=updated,
        tags=tuple(tags),
        source=rng.choice(("cli", "cli", "mcp", "mcp", "mcp", "file")),
        expires_at=expires,
        citations=tuple(citations),
    )
    memory = Memory(path, body, meta, tuple(managed), params.format)
    row = {
        "path": path,
        "links": [[j, s] for j, s in zip(targets, styles, strict=True)],
        "citations": len(citations),
        "expired": bool(expires and expires <= END_TIME),
    }
    return memory, row


def memoize_yaml_scalars() -> None:
    """Cache the frontmatter format's one-value YAML rendering in this process.

    `flow` is a pure function of its value that runs PyYAML's pure-Python
    emitter, about 0.1 ms a call and most of the time of a frontmatter render.
    Values repeat a lot (paths, line numbers, dates, snippets), so caching it
    makes generating 100k memories several times faster. The output is the
    same bytes: the library's own function computes every value once.
    """
    from memory_enhancement.store.formats import frontmatter_doc as frontmatter

    original = getattr(frontmatter, "flow", None)
    if original is None or getattr(original, "memoized", False):
        return
    cache: dict[Any, str] = {}

    def flow(value: Any) -> str:
        key = (type(value), tuple(value) if isinstance(value, list) else value)
        try:
            return cache[key]
        except KeyError:
            cache[key] = result = original(value)
            return result
        except TypeError:  # unhashable (a mapping)
            return str(original(value))

    flow.memoized = True  # type: ignore[attr-defined]
    frontmatter.flow = flow


def _write_chunk(bounds: tuple[int, int]) -> list[dict[str, Any]]:
    out: Path = _STATE["out"]
    fmt = formats.by_name(_STATE["params"].format)
    made: set[str] = set()
    rows = []
    for i in range(*bounds):
        memory, row = build_memory(i)
        file = out / (memory.path + ".md")
        folder = str(file.parent)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        with open(file, "wb") as handle:
            handle.write(fmt.render(None, memory).encode("utf-8"))
        rows.append(row)
    return rows


# -- the store ------------------------------------------------------------------


@dataclass
class Generated:
    root: Path
    params: Params
    seconds: float
    rows: list[dict[str, Any]]

    @property
    def paths(self) -> list[str]:
        return [row["path"] for row in self.rows]

    def live_paths(self) -> list[str]:
        """Paths of the memories that are not expired (what `get` returns)."""
        return [row["path"] for row in self.rows if not row["expired"]]


def generate_store(
    out: Path | str,
    count: int,
    fmt: str = "frontmatter",
    *,
    citations_per_memory: int = 3,
    links_per_memory: int = 4,
    source_tree: Path | str | None = None,
    seed: int = 0,
    jobs: int | None = None,
    force: bool = False,
    memoize: bool = True,
    **fractions: Any,
) -> Generated:
    """Write a store of `count` memories to `out` (which must not exist unless force)."""
    formats.by_name(fmt)  # KeyError on an unknown format
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not force:
            raise FileExistsError(f"{out} exists and is not empty (use force)")
        shutil.rmtree(out)
    tree = None
    if citations_per_memory > 0 and fractions.get("url_fraction", 0.0) < 1:
        tree = SourceTree.scan(Path(source_tree) if source_tree else default_source_tree())
    params = Params(
        count,
        fmt,
        citations_per_memory,
        links_per_memory,
        seed,
        str(tree.root) if tree else None,
        **fractions,
    )
    started = time.perf_counter()
    if memoize:
        memoize_yaml_scalars()
    _STATE.clear()
    _STATE.update(params=params, plan=plan_store(params), tree=tree, out=out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = max(1, min(jobs or os.cpu_count() or 1, math.ceil(count / 2000)))
    step = max(1, math.ceil(count / (jobs * 8)))
    chunks = [(lo, min(count, lo + step)) for lo in range(0, count, step)]
    rows: list[dict[str, Any]] = []
    if jobs == 1:
        results: Any = map(_write_chunk, chunks)
        pool = None
    else:
        pool = multiprocessing.get_context("fork").Pool(jobs)
        results = pool.imap(_write_chunk, chunks)
    try:
        for chunk_rows in results:
            rows.extend(chunk_rows)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    seconds = time.perf_counter() - started
    manifest = {
        "generator_version": GENERATOR_VERSION,
        "params": asdict(params),
        "seconds": round(seconds, 3),
        "memories": rows,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, separators=(",", ":")), encoding="utf-8")
    _STATE.clear()
    return Generated(out, params, seconds, rows)


def load_store(root: Path | str) -> Generated | None:
    """A generated store from its manifest, or None when it is absent or incomplete."""
    root = Path(root)
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("generator_version") != GENERATOR_VERSION:
        return None
    return Generated(root, Params(**manifest["params"]), manifest["seconds"], manifest["memories"])


def check_store(root: Path | str) -> list[str]:
    """Read every memory back with the library and compare it with the manifest.

    Returns the problems found (empty when every file parses, in the expected
    format, with the citations and links the generator wrote).
    """
    from memory_enhancement.store.disk import Store

    generated = load_store(root)
    if generated is None:
        return [f"{root}: no manifest of this generator version"]
    store = Store(Path(root))
    problems = []
    for row in generated.rows:
        loaded = store.read(row["path"])
        memory = loaded.doc.memory
        found = (memory.format, len(memory.meta.citations), len(memory.links or ()))
        wanted = (generated.params.format, row["citations"], len(row["links"]))
        if found != wanted or loaded.doc.problems:
            problems.append(f"{row['path']}: read {found}, wrote {wanted} {loaded.doc.problems}")
    return problems


def cached_store(
    count: int,
    fmt: str,
    *,
    citations_per_memory: int = 3,
    links_per_memory: int = 4,
    source_tree: Path | str | None = None,
    seed: int = 0,
) -> Generated:
    """A generated store under `bench/.cache/stores/`, made once and reused.

    The source tree defaults to `default_source_tree()`, a git repository, so the
    store's citations can be verified with `--repo-root` that tree.
    """
    tree = Path(source_tree).resolve() if source_tree else default_source_tree()
    key = f"{fmt}-{count}-c{citations_per_memory}-l{links_per_memory}-s{seed}-{tree.name}"
    root = CACHE_DIR / "stores" / key
    found = load_store(root)
    if found is not None and found.params.source_tree == str(tree):
        return found
    return generate_store(
        root,
        count,
        fmt,
        citations_per_memory=citations_per_memory,
        links_per_memory=links_per_memory,
        source_tree=tree,
        seed=seed,
        force=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to create (the store)")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--format", choices=("frontmatter", "serena"), default="frontmatter")
    parser.add_argument("--citations-per-memory", type=int, default=3)
    parser.add_argument("--links-per-memory", type=int, default=4)
    parser.add_argument(
        "--source-tree",
        type=Path,
        help=f"tree to cite (default: a git copy of the installed {DEFAULT_PACKAGE!r} package)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, help="worker processes (default: CPU count)")
    parser.add_argument("--expired-fraction", type=float, default=0.03)
    parser.add_argument("--expiring-fraction", type=float, default=0.05)
    parser.add_argument("--dangling-fraction", type=float, default=0.02)
    parser.add_argument("--url-fraction", type=float, default=0.0)
    parser.add_argument(
        "--verified-between",
        nargs=2,
        metavar=("FROM", "TO"),
        help="draw Verified stamps between two ISO dates (default: each memory's updated date)",
    )
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")
    parser.add_argument(
        "--no-memoize", action="store_true", help="do not cache YAML scalar rendering (slower)"
    )
    parser.add_argument(
        "--make-source-repo",
        metavar="PACKAGE",
        help="only copy an installed package into OUT as a git repository, and exit",
    )
    parser.add_argument(
        "--check", action="store_true", help="read the store back and compare (slower)"
    )
    args = parser.parse_args(argv)
    if args.make_source_repo:
        print(make_source_repo(args.out, args.make_source_repo))
        return 0
    try:
        result = generate_store(
            args.out,
            args.count,
            args.format,
            citations_per_memory=args.citations_per_memory,
            links_per_memory=args.links_per_memory,
            source_tree=args.source_tree,
            seed=args.seed,
            jobs=args.jobs,
            force=args.force,
            memoize=not args.no_memoize,
            expired_fraction=args.expired_fraction,
            expiring_fraction=args.expiring_fraction,
            dangling_fraction=args.dangling_fraction,
            url_fraction=args.url_fraction,
            **(
                {"verified_from": args.verified_between[0], "verified_to": args.verified_between[1]}
                if args.verified_between
                else {}
            ),
        )
    except FileExistsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"wrote {args.count} {args.format} memories to {result.root} in {result.seconds:.1f} s "
        f"(citing {result.params.source_tree})"
    )
    if args.check:
        problems = check_store(result.root)
        for problem in problems[:20]:
            print(f"problem: {problem}", file=sys.stderr)
        print(f"check: {len(problems)} problems in {len(result.rows)} memories")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
