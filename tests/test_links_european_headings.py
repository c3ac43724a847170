"""Related-memory headings in German, Portuguese, French, Italian and Russian.

Under a related heading the memory names an item mentions are links, not only the one it
starts with (candidates: a name that is no memory is no link). The headings here were found
in real memories with `find_string`: `## Verwandte Memories` (German: `verwandt` was known,
its inflected `Verwandte` not), `### Mémoires associées`, `## Связанные memories`, `Ver
também`; the rest are their usual neighbours. The items and names are written for these
tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graph_support import out_links, write, write_all
from memory_enhancement.service import MemoryService
from memory_enhancement.store.formats.links import is_related

NAMES = ["alpha_notes", "beta-design", "gamma", "suggested_commands"]


@pytest.mark.parametrize(
    "heading",
    [
        "## Verwandte Memories",
        "## Verwandte Memories:",
        "### Mémoires associées",
        "## Связанные memories",
        "## См. также",
        "## Ver também",
        "## Memorie correlate",
        "## Vedi anche",
    ],
)
def test_a_european_related_heading_makes_the_names_in_its_items_links(
    service: MemoryService, store_dir: Path, heading: str
) -> None:
    write_all(store_dir, {name: f"# {name}\n" for name in NAMES})
    write(
        store_dir,
        "source",
        f"# Source\n\n{heading}\n\n"
        "- Read `alpha_notes` and beta-design before changing it\n"
        "- `unknown_name` and `gamma`: the first is no memory, so no link\n\n"
        "## Next\n\n- Compare with suggested_commands later\n",
    )
    found = [target for target, _ in out_links(service, "source")]
    assert found == ["alpha_notes", "beta-design", "gamma"]


def test_related_words_are_whole_words_so_look_alikes_are_not_related() -> None:
    for title in ["Verwandte Themen", "Querverweise", "Связанные заметки", "Смотрите также"]:
        assert is_related(title), title
    for title in [
        "Verwaltung",
        "Smysl",
        "Смысл",
        "Correlation matrix",
        "Associations",
        "Ver detalhes",
    ]:
        assert not is_related(title), title


def test_an_ascii_title_reads_as_its_unicode_forms_do() -> None:
    """An ASCII title is lowered and searched with the ASCII words alone (the scan asks of
    thousands of labels); any other is NFKC-folded first, so a full-width `Ｒｅｌａｔｅｄ`
    or an upper-case `VERWEISE` is related material too."""
    for title in [
        "RELATED MEMORIES", "Ｒｅｌａｔｅｄ", "VERWEISE", "See Also", "Siehe auch",
        "Cross-References", "Further Reading", "Enlaces", "関連メモリ", "Voir aussi",
    ]:  # fmt: skip
        assert is_related(title), title
    for title in ["Severity", "Linkage", "Seen also", "Social", "Legal", "Referral"]:
        assert not is_related(title), title
