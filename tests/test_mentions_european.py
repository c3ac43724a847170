"""Mentions whose line is named in a European language's word, after the path as English
writes `` `app.go` lines 28-76 ``: Spanish `línea`, Portuguese `linha`, French `ligne`,
Italian `riga`, German `Zeile`, Russian `строка`, Vietnamese `dòng` (core/prose_mentions.py).
Before these were read, a store written in those languages had its line numbers go unverified.

The lines of the first test are the forms as found in real memories with `find_string`
(`` `dian.go` línea 125 ``, `` `route.ts` Zeile 48 ``, `` `mockup-crm.html` строки 37-65 ``),
with the surrounding words shortened; the repositories are not copied from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import RunCli
from memory_enhancement.core.mentions import find_mentions, may_mention
from memory_enhancement.core.prose_mentions import may_hold
from verify_support import STORE, GitRepo, code, coded


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # (path, start, end, form, the digits as written), one per mention of the line
        ("- **Archivo:** `dian.go` línea 125", [("dian.go", 125, None, "words", ["125"])]),
        (
            "- **Archivo**: `gestion_taller/settings.py` (líneas 283-284)",
            [("gestion_taller/settings.py", 283, 284, "words", ["283", "284"])],
        ),
        (
            "tests existentes de `main_test.go` (líneas 117 y 173)",
            [
                ("main_test.go", 117, None, "words", ["117"]),
                ("main_test.go", 173, None, "list", ["173"]),
            ],
        ),
        ("en `store.go` linea 96 contiene", [("store.go", 96, None, "words", ["96"])]),
        (
            "**Arquivo:** `Core/Model/Payment.php` linha 199",
            [("Core/Model/Payment.php", 199, None, "words", ["199"])],
        ),
        ("`core/auth.py` linhas 60-62:", [("core/auth.py", 60, 62, "words", ["60", "62"])]),
        (
            "L'Edge Function (`index.ts` ligne 1622) retourne",
            [("index.ts", 1622, None, "words", ["1622"])],
        ),
        (
            "1. **`system_sensors.cpp` ligne 39** : Appel",
            [("system_sensors.cpp", 39, None, "words", ["39"])],
        ),
        ("`src/index.css` righe 16-18:", [("src/index.css", 16, 18, "words", ["16", "18"])]),
        (
            "(`SettlePaymentModal.vue` riga 98)",
            [("SettlePaymentModal.vue", 98, None, "words", ["98"])],
        ),
        (
            "In `src/app/api/stuetzpunkte/route.ts` Zeile 48 wird",
            [("src/app/api/stuetzpunkte/route.ts", 48, None, "words", ["48"])],
        ),
        (
            "`services/bambu-mqtt.ts` Zeilen 14-23 und 66-114: **Adaptive**",
            [
                ("services/bambu-mqtt.ts", 14, 23, "words", ["14", "23"]),
                ("services/bambu-mqtt.ts", 66, 114, "list", ["66", "114"]),
            ],
        ),
        (
            "- `components/ProductCard.tsx` строка 55: `<Image>`",
            [("components/ProductCard.tsx", 55, None, "words", ["55"])],
        ),
        (
            "Эталон в `mockup-crm.html` строки 37-65.",
            [("mockup-crm.html", 37, 65, "words", ["37", "65"])],
        ),
        ("см. `release.yml` (строке 193)", [("release.yml", 193, None, "words", ["193"])]),
        (
            "- `payroll.service.ts` dòng 624–625: field được map",
            [("payroll.service.ts", 624, 625, "words", ["624", "625"])],
        ),
        (
            "(`chat_service.py` dòng 248, 303 và 351): trong",
            [
                ("chat_service.py", 248, None, "words", ["248"]),
                ("chat_service.py", 303, None, "list", ["303"]),
                ("chat_service.py", 351, None, "list", ["351"]),
            ],
        ),
        (
            "**File:** `src/hooks/live/useLiveRecording.ts` Dòng 117",
            [("src/hooks/live/useLiveRecording.ts", 117, None, "words", ["117"])],
        ),
        # ranges in words (the QA round of session 34 wrote these; each was read as its
        # first line alone); a word after `a` is prose, not a range
        ("`app.py` líneas 12 a 20 según", [("app.py", 12, 20, "words", ["12", "20"])]),
        ("voir `app.py` lignes 12 à 20", [("app.py", 12, 20, "words", ["12", "20"])]),
        ("`app.py` Zeilen 12 bis 20 prüfen", [("app.py", 12, 20, "words", ["12", "20"])]),
        ("`app.py` linhas 12 até linha 20", [("app.py", 12, 20, "words", ["12", "20"])]),
        ("`app.py` línea 12 a la derecha", [("app.py", 12, None, "words", ["12"])]),
    ],
)
def test_each_european_line_word_after_a_path_is_a_mention_with_its_digits_marked(
    line: str, expected: list[tuple[str, int, int | None, str, list[str]]]
) -> None:
    memory = f"# Notas técnicas\n\n{line}\n"  # prose in these languages has accents
    assert may_mention(memory.encode())
    got = []
    for m in find_mentions(memory):
        digits = [m.text[slice(*m.start_at)]] + ([m.text[slice(*m.end_at)]] if m.end_at else [])
        got.append((m.path, m.start, m.end, m.form, digits))
        assert line[m.column : m.column + len(m.text)] == m.text
    assert got == expected
    assert may_hold(line, european=True)  # the line's own hint takes it


def test_a_line_read_for_a_file_mention_is_read_for_riga_with_a_capital_too() -> None:
    """A line is read for the word forms when its own hints (prose.may_hold) find one; these
    take `Riga` as the pattern does, though the memory-wide hint takes `riga` only: a line
    held nothing else is not read for it (as before the line's hints were asked)."""
    found = find_mentions("Vedi `src/a.py` è x.py Riga 42\n")
    assert [(m.path, m.start, m.form) for m in found] == [
        ("src/a.py", None, "file"), ("x.py", 42, "words"),
    ]  # fmt: skip
    assert find_mentions("Vedi src/a.py è x.py Riga 42\n") == []


@pytest.mark.parametrize(
    "line",
    [
        "- `app.py` (120 líneas)",  # a length
        "- `app.py` — 250 строк кода",  # a length
        "`Program.cs` registra servicios (líneas ~226–303)",  # an estimate, away from the path
        "`x.py` línea ~651",  # an estimate
        "`ResultSet` linha por linha",  # a word, no number
        "`Analise.py` linha por linha, 3 vezes",
        "`qdrant.ts` — `ensureCollection()` righe 69-92",  # words between
        "`Student` ligne 3 dans la base",  # not a file
        "- `x.py` (120 dòng)",  # a length
        "`x.py` dòng ~1182 render",  # an estimate
    ],
)
def test_lengths_and_estimates_in_european_words_are_not_line_numbers(line: str) -> None:
    assert find_mentions(f"# Notas\n\n{line}\n") == []


def test_a_memory_in_ascii_alone_is_not_searched_for_the_european_words() -> None:
    """The five scans for them cost indexing the shared corpus 2.5% more instructions, for
    English memories that hold none: they are only made in text holding a European
    letter (prose_mentions.european), which Spanish, Portuguese, French, Italian, German
    and Russian paragraphs hardly ever lack."""
    line = "In src/app/api/route.ts Zeile 48 wird"  # backticked, the path is a file mention
    assert find_mentions(f"# Notes\n\n{line}\n") == []
    assert not may_mention(f"# Notes\n\n{line}\n".encode())
    assert [m.start for m in find_mentions(f"# Übersicht\n\n{line}\n")] == [48]
    assert may_mention(f"# Übersicht\n\n{line}\n".encode())


def test_an_item_followed_by_a_cyrillic_word_is_prose_not_a_line() -> None:
    found = find_mentions("# Заметки\n\n- `x.py` строки 10, 3 теста прошли\n")
    assert [(m.path, m.start, m.form) for m in found] == [("x.py", 10, "words")]


# -- verdicts and --fix ------------------------------------------------------------------------


NOTE = [
    "# Notas",
    "",
    "- `src/app.py` línea 10: la configuración",  # moved
    "- `src/app.py` (líneas 12-13 y 15)",  # moved, a list
    "- `src/app.py` Zeile 20 wurde geändert",  # stale
    "- `src/app.py` строки 25-26 — инициализация",  # moved
    "- `src/app.py` dòng 27: khởi tạo",  # moved
]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = coded(tmp_path / "project", {"src/app.py": 30})
    repo.write_lines(f"{STORE}/notas.md", NOTE)
    repo.commit("memory")
    app = code("src/app.py", 30)
    app[19] = "src_app_py_20 = 'changed'"
    repo.write_lines("src/app.py", ["# a", "# b", "# c", *app])
    repo.commit("three lines on top, line 20 changed")
    return repo


def test_european_word_forms_are_judged_from_history_and_fixed_in_their_digits(
    repo: GitRepo, run_cli: RunCli
) -> None:
    def cli(*args: str) -> list[dict[str, str]]:
        out = run_cli([*args, "--dir", str(repo.store_root), "--json"], cwd=repo.root).stdout
        return [m for m in json.loads(out)["mentions"]]

    before = {m["mention"]: m["status"] for m in cli("verify", "notas")}
    assert before == {
        "src/app.py` línea 10": "moved",
        "src/app.py` (líneas 12-13": "moved",
        "15": "moved",
        "src/app.py` Zeile 20": "stale",
        "src/app.py` строки 25-26": "moved",
        "src/app.py` dòng 27": "moved",
    }
    cli("verify", "notas", "--fix")
    assert repo.lines(f"{STORE}/notas.md") == [
        "# Notas",
        "",
        "- `src/app.py` línea 13: la configuración",
        "- `src/app.py` (líneas 15-16 y 18)",
        "- `src/app.py` Zeile 20 wurde geändert",  # stale: left for a person
        "- `src/app.py` строки 28-29 — инициализация",
        "- `src/app.py` dòng 30: khởi tạo",
    ]
