"""Temporary entry point: truth + seed baseline on requests 2.28.0 -> 2.32.3.

Why it exists: to prove the ground-truth side end to end before the real
verifier is plugged in. It builds the history repo, samples cases, runs the
seed's exact-line rule and prints truth-class counts, scores and timings.
It also writes the cases as JSON (default ``bench/accuracy/out/``, git-ignored)
so memories can be generated from them and ``verify-all --json`` scored with
``score.score(cases, predictions)``.

    python bench/accuracy/run_truth_demo.py [--preset rich] [--n 400] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_history_repo import DEFAULT_CACHE, PRESETS, make_history_repo
from score import format_confusion, format_table, score
from seed_rule import seed_predictions
from truth import DEFAULT_PROPORTIONS, TRUTHS, compute_population, sample_cases, save_cases

HERE = Path(__file__).resolve().parent


def _counts_line(counter: Counter) -> str:
    return (
        "  ".join(f"{t}={counter.get(t, 0)}" for t in TRUTHS) + f"  (total {sum(counter.values())})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="requests")
    ap.add_argument(
        "--repo", type=Path, help="build into this (empty/absent) folder; default: temp folder"
    )
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--algorithm", default="myers", help="git diff algorithm for the truth")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="cases JSON (default out/cases-<preset>-s<seed>.json)",
    )
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    old_spec, new_spec = PRESETS[args.preset]
    hist = make_history_repo(old_spec, new_spec, args.repo, cache_dir=args.cache)
    t1 = time.perf_counter()
    pop = compute_population(hist.path, hist.old, hist.new, algorithm=args.algorithm)
    t2 = time.perf_counter()
    cases = sample_cases(pop.cases, args.n, args.seed)
    t3 = time.perf_counter()
    systems = {
        "seed rule": score(cases, seed_predictions(hist.path, cases)),
        "seed rule (stripped snippet)": score(
            cases, seed_predictions(hist.path, cases, strip_snippet=True)
        ),
    }
    t4 = time.perf_counter()

    out = args.out or HERE / "out" / f"cases-{args.preset}-s{args.seed}.json"
    save_cases(
        out,
        cases,
        meta={
            **hist.to_dict(),
            "n": args.n,
            "seed": args.seed,
            "algorithm": args.algorithm,
            "proportions": DEFAULT_PROPORTIONS,
            "population": dict(pop.counts()),
        },
    )

    print(f"repo {hist.path}\n  A {hist.old} {old_spec}\n  B {hist.new} {new_spec}")
    print(f"cases written to {out}")
    print(f"\npopulation (all citable lines at A): {_counts_line(pop.counts())}")
    print(
        "  moved by kind: "
        + ", ".join(
            f"{k}={v}"
            for k, v in sorted(
                Counter(c.move_kind for c in pop.cases if c.truth == "moved").items()
            )
        )
    )
    if pop.excluded_files:
        print(
            f"  excluded files: {len(pop.excluded_files)} "
            + ", ".join(f"{p} ({r})" for p, r in sorted(pop.excluded_files.items())[:5])
        )
    print(f"sample (n={args.n}, seed={args.seed}): {_counts_line(Counter(c.truth for c in cases))}")
    print(
        "  moved by kind: "
        + ", ".join(
            f"{k}={v}"
            for k, v in sorted(Counter(c.move_kind for c in cases if c.truth == "moved").items())
        )
    )
    flags = {
        "ambiguous block moves": sum(c.ambiguous_move for c in cases),
        "via re-add": sum(c.via_readd for c in cases),
        "stale with text elsewhere in file": sum(
            c.truth == "stale" and c.new_occurrences > 0 for c in cases
        ),
        "duplicate lines at A": sum(c.old_occurrences > 1 for c in cases),
        "not valid but cited line still matches": sum(
            c.truth != "valid" and c.cited_line_matches for c in cases
        ),
    }
    print("  " + "; ".join(f"{k}: {v}" for k, v in flags.items()))
    print()
    print(format_table(systems))
    for name, s in systems.items():
        print()
        print(format_confusion(s, title=name))
    print(
        f"\ntimings: repo {t1 - t0:.2f}s, truth {t2 - t1:.2f}s, sample {t3 - t2:.3f}s, "
        f"seed+score {t4 - t3:.2f}s, total {t4 - t0:.2f}s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
