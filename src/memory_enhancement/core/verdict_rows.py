"""A prose mention's verdict as a JSON row, and a memory's verdicts kept as rows.

The mention cache (verify/mention_cache.py) keeps each memory's verdicts between runs
as these rows. A rerun with nothing changed takes them as they are, and on a real
store that is 1,500 verdicts in 500 memories: building a `CitationCheck`, its
`Citation` and its `Mention` for each, and encoding each back into JSON, cost more
than the rest of such a run. So kept verdicts are handed on as `Recalled`: the
history, the counts and the JSON writer read its rows as they are, and whatever
else asks gets the objects (`built`), made once, when first asked for.

Even decoding the rows and writing them out as JSON cost a rerun a fifth of its
time, so the cache also keeps what a rerun reads without them: each verdict's status,
the failing ones, and the verdicts as the JSON every front end shows (`mention_json`,
the one definition of that text: service/serialize.py writes built verdicts with it
too), and for a memory citing nothing else its own JSON around them
(`verification_tail`). The rows stay JSON until something asks for them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from json.encoder import encode_basestring as _str  # C; the encoder's own, ensure_ascii=False
from typing import Any, overload

from memory_enhancement.core.mentions import Mention
from memory_enhancement.core.model import Citation, is_url
from memory_enhancement.core.verdicts import FAILING, CitationCheck, Verdict, share_of

# The fields of a check's row and a mention's row (`encode_check`, `encode_mention`).
CHECK_FIELDS = 13
MENTION_FIELDS = 14
# Places read without building the verdict: a check row's status, a mention row's path
# as written, its form and whether it was written from the root.
STATUS = 5
MENTION_PATH = 3
MENTION_FORM = 6
MENTION_ROOTED = 13
_VERDICTS = {verdict._value_: verdict for verdict in Verdict}


def encode_check(check: CitationCheck) -> list[Any]:
    c = check.citation
    return [
        c.target, c.line, c.end_line, c.snippet, c.commit, check.status._value_,
        check.current_path, check.current_line, check.reason, check.renamed_to,
        check.written_in, list(check.candidates), check.current_end,
    ]  # fmt: skip


def decode_check(row: list[Any], mention: Mention) -> CitationCheck:
    target, line, end, snippet, commit, status, path, at, reason, renamed, written, cands, last = (
        row
    )
    citation = Citation(target, line, end, snippet, commit=commit)
    return CitationCheck(
        citation, _VERDICTS[status], path, at, reason, renamed, mention, written, tuple(cands),
        last,
    )  # fmt: skip


def encode_mention(m: Mention) -> list[Any]:
    return [
        m.line, m.column, m.text, m.path, m.start, m.end, m.form, m.path_at, m.start_at,
        m.end_at, m.repository, m.ref, m.in_code, m.rooted,
    ]  # fmt: skip


def decode_mention(row: list[Any]) -> Mention:
    line, column, text, path, start, end, form, path_at, start_at, end_at, repo, ref, code, at = row
    return Mention(
        line, column, text, path, start, end, form, _span(path_at), _span(start_at),
        _span(end_at), repo, ref, code, bool(at),
    )  # fmt: skip


def _span(value: list[int] | None) -> tuple[int, int] | None:
    if value is None:
        return None
    first, last = value
    return int(first), int(last)


def mention_json(check: list[Any], said: list[Any]) -> str:
    """A mention's verdict as `--json` and the MCP server show it (service/serialize.py's
    `mention_dict`, encoded as `json.JSONEncoder(ensure_ascii=False)` would, character
    for character: a test checks), from its rows."""
    target, line, end, snippet, _, status, path, at, reason, renamed, written, candidates, _ = check
    anchored = snippet is not None or ("://" in target and is_url(target))
    # `null` written out: 1,500 mentions a run, eight values each.
    return (
        f'{{"path": {_str(target)}, "line": {"null" if line is None else line}, '
        f'"end_line": {"null" if end is None else end}, '
        f'"snippet": {"null" if snippet is None else _str(snippet)}, "status": {_str(status)}, '
        f'"current_path": {"null" if path is None else _str(path)}, '
        f'"current_line": {"null" if at is None else at}, "reason": {_str(reason)}, '
        f'"anchored": {"true" if anchored else "false"}, '
        f'"renamed_to": {"null" if renamed is None else _str(renamed)}, '
        f'"mention": {_str(said[2])}, "memory_line": {said[0]}, "column": {said[1]}, '
        f'"form": {_str(said[6])}, "written_in": {"null" if written is None else _str(written)}, '
        f'"candidates": [{", ".join(map(_str, candidates))}]}}'
    )


def verification_tail(
    failing: list[tuple[str, int | None, str]], statuses: list[str], citations: str
) -> str:
    """A memory's verification JSON (service/serialize.verification_json) after its id and
    before its mentions: whether it is valid, its share, its failing verdicts (`failing`)
    and its citations' JSON (`citations`, joined by ", "). Defined once, here: the mention
    cache keeps it for a memory that cites nothing (`Recalled.tail`)."""
    stale = (
        ", ".join(
            f'{{"path": {_str(target)}, "line": {"null" if line is None else line}, '
            f'"reason": {_str(reason)}}}'
            for target, line, reason in failing
        )
        if failing
        else ""
    )
    confidence = share_of(statuses)
    share = "null" if confidence is None else repr(confidence)
    return (
        f', "valid": {"false" if failing else "true"}, "confidence": {share}, '
        f'"holding": {share}, "stale_citations": [{stale}], "citations": [{citations}]'
    )


def _json(text: str | bytes) -> Any:
    """Kept rows' JSON text (or its UTF-8 bytes, as the cache keeps it); ValueError for
    any other (nested too deep included)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("kept rows are nested too deep") from None


def _rows(value: Any, fields: int) -> bool:
    """Whether a value read back from the cache is a list of rows of this many fields: its
    first row, checked (the cache seals each row it keeps with a checksum, so what it
    gives back is what it was given: mention_cache.py; this catches a format change)."""
    return isinstance(value, list) and (
        not value or (isinstance(value[0], list) and len(value[0]) == fields)
    )


class EncodedMentions(Sequence[Mention]):
    """A memory's mentions as the cache keeps them: their rows as JSON bytes, read when
    first asked for, and the mentions decoded from those, which a rerun that keeps the
    memory's verdicts never does (it hands them on). `rooted`: whether one is written
    from the root (verify/rooted.py asks, and need not read the rows when none is)."""

    __slots__ = ("_count", "_mentions", "_rows", "_text", "rooted")

    def __init__(self, text: str | bytes, count: int, rooted: bool) -> None:
        self._text, self._count, self.rooted = text, count, rooted
        self._rows: list[list[Any]] | None = None
        self._mentions: list[Mention] | None = None

    @property
    def rows(self) -> list[list[Any]]:
        """The rows; ValueError when they are not this many mention rows (a format the
        cache's version should have kept out)."""
        if self._rows is None:
            rows = _json(self._text)
            if not _rows(rows, MENTION_FIELDS) or len(rows) != self._count:
                raise ValueError("kept mention rows are not mention rows")
            self._rows = rows
        return self._rows

    def _decoded(self) -> list[Mention]:
        if self._mentions is None:
            self._mentions = [decode_mention(row) for row in self.rows]
        return self._mentions

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, n: int) -> Mention: ...
    @overload
    def __getitem__(self, n: slice) -> list[Mention]: ...
    def __getitem__(self, n: int | slice) -> Mention | list[Mention]:
        return self._decoded()[n]

    def __iter__(self) -> Iterator[Mention]:
        return iter(self._decoded())


def mention_rows(mentions: Sequence[Mention]) -> list[list[Any]]:
    """The rows of a memory's mentions (those it was read with, when it was read so)."""
    if isinstance(mentions, EncodedMentions):
        return mentions.rows
    return [encode_mention(m) for m in mentions]


class Recalled:
    """A memory's verdicts on its mentions as the last run gave them, still as rows:
    `checks[n]` the verdict on the mention of `mentions[n]`. Kept verdicts come with
    their checks' rows as JSON text, read when first asked for, and with what a rerun
    reads without them: their statuses, the failing ones, and `wire`, the verdicts as
    `mention_json` writes them, joined by ", " (None when not kept so); `tail`, when the
    memory cites nothing, its `verification_tail` as the cache kept it (None: not kept)."""

    __slots__ = (
        "_built", "_checks", "_failing", "_hidable", "_mentions", "_statuses", "tail", "wire",
    )  # fmt: skip

    def __init__(
        self,
        checks: list[list[Any]] | str | bytes,
        mentions: list[list[Any]] | EncodedMentions,
        *,
        statuses: list[str] | None = None,
        failing: list[tuple[str, int | None, str]] | None = None,
        wire: str | None = None,
        hidable: bool | None = None,
        tail: str | None = None,
    ) -> None:
        self._checks, self._mentions = checks, mentions
        self._statuses, self._failing, self.wire, self.tail = statuses, failing, wire, tail
        self._hidable = hidable
        self._built: tuple[CitationCheck, ...] | None = None

    @property
    def checks(self) -> list[list[Any]]:
        checks = self._checks
        if isinstance(checks, (str, bytes)):
            checks = _json(checks)
            if not _rows(checks, CHECK_FIELDS) or len(checks) != len(self):
                raise ValueError("kept verdict rows are not verdict rows")
            self._checks = checks
        return checks

    @property
    def mentions(self) -> list[list[Any]]:
        said = self._mentions
        return said.rows if isinstance(said, EncodedMentions) else said

    @property
    def rooted(self) -> bool:
        """Whether a mention is written from the root (none: verify/rooted.py has nothing
        to leave out, and need not read the rows)."""
        said = self._mentions
        if isinstance(said, EncodedMentions):
            return said.rooted
        return any(row[MENTION_ROOTED] for row in said)

    @property
    def hidable(self) -> bool:
        """Whether verify/rooted.py may leave a verdict out, or not, by the folders of the
        work tree alone (a rooted path that named no file): as the cache kept it, else
        whenever a mention is rooted."""
        return self.rooted if self._hidable is None else self._hidable

    def __len__(self) -> int:
        if self._statuses is not None:
            return len(self._statuses)
        return len(self._mentions)

    def statuses(self) -> list[str]:
        if self._statuses is not None:
            return self._statuses
        return [row[STATUS] for row in self.checks]

    def seen(self) -> list[tuple[Any, ...]]:
        """Each verdict as the history compares it (core/batch_verdicts.Seen): target,
        line, end line, status, current path, current line."""
        return [(r[0], r[1], r[2], r[STATUS], r[6], r[7]) for r in self.checks]

    def failing(self) -> list[tuple[str, int | None, str]]:
        """The failing verdicts' target, line and reason (a memory's `stale_citations`)."""
        if self._failing is not None:
            return self._failing
        return [(r[0], r[1], r[8]) for r in self.checks if r[STATUS] in FAILING]

    def built(self) -> tuple[CitationCheck, ...]:
        """The verdicts as objects, made once."""
        if self._built is None:
            self._built = tuple(
                decode_check(row, decode_mention(said))
                for row, said in zip(self.checks, self.mentions, strict=True)
            )
        return self._built
