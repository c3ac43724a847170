"""The quick read path: `get`, `list`, `related`, `graph` and `search` without click.

An agent calls these many times a session, each a new process; through the
click group each paid 8-10 times a bare Python start in imports alone. Here a
plain command line (the command first, then its argument, `--dir`,
`--repo-root`, `--limit` or `--depth`) is answered from the index's rows by
`QuickReads`, printed exactly as the click commands print it. Anything else
(another option, `--json`, `--help`, no `--dir`, an index to sync, a memory
with warnings) returns False before printing a byte, and main() runs the click
group, which gives the same answer, or the error, the ordinary way.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from memory_enhancement.service.quick import Fetched, QuickReads
from memory_enhancement.store.homes import cache_dir, data_dir, git_root, store_key

COMMANDS = {"get": 1, "show": 1, "list": 0, "related": 1, "graph": 1, "search": 1}
VALUED = {
    "--dir": "dir",
    "--repo-root": "repo_root",
    "--limit": "limit",
    "-n": "limit",
    "--depth": "depth",
    "-d": "depth",
}
ALLOWED = {
    "get": {"dir", "repo_root"},
    "show": {"dir", "repo_root"},
    "list": {"dir", "repo_root", "limit"},
    "related": {"dir", "repo_root"},
    "graph": {"dir", "repo_root", "depth"},
    "search": {"dir", "repo_root"},  # its default mode and limit only: see _search
}


def parse(argv: list[str]) -> tuple[str, list[str], dict[str, str]] | None:
    """(command, arguments, options) of a command line this path takes, else None."""
    if not argv or argv[0] not in COMMANDS:
        return None
    command, args, options = argv[0], [], {}
    rest = iter(argv[1:])
    for token in rest:
        name, eq, value = token.partition("=")
        if token.startswith("-") and token != "-":
            key = VALUED.get(name if eq else token)
            if key is None or key not in ALLOWED[command]:
                return None
            if not eq:
                value = next(rest, "")
                if not value:
                    return None
            options[key] = value
        else:
            args.append(token)
    if len(args) != COMMANDS[command] or "dir" not in options:
        return None
    return command, args, options


def answer(argv: list[str], env: dict[str, str] | None = None) -> bool:
    """Answer the command line and return True, or return False having printed nothing."""
    parsed = parse(argv)
    encoding = (sys.stdout.encoding or "").lower().replace("-", "")
    if parsed is None or encoding != "utf8":
        return False
    command, args, options = parsed
    env = dict(os.environ) if env is None else env
    root = os.path.abspath(os.path.expanduser(options["dir"]))
    repo = options.get("repo_root")
    if not os.path.isdir(root) or (repo is not None and not os.path.isdir(repo)):
        return False  # the click path names the mistake
    if os.path.exists(os.path.join(root, ".memory-enhancement.yaml")):
        return False  # the store's settings (index tuning) are read by the service
    key = store_key(root)
    session = env.get("MEMORY_ENHANCEMENT_SESSION") or f"cli-{os.getppid()}"
    reads = QuickReads(
        root,
        os.path.join(cache_dir(env), "indexes", f"{key}.db"),
        os.path.join(data_dir(env), "state", f"{key}.db"),
        session,
        _repo_root(root, repo),
    )
    try:
        text = _text(reads, command, args, options)
    finally:
        reads.close()
    if text is None:
        return False
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `memory-enhancement list | head`, as the click group does
        sys.stderr.close()
        os._exit(0)
    return True


def _repo_root(root: str, given: str | None) -> str:
    """The repository the store's links to files are read in, as cli/app.repo_root finds
    it: --repo-root, else the git top-level of the store's folder, else the current folder."""
    if given is not None:
        return os.path.realpath(os.path.expanduser(given))
    return git_root(root) or os.getcwd()


def _text(reads: QuickReads, command: str, args: list[str], options: dict[str, str]) -> str | None:
    handlers: dict[str, Callable[[], str | None]] = {
        "get": lambda: _get(reads, args[0]),
        "show": lambda: _get(reads, args[0]),
        "list": lambda: _list(reads, options.get("limit")),
        "related": lambda: _related(reads, args[0]),
        "graph": lambda: _graph(reads, args[0], options.get("depth", "3")),
        "search": lambda: _search(reads, args[0]),
    }
    return handlers[command]()


def _whole(text: str | None, *, minimum: int) -> int | None:
    """An integer option as click reads it, or None (click then names the mistake)."""
    if text is None or not text.strip().lstrip("-").isdigit():
        return None
    number = int(text)
    return number if minimum <= number <= 2**31 - 1 else None  # a bigger one: core.MAX_COUNT


def _get(reads: QuickReads, reference: str) -> str | None:
    fetched = reads.get(reference)
    return None if fetched is None else render_memory(fetched, bold=sys.stdout.isatty())


def render_memory(memory: Fetched, *, bold: bool) -> str | None:
    """What `get` prints (cli/render.py's print_memory), or None for text click would change
    (it strips terminal escapes from what it prints when the output is not a terminal)."""
    header = "" if memory.content.lstrip().startswith("# ") else f"# {memory.title}"
    lines = [f"\x1b[1m{header}\x1b[0m" if bold else header] if header else []
    rows = [
        ("id", f"[mem:{memory.citation_id}]"),
        ("path", memory.path),
        ("format", memory.format),
        ("created", memory.created or "-"),
        ("updated", memory.updated or "-"),
        ("tags", ", ".join(memory.tags) or "-"),
        ("source", memory.source or "-"),
        ("expires", memory.expires or "-"),
    ]
    lines += [f"{label + ':':<10}{value}" for label, value in rows]
    if memory.citations:
        lines.append(f"citations ({len(memory.citations)}):")
        for target, line, end_line, snippet, is_url in memory.citations:
            ref = str(target)
            if line is not None and not is_url:
                ref += f":{line}-{end_line}" if end_line not in (None, line) else f":{line}"
            shown = f"  `{str(snippet).splitlines()[0]}`" if snippet else ""
            lines.append(f"  {ref}{shown}")
    if memory.links:
        lines += link_lines(memory.links)
    lines += ["", memory.content]
    text = "\n".join(lines) + "\n"
    return None if "\x1b" in text[len(lines[0]) if header else 0 :] else text


BROKEN = ("dangling", "ambiguous", "missing")  # core.links.LinkStatus.broken


def link_lines(links: Sequence[tuple[object, ...]]) -> list[str]:
    """The links part of `get` (here and in cli/render.py): each link as written and what
    it finds, in the words of `links` (target, type, line, status, resolved, candidates):
    `-> notes/x` (a memory), `-> README.md (repository file)`, `dangling: no such memory`,
    `ambiguous: a, b`, `missing: no such repository file or folder`, `external`."""
    broken = sum(link[3] in BROKEN for link in links)
    out = [f"links ({len(links)}{f', {broken} broken' if broken else ''}):"]
    for target, kind, line, status, resolved, candidates in links:
        if status == "resolved":
            state = f"-> {resolved}"
        elif status == "repository":
            state = f"-> {resolved} (repository file)"
        elif status == "dangling":
            state = "dangling: no such memory"
        elif status == "ambiguous":
            state = f"ambiguous: {', '.join(str(candidates or '').split(chr(31))[:4])}"
        elif status == "missing":
            state = "missing: no such repository file or folder"
        else:
            state = str(status)
        out.append(f"  {target}{'' if kind == 'link' else f' ({kind})'}  [line {line}]  {state}")
    return out


def _list(reads: QuickReads, limit_text: str | None) -> str | None:
    limit = None if limit_text is None else _whole(limit_text, minimum=1)
    if limit_text is not None and limit is None:
        return None
    rows = reads.listing(limit)
    if rows is None:
        return None
    if not rows:
        return "no memories\n"
    width = min(max(len(str(row[0])) for row in rows), 60)
    out = []
    for path, title, tags, cid in rows:
        shown = "  " + " ".join(f"#{t}" for t in str(tags).split("\x1f")) if tags else ""
        prefix = f"[mem:{cid}]  " if cid else ""
        out.append(f"{prefix}{path!s:<{width}}  {title}{shown}\n")
    text = "".join(out)
    return None if "\x1b" in text else text


def _related(reads: QuickReads, reference: str) -> str | None:
    found = reads.related(reference)
    if found is None:
        return None
    target, backlinks = found
    by_source: dict[str, list[tuple[str, int | None]]] = {}
    for source, kind, line in backlinks:
        by_source.setdefault(source, []).append((kind, line))
    out = [f"Memories linking to '{target}': {len(by_source)}\n"]
    for source, links in by_source.items():
        kinds = sorted({kind for kind, _ in links if kind != "link"})
        shown = f" ({', '.join(kinds)})" if kinds else ""
        lines = ", ".join(str(line) for _, line in links)
        out.append(f"  - {source}{shown}  [line{'s' * (len(links) > 1)} {lines}]\n")
    text = "".join(out)
    return None if "\x1b" in text else text


def _graph(reads: QuickReads, reference: str, depth_text: str) -> str | None:
    from memory_enhancement.graph.render import as_text

    depth = _whole(depth_text, minimum=0)
    result = None if depth is None else reads.graph(reference, depth)
    if result is None:
        return None
    text = as_text(result)
    return None if "\x1b" in text else text


def _search(reads: QuickReads, query: str) -> str | None:
    """What `search QUERY` prints (cli/index_cmds.py) when its default mode is lexical;
    any option (a mode, a limit, a filter, --verify, --json) goes the click way."""
    hits = reads.search(query)
    if hits is None:
        return None
    if not hits:
        return "no matches\n"
    heads = [f"{n}. [mem:{cid}] {path}  {title}" for n, (cid, path, title, _) in enumerate(hits, 1)]
    snippets = [" ".join(snippet.split()) for _, _, _, snippet in hits]
    if any("\x1b" in text for text in (*heads, *snippets)):
        return None  # click strips terminal escapes when the output is not a terminal
    if sys.stdout.isatty():
        heads = [f"\x1b[1m{head}\x1b[0m" for head in heads]
    return "".join(f"{head}\n   {snippet}\n" for head, snippet in zip(heads, snippets, strict=True))
