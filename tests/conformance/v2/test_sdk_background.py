"""The official TypeScript SDK's experimental v2 client (2.4.0) drives a spawned sidecar with
``--acp-v2`` through background work: a kept ``bash`` job listed and stopped with
``ActiveSession.cancelTerminal``, a running ``bash`` call stopped with ``cancelToolCall``. The
SDK sends neither cancel unless the sidecar advertised it (it refuses one it was not told of),
so the cancels succeeding pins the advertising; every line the sidecar wrote is judged by the
v2 schema here too."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.acp_schema import validate_agent_message
from tests.conformance.v2.node_peer import run_peer


@pytest.mark.process  # node runs the SDK's client, which spawns the sidecar
async def test_the_typescript_v2_client_cancels_a_terminal_and_a_tool_call(tmp_path: Path) -> None:
    sidecar = [sys.executable, "-m", "acp_sidecar", "--acp-v2"]
    seen = await run_peer("background_peer.mjs", sidecar, tmp_path)
    terminal_id = seen["terminalId"]
    assert seen["listed"] == [{"type": "terminal", "terminalId": terminal_id}]
    assert seen["advertisedTerminal"] is True
    assert seen["refused"] == 'TypeError: Terminal "not-a-terminal" does not advertise cancel'
    assert seen["terminalCancelled"] == {}
    (ended,) = [u for u in seen["afterTerminal"] if "exitStatus" in u]
    assert ended["exitStatus"] == {"signal": "SIGTERM"} and ended["capabilities"] is None
    assert seen["terminalStillCancellable"] is False

    call_id = seen["toolCallId"]
    assert call_id is not None
    assert seen["toolCallCancelled"] == {}
    final = [u for u in seen["afterToolCall"] if u["sessionUpdate"] == "tool_call_update"][-1]
    assert final["toolCallId"] == call_id
    assert final["status"] == "cancelled" and final["capabilities"] is None
    assert seen["afterToolCall"][-1]["stopReason"] == "end_turn"
    assert seen["toolCallStillCancellable"] is False
    assert seen["closed"] == {}

    lines = [json.loads(line) for line in seen["written"].splitlines()]
    for message in lines:
        if "method" in message:
            validate_agent_message(message, version=2)
    updates = [m for m in lines if m.get("method") == "session/update"]
    kinds = {m["params"]["update"]["sessionUpdate"] for m in updates}
    assert {"state_update", "terminal_update", "terminal_output_chunk"} <= kinds
