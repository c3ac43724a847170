"""A whole-store verification takes a cited file's verdicts from the last one only while
nothing they depend on changed: the file, its citations, HEAD, git's index.

Files written more than the timestamp resolution ago are "old" here (their mtime set
back), as the code of a real repository is; a file written within it is never
recorded. Every test checks the verdicts against a run that judges everything.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import Verdict, VerifyOptions
from memory_enhancement.index import queries
from memory_enhancement.service import MemoryService
from memory_enhancement.store.disk import Store
from memory_enhancement.store.state import State
from memory_enhancement.verify.repo import Repository, SourceFile
from verify_support import FIXED_NOW, GitRepo, numbered


def age(repo: GitRepo, *paths: str) -> None:
    """Set files' modification times an hour back: written long before any run."""
    for path in paths:
        file = repo.root / path
        stat = file.stat()
        os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns - 3600 * 10**9))


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return project(tmp_path / "project")


def project(root: Path, fmt: str = "frontmatter") -> GitRepo:
    repo = GitRepo(root)
    repo.write_lines("src/a.py", numbered(20, "a"))
    repo.write_lines("src/b.py", numbered(20, "b"))
    repo.write_lines("src/c.py", numbered(20, "c"))
    repo.commit("code")
    stamp = repo.stamp()
    a, b = numbered(20, "a"), numbered(20, "b")
    gone = "not in the file"
    cited = {
        "one": [Citation("src/a.py", 3, snippet=a[2], verified=stamp),
                Citation("src/b.py", 5, snippet=gone, verified=stamp)],
        "two": [Citation("src/a.py", 7, snippet=a[6], verified=stamp),
                Citation("src/b.py", 9, snippet=b[8], verified=stamp)],
        "three": [Citation("src/c.py", 2, snippet="c_2 = 2", verified=stamp)],
    }  # fmt: skip
    for name, citations in cited.items():
        repo.memory(name, citations, fmt=fmt)
    age(repo, "src/a.py", "src/b.py", "src/c.py")
    return repo


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every cited file read from disk, in order."""
    seen: list[str] = []
    original = Repository._read

    def counting(self: Repository, rel: str) -> SourceFile:
        seen.append(rel)
        return original(self, rel)

    monkeypatch.setattr(Repository, "_read", counting)
    return seen


def service(repo: GitRepo) -> MemoryService:
    return MemoryService(
        Store(repo.store_root), Repository(repo.root), index_path=repo.root / "index.db",
        state=State(repo.root / "state.db"), clock=lambda: FIXED_NOW,
    )  # fmt: skip


def verdicts(run: object) -> list[tuple[object, ...]]:
    return [
        (r.path, c.citation.ref, c.status, c.current_line, c.reason)
        for r in run.results  # type: ignore[attr-defined]
        for c in r.checks
    ]


def status(run: list[tuple[object, ...]], path: str, ref: str) -> object:
    return next(item[2] for item in run if item[:2] == (path, ref))


def judged_afresh(repo: GitRepo) -> list[tuple[object, ...]]:
    return verdicts(service(repo).verify_all(options=VerifyOptions(recheck=True)))


def test_an_unchanged_store_is_verified_again_without_reading_its_cited_files(
    repo: GitRepo, reads: list[str]
) -> None:
    first = verdicts(service(repo).verify_all())
    assert sorted(set(reads)) == ["src/a.py", "src/b.py", "src/c.py"]
    assert status(first, "one", "src/b.py:5") is Verdict.STALE
    reads.clear()
    again = verdicts(service(repo).verify_all())
    assert reads == []  # both files as they were: their verdicts are recalled
    assert again == first == judged_afresh(repo)


def test_a_changed_file_is_read_and_judged_again(repo: GitRepo, reads: list[str]) -> None:
    service(repo).verify_all()
    lines = numbered(20, "a")
    lines[6] = "rewritten = 7"
    repo.write_lines("src/a.py", lines)
    age(repo, "src/a.py")  # even written long ago: its size, mtime or inode differ
    reads.clear()
    run = verdicts(service(repo).verify_all())
    assert reads == ["src/a.py"]
    assert status(run, "two", "src/a.py:7") is Verdict.STALE
    assert run == judged_afresh(repo)


def test_a_new_commit_or_a_staged_change_has_every_file_judged_again(
    repo: GitRepo, reads: list[str]
) -> None:
    service(repo).verify_all()
    repo.write_lines("docs/notes.md", ["unrelated"])
    repo.commit("docs")
    reads.clear()
    service(repo).verify_all()
    assert sorted(reads) == ["src/a.py", "src/b.py", "src/c.py"]
    reads.clear()
    repo.write_lines("docs/more.md", ["staged"])
    repo.git("add", "docs/more.md")
    service(repo).verify_all()
    assert sorted(reads) == ["src/a.py", "src/b.py", "src/c.py"]


def test_a_changed_citation_has_its_file_judged_again(repo: GitRepo, reads: list[str]) -> None:
    service(repo).verify_all()
    stamp = repo.stamp()
    repo.memory("two", [Citation("src/a.py", 8, snippet="not there", verified=stamp)])
    reads.clear()
    run = verdicts(service(repo).verify_all())
    # The files the edited memory cited (then or now) are judged again; c.py, cited by
    # another memory only, is recalled.
    assert sorted(reads) == ["src/a.py", "src/b.py"]
    assert status(run, "two", "src/a.py:8") is Verdict.STALE
    assert run == judged_afresh(repo)


def test_a_file_written_within_the_timestamp_resolution_is_not_recorded(
    repo: GitRepo, reads: list[str]
) -> None:
    repo.write_lines("src/b.py", numbered(21, "b"))  # just now
    service(repo).verify_all()
    reads.clear()
    service(repo).verify_all()
    assert reads == ["src/b.py"]  # a second write in the same tick would not show


@pytest.mark.parametrize("fmt", ["frontmatter", "serena"])
def test_a_bulk_write_by_verify_all_leaves_the_index_in_step_and_the_files_recalled(
    tmp_path: Path, reads: list[str], fmt: str
) -> None:
    """`verify-all --write` rewrites every memory (its confidence and Last Verified) and
    brings the index in step at once: the next call finds every file as indexed, with
    nothing to parse again, and, their citations being the same, recalls every cited
    file instead of judging them all again."""
    repo = project(tmp_path / "project", fmt)
    first = verdicts(service(repo).verify_all())
    written = service(repo).verify_all(options=VerifyOptions(write=True))
    assert sorted(fix.path for fix in written.fixes if fix.written) == ["one", "three", "two"]
    with service(repo).index.connect(sync=False) as conn:
        stamps = {p: (m, s) for p, m, s in conn.execute("SELECT path, mtime_ns, size FROM files")}
        recorded = conn.execute("SELECT count(*) FROM memories WHERE last_verified IS NULL")
        assert recorded.fetchone()[0] == 0  # the rows hold what was written
        assert {target for (target,) in conn.execute("SELECT target FROM settled_files")} == {
            "src/a.py", "src/b.py", "src/c.py"
        }  # fmt: skip
    assert stamps == Store(repo.store_root).scan()
    reads.clear()
    assert verdicts(service(repo).verify_all()) == first
    assert reads == []


def test_recheck_reads_every_file(repo: GitRepo, reads: list[str]) -> None:
    service(repo).verify_all()
    reads.clear()
    service(repo).verify_all(options=VerifyOptions(recheck=True))
    assert sorted(reads) == ["src/a.py", "src/b.py", "src/c.py"]


def test_a_damaged_record_is_judged_again(repo: GitRepo, reads: list[str]) -> None:
    first = verdicts(service(repo).verify_all())
    with sqlite3.connect(repo.root / "index.db") as db:
        db.execute("UPDATE settled_files SET verdicts = '{\"7\": [1]}' WHERE target = 'src/b.py'")
        db.execute("UPDATE settled_files SET verdicts = 'not json' WHERE target = 'src/a.py'")
    reads.clear()
    assert verdicts(service(repo).verify_all()) == first
    assert sorted(reads) == ["src/a.py", "src/b.py"]


def test_nothing_is_recorded_when_a_citation_changed_during_the_run(repo: GitRepo) -> None:
    svc = service(repo)
    svc.verify_all()
    with svc.index.connect() as conn:
        known, changes = queries.settled_files(conn)
        assert set(known) == {"src/a.py", "src/b.py", "src/c.py"}
        conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'citations_changed'")
        assert not queries.settle_files(conn, {}, known, changes)  # a stale count: refused
        assert set(queries.settled_files(conn)[0]) == {"src/a.py", "src/b.py", "src/c.py"}


def test_runs_that_recall_verdicts_leave_the_history_runs_that_judge_leave(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory whose files were all recalled is vouched for without being compared with
    its summary (it has the last run's verdicts): the history must come out as if every
    run had judged and compared everything."""
    from memory_enhancement.core.batch_verdicts import BatchVerdicts
    from memory_enhancement.verify import history

    compared: list[str] = []
    real = BatchVerdicts.compared

    def counting(self: BatchVerdicts, j: int) -> tuple[str, list[str]]:
        compared.append(self.path(j))
        return real(self, j)

    monkeypatch.setattr(BatchVerdicts, "compared", counting)

    def services(tag: str) -> MemoryService:
        return MemoryService(
            Store(repo.store_root), Repository(repo.root),
            index_path=repo.root / f"index-{tag}.db", state=State(repo.root / f"state-{tag}.db"),
            clock=lambda: FIXED_NOW,
        )  # fmt: skip

    def step() -> None:
        services("recall").verify_all()
        services("judge").verify_all(options=VerifyOptions(recheck=True))

    step()
    compared.clear()
    services("recall").verify_all()  # the same index as the last run: nothing compared
    assert compared == []
    services("judge").verify_all(options=VerifyOptions(recheck=True))
    assert sorted(compared) == ["one", "three", "two"]
    lines = numbered(20, "a")
    lines[2] = "changed = 3"
    repo.write_lines("src/a.py", lines)
    age(repo, "src/a.py")
    step()
    step()
    services("recall").verify("three")  # a run over one memory: the next compares all
    services("judge").verify("three")
    step()
    recall, judge = (State(repo.root / f"state-{tag}.db") for tag in ("recall", "judge"))
    assert history.evidence(recall) == history.evidence(judge)
    assert history.verdicts(recall) == history.verdicts(judge)
    assert history.runs(recall) == history.runs(judge) == 6


def test_a_recalled_record_the_run_does_not_take_is_not_kept() -> None:
    """A record recalled but then not taken (it did not fit the file's citations) while
    the file, judged again, is too recent to record: the run keeps no record of it, rather
    than writing the unusable one back."""
    from memory_enhancement.verify.settled import SettledFiles

    now = 10**18
    settled = SettledFiles({}, None, "/repo", now)
    stamp = (10, now - 10**12, 1, now - 10**12)
    settled.known = {"a.py": (settled._text(stamp), '{"9": []}')}
    assert settled.recall("a.py", stamp) == {"9": []}
    settled.record("a.py", (10, now, 1, now), {})  # read again: written just now
    assert "a.py" not in settled.found and settled.changed


def test_an_index_whose_citation_counts_disagree_with_its_rows_is_rebuilt(repo: GitRepo) -> None:
    """verify-all reads a memory's citations by the count kept with it; an index where
    the two disagree (damaged, tampered with) is reported and built again, never read
    with citations given to the wrong memory."""
    from memory_enhancement.index.index import IndexCorruptError

    first = verdicts(service(repo).verify_all())
    with sqlite3.connect(repo.root / "index.db") as db:
        db.execute("UPDATE memories SET citation_count = citation_count + 1 WHERE path = 'one'")
    with pytest.raises(IndexCorruptError, match="citation rows"):
        service(repo).verify_all()
    assert verdicts(service(repo).verify_all()) == first  # rebuilt from the files
