"""The read floor of `verify-all` (issue 15): read every memory file and every cited file once.

No verifier can do less: it must at least read each memory (or an index of it)
and each file its citations point at. This script does only that, with the
cheapest parsing that still finds the cited paths (the first cell of each table
row, as serena's `## Citations` table writes them, or the path of a `- path:line`
list item, as frontmatter's `citations:` list does), reads each
distinct cited file once and decodes it, and prints how many it read. Its CPU
time is the floor issue 15 compares `verify-all` with (target: within 2x).

    python bench/read_floor.py --dir STORE --repo-root REPO
"""

from __future__ import annotations

import argparse
import os
import sys


def cited_paths(text: str) -> list[str]:
    """Paths cited by one memory, found as cheaply as possible (no validation)."""
    found = []
    for line in text.split("\n"):
        if line.startswith("| "):
            cell = line.split("|", 2)[1].strip()
            if cell and cell != "File" and not cell.startswith("-"):
                found.append(cell)
        elif line.startswith("  - ") and ":" in line:
            found.append(line[4:].rsplit(":", 1)[0].strip("'\""))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True, help="the memory store")
    parser.add_argument("--repo-root", required=True, help="the repository cited")
    args = parser.parse_args(argv)
    cited: set[str] = set()
    memories = 0
    for folder, dirs, names in os.walk(args.dir):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if not name.endswith(".md"):
                continue
            with open(os.path.join(folder, name), "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
            memories += 1
            cited.update(cited_paths(text))
    read = 0
    for rel in cited:
        try:
            with open(os.path.join(args.repo_root, rel), "rb") as handle:
                handle.read().decode("utf-8", "replace")
            read += 1
        except OSError:
            continue
    sys.stdout.write(f"{memories} memories, {read} cited files read\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
