"""Audio, resource links and embedded resources log and read back as they were."""

from __future__ import annotations

from acp_sidecar.store.codec import decode_line, encode_record
from acp_sidecar.store.records import ToolResultRecord
from acp_sidecar.tools.content import (
    AudioContent,
    BlobResource,
    EmbeddedResourceContent,
    ResourceLinkContent,
    TextResource,
)
from acp_sidecar.tools.result import ToolErrorInfo, ToolExecutionResult


def test_every_new_kind_survives_the_log() -> None:
    result = ToolExecutionResult(
        call_id="call-1",
        content=[
            AudioContent("UklGRg==", "audio/wav"),
            ResourceLinkContent("file:///w/a.py", "a.py", "A", "the a module", "text/x-python", 12),
            ResourceLinkContent("https://example.com/é", "bare"),
            EmbeddedResourceContent(TextResource("file:///w/b.txt", "b\u2028\n", "text/plain")),
            EmbeddedResourceContent(BlobResource("mem://blob", "AAEC")),
        ],
        is_error=True,
        error=ToolErrorInfo("McpToolError", "MCP_TOOL_ERROR"),
    )
    line = encode_record(ToolResultRecord(result=result))
    assert line.count(b"\n") == 1 and line.isascii()
    assert decode_line(line) == ToolResultRecord(result=result)
