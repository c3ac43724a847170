"""Commands over the index: search, context, resolve, reindex, stats, graduate."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

import click

from memory_enhancement.cli.app import (
    CONTEXT,
    Group,
    app,
    emit_json,
    exit_if_skipped,
    json_option,
    plural,
    store_options,
    warn,
)
from memory_enhancement.cli.render import print_memory

MODES = ["auto", "lexical", "semantic", "hybrid"]
MODE_HELP = (
    "auto (the default): hybrid when the [semantic] extra is installed and the semantic "
    "index is current (built by `reindex --semantic` or an earlier semantic search), "
    "else lexical (BM25). semantic and hybrid embed what is not embedded yet first."
)


@contextlib.contextmanager
def embedding_progress() -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr while memories are embedded, only on a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    bars: list[Any] = []

    def update(done: int, total: int) -> None:
        if not bars:
            bar = click.progressbar(length=total, label="embedding memories", file=sys.stderr)
            bars.append(bar.__enter__())
        bars[0].update(done - bars[0].pos)

    try:
        yield update
    finally:
        if bars:
            bars[0].__exit__(None, None, None)


def _mode_note(service: Any, mode: str) -> str:
    """The mode to search in; says on stderr why auto stays lexical when the index is stale."""
    chosen = service.resolve_mode(mode).value
    if mode == "auto" and chosen == "lexical":
        state = service.semantic_state()
        if state.available and state.embedded and not state.current:
            click.echo(
                f"note: {state.pending} memories changed since the semantic index was built; "
                "searched lexically (run `memory-enhancement reindex --semantic`)",
                err=True,
            )
    return str(chosen)


@click.command(context_settings=CONTEXT)
@click.argument("words", metavar="QUERY...", nargs=-1, required=True)
@click.option("--limit", "-n", default=10, show_default=True, help="How many hits.")
@click.option("--category", help="Only memories under this category.")
@click.option("--tag", help="Only memories with this tag (`tags:`, or `keywords:`, `topics:`).")
@click.option("--include-expired", is_flag=True, help="Also search expired memories.")
@click.option("--mode", type=click.Choice(MODES), default="auto", help=MODE_HELP)
@click.option("--verify", "check", is_flag=True, help="Verify the hits' citations now.")
@click.option(
    "--min-confidence",
    type=float,
    metavar="X",
    help="Drop hits whose confidence, as `health` shows it (history included: 0.70 for "
    "a memory verified valid now that nobody confirmed or used), is below X (implies "
    "--verify); hits without citations are dropped too.",
)
@click.option(
    "--min-holding",
    type=float,
    metavar="X",
    help="Drop hits whose share of citations that hold now (valid or moved) is below X "
    "(implies --verify; 1 keeps only hits whose every citation holds); hits without "
    "citations are dropped too.",
)
@json_option
@store_options
def search(
    words: tuple[str, ...],
    limit: int,
    category: str | None,
    tag: str | None,
    include_expired: bool,
    mode: str,
    check: bool,
    min_confidence: float | None,
    min_holding: float | None,
    as_json: bool,
) -> None:
    """Search memories: hybrid (BM25 and meaning) by default when the [semantic] extra is
    installed and the semantic index is current, else BM25. Finds words inside Chinese,
    Japanese and Korean text too.

    The query is plain text, its words quoted or not (`search api version` searches
    "api version"): quotes, `-`, `*` and parentheses are words, not syntax.

    \b
    Examples:
      memory-enhancement search "api version"
      memory-enhancement search ヘッドレス --tag frontend -n 3
      memory-enhancement search retries --min-holding 1 --json
    """
    from memory_enhancement.core.verdicts import UNCOUNTED, failing_marks
    from memory_enhancement.service.serialize import hit_dict

    query = " ".join(words)  # `search widget padding` was an error: extra argument
    service = app().service()
    with embedding_progress() as progress:
        results = service.search(
            query, limit=limit, mode=_mode_note(service, mode), category=category, tag=tag,
            include_expired=include_expired, verify=check, min_confidence=min_confidence,
            min_holding=min_holding, progress=progress,
        )  # fmt: skip
    if as_json:
        emit_json([hit_dict(r) for r in results])
        return
    if not results:
        click.echo("no matches")
        return
    for n, result in enumerate(results, start=1):
        row = result.hit.row
        note = ""
        if result.verification is not None and result.verification.everything:  # mentions too
            v = result.verification
            note = "  [verified]" if v.valid else f"  [{failing_marks(v.everything)}]"
            counted = [c for c in v.everything if c.status.value not in UNCOUNTED]
            if counted:
                held = sum(c.status.value in ("valid", "moved") for c in counted)
                note += f" {held} of {len(counted)} hold"
            if result.confidence is not None:
                note += f", confidence {result.confidence:.2f}"
        click.secho(f"{n}. {result.citation_id} {row.path}  {row.title}{note}", bold=True)
        click.echo(f"   {' '.join(result.hit.snippet.split())}")


@click.command(context_settings=CONTEXT)
@click.argument("words", metavar="QUERY...", nargs=-1, required=True)
@click.option("--limit", "-n", default=5, show_default=True, help="At most this many memories.")
@click.option(
    "--max-tokens",
    default=2000,
    show_default=True,
    help="Token budget (chars / 4; a Chinese, Japanese or Korean character is a token).",
)
@click.option("--mode", type=click.Choice(MODES), default="auto", help=MODE_HELP)
@click.option(
    "--verify",
    "check",
    is_flag=True,
    help="Verify citations; flag the memories that fail (MISSING, STALE, as `verify` says).",
)
@json_option
@store_options
def context(
    words: tuple[str, ...], limit: int, max_tokens: int, mode: str, check: bool, as_json: bool
) -> None:
    """Print a markdown block of the memories answering QUERY, ready for a prompt.

    The query's words are one query, quoted or not, as `search` takes them."""
    from memory_enhancement.service.serialize import hit_dict

    query = " ".join(words)

    service = app().service()
    with embedding_progress() as progress:
        block = service.context(
            query, limit=limit, max_tokens=max_tokens, verify=check,
            mode=_mode_note(service, mode), progress=progress,
        )  # fmt: skip
    text, used = block
    if as_json:
        emit_json({"context": text, "memories": [hit_dict(r) for r in used]})
    elif text:
        click.echo(text, nl=False)
    else:  # stdout stays empty (an agent pastes it as it is); a person is told why
        why = f"no memory matches {query!r}"
        if block.matched:
            why = f"no memory fits in --max-tokens {max_tokens} ({block.matched} matched)"
        click.echo(why, err=True)


@click.command(context_settings=CONTEXT)
@click.argument("citation_id")
@json_option
@store_options
def resolve(citation_id: str, as_json: bool) -> None:
    """Show the memory a citation ID names: mem:a7Bc3x, [mem:a7Bc3x] or a7Bc3x (a memory's
    path or name, as `get` takes it, works too)."""
    from memory_enhancement.service.serialize import memory_dict

    fetched = app().service().resolve(citation_id)
    warn(fetched.warnings)
    if as_json:
        emit_json(memory_dict(fetched.memory, fetched.citation_id, fetched.linked))
    else:
        print_memory(fetched.memory, fetched.citation_id, fetched.linked)


@click.command(context_settings=CONTEXT)
@click.option(
    "--semantic",
    is_flag=True,
    help="Also embed every memory not embedded yet (needs the [semantic] extra), so that "
    "search and context default to hybrid. Embeddings are kept across rebuilds; only "
    "memories whose text changed are embedded again.",
)
@json_option
@store_options
def reindex(semantic: bool, as_json: bool) -> None:
    """Rebuild the index of the store from its files."""
    import time

    service = app().service()
    stats = service.reindex()
    skipped = service.list_memories(include_expired=True).skipped
    warn(skipped)
    embedded, seconds = None, 0.0
    if semantic:
        started = time.perf_counter()
        with embedding_progress() as progress:
            embedded = service.embed(progress)
        seconds = time.perf_counter() - started
    if as_json:
        data: dict[str, Any] = {
            "indexed": stats.added,
            "seconds": round(stats.seconds, 3),
            "skipped": skipped,
        }
        if embedded is not None:
            data.update(embedded=embedded, embed_seconds=round(seconds, 3))
        emit_json(data)
    else:
        indexed = plural(stats.added, "memory", "memories")
        click.echo(f"indexed {indexed} in {stats.seconds:.2f}s ({service.index.path})")
        if embedded is not None:
            done = plural(embedded, "memory", "memories")
            click.echo(f"embedded {done} in {seconds:.2f}s (others were up to date)")
    exit_if_skipped(skipped)


@click.group(cls=Group, context_settings=CONTEXT)
def stats() -> None:
    """Usage statistics: which memories agents rely on."""


def _popular_dicts(items: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"mem:{p.citation_id}",
            "path": p.path,
            "uses": p.uses,
            "sessions": p.sessions,
            "last_used": p.last_used,
        }
        for p in items
    ]


def _print_popular(items: list[Any], empty: str = "no usage recorded yet") -> None:
    if not items:
        click.echo(empty)
    for p in items:
        where = p.path or "(removed)"
        click.echo(
            f"{p.uses:>5}  [mem:{p.citation_id}]  {where}  ({plural(p.sessions, 'session')})"
        )


@stats.command("popular", context_settings=CONTEXT)
@click.option("--limit", "-n", default=10, show_default=True, help="How many to show.")
@json_option
@store_options
def popular(limit: int, as_json: bool) -> None:
    """The most used memories."""
    items = app().service().popular(limit)
    if as_json:
        emit_json(_popular_dicts(items))
    else:
        _print_popular(items)


@stats.command("graduation", context_settings=CONTEXT)
@click.option("--min-uses", default=5, show_default=True, help="Uses needed to be a candidate.")
@json_option
@store_options
def graduation(min_uses: int, as_json: bool) -> None:
    """Memories used often enough to graduate into the global store."""
    items = app().service().graduation_candidates(min_uses)
    if as_json:
        emit_json(_popular_dicts(items))
    else:
        _print_popular(items, f"no memory used {plural(min_uses, 'time')} or more yet")


@click.command(context_settings=CONTEXT)
@click.argument("memory")
@click.option("--to", "to_store", default="global", show_default=True, help="Target store name.")
@json_option
@store_options
def graduate(memory: str, to_store: str, as_json: bool) -> None:
    """Copy a project memory into the global (or another) store and link the two.

    File citations go only into a store inside this repository (the global store is not:
    a warning names those dropped). The copy keeps the memory's line endings and BOM."""
    from memory_enhancement.service.serialize import memory_dict
    from memory_enhancement.store.locations import named_store

    state = app()
    target = state.service(named_store(to_store, cwd=state.cwd, env=state.env))
    result = state.service().graduate(memory, target)
    warn(result.warnings)
    if as_json:
        emit_json(
            {
                **memory_dict(result.memory, result.citation_id, result.linked),
                "store": str(target.store.root),
            }
        )
    else:
        click.echo(f"graduated {memory} -> {to_store}:{result.path}  [mem:{result.citation_id}]")


COMMANDS = [search, context, resolve, reindex, stats, graduate]
