"""Words inside Chinese and Japanese text (issue 13): bigrams in the index, one ranking.

FTS5's unicode61 tokenizer makes a run of CJK characters one token, so before this a
search for ヘッドレス found nothing in a store where eleven memories contain it. The
memories here are written for these tests, in the style of the real Japanese and
Chinese Serena stores the benchmark reads (bench/queries/).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from conftest import RunCli
from index_support import disk_service, paths, titled_notes_service, write_memory
from memory_enhancement.index import cjk, snippets
from memory_enhancement.index.search import fts_query
from memory_enhancement.service import MemoryService

JA = {
    "gui/headless": (
        "ヘッドレス環境でのGUIテスト",
        "CIのヘッドレス環境ではQT_QPA_PLATFORM=offscreenを設定する。"
        "offscreenモードのQMessageBoxはモーダルのままハングするので、テストではモックに差し替える。",
    ),
    "gui/dialog-fix": (
        "ダイアログ修正の記録",
        "保存ダイアログのボタン配置を修正した。ヘッドレスでは表示されないため手動で確認した。",
    ),
    "db/address": (
        "アドレス帳のスキーマ",
        "メールアドレスは小文字に正規化してから保存する。重複登録を防ぐための一意制約を付けた。",
    ),
    "db/migration": (
        "マイグレーション手順",
        "Alembicでマイグレーションを作成し、ステージングで適用してから本番に反映する。修正は必ずレビューを通す。",
    ),
    "notes/english": (
        "Offscreen rendering",
        "Use the offscreen platform plugin for headless rendering in CI.",
    ),
}
ZH = {
    "ops/daemon": (
        "守护进程",
        "守护进程由 systemd 管理，崩溃后五秒内自动重启。日志写入 journald。",
    ),
    "ops/datasource": ("数据源配置", "数据源配置在 config/datasource.yaml，生产环境使用只读副本。"),
    "ui/menu": ("菜单权限", "菜单按角色加载，管理员可以看到全部菜单。"),
}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> MemoryService:
    return titled_notes_service(tmp_path_factory.mktemp("cjk"), {**JA, **ZH})


def test_a_katakana_word_inside_a_sentence_is_found(service: MemoryService) -> None:
    results = service.search("ヘッドレス", mode="lexical")
    assert set(paths(results)[:2]) == {"gui/headless", "gui/dialog-fix"}
    # アドレス shares the bigrams ドレ and レス, but not the word: it ranks below both.
    assert "db/address" not in paths(results)[:2]


def test_every_memory_containing_a_word_is_a_hit(service: MemoryService) -> None:
    containing = {p for p, (t, b) in JA.items() if "修正" in t + b}
    assert containing == {"gui/dialog-fix", "db/migration"}
    assert set(paths(service.search("修正", mode="lexical", limit=50))) == containing


@pytest.mark.parametrize(
    ("typed", "written"),
    [
        ("ＱＭｅｓｓａｇｅＢｏｘ", "QMessageBox"),
        ("ﾏｲｸﾞﾚｰｼｮﾝ", "マイグレーション"),
        ("ＣＩ", "CI"),
        # a word alone is also searched inside longer ones (`journald`): typed full-width too
        ("ｊｏｕｒｎａｌ", "journal"),
    ],
)
def test_a_word_typed_full_width_or_half_width_finds_what_the_usual_width_finds(
    service: MemoryService, typed: str, written: str
) -> None:
    """A Japanese input method in full-width mode types `ＡＰＩ`; memories write `API`
    (harusame0616/formawork.ai: `search ＡＰＩ` found nothing, `search API` 7 memories)."""
    expected = paths(service.search(written, mode="lexical", limit=50))
    assert expected
    assert paths(service.search(typed, mode="lexical", limit=50)) == expected


def test_latin_words_glued_to_japanese_are_words_of_their_own(service: MemoryService) -> None:
    results = paths(service.search("offscreen", mode="lexical"))
    assert set(results) == {"gui/headless", "notes/english"}
    mixed = paths(service.search("offscreenモードのQMessageBoxハング", mode="lexical"))
    assert mixed[0] == "gui/headless"


def test_a_word_alone_is_found_inside_longer_identifiers(tmp_path: Path) -> None:
    store = tmp_path / "s"
    write_memory(store, "a", "PHashAnnotationResults は画像ごとに保存する。", title="結果")
    write_memory(store, "b", "pHash値で重複画像を検出する。", title="重複")
    write_memory(store, "c", "The phash of an image, and then some.", title="Hashes")
    found = paths(disk_service(store, tmp_path, tmp_path).search("pHash", mode="lexical"))
    assert sorted(found) == ["a", "b", "c"]
    assert found[-1] == "a"  # the word itself ranks above a longer identifier


def test_a_japanese_question_finds_its_memory(service: MemoryService) -> None:
    results = paths(service.search("本番に反映する前のマイグレーションの手順は？", mode="lexical"))
    assert results[0] == "db/migration"


def test_chinese_words_and_questions(service: MemoryService) -> None:
    assert paths(service.search("守护进程", mode="lexical"))[0] == "ops/daemon"
    assert paths(service.search("数据源配置在哪里？", mode="lexical"))[0] == "ops/datasource"
    assert paths(service.search("菜单", mode="lexical")) == ["ui/menu"]


def test_a_word_of_kanji_and_kana_is_searched_whole(tmp_path: Path) -> None:
    """`引き継ぎ` (handover) was searched as `引`* and `継`*, its kana dropped as particles
    are: memories full of `引数` and `継承` came first, 5 of the first 10 held the word in
    a store where 19 do (NEXTAltair/LoRAIro), and no snippet marked it."""
    store = tmp_path / "ja"
    write_memory(store, "notes/args", "引数の検証。引数は必須。引数を継承する。継承の注意。")
    write_memory(store, "notes/inherit", "継承より合成。継承の階層は浅く。引数は少なく。")
    write_memory(store, "notes/handover", "## 次の担当への引き継ぎ\n\n残タスクを書いておく。")
    service = disk_service(store, tmp_path, tmp_path / "home")
    hits = [r.hit for r in service.search("引き継ぎ", mode="lexical")]
    assert hits[0].row.path == "notes/handover"
    assert "**引き継ぎ**" in hits[0].snippet


def test_words_that_touch_in_the_text_are_one_bold_run() -> None:
    text = "古いブランチ削除の手順。ブランチは残す。"
    marked = snippets.snippet(text, cjk.needles("ブランチ 削除"))
    assert "**ブランチ削除**" in marked and "****" not in marked
    assert "**ブランチ**は残す" in marked


def test_a_match_inside_the_texts_own_bold_is_bold_once(tmp_path: Path) -> None:
    """`**Important**` matched was `****Important****` and `**認証・認可**` matched
    `****認証**・認可**`: markdown shows those asterisks. The text's own bold is dropped
    from a snippet (a closing `**` whose opening the window cut off too), code's stays."""
    store = tmp_path / "bold"
    write_memory(store, "notes/bold", "The **Important** rule: call f(**kwargs) first.")
    ja = "前置き。" * 20 + "**鍵の回転** を忘れない。**認証・認可**の設計。"
    write_memory(store, "notes/ja", ja)
    service = disk_service(store, tmp_path, tmp_path / "home")
    (english,) = [r.hit.snippet for r in service.search("important", mode="lexical")]
    assert "**Important** rule: call f(**kwargs) first." in english
    assert "****" not in english
    (japanese,) = [r.hit.snippet for r in service.search("認証", mode="lexical")]
    assert "**認証**・認可の設計" in japanese and "****" not in japanese
    assert japanese.count("**") == 2
    assert snippets.emphasised(f"keys** done {snippets.OPEN}x{snippets.CLOSE}") == "keys done **x**"
    assert snippets.emphasised(f"y = x**2 {snippets.OPEN}z{snippets.CLOSE}") == "y = x**2 **z**"


def test_an_english_word_is_bold_where_it_is_a_word_in_a_memory_with_cjk(tmp_path: Path) -> None:
    """A memory holding CJK has its snippet cut from the text, and the query's words were
    marked wherever their letters stood: `id` in `**Id**entifier`, `is` in `th**is**` and
    `Checkl**is**t`, in every English memory with a Korean line (2sem/realtornote), where
    the index found the words themselves. A word long enough to be searched as a prefix
    still marks the start of a longer identifier."""
    store = tmp_path / "mixed"
    write_memory(
        store,
        "ios/overview",
        "This checklist is short.\n\n## Bundle Identifier\ncom.example.app\n\n"
        "## iTunes App ID\n1265759928\n\nName: 공인중개사요약집, see ExcelSyncService.\n",
        title="Overview",
    )
    service = disk_service(store, tmp_path, tmp_path / "home")
    (hit,) = [r.hit for r in service.search("bundle id", mode="lexical")]
    assert "**Bundle** Identifier" in hit.snippet and "App **ID**" in hit.snippet
    (hit,) = [r.hit for r in service.search("is", mode="lexical")]
    assert "This checklist **is** short." in hit.snippet
    (hit,) = [r.hit for r in service.search("excel", mode="lexical")]
    assert "see **Excel**SyncService." in hit.snippet


def test_a_snippet_cut_inside_the_texts_bold_shows_no_stray_asterisks() -> None:
    """A window ending in `- **Singleton` or between the two asterisks closing
    `**Presenter**` kept an opening `**` with nothing to close it, shown as asterisks
    (2RiniaR/king-server: `- **Si…`, `**プロパティ*…`); `f(**kw…` in code stays."""
    text = "a **Presenter** b **Singleton** c 設計"
    assert snippets.snippet(text, ["presenter"], before=4, after=18) == "a **Presenter** b Si…"
    assert snippets.snippet(text, ["presenter"], before=4, after=10) == "a **Presenter**…"
    assert snippets.emphasised("… call f(**kw…") == "… call f(**kw…"


def test_an_english_word_after_an_underscore_is_bold_as_the_index_found_it(tmp_path: Path) -> None:
    """The index splits words at `_` (unicode61), so `id` finds `user_id`; marked only where
    no letter, digit or `_` stood before it, the snippet showed the memory's first lines,
    with nothing in bold, whenever the word stood only after an underscore."""
    store = tmp_path / "mixed"
    filler = "".join(f"Line {n} of the notes.\n" for n in range(12))
    text = f"# 사용자 테이블\n\n{filler}\nThe key is user_id in every row.\n"
    write_memory(store, "db/users", text, title="Users")
    service = disk_service(store, tmp_path, tmp_path / "home")
    (hit,) = [r.hit for r in service.search("id", mode="lexical")]
    assert "user_**id** in every row" in hit.snippet


def test_snippets_show_the_original_text_with_the_word_in_bold(service: MemoryService) -> None:
    (hit,) = [r.hit for r in service.search("一意制約", mode="lexical")]
    assert "**一意制約**" in hit.snippet
    assert "一意 意制" not in hit.snippet  # never the bigrams the index holds
    english = service.search("platform plugin", mode="lexical")[0].hit
    assert english.row.path == "notes/english"
    assert "**platform**" in english.snippet


def test_english_memories_are_indexed_as_before(service: MemoryService, tmp_path: Path) -> None:
    with service.index.connect() as conn:
        rows = dict(
            conn.execute(
                "SELECT path, fts_content IS NULL FROM memories WHERE path LIKE 'notes/%'"
            ).fetchall()
        )
    assert rows == {"notes/english": 1}  # no second copy of text without CJK


def test_the_share_of_cjk_text() -> None:
    assert cjk.share("plain English, 42 words") == 0.0
    assert cjk.share("守护进程") == 1.0
    assert cjk.share("Qt依存") == 0.5


def test_a_four_character_word_is_not_matched_by_the_pair_across_its_two_halves(
    tmp_path: Path,
) -> None:
    """`予算の保存方法` (how the budget is saved) on tinygc/okodukai's memories ranked first
    the one memory holding neither word: `存方`, the pair across `保存|方法`, is rare, and
    it is in `依存方向` (dependency direction). A four-character piece is two words. (The
    memories here are written for the test, in the shape of that store's.)"""
    store = tmp_path / "ja"
    write_memory(store, "checklist", "- [ ] レイヤー間の依存方向を確認した")
    write_memory(store, "style", "テスト名は日本語で: `予算を保存できる`")
    write_memory(store, "status", "予算の画面と、予算を保存するリポジトリを実装済み。")
    service = disk_service(store, tmp_path, tmp_path / "home")
    assert sorted(paths(service.search("予算の保存方法", mode="lexical"))) == ["status", "style"]
    assert '"存方"' not in cjk.query_terms("保存方法")
    assert '"方法"' in cjk.query_terms("保存方法")  # its halves still match alone


def test_segmenting_and_query_terms() -> None:
    assert cjk.segment("plain English") is None
    assert cjk.segment("offscreenモード") == "offscreen モー ード "
    assert cjk.bigrams("修正") == ["修正"]
    assert cjk.query_terms("修正") == ['"修正"']
    assert cjk.query_terms("Qt依存") == ['"qt 依存"', '"qt"', '"依存"']
    # Hiragana between words are particles: dropped when content words remain.
    assert '"エラ ラー"' in cjk.query_terms("エラーが出た")
    assert not any("が" in term for term in cjk.query_terms("エラーが出た")[1:])


def test_quoted_cjk_phrases_stay_phrases_and_syntax_stays_text() -> None:
    assert fts_query('"ヘッドレス環境"') == '"ヘッ ッド ドレ レス ス環 環境"'
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    for query in ('"ヘッドレス環境" OR', "菜*", "N+1クエリ", "（全角）「括弧」"):
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (fts_query(query),)).fetchall()


def test_search_from_the_cli_in_japanese(run_cli: RunCli, tmp_path: Path) -> None:
    store = tmp_path / "s"
    for path, (title, body) in JA.items():
        write_memory(store, path, body, title=title)
    result = run_cli(["search", "ヘッドレス", "--mode", "lexical", "--dir", store])
    assert result.exit_code == 0, result.output
    assert "gui/headless" in result.output
    assert "**ヘッドレス**" in result.output


def test_every_cjk_range_is_told_from_dashes_arrows_and_emoji_by_the_quick_byte_look() -> None:
    """`has_cjk` looks at a text's UTF-8 bytes before compiling the CJK pattern: the look
    must let through every character the pattern holds (each range's ends and middle) and
    may stop the characters English memories hold besides ASCII."""
    bounds = re.findall(r"(.)-(.)", cjk.RANGES)
    assert len(bounds) == 12
    for first, last in bounds:
        middle = chr((ord(first) + ord(last)) // 2)
        for char in (first, middle, last):
            assert cjk.has_cjk(f"a — {char} →"), f"U+{ord(char):04X}"
    for text in ("dash — arrow → check ✅ rocket 🚀 …", "café naïve Ωmega", "box ─ │ ┌", "\ud800"):
        assert not cjk.has_cjk(text)
    assert cjk.has_cjk("設定ファイル") and cjk.has_cjk("한국어") and not cjk.has_cjk("plain")


def test_a_chinese_question_found_by_its_words_shows_them_in_bold_where_they_meet(
    tmp_path: Path,
) -> None:
    # In the style of Await-d/TgGod's checklist (MIT), written for this test: a question
    # in one run of hanzi ("how to check the service is up") is no phrase of the memory;
    # the bigrams it was found by are what the snippet shows, not the memory's first line.
    filler = "代码符合项目风格约定，添加必要的中文注释和文档字符串，类型注解完整。" * 4
    notes = {"ops/checklist": ("任务完成清单", filler + "部署后：服务集成检查，容器正常启动。")}
    service = titled_notes_service(tmp_path, notes)
    (hit,) = [r.hit for r in service.search("如何检查服务是否正常", mode="lexical")]
    assert "**服务**" in hit.snippet and "**检查**" in hit.snippet
    assert hit.snippet.startswith("…")  # the window where they meet, not the top
