"""Ground truth for citation verification, derived from git's own diff.

Why git's diff: a benchmark is only as honest as its labels. Hand labels do
not scale and a home-made matcher would just be a second verifier. ``git diff
-M old new`` is an independent, widely trusted account of what happened to
every line between two commits, so the truth here is *mechanical*: for each
sampled line of ``old`` we ask the diff where that line went.

Rules (``old line L of path P`` -> verdict at ``new``):

* P is not touched by the diff                      -> ``valid`` at (P, L).
* P was deleted and git found no rename target      -> ``missing``.
* L lies outside every deleted range of P's hunks   -> unchanged line; it is now
  at (P', L') with P' = rename target or P. ``valid`` if (P', L') == (P, L),
  otherwise ``moved`` (``move_kind`` = ``rename`` if P' != P, else ``shift``).
* L is deleted by a hunk:
    - if the same diff *adds* a line with the same whitespace-normalised text
      in P' (the same file, or its rename target), the line was re-added
      (a block move, a re-indent, a newline-at-EOF fix...). It goes to that
      added line: ``valid`` if that is (P, L) again, else ``moved`` with
      ``move_kind='block'``. With several candidates (or several deleted lines
      competing for them) the choice is deterministic and the case is flagged
      ``ambiguous_move=True`` (see ``_choose_readd``).
    - otherwise ``stale`` (the file still exists at P').

"Whitespace-normalised" means ``" ".join(text.split())``: leading/trailing
whitespace removed and internal runs collapsed, matching the product's
whitespace-insensitive comparison.

Costs: two ``git diff`` calls (``--raw -z`` for exact file-level statuses and
paths, ``-U0`` for hunk ranges), two ``git ls-tree`` and one
``git cat-file --batch``, whatever the number of cases.

Sampling (``build_cases``): every eligible line of ``old`` gets a truth, then
``n`` cases are drawn per truth class (stratified; see ``DEFAULT_PROPORTIONS``)
so rare classes (``missing``, block moves) are represented. Inside ``moved`` the
quota is split evenly over ``move_kind`` (shift / rename / block) because a
uniform draw would be almost all shifts. Lines are *not* required to be unique
in their file: duplicate lines are part of the test, and ``old_occurrences`` /
``new_occurrences`` let a report separate them.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _git import cat_blobs, diff_pairs, ls_tree, rev_parse

TRUTHS = ("valid", "moved", "stale", "missing")
MOVE_KINDS = ("shift", "rename", "block")

#: Share of the sample per truth class. Why these numbers: ``moved`` is the
#: class the product adds over the seed rule, so it gets the largest share;
#: ``valid`` must be large enough to measure false alarms (precision);
#: ``missing`` is usually rare in real history and easy, so 10% is plenty.
#: Quota a class cannot fill (e.g. no file was deleted in this history) is
#: redistributed to the other classes in proportion to their weights.
DEFAULT_PROPORTIONS: dict[str, float] = {
    "valid": 0.30,
    "moved": 0.35,
    "stale": 0.25,
    "missing": 0.10,
}

#: Files sampled for citations: source code and prose docs, the things agents cite.
DEFAULT_SUFFIXES = frozenset(
    {".py", ".pyi", ".md", ".rst", ".txt", ".cfg", ".toml", ".ini", ".yml", ".yaml"}
)

#: Characters that ``str.splitlines()`` treats as line breaks but git does not.
#: A file containing them would be numbered differently by git (truth) and by a
#: Python verifier, so such files are excluded instead of producing bogus labels.
_EXTRA_LINE_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def normalize(text: str) -> str:
    """Whitespace-insensitive form of a line (see module docstring)."""
    return " ".join(text.split())


def is_citable(line: str, *, min_chars: int = 8, min_alnum: int = 3) -> bool:
    """Would an agent plausibly cite this line?

    Rule: at least ``min_chars`` non-whitespace characters and ``min_alnum``
    letters/digits. That drops blank lines, ``pass``, ``else:``, ``return``,
    lone brackets, ``\"\"\"`` and rulers like ``# -----`` or ``======``, while
    keeping short but meaningful lines such as ``@property`` or ``import os``.
    """
    compact = "".join(line.split())
    return len(compact) >= min_chars and sum(ch.isalnum() for ch in compact) >= min_alnum


@dataclass(frozen=True)
class Case:
    """One citation and what a perfect verifier should say about it at ``new``.

    ``path``/``line``/``snippet`` are the citation as written at ``old``
    (``snippet`` is the exact line text, without the line terminator).
    ``truth`` is one of ``TRUTHS``; ``current_path``/``current_line`` is where
    the cited text is at ``new`` (for ``valid`` equal to path/line; for
    ``stale`` the path the file lives at now and no line; for ``missing`` both
    ``None``). The remaining fields explain *why*, so reports can slice results:

    * ``move_kind`` (moved cases only): ``block`` if the line was re-added
      (see ``via_readd``), else ``rename`` if the path changed, else ``shift``.
    * ``via_readd``: git shows the line as deleted and re-added (block move,
      re-indent); the truth came from text matching, not from diff context.
    * ``ambiguous_move``: the re-add matching had more than one option.
    * ``old_occurrences``/``new_occurrences``: how many lines of the old file /
      of the file at ``new`` (at its current path) have the same normalised
      text. ``stale`` with ``new_occurrences > 0`` means the text survives
      elsewhere in the file (git still paired this copy with a deletion): a
      verifier that says ``moved`` there is arguably not wrong.
    * ``other_file_readds``: lines with the same text added to *other* files
      by the diff (e.g. code moved between modules); those are not relocations
      under the rules, but are worth knowing for ``stale``/``missing`` cases.
    * ``cited_line_matches``: at ``new``, the file at the *cited* path has the
      snippet (normalised) at the *cited* line. True for every ``valid`` case;
      when True for a ``moved``/``stale`` case, an identical line slid into
      the cited position (duplicates), so a verifier that checks the cited line
      first will say ``valid`` and the git truth is debatable.
    """

    id: str
    path: str
    line: int
    snippet: str
    truth: str
    current_path: str | None
    current_line: int | None
    move_kind: str | None = None
    via_readd: bool = False
    ambiguous_move: bool = False
    old_occurrences: int = 1
    new_occurrences: int = 0
    other_file_readds: int = 0
    cited_line_matches: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Case:
        return cls(**d)


@dataclass
class Population:
    """Truth for *every* eligible line of ``old``, before sampling.

    Kept separate from the sample so a report can show how the real history
    is distributed (and how much the stratification reshapes it).
    """

    old: str
    new: str
    cases: list[Case]
    excluded_files: dict[str, str] = field(default_factory=dict)  # path -> reason

    def counts(self) -> Counter:
        return Counter(c.truth for c in self.cases)


def _split_lines(data: bytes) -> list[str] | None:
    """Git's notion of lines (split on ``\\n`` only), or ``None`` if unusable.

    Unusable = not UTF-8, contains NUL, or contains line breaks other than
    ``\\n``/``\\r\\n`` (see ``_EXTRA_LINE_BREAKS``). A trailing ``\\r`` is the
    CRLF terminator, not part of the snippet.
    """
    if b"\0" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    if any(_EXTRA_LINE_BREAKS.search(ln) for ln in lines):
        return None
    return lines


def _lenient_lines(data: bytes) -> list[str]:
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


# --------------------------------------------------------------------------- line mapping


def map_old_lines(
    n_old: int, hunks: list[tuple[int, int, int, int]]
) -> tuple[list[int | None], list[int]]:
    """Where each old line goes, from ``-U0`` hunks ``(a, b, c, d)``.

    Returns ``(new_line, expected)`` indexed 1..n_old: ``new_line[L]`` is the
    new line number of an unchanged old line, ``None`` if the hunk deletes it;
    ``expected[L]`` is the new-side position a deleted line "would" have had
    (used only to break ties between re-add candidates).

    Hunk semantics: ``-a,b`` deletes old lines a..a+b-1, or for ``b == 0``
    inserts *after* old line a; every old line after the hunk shifts by d-b.
    """
    new_line: list[int | None] = [None] * (n_old + 1)
    expected: list[int] = [0] * (n_old + 1)
    offset = 0
    cur = 1
    for a, b, c, d in sorted(hunks):
        first_deleted = a if b > 0 else a + 1
        while cur < first_deleted and cur <= n_old:
            new_line[cur] = cur + offset
            expected[cur] = cur + offset
            cur += 1
        for k in range(b):
            if cur <= n_old:
                new_line[cur] = None
                expected[cur] = c + min(k, max(d - 1, 0)) if d > 0 else c + 1
            cur += 1
        offset += d - b
    while cur <= n_old:
        new_line[cur] = cur + offset
        expected[cur] = cur + offset
        cur += 1
    return new_line, expected


def _choose_readd(
    ordinal: int,
    n_deleted_same: int,
    candidates: list[int],
    expected: int,
) -> tuple[int, bool]:
    """Pick the added line a deleted line was moved to.

    ``candidates``: new line numbers of added lines with the same normalised
    text (sorted). ``ordinal``: this line's rank among the ``n_deleted_same``
    deleted lines of the file with that text. Unambiguous when exactly one
    line was deleted and one added. Otherwise (flagged ambiguous): if as many
    were added as deleted, pair them in order (a moved block keeps its internal
    order); else take the candidate nearest to ``expected`` (ties: lower line).
    """
    if len(candidates) == 1 and n_deleted_same == 1:
        return candidates[0], False
    if len(candidates) == n_deleted_same:
        return candidates[ordinal], True
    best = min(candidates, key=lambda ln: (abs(ln - expected), ln))
    return best, True


# --------------------------------------------------------------------------- truth


def compute_population(
    repo: Path,
    old: str,
    new: str,
    *,
    suffixes: frozenset[str] | set[str] = DEFAULT_SUFFIXES,
    algorithm: str = "myers",
    min_chars: int = 8,
) -> Population:
    """Truth for every citable line of every sampled file at ``old``.

    ``algorithm`` is passed to ``git diff --diff-algorithm``; ``myers`` is
    git's default, i.e. what ``git diff -M`` does out of the box.
    Every unchanged/re-added line is cross-checked against the file at ``new``
    (its text must be at the computed position); a mismatch raises, because it
    would mean the hunk arithmetic is wrong and every label suspect.
    """
    repo = Path(repo)
    old_sha, new_sha = rev_parse(repo, old), rev_parse(repo, new)
    old_tree, new_tree = ls_tree(repo, old_sha), ls_tree(repo, new_sha)
    pairs = diff_pairs(repo, old_sha, new_sha, algorithm)
    by_old = {p.old_path: p for p in pairs if p.old_path is not None}

    excluded: dict[str, str] = {}
    sampled_paths: list[str] = []
    for path, entry in sorted(old_tree.items()):
        if PurePosixPath(path).suffix.lower() not in suffixes:
            continue
        if entry.mode not in ("100644", "100755"):
            excluded[path] = f"mode {entry.mode}"
            continue
        pair = by_old.get(path)
        if pair is not None and pair.status not in "DMR":
            excluded[path] = f"diff status {pair.status}"
            continue
        sampled_paths.append(path)

    def target_of(path: str) -> str | None:
        pair = by_old.get(path)
        return path if pair is None else pair.new_path

    # One batch read: old versions of sampled files, new versions of their
    # targets, and new versions of every file with added lines (cross-file index).
    want = [old_tree[p].sha for p in sampled_paths]
    want += [new_tree[t].sha for p in sampled_paths if (t := target_of(p)) in new_tree]
    want += [new_tree[p.new_path].sha for p in pairs if p.new_path in new_tree and p.hunks]
    want += [new_tree[p].sha for p in sampled_paths if p in new_tree]
    blobs = cat_blobs(repo, want)

    # Added lines per new path, and a global index by normalised text.
    added_by_path: dict[str, dict[str, list[int]]] = {}
    added_global: Counter = Counter()
    added_global_by_path: dict[str, Counter] = {}
    for p in pairs:
        if p.new_path is None or p.new_path not in new_tree:
            continue
        lines = _lenient_lines(blobs.get(new_tree[p.new_path].sha, b""))
        index: dict[str, list[int]] = defaultdict(list)
        for _a, _b, c, d in p.hunks:
            for ln in range(c, c + d):
                if 1 <= ln <= len(lines):
                    index[normalize(lines[ln - 1])].append(ln)
        added_by_path[p.new_path] = index
        per = Counter({k: len(v) for k, v in index.items()})
        added_global_by_path[p.new_path] = per
        added_global.update(per)

    cases: list[Case] = []
    for path in sampled_paths:
        old_lines = _split_lines(blobs[old_tree[path].sha])
        if old_lines is None:
            excluded[path] = "not UTF-8 text with plain line breaks"
            continue
        pair = by_old.get(path)
        target = target_of(path)
        new_lines: list[str] | None = None
        if target is not None:
            new_lines = _split_lines(blobs[new_tree[target].sha])
            if new_lines is None:
                excluded[path] = f"new version {target} is not UTF-8 text with plain line breaks"
                continue
        old_counts = Counter(normalize(ln) for ln in old_lines)
        # The file a naive verifier opens: whatever is at the cited path now.
        at_cited = _lenient_lines(blobs[new_tree[path].sha]) if path in new_tree else []
        new_counts = (
            Counter(normalize(ln) for ln in new_lines) if new_lines is not None else Counter()
        )

        hunks = pair.hunks if pair is not None else []
        mapped, expected = map_old_lines(len(old_lines), hunks)
        added = added_by_path.get(target, {}) if target is not None else {}
        # Deleted lines grouped by text, to detect competing re-adds.
        deleted_by_text: dict[str, list[int]] = defaultdict(list)
        for ln in range(1, len(old_lines) + 1):
            if mapped[ln] is None:
                deleted_by_text[normalize(old_lines[ln - 1])].append(ln)

        for ln, text in enumerate(old_lines, start=1):
            if not is_citable(text, min_chars=min_chars):
                continue
            key = normalize(text)
            others = added_global[key] - (
                added_global_by_path.get(target, Counter())[key] if target else 0
            )
            base = Case(
                id="",
                path=path,
                line=ln,
                snippet=text,
                truth="missing",
                current_path=None,
                current_line=None,
                old_occurrences=old_counts[key],
                new_occurrences=new_counts[key],
                other_file_readds=others,
                cited_line_matches=ln <= len(at_cited) and normalize(at_cited[ln - 1]) == key,
            )
            if target is None:
                cases.append(base)
                continue
            new_ln = mapped[ln]
            via_readd = ambiguous = False
            if new_ln is None:
                candidates = added.get(key, [])
                if not candidates:
                    cases.append(replace(base, truth="stale", current_path=target))
                    continue
                group = deleted_by_text[key]
                new_ln, ambiguous = _choose_readd(
                    group.index(ln), len(group), candidates, expected[ln]
                )
                via_readd = True
            assert new_lines is not None
            landed = new_lines[new_ln - 1]
            if (normalize(landed) if via_readd else landed) != (key if via_readd else text):
                raise AssertionError(f"line mapping bug: {path}:{ln} -> {target}:{new_ln}")
            if (target, new_ln) == (path, ln):
                truth, kind = "valid", None
            else:
                truth = "moved"
                kind = "block" if via_readd else ("rename" if target != path else "shift")
            cases.append(
                replace(
                    base,
                    truth=truth,
                    current_path=target,
                    current_line=new_ln,
                    move_kind=kind,
                    via_readd=via_readd,
                    ambiguous_move=ambiguous,
                )
            )
    return Population(old=old_sha, new=new_sha, cases=cases, excluded_files=excluded)


# --------------------------------------------------------------------------- sampling


def allocate(n: int, weights: dict[str, float], available: dict[str, int]) -> dict[str, int]:
    """Split ``n`` over strata by ``weights``, capped by ``available``.

    Largest-remainder rounding, then any quota a stratum cannot fill is handed
    to the strata that still have room, in proportion to their weights (equal
    shares if they all weigh 0). Deterministic; never exceeds ``available``.
    """
    alloc = {k: 0 for k in weights}
    remaining = min(n, sum(available.get(k, 0) for k in weights))
    open_ = [k for k in weights if available.get(k, 0) > 0]
    while remaining > 0 and open_:
        total = sum(weights[k] for k in open_)
        shares = {
            k: (weights[k] / total if total > 0 else 1 / len(open_)) * remaining for k in open_
        }
        floors = {k: int(shares[k]) for k in open_}
        left = remaining - sum(floors.values())
        for k in sorted(open_, key=lambda k: (-(shares[k] - floors[k]), list(weights).index(k)))[
            :left
        ]:
            floors[k] += 1
        for k in open_:
            take = min(floors[k], available[k] - alloc[k])
            alloc[k] += take
            remaining -= take
        open_ = [k for k in open_ if alloc[k] < available[k]]
    return alloc


def sample_cases(
    population: list[Case],
    n: int,
    seed: int,
    proportions: dict[str, float] | None = None,
) -> list[Case]:
    """Stratified, deterministic sample of ``population``; ids assigned here.

    Each stratum draws with its own ``random.Random(f"{seed}:{stratum}")`` over
    a population sorted by (path, line), so results depend only on the seed,
    the proportions and the history (not on dict order or hash seeds). The
    result is sorted by (path, line) and ids are ``c0001``... in that order;
    predictions are expected in this order.
    """
    weights = dict(proportions or DEFAULT_PROPORTIONS)
    unknown = set(weights) - set(TRUTHS)
    if unknown:
        raise ValueError(f"unknown truth classes in proportions: {sorted(unknown)}")
    pop = sorted(population, key=lambda c: (c.path, c.line))
    by_truth = {t: [c for c in pop if c.truth == t] for t in weights}
    quota = allocate(n, weights, {t: len(v) for t, v in by_truth.items()})

    chosen: list[Case] = []
    for t in weights:
        if t == "moved":
            by_kind = {k: [c for c in by_truth[t] if c.move_kind == k] for k in MOVE_KINDS}
            sub = allocate(
                quota[t], {k: 1.0 for k in MOVE_KINDS}, {k: len(v) for k, v in by_kind.items()}
            )
            for k in MOVE_KINDS:
                chosen += random.Random(f"{seed}:moved:{k}").sample(by_kind[k], sub[k])
        else:
            chosen += random.Random(f"{seed}:{t}").sample(by_truth[t], quota[t])
    chosen.sort(key=lambda c: (c.path, c.line))
    return [replace(c, id=f"c{i:04d}") for i, c in enumerate(chosen, start=1)]


def build_cases(
    repo: Path,
    old: str,
    new: str,
    n: int = 400,
    seed: int = 0,
    *,
    proportions: dict[str, float] | None = None,
    suffixes: frozenset[str] | set[str] = DEFAULT_SUFFIXES,
    algorithm: str = "myers",
) -> list[Case]:
    """Sample ``n`` citations at ``old`` and label them with their truth at ``new``."""
    pop = compute_population(repo, old, new, suffixes=suffixes, algorithm=algorithm)
    return sample_cases(pop.cases, n, seed, proportions)


# --------------------------------------------------------------------------- persistence


def save_cases(path: Path, cases: list[Case], meta: dict | None = None) -> None:
    """Write cases (plus provenance such as repo and SHAs) as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"meta": meta or {}, "cases": [c.to_dict() for c in cases]}
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def load_cases(path: Path) -> tuple[list[Case], dict]:
    payload = json.loads(Path(path).read_text(encoding="utf-8"))
    return [Case.from_dict(d) for d in payload["cases"]], payload.get("meta", {})
