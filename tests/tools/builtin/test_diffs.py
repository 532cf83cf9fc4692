"""Hunks for the diff cards: exact from the replaced occurrences, bounded in meta."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import example, given, settings
from hypothesis import strategies as st

from acp_sidecar.tools.builtin.files.diffs import (
    Hunk,
    StoredDiffs,
    bounded,
    replacement_diffs,
    text_hunks,
)

TEXT = "".join(f"{i}\n" for i in range(1, 21))
DATA = TEXT.encode()


def diffs(data: bytes, old: bytes, new: bytes, **bounds: int) -> StoredDiffs:
    """The diffs made both ways (from the new content, and region by region): they agree."""
    made = replacement_diffs(data, old, new, after=data.replace(old, new), **bounds)
    assert replacement_diffs(data, old, new, **bounds) == made
    return made


def test_a_replacement_at_the_start_and_at_the_end() -> None:
    assert diffs(DATA, b"1\n2\n", b"one\n2\n").hunks == (
        Hunk(1, 1, "1\n2\n3\n4\n5\n", "one\n2\n3\n4\n5\n"),
    )
    assert diffs(DATA, b"20\n", b"twenty").hunks == (
        Hunk(17, 17, "17\n18\n19\n20\n", "17\n18\n19\ntwenty"),
    )


def test_nearby_occurrences_merge_into_one_hunk_and_later_lines_shift() -> None:
    data = b"".join(b"x\n" if n in (5, 9, 18) else b"%d\n" % n for n in range(1, 21))
    assert diffs(data, b"x\n", b"x\nX\n").hunks == (
        Hunk(
            2,
            2,
            "2\n3\n4\nx\n6\n7\n8\nx\n10\n11\n12\n",
            "2\n3\n4\nx\nX\n6\n7\n8\nx\nX\n10\n11\n12\n",
        ),
        Hunk(15, 17, "15\n16\n17\nx\n19\n20\n", "15\n16\n17\nx\nX\n19\n20\n"),
    )


def test_a_line_diff_between_two_texts() -> None:
    new = TEXT.replace("10\n", "ten\n")
    assert text_hunks(TEXT, new) == [
        Hunk(7, 7, "7\n8\n9\n10\n11\n12\n13\n", "7\n8\n9\nten\n11\n12\n13\n")
    ]
    assert text_hunks(TEXT, TEXT) == []


def test_meta_keeps_at_most_the_cap_and_counts_the_rest() -> None:
    hunks = [Hunk(i, i, "a" * 40, "b" * 40) for i in range(5)]
    stored = bounded(hunks, cap=200)
    assert (len(stored.hunks), stored.omitted, stored.cut) == (2, 3, False)
    huge = bounded([Hunk(1, 1, "x" * 500, "y\udcff")], cap=100)
    assert huge.cut and huge.hunks[0].old_text == "x" * 50 + "\n… [450 more characters not shown]\n"
    assert huge.hunks[0].new_text == "y\ufffd"


def test_a_region_too_large_to_keep_is_cut_without_being_decoded_whole() -> None:
    # 6 MB, one line, its one region the whole file; the odd first byte makes the decoded
    # pieces end inside a character.
    data = b"x" + "é".encode() * 3_000_000 + b"\n"
    stored = diffs(data, "é".encode(), b"e", cap=100)
    assert stored.cut and stored.omitted == 0
    [hunk] = stored.hunks
    assert hunk.old_text == "x" + "é" * 49 + "\n… [2,999,952 more characters not shown]\n"
    assert hunk.new_text == "x" + "e" * 49 + "\n… [2,999,952 more characters not shown]\n"


# -- the definition, span by span: what replacement_diffs must agree with ----------------


def _line_start(data: bytes, pos: int, context: int) -> int:
    start = data.rfind(b"\n", 0, pos) + 1
    for _ in range(context):
        if start == 0:
            break
        start = data.rfind(b"\n", 0, start - 1) + 1
    return start


def _line_end(data: bytes, pos: int, context: int) -> int:
    newline = data.find(b"\n", pos)
    end = len(data) if newline < 0 else newline + 1
    for _ in range(context):
        if end >= len(data):
            break
        newline = data.find(b"\n", end)
        end = len(data) if newline < 0 else newline + 1
    return end


def hunks_by_definition(data: bytes, old: bytes, new: bytes, context: int) -> Sequence[Hunk]:
    """Each occurrence's lines with ``context`` lines around them; windows that touch merge."""
    spans, at = [], data.find(old)
    while at >= 0:
        spans.append((at, at + len(old)))
        at = data.find(old, at + len(old))
    regions: list[list[int]] = []  # start, end, first span, last span
    for index, (start, end) in enumerate(spans):
        a, b = _line_start(data, start, context), _line_end(data, end - 1, context)
        if regions and a <= regions[-1][1]:
            regions[-1][1], regions[-1][3] = b, index
        else:
            regions.append([a, b, index, index])
    hunks, shift = [], 0
    for a, b, first, last in regions:
        line = 1 + data.count(b"\n", 0, a)
        new_text = data[a:b].replace(old, new).decode("utf-8", "surrogateescape")
        hunks.append(
            Hunk(line, line + shift, data[a:b].decode("utf-8", "surrogateescape"), new_text)
        )
        shift += (last - first + 1) * (new.count(b"\n") - old.count(b"\n"))
    return hunks


_PIECES = st.sampled_from([b"a", b"b", b"\n", b"ab", "é".encode(), b"\xc3", b"\xff", b"\r\n"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_PIECES, max_size=60).map(b"".join),
    st.lists(_PIECES, min_size=1, max_size=3).map(b"".join),
    st.lists(_PIECES, max_size=3).map(b"".join),
    st.integers(min_value=0, max_value=3),
    st.integers(min_value=1, max_value=80),
)
@example(b"aaaa\n\n\n\n\n\n\n\naaa", b"aa", b"", 3, 80)  # a needle that overlaps itself
@example(b"a\n" * 9 + b"a", b"a\n", b"b", 3, 80)  # a needle's own newline
def test_the_hunks_are_those_of_the_definition(
    data: bytes, old: bytes, new: bytes, context: int, cap: int
) -> None:
    expected = bounded(hunks_by_definition(data, old, new, context), cap=cap)
    assert diffs(data, old, new, context=context, cap=cap) == expected
