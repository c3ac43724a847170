"""How much to trust each memory: the health report, confirmations, the expiry policy."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from memory_enhancement.core.timestamps import format_timestamp
from memory_enhancement.service.verification import Verification

if TYPE_CHECKING:
    from memory_enhancement.health.report import HealthReport


class Health(Verification):
    """Rank memories by urgency; record confirmations; let unused memories fade."""

    def health(
        self, *, mentions: bool = True, notice: Callable[[str], None] | None = None
    ) -> HealthReport:
        """Verify every memory now (prose mentions too, unless told not to) and rank them
        by urgency (see health/report.py). `notice`: as VerifyOptions.notice."""
        from memory_enhancement.core.verdicts import VerifyOptions
        from memory_enhancement.health.report import build

        run = self.verify_all(options=VerifyOptions(include_mentions=mentions, notice=notice))
        return build(run, self.index, self.state, self.clock())

    def reinforce(self, path: str, note: str | None = None) -> tuple[str, int]:
        """Record that an agent or a person confirmed this memory (a path, a `[mem:ID]` or
        a unique name, as `get` takes); returns (ID, confirmations)."""
        from memory_enhancement.verify import history

        target = self.find(path)
        citation_id = self.index.citation_id(target)
        faded = history.policy_expiry(self.state, citation_id)
        current = self.store.read(target, links=False).doc.memory.meta.expires_at
        if faded is not None and current is not None and format_timestamp(current) == faded:
            self.update(target, clear_expiry=True)  # renewed: the policy's expiry no longer holds
        count = history.reinforce(
            self.state, citation_id, target, session=self.session, moment=self.clock(), note=note
        )
        return citation_id, count

    def apply_expiry_policy(
        self, *, after_days: float, grace_days: float, dry_run: bool = False
    ) -> list[tuple[str, datetime]]:
        """Give memories neither verified valid, confirmed nor used for a while an expiry."""
        from memory_enhancement.health.expiry import choose
        from memory_enhancement.index import queries
        from memory_enhancement.service import claude  # only writes and Claude folders need it
        from memory_enhancement.verify import history

        with self.index.connect() as conn:
            rows, _ = queries.rows(conn)
            # A memory whose header does not parse is listed (its text read), but its file
            # is not edited: choosing it stopped the run at it, the memories after it left.
            unedited = queries.header_errors(conn)
        # Nor the index of a Claude Code memory folder: `prune` would delete it.
        folder = claude.folder_of(self.store, learn=False)
        rows = [r for r in rows if r.path not in unedited and not claude.is_index(folder, r.path)]
        facts = history.evidence(self.state, [row.citation_id for row in rows])
        chosen, expires = choose(
            rows, facts, now=self.clock(), after_days=after_days, grace_days=grace_days
        )
        if not dry_run:
            for row in chosen:
                self.update(row.path, expires_at=expires)
                history.mark_policy_expiry(
                    self.state, row.citation_id, row.path, moment=self.clock(), expires=expires
                )
        return [(row.path, expires) for row in chosen]
