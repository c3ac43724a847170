"""Other forms of a word written with accents or in Cyrillic (index/inflection.py).

English words get their Porter stem as a prefix; a word with an accent or in Cyrillic got
nothing, so in a Portuguese store (sejacriativvo/criativvo-workspace, 44 memories)
`migrações` found none of the four memories that say `migração`, and `relatórios` found 7
memories while `relatorios` typed without its accent found 9; in a Russian one
(BigKAA/artStore at 8b9ca29) `ротации` found nothing though a memory says `ротация`. The
memories here are written for these tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from index_support import disk_service, paths, titled_notes_service, write_memory
from memory_enhancement.index import inflection, lexical
from memory_enhancement.service import MemoryService

NOTES = {
    "pt/migracao": (
        "Migração do workspace",
        "A migração terminou em maio; clientes em kebab-case.",
    ),
    "pt/relatorio": ("Relatórios de tráfego", "Cada relatório semanal sai por loja."),
    "es/config": ("Configuración", "La configuración del servidor vive en un solo archivo."),
    "de/schaetzung": ("Schätzfrage", "Die Schätzfrage hat zwei Runden."),
    "ru/keys": ("Ротация ключей", "Ротация ключа выполняется каждые 24 часа."),
    "ru/tests": ("Тестирование", "Тестирование модулей идёт в Docker."),
    "en/logging": ("Logging", "Use structured logging with a request id in every service."),
}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> MemoryService:
    return titled_notes_service(tmp_path_factory.mktemp("inflection"), NOTES)


@pytest.mark.parametrize(
    ("query", "memory"),
    [
        ("migrações", "pt/migracao"),  # the memory says migração
        ("relatórios", "pt/relatorio"),  # relatório
        ("configuraciones", "es/config"),  # configuración (ASCII: Porter's stem, as before)
        ("Schätzfragen", "de/schaetzung"),  # Schätzfrage
        ("ротации", "ru/keys"),  # ротация
        ("ключей", "ru/keys"),  # ключа
        ("тестирования", "ru/tests"),  # тестирование
        ("модуля", "ru/tests"),  # модулей
    ],
)
def test_another_form_of_an_accented_or_cyrillic_word_finds_its_memory(
    service: MemoryService, query: str, memory: str
) -> None:
    assert paths(service.search(query, mode="lexical", limit=50)) == [memory]


def test_a_word_typed_with_its_accent_finds_what_it_finds_without(service: MemoryService) -> None:
    with_accent = paths(service.search("relatórios", mode="lexical", limit=50))
    assert with_accent == paths(service.search("relatorios", mode="lexical", limit=50))


def test_the_word_as_written_ranks_above_its_other_forms(tmp_path: Path) -> None:
    store = tmp_path / "s"
    write_memory(store, "a", "Миграция базы данных прошла.", title="База")
    write_memory(store, "b", "Список миграций лежит в alembic.", title="Alembic")
    found = paths(disk_service(store, tmp_path, tmp_path).search("миграций", mode="lexical"))
    assert found == ["b", "a"]


def test_endings_come_off_and_leave_four_letters_at_least() -> None:
    assert inflection.stem("migrações") == inflection.stem("migração") == "migraç"
    assert inflection.stem("ротации") == inflection.stem("ротация") == "ротац"
    assert inflection.stem("ключей") == "ключ"
    assert inflection.stem("développement") == "développement"  # no ending: its own prefix
    assert inflection.stem("ключ") is None  # too short to cut or to stand as a prefix
    assert inflection.stem("café") is None


def test_english_japanese_and_chinese_words_get_the_variants_they_had() -> None:
    assert inflection.stem("deploying") is None  # ASCII: Porter's, in lexical.py
    assert inflection.stem("環境") is None
    assert inflection.stem("数据源") is None
    exact, variants = lexical.query_terms("deploying")
    assert (exact, variants) == (['"deploying"'], ['"deplo"*', '"deploying"*'])
