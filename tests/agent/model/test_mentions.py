"""What the model is sent of an ``@``-mention: the file's content, read as ``read`` reads it.

Found with real clients: Zed-style ``[text "explain this", resource_link]`` reached the model
as ``explain this[@ctx.txt](file://…)`` — glued, and without the file. Driven over the wire
(in process) against the scripted endpoint; the request bodies are what is checked.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from tests.agent.model.fake_openai import ScriptedOpenAI, answer
from tests.agent.model.harness import assert_well_formed
from tests.server.wire import WireClient, served


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "ctx.txt").write_text("the answer is 42\n")
    (root / "blob.bin").write_bytes(b"\x00\x01binary")
    return root


def server(endpoint: ScriptedOpenAI, store: Path) -> AcpServer:
    config = ModelConfig(
        model="test-model", base_url=endpoint.base_url, api_key="sk-test", max_retries=0
    )
    tools = ToolsProvider(entry_points=False)
    return AcpServer(
        lambda: ModelDriver(config, lambda: tools.registry),
        tools=tools,
        store=lambda: SessionStore(store),
    )


@pytest.fixture
async def wire(
    endpoint: ScriptedOpenAI, workspace: Path, tmp_path: Path
) -> AsyncIterator[tuple[WireClient, str]]:
    async with served(server(endpoint, tmp_path / "store")) as (client, _server):
        await client.initialize()
        yield client, await client.new_session(str(workspace))


async def run(wire: tuple[WireClient, str], *blocks: Any) -> list[dict[str, Any]]:
    """One prompt; the cards it drew (each call's first update merged with its last)."""
    client, session = wire
    client.updates.clear()
    msg_id = await client.send_request(
        "session/prompt", {"sessionId": session, "prompt": list(blocks)}
    )
    assert (await client.next_response(msg_id))["result"]["stopReason"] == "end_turn"
    calls: dict[str, dict[str, Any]] = {}
    for message in client.updates:
        update = message["params"]["update"]
        if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
            calls.setdefault(update["toolCallId"], {}).update(update)
    return list(calls.values())


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def link(path: Path) -> dict[str, Any]:
    return {"type": "resource_link", "name": path.name, "uri": path.as_uri()}


def opened(messages: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    """The calls the messages say were made, with each one's result text."""
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    return [
        (json.loads(call["function"]["arguments"]), results[call["id"]])
        for m in messages
        if m["role"] == "assistant"
        for call in m.get("tool_calls", ())
    ]


async def test_a_linked_file_reaches_the_model_and_again_from_the_log(
    wire: tuple[WireClient, str], endpoint: ScriptedOpenAI, workspace: Path
) -> None:
    endpoint.script(answer("It says 42."), answer("Yes."))
    [card] = await run(wire, text("explain this"), link(workspace / "ctx.txt"))
    assert card["kind"] == "read" and card["status"] == "completed"

    messages = endpoint.requests[-1].messages
    assert_well_formed(messages)
    uri = (workspace / "ctx.txt").as_uri()
    assert messages[1] == {"role": "user", "content": f"explain this [@ctx.txt]({uri})"}
    [(arguments, result)] = opened(messages)
    assert arguments == {"path": str(workspace / "ctx.txt")}
    assert "the answer is 42" in result
    assert messages[2]["tool_calls"][0]["function"]["name"] == "read"

    # The next turn reads the same from the log: the link, the call and its result.
    assert await run(wire, text("sure?")) == []
    again = endpoint.requests[-1].messages
    assert_well_formed(again)
    assert again[1:4] == messages[1:4]


async def test_a_file_the_editor_embedded_is_not_read_again(
    wire: tuple[WireClient, str], endpoint: ScriptedOpenAI, workspace: Path
) -> None:
    endpoint.script(answer("42."))
    uri = (workspace / "ctx.txt").as_uri()
    resource = {"type": "resource", "resource": {"uri": uri, "text": "the editor's copy\n"}}
    assert await run(wire, text("explain @ctx.txt"), resource) == []  # Toad's shape
    [_system, user] = endpoint.requests[-1].messages
    assert user["content"] == (
        f'explain @ctx.txt\n<context uri="{uri}">\nthe editor\'s copy\n</context>\n'
    )


async def test_a_typed_mention_is_read_for_a_text_client(
    wire: tuple[WireClient, str], endpoint: ScriptedOpenAI, workspace: Path
) -> None:
    endpoint.script(answer("42."), answer("Sent."))
    [card] = await run(wire, text("what does @ctx.txt say?"))
    assert card["rawInput"] == {"path": str(workspace / "ctx.txt")}
    [(_arguments, result)] = opened(endpoint.requests[-1].messages)
    assert "the answer is 42" in result

    plain = "mail user@example.com about `@ctx.txt`, and @nobody"
    assert await run(wire, text(plain)) == []
    assert endpoint.requests[-1].messages[-1] == {"role": "user", "content": plain}


async def test_a_mention_that_cannot_be_read_is_an_error_the_model_and_the_user_see(
    wire: tuple[WireClient, str], endpoint: ScriptedOpenAI, workspace: Path
) -> None:
    endpoint.script(answer("I cannot see them."))
    outside = workspace.parent / "secret.txt"
    outside.write_text("secret\n")
    cards = await run(
        wire,
        text("compare"),
        link(workspace / "missing.txt"),
        link(workspace / "blob.bin"),
        link(outside),
    )
    assert [card["status"] for card in cards] == ["failed", "failed", "failed"]
    messages = endpoint.requests[-1].messages
    assert_well_formed(messages)
    results = [result for _arguments, result in opened(messages)]
    assert results[0].endswith("missing.txt does not exist.")
    assert "blob.bin is a binary file" in results[1]
    assert "is outside the workspace" in results[2]


async def test_a_long_file_is_read_as_read_reads_it_and_many_mentions_are_capped(
    wire: tuple[WireClient, str], endpoint: ScriptedOpenAI, workspace: Path
) -> None:
    (workspace / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    endpoint.script(answer("Long."), answer("Many."))
    [card] = await run(wire, text("summarise"), link(workspace / "big.txt"))
    [(_arguments, result)] = opened(endpoint.requests[-1].messages)
    assert "Lines 1–2000 of 5000" in result and "line 2001\n" not in result

    for n in range(20):
        (workspace / f"f{n}.txt").write_text(f"file {n}\n")
    links = [link(workspace / f"f{n}.txt") for n in range(20)]
    cards = await run(wire, text("all of these"), *links)
    assert len(cards) == 16
    client, _session = wire
    said = [
        u["params"]["update"]["content"]["text"]
        for u in client.updates
        if u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert said[0] == (
        "This prompt mentions 20 files; the first 16 were opened for the model, which sees "
        "the others' names only."
    )
    assert len(opened(endpoint.requests[-1].messages)) == 1 + 16
