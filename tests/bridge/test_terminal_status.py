"""A command's card ends ``failed`` when it exits non-zero or is killed, ``completed`` when it
exits 0; the exit pill (or console exit line) still says which code or signal.

Found with real clients: a failing or timed-out command showed a green tick. Driven as found:
the official ACP SDK client runs the built-in ``bash`` tool (the sidecar in process), with
and without the terminal-card capability.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp.schema import ClientCapabilities

from acp_sidecar.tools import TerminalResultView
from tests.fakes import AllowingEditor
from tests.in_process import sdk_served
from tests.sdk import command, new_session, prompt


@pytest.mark.parametrize("terminal", [True, False])
async def test_non_zero_exits_and_kills_fail_the_card(tmp_path: Path, terminal: bool) -> None:
    async with sdk_served(
        AllowingEditor(),
        store=tmp_path / ".store",
        capabilities=ClientCapabilities(field_meta={"terminal_output": terminal}),
    ) as (connection, wire):
        session = await new_session(connection, tmp_path, mode="auto")

        async def final(text: str) -> dict[str, Any]:
            wire.cards()
            assert await prompt(connection, session, text) == "end_turn"
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

        slow = await final(command("bash", command="sleep 30", timeout_ms=300))
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
