"""Audio, resource links and embedded resources become the matching ACP content blocks on a
card, live and on replay, and every update is valid ACP."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from acp_sidecar.bridge.cards import call_start, result_update, wire_block
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.replay import replay_updates
from acp_sidecar.protocol import SessionNotification, to_wire
from acp_sidecar.store import HeaderRecord, ToolCallRecord, ToolResultRecord
from acp_sidecar.store.codec import decode_line, encode_record
from acp_sidecar.tools import GenericCallView, GenericResultView, ToolResult
from acp_sidecar.tools.content import (
    AudioContent,
    BlobResource,
    ContentBlock,
    EmbeddedResourceContent,
    ImageContent,
    ResourceLinkContent,
    TextContent,
    TextResource,
    content_to_json,
)
from acp_sidecar.tools.result import ToolExecutionResult
from tests.acp_schema import validate_agent_message

BLOCKS: list[ContentBlock] = [
    TextContent("text"),
    ImageContent("iVBORw0KGgo=", "image/png"),
    AudioContent("UklGRg==", "audio/wav"),
    ResourceLinkContent("file:///w/a.py", "a.py", "A", "the a module", "text/x-python", 12),
    ResourceLinkContent("https://example.com/x", "x"),
    EmbeddedResourceContent(TextResource("file:///w/b.txt", "b\n", "text/plain")),
    EmbeddedResourceContent(TextResource("file:///w/c.txt", "c")),
    EmbeddedResourceContent(BlobResource("mem://blob", "AAEC", "application/octet-stream")),
    EmbeddedResourceContent(BlobResource("mem://bare", "AA==")),
]


def wire(update: Any) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": to_wire(SessionNotification(session_id="s", update=update)),
    }
    validate_agent_message(message)
    return message["params"]["update"]  # type: ignore[no-any-return]


def test_each_block_is_the_acp_block_of_the_same_shape() -> None:
    # The tool's JSON form was made to match ACP's: the wire block is the same object.
    for block in BLOCKS:
        assert to_wire(wire_block(block)) == content_to_json(block)


def test_a_result_card_carries_every_kind() -> None:
    ctx = CardContext(cwd="/w")
    view = GenericCallView(title="t")
    for is_error in (False, True):
        outcome = ToolResult(content=BLOCKS, is_error=is_error)
        update = wire(result_update("c1", view, None, outcome, ctx))
        assert update["status"] == ("failed" if is_error else "completed")
        assert [c["content"] for c in update["content"]] == [content_to_json(b) for b in BLOCKS]
        shown = GenericResultView(content=BLOCKS[2:4])
        update = wire(result_update("c1", view, shown, outcome, ctx))
        assert [c["content"]["type"] for c in update["content"]] == ["audio", "resource_link"]
    start = wire(call_start("c1", GenericCallView(title="t", content=BLOCKS), ctx))
    assert [c["content"] for c in start["content"]] == [content_to_json(b) for b in BLOCKS]


def test_a_stored_result_replays_the_same_blocks() -> None:
    result = ToolExecutionResult(call_id="c1", content=BLOCKS, is_error=False)
    records = [
        decode_line(encode_record(ToolCallRecord(call_id="c1", name="gone", arguments={"q": 1}))),
        decode_line(encode_record(ToolResultRecord(result=result))),
    ]
    header = HeaderRecord(session_id="s", cwd="/w", created_at=datetime.now(UTC), mode="ask")
    updates = [
        wire(u)
        for u in replay_updates(header, records, lambda name: None, CardContext(cwd="/w"))
        if u.session_update in ("tool_call", "tool_call_update")
    ]
    start, final = updates
    assert start["title"] == "gone" and start["rawInput"] == {"q": 1}
    assert [c["content"] for c in final["content"]] == [content_to_json(b) for b in BLOCKS]
