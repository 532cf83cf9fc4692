"""Message ids and tool names over the wire: the official ACP SDK client drives the model
driver (the scripted endpoint) in process; every message it reads is checked against the
stable schema (``messageId`` and the tool call's ``name`` are stable fields), and against the
unstable one too where it says so."""

from __future__ import annotations

from itertools import groupby
from pathlib import Path
from typing import Any

from acp.connection import StreamDirection, StreamEvent

from acp_sidecar.store import SessionStore
from tests.acp_schema import validate_agent_message
from tests.agent.model.fake_openai import Reply, ScriptedOpenAI, answer, say, stop, think
from tests.agent.model.fake_openai import tool_call as model_call
from tests.fakes import AllowingEditor
from tests.in_process import sdk_served, serving
from tests.sdk import new_session, prompt

CHUNKS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")


class Unstable:
    """Checks every update the sidecar sends against the unstable schema as well."""

    def __init__(self) -> None:
        self.checked = 0

    def __call__(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction is StreamDirection.INCOMING and message.get("method"):
            validate_agent_message(message, unstable=True)
            self.checked += 1


def model(endpoint: ScriptedOpenAI) -> tuple[str, ...]:
    return ("--model", "test-model", "--base-url", endpoint.base_url)


def messages(updates: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Each message as (kind, id, whole text), in order; tool calls as (``tool_call``, id,
    tool name)."""
    shown: list[tuple[str, str, str]] = []
    for update in updates:
        kind = update["sessionUpdate"]
        if kind in CHUNKS:
            shown.append((kind, update["messageId"], update["content"]["text"]))
        elif kind == "tool_call":
            shown.append((kind, update["toolCallId"], update["name"]))
    return [
        (kind, key, "".join(text for _, _, text in group))
        for (kind, key), group in groupby(shown, key=lambda m: (m[0], m[1]))
    ]


async def test_ids_are_per_message_live_stored_and_replayed_unchanged(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    store = tmp_path / "store"
    env = {"OPENAI_API_KEY": "sk-test"}
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(
            Reply(
                [
                    *think("Let me ", "look."),
                    *say("I will ", "read it."),
                    model_call(0, "call_1", "read", '{"path": "a.txt"}'),
                    stop("tool_calls"),
                ]
            ),
            answer("It says ", "hello."),
        )
        unstable = Unstable()
        async with sdk_served(
            AllowingEditor(), *model(endpoint), store=store, env=env, observers=[unstable]
        ) as (connection, wire):
            session = await new_session(connection, tmp_path)
            assert await prompt(connection, session, "read a.txt") == "end_turn"
            live = list(wire.updates)
        assert unstable.checked >= len(live)

    said = messages(live)
    assert [(kind, text) for kind, _, text in said] == [
        ("user_message_chunk", "read a.txt"),  # the prompt, echoed first
        ("agent_thought_chunk", "Let me look."),
        ("agent_message_chunk", "I will read it."),
        ("tool_call", "read"),
        ("agent_message_chunk", "It says hello."),
    ]
    message_ids = [key for kind, key, _ in said if kind != "tool_call"]
    assert len(set(message_ids)) == 4  # prompt, thought, reply and the text after the call
    chunks = [u for u in live if u["sessionUpdate"] in CHUNKS]
    assert len(chunks) == 7  # two chunks each of thought and texts: grouped under one id

    with SessionStore(store).open_log(session) as log:
        stored = [getattr(record, "message_id", None) for record in log]
    assert [i for i in stored if i is not None] == message_ids

    for _ in range(2):  # a load replays the same messages under the same ids, every time
        async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
            await connection.load_session(cwd=str(tmp_path), session_id=session, mcp_servers=[])
            assert messages(wire.updates) == said


async def test_a_log_written_before_ids_replays_under_the_same_ids_on_every_load(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    with SessionStore(store).create("old-session", str(tmp_path)) as writer:  # the old way
        writer.user_message([{"type": "text", "text": "first"}])
        writer.agent_thought("hm")
        writer.agent_text("one")
        writer.end_turn("end_turn")
        writer.user_message([{"type": "text", "text": "second"}])
        writer.agent_text("two")
        writer.end_turn("end_turn")
    loads = []
    for _ in range(2):
        async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
            await connection.load_session(
                cwd=str(tmp_path), session_id="old-session", mcp_servers=[]
            )
            loads.append(messages(wire.updates))
    assert loads[0] == loads[1]
    assert [(kind, text) for kind, _, text in loads[0]] == [
        ("user_message_chunk", "first"),
        ("agent_thought_chunk", "hm"),
        ("agent_message_chunk", "one"),
        ("user_message_chunk", "second"),
        ("agent_message_chunk", "two"),
    ]
    assert len({key for _, key, _ in loads[0]}) == 5


async def test_a_message_id_the_client_puts_on_its_prompt_is_ignored(tmp_path: Path) -> None:
    async with serving("--store", str(tmp_path / "store")) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        params = {
            "sessionId": session,
            "prompt": [{"type": "text", "text": "hello?"}],
            "messageId": "the-clients-own",
        }
        answered = await wire.next_response(await wire.send_request("session/prompt", params))
        assert answered["result"]["stopReason"] == "end_turn"
        echoes = [
            u["params"]["update"]
            for u in wire.updates
            if u["params"]["update"]["sessionUpdate"] == "user_message_chunk"
        ]
        assert len(echoes) == 1 and echoes[0]["content"]["text"] == "hello?"
        assert echoes[0]["messageId"] not in (None, "the-clients-own")
