"""A rerun with nothing changed hands on the mention verdicts the last run kept, as the
rows they were kept as, and says exactly what the first run said."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import RunCli
from memory_enhancement.core.batch_verdicts import BatchVerdicts
from memory_enhancement.core.verdict_rows import Recalled
from memory_enhancement.core.verdicts import VerifyOptions
from memory_enhancement.service import MemoryService
from memory_enhancement.service.serialize import verifications_json
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository
from verify_support import FIXED_NOW, STORE, GitRepo, aged, code


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """A memory whose mentions get every common verdict once the code moves on: moved,
    stale, missing, renamed (a whole file), ambiguous, skipped and valid."""
    repo = GitRepo(tmp_path / "project")
    for name, count in [("src/app.py", 30), ("lib/old.py", 10), ("a/util.py", 5), ("b/util.py", 5)]:
        repo.write_lines(name, code(name, count))
    repo.write_lines("src/gone.py", code("src/gone.py", 5))
    repo.commit("code")
    repo.write_lines(
        f"{STORE}/notes.md",
        [
            "# Notes",
            "",
            "See src/app.py:5, src/app.py:10 and src/app.py:20.",
            "The helper is `lib/old.py`; src/gone.py:2 held the old one.",
            "Both util.py:2 files; `docs/never/there.md` is to be written.",
            "`src/app.py` is the app.",
        ],
    )
    repo.write_lines(f"{STORE}/plain.md", ["# Plain", "", "No code named here."])
    repo.commit("memory")
    app = code("src/app.py", 30)
    app[19] = "src_app_py_20 = 'changed'"
    repo.write_lines("src/app.py", ["# a", "# b", *app])
    (repo.root / "src/gone.py").unlink()
    repo.commit("refactor")
    repo.mv("lib/old.py", "lib/new.py")
    repo.commit("rename")
    return repo


def verify_all(repo: GitRepo, state: State, *, include_mentions: bool = True) -> BatchVerdicts:
    """A whole-store run, with the index kept in a file as the CLI keeps it (the history
    vouches for what the last run gave only for runs that read the same index)."""
    service = MemoryService(
        Store(repo.store_root), Repository(repo.root), index_path=repo.root / "index.db",
        state=state, clock=lambda: FIXED_NOW,
    )  # fmt: skip
    results = service.verify_all(options=VerifyOptions(include_mentions=include_mentions)).results
    assert isinstance(results, BatchVerdicts)
    return results


def count_decoded(monkeypatch: pytest.MonkeyPatch) -> list[list[object]]:
    """The mention rows decoded into a `Mention` from now on, each as it is decoded."""
    from memory_enhancement.core import verdict_rows

    decoded: list[list[object]] = []
    real = verdict_rows.decode_mention

    def counting(row: list[object]) -> object:
        decoded.append(row)
        return real(row)  # type: ignore[arg-type]

    monkeypatch.setattr(verdict_rows, "decode_mention", counting)
    return decoded


def test_a_rerun_writes_what_the_first_run_wrote_from_the_rows_it_kept(repo: GitRepo) -> None:
    state = State(repo.root / "state.db")
    first = verify_all(repo, state)
    assert not any(isinstance(m, Recalled) for m in first.mentions.values())
    said = {c.mention.text: c.status._value_ for c in first[0].mentions if c.mention}
    assert said == {
        "src/app.py:5": "moved", "src/app.py:10": "moved", "src/app.py:20": "stale",
        "lib/old.py": "moved", "src/gone.py:2": "missing", "util.py:2": "ambiguous",
        "docs/never/there.md": "skipped", "src/app.py": "valid",
    }  # fmt: skip
    second = verify_all(repo, state)
    assert all(isinstance(m, Recalled) for m in second.mentions.values())
    assert all(m.wire for m in second.mentions.values())  # written as the cache kept them
    assert all(m.tail for m in second.mentions.values())  # with the memory's JSON around them
    assert list(verifications_json(second)) == list(verifications_json(first))
    # Built in full alike (`now`, the stale line whole, only words the first run's reason).
    assert [r.mentions for r in second] == [
        tuple(replace(c, now=None) for c in r.mentions) for r in first
    ]
    assert second.tally() == first.tally()
    assert [second.seen(j) for j in range(len(second))] == [
        first.seen(j) for j in range(len(first))
    ]


def test_a_rerun_records_no_new_verdict_and_a_change_is_judged_again(repo: GitRepo) -> None:
    """The history compares a kept memory's verdicts from its rows: nothing differs, so
    nothing is written for it; once a cited file changes, its verdicts are judged again."""
    state = State(repo.root / "state.db")
    verify_all(repo, state)
    with state.connect() as db:
        rows = db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
    verify_all(repo, state)
    with state.connect() as db:
        assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == rows
    repo.write_lines("src/app.py", code("src/app.py", 30))  # line 20 as it was written
    third = verify_all(repo, state)
    assert not any(isinstance(m, Recalled) for m in third.mentions.values())
    said = {c.mention.text: c.status._value_ for c in third[0].mentions if c.mention}
    assert said["src/app.py:20"] == "valid"


def test_a_file_one_memory_names_edited_judges_that_memory_alone_again(repo: GitRepo) -> None:
    """The fingerprints of a rerun are checked together, each file's line once: a file
    edited fails the memories that name it, and only those, whoever else is checked."""
    repo.write_lines("tools/run.py", code("tools/run.py", 10))
    repo.write_lines(f"{STORE}/other.md", ["# Other", "", "The runner, tools/run.py:3."])
    repo.write_lines(f"{STORE}/third.md", ["# Third", "", "Also tools/run.py:4, src/app.py:7."])
    repo.write_lines(f"{STORE}/fourth.md", ["# Fourth", "", "Only src/app.py:9 here."])
    repo.commit("more memories")
    state = State(repo.root / "state.db")
    verify_all(repo, state)
    second = verify_all(repo, state)
    assert len(second.mentions) == 4
    assert all(isinstance(m, Recalled) for m in second.mentions.values())
    run = code("tools/run.py", 10)
    aged(repo.write_lines("tools/run.py", [run[0], "# inserted", *run[1:]]))  # not committed
    third = verify_all(repo, state)
    again = {
        third.path(j)
        for j in range(len(third))
        if third.order[j] in third.mentions
        and not isinstance(third.mentions[third.order[j]], Recalled)
    }
    assert again == {"other", "third"}
    said = {c.mention.text: c for r in third for c in r.mentions if c.mention}
    assert said["tools/run.py:3"].status._value_ == said["tools/run.py:4"].status._value_
    assert (said["tools/run.py:3"].current_line, said["tools/run.py:4"].current_line) == (4, 5)
    fresh = list(verifications_json(verify_all(repo, State(repo.root / "fresh.db"))))
    assert list(verifications_json(third)) == fresh  # no memory's JSON written as it was
    fourth = verify_all(repo, state)
    assert all(isinstance(m, Recalled) for m in fourth.mentions.values())
    assert list(verifications_json(fourth)) == fresh  # nor as kept, once kept again


def test_a_file_staged_or_a_commit_judges_every_kept_memory_again(repo: GitRepo) -> None:
    """Every kept fingerprint's first line is the run's (HEAD, git's index): checked once
    for all of them, a `git add` or a commit fails each, naming the file or not."""
    repo.write_lines(f"{STORE}/other.md", ["# Other", "", "Also src/app.py:9 here."])
    repo.commit("another memory")
    state = State(repo.root / "state.db")
    verify_all(repo, state)

    def kept() -> list[bool]:
        return [isinstance(m, Recalled) for m in verify_all(repo, state).mentions.values()]

    assert kept() == [True, True]
    repo.write_lines("c/util.py", code("c/util.py", 5))  # a third util.py, staged
    repo.git("add", "c/util.py")
    aged(repo.root / ".git/index")  # a moment later: git's index not just written
    assert kept() == [False, False]
    assert kept() == [True, True]
    repo.commit("a third util.py")
    aged(repo.root / ".git/index")
    assert kept() == [False, False]
    assert kept() == [True, True]


def test_the_cli_prints_the_same_json_on_a_rerun(repo: GitRepo, run_cli: RunCli) -> None:
    args = ["verify-all", "--json", "--dir", str(repo.store_root)]
    first = run_cli(args, cwd=repo.root)
    second = run_cli(args, cwd=repo.root)
    assert first.exit_code == second.exit_code == 1  # a stale and a missing mention
    assert second.stdout == first.stdout
    assert json.loads(first.stdout)[0]["mentions"][0]["mention"] == "src/app.py:5"


def test_a_kept_row_changed_since_it_was_written_is_judged_again(repo: GitRepo) -> None:
    """A damaged database can hold a row that still parses and still looks like verdicts
    (here a `moved` turned `valid`): the rerun hands rows on unbuilt, so each row is
    sealed with its checksum, and one whose text changed is judged again, not trusted."""
    state = State(repo.root / "state.db")
    first = list(verifications_json(verify_all(repo, state)))
    with state.connect() as db:
        (checked,) = db.execute("SELECT checked FROM mention_history").fetchone()
        assert b'"moved"' in checked
        db.execute(
            "UPDATE mention_history SET checked = ?", (checked.replace(b'"moved"', b'"valid"', 1),)
        )
        db.commit()
    second = verify_all(repo, state)
    assert not any(isinstance(m, Recalled) for m in second.mentions.values())
    assert list(verifications_json(second)) == first


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text.replace(b"\n", b" \n", 1),  # a space after the header's JSON
        lambda text: text.replace(b"\n", b"x\n", 1),  # text after it
        lambda text: b"[" * 100_000 + text,  # a header nested past the decoder's limit
        lambda text: text + b"\nmore",  # a line more than the row's parts
        lambda text: text.rsplit(b"\n", 1)[0],  # a line fewer
        lambda text: text.split(b"\n", 1)[0],  # the header alone
        lambda text: text.decode(),  # text, as an older version kept it
    ],
)
def test_a_kept_row_resealed_in_another_form_is_judged_again(repo: GitRepo, damage: Any) -> None:
    """A row whose seal holds but whose text is not in this version's form (a header with
    more than its JSON, another number of lines) is judged again, not a crash: the rows
    are split and their headers read by hand (`str.find`, the JSON scanner itself)."""
    import zlib

    state = State(repo.root / "state.db")
    first = list(verifications_json(verify_all(repo, state)))
    with state.connect() as db:
        (checked,) = db.execute("SELECT checked FROM mention_history").fetchone()
        text = damage(checked[8:])
        if isinstance(text, str):
            sealed: str | bytes = f"{zlib.crc32(text.encode()):08x}{text}"
        else:
            sealed = b"%08x" % zlib.crc32(text) + text
        db.execute("UPDATE mention_history SET checked = ?", (sealed,))
        db.commit()
    second = verify_all(repo, state)
    assert not any(isinstance(m, Recalled) for m in second.mentions.values())
    assert list(verifications_json(second)) == first
    assert all(isinstance(m, Recalled) for m in verify_all(repo, state).mentions.values())


def test_a_rerun_writes_its_json_without_building_a_mention(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows are read as they are, machine paths looked for in them too: a rerun decodes
    no `Mention` to answer `--json` (1,500 of them on a real store) but those of a memory
    that names a path on a machine (left out again)."""

    plain = repo.store_root / "plain.md"
    plain.write_text(plain.read_text() + "Logs go to `/tmp/app.log`.\n", encoding="utf-8")
    repo.commit("a machine's path")
    aged(plain, repo.root / ".git/index")  # a rerun a moment later: both kept by the first
    state = State(repo.root / "state.db")
    first = list(verifications_json(verify_all(repo, state)))
    decoded = count_decoded(monkeypatch)
    assert list(verifications_json(verify_all(repo, state))) == first
    assert [row[3] for row in decoded] == ["tmp/app.log"]  # plain.md's, not notes.md's


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("checked", b"\x00"),
        ("data", b"\x00"),
        ("data", "[1]"),
        ("data", "5"),
        ("data", "[" * 100_000),  # nested past the decoder's recursion limit
    ],
)
def test_a_kept_row_of_the_wrong_type_is_judged_again(
    repo: GitRepo, column: str, value: bytes | str
) -> None:
    """A damaged database can hold a value of another type than the tool writes (a blob,
    JSON that is no object): the row is judged again and rewritten, as a row that does not
    parse, not a crash (a cited file changed, so what history said is read too)."""
    state = State(repo.root / "state.db")
    first = list(verifications_json(verify_all(repo, state)))
    with state.connect() as db:
        db.execute(f"UPDATE mention_history SET {column} = ?", (value,))
        db.commit()
    app = repo.root / "src/app.py"
    os.utime(app, ns=(app.stat().st_atime_ns, app.stat().st_mtime_ns - 10**9))  # not racy
    assert list(verifications_json(verify_all(repo, state))) == first
    assert all(isinstance(m, Recalled) for m in verify_all(repo, state).mentions.values())


def runs_of(state: State, name: str) -> int:
    """How many runs the history says verified this memory."""
    from memory_enhancement.verify import history_reading

    return history_reading.runs(state, name)


@pytest.fixture
def compared(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The memories whose verdicts the history compares with its record, run after run."""
    seen: list[str] = []
    real = BatchVerdicts.compared

    def counting(self: BatchVerdicts, j: int) -> tuple[str, list[str]]:
        seen.append(self.path(j))
        return real(self, j)

    monkeypatch.setattr(BatchVerdicts, "compared", counting)
    return seen


def test_a_rerun_vouches_for_kept_mention_verdicts_without_comparing_them(
    repo: GitRepo, compared: list[str]
) -> None:
    """Kept verdicts are the ones the last whole-store run recorded: a rerun counts as a
    run that verified the memory, without comparing its verdicts with the history."""
    state = State(repo.root / "state.db")
    verify_all(repo, state)
    assert compared == ["notes"]
    verify_all(repo, state)
    verify_all(repo, state)
    assert compared == ["notes"]
    assert runs_of(state, "notes") == 3


def test_a_run_without_mentions_between_two_with_them_leaves_the_history_right(
    repo: GitRepo, compared: list[str]
) -> None:
    """A run without mentions does not verify a memory that only mentions code, so the
    next run with them compares its verdicts again (the record may lack them) rather than
    vouching for them, and counts itself as verifying it."""
    repo.write_lines(f"{STORE}/cited.md", ["# Cited", "", "It starts [cite:file](src/app.py:3)."])
    repo.commit("a memory with a citation, which a run without mentions verifies")
    state = State(repo.root / "state.db")
    verify_all(repo, state)
    verify_all(repo, state, include_mentions=False)
    verify_all(repo, state)
    assert compared.count("notes") == 2
    verify_all(repo, state)
    assert compared.count("notes") == 2
    assert runs_of(state, "notes") == 3
    assert runs_of(state, "cited") == 4


def test_verdicts_kept_by_a_run_that_failed_before_its_history_are_compared_next(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run keeps its mention verdicts before it records its history: if it fails in
    between, the history is behind the cache, and the next run must not vouch for the
    kept verdicts as the ones recorded. It compares them and records what changed."""
    from memory_enhancement.verify import history, history_reading

    state = State(repo.root / "state.db")
    verify_all(repo, state)
    aged(repo.write_lines("src/app.py", code("src/app.py", 30)))  # line 20 as it was written
    real = history.record

    def failing(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(history, "record", failing)
    with pytest.raises(OSError):
        verify_all(repo, state)
    monkeypatch.setattr(history, "record", real)
    again = verify_all(repo, state)
    assert all(isinstance(m, Recalled) for m in again.mentions.values())  # as the cache kept
    recorded = history_reading.verdicts(state, "notes")
    assert [row[5] for row in recorded if row[4] == "src/app.py:20"] == ["stale", "valid"]


def test_a_rerun_in_text_builds_only_the_memories_with_something_to_show(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text output and annotations list only memories with a failing, moved or undecided
    verdict: a memory whose mentions all hold is passed over without decoding its kept
    rows (500 memories on a real store)."""
    from memory_enhancement.cli.verify_render import not_settled, worth_showing

    repo.write_lines(f"{STORE}/fine.md", ["# Fine", "", "The app is `src/app.py`."])
    repo.commit("a memory whose mention holds")
    state = State(repo.root / "state.db")
    first = verify_all(repo, state)
    assert [r.path for r in first if worth_showing(r)] == ["notes"]
    decoded = count_decoded(monkeypatch)
    second = verify_all(repo, state)
    assert [r.path for r in not_settled(second)] == ["notes"]
    notes = next(r for r in first if r.path == "notes")
    assert len(decoded) == len(notes.mentions) == 8  # notes.md's alone, not fine.md's one


def test_a_memory_a_run_missed_is_counted_again_once_back(
    repo: GitRepo, compared: list[str], tmp_path: Path
) -> None:
    """A whole-store run that does not see a memory (moved out of the store) stops its
    summary collecting runs. Back unchanged, its verdicts are kept from the cache, but a
    summary that collects nothing is written again, not vouched for: the runs count."""
    repo.write_lines(f"{STORE}/cited.md", ["# Cited", "", "It starts [cite:file](src/app.py:3)."])
    repo.commit("a memory with a citation: the runs go on recording without notes.md")
    state = State(repo.root / "state.db")
    verify_all(repo, state)
    verify_all(repo, state)
    notes, aside = repo.store_root / "notes.md", tmp_path / "notes.md"
    notes.rename(aside)
    verify_all(repo, state)
    aside.rename(notes)
    back = verify_all(repo, state)
    assert all(isinstance(m, Recalled) for m in back.mentions.values())
    verify_all(repo, state)
    assert runs_of(state, "notes") == 4


def test_verdicts_another_run_keeps_meanwhile_are_not_vouched_for_as_this_runs(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs at once: while a verify-all keeps a memory's verdicts from the cache, a
    cited file changes and a `verify notes` judges the memory again and keeps the new
    verdicts. The verify-all records its own (older) verdicts; the next run keeps the
    new ones, and must record them, not vouch for them as the verify-all's."""
    from memory_enhancement.verify import history_reading, runs

    state = State(repo.root / "state.db")
    verify_all(repo, state)
    real = runs.Runner._mentions

    def meanwhile(self: runs.Runner, batch: Any, *more: Any) -> Any:
        found = real(self, batch, *more)
        monkeypatch.setattr(runs.Runner, "_mentions", real)
        repo.write_lines("src/app.py", code("src/app.py", 30))  # line 20 as it was written
        other = MemoryService(
            Store(repo.store_root), Repository(repo.root), index_path=repo.root / "index.db",
            state=State(repo.root / "state.db"), clock=lambda: FIXED_NOW,
        )  # fmt: skip
        other.verify("notes")
        return found

    monkeypatch.setattr(runs.Runner, "_mentions", meanwhile)
    verify_all(repo, state)
    after = verify_all(repo, state)
    said = {m.mention.text: m.status._value_ for m in after[0].mentions if m.mention}
    assert said["src/app.py:20"] == "valid"
    recorded = history_reading.verdicts(state, "notes")
    assert [row[5] for row in recorded if row[4] == "src/app.py:20"][-1] == "valid"


def test_a_kept_verdict_shown_once_a_folder_appears_is_recorded(repo: GitRepo) -> None:
    """`/api/users.json` under a first folder the repository has not is a web route, left
    out. An `api/` folder made in the work tree (untracked: HEAD, git's index and the
    named files are the same) shows the kept verdict: the history records it, rather
    than vouching for the memory as last recorded."""
    from memory_enhancement.verify import history_reading

    route = ["# Route", "", "The app `src/app.py` serves `/api/users.json`."]
    repo.write_lines(f"{STORE}/route.md", route)
    repo.commit("a web route")
    state = State(repo.root / "state.db")
    verify_all(repo, state)
    verify_all(repo, state)
    (repo.root / "api").mkdir()
    third = verify_all(repo, state)
    j = next(j for j in range(len(third)) if third.path(j) == "route")
    assert third.statuses(j) == ["valid", "skipped"]
    recorded = [row for row in history_reading.verdicts(state, "route")]
    assert [row[5] for row in recorded][-2:] == ["valid", "skipped"]


def test_a_rooted_path_that_names_a_file_does_not_keep_its_memory_from_being_vouched_for(
    repo: GitRepo, compared: list[str]
) -> None:
    """Only a rooted path that named no file can be shown or left out by the work tree's
    folders alone: a memory whose rooted paths all name files is vouched for as any."""
    repo.write_lines(f"{STORE}/rooted.md", ["# Rooted", "", "The app is `/src/app.py`."])
    repo.commit("a path from the root")
    state = State(repo.root / "state.db")
    verify_all(repo, state)
    verify_all(repo, state)
    assert sorted(compared) == ["notes", "rooted"]  # the first run's comparisons


def test_a_memory_whose_verdicts_are_all_skipped_is_vouched_for_though_it_counts_no_run(
    repo: GitRepo, compared: list[str]
) -> None:
    """A memory with only skipped verdicts counts no run (its summary collects none, by
    design, not because a run missed it): a rerun vouches for it, as for any other,
    rather than comparing it again each time."""
    repo.write_lines(f"{STORE}/plans.md", ["# Plans", "", "To write: `docs/later/plan.md`."])
    repo.commit("a memory naming a file still to be written")
    state = State(repo.root / "state.db")
    verify_all(repo, state)
    verify_all(repo, state)
    verify_all(repo, state)
    assert sorted(compared) == ["notes", "plans"]  # the first run's comparisons
    assert runs_of(state, "plans") == 0
