"""Tool cards over v2, in process with the console driver: one ``tool_call_update`` creates each
card and later ones patch it, a diff goes out in v2's form (its patch turns the old text into
the new), and a bash card is a v2 terminal (announced first, its output base64 chunks, its exit
status before the card's last patch). Every message is judged by the v2 schema.

Spec: the vendored ``tests/fixtures/acp/v2/schema.json`` (``ToolCallUpdate``, ``Diff``,
``DiffPatchFormat``, ``TerminalUpdate``, ``TerminalOutputChunk``).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from tests.conformance.v2.patches import apply_patch
from tests.conformance.v2.test_prompt_lifecycle import prompt, until_idle, v2_session
from tests.server.wire import WireClient


async def run(client: WireClient, session_id: str, text: str) -> list[dict[str, Any]]:
    await client.result("session/prompt", prompt(session_id, text))
    updates = await until_idle(client, session_id)
    assert updates[-1]["stopReason"] == "end_turn", updates[-1]
    return updates


async def auto(client: WireClient, session_id: str) -> None:
    params = {"sessionId": session_id, "configId": "mode", "type": "id", "value": "auto"}
    await client.result("session/set_config_option", params)


def cards(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == "tool_call_update"]


def folded(updates: list[dict[str, Any]]) -> dict[str, Any]:
    """The one card of ``updates`` as a client holds it: each patch's fields replace."""
    card: dict[str, Any] = {}
    for update in cards(updates):
        assert card.get("toolCallId", update["toolCallId"]) == update["toolCallId"]
        card.update(update)
    return card


async def test_a_write_creates_its_card_and_patches_it_with_a_v2_diff(tmp_path: Path) -> None:
    args = json.dumps({"path": "new.txt", "content": "one\ntwo\n"})
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        await auto(client, session_id)
        updates = await run(client, session_id, f"/write {args}")
    first = cards(updates)[0]
    assert first["name"] == "write" and first["status"] == "pending" and first["title"]
    card = folded(updates)
    assert card["status"] == "completed"
    (diff,) = [c for c in card["content"] if c["type"] == "diff"]
    path = str(tmp_path / "new.txt")
    assert diff["changes"] == [{"operation": "add", "path": path, "fileType": "text"}]
    assert diff["patch"]["format"] == "git_patch"
    assert apply_patch(None, diff["patch"]["text"]) == "one\ntwo\n"
    assert "_meta" not in card or "terminal_info" not in card["_meta"]


async def test_an_edit_is_a_modify_whose_patch_gives_the_new_text(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\ngamma")
    args = json.dumps({"path": "notes.txt", "old_string": "beta", "new_string": "BETA"})
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        await auto(client, session_id)
        updates = await run(client, session_id, f"/edit {args}")
    card = folded(updates)
    assert card["status"] == "completed"
    (diff,) = [c for c in card["content"] if c["type"] == "diff"]
    assert diff["changes"][0]["operation"] == "modify"
    assert apply_patch("alpha\nbeta\ngamma", diff["patch"]["text"]) == "alpha\nBETA\ngamma"


async def test_bash_is_a_v2_terminal_announced_before_its_card(tmp_path: Path) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        await auto(client, session_id)
        updates = await run(client, session_id, "!echo hi; exit 3")
    kinds = [u["sessionUpdate"] for u in updates]
    announced = kinds.index("terminal_update")
    assert announced < kinds.index("tool_call_update")
    terminal = updates[announced]
    assert terminal["cwd"] == str(tmp_path)
    terminal_id = terminal["terminalId"]
    card = folded(updates)
    assert {"type": "terminal", "terminalId": terminal_id} in card["content"]
    assert card["status"] == "failed"  # a non-zero exit, as over v1
    output = b"".join(
        base64.b64decode(u["data"])
        for u in updates
        if u["sessionUpdate"] == "terminal_output_chunk" and u["terminalId"] == terminal_id
    )
    assert output.decode() == "hi\n"
    ended = [u for u in updates if u["sessionUpdate"] == "terminal_update" and "exitStatus" in u]
    assert [u["exitStatus"] for u in ended] == [{"exitCode": 3}]
    last_patch = max(i for i, k in enumerate(kinds) if k == "tool_call_update")
    assert updates.index(ended[0]) < last_patch
    assert all("terminal_output" not in u.get("_meta", {}) for u in updates)


async def test_grep_is_a_generic_card(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("needle here\n")
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        updates = await run(client, session_id, "/grep needle")  # read-only: never asked
    card = folded(updates)
    assert card["name"] == "grep" and card["status"] == "completed"
    text = json.dumps(card["content"])
    assert "a.txt" in text


async def test_a_checklist_is_a_v2_plan_update_and_emptied_has_no_entries(tmp_path: Path) -> None:
    entries = [
        {"content": "look", "priority": "high", "status": "in_progress"},
        {"content": "fix", "priority": "medium", "status": "pending"},
    ]
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        made = await run(client, session_id, "/plan " + json.dumps({"entries": entries}))
        emptied = await run(client, session_id, "/plan " + json.dumps({"entries": []}))
    (plan,) = [u for u in made if u["sessionUpdate"] == "plan_update"]
    assert plan["plan"] == {"type": "items", "planId": "checklist", "entries": entries}
    assert folded(made)["status"] == "completed"
    (empty,) = [u for u in emptied if u["sessionUpdate"] == "plan_update"]
    assert empty["plan"] == {"type": "items", "planId": "checklist", "entries": []}
