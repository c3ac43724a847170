"""The grammar of prose mentions: every form people write, what is not a mention, exactly
which characters hold the path and the numbers, and how a path as written is resolved."""

from __future__ import annotations

import pytest

from hostile_support import python_bounded
from memory_enhancement.core.file_list import FileList, Resolution, normalize
from memory_enhancement.core.mentions import Mention, find_mentions, relocated
from memory_enhancement.core.remotes import remote_repository


def one(text: str) -> Mention:
    found = find_mentions(text)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("text", "path", "start", "end", "form"),
    [
        ("see `src/app.py:42` for it", "src/app.py", 42, None, "colon"),
        ("main_window.py:817-827 is the handler", "main_window.py", 817, 827, "range"),
        ("main_window.py:817–827 (en dash)", "main_window.py", 817, 827, "range"),
        ("src/tool.py:7:5: warning: unused", "src/tool.py", 7, None, "column"),
        ("[the handler](src/api.py#L10-L20)", "src/api.py", 10, 20, "anchor_range"),
        ("[top](src/api.py#L3)", "src/api.py", 3, None, "anchor"),
        ("[cols](src/api.py#L3C4-L5C9)", "src/api.py", 3, 5, "anchor_range"),
        ("src/app.py:L12 and nothing else", "src/app.py", 12, None, "colon"),
        ("src/app.py:11以降は処理", "src/app.py", 11, None, "colon"),
        ("ファイルsrc/app.py:13を参照", "src/app.py", 13, None, "colon"),
        ("（app/core/redis.py:12）", "app/core/redis.py", 12, None, "colon"),
        ("./scripts/run.sh:4 starts it", "./scripts/run.sh", 4, None, "colon"),
        ("[x](../../src/x.py#L2)", "../../src/x.py", 2, None, "anchor"),
        (".env:3 holds it", ".env", 3, None, "colon"),
        ("tracker.py:84.", "tracker.py", 84, None, "colon"),
        ("a range written twice: src/app.py:12-12", "src/app.py", 12, None, "range"),
        # route folders of web frameworks, whole (found in doublefx/9router)
        (
            "`src/app/api/providers/[id]/route.js:17-21`",
            "src/app/api/providers/[id]/route.js",
            17,
            21,
            "range",
        ),
        ("app/(auth)/[...slug]/page.tsx#L3", "app/(auth)/[...slug]/page.tsx", 3, None, "anchor"),
        ("pages/posts/[id].js:4", "pages/posts/[id].js", 4, None, "colon"),
        ("app/[[lang]]/page.svelte:3", "app/[[lang]]/page.svelte", 3, None, "colon"),
        # the `[` of a markdown link is not part of the path it holds
        ("[[id]/page.tsx:4](https://x.test)", "[id]/page.tsx", 4, None, "colon"),
        ("`app/[[...all]]/page.tsx` (lines 5-6)", "app/[[...all]]/page.tsx", 5, 6, "words"),
    ],
)
def test_each_form_is_a_mention(
    text: str, path: str, start: int, end: int | None, form: str
) -> None:
    mention = one(text)
    assert (mention.path, mention.start, mention.end, mention.form) == (path, start, end, form)
    assert text[mention.column :].startswith(mention.text)


@pytest.mark.parametrize(
    "text",
    [
        "version 2.0:1 of the spec",
        "at 12:30 we met",
        "connect to host.example.org:22 or api.example.com:443",
        "http://example.com:8080/x.py:3 is a URL",
        "see https://example.com/docs/page.html#L3 online",
        "src/app.py has no line",
        "the ratio 3:4",
        "a dotted.name:x is no line",
        "localhost:8080",
        "Table 2.3:4 of the paper",
        # a linter's line about a glob, pasted from amitcjmu/Stock-Analysis's memory
        "# backend/alembic/versions/127_*.py:11:1: F401 'sqlalchemy as sa' imported",
        "each src/*.py:3 and {name}.py:3 is a pattern",
    ],
)
def test_these_are_not_mentions(text: str) -> None:
    assert find_mentions(text) == []


def test_bold_and_italic_stars_still_open_a_mention() -> None:
    found = find_mentions("see **src/app.py:4** and *src/b.py:5*, not src/*.py:6")
    assert [(m.path, m.start) for m in found] == [("src/app.py", 4), ("src/b.py", 5)]


def test_a_list_after_a_colon_form_is_one_mention_per_item_with_only_its_numbers() -> None:
    text = "see `src/app.py:10,20, 30-35` here"
    head, second, third = find_mentions(text)
    assert (head.text, head.start, head.form) == ("src/app.py:10", 10, "colon")
    assert (second.text, second.path, second.start, second.form) == ("20", "src/app.py", 20, "list")
    assert (third.text, third.start, third.end) == ("30-35", 30, 35)
    assert second.path_at is None
    for mention in (head, second, third):
        assert text[mention.column : mention.column + len(mention.text)] == mention.text


def test_later_lines_of_the_file_in_spans_of_their_own_are_items_of_its_list() -> None:
    """`` `run.py:170`, `:208` ``, as real memories write it (`mdio-qca.c:554`, `:622`): the
    `:208` was read as nothing, its line never verified nor fixed."""
    text = "in `h/run.py:170`, `:208`, `:230-235`, `h/utils.py:36` and `:back`"
    found = find_mentions(text)
    assert [(m.path, m.start, m.end, m.form) for m in found] == [
        ("h/run.py", 170, None, "colon"),
        ("h/run.py", 208, None, "list"),
        ("h/run.py", 230, 235, "list"),
        ("h/utils.py", 36, None, "colon"),
    ]
    assert [m.text for m in found] == ["h/run.py:170", "208", "230-235", "h/utils.py:36"]
    for mention in found:
        assert text[mention.column : mention.column + len(mention.text)] == mention.text
    assert relocated(found[2], 240, 245) == "240-245"
    assert [m.start for m in find_mentions("h/run.py:170, `:208` unbalanced")] == [170]


def test_a_blob_url_is_a_mention_naming_its_repository_ref_and_path() -> None:
    url = "https://github.com/Acme/Widget/blob/main/src/app.py#L25-L30"
    mention = one(f"see {url}.")
    assert (mention.path, mention.start, mention.end, mention.form) == ("src/app.py", 25, 30, "url")
    assert (mention.repository, mention.ref, mention.text) == (
        "github.com/Acme/Widget",
        "main",
        url,
    )
    assert not mention.permalink
    gitlab = one("https://gitlab.com/group/sub/proj/-/blob/v1.2/lib/x.rb#L7")
    assert (gitlab.repository, gitlab.path, gitlab.start) == (
        "gitlab.com/group/sub/proj",
        "lib/x.rb",
        7,
    )
    pinned = one("https://github.com/a/b/blob/" + "ab12" * 10 + "/x.py#L1")
    assert pinned.permalink


def test_lines_and_code_blocks_are_counted_in_the_file_frontmatter_included() -> None:
    text = "---\nsources: [src/a.py:1]\n---\n# T\n\n```py\n# src/b.py:2\n```\nsrc/c.py:3\n"
    found = find_mentions(text)
    assert [(m.path, m.line, m.in_code) for m in found] == [
        ("src/a.py", 2, False),
        ("src/b.py", 7, True),
        ("src/c.py", 9, False),
    ]


def test_a_fence_is_up_to_three_spaces_or_tabs_then_its_mark_on_any_line_ending() -> None:
    """Fences and line numbers are found from the marks and the newlines searched for as
    strings (core/mentions.py `_fence_lines`), as the anchored patterns found them."""
    text = (
        "a/x.py:1\r\n  ```py\r\na/y.py:2\r\n\t~~~~\r\na/z.py:3\n    ```\na/w.py:4\n"
        " ~~```\na/v.py:5\n```` x ```\na/u.py:6\n~~~\na/t.py:7"
    )
    assert [(m.path, m.line, m.in_code) for m in find_mentions(text)] == [
        ("a/x.py", 1, False), ("a/y.py", 3, True), ("a/z.py", 5, False), ("a/w.py", 7, False),
        ("a/v.py", 9, False), ("a/u.py", 11, True), ("a/t.py", 13, False),
    ]  # fmt: skip
    for above in ("", "# T\n\nx\n\n"):  # the labels' lines read up to four lines above
        text = f"{above}**File:** `a/b.py`\n**Function:** `f()`\n**Line:** 9\n"
        line = text.count("\n")
        assert [(m.path, m.line, m.start) for m in find_mentions(text)] == [("a/b.py", line, 9)]


def test_relocated_rewrites_only_the_numbers_and_the_path_keeping_the_form() -> None:
    assert relocated(one("[h](src/api.py#L10-L20)"), 15, 25) == "src/api.py#L15-L25"
    assert relocated(one("x src/tool.py:7:5: warn"), 6, None) == "src/tool.py:6:5"
    assert relocated(one("a main.py:817–827 b"), 820, 830) == "main.py:820–830"
    assert relocated(one("a src/app.py:12-12 b"), 14, None) == "src/app.py:14-14"
    assert relocated(one("a old/x.py:3 b"), 4, None, "new/x.py") == "new/x.py:4"
    url = one("https://github.com/a/b/blob/main/src/x.py#L3C2-L9")
    assert relocated(url, 5, 11) == "https://github.com/a/b/blob/main/src/x.py#L5C2-L11"
    item = find_mentions("src/app.py:10, 20-22")[1]
    assert relocated(item, 25, 27) == "25-27"


def test_paths_are_normalized_against_the_root_and_the_memory_folder() -> None:
    assert normalize("src/app.py") == "src/app.py"
    assert normalize("/src/app.py") == "src/app.py"
    assert normalize("@src/app.py") == "src/app.py"
    assert normalize("./x.py", ".serena/memories") == "x.py"
    assert normalize("../../src/x.py", ".serena/memories") == "src/x.py"
    assert normalize("../../../x.py", ".serena/memories") is None
    assert normalize("~/gist/x.rs") is None


def test_resolution_prefers_the_root_file_then_a_unique_suffix_else_names_the_candidates() -> None:
    files = FileList(
        ["app.py", "src/app.py", "pkg_a/util.py", "pkg_b/util.py", "admin/app/core/redis.py"],
        ["vendor/sub"],
    )
    assert files.resolve("app.py") == Resolution("app.py")
    assert files.resolve("app/core/redis.py") == Resolution("admin/app/core/redis.py")
    assert files.resolve("util.py") == Resolution(candidates=("pkg_a/util.py", "pkg_b/util.py"))
    assert files.resolve("vendor/sub/x.py") == Resolution(submodule="vendor/sub")
    assert files.resolve("nowhere.py") == Resolution()
    assert files.resolve("core/redis.py").path == "admin/app/core/redis.py"
    assert not files.resolve("re/redis.py").found  # a suffix is whole segments
    assert files.resolve("~/x.py").outside


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/Acme/Widget.git", "github.com/acme/widget"),
        ("git@github.com:acme/widget.git", "github.com/acme/widget"),
        ("ssh://git@gitlab.com:2222/group/sub/proj.git", "gitlab.com/group/sub/proj"),
        ("https://user@github.com/acme/widget/", "github.com/acme/widget"),
        ("/local/path/repo", None),
    ],
)
def test_the_origin_remote_names_a_repository(url: str, expected: str | None) -> None:
    assert remote_repository(url) == expected


def test_a_changed_file_list_resolves_as_the_version_it_describes() -> None:
    now = FileList(["src/app.py", "pkg/util.py", "new/util.py"])
    then = now.changed(added=["new/util.py"], deleted=["old/app.py"])
    assert then.resolve("util.py") == Resolution("pkg/util.py")  # new/ came later
    assert then.resolve("app.py").candidates == ("old/app.py", "src/app.py")
    assert "old/app.py" in then.files and "new/util.py" not in then.files
    assert sorted(then.named_like("app")) == ["old/app.py", "src/app.py"]
    assert now.resolve("util.py").candidates == ("new/util.py", "pkg/util.py")


@pytest.mark.parametrize("suffix", ["x.py lines 3", "x.py:3"])
def test_a_200_kb_line_of_bracketed_folders_is_read_in_one_pass(suffix: str) -> None:
    """Route folders made `[[a]]/` a folder read from either of its `[`: a path was tried
    from the second `[` of every `[[` to the end of the line, and such a line took minutes
    (in a child process: a hang fails the test, naming it)."""
    code = (
        "from memory_enhancement.core.mentions import find_mentions\n"
        f"found = find_mentions('[[a]]/' * 35_000 + {suffix!r})\n"
        "print(len(found), found[0].path.count('[[a]]/'), found[0].start)"
    )
    done = python_bounded(code)
    assert (done.returncode, done.stdout, done.stderr) == (0, "1 35000 3\n", "")
