"""The folder tree is the architecture: layers, their allowed imports, no cycles.

docs/architecture.md draws the map; these tests keep the code on it. Every
import of ours counts, at module level, inside functions and under
TYPE_CHECKING alike: a lazy import that closes a loop is still a loop for the
reader following a call through the code.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import memory_enhancement

PACKAGE = Path(memory_enhancement.__file__).parent
ROOT = "memory_enhancement"
HEAVY = {"sqlite3", "subprocess", "yaml", "click", "mcp", "markdown_it"}

# What each part of the package may import of ours (besides the package root, which
# holds only the version). A name with a dot allows one module of another layer.
ALLOWED: dict[str, set[str]] = {
    "core": {"core"},
    "store": {"core", "store"},
    "index": {"core", "store", "index"},
    "verify": {"core", "store", "verify"},
    "graph": {"core", "store", "index", "graph"},
    "health": {"core", "store", "index", "verify", "graph", "health"},
    "service": {"core", "store", "index", "verify", "graph", "health", "service"},
    # Front ends: parse, call the service, render. `store.locations` is configuration
    # (where stores live), read only by the composition roots; `store.homes` is its
    # os.path-only part, for the quick read path (cli/fast.py); `store.atomic` writes what
    # the CLI writes outside a store (a health report, the skill file) whole or not at all.
    "cli": {"core", "service", "cli", "mcp", *{"graph.render", "health.render", "health.html"}}
    | {"store.locations", "store.homes", "store.atomic"},
    "mcp": {"core", "service", "mcp", "graph.render", "health.render", "store.locations"},
}
SUBSYSTEMS = {"core", "store", "index", "verify", "graph", "health"}


def module_name(file: Path) -> str:
    parts = list(file.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(f): f for f in sorted(PACKAGE.rglob("*.py"))}


@cache
def tree(file: Path) -> ast.Module:
    return ast.parse(file.read_text(encoding="utf-8"))


def imports_of_ours(name: str) -> set[str]:
    """The modules of this package that a module imports, anywhere in it.

    `from package import name` counts as importing `package.name` when that is a
    module, else the package itself.
    """
    file = modules()[name]
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree(file)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == ROOT}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != ROOT:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules() else target)
    return {m for m in found if m != name}


def imported_roots(file: Path) -> set[str]:
    """Top-level names of every absolute import in a file (lazy imports included)."""
    roots = set()
    for node in ast.walk(tree(file)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycle_anywhere_in_src_lazy_imports_included() -> None:
    graph = {name: imports_of_ours(name) for name in modules()}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_loop_through_three_modules() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_each_layer_imports_only_what_the_architecture_allows() -> None:
    wrong = []
    for name in modules():
        allowed = ALLOWED.get(layer(name))
        if allowed is None:
            continue
        for target in imports_of_ours(name):
            rest = target.split(".", 1)[1] if "." in target else ""
            if not rest:
                continue  # the package root: the version only
            if rest.split(".")[0] in allowed or any(
                rest == one or rest.startswith(one + ".") for one in allowed if "." in one
            ):
                continue
            wrong.append(f"{name} imports {target}")
    assert wrong == []


def test_no_subsystem_imports_the_service_or_takes_it_as_an_argument() -> None:
    for name, file in modules().items():
        if layer(name) not in SUBSYSTEMS:
            continue
        assert not any(t.split(".")[1:2] == ["service"] for t in imports_of_ours(name)), name
        for node in ast.walk(tree(file)):
            if isinstance(node, ast.arg) and node.annotation is not None:
                assert "Service" not in ast.unparse(node.annotation), f"{name}: {node.arg}"


def test_the_top_of_the_package_holds_at_most_twelve_entries() -> None:
    entries = [p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"]
    assert len(entries) <= 12, sorted(entries)
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        "core", "store", "index", "verify", "graph", "health", "service", "cli", "mcp",
    }  # fmt: skip


def test_every_layer_is_a_package_named_in_the_architecture_table() -> None:
    layers = {layer(name) for name in modules() if "." in name}
    assert layers - {"__main__"} == set(ALLOWED)


def test_the_pure_core_imports_nothing_that_touches_disk_yaml_or_a_front_end() -> None:
    for name, file in modules().items():
        if layer(name) == "core":
            assert not imported_roots(file) & HEAVY, name


def test_only_the_cli_imports_click() -> None:
    for name, file in modules().items():
        if layer(name) != "cli":
            assert "click" not in imported_roots(file), name


def test_only_the_mcp_front_end_imports_the_mcp_sdk() -> None:
    for name, file in modules().items():
        if layer(name) != "mcp":
            assert "mcp" not in imported_roots(file), name


def test_the_model_exposes_no_file_format_parsing_or_serialization() -> None:
    from memory_enhancement.core import model

    public = [name for name in vars(model) if not name.startswith("_")]
    assert not [n for n in public if n.startswith(("parse", "render", "serialize", "load", "dump"))]


def test_the_architecture_map_names_every_module_of_the_package() -> None:
    """docs/architecture.md is the map a newcomer reads first: every module is named there,
    in code (`verifier`, `cli/verify_render.py`, `formats/yamlload`), with what it holds. The
    `cli/*_cmds` modules were missing until a newcomer looked for where `doctor` lives."""
    import re

    doc = (PACKAGE.parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    spans = re.findall(r"`([^`\n]+)`", doc)
    missing = [
        name
        for name, file in modules().items()
        if file.name != "__init__.py"
        and not any(re.search(rf"(?<![\w]){re.escape(file.stem)}(?![\w])", s) for s in spans)
    ]
    assert missing == []


def test_no_module_runs_past_400_lines() -> None:
    """Modules of 100-400 lines (the house style): one that grows past is split or
    trimmed, not left to grow (core/mentions.py reached 408 unnoticed)."""
    lengths = {
        name: len(file.read_text(encoding="utf-8").splitlines()) for name, file in modules().items()
    }
    assert {name: n for name, n in lengths.items() if n > 400} == {}


def test_reading_and_indexing_import_no_claude_code_folder_rules() -> None:
    """The Claude Code folder's rules are the writes' business: imported by every command
    they cost indexing the shared corpus three modules (issue 12's bound, session 26)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from memory_enhancement.service import MemoryService\n"
        "from memory_enhancement.service import verification, health, memories\n"
        "print(sorted(m for m in sys.modules if 'claude' in m))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
