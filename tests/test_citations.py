"""The citation grammar: one parser, one printer, and a round trip between them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_enhancement.core.citations import make_citation, parse_citation, parse_line_spec
from memory_enhancement.core.errors import InvalidCitationError, InvalidInputError
from memory_enhancement.core.model import Citation, CitationKind


@pytest.mark.parametrize(
    ("text", "target", "line", "end_line", "canonical"),
    [
        ("src/x.py", "src/x.py", None, None, "src/x.py"),
        ("src/x.py:17", "src/x.py", 17, None, "src/x.py:17"),
        ("src/x.py:17-25", "src/x.py", 17, 25, "src/x.py:17-25"),
        ("src/x.py#L17", "src/x.py", 17, None, "src/x.py:17"),
        ("src/x.py#L17-L25", "src/x.py", 17, 25, "src/x.py:17-25"),
        ("src/x.py#L17-25", "src/x.py", 17, 25, "src/x.py:17-25"),
        ("  src/x.py:17  ", "src/x.py", 17, None, "src/x.py:17"),
        ("src/x.py:17-17", "src/x.py", 17, None, "src/x.py:17"),
        ("Makefile", "Makefile", None, None, "Makefile"),
    ],
)
def test_every_file_form_parses_to_its_parts_and_prints_canonically(
    text: str, target: str, line: int | None, end_line: int | None, canonical: str
) -> None:
    citation = parse_citation(text)
    assert (citation.target, citation.line, citation.end_line) == (target, line, end_line)
    assert citation.kind is CitationKind.FILE
    assert citation.ref == canonical


@pytest.mark.parametrize(
    "url",
    [
        "https://docs.example.com/api",
        "http://example.com/a:17",
        "https://github.com/o/r/blob/main/src/x.py#L17-L25",
        "file:///etc/hosts",
    ],
)
def test_a_url_is_kept_whole_and_never_read_as_a_line_reference(url: str) -> None:
    citation = parse_citation(url)
    assert citation.is_url
    assert citation.target == url
    assert citation.line is None
    assert citation.ref == url


@pytest.mark.parametrize("text", ["", " ", "\t\n  "])
def test_an_empty_or_whitespace_only_citation_is_rejected(text: str) -> None:
    with pytest.raises(InvalidCitationError, match="empty"):
        parse_citation(text)


@pytest.mark.parametrize("text", ["src/x.py:0", "src/x.py#L0", "src/x.py:0-3"])
def test_line_zero_is_rejected_with_the_citation_named(text: str) -> None:
    with pytest.raises(InvalidCitationError) as info:
        parse_citation(text)
    assert repr(text) in str(info.value)
    assert "lines start at 1" in str(info.value)


@pytest.mark.parametrize("text", ["src/x.py:25-17", "src/x.py#L25-L17"])
def test_a_range_that_ends_before_it_starts_is_rejected(text: str) -> None:
    with pytest.raises(InvalidCitationError, match="ends before it starts"):
        parse_citation(text)


def test_citation_errors_are_invalid_input_errors() -> None:
    assert issubclass(InvalidCitationError, InvalidInputError)


def test_a_snippet_given_with_the_reference_is_kept() -> None:
    citation = parse_citation("src/x.py:3", snippet="API_VERSION = 'v2'")
    assert citation.snippet == "API_VERSION = 'v2'"
    assert citation.ref == "src/x.py:3"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("", (None, None)), ("42", (42, None)), ("17-25", (17, 25)), ("L17-L25", (17, 25))],
)
def test_the_line_cell_of_a_table_parses_like_the_grammar(
    spec: str, expected: tuple[int | None, int | None]
) -> None:
    assert parse_line_spec("src/x.py", spec) == expected


def test_a_line_cell_that_is_not_a_number_is_rejected_naming_the_citation() -> None:
    with pytest.raises(InvalidCitationError, match=r"'abc'.*'src/x.py'"):
        parse_line_spec("src/x.py", "abc")


def test_make_citation_parses_a_target_that_carries_its_own_line_suffix() -> None:
    assert make_citation("src/x.py:17-25") == Citation("src/x.py", 17, 25)
    assert make_citation("src/x.py", 3) == Citation("src/x.py", 3)


def test_make_citation_rejects_an_empty_target() -> None:
    with pytest.raises(InvalidCitationError):
        make_citation("  ", 3)


# -- round trip -----------------------------------------------------------------

_segment = st.text(
    alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", ".."))
_file_path = st.lists(_segment, min_size=1, max_size=4).map("/".join)


@st.composite
def file_citations(draw: st.DrawFn) -> Citation:
    target = draw(_file_path)
    line = draw(st.none() | st.integers(min_value=1, max_value=100_000))
    end_line = None
    if line is not None and draw(st.booleans()):
        end_line = draw(st.integers(min_value=line + 1, max_value=line + 1000))
    return Citation(target, line, end_line)


_urls = st.builds(
    lambda scheme, host, path: f"{scheme}://{host}/{path}",
    st.sampled_from(["http", "https"]),
    st.from_regex(r"[a-z]{1,10}\.(com|org|dev)", fullmatch=True),
    _file_path,
).map(lambda url: Citation(url))


@given(file_citations() | _urls)
def test_parsing_the_canonical_form_gives_the_citation_back(citation: Citation) -> None:
    assert parse_citation(citation.ref) == citation


@given(file_citations())
def test_github_anchors_parse_to_the_same_citation_as_the_colon_form(citation: Citation) -> None:
    if citation.line is None:
        return
    anchor = f"{citation.target}#L{citation.line}"
    if citation.end_line is not None:
        anchor += f"-L{citation.end_line}"
    assert parse_citation(anchor) == citation
