"""The optional expiry policy: memories nobody verified, confirmed or used fade away.

`expire` (or `MemoryService.apply_expiry_policy`) gives each memory inactive for
`after_days` an `expires_at` `grace_days` away; renewing it (`reinforce`) takes
that expiry off again. The policy lives in the store's `.memory-enhancement.yaml`.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import Clock, RunCli
from health_support import Project
from memory_enhancement.core.errors import InvalidInputError
from memory_enhancement.core.timestamps import format_timestamp

POLICY = "expiry: {after_days: 90, grace_days: 14}\n"


@pytest.fixture
def project(tmp_path: Path, clock: Clock) -> Project:
    return Project(tmp_path / "project", clock)


@pytest.fixture
def aged(project: Project, clock: Clock) -> Project:
    """Memories written 100 days ago, then (some of them) touched in the last weeks."""
    service = project.service
    service.add("notes/old", "Nobody looked.", citations=["src/app.py:3"])
    service.add("notes/used", "Read recently.", citations=["src/app.py:4"])
    service.add("notes/verified", "Checked recently.", citations=["src/app.py:5"])
    service.add("notes/failing", "Checked, but wrong.", citations=["src/app.py:6"])
    service.add("notes/confirmed", "Confirmed recently.", citations=["src/app.py:7"])
    service.add("notes/pinned", "Expires when I say.", expires_at="2026-12-31")
    clock.advance(days=80)
    service.add("notes/fresh", "Written recently.")
    service.get("notes/used")
    project.change_line("src/app.py", 6, "app_6 = 'six'")
    project.service.verify("notes/verified")
    project.service.verify("notes/failing")
    project.service.reinforce("notes/confirmed", "still true")
    clock.advance(days=20)  # 100 days after the start
    return project


def expiry_in_file(project: Project, path: str) -> str | None:
    text = project.file(path).read_text(encoding="utf-8")
    line = next((line for line in text.splitlines() if line.startswith("expires_at:")), None)
    return line.split(":", 1)[1].strip() if line else None


def test_memories_inactive_for_after_days_get_an_expiry_grace_days_away(
    aged: Project, clock: Clock
) -> None:
    chosen = aged.service.apply_expiry_policy(after_days=90, grace_days=14)
    expires = clock.moment + timedelta(days=14)
    assert chosen == [("notes/failing", expires), ("notes/old", expires)]
    for path in ("notes/failing", "notes/old"):
        assert expiry_in_file(aged, path) == format_timestamp(expires)
    for path in ("notes/used", "notes/verified", "notes/confirmed", "notes/fresh"):
        assert expiry_in_file(aged, path) is None, path
    assert expiry_in_file(aged, "notes/pinned") == "2026-12-31T00:00:00.000Z"  # left alone


def test_a_dry_run_lists_them_and_writes_nothing(aged: Project) -> None:
    files = {p: p.read_bytes() for p in aged.store.rglob("*.md")}
    chosen = aged.service.apply_expiry_policy(after_days=90, grace_days=14, dry_run=True)
    assert [path for path, _ in chosen] == ["notes/failing", "notes/old"]
    assert {p: p.read_bytes() for p in aged.store.rglob("*.md")} == files
    assert aged.query("SELECT count(*) FROM policy_expiry") == [(0,)]


def test_the_policy_does_not_push_back_an_expiry_it_already_set(
    aged: Project, clock: Clock
) -> None:
    first = aged.service.apply_expiry_policy(after_days=90, grace_days=14)
    clock.advance(days=5)
    assert aged.service.apply_expiry_policy(after_days=90, grace_days=14) == []
    assert expiry_in_file(aged, "notes/old") == format_timestamp(first[0][1])


def test_a_faded_memory_is_expired_after_the_grace_period_and_hidden_from_lists(
    aged: Project, clock: Clock
) -> None:
    aged.service.apply_expiry_policy(after_days=90, grace_days=14)
    assert aged.health_of("notes/old").status != "expired"
    clock.advance(days=15)
    health = aged.health_of("notes/old")
    assert health.status == "expired"
    listed = [s.path for s in aged.service.list_memories().memories]
    assert "notes/old" not in listed
    assert "notes/used" in listed


def test_reinforce_renews_a_memory_the_policy_set_to_expire(aged: Project, clock: Clock) -> None:
    aged.service.apply_expiry_policy(after_days=90, grace_days=14)
    clock.advance(days=1)
    assert aged.service.reinforce("notes/old", "still true")[1] == 1
    assert expiry_in_file(aged, "notes/old") is None
    assert aged.query("SELECT path FROM policy_expiry") == [("notes/failing",)]
    clock.advance(days=30)
    assert "notes/old" in [s.path for s in aged.service.list_memories().memories]
    assert aged.service.apply_expiry_policy(after_days=90, grace_days=14) == []


def test_reinforce_keeps_an_expiry_a_person_set(aged: Project) -> None:
    aged.service.apply_expiry_policy(after_days=90, grace_days=14)
    aged.service.reinforce("notes/pinned")
    assert expiry_in_file(aged, "notes/pinned") == "2026-12-31T00:00:00.000Z"


def test_reinforce_keeps_an_expiry_a_person_set_after_the_policy(
    aged: Project, clock: Clock
) -> None:
    aged.service.apply_expiry_policy(after_days=90, grace_days=14)
    aged.service.update("notes/old", expires_at="2027-06-30")
    aged.service.reinforce("notes/old")
    assert expiry_in_file(aged, "notes/old") == "2027-06-30T00:00:00.000Z"


def test_a_memory_renewed_by_verification_or_use_is_not_chosen_again(
    aged: Project, clock: Clock
) -> None:
    aged.service.get("notes/old")
    aged.service.verify("notes/failing")  # still failing: not a renewal
    chosen = aged.service.apply_expiry_policy(after_days=90, grace_days=14)
    assert [path for path, _ in chosen] == ["notes/failing"]


@pytest.mark.parametrize(("after", "grace"), [(0, 14), (-1, 14), (90, -1)])
def test_a_nonsense_policy_is_refused(project: Project, after: float, grace: float) -> None:
    with pytest.raises(InvalidInputError, match="after_days > 0 and grace_days >= 0"):
        project.service.apply_expiry_policy(after_days=after, grace_days=grace)


# -- the CLI, with the policy in the store's config ----------------------------------------


@pytest.fixture
def stale_store(tmp_path: Path) -> Project:
    """A memory written 120 days before the real now (the CLI runs on the real clock)."""
    project = Project(tmp_path / "cli", Clock(datetime.now(UTC) - timedelta(days=120)))
    project.service.add("notes/old", "Nobody looked.")
    project.clock.advance(days=110)
    project.service.add("notes/new", "Written ten days ago.")
    return project


def days_from_now(days: int) -> set[str]:
    """The date `days` from now (both, if the test runs across midnight)."""
    return {
        (datetime.now(UTC) + timedelta(days=days, minutes=m)).date().isoformat() for m in (0, 1)
    }


def test_cli_expire_applies_the_policy_from_the_store_config(
    stale_store: Project, run_cli: RunCli
) -> None:
    (stale_store.store / ".memory-enhancement.yaml").write_text(POLICY, encoding="utf-8")
    result = run_cli(["expire", "--dir", stale_store.store])
    assert result.exit_code == 0, result.output
    first, summary = result.stdout.splitlines()
    assert first.removeprefix("expires notes/old at ") in days_from_now(14)
    assert summary == "1 memory inactive for more than 90 days"
    assert expiry_in_file(stale_store, "notes/old") is not None
    assert expiry_in_file(stale_store, "notes/new") is None


def test_cli_expire_dry_run_and_json(stale_store: Project, run_cli: RunCli) -> None:
    (stale_store.store / ".memory-enhancement.yaml").write_text(POLICY, encoding="utf-8")
    result = run_cli(["expire", "--dry-run", "--dir", stale_store.store])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("would expire notes/old at ")
    assert expiry_in_file(stale_store, "notes/old") is None
    result = run_cli(["expire", "--json", "--grace-days", "7", "--dir", stale_store.store])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["dry_run"] is False
    [entry] = data["expiring"]
    assert entry["path"] == "notes/old"
    assert entry["expires_at"][:10] in days_from_now(7)


def test_cli_expire_json_writes_the_expiry_as_every_other_timestamp_and_as_get_shows_it(
    stale_store: Project, run_cli: RunCli
) -> None:
    """docs/cli.md: timestamps are `2026-01-31T12:00:00.000Z`; expire printed Python's
    `2026-12-11T07:08:23.235000+00:00`, which no other command writes."""
    (stale_store.store / ".memory-enhancement.yaml").write_text(POLICY, encoding="utf-8")
    data = json.loads(run_cli(["expire", "--json", "--dir", stale_store.store]).stdout)
    [entry] = data["expiring"]
    got = json.loads(run_cli(["get", "notes/old", "--json", "--dir", stale_store.store]).stdout)
    assert entry["expires_at"] == got["metadata"]["expires_at"]
    assert entry["expires_at"].endswith("Z") and len(entry["expires_at"]) == 24


def test_cli_expire_flags_override_the_config(stale_store: Project, run_cli: RunCli) -> None:
    (stale_store.store / ".memory-enhancement.yaml").write_text(POLICY, encoding="utf-8")
    result = run_cli(["expire", "--after-days", "5", "--dry-run", "--dir", stale_store.store])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "2 memories inactive for more than 5 days"


def test_cli_expire_without_a_policy_says_how_to_set_one(
    stale_store: Project, run_cli: RunCli
) -> None:
    result = run_cli(["expire", "--dir", stale_store.store])
    assert result.exit_code == 2
    assert "expiry.after_days" in result.stderr
    assert ".memory-enhancement.yaml" in result.stderr
    assert expiry_in_file(stale_store, "notes/old") is None


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("expiry: 90\n", "must be a mapping"),
        ("expiry: {after_days: soon}\n", "invalid expiry policy"),
        ("expiry: {after_days: 0}\n", "after_days > 0"),
    ],
)
def test_cli_expire_with_a_bad_policy_is_a_usage_error(
    stale_store: Project, run_cli: RunCli, config: str, message: str
) -> None:
    (stale_store.store / ".memory-enhancement.yaml").write_text(config, encoding="utf-8")
    result = run_cli(["expire", "--dir", stale_store.store])
    assert result.exit_code == 2
    assert message in result.stderr


def test_cli_reinforce_renews_what_cli_expire_set(stale_store: Project, run_cli: RunCli) -> None:
    (stale_store.store / ".memory-enhancement.yaml").write_text(POLICY, encoding="utf-8")
    assert run_cli(["expire", "--dir", stale_store.store]).exit_code == 0
    result = run_cli(["reinforce", "notes/old", "--dir", stale_store.store])
    assert result.exit_code == 0, result.output
    assert expiry_in_file(stale_store, "notes/old") is None


def test_a_memory_whose_header_does_not_parse_is_left_out_and_the_others_still_fade(
    aged: Project, clock: Clock
) -> None:
    """Such a memory is indexed as its text now (it was skipped as unreadable), and the
    policy chose it too: its write was refused, stopping the run before notes/failing."""
    broken = aged.store / "notes" / "broken.md"
    text = "---\ndescription: Logo: v2\n---\n# Broken\n\nText.\n"
    broken.write_text(text, encoding="utf-8")
    old = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
    os.utime(broken, (old, old))  # no time in its header: its file's time is its age
    chosen = aged.service.apply_expiry_policy(after_days=90, grace_days=14)
    assert [path for path, _ in chosen] == ["notes/failing", "notes/old"]
    assert expiry_in_file(aged, "notes/old") == format_timestamp(clock.moment + timedelta(days=14))
    assert broken.read_text(encoding="utf-8") == text
