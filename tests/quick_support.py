"""What the tests of the quick read path share, and the search identity check
(bench/check_search_identical.py) too: the odd shapes of a query, and a store's index
built and then settled so that a read can take the quick path."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import RunCli

# The English shapes a query comes in; each user adds its own CJK and edge cases.
QUERY_SHAPES = [
    "redis stale cache",
    "How do I create a pull request?",
    "deploying",  # found by its stem too
    "worktree",  # a word alone, also inside longer identifiers
    '"session protocol" handoff',  # a quoted phrase
    "skill-creator: (SKILL.md) -x*",  # FTS5 syntax, quoted away
    "github-skill",  # found by path
]


def settled_index(run_cli: RunCli, where: Sequence[str]) -> None:
    """Build the store's index, then sync it once more after the timestamp resolution of
    the folders just written, so that the next read finds nothing to check."""
    assert run_cli(["list", *where]).exit_code == 0  # builds the index
    time.sleep(0.05)  # past the timestamp resolution of the folders just written
    run_cli(["list", *where])
