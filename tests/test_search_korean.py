"""Korean words with their particles and endings (`캐시를`, `조회하는`) in search.

Korean puts spaces between words but glues particles to them, so a query's word and the
memory's rarely carry the same one: in ryu-qqq/setof-commerce (49 Korean memories) `캐시`
found the 9 memories that contain it and `캐시를` none, and `JWT를` found 13 memories of
which one mentions JWT. The memories here are written for these tests, in the style of that
store's rules.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from conftest import RunCli
from hostile_support import python_bounded
from index_support import disk_service, paths, titled_notes_service, write_memory
from memory_enhancement.index import cjk
from memory_enhancement.service import MemoryService

KO = {
    "cache/redis": (
        "Redis 캐시 설정",
        "캐시는 Redis에 저장하고 만료 시간은 10분으로 둔다. 캐시 키에는 사용자 ID를 넣는다.",
    ),
    "auth/cookie": (
        "인증 토큰 보관",
        "JWT 토큰은 HttpOnly 쿠키로 저장한다. 로컬 스토리지에는 두지 않는다.",
    ),
    "db/orders": (
        "주문 조회 규칙",
        "주문 조회는 읽기 전용 트랜잭션에서 실행한다. 목록은 페이지 단위로 나눈다.",
    ),
    "notes/release": (
        "배포 결과",
        "배포 결과를 정리했다. 결정 사항은 다음 회의에서 다룬다.",
    ),
    "notes/english": ("Logging", "Use structured logging with a request id in every service."),
}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> MemoryService:
    return titled_notes_service(tmp_path_factory.mktemp("ko"), KO)


@pytest.mark.parametrize(
    ("query", "memory"),
    [
        ("캐시를", "cache/redis"),  # the memory says 캐시는 and 캐시
        ("쿠키에", "auth/cookie"),  # 쿠키로
        ("조회를", "db/orders"),  # 조회는
        ("정리할", "notes/release"),  # 정리했다: the ending of a verb made with 하다
        ("트랜잭션으로", "db/orders"),  # 트랜잭션에서: a two-syllable particle
    ],
)
def test_a_word_with_one_particle_finds_the_memory_that_writes_it_with_another(
    service: MemoryService, query: str, memory: str
) -> None:
    assert paths(service.search(query, mode="lexical", limit=50)) == [memory]


def test_a_word_with_a_particle_finds_every_memory_the_bare_word_finds(
    service: MemoryService,
) -> None:
    bare = paths(service.search("배포", mode="lexical", limit=50))
    assert bare == ["notes/release"]
    assert paths(service.search("배포는", mode="lexical", limit=50)) == bare


def test_a_particle_glued_to_a_latin_word_is_not_searched(service: MemoryService) -> None:
    """`JWT를` was searched as `jwt` or any token starting with `를` (`ID를` holds one)."""
    assert paths(service.search("JWT를", mode="lexical", limit=50)) == ["auth/cookie"]
    assert paths(service.search("Redis에서", mode="lexical", limit=50)) == ["cache/redis"]


def test_the_word_as_written_ranks_above_its_stem(tmp_path: Path) -> None:
    store = tmp_path / "s"
    write_memory(store, "a", "설정 파일은 한 곳에 둔다.", title="위치")
    write_memory(store, "b", "설정을 바꾸면 서버를 다시 시작한다.", title="재시작")
    found = paths(disk_service(store, tmp_path, tmp_path).search("설정을", mode="lexical"))
    assert found == ["b", "a"]


def test_a_korean_question_finds_its_memory(service: MemoryService) -> None:
    results = paths(service.search("JWT 토큰을 어디에 저장하나요?", mode="lexical"))
    assert results[0] == "auth/cookie"
    results = paths(service.search("주문을 조회하는 트랜잭션은", mode="lexical"))
    assert results[0] == "db/orders"


def test_the_snippet_marks_the_stem_the_memory_holds(service: MemoryService) -> None:
    (hit,) = [r.hit for r in service.search("쿠키를", mode="lexical")]
    assert "**쿠키**로" in hit.snippet


def test_stems_keep_two_syllables_at_least() -> None:
    assert cjk.hangul_stem("캐시를") == "캐시"
    assert cjk.hangul_stem("조회하는") == "조회"
    assert cjk.hangul_stem("트랜잭션으로부터") == "트랜잭션"
    # 결과 (result) is not 결 plus the particle 과; a particle alone is no word.
    assert cjk.hangul_stem("결과") is None
    assert cjk.hangul_stem("에서") is None


def test_a_megabyte_query_of_one_script_is_cut_into_pieces_in_one_pass() -> None:
    """A run of one script was grown a character at a time, each step copying the piece:
    a query of a million syllables took minutes (in a child process: a hang fails the
    test)."""
    done = python_bounded(
        "from memory_enhancement.index import cjk\n"
        "word = '캐시를' * 333_334\n"
        "print(cjk.query_terms(word)[-1], cjk.needles(word)[-1][:4], len(cjk.needles(word)))\n",
        timeout=30,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == '"를캐" 캐시를캐 2\n'


def test_japanese_and_chinese_query_terms_are_unchanged() -> None:
    assert cjk.query_terms("ヘッドレス環境で") == [
        '"ヘッ ッド ドレ レス ス環 環境 境で"',  # the word whole first, as `引き継ぎ` needs
        '"ヘッ ッド ドレ レス"',
        '"ヘッ"',
        '"ッド"',
        '"ドレ"',
        '"レス"',
        '"環境"',
    ]
    assert cjk.query_terms("数据源配置") == [
        '"数据 据源 源配 配置"',
        '"数据"',
        '"据源"',
        '"源配"',
        '"配置"',
    ]
    # A kanji glued to a Latin word stays a prefix: only Hangul endings are dropped.
    assert cjk.query_terms("Qt依") == ['"qt 依"', '"qt"', '"依"*']


def test_search_from_the_cli_in_korean(run_cli: RunCli, tmp_path: Path) -> None:
    store = tmp_path / "s"
    for path, (title, body) in KO.items():
        write_memory(store, path, body, title=title)
    result = run_cli(["search", "캐시를", "--mode", "lexical", "--dir", store])
    assert result.exit_code == 0, result.output
    assert "cache/redis" in result.output
    assert "**캐시**" in result.output


def test_hangul_written_decomposed_is_found_by_the_syllables_a_query_types(
    tmp_path: Path,
) -> None:
    """macOS writes Hangul file names decomposed (NFD): `캐시` as five jamo. A memory
    holding text pasted from one shared no bigram with the query `캐시` and was never found."""
    store = tmp_path / "s"
    text = "캐시는 Redis에 저장한다."
    write_memory(store, "nfd", unicodedata.normalize("NFD", text), title="설정")
    write_memory(store, "nfc", text, title="설정")
    results = disk_service(store, tmp_path, tmp_path).search("캐시를", mode="lexical")
    assert sorted(paths(results)) == ["nfc", "nfd"]
    assert all("**캐시**는" in r.hit.snippet for r in results)
