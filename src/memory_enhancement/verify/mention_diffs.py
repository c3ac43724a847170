"""Where git's diffs, not a snippet, decide a mention's verdict.

Two things the Verifier cannot know from snippets alone, for mentions:

- what became of a file gone from the work tree since the mention's commit: a
  Git of the mentions' own carries the renames git's diff from that commit to
  HEAD finds (`mention_git`);
- where the lines of a blank cited line, or of a range with lines inserted
  inside it, went: git's line map from the mention's commit says
  (`follow_line_maps`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TypeGuard

from memory_enhancement.core.mentions import FileList
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.verify.blame import GitHistory
from memory_enhancement.verify.git import Git, GitError, LineMap, _parse_diff
from memory_enhancement.verify.git_objects import Tree, blob_hash, run_git
from memory_enhancement.verify.git_objects import from_git as _from_git
from memory_enhancement.verify.git_objects import to_git as _to_git
from memory_enhancement.verify.mention_history import Ask
from memory_enhancement.verify.repo import Repository, SourceStatus

_RENAMES = ("--name-status", "-z", "--diff-filter=R")
MAX_DIFF_BATCHES = 5


def mention_git(
    git: Git,
    asks: list[Ask],
    repo: Repository,
    files_now: Callable[[], FileList],
    history: GitHistory,
) -> MentionGit:
    """A Git of the mentions' own, whose map of renames comes from git's diff from
    each mention's commit to HEAD, for the files gone from the work tree.

    The Verifier reads renames from the whole history (`git log -M`, one call
    that costs more than the rest of a mention run together, and fails outright
    on a clone that lacks some objects); a mention needs only what became of its
    file since its own commit, which the direct diff says (and sees renames done
    across several commits, which no single commit of the log shows).
    """
    gone: dict[str, set[str]] = {}
    for ask in asks:
        target = ask.citation.target
        if ask.citation.commit and repo.read(target).status is SourceStatus.MISSING:
            gone.setdefault(ask.citation.commit, set()).add(target)
    renames: dict[str, str] = {}
    names = files_now() if gone else FileList(())
    # Rename detection over the whole tree compares every file added with every file
    # deleted since the commit (a third of a second each on a busy repository). Exact
    # renames are found by hash at once, for every commit in one process; renames with
    # edits are looked for among files whose name starts like the old one's (`x.py` ->
    # `pkg/x.py`, `x_example.py`, `x.py.bak`).
    exact = _exact_renames(git, history, gone)
    for commit, paths in sorted(gone.items()):
        found = exact.get(commit)
        if found is None:  # the trees could not be read: as git diff says
            found = _renames(git, ["-M100%", *_RENAMES, commit, "HEAD"])
        for old, new in found:
            renames.setdefault(old, new)
        offered = {p for path in paths for p in names.named_like(_stem(path))}
        if offered:
            spec = [_to_git(git, p) for p in sorted(paths | offered)]
            for old, new in _renames(git, ["-M", *_RENAMES, commit, "HEAD", "--", *spec]):
                renames.setdefault(old, new)
    listed = files_now()
    tracked = (
        frozenset(listed.files) | frozenset(listed.submodules)
        if isinstance(listed.files, frozenset)
        else None
    )
    return MentionGit(git, renames, tracked, history, repo)


def _renames(git: Git, args: list[str]) -> list[tuple[str, str]]:
    """(old, new) renames `git diff <args>` finds."""
    try:
        out = run_git(git, "diff", *args)
    except GitError:
        return []
    return _rename_fields(git, out.split("\0"))


def _rename_fields(git: Git, fields: list[str]) -> list[tuple[str, str]]:
    found = []
    for i in range(len(fields) - 2):
        if fields[i].startswith("R"):
            old, new = _from_git(git, fields[i + 1]), _from_git(git, fields[i + 2])
            if old and new:
                found.append((old, new))
    return found


def _exact_renames(
    git: Git, history: GitHistory, gone: Mapping[str, set[str]]
) -> dict[str, list[tuple[str, str]]]:
    """Per commit, the gone files renamed unchanged between it and HEAD: what `git diff
    -M100% <commit> HEAD` says of them, for all the commits in one `git diff-tree
    --stdin` of their root trees (git echoes each pair of trees before its answer).

    An unchanged file keeps its object id, so the only files it can have become are
    those of the work tree's list with the id it had at one of the commits: the diff is
    limited to the gone files and those (a whole-tree diff of an old commit lists
    thousands of changes to find them; limited, git reads only their folders)."""
    commits = sorted(gone)
    olds = sorted({path for paths in gone.values() for path in paths})
    if any("\n" in path for path in olds):
        return {}  # not a name the object lookup can ask: git diffs the whole trees
    history.fetch(["HEAD:", *(f"{c}:" for c in commits)])
    history.fetch(history.spec(c, p) for c in commits for p in olds)
    head = history.tree("HEAD:") if commits else None
    if head is None:
        return {}
    pairs: dict[str, str] = {}
    for commit in commits:
        then = history.tree(f"{commit}:")
        if then is not None:
            pairs[f"{then.oid} {head.oid}"] = commit
    if not pairs:
        return {}
    ids = {oid for c in pairs.values() for p in olds if (oid := history.object_id(c, p))}
    news = sorted({new for oid in ids for new in history.indexed_as(oid)} - set(olds))
    if not news:
        return {commit: [] for commit in pairs.values()}
    try:
        out = run_git(
            git, "--literal-pathspecs", "diff-tree", "--stdin", "-r", "-M100%", *_RENAMES,
            "--", *(_to_git(git, p) for p in [*olds, *news]),
            stdin="".join(line + "\n" for line in pairs),
        )  # fmt: skip
    except GitError:
        return {}
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for field in out.split("\0"):
        line, newline, rest = field.partition("\n")
        if newline and line in pairs:
            current = sections.setdefault(pairs[line], [])
            field = rest
        current.append(field)
    return {commit: _rename_fields(git, sections.get(commit, [])) for commit in pairs.values()}


class MentionGit(Git):
    """The Git the Verifier asks about mentions: renames since each mention's commit,
    and line maps from many commits learned at once.

    The Verifier asks `line_maps` once per commit, a `git diff` process each (a
    store's mentions are written at dozens of commits). Most cited files are the
    same in the work tree as at HEAD; for those the diff from a commit to the work
    tree is the diff between two trees, and `git diff-tree --stdin` takes many
    pairs of trees in one process: each pair is the cited file's folder at the
    commit and at HEAD, limited to the cited files' names, so git diffs exactly
    those files and nothing else. A file changed in the work tree, gone, or
    renamed is left to `git diff` as before.
    """

    def __init__(
        self,
        git: Git,
        renames: dict[str, str],
        tracked: frozenset[str] | None,
        history: GitHistory,
        repo: Repository,
    ) -> None:
        super().__init__(git.toplevel, git.prefix)
        self._history, self._repo = history, repo
        self.__dict__["renames"] = renames  # seeds the cached properties (see Git)
        if tracked is not None:
            self.__dict__["tracked"] = tracked
        self._known: dict[tuple[str, str], LineMap | None] = {}
        self._same: dict[str, bool] = {}  # path -> the work tree's file is HEAD's

    def line_maps(self, base: str, paths: Iterable[str]) -> dict[str, LineMap]:
        wanted = set(paths)
        if wanted and all((base, p) in self._known for p in wanted):
            return {p: m for p in wanted if (m := self._known[(base, p)]) is not None}
        found = super().line_maps(base, wanted)
        for path in wanted:
            if path not in self.renames:  # its map does not depend on the other paths
                self._known[(base, path)] = found.get(path)
        return found

    def will_ask(self, wanted: Mapping[str, Iterable[str]]) -> None:
        """Learn at once the line maps of these files (per commit) that are the same in
        the work tree as at HEAD."""
        history, repo = self._history, self._repo
        asked = [
            (commit, path)
            for commit, paths in wanted.items()
            for path in sorted(set(paths))
            if (commit, path) not in self._known and path not in self.renames and "\n" not in path
        ]
        folders = {(commit, _to_git(self, path).rpartition("/")[0]) for commit, path in asked}
        history.fetch(spec for c, f in folders for spec in (f"HEAD:{f}", f"{c}:{f}"))
        pairs: dict[str, list[tuple[str, str, str]]] = {}  # "old new" -> (commit, path, name)
        trees: dict[str, tuple[Tree, Tree]] = {}  # "old new" -> the two folders
        for commit, path in asked:
            folder, _, name = _to_git(self, path).rpartition("/")
            now, then = history.tree(f"HEAD:{folder}"), history.tree(f"{commit}:{folder}")
            if now is None or then is None:
                continue
            at_head, at_commit = now.get(name), then.get(name)
            if not _plain_file(at_head) or not _plain_file(at_commit):
                continue
            assert at_head is not None and at_commit is not None
            same = self._same.get(path)
            if same is None:  # read and hashed once, whatever the commits asked
                same = self._same[path] = _same_in_work_tree(repo, path, at_head[1])
            if not same:
                continue  # changed since HEAD: `git diff` from the commit says how
            if at_commit[1] == at_head[1]:
                self._known[(commit, path)] = None  # the same file: nothing moved
                continue
            line = f"{then.oid} {now.oid}"
            pairs.setdefault(line, []).append((commit, path, name))
            trees[line] = (then, now)
        names = {n: n.encode("utf-8", "surrogateescape") for a in pairs.values() for *_, n in a}
        changed = {
            line: {n for n, raw in names.items() if _differs(then.entry(raw), now.entry(raw))}
            for line, (then, now) in trees.items()
        }
        for batch in _batches(pairs, changed):
            self._learn_pairs(batch)

    def _learn_pairs(self, pairs: dict[str, list[tuple[str, str, str]]]) -> None:
        """Diff these pairs of folders (limited to the names asked) in one process."""
        names = sorted({name for asked in pairs.values() for _, _, name in asked})
        stdin = "".join(line + "\n" for line in pairs)
        try:
            out = run_git(
                self, "--literal-pathspecs", "diff-tree", "--stdin", "-p", "-U0",
                "--no-renames", "--no-color", "--no-ext-diff", "--diff-filter=M", "--",
                *names, stdin=stdin,
            )  # fmt: skip
        except GitError:
            return
        # Git echoes each pair before its diff, which may hold other files of the folder
        # cited at other commits: only the files asked of this pair are read.
        starts = sorted((at, line) for line in pairs if (at := _line_at(out, line)) >= 0)
        sections: dict[str, str] = {}
        for (at, line), (end, _) in zip(starts, [*starts[1:], (len(out), "")], strict=True):
            headers = {f"a/{name} b/{name}" for _, _, name in pairs[line]}
            chunks = ("\n" + out[at + len(line) + 1 : end]).split("\ndiff --git ")
            sections[line] = "\n".join(
                "diff --git " + chunk
                for chunk in chunks[1:]
                if chunk.partition("\n")[0] in headers or chunk.startswith('"')
            )  # a quoted name is read to be sure
        for line, asked in pairs.items():
            if line not in sections:
                continue  # not echoed: left to `git diff`
            maps = {m.old_path: m for m in _parse_diff(sections[line])}
            for commit, path, name in asked:
                found = maps.get(name)
                self._known[(commit, path)] = (
                    LineMap(path, path, found.hunks, found.removed) if found is not None else None
                )


def _batches(
    pairs: dict[str, list[tuple[str, str, str]]],
    changed: Mapping[str, set[str]],
    most: int = MAX_DIFF_BATCHES,
) -> list[dict[str, list[tuple[str, str, str]]]]:
    """The pairs split so that git diffs no file nobody asked for: git diffs every name
    asked in a process in every pair of it, and a folder cited at many commits (one file
    at each) would have each of its cited files diffed at every one of those commits.
    `changed`: per pair, the names asked anywhere whose file differs between its two
    folders. A pair goes to the first process where it costs no such diff, else to a
    new one, else (past `most`) to the one where it costs the fewest."""
    batches: list[tuple[dict[str, list[tuple[str, str, str]]], set[str]]] = []

    def waste(batch: tuple[dict[str, list[tuple[str, str, str]]], set[str]], line: str) -> int:
        asked, names = batch
        mine = {name for _, _, name in pairs[line]}
        cost = len((names - mine) & changed[line])
        for other, wanted in asked.items():
            cost += len((mine - {name for _, _, name in wanted}) & changed[other])
        return cost

    for line in pairs:
        costs = [waste(batch, line) for batch in batches]
        if 0 in costs:
            n = costs.index(0)
        elif len(batches) < most:
            n = len(batches)
            batches.append(({}, set()))
        else:
            n = costs.index(min(costs))
        batches[n][0][line] = pairs[line]
        batches[n][1].update(name for _, _, name in pairs[line])
    return [asked for asked, _ in batches]


def _line_at(text: str, line: str) -> int:
    """Where a whole line of the text starts (-1: nowhere)."""
    at = text.find(line + "\n")
    while at > 0 and text[at - 1] != "\n":
        at = text.find(line + "\n", at + 1)
    return at


def _differs(then: tuple[bytes, bytes] | None, now: tuple[bytes, bytes] | None) -> bool:
    """Whether `git diff-tree --diff-filter=M` shows a name that two folders hold."""
    return then is not None and now is not None and then != now


def _plain_file(entry: tuple[str, str] | None) -> bool:
    return entry is not None and entry[0] in ("100644", "100755")


def _same_in_work_tree(repo: Repository, path: str, oid: str) -> bool:
    """Whether the work tree's file has exactly the bytes of that blob."""
    file = repo.resolve(path)
    if file is None or os.path.islink(file):
        return False
    try:
        with open(file, "rb") as handle:
            return blob_hash(handle.read()) == oid
    except OSError:
        return False


def follow_line_maps(
    git: Git,
    repo: Repository,
    drafts: list[list[CitationCheck | Ask]],
    judged: list[list[CitationCheck]],
) -> None:
    """Where a snippet cannot tell, git's diff from the mention's commit does.

    A blank cited line has no text to look for, so the Verifier can only say
    the line exists; a range with lines inserted inside it no longer holds its
    snippet in one piece, though none of its lines changed; and a moved range
    whose first line is blank is found where its text starts. For these the
    diff says where each cited line went: all kept is valid or moved (a grown
    range ends further down). A changed or deleted line leaves the Verifier's
    verdict on a range (a block moved elsewhere is found by its text, not by
    the diff) and makes a blank line stale.
    """
    wanted: list[tuple[int, int, Ask]] = []
    for r, row in enumerate(drafts):
        for n, draft in enumerate(row):
            if not asks(draft):
                continue
            check = judged[r][n]
            blank = not "".join((draft.then.text or "").split())
            ranged = draft.citation.end_line is not None
            grown = ranged and check.status in (Verdict.STALE, Verdict.MOVED)
            if (blank or grown) and check.status is not Verdict.MISSING:
                wanted.append((r, n, draft))
    by_commit: dict[str, set[str]] = {}
    for _, _, draft in wanted:
        by_commit.setdefault(draft.citation.commit or "", set()).add(draft.citation.target)
    git.will_ask({c: paths for c, paths in by_commit.items() if c})
    maps = {c: git.line_maps(c, paths) for c, paths in by_commit.items() if c}
    for r, n, draft in wanted:
        citation = draft.citation
        line_map = maps.get(citation.commit or "", {}).get(citation.target)
        decided = _followed(judged[r][n], citation, line_map, repo)
        if decided is not None:
            judged[r][n] = decided


def _followed(
    check: CitationCheck, citation: Citation, line_map: LineMap | None, repo: Repository
) -> CitationCheck | None:
    """The verdict git's line map gives a mention (see `_by_line_maps`); None to keep
    the Verifier's. No map for a tracked file means it did not change since."""
    start = citation.line or 1
    end = citation.end_line or start
    path = line_map.new_path if line_map is not None else citation.target
    if not repo.read(path).is_text:
        return None
    now = [line_map.forward(n) if line_map is not None else n for n in range(start, end + 1)]
    renamed = path if path != citation.target else None
    since = (citation.commit or "")[:7]
    if any(n is None for n in now):
        blank = not "".join((citation.snippet or "").split())
        if not blank:
            return None
        gone = next(n for n, at in zip(range(start, end + 1), now, strict=True) if at is None)
        reason = f"line {gone} (blank when written) changed or was deleted since {since}"
        return replace(check, status=Verdict.STALE, current_path=path, current_line=None,
                       reason=reason, renamed_to=renamed, current_end=None)  # fmt: skip
    first, last = now[0], now[-1]
    assert first is not None and last is not None
    if first == start and last == end and renamed is None:
        reason = f"unchanged since the memory line was written ({since})"
        return replace(check, status=Verdict.VALID, current_path=path, current_line=start,
                       reason=reason, current_end=None)  # fmt: skip
    grew = citation.end_line is not None and last - first != end - start
    reason = f"found at line {first} (was {start})" + (
        f"; lines were inserted inside the range, which now ends at {last}" if grew else ""
    )
    if renamed:
        reason = f"renamed to {renamed}; " + reason
    return replace(check, status=Verdict.MOVED, current_path=path, current_line=first,
                   reason=reason, renamed_to=renamed,
                   current_end=last if citation.end_line is not None else None)  # fmt: skip


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0] or name


def asks(draft: CitationCheck | Ask) -> TypeGuard[Ask]:
    """Whether a draft verdict is a mention still to be verified."""
    return isinstance(draft, Ask)
