"""Hunks for the diff cards: exact from replaced spans, bounded in meta."""

from __future__ import annotations

from acp_sidecar.tools.builtin.files.diffs import Hunk, bounded, replacement_hunks, text_hunks

TEXT = "".join(f"{i}\n" for i in range(1, 21))
DATA = TEXT.encode()


def test_a_replacement_at_the_start_and_at_the_end() -> None:
    assert replacement_hunks(DATA, [(0, 2, b"one\n")]) == [
        Hunk(1, 1, "1\n2\n3\n4\n", "one\n2\n3\n4\n")
    ]
    at = DATA.index(b"20\n")
    assert replacement_hunks(DATA, [(at, at + 3, b"twenty")]) == [
        Hunk(17, 17, "17\n18\n19\n20\n", "17\n18\n19\ntwenty")
    ]


def test_nearby_changes_merge_into_one_hunk_and_later_lines_shift() -> None:
    a, b = DATA.index(b"5\n"), DATA.index(b"9\n")
    c = DATA.index(b"18\n")
    spans = [(a, a + 2, b"five\nFIVE\n"), (b, b + 2, b"nine\n"), (c, c + 3, b"")]
    assert replacement_hunks(DATA, spans) == [
        Hunk(
            2,
            2,
            "2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
            "2\n3\n4\nfive\nFIVE\n6\n7\n8\nnine\n10\n11\n12\n",
        ),
        Hunk(15, 16, "15\n16\n17\n18\n19\n20\n", "15\n16\n17\n19\n20\n"),
    ]


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
