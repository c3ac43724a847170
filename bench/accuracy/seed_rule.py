"""The seed's "exact-line rule", reproduced as the benchmark's baseline.

Why a baseline: a precision/recall figure means little on its own; it means
something next to what the product started from. This is
``verify_citation()`` from the product seed (``shared/seeds/004_*.txt``),
reduced to a verdict string:

* file does not exist                         -> ``missing``
* ``line`` beyond the file's ``splitlines()`` -> ``stale``
* ``snippet not in lines[line - 1]``          -> ``stale`` (a *substring* test)
* otherwise                                   -> ``valid``

It has no notion of ``moved``: a shifted line is either reported ``stale``
(a false alarm for a still-true memory) or, by coincidence, ``valid``.

Deliberate, documented deviations from the seed, all to keep the baseline
from crashing rather than to make it smarter:
* the file is read as UTF-8 with ``errors="replace"`` (the seed used the
  locale's encoding and would raise on undecodable bytes);
* a path that exists but is not a regular file (a directory) is ``missing``
  (the seed would raise ``IsADirectoryError``);
* an empty snippet is not checked (the seed skips falsy snippets too).
The seed's quirk for ``line <= 0`` (Python negative indexing) is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def seed_verdict(repo_root: Path, path: str, line: int | None, snippet: str | None) -> str:
    """Verdict of the seed's exact-line rule for one citation."""
    file_path = Path(repo_root) / path
    if not file_path.is_file():
        return "missing"
    if line is None:
        return "valid"
    lines = file_path.read_text(encoding="utf-8", errors="replace").splitlines()
    if line > len(lines):
        return "stale"
    if snippet and snippet not in lines[line - 1]:
        return "stale"
    return "valid"


def seed_predictions(
    repo_root: Path, cases: Iterable, *, strip_snippet: bool = False
) -> list[dict]:
    """Run the seed rule over ``cases`` and return predictions for ``score.py``.

    ``strip_snippet=True`` feeds the snippet with surrounding whitespace
    removed, which is what the seed's own citation table would store (it
    ``strip()``s every cell); the substring test is then blind to re-indents.
    The seed never relocates, so ``current_path``/``current_line`` echo the
    citation when valid and are ``None`` otherwise.

    Each file is read once per case here (simple and fast enough for a few
    hundred cases); the baseline's speed is not what is being measured.
    """
    preds = []
    for c in cases:
        snippet = c.snippet.strip() if strip_snippet else c.snippet
        status = seed_verdict(repo_root, c.path, c.line, snippet)
        valid = status == "valid"
        preds.append(
            {
                "status": status,
                "current_path": c.path if valid else None,
                "current_line": c.line if valid else None,
            }
        )
    return preds
