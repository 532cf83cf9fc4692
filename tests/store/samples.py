"""Sample values the store tests share: a session's working directory and creation time, and
two tool results (one that succeeded with text, an image, context and meta; one that failed).
"""

from __future__ import annotations

from datetime import UTC, datetime

from acp_sidecar.tools.content import ImageContent, TextContent
from acp_sidecar.tools.result import ToolErrorInfo, ToolExecutionResult

CWD = "/work/project"
CREATED = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def ok_result(call_id: str = "call-1") -> ToolExecutionResult:
    return ToolExecutionResult(
        call_id=call_id,
        content=[TextContent("a = 1\n"), ImageContent(data="aGk=", mime_type="image/png")],
        is_error=False,
        additional_context={"note": "more"},
        meta={"exit_code": 0, "output": "ok\n", "lines": [1, 2.5, None, True]},
    )


def failed_result(call_id: str = "call-2") -> ToolExecutionResult:
    return ToolExecutionResult(
        call_id=call_id,
        content=[TextContent("permission denied")],
        is_error=True,
        error=ToolErrorInfo(name="ToolDeniedError", code="denied"),
    )
