"""A command's card ends ``failed`` when it exits non-zero or is killed, ``completed`` when it
exits 0; the exit pill (or console exit line) still says which code or signal.

Found with real clients: a failing or timed-out command showed a green tick. Driven as found:
the official ACP SDK client spawns ``acp-sidecar`` and runs the built-in ``bash`` tool, with
and without the terminal-card capability.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import ClientCapabilities

from acp_sidecar.tools import TerminalResultView
from tests.agent.test_permission_cards import Editor, Wire

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("terminal", [True, False])
async def test_non_zero_exits_and_kills_fail_the_card(tmp_path: Path, terminal: bool) -> None:
    wire = Wire()
    async with acp.spawn_agent_process(
        Editor(),
        sys.executable,
        "-m",
        "acp_sidecar",
        env={"PYTHONPATH": str(ROOT), "ACP_SIDECAR_STORE": str(tmp_path / ".store")},
        cwd=ROOT,
        observers=[wire],
    ) as (connection, _process):
        await connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(field_meta={"terminal_output": terminal}),
        )
        session = (await connection.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await connection.set_session_mode(session_id=session, mode_id="auto")

        async def final(text: str) -> dict[str, Any]:
            wire.cards()
            done = await connection.prompt(session_id=session, prompt=[acp.text_block(text)])
            assert done.stop_reason == "end_turn"
            return wire.cards()[-1]

        def exit_shown(card: dict[str, Any]) -> Any:
            if terminal:
                return card["_meta"]["terminal_exit"]
            return card["content"][0]["content"]["text"].rsplit("\n", 1)[-1]

        ok = await final("!echo fine")
        assert ok["status"] == "completed"
        assert exit_shown(ok) in ({"terminal_id": ok["toolCallId"], "exit_code": 0}, "Exit code: 0")

        bad = await final("!echo broken; exit 3")
        assert bad["status"] == "failed"
        assert exit_shown(bad) in (
            {"terminal_id": bad["toolCallId"], "exit_code": 3},
            "Exit code: 3",
        )

        slow = await final("/bash " + json.dumps({"command": "sleep 30", "timeout_ms": 300}))
        assert slow["status"] == "failed"
        assert exit_shown(slow) in (
            {"terminal_id": slow["toolCallId"], "signal": "SIGTERM"},
            "Terminated by signal SIGTERM",
        )


@pytest.mark.parametrize(
    ("exit_code", "signal", "succeeded"),
    [
        (0, None, True),
        (None, None, True),
        (1, None, False),
        (-1, None, False),
        (None, "SIGKILL", False),
        (0, "SIGTERM", False),
    ],
)
def test_command_succeeded(exit_code: int | None, signal: str | None, succeeded: bool) -> None:
    from acp_sidecar.bridge.cards import command_succeeded

    view = TerminalResultView(card="terminal", exit_code=exit_code, signal=signal)
    assert command_succeeded(view) is succeeded
