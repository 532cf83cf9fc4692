"""The Python engine's line splitter: whole lines in order, over-long lines cut, any chunking."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.tools.builtin.search import grep_engine as search_module
from acp_sidecar.tools.builtin.search.grep_engine import _line_blocks

CAP = 8


def expected_lines(data: bytes) -> list[tuple[bytes, bool]]:
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return [(line[:CAP], len(line) > CAP) for line in lines]


def split_blocks(blocks: list[tuple[bytes, bool]]) -> list[tuple[bytes, bool]]:
    lines: list[tuple[bytes, bool]] = []
    for block, cut in blocks:
        if cut:
            assert b"\n" not in block and len(block) == CAP
            lines.append((block, True))
            continue
        parts = block.split(b"\n")
        if parts[-1] == b"":
            parts.pop()
        lines += [(part, False) for part in parts]
    return lines


@given(
    data=st.lists(st.sampled_from([b"a", b"b", b"\n", b"\n\n", b"x" * 20]), max_size=40),
    sizes=st.lists(st.integers(min_value=1, max_value=CAP), min_size=1, max_size=10),
)
def test_blocks_hold_every_line_in_order_with_long_lines_cut(
    data: list[bytes], sizes: list[int]
) -> None:
    content = b"".join(data)
    chunks, position, index = [], 0, 0
    while position < len(content):
        size = sizes[index % len(sizes)]
        chunks.append(content[position : position + size])
        position, index = position + size, index + 1
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_module, "MAX_LINE_BYTES", CAP)
        blocks = list(_line_blocks(chunks))
    # A cut line is marked as cut; the lines that fit come back whole.
    assert split_blocks(blocks) == expected_lines(content), (chunks, blocks)
