"""Stores of any size for the dashboard's browser test: memories as real stores hold them.

A git repository of 50 small modules and a frontmatter store of N memories, each
citing two lines (a few stale, a few citing a file that is gone, the rest valid),
linking to two others with `[[wiki]]` links (a few dangling), with deep, long paths
such as real stores have (`architecture/decisions/adr-00042-...`), so labels are
long. Written straight to disk: building 10,000 memories through the service one
by one would take minutes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import GIT_ENV

MODULES, LINES = 50, 40
CATEGORIES = (
    "architecture/decisions",
    "pitfalls/concurrency-and-locking",
    "patterns/error-handling",
    "testing/integration-fixtures",
    "operations/deployment-runbooks",
)
WORDS = ("retry", "cache", "index", "schema", "session", "token", "parser", "queue", "limit")


def source_line(module: int, line: int) -> str:
    return f"value_{module}_{line} = {module * 1000 + line}"


def make_repo(root: Path) -> Path:
    src = root / "src"
    src.mkdir(parents=True)
    for k in range(MODULES):
        lines = [source_line(k, i) for i in range(1, LINES + 1)]
        (src / f"module_{k:02d}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "code"]):
        subprocess.run(["git", *args], cwd=root, check=True, env={**os.environ, **GIT_ENV})
    return root


def memory_path(i: int) -> str:
    words = "-".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(4))
    return f"{CATEGORIES[i % len(CATEGORIES)]}/adr-{i:05d}-{words}-considerations"


def make_store(root: Path, count: int) -> Path:
    """N memories under root; about 3% stale, 2% missing a file, 3% with a dangling link."""
    root.mkdir(parents=True)
    for i in range(count):
        citations = []
        for j in range(2):
            module, line = (i + j * 17) % MODULES, (i * 3 + j) % LINES + 1
            snippet = source_line(module, line)
            target = f"src/module_{module:02d}.py"
            if j == 0 and (i % 33 == 5 or (count < 33 and i == 0)):
                snippet = snippet.replace("=", "= -")  # the code says otherwise: stale
            if j == 1 and (i % 50 == 7 or (count < 50 and i == 1)):
                target = f"src/removed_{i}.py"  # the file is gone: missing
            citations.append(
                f"  - path: {target}\n    line: {line}\n    snippet: '{snippet}'\n"
                "    verified: 2026-01-01T00:00:00.000Z\n"
            )
        links = [memory_path((i + 1) % count), memory_path((i * 7 + 3) % count)]
        if i % 33 == 9:
            links[1] = f"{CATEGORIES[0]}/no-such-memory-{i}"
        body = "\n".join(f"- [[{link}]]" for link in links if link != memory_path(i))
        text = (
            "---\ncreated_at: 2026-01-01T00:00:00.000Z\nupdated_at: 2026-01-01T00:00:00.000Z\n"
            f"tags: [{WORDS[i % len(WORDS)]}]\nsource: cli\ncitations:\n{''.join(citations)}---\n"
            f"# Memory {i}: {WORDS[i % len(WORDS)]} handling\n\nWhat we learned.\n\n"
            f"## Related Memories\n\n{body}\n"
        )
        file = root / f"{memory_path(i)}.md"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    return root
