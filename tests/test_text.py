"""One-line, bounded text for menus, titles and error lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.text import first_line, one_line, shorten


def test_shorten_cuts_at_a_word_and_marks_the_cut() -> None:
    assert shorten("  two\n words ", 20) == "two words"
    assert shorten("alpha beta gamma delta", 16) == "alpha beta…"
    assert shorten("alpha beta, gamma", 13) == "alpha beta…"  # no dangling comma
    assert shorten("x" * 50, 10) == "x" * 9 + "…"
    assert shorten("alpha beta", 6) == "alpha…"  # the cut falls right after a word


def test_first_line_marks_what_it_left_out() -> None:
    assert first_line("\n\n  bad request  \n", 40) == "bad request"
    assert first_line("bad request:\n  at line 3", 40) == "bad request…"
    assert first_line("x" * 50 + "\nmore", 10, mark=" [+]") == "x" * 6 + " [+]"
    assert first_line(" \n ", 10) == ""


@given(st.text(), st.integers(min_value=2, max_value=200))
def test_what_comes_back_is_one_bounded_line(text: str, limit: int) -> None:
    for shown in (shorten(text, limit), first_line(text, limit)):
        assert len(shown) <= limit
        assert shown == one_line(shown)
    if len(one_line(text)) <= limit:
        assert shorten(text, limit) == one_line(text)
