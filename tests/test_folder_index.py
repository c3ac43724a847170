"""A past version's folders read as the work tree's with the files added and gone since
(core/folder_index.py): it must answer as a list of that version's own files would, for
every folder a file of either lies under, and for the files under it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_enhancement.core.file_list import FileList

_PART = st.sampled_from(["a", "b", "src", "a.b", "x"])
_PATH = st.lists(_PART, min_size=1, max_size=4).map(lambda parts: "/".join(parts) + ".py")


def _names(paths: set[str]) -> set[str]:
    """The names of the folders these files lie under, at any depth."""
    return {part for p in paths for part in p.split("/")[:-1]}


def _folders(paths: set[str]) -> set[str]:
    return {p.rsplit("/", n)[0] for p in paths for n in range(1, p.count("/") + 1)}


@settings(max_examples=300, deadline=None)
@given(
    now=st.sets(_PATH, max_size=25),
    gone=st.sets(_PATH, max_size=8),
    added_share=st.integers(min_value=0, max_value=3),
    submodules=st.sets(st.sampled_from(["vendor/lib", "a/b", "x"]), max_size=2),
)
def test_a_past_version_s_folders_are_those_of_a_list_of_its_own_files(
    now: set[str], gone: set[str], added_share: int, submodules: set[str]
) -> None:
    added = {p for n, p in enumerate(sorted(now)) if n % 4 < added_share}
    gone -= now
    then_files = (now - added) | gone
    base = FileList(now, submodules)
    base.folder("a")  # the work tree's folders listed first, as a run lists them
    then = base.changed(added=added, deleted=gone)
    own = FileList(then_files, submodules)
    for folder in sorted(_folders(now | gone) | submodules):
        for rooted in (False, True):
            assert then.folder(folder, rooted) == own.folder(folder, rooted), folder
        assert sorted(then.under(folder + "/")) == sorted(own.under(folder + "/")), folder
        assert sorted(base.under(folder + "/")) == sorted(
            p for p in now if p.startswith(folder + "/")
        )
    for name in {part for p in now | gone for part in p.split("/")} | {"zz"}:
        for files, listed in ((then_files, then), (now, base)):
            assert listed.has_folder_named(name) == (name in _names(files)), name


def test_a_past_version_s_folder_holds_files_when_more_lie_under_it_than_were_added() -> None:
    """The count the index keeps (session 34's): files under the folder now, less those
    added since, plus those gone. An added file the work tree's list lacks (a submodule
    added since: git's diff lists it, the list keeps it apart) is taken off all the same,
    as before; the property above holds wherever the added files are the list's."""
    now = FileList(["lib/a.py", "lib/deep/b.py"])
    lacking = now.changed(added=["lib/y.py", "lib/z.py"], deleted=[])
    assert lacking.folder("lib").path is None
    assert lacking.has_folder_named("lib")  # read from the files, as it always was
    assert now.changed(added=["lib/z.py"], deleted=[]).folder("lib").path == "lib"
    then = now.changed(added=["lib/deep/b.py"], deleted=[])
    assert then.folder("lib/deep").path is None and then.folder("lib").path == "lib"
    assert list(then.under("lib/")) == ["lib/a.py"]
    back = now.changed(added=["lib/deep/b.py"], deleted=["lib/deep/old.py"])
    assert back.folder("deep").path == "lib/deep"
    assert list(back.under("lib/deep/")) == ["lib/deep/old.py"]
