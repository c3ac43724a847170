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

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TypeGuard

from memory_enhancement.core.file_list import FileList
from memory_enhancement.core.model import Citation
from memory_enhancement.core.verdicts import CitationCheck, Verdict
from memory_enhancement.verify.blame import GitHistory
from memory_enhancement.verify.exact_renames import exact_renames
from memory_enhancement.verify.git import Git
from memory_enhancement.verify.git_objects import to_git as _to_git
from memory_enhancement.verify.line_maps import LineMap
from memory_enhancement.verify.mention_history import Ask
from memory_enhancement.verify.mention_maps import MentionGit
from memory_enhancement.verify.mention_renames import RENAMES, renamed_since
from memory_enhancement.verify.mention_renames import renames as diff_renames
from memory_enhancement.verify.repo import Repository, SourceStatus


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
    lines: set[tuple[str, str]] = set()  # (commit, path) of the gone files a line cites
    for ask in asks:
        target = ask.citation.target
        if ask.citation.commit and repo.read(target).status is SourceStatus.MISSING:
            gone.setdefault(ask.citation.commit, set()).add(target)
            if ask.citation.line is not None:
                lines.add((ask.citation.commit, target))
    renames: dict[str, str] = {}
    names = files_now() if gone else FileList(())
    # Rename detection over the whole tree compares every file added with every file
    # deleted since the commit (a third of a second each on a busy repository). Exact
    # renames are found by hash at once, for every commit in one process; renames with
    # edits are looked for among files whose name starts like the old one's (`x.py` ->
    # `pkg/x.py`, `x_example.py`, `x.py.bak`).
    exact = exact_renames(git, history, gone)
    later: dict[str, tuple[set[str], set[str]]] = {}
    for commit, paths in sorted(gone.items()):
        found = exact.get(commit)
        if found is None:  # the trees could not be read: as git diff says
            found = diff_renames(git, ["-M100%", *RENAMES, commit, "HEAD"])
        for old, new in found:
            renames.setdefault(old, new)
        offered = {p for path in paths for p in names.named_like(_stem(path))}
        if offered and not _nothing_to_pair(paths, offered, renames, history, git):
            spec = [_to_git(git, p) for p in sorted(paths | offered)]
            if not cannot_pair(history, git, commit, sorted(paths), sorted(offered - paths)):
                for old, new in diff_renames(git, ["-M", *RENAMES, commit, "HEAD", "--", *spec]):
                    renames.setdefault(old, new)
            # Only for the files whose lines a mention cites: a file mention (a whole
            # file, file_checks.py) of a file renamed and then edited past what the direct
            # diff pairs is told `missing`. Real stores name hundreds of files gone since,
            # often of common names (`SKILL.md`), and following each through the history
            # cost rjmurillo/ai-agents' first run 4.5 s.
            unpaired = {p for p in paths if p not in renames and (commit, p) in lines}
            # Renamed, then edited past what the direct diff pairs: only into a file
            # that was not there at the commit and has the same name in another folder
            # (a package renamed). The history it takes to follow other names cost a
            # first run 0.2 s on rjmurillo/ai-agents, where `SESSION-PROTOCOL.md` offered
            # `SESSION-PROTOCOL-debate-log.md` and no rename was there to find.
            base = {p.rpartition("/")[2] for p in unpaired}
            added = {
                p for p in offered
                if p.rpartition("/")[2] in base and history.object_id(commit, p) is None
            }  # fmt: skip
            if added:
                later[commit] = (unpaired, added)
    for old, new in renamed_since(git, later):
        renames.setdefault(old, new)
    if gone:
        _through_staged(git, history, renames, gone)
        _follow_staged(history, renames, gone)
    listed = files_now()
    tracked = (
        frozenset(listed.files) | frozenset(listed.submodules)
        if isinstance(listed.files, frozenset)
        else None
    )
    ours = MentionGit(git, renames, tracked, history, repo)
    expected: dict[str, set[str]] = {}
    for ask in asks:
        if ask.citation.commit and (ask.citation.end_line is not None or _blank(ask)):
            expected.setdefault(ask.citation.commit, set()).add(ask.citation.target)
    ours.expect(expected)  # what follow_line_maps will ask, mostly
    return ours


def _nothing_to_pair(
    paths: set[str], offered: set[str], renames: Mapping[str, str], history: GitHistory, git: Git
) -> bool:
    """Whether `git diff -M <commit> HEAD -- <paths and offered>` cannot change `renames`:
    every gone file of the commit has its rename already, and no file offered is staged
    as added (so each is at HEAD: git pairs a file added since only with one deleted
    since, and those are the gone files). On rjmurillo/ai-agents 5 of 35 such diffs, a
    process each."""
    if any(p not in renames for p in paths):
        return False
    added = history.staged.changes()[0]  # as git names them, like the diff's paths
    return not (added and any(_to_git(git, p) in added for p in offered))


def _through_staged(
    git: Git, history: GitHistory, renames: dict[str, str], gone: Mapping[str, set[str]]
) -> None:
    """Pair the gone files a commit since renamed into a name a staged `git mv` moves on:
    that name is in HEAD and not in git's index, and the pairing above looks among the
    index's files (exact renames) and the names like the old one's, so the file read
    `missing`, "deleted" by the commit that renamed it (found on 2sem/talktrans:
    `TranslationManager.swift` renamed, then moved again before the commit). Git's diff to
    HEAD of those files and the staged renames' sources pairs them; asked only while a
    rename is staged."""
    sources = history.staged.renames()
    if not sources:
        return
    for commit, paths in sorted(gone.items()):
        left = sorted(p for p in paths if p not in renames)
        if not left:
            continue
        spec = [_to_git(git, p) for p in [*left, *sorted(sources)]]
        for old, new in diff_renames(git, ["-M", *RENAMES, commit, "HEAD", "--", *spec]):
            if old in left and new in sources:
                renames.setdefault(old, new)


def cannot_pair(
    history: GitHistory, git: Git, commit: str, gone: list[str], offered: list[str]
) -> bool:
    """Whether `git diff -M <commit> HEAD -- <gone> <offered>` (`--literal-pathspecs` or
    not) cannot name a rename, told from the paths' entries in the two trees: git pairs a
    file the commit has and HEAD has not with one HEAD has and the commit has not, and
    never two whose sizes differ more than twofold (diffcore-rename.c,
    `estimate_similarity`: such files cannot be the 50% alike that `-M` asks for; an exact
    rename keeps its size). Sizes are compared for a few paths only (each file is read);
    past that git is asked once both sides exist (`gone` looked up first). Git is asked as
    before for a path that is a folder or a submodule in either tree (the diff holds what
    lies under it), that changed type (a symlink made a file), or that it would read as a
    pattern. On rjmurillo/ai-agents 8 of the 30 such diffs of a first run, a process each,
    none of them naming a rename."""
    deleted: list[str] = []  # the commit has it, HEAD has not
    added: list[str] = []  # HEAD has it, the commit has not
    for path in [*gone, *offered]:
        named = _to_git(git, path)
        if "\n" in named or _GLOB.intersection(named) or named.startswith(":"):
            return False
        then, now = _entry(history, commit, named), _entry(history, "HEAD", named)
        kinds = {entry[0][:2] for entry in (then, now) if entry is not None}
        if kinds & {"04", "16"} or len(kinds) > 1:  # a folder, a submodule, a type change
            return False
        if then is not None and now is None:
            deleted.append(path)
        elif now is not None and then is None:
            added.append(path)
        if deleted and added and len(gone) + len(offered) > _WEIGHED:
            return False
    olds = [history.size(commit, p) for p in deleted]
    news = [history.size("HEAD", p) for p in added]
    return all(
        a is not None and b is not None and 2 * min(a, b) < max(a, b) for a in olds for b in news
    )


_GLOB = frozenset("*?[\\")  # in a path git reads as a pattern: what it matches is git's to say
_WEIGHED = 16  # paths whose files' sizes `cannot_pair` compares


def _entry(history: GitHistory, commit: str, named: str) -> tuple[str, str] | None:
    """(mode, object id) of the entry at a path (as git names it) at a commit; None: none."""
    folder, _, name = named.rpartition("/")
    tree = history.tree(f"{commit}:{folder}")
    return tree.get(name) if tree is not None else None


def _follow_staged(
    history: GitHistory, renames: dict[str, str], gone: Mapping[str, set[str]]
) -> None:
    """Carry the renames on through those staged and not committed yet (HEAD to git's
    index): a pre-commit hook runs with the `git mv` staged, and a mention of the moved
    file was `missing` until the commit (found on 2sem/talktrans, verified before its
    merge was committed). The index, not the work tree: comparing the work tree with
    HEAD reads every file of it (0.35 s of a first run on rjmurillo/ai-agents, 9,486
    files, one of them deleted), and what the commit will hold is the index."""
    staged = history.staged.renames()
    if not staged:
        return
    for old, new in renames.items():
        renames[old] = staged.get(new, new)
    for paths in gone.values():
        for path in paths:
            if path not in renames and path in staged:
                renames[path] = staged[path]


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
            blank = _blank(draft)
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
        if decided is not None:  # told as the Ask tells it (`file added after...; `)
            judged[r][n] = replace(decided, reason=draft.prefix + decided.reason)


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


def _blank(ask: Ask) -> bool:
    """Whether the cited lines were blank when written (a snippet cannot find them); a
    whole file (a file mention) has no lines to be blank."""
    return ask.citation.line is not None and not "".join((ask.then.text or "").split())


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0] or name


def asks(draft: CitationCheck | Ask) -> TypeGuard[Ask]:
    """Whether a draft verdict is a mention still to be verified."""
    return isinstance(draft, Ask)
