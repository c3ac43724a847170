"""Loading YAML that nobody vetted: a memory's frontmatter, a store's settings.

YAML can say much more than it takes bytes to write. Two small files broke
whole stores before these limits: a value nested 25,000 levels deep (libyaml
recurses once per level and crashed the process) and a 443-byte "billion
laughs" of nine nested anchors, each used ten times, which loads as shared
objects but grows to gigabytes as soon as anything walks or prints it. So:

- flow nesting (`[`, `{`) and compact block nesting (`- - - x`) are measured on
  the text before the parser sees it (block nesting by indentation needs a
  line per level, which the file size limit bounds far below a crash);
- after loading, the value is walked once, iteratively, and refused when it is
  nested deeper than `MAX_DEPTH`, contains itself, or when aliases would expand
  it by more than `MAX_ALIAS_NODES` nodes;
- what the loader raises besides `YAMLError` (an integer of more than 4,300
  digits is a `ValueError`; the pure-Python loader's `RecursionError`) is a
  refusal too, never a crash.

Every refusal is a `YamlLimitError` whose message says which limit and by how much.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

MAX_DEPTH = 50  # real frontmatter nests 3 or 4 levels
MAX_ALIAS_NODES = 10_000  # nodes that aliases may add by repeating what an anchor holds
_BRACKETS = re.compile(r"[\[\]{}]")
_COMPACT = re.compile(r"(?:[-?][ \t]+){" + str(MAX_DEPTH) + ",}")


class YamlLimitError(ValueError):
    """YAML the tool refuses to load: too deep, too many alias expansions, self-containing."""


@cache
def _yaml() -> Any:
    import yaml

    return yaml


def safe_loader() -> Any:
    """The C-accelerated safe loader when libyaml is there, else the pure-Python one."""
    yaml = _yaml()
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str, *, first_line: int = 1) -> Any:
    """Load YAML text with the safe loader and the limits above.

    Raises `yaml.YAMLError` for malformed YAML and `YamlLimitError` for YAML past a
    limit; `first_line` is the file's line number of the text's first line.
    """
    _check_text(text, first_line)
    try:
        data = _yaml().load(text, Loader=safe_loader())
    except RecursionError:
        raise YamlLimitError(f"YAML nested too deeply (more than {MAX_DEPTH} levels)") from None
    except (ValueError, OverflowError) as exc:  # e.g. an integer of 5,000 digits
        raise YamlLimitError(f"unloadable YAML value: {str(exc)[:200]}") from None
    if _may_nest_or_alias(text):
        _check_value(data)
    return data


# Below this many brackets, columns of indentation and compact items on a line, the walk is
# skipped: a block level costs at least half a column (`key:` then `- item` at the same
# indentation), a compact item two levels (`- a: - b`), a bracket one, so such a value
# nests at most 2*8 + 8 + 2*8 = 40 levels, under MAX_DEPTH.
_SHALLOW = 8
_INDENTED = re.compile(r"^[ \t]{" + str(_SHALLOW) + ",}", re.MULTILINE)
_COMPACT_SOME = re.compile(r"(?:[-?][ \t]+){" + str(_SHALLOW) + ",}")


def _may_nest_or_alias(text: str) -> bool:
    """Whether the loaded value needs the walk: without an anchor there are no aliases,
    and with few brackets, shallow indentation and short compact runs it cannot nest
    anywhere near MAX_DEPTH (each adds at most one level per character counted)."""
    return (
        "&" in text
        or text.count("[") + text.count("{") > _SHALLOW
        or _INDENTED.search(text) is not None
        or _COMPACT_SOME.search(text) is not None
    )


def _check_text(text: str, first_line: int) -> None:
    """Refuse nesting the parser itself could crash on, before it runs."""
    if text.count("[") + text.count("{") > MAX_DEPTH:
        depth = deepest = 0
        for match in _BRACKETS.finditer(text):
            depth = depth + 1 if match[0] in "[{" else max(depth - 1, 0)
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                line = text.count("\n", 0, match.start()) + first_line
                raise YamlLimitError(
                    f"YAML nested too deeply: more than {MAX_DEPTH} levels of brackets "
                    f"(line {line})"
                )
    if ("- " in text or "? " in text) and (found := _COMPACT.search(text)):
        line = text.count("\n", 0, found.start()) + first_line
        raise YamlLimitError(
            f"YAML nested too deeply: more than {MAX_DEPTH} nested items on line {line}"
        )


def _check_value(data: Any) -> None:
    """Walk the loaded value once (no recursion): depth, self-containment, alias growth.

    A container met again is an alias of it; the nodes it holds are counted
    again for each use, from a memo, so the walk itself stays linear.
    """
    if not isinstance(data, list | dict):
        return
    sizes: dict[int, int] = {}  # id -> nodes held, once done
    depths: dict[int, int] = {}
    open_ids: set[int] = set()
    added = 0
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        item, done = stack.pop()
        key = id(item)
        children = list(item.values()) + list(item) if isinstance(item, dict) else item
        if done:
            open_ids.discard(key)
            size, depth = 1, 1
            for child in children:
                if isinstance(child, list | dict):
                    size += sizes[id(child)]
                    depth = max(depth, depths[id(child)] + 1)
                else:
                    size += 1
            sizes[key], depths[key] = size, depth
            if depth > MAX_DEPTH:
                raise YamlLimitError(f"YAML nested too deeply (more than {MAX_DEPTH} levels)")
            continue
        if key in open_ids:
            raise YamlLimitError("YAML value contains itself (a recursive alias)")
        if key in sizes:
            added += sizes[key]
            if added > MAX_ALIAS_NODES:
                raise YamlLimitError(
                    f"YAML aliases expand to more than {MAX_ALIAS_NODES} nodes "
                    "(nested anchors repeated: a 'billion laughs')"
                )
            continue
        open_ids.add(key)
        stack.append((item, True))
        stack.extend((child, False) for child in children if isinstance(child, list | dict))
        if len(open_ids) > MAX_DEPTH:
            raise YamlLimitError(f"YAML nested too deeply (more than {MAX_DEPTH} levels)")
