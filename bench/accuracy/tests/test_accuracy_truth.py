"""Truth derivation on tiny real git histories (no mocked git, no network)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from make_history_repo import build_history_repo, make_history_repo
from score import format_confusion, format_table, score
from seed_rule import seed_predictions, seed_verdict
from truth import (
    Case,
    allocate,
    build_cases,
    compute_population,
    is_citable,
    map_old_lines,
    sample_cases,
)


def _write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode("utf-8"))
    return root


def _history(tmp_path: Path, old: dict[str, str], new: dict[str, str]):
    return build_history_repo(
        _write_tree(tmp_path / "old", old), _write_tree(tmp_path / "new", new), tmp_path / "repo"
    )


def _truth(tmp_path: Path, old: dict[str, str], new: dict[str, str]) -> dict[tuple[str, int], Case]:
    hist = _history(tmp_path, old, new)
    pop = compute_population(hist.path, hist.old, hist.new)
    return {(c.path, c.line): c for c in pop.cases}


RENAMED = "".join(f"renamed_module_line_{i} = {i}\n" for i in range(1, 9))


def test_edited_line_is_stale_and_lines_below_an_insertion_are_shifted(tmp_path):
    old = {"a.py": "line_one_value = 1\nline_two_value = 2\nline_three_value = 3\n"}
    new = {
        "a.py": "line_one_value = 1\ninserted_line_value = 99\n"
        "line_two_value = 2\nline_three_value = 333\n"
    }
    t = _truth(tmp_path, old, new)
    assert (t["a.py", 1].truth, t["a.py", 1].current_line) == ("valid", 1)
    moved = t["a.py", 2]
    assert (moved.truth, moved.move_kind, moved.current_path, moved.current_line) == (
        "moved",
        "shift",
        "a.py",
        3,
    )
    stale = t["a.py", 3]
    assert (stale.truth, stale.current_path, stale.current_line) == ("stale", "a.py", None)


def test_untouched_file_is_valid_everywhere(tmp_path):
    old = {"same.md": "# A heading line\nsome prose that stays\n", "a.py": "value_before = 1\n"}
    new = {"same.md": old["same.md"], "a.py": "value_after = 2\n"}
    t = _truth(tmp_path, old, new)
    assert [t["same.md", i].truth for i in (1, 2)] == ["valid", "valid"]
    assert t["same.md", 2].cited_line_matches


def test_renamed_file_moves_every_line_to_the_new_path(tmp_path):
    t = _truth(tmp_path, {"pkg/old_name.py": RENAMED}, {"src/pkg/new_name.py": RENAMED})
    for i in range(1, 9):
        c = t["pkg/old_name.py", i]
        assert (c.truth, c.move_kind, c.current_path, c.current_line) == (
            "moved",
            "rename",
            "src/pkg/new_name.py",
            i,
        )


def test_edit_inside_a_renamed_file_is_stale_at_the_new_path(tmp_path):
    edited = RENAMED.replace("renamed_module_line_4 = 4", "renamed_module_line_4 = 40")
    t = _truth(tmp_path, {"old_name.py": RENAMED}, {"new_name.py": edited})
    assert (t["old_name.py", 4].truth, t["old_name.py", 4].current_path) == ("stale", "new_name.py")
    assert (t["old_name.py", 5].truth, t["old_name.py", 5].current_line) == ("moved", 5)


def test_deleted_file_is_missing(tmp_path):
    t = _truth(
        tmp_path,
        {"gone.py": "this_file_will_vanish = True\n", "keep.py": "keep_this_file = 1\n"},
        {"keep.py": "keep_this_file = 1\n"},
    )
    c = t["gone.py", 1]
    assert (c.truth, c.current_path, c.current_line) == ("missing", None, None)


def test_block_move_follows_every_line_to_its_new_position(tmp_path):
    alpha = "def alpha_function():\n    return compute_alpha_value()\n"
    beta = "def beta_function():\n    return compute_beta_value()\n"
    gamma = "def gamma_function():\n    return compute_gamma_value()\n"
    old_text, new_text = alpha + beta + gamma, beta + gamma + alpha
    t = _truth(tmp_path, {"b.py": old_text}, {"b.py": new_text})
    new_lines = new_text.splitlines()
    for i, text in enumerate(old_text.splitlines(), start=1):
        c = t["b.py", i]
        assert c.truth == "moved" and not c.ambiguous_move
        assert c.current_line == new_lines.index(text) + 1
    assert any(c.move_kind == "block" and c.via_readd for c in t.values())


def test_block_move_into_another_file_is_stale_but_counted_as_other_file_readd(tmp_path):
    moved = "def helper_moved_between_modules():\n"
    t = _truth(
        tmp_path,
        {"a.py": "keep_this_line_a = 1\n" + moved, "b.py": "keep_this_line_b = 2\n"},
        {"a.py": "keep_this_line_a = 1\n", "b.py": "keep_this_line_b = 2\n" + moved},
    )
    c = t["a.py", 2]
    assert (c.truth, c.other_file_readds) == ("stale", 1)


def test_two_deleted_copies_and_one_readded_copy_are_both_flagged_ambiguous(tmp_path):
    old = (
        "header_line_one = 1\nduplicate_line_text()\nmiddle_line_two = 2\n"
        "duplicate_line_text()\nfooter_line_three = 3\n"
    )
    new = (
        "header_line_one = 1\nmiddle_line_two = 2\nfooter_line_three = 3\n"
        "new_footer_line = 4\n    duplicate_line_text()\n"
    )
    t = _truth(tmp_path, {"c.py": old}, {"c.py": new})
    for ln in (2, 4):
        c = t["c.py", ln]
        assert (c.truth, c.move_kind, c.current_line, c.ambiguous_move) == (
            "moved",
            "block",
            5,
            True,
        )
        assert c.old_occurrences == 2


def test_reindent_in_place_is_valid_and_equal_copies_pair_in_order(tmp_path):
    old = "header_line_one = 1\nduplicate_line_text()\nmiddle_line_two = 2\nduplicate_line_text()\n"
    new = (
        "header_line_one = 1\n    duplicate_line_text()\n"
        "middle_line_two = 2\n    duplicate_line_text()\n"
    )
    t = _truth(tmp_path, {"c.py": old}, {"c.py": new})
    for ln in (2, 4):
        c = t["c.py", ln]
        assert (c.truth, c.current_line, c.via_readd) == ("valid", ln, True)


def test_trivial_lines_and_files_with_form_feeds_are_not_sampled(tmp_path):
    old = {
        "t.py": "if something_long:\n    pass\nelse:\n"
        "    x = call_something()\n# ----------------\n",
        "ff.py": "first_line_of_file = 1\n\x0c\nsecond_line_of_file = 2\n",
    }
    hist = _history(tmp_path, old, old)
    pop = compute_population(hist.path, hist.old, hist.new)
    assert sorted((c.path, c.line) for c in pop.cases) == [("t.py", 1), ("t.py", 4)]
    assert "ff.py" in pop.excluded_files
    assert is_citable("@property") and not is_citable("    pass") and not is_citable("})]);,;")


def test_map_old_lines_handles_pure_insertions_and_deletions():
    # old 1..5; insert 2 lines after old 1; delete old 4
    mapped, _ = map_old_lines(5, [(1, 0, 2, 2), (4, 1, 5, 0)])
    assert mapped[1:] == [1, 4, 5, None, 6]
    mapped, _ = map_old_lines(2, [(0, 0, 1, 1)])  # insertion at the very top
    assert mapped[1:] == [2, 3]


def test_sampling_is_deterministic_stratified_and_sorted(tmp_path):
    old = {
        "a.py": "".join(f"stable_line_number_{i} = {i}\n" for i in range(20)),
        "b.py": "".join(f"shifting_line_numbr_{i} = {i}\n" for i in range(20)),
        "c.py": "".join(f"edited_line_number_{i} = {i}\n" for i in range(20)),
        "d.py": "".join(f"deleted_file_line_{i} = {i}\n" for i in range(20)),
    }
    new = {
        "a.py": old["a.py"],
        "b.py": "a_brand_new_first_line = 0\n" + old["b.py"],
        "c.py": "".join(f"edited_line_number_{i} = {i * 7}\n" for i in range(20)),
    }
    hist = _history(tmp_path, old, new)
    first = build_cases(hist.path, hist.old, hist.new, n=12, seed=3)
    again = build_cases(hist.path, hist.old, hist.new, n=12, seed=3)
    other = build_cases(hist.path, hist.old, hist.new, n=12, seed=4)
    assert first == again and first != other
    assert {c.truth for c in first} == {"valid", "moved", "stale", "missing"}
    assert [c.id for c in first] == [f"c{i:04d}" for i in range(1, 13)]
    assert [(c.path, c.line) for c in first] == sorted((c.path, c.line) for c in first)


def test_allocation_redistributes_the_quota_of_an_empty_class():
    alloc = allocate(
        10,
        {"valid": 0.3, "moved": 0.35, "stale": 0.25, "missing": 0.1},
        {"valid": 100, "moved": 100, "stale": 2, "missing": 0},
    )
    assert alloc["missing"] == 0 and alloc["stale"] == 2 and sum(alloc.values()) == 10


def test_sample_returns_everything_when_population_is_small():
    pop = [
        Case(
            id="",
            path="a",
            line=i,
            snippet="x" * 9,
            truth="valid",
            current_path="a",
            current_line=i,
        )
        for i in range(1, 4)
    ]
    assert len(sample_cases(pop, 50, seed=0)) == 3


def test_seed_rule_is_a_substring_test_on_the_cited_line(tmp_path):
    (tmp_path / "f.py").write_text("value = compute(a, b)  # now with a comment\nsecond = 2\n")
    assert seed_verdict(tmp_path, "f.py", 1, "value = compute(a, b)") == "valid"
    assert seed_verdict(tmp_path, "f.py", 2, "value = compute(a, b)") == "stale"
    assert seed_verdict(tmp_path, "f.py", 3, "second = 2") == "stale"
    assert seed_verdict(tmp_path, "nope.py", 1, "anything") == "missing"


def test_score_counts_precision_recall_and_exact_relocation():
    def case(truth, cp=None, cl=None, amb=False, kind=None):
        return Case(
            id="",
            path="p.py",
            line=1,
            snippet="s" * 9,
            truth=truth,
            current_path=cp,
            current_line=cl,
            ambiguous_move=amb,
            move_kind=kind,
        )

    cases = [
        case("valid", "p.py", 1),
        case("moved", "q.py", 7, kind="rename"),
        case("moved", "p.py", 9, amb=True, kind="block"),
        case("stale", "p.py"),
        case("missing"),
    ]
    preds = [
        {"status": "stale", "current_path": None, "current_line": None},  # false alarm
        {"status": "moved", "current_path": "./q.py", "current_line": "7"},  # right place
        {"status": "moved", "current_path": "p.py", "current_line": 8},  # wrong line
        {"status": "stale", "current_path": None, "current_line": None},  # hit
        {"status": "valid", "current_path": "p.py", "current_line": 1},  # miss
    ]
    s = score(cases, preds)
    assert (s.tp, s.fp, s.fn, s.tn) == (1, 1, 1, 2)
    assert s.precision == 0.5 and s.recall == 0.5
    assert (s.relocated, s.moved_total, s.relocated_unambiguous, s.moved_unambiguous) == (
        1,
        2,
        1,
        1,
    )
    assert s.relocation_by_kind == {"block": (0, 1), "rename": (1, 1)}
    assert s.confusion["valid"]["stale"] == 1
    table = format_table({"a": s, "b": s})
    assert "stale precision" in table and "relocation accuracy" in table
    assert "truth=moved" in format_confusion(s)
    with pytest.raises(ValueError):
        score(cases, preds[:-1])


def test_seed_rule_on_a_history_never_relocates(tmp_path):
    old = {"a.py": "line_one_value = 1\nline_two_value = 2\n"}
    new = {"a.py": "inserted_line_value = 0\nline_one_value = 1\nline_two_value = 2\n"}
    hist = _history(tmp_path, old, new)
    cases = build_cases(hist.path, hist.old, hist.new, n=10, seed=0)
    s = score(cases, seed_predictions(hist.path, cases))
    assert s.moved_total == 2 and s.relocated == 0 and s.fp == 2


def _tarball(cache: Path, name: str, files: dict[str, str]) -> None:
    with tarfile.open(cache / f"{name}.tar.gz", "w:gz") as tf:
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{rel}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def test_make_history_repo_uses_the_cache_skips_metadata_and_is_reproducible(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    body = "".join(f"module_body_line_{i} = {i}\n" for i in range(10))
    _tarball(
        cache,
        "demo_pkg-1.0",
        {
            "demo_pkg/core.py": body,
            "PKG-INFO": "Version: 1.0\n",
            "demo_pkg.egg-info/SOURCES.txt": "x\n",
            "gone.py": "bye_bye_file = 1\n",
        },
    )
    _tarball(cache, "demo_pkg-2.0", {"src/demo_pkg/core.py": body, "PKG-INFO": "Version: 2.0\n"})
    one = make_history_repo("Demo-Pkg==1.0", "demo_pkg==2.0", tmp_path / "r1", cache_dir=cache)
    two = make_history_repo("Demo-Pkg==1.0", "demo_pkg==2.0", tmp_path / "r2", cache_dir=cache)
    assert (one.old, one.new) == (two.old, two.new)
    assert not (one.path / "PKG-INFO").exists() and (one.path / "src/demo_pkg/core.py").exists()
    pop = compute_population(one.path, one.old, one.new)
    truths = {c.path: c.truth for c in pop.cases}
    assert truths == {"demo_pkg/core.py": "moved", "gone.py": "missing"}
