"""Three-state patch fields (v2's omitted / ``null`` / value): a field defaulting to
``UNSET`` is omitted while unset, sent as ``null`` when ``None``, encoded when set; the other
fields keep their rules."""

from __future__ import annotations

from acp_sidecar.protocol.encoding import to_wire
from acp_sidecar.protocol.v2.tool_call import (
    CancelControl,
    TerminalCapabilities,
    TerminalUpdate,
    ToolCallCapabilities,
    ToolCallUpdate,
)
from tests.acp_schema import validate_agent_message


def sent(update: object) -> dict[str, object]:
    wire = to_wire(update)
    notification = {"sessionId": "s", "update": wire}
    validate_agent_message(
        {"jsonrpc": "2.0", "method": "session/update", "params": notification}, version=2
    )
    return wire


def test_unset_is_omitted_none_is_null_and_a_value_is_encoded() -> None:
    assert sent(TerminalUpdate(terminal_id="t")) == {
        "sessionUpdate": "terminal_update",
        "terminalId": "t",
    }
    assert sent(TerminalUpdate(terminal_id="t", capabilities=None))["capabilities"] is None
    cancel = TerminalCapabilities(cancel=CancelControl())
    assert sent(TerminalUpdate(terminal_id="t", capabilities=cancel))["capabilities"] == {
        "cancel": {}
    }


def test_a_card_patch_clears_its_capabilities_and_keeps_other_omissions() -> None:
    wire = sent(ToolCallUpdate(tool_call_id="c", status="cancelled", capabilities=None))
    assert wire == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "cancelled",
        "capabilities": None,
    }
    cancel = ToolCallCapabilities(cancel=CancelControl())
    assert sent(ToolCallUpdate(tool_call_id="c", capabilities=cancel)) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "capabilities": {"cancel": {}},
    }
