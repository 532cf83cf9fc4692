"""A server's line is parsed the same whichever way its size sends it: validating the JSON
text at once (short lines) or parsing it to values first (long ones, which can then be cut
when they answer a tools/list)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.mcp.listing import MAX_TOOLS
from acp_sidecar.mcp.stdio import parse_line

scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
ids = st.integers() | st.text(max_size=5) | st.none() | st.booleans() | st.floats(allow_nan=False)
messages = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "1.0"])},
    optional={
        "id": ids,
        "method": st.text(max_size=8),
        "params": values,
        "result": values,
        "error": st.fixed_dictionaries(
            {"code": st.integers() | st.floats(allow_nan=False), "message": st.text(max_size=5)},
            optional={"data": values},
        ),
    },
)


def outcome(line: bytes, big: int) -> Any:
    parsed = parse_line(line, big=big)
    return "invalid" if isinstance(parsed, Exception) else parsed.message


@given(messages)
def test_a_line_parses_alike_short_or_long(message: dict[str, Any]) -> None:
    line = json.dumps(message).encode()
    assert outcome(line, big=len(line)) == outcome(line, big=0)


@given(st.binary(max_size=40) | st.text(max_size=40).map(str.encode))
def test_garbage_is_invalid_either_way(line: bytes) -> None:
    assert (outcome(line, big=len(line)) == "invalid") == (outcome(line, big=0) == "invalid")


def test_a_long_answer_to_a_listing_is_cut_one_past_the_bound() -> None:
    tools = [{"name": f"t{n}", "inputSchema": {"type": "object"}} for n in range(MAX_TOOLS + 50)]
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"tools": tools}}).encode()
    for listings, kept in (({7}, MAX_TOOLS + 1), ({8}, MAX_TOOLS + 50), (set(), MAX_TOOLS + 50)):
        parsed = parse_line(line, listings, big=0)
        assert not isinstance(parsed, Exception)
        assert len(parsed.message.result["tools"]) == kept  # type: ignore[union-attr]
    short = parse_line(line, {7}, big=len(line))  # a short line is never cut
    assert len(short.message.result["tools"]) == MAX_TOOLS + 50  # type: ignore[union-attr]
