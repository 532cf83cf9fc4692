"""One-line, bounded text for menus, titles and error lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.text import first_line, one_line, shorten, visible, visible_line


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


# -- what people are shown of untrusted names and commands -------------------------------

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_controls_and_bidi_controls_are_shown_not_obeyed() -> None:
    assert visible("echo safe\x1b[8m; rm -rf ~") == "echo safe␛[8m; rm -rf ~"
    assert visible("report\u202ecod.exe") == "report⟨U+202E⟩cod.exe"
    assert visible("a\x9bb\x7fc\x00") == "a⟨U+009B⟩b␡c␀"
    assert visible("line\r\nnext\tx\u2028y") == "line␍␊next␉x⟨U+2028⟩y"
    assert [visible(char) for char in BIDI] == [f"⟨U+{ord(c):04X}⟩" for c in BIDI]


def test_a_block_keeps_its_newlines_and_tabs() -> None:
    assert visible("a\r\n\tb\n", lines=True) == "a␍\n\tb\n"


def test_a_shown_line_is_one_line_with_its_breaks_visible() -> None:
    assert visible_line("echo safe\nrm -rf ~") == "echo safe␊rm -rf ~"
    assert visible_line("echo safe\r" + " " * 300 + "; rm -rf ~") == "echo safe␍ ; rm -rf ~"
    assert visible_line("  plain  text ") == "plain text"
    assert visible_line("naïve 日本 👩‍💻") == "naïve 日本 👩‍💻"  # printable text is untouched


@given(st.text(), st.booleans())
def test_nothing_that_acts_survives_and_showing_twice_changes_nothing(
    text: str, lines: bool
) -> None:
    shown = visible(text, lines=lines)
    kept = "\n\t" if lines else ""
    assert not any(
        (ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c in BIDI + "\u2028\u2029") and c not in kept
        for c in shown
    )
    assert visible(shown, lines=lines) == shown
    assert visible_line(text) == one_line(visible_line(text))


@given(
    st.lists(
        st.characters(max_codepoint=0x7F)
        | st.sampled_from([" ", "  ", "\t", "\u202e", "é", "\xa0"]),
        max_size=12,
    ).map("".join)
)
def test_a_plain_ascii_line_is_shown_as_the_general_formula_shows_it(text: str) -> None:
    assert visible_line(text) == one_line(visible(text))


class _Title(str):
    pass


@pytest.mark.parametrize("text", ["plain title", " edge spaces ", "two  spaces", "tab\there"])
def test_a_line_is_an_exact_str_as_the_general_formula_makes_it(text: str) -> None:
    shown = visible_line(_Title(text))
    assert type(shown) is str
    assert shown == one_line(visible(text))
