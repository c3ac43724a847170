"""How many characters an agent reads from the MCP tools, on real stores.

    PYTHONPATH=src .venv/bin/python bench/bench_mcp_answers.py CLONE [CLONE ...]

Each CLONE is a git work tree whose Serena store (`.serena/memories`) is the server's
default store. The clone is copied first (`cp -a` into a temporary folder: its git
folder, with a `--shared` clone's alternates, and its work tree), since the calls below
write: an agent's session, as `build_server(App.service_for)` serves it through the SDK's in-process
`Client`. Run it with another checkout's `src` on PYTHONPATH to measure that version on
the same calls. The figure is the length of the text content the client receives (the
JSON an agent reads); the calls:

* `list_memories`, `memory_health`, `get_memory` with their default arguments (the
  memory: the store's largest file), `search_memories` for that memory's first line
  (and with `verify`), `get_context` for it;
* `verify_memory` of the largest memory and of the one with the most failing checks (as
  the CLI's `verify-all --format json` counts them: its `stale_citations`), `verify_memories`;
* `update_memory` of that memory with `old_text`/`new_text`, one line changed;
* `update_memory` adding a link from it to the store's second-largest memory;
* `add_citation` to it (the first tracked file of the repository, line 1);
* `add_memory` of a three-line memory citing that file.

Prints one line per call, `tool: characters`, and a JSON object of them last.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio


def _largest(store: Path) -> list[Path]:
    files = [p for p in store.rglob("*.md") if p.is_file()]
    return sorted(files, key=lambda p: (-p.stat().st_size, str(p)))


def _a_line(text: str) -> str:
    """A line the memory holds once, long enough to be a real edit."""
    for line in text.splitlines():
        if len(line.strip()) > 20 and text.count(line) == 1 and not line.startswith("---"):
            return line
    raise SystemExit("no unique line to edit")


def _cited_file(tree: Path) -> str:
    listed = subprocess.run(
        ["git", "-C", str(tree), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for name in listed:
        path = tree / name
        if (
            name.endswith((".py", ".ts", ".md", ".go", ".rs"))
            and path.is_file()
            and path.read_text(errors="replace").splitlines()[:1] != [""]
        ):
            return name
    raise SystemExit("no file to cite")


def _most_failing(tree: Path, home: Path) -> str:
    """The memory with the most failing checks, by the CLI's `verify-all --format json`."""
    done = subprocess.run(
        [sys.executable, "-P", "-m", "memory_enhancement", "verify-all", "--format", "json"],
        cwd=tree,
        env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(home)},
        capture_output=True,
        text=True,
    )
    runs = json.loads(done.stdout)
    return str(max(runs, key=lambda r: (len(r["stale_citations"]), r["memory_id"]))["memory_id"])


async def _session(tree: Path, home: Path) -> dict[str, int]:
    from mcp import Client
    from mcp.types import TextContent

    from memory_enhancement.cli.app import App
    from memory_enhancement.mcp.server import build_server

    store = tree / ".serena" / "memories"
    first, second = _largest(store)[:2]
    name = first.relative_to(store).with_suffix("").as_posix()
    other = second.relative_to(store).with_suffix("").as_posix()
    line = _a_line(first.read_text())
    title = next((t.lstrip("# ") for t in first.read_text().splitlines() if t.strip()), name)
    cited = _cited_file(tree)
    worst = _most_failing(tree, home)
    print(f"largest: {name}; second: {other}; most failing: {worst}", flush=True)
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("list_memories", "list_memories()", {}),
        ("memory_health", "memory_health()", {}),
        ("get_memory", "get_memory(largest)", {"path": name}),
        ("search_memories", "search_memories(largest's title)", {"query": title}),
        (
            "search_memories",
            "search_memories(largest's title, verify)",
            {"query": title, "verify": True},
        ),
        ("get_context", "get_context(largest's title)", {"query": title}),
        ("verify_memory", "verify_memory(largest)", {"path": name}),
        ("verify_memory", "verify_memory(most failing)", {"path": worst}),
        ("verify_memories", "verify_memories()", {}),
        (
            "update_memory",
            "update_memory(largest, old_text/new_text: one line)",
            {"path": name, "old_text": line, "new_text": line + " (checked)"},
        ),
        (
            "update_memory",
            "update_memory(largest, links=[second])",
            {"path": name, "links": [other]},
        ),
        ("add_citation", "add_citation(largest, FILE:1)", {"path": name, "citation": f"{cited}:1"}),
        (
            "add_memory",
            "add_memory(3 lines, 1 citation)",
            {
                "path": "s33_probe_note",
                "content": "# Probe\n\nWhere the first file starts.\n",
                "citations": [f"{cited}:1"],
            },
        ),
    ]
    app = App(env={**os.environ, "MEMORY_ENHANCEMENT_HOME": str(home)}, cwd=tree)
    sizes: dict[str, int] = {}
    async with Client(build_server(app.service_for)) as client:
        for tool, label, arguments in calls:
            result = await client.call_tool(tool, arguments)
            text = "".join(c.text for c in result.content if isinstance(c, TextContent))
            if result.is_error:
                raise SystemExit(f"{label}: {text}")
            sizes[label] = len(text)
            print(f"{label}: {len(text):,}", flush=True)
    return sizes


def main(clones: list[str]) -> None:
    measured: dict[str, dict[str, int]] = {}
    for clone in clones:
        source = Path(clone).resolve()
        with tempfile.TemporaryDirectory(prefix="mcp-answers-") as scratch:
            tree = Path(scratch) / "tree"
            subprocess.run(["cp", "-a", str(source), str(tree)], check=True)
            print(f"== {source.name}", flush=True)
            measured[source.name] = anyio.run(_session, tree, Path(scratch) / "home")
    print(json.dumps(measured))


if __name__ == "__main__":
    main(sys.argv[1:])
