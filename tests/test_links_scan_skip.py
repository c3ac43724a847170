"""Lines the link scan passes over without scanning (issue 12's bound on indexing).

Most list items of real memories are led by a label (`- **Status**: done`), and most
table rows hold plain words (`| Metric | Threshold |`): neither can make a link outside
related material, so the scan's first test (links._may_link) lets them by. The same
lines under a related heading, or naming a memory, still give their candidates.
"""

from __future__ import annotations

from memory_enhancement.core.model import LinkKind
from memory_enhancement.store.formats import link_grammar as g
from memory_enhancement.store.formats.links import _may_link, extract_links

TEXT = """# Notes

- **Status**: done
- Focus: why routing matters
1. **Architect**: soundness
- **beta** - the one to read
- Related: `gamma`, `delta`

| Metric | Threshold |
|--------|-----------|
| Size | 10 max |
| `epsilon` | why |
| see | zeta_notes |

## Related

- **Status**: eta_notes
| Name | Why |
"""


def test_label_items_and_plain_rows_are_not_scanned() -> None:
    for line in ("- **Status**: done", "- Focus: why", "1. **Architect**: soundness"):
        entry = g.ITEM_ENTRY.match(line)
        assert not _may_link(line, line[0], entry, False, "")
    assert not _may_link("| Size | 10 max |", "|", None, False, "")
    assert _may_link("| `epsilon` | why |", "|", None, False, "")
    line = "- **Status**: done"  # in the tool's own `## Related`: a bare name is a link there
    assert _may_link(line, "-", g.ITEM_ENTRY.match(line), False, g.RELATED)


def test_the_links_of_such_lines_are_still_found() -> None:
    found = [(link.target, link.kind, link.line) for link in extract_links(TEXT)]
    assert found == [
        ("beta", LinkKind.ITEM, 6),
        ("gamma", LinkKind.NAMED, 7),
        ("delta", LinkKind.NAMED, 7),
        ("epsilon", LinkKind.ITEM, 12),
        ("zeta_notes", LinkKind.ITEM, 13),
        ("Status", LinkKind.NAMED, 17),  # in related material, bold is a name
        ("eta_notes", LinkKind.NAMED, 17),
    ]


def test_item_entries_with_hyphens_and_separators_read_as_before() -> None:
    """The entry pattern (g.LEAD_NAME, rewritten as runs between hyphens) stops before
    `->` only; `**bold**` with no space after the stars opens no item."""
    text = "\n".join(
        [
            "## Related",
            "",
            "- a-b-c -> why",
            "- x->y",
            "- **api-v2-notes**（legacy）",
            "* not-an-item",
            "**bold-name** - why",
            "- `spec.md`",
        ]
    )
    found = [(link.target, link.kind, link.line) for link in extract_links(text)]
    assert found == [
        ("a-b-c", LinkKind.ITEM, 3),
        ("x", LinkKind.ITEM, 4),
        ("x-", LinkKind.NAMED, 4),
        ("api-v2-notes", LinkKind.ITEM, 5),
        ("not-an-item", LinkKind.BARE, 6),
        ("spec.md", LinkKind.ITEM, 8),
    ]


def test_table_cells_are_the_text_between_two_pipes() -> None:
    """A cell is what stands between two pipes (links._cells), matched whole: a name bare,
    `backticked` or **bold**, spaces or tabs around it; a cell of prose, a plain word, a
    separator row, the text after the last pipe and a cell cut by an escaped pipe are none."""
    rows = {
        "| `alpha` | why |": ["alpha"],
        "|**beta**|`gamma`|": ["beta", "gamma"],
        "| \t`delta_x`\t | Word |": ["delta_x"],
        "| plain | Word |": [],
        "|---|:--:|": [],
        "| `a b` | c d |": [],
        "| ok | epsilon_notes": [],
        "| `zeta` \\| eta_notes |": ["eta_notes"],
        "| **`theta`** | `iota` |": ["theta", "iota"],
        "|| kappa_notes ||": ["kappa_notes"],
        "| lambda_notes* |": [],
    }
    for row, names in rows.items():
        found = [link.target for link in extract_links(row)]
        assert found == names, row
        assert all(link.kind is LinkKind.ITEM for link in extract_links(row))


def test_a_line_written_again_gives_its_links_at_its_own_line() -> None:
    """A line's links are read once and kept (link_syntax._links_of): the same line in
    another memory, or further down, gives the same links at its own number; a line too
    long to keep is read each time."""
    line = "- [beta](beta.md), [[gamma]] and `mem:delta`"
    long = f"{line} {'x' * 1200}"
    for text, offset in ((f"# A\n\n{line}\n", 0), (f"{line}\n\n\n{line}\n{long}\n", 7)):
        found = [
            (link.target, link.kind, link.line) for link in extract_links(text, line_offset=offset)
        ]
        rows = [n + 1 + offset for n, written in enumerate(text.split("\n")) if line in written]
        expected = [
            (target, kind, row)
            for row in rows
            for target, kind in (
                ("beta.md", LinkKind.MARKDOWN),
                ("gamma", LinkKind.WIKI),
                ("delta", LinkKind.MEM_REF),
            )
        ]
        assert found == expected
