#!/usr/bin/env python3
"""Link counts of the shared corpus by style and status, and the time to index it.

    python bench/links/corpus_counts.py [--no-repo] [--runs N]

The corpus is rjmurillo/ai-agents' `.serena/memories/` at 70241a0; its repository
files (for repository links) come from the mirror of that repository when it is
on this machine (`--no-repo` counts as a store outside any repository).
Prints a markdown table; issue 12 compares it with the issue-5 figures
(3,397 links, 2,960 resolved).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
CORPUS = HERE.parents[2] / "shared" / "corpus" / "ai-agents-memories"
MIRROR = Path("/work/.mirror/rjmurillo+ai-agents/repo")
COMMIT = "70241a006f60813fb0f994dd22872d395b3f4245"


def counts(use_repo: bool) -> Counter[tuple[str, str]]:
    from memory_enhancement.service import MemoryService
    from memory_enhancement.store.disk import Store
    from memory_enhancement.verify.repo import Repository

    with tempfile.TemporaryDirectory() as tmp:
        service = MemoryService(Store(CORPUS), Repository(Path(tmp)))
        service.index.repo = None
        if use_repo and MIRROR.exists():
            from repoview import TreeView

            service.index.repo = TreeView(MIRROR, COMMIT, ".serena/memories")
        with service.index.connect() as conn:
            rows = conn.execute("SELECT kind, status FROM links").fetchall()
    return Counter((kind, status) for kind, status in rows)


def table(found: Counter[tuple[str, str]]) -> str:
    statuses = ["resolved", "dangling", "ambiguous", "repository", "missing", "external"]
    kinds = sorted({k for k, _ in found})
    lines = [
        "| Link style | " + " | ".join(statuses) + " | All links | candidates not linking |",
        "|---|" + "---:|" * (len(statuses) + 2),
    ]
    for kind in [*kinds, "all"]:
        cells = [
            sum(n for (k, s), n in found.items() if s == status and kind in (k, "all"))
            for status in statuses
        ]
        unmatched = sum(n for (k, s), n in found.items() if s == "unmatched" and kind in (k, "all"))
        name = f"**{kind}**" if kind == "all" else kind
        lines.append(
            f"| {name} | "
            + " | ".join(f"{c:,}" for c in cells)
            + f" | {sum(cells):,} | {unmatched:,} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-repo", action="store_true")
    args = parser.parse_args()
    print(table(counts(not args.no_repo)))


if __name__ == "__main__":
    main()
