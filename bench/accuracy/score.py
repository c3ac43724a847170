"""Score citation verdicts against the git-derived truth.

Why these metrics: the product's promise is "tell me when a memory can no
longer be trusted, without crying wolf, and point me to where the code went".

* Stale detection is a binary classifier. Positive = the citation no longer
  holds: truth in {stale, missing}; predicted positive = verdict in
  {stale, missing}. Precision = share of alarms that were right (false alarms
  erode trust in the verifier); recall = share of broken citations caught.
  ``moved`` counts as *negative* on both sides: the memory is still true, it
  just points to a new place.
* Relocation accuracy = among truth-``moved`` cases, the share predicted
  ``moved`` with exactly the right (current_path, current_line). This is what
  the seed rule cannot do at all. Also reported without ambiguous block moves
  (where the "right" target was a deterministic pick among equals) and per
  ``move_kind``.
* A confusion matrix (truth rows x predicted columns) shows everything else,
  including verdicts outside the four classes (e.g. ``error``), which are kept
  as their own column and count as negative.

Predictions are plain dicts ``{"status", "current_path", "current_line"}`` in
case order, so any system (the seed rule, the real ``verify-all --json``) can
be scored without importing it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

TRUTHS = ("valid", "moved", "stale", "missing")
POSITIVE = frozenset({"stale", "missing"})


def _norm_path(p: object) -> str | None:
    """Compare paths as repo-relative POSIX strings (``./a\\b`` == ``a/b``)."""
    if p is None or p == "":
        return None
    s = str(p).replace("\\", "/")
    while s.startswith("./"):
        s = s[2:]
    return s


def _norm_line(x: object) -> int | None:
    if x is None or x == "":
        return None
    try:
        return int(str(x))
    except ValueError:
        return None


@dataclass
class Scores:
    """All figures for one system on one case set."""

    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    relocated: int  # truth moved, predicted moved at the right place
    moved_total: int
    relocated_unambiguous: int
    moved_unambiguous: int
    status_correct: int  # predicted status == truth status (location ignored)
    confusion: dict[str, Counter] = field(default_factory=dict)  # truth -> Counter(pred)
    relocation_by_kind: dict[str, tuple[int, int]] = field(
        default_factory=dict
    )  # kind -> (ok, total)

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def relocation_accuracy(self) -> float | None:
        return self.relocated / self.moved_total if self.moved_total else None

    @property
    def relocation_accuracy_unambiguous(self) -> float | None:
        return (
            self.relocated_unambiguous / self.moved_unambiguous if self.moved_unambiguous else None
        )

    @property
    def status_accuracy(self) -> float | None:
        return self.status_correct / self.n if self.n else None


def _get(case: object, name: str):
    return case[name] if isinstance(case, Mapping) else getattr(case, name)


def score(cases: Sequence, predictions: Sequence[Mapping]) -> Scores:
    """Score ``predictions`` (dicts, in case order) against ``cases``.

    ``cases`` may be ``truth.Case`` objects or their ``to_dict()`` form.
    Raises ``ValueError`` on a length mismatch: silently zipping would shift
    every prediction onto the wrong case.
    """
    if len(cases) != len(predictions):
        raise ValueError(f"{len(predictions)} predictions for {len(cases)} cases")
    tp = fp = fn = tn = 0
    relocated = moved_total = rel_unamb = moved_unamb = status_ok = 0
    confusion: dict[str, Counter] = {t: Counter() for t in TRUTHS}
    by_kind: dict[str, list[int]] = {}
    for case, pred in zip(cases, predictions, strict=True):
        truth = _get(case, "truth")
        status = str(pred.get("status") or "none").lower()
        confusion.setdefault(truth, Counter())[status] += 1
        status_ok += status == truth
        pos_truth, pos_pred = truth in POSITIVE, status in POSITIVE
        tp += pos_truth and pos_pred
        fp += (not pos_truth) and pos_pred
        fn += pos_truth and not pos_pred
        tn += (not pos_truth) and not pos_pred
        if truth == "moved":
            ok = (
                status == "moved"
                and _norm_path(pred.get("current_path")) == _norm_path(_get(case, "current_path"))
                and _norm_line(pred.get("current_line")) == _get(case, "current_line")
            )
            ambiguous = bool(_get(case, "ambiguous_move"))
            moved_total += 1
            relocated += ok
            if not ambiguous:
                moved_unamb += 1
                rel_unamb += ok
            kind = _get(case, "move_kind") or "?"
            slot = by_kind.setdefault(kind, [0, 0])
            slot[0] += ok
            slot[1] += 1
    return Scores(
        n=len(cases),
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        relocated=relocated,
        moved_total=moved_total,
        relocated_unambiguous=rel_unamb,
        moved_unambiguous=moved_unamb,
        status_correct=status_ok,
        confusion=confusion,
        relocation_by_kind={k: (v[0], v[1]) for k, v in sorted(by_kind.items())},
    )


# --------------------------------------------------------------------------- rendering


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:5.1f}%"


def _ratio(ok: int, total: int) -> str:
    return f"{_pct(ok / total if total else None)} ({ok}/{total})"


def format_table(systems: Mapping[str, Scores]) -> str:
    """Metrics of several systems side by side (one column per system)."""
    names = list(systems)
    kinds = sorted({k for s in systems.values() for k in s.relocation_by_kind})
    rows: list[tuple[str, list[str]]] = [
        ("cases", [str(s.n) for s in systems.values()]),
        ("stale precision", [_ratio(s.tp, s.tp + s.fp) for s in systems.values()]),
        ("stale recall", [_ratio(s.tp, s.tp + s.fn) for s in systems.values()]),
        ("stale F1", [_pct(s.f1) for s in systems.values()]),
        ("relocation accuracy", [_ratio(s.relocated, s.moved_total) for s in systems.values()]),
        (
            "  unambiguous moves",
            [_ratio(s.relocated_unambiguous, s.moved_unambiguous) for s in systems.values()],
        ),
    ]
    for k in kinds:
        rows.append(
            (
                f"  move_kind={k}",
                [_ratio(*s.relocation_by_kind.get(k, (0, 0))) for s in systems.values()],
            )
        )
    rows.append(("status accuracy", [_ratio(s.status_correct, s.n) for s in systems.values()]))
    return _grid(["metric", *names], [[label, *vals] for label, vals in rows])


def format_confusion(scores: Scores, title: str = "") -> str:
    """Truth (rows) x predicted verdict (columns) counts."""
    preds = list(TRUTHS) + sorted({p for c in scores.confusion.values() for p in c} - set(TRUTHS))
    rows = [
        [
            f"truth={t}",
            *[str(scores.confusion.get(t, Counter())[p]) for p in preds],
            str(sum(scores.confusion.get(t, Counter()).values())),
        ]
        for t in scores.confusion
    ]
    table = _grid(["", *[f"pred={p}" for p in preds], "total"], rows)
    return f"{title}\n{table}" if title else table


def _grid(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(r: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )

    return "\n".join([fmt(header), "  ".join("-" * w for w in widths), *[fmt(r) for r in rows]])
