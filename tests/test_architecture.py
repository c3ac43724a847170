"""Dependency direction: the pure model imports no I/O, and only front ends import their toolkit."""

from __future__ import annotations

import ast
from pathlib import Path

import memory_enhancement

PACKAGE = Path(memory_enhancement.__file__).parent
PURE = ["model.py", "citations.py", "memory_paths.py", "timestamps.py", "errors.py"]
HEAVY = {"sqlite3", "subprocess", "yaml", "click", "mcp", "markdown_it"}


def imported_roots(file: Path) -> set[str]:
    """Top-level names of every absolute import in a file (lazy imports included)."""
    roots = set()
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_pure_model_imports_nothing_that_touches_disk_yaml_or_a_front_end() -> None:
    for name in PURE:
        assert not imported_roots(PACKAGE / name) & HEAVY, name


def test_only_the_cli_imports_click() -> None:
    for file in modules():
        rel = file.relative_to(PACKAGE)
        if rel.parts[0] != "cli":
            assert "click" not in imported_roots(file), rel


def test_only_the_server_imports_mcp() -> None:
    for file in modules():
        rel = file.relative_to(PACKAGE)
        if not rel.parts[0].startswith("server"):
            assert "mcp" not in imported_roots(file), rel


def test_the_model_exposes_no_file_format_parsing_or_serialization() -> None:
    from memory_enhancement import model

    public = [name for name in vars(model) if not name.startswith("_")]
    assert not [n for n in public if n.startswith(("parse", "render", "serialize", "load", "dump"))]
