"""Permission dialogs over v2, in process with the console driver in the default ``ask`` mode:
``session/request_permission`` names its subject (a ``bash`` call's command, any other call's
card in v2's form), the session is ``requires_action`` while it is open, ``running`` once a
choice comes back, and ``idle`` ``cancelled`` when the dialog is cancelled. Every message is
judged by the v2 schema.

Spec: the vendored ``tests/fixtures/acp/v2/schema.json`` (``RequestPermissionRequest``,
``RequestPermissionSubject``, ``RequiresActionStateUpdate``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conformance.v2.test_prompt_lifecycle import (
    kinds,
    prompt,
    until_idle,
    v2_session,
)
from tests.server.wire import WireClient


async def asked(client: WireClient, session_id: str, text: str) -> dict[str, Any]:
    """Prompt, then read to the turn's dialog (the updates before it are kept)."""
    await client.result("session/prompt", prompt(session_id, text))
    request = await client.next_agent_request()
    assert request["method"] == "session/request_permission"
    return request


def states_around(updates: list[dict[str, Any]]) -> list[str]:
    return [k for k in kinds(updates) if k in {"running", "requires_action", "idle"}]


async def test_a_write_asks_about_its_card_and_runs_once_allowed(tmp_path: Path) -> None:
    args = json.dumps({"path": "new.txt", "content": "x\n"})
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        request = await asked(client, session_id, f"/write {args}")
        before = list(client.updates)
        params = request["params"]
        allow = next(o for o in params["options"] if o["kind"] == "allow_once")
        await client.respond(request["id"], {"outcome": {"outcome": "selected", **allow_id(allow)}})
        updates = await until_idle(client, session_id)
    assert params["sessionId"] == session_id and params["title"]
    subject = params["subject"]
    assert subject["type"] == "tool_call"
    card = subject["toolCall"]
    assert card["status"] == "pending" and card["toolCallId"]
    (diff,) = [c for c in card["content"] if c["type"] == "diff"]
    assert diff["changes"][0]["operation"] == "add"
    assert [u["params"]["update"].get("state") for u in before][-1] == "requires_action"
    assert states_around(updates) == ["running", "requires_action", "running", "idle"]
    assert updates[-1]["stopReason"] == "end_turn"
    assert (tmp_path / "new.txt").read_text() == "x\n"


def allow_id(option: dict[str, Any]) -> dict[str, str]:
    return {"optionId": option["optionId"]}


async def test_bash_asks_about_its_command_and_a_rejection_keeps_it_from_running(
    tmp_path: Path,
) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        request = await asked(client, session_id, "!touch rejected.txt")
        params = request["params"]
        reject = next(o for o in params["options"] if o["kind"] == "reject_once")
        await client.respond(
            request["id"], {"outcome": {"outcome": "selected", **allow_id(reject)}}
        )
        updates = await until_idle(client, session_id)
    subject = params["subject"]
    assert subject["type"] == "command"
    assert subject["command"] == "touch rejected.txt"
    assert subject["cwd"] == str(tmp_path)
    assert subject["toolCallId"] and subject["terminalId"]
    announced = [u for u in client.received if is_terminal_update(u, subject["terminalId"])]
    assert announced, "the terminal the subject names was announced"
    assert not (tmp_path / "rejected.txt").exists()
    assert updates[-1]["state"] == "idle"
    # The card shows the refusal above a terminal that never ran: marked over, how unknown.
    over = {"sessionUpdate": "terminal_update", "terminalId": subject["terminalId"]}
    assert {**over, "exitStatus": {}} in updates


def is_terminal_update(message: dict[str, Any], terminal_id: str) -> bool:
    if message.get("method") != "session/update":
        return False
    update = message["params"]["update"]
    return bool(
        update["sessionUpdate"] == "terminal_update" and update["terminalId"] == terminal_id
    )


async def test_a_cancelled_dialog_ends_the_turn_idle_cancelled(tmp_path: Path) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        request = await asked(client, session_id, "!touch never.txt")
        await client.respond(request["id"], {"outcome": {"outcome": "cancelled"}})
        updates = await until_idle(client, session_id)
    order = states_around(updates)
    assert order[-1] == "idle" and "running" not in order[order.index("requires_action") :]
    assert updates[-1]["stopReason"] == "cancelled"
    assert not (tmp_path / "never.txt").exists()
