"""The search syntax (ralphsite.core.search.terms.py): what a query means, and safe snippets."""

import pytest

from ralphsite.core.search.terms import (
    MATCH_END,
    MATCH_START,
    MAX_TERMS,
    QueryTooLong,
    SearchQuery,
    Term,
    parse_query,
    snippet_html,
)


def _groups(text: str) -> list[list[tuple[str, str]]]:
    return [[(term.kind, term.text) for term in group] for group in parse_query(text).groups]


def test_it_reads_words_phrases_prefixes_and_substrings() -> None:
    assert _groups('Parser "was Running" refact* 세션을') == [
        [("word", "parser"), ("phrase", "was running"), ("prefix", "refact"), ("substring", "세션을")]]
    assert _groups('"세션을  다시"') == [[("substring", "세션을 다시")]]  # CJK phrase: the literal text
    assert _groups('"one"') == [[("word", "one")]]


def test_it_splits_alternatives_at_upper_case_or_only() -> None:
    assert _groups("a1 b2 OR c3") == [[("word", "a1"), ("word", "b2")], [("word", "c3")]]
    assert _groups("OR a1 OR OR b2 OR") == [[("word", "a1")], [("word", "b2")]]
    assert _groups("a1 or b2") == [[("word", "a1"), ("word", "b2")]]  # `or` is a stop word
    assert _groups("x1 OR x1") == [[("word", "x1")]]


def test_it_reads_everything_else_as_literal_text() -> None:
    assert _groups('NEAR(x1 y2) -z3 ab:cd "unclosed') == [
        [("word", "near"), ("word", "x1"), ("word", "y2"), ("word", "z3"), ("word", "ab"), ("word", "cd"),
         ("word", "unclosed")]]
    assert _groups("snake_case * ** \"\" '") == [[("word", "snake"), ("word", "case")]]
    assert _groups("the AND not") == [] and not parse_query("") and not parse_query('"the"')


def test_it_refuses_a_query_past_its_limits() -> None:
    parse_query("x" * 1000)
    with pytest.raises(QueryTooLong):
        parse_query("x" * 1001)
    parse_query(" ".join(f"w{i}" for i in range(MAX_TERMS)))
    with pytest.raises(QueryTooLong):
        parse_query(" OR ".join(f"w{i}" for i in range(MAX_TERMS + 1)))


def test_it_lists_the_substrings_to_mark() -> None:
    query = SearchQuery(groups=((Term("substring", "세션"), Term("word", "x")), (Term("substring", "세션"),)))
    assert query.substrings == ("세션",)


@pytest.mark.parametrize(("raw", "html"), [
    (f"a {MATCH_START}<b>{MATCH_END} c", "a <mark>&lt;b&gt;</mark> c"),
    (f"{MATCH_END}x{MATCH_START}{MATCH_START}y", "x<mark>y</mark>"),  # stray markers stay balanced
    ("\ue002script\ue003 & 'q'", "&lt;script&gt; &amp; &#x27;q&#x27;"),  # ts_headline's stand-ins for < >
])
def test_it_escapes_snippets_and_keeps_marks_balanced(raw: str, html: str) -> None:
    assert snippet_html(raw) == html


def test_it_marks_substrings_outside_what_the_database_marked() -> None:
    assert snippet_html(f"{MATCH_START}run{MATCH_END} 세션을 <세션>", ("세션",)) == \
        "<mark>run</mark> <mark>세션</mark>을 &lt;<mark>세션</mark>&gt;"
