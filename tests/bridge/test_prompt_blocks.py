"""A stored prompt's blocks decode on replay as ``from_wire`` decodes them: the plain text
block's short cut included, and a block it cannot decode skipped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.bridge.replay import _prompt_blocks
from acp_sidecar.protocol.content import ContentBlock
from acp_sidecar.protocol.converter import from_wire, to_wire
from acp_sidecar.protocol.errors import ProtocolParamsError
from acp_sidecar.tools.json_values import freeze_json, thaw


def general(content: list[Any]) -> Iterator[Any]:
    for block in content:
        try:
            yield from_wire(thaw(block), ContentBlock)
        except ProtocolParamsError:
            continue


texts = st.text(max_size=8) | st.sampled_from(["", "ü\u202e", "step 1: continue"])
values = texts | st.none() | st.integers() | st.lists(st.integers(), max_size=2)
blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": texts}),
    st.fixed_dictionaries({"type": st.just("text"), "text": values}),
    st.fixed_dictionaries({"text": texts}),
    st.fixed_dictionaries({"type": st.sampled_from(["text", "Text", "image", 3]), "text": texts}),
    st.fixed_dictionaries(
        {"type": st.just("text"), "text": texts},
        optional={"annotations": st.just({"priority": 1}), "_meta": st.just({"k": "v"})},
    ),
    st.fixed_dictionaries(
        {"type": st.just("image"), "data": st.just("aGk="), "mimeType": st.just("image/png")}
    ),
    st.dictionaries(st.sampled_from(["type", "text", "x"]), values, max_size=3),
)


@given(st.lists(blocks, max_size=4))
def test_prompt_blocks_decode_as_from_wire(content: list[Any]) -> None:
    stored = [freeze_json(block) for block in content]
    fast = [to_wire(block) for block in _prompt_blocks(stored)]
    assert fast == [to_wire(block) for block in general(stored)]
