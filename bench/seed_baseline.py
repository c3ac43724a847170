"""The seed's citation verification (seed 004 §4.4.1-4.4.2, §4.4.5), as the speed baseline.

Issue 3 asks `verify-all` to be at least 3 times faster than "the seed's
algorithm, re-implemented in bench/". This is that algorithm, ported line by
line from `shared/seeds/004_*.txt`:

* `Memory.from_serena_file`: read the file, find the `## Citations` table with
  the seed's regex, split rows on `|`, strip every cell, take the snippet as
  `cells[2].strip('`')` and the line only when the cell is all digits (so a
  range `17-25` has no line and is only checked for the file's existence);
  parse links and confidence with the seed's regexes too.
* `verify_citation`: `exists()`, then `read_text().splitlines()` of the cited
  file *for every citation* (no cache), then `snippet in lines[line - 1]`.
* `verify_memory` / `verify_all_memories`: the confidence as a share of valid
  citations; a memory whose parsing raises is skipped with a warning.
* `verify-all --json` prints the seed's list shape (`memory_id`, `valid`,
  `confidence`).

Deviations, each needed to run it on the benchmark's store and nothing else:

* `verify_all_memories` globs recursively (`rglob("*.md")`; the seed globs
  `*.md` in one folder), because generated stores have category folders. Files
  under hidden folders are skipped, as the tool skips them.
* `--repo-root` (default: the current folder, as in the seed, which passes no
  root and falls back to `Path.cwd()`).
* `--citations-json FILE` additionally writes every citation's verdict
  (memory, path, line, snippet as parsed, valid, reason) for the verdict
  comparison; it is not used in timed runs.

Run:

    python bench/seed_baseline.py verify-all --dir STORE --repo-root REPO --json
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

# -- §4.4.1 Core Models ---------------------------------------------------------


@dataclass
class Citation:
    """Reference to a specific code location."""

    path: str
    line: int | None = None
    snippet: str | None = None
    verified: datetime | None = None
    valid: bool | None = None
    mismatch_reason: str | None = None


@dataclass
class Memory:
    """Parsed Serena memory with citations."""

    id: str
    path: Path
    content: str
    citations: list[Citation] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    confidence: float = 0.5
    last_verified: datetime | None = None

    @classmethod
    def from_serena_file(cls, path: Path) -> Memory:
        """Parse a Serena memory markdown file."""
        content = path.read_text()
        memory_id = path.stem

        # Extract citations from ## Citations table
        citations = cls._parse_citations_table(content)

        # Extract links from ## Links section or [[wiki]] style
        links = cls._parse_links(content)

        # Extract confidence from ## Metadata
        confidence = cls._parse_confidence(content)

        return cls(
            id=memory_id,
            path=path,
            content=content,
            citations=citations,
            links=links,
            confidence=confidence,
        )

    @staticmethod
    def _parse_citations_table(content: str) -> list[Citation]:
        """Parse markdown table in ## Citations section."""
        citations = []

        # Find ## Citations section
        match = re.search(
            r"## Citations\s*\n\|[^\n]+\|\s*\n\|[-\s|]+\|\s*\n((?:\|[^\n]+\|\s*\n?)+)", content
        )
        if not match:
            return citations

        # Parse table rows
        for row in match.group(1).strip().split("\n"):
            cells = [c.strip() for c in row.split("|")[1:-1]]
            if len(cells) >= 3:
                citations.append(
                    Citation(
                        path=cells[0],
                        line=int(cells[1]) if cells[1].isdigit() else None,
                        snippet=cells[2].strip("`") if len(cells) > 2 else None,
                        verified=datetime.fromisoformat(cells[3])
                        if len(cells) > 3 and cells[3]
                        else None,
                    )
                )

        return citations

    @staticmethod
    def _parse_links(content: str) -> list[str]:
        """Extract memory links from content."""
        links = []

        # Pattern 1: ## Links section with bullets
        match = re.search(r"## Links\s*\n((?:[-*]\s+.+\n?)+)", content)
        if match:
            links.extend(re.findall(r"[-*]\s+(\S+)", match.group(1)))

        # Pattern 2: [[wiki-style]] links
        links.extend(re.findall(r"\[\[([^\]]+)\]\]", content))

        return list(set(links))

    @staticmethod
    def _parse_confidence(content: str) -> float:
        """Extract confidence score from metadata."""
        match = re.search(r"\*\*Confidence\*\*:\s*([\d.]+)", content)
        return float(match.group(1)) if match else 0.5


# -- §4.4.2 Citation Verification -------------------------------------------------


@dataclass
class VerificationResult:
    memory_id: str
    valid: bool
    total_citations: int
    valid_count: int
    stale_citations: list[Citation]
    confidence: float
    citations: list[Citation] = field(default_factory=list)  # bench: for the comparison
    file: str = ""  # bench: which memory file


def verify_citation(citation: Citation, repo_root: Path) -> Citation:
    """Verify a single citation against the codebase (the seed's exact-line rule)."""
    file_path = repo_root / citation.path

    # Check file exists
    if not file_path.exists():
        citation.valid = False
        citation.mismatch_reason = f"File not found: {citation.path}"
        return citation

    # If no line specified, file existence is enough
    if citation.line is None:
        citation.valid = True
        return citation

    # Check line exists and content matches
    lines = file_path.read_text().splitlines()

    if citation.line > len(lines):
        citation.valid = False
        citation.mismatch_reason = f"Line {citation.line} exceeds file length ({len(lines)})"
        return citation

    actual_line = lines[citation.line - 1]

    # Fuzzy match: snippet should be contained in line
    if citation.snippet and citation.snippet not in actual_line:
        citation.valid = False
        citation.mismatch_reason = (
            f"Snippet mismatch. Expected '{citation.snippet}', got '{actual_line.strip()}'"
        )
        return citation

    citation.valid = True
    return citation


def verify_memory(memory: Memory, repo_root: Path | None = None) -> VerificationResult:
    """Verify all citations in a memory."""
    repo_root = repo_root or Path.cwd()

    stale = []
    valid_count = 0

    for citation in memory.citations:
        verify_citation(citation, repo_root)
        if citation.valid:
            valid_count += 1
        else:
            stale.append(citation)

    # Calculate confidence based on citation validity
    if memory.citations:  # noqa: SIM108 (kept as the seed wrote it)
        confidence = valid_count / len(memory.citations)
    else:
        confidence = memory.confidence  # No citations = use existing confidence

    return VerificationResult(
        memory_id=memory.id,
        valid=len(stale) == 0,
        total_citations=len(memory.citations),
        valid_count=valid_count,
        stale_citations=stale,
        confidence=confidence,
        citations=memory.citations,
        file=str(memory.path),
    )


def verify_all_memories(
    memories_dir: Path, repo_root: Path | None = None
) -> list[VerificationResult]:
    """Batch verify all memories in a directory (recursively: see the module docstring)."""
    repo_root = repo_root or Path.cwd()
    results = []

    for path in memories_dir.rglob("*.md"):
        if any(part.startswith(".") for part in path.relative_to(memories_dir).parts):
            continue
        try:
            memory = Memory.from_serena_file(path)
            if memory.citations:  # Only verify memories with citations
                results.append(verify_memory(memory, repo_root))
        except Exception as e:
            print(f"Warning: Failed to parse {path}: {e}")

    return results


# -- §4.4.5 CLI (verify-all only) ---------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The seed's verify-all (benchmark baseline)")
    sub = parser.add_subparsers(dest="command", required=True)
    verify_all = sub.add_parser("verify-all", help="Verify all memories")
    verify_all.add_argument("--dir", default=".serena/memories", help="Memories directory")
    verify_all.add_argument("--repo-root", type=Path, default=None, help="default: cwd")
    verify_all.add_argument("--json", action="store_true", help="Output as JSON")
    verify_all.add_argument("--citations-json", type=Path, help="bench: per-citation verdicts")
    args = parser.parse_args(argv)

    results = verify_all_memories(Path(args.dir), args.repo_root)
    if args.json:
        print(
            json.dumps(
                [
                    {"memory_id": r.memory_id, "valid": r.valid, "confidence": r.confidence}
                    for r in results
                ],
                indent=2,
            )
        )
    else:
        valid = sum(1 for r in results if r.valid)
        print(f"Verified {len(results)} memories: {valid} valid, {len(results) - valid} stale")
        for r in results:
            if not r.valid:
                print(f"  ❌ {r.memory_id}")
    if args.citations_json:
        rows = [
            {
                "file": r.file,
                "path": c.path,
                "line": c.line,
                "snippet": c.snippet,
                "valid": c.valid,
                "reason": c.mismatch_reason,
            }
            for r in results
            for c in r.citations
        ]
        args.citations_json.write_text(json.dumps(rows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
