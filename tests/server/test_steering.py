"""``_session/steering`` through the official SDK client, in process: the model driver on the
scripted endpoint (steering during streaming, during a tool call, after the last step), an
idle session, ``promptRequired``, an unknown session, and the console. Every message the
sidecar writes is checked against the schema, the extension's answers against their pinned
shape (``tests/extensions.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import AllowedOutcome, RequestPermissionResponse

from acp_sidecar.agent.driver import DriverBase, Turn
from acp_sidecar.protocol import PromptCapabilities, StopReason
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from acp_sidecar.store.records import TurnEndRecord, UserMessageRecord
from tests.agent.model.fake_openai import Pause, Reply, ScriptedOpenAI, answer, calling, say, stop
from tests.agent.model.fake_openai import tool_call as model_call
from tests.extensions import check_steering_advertised, check_steering_answer
from tests.fakes import AllowingEditor
from tests.in_process import sdk_served
from tests.sdk import command, new_session, prompt
from tests.server.test_message_ids import messages, model
from tests.server.wire import served

ENV = {"OPENAI_API_KEY": "sk-test"}
HANG_GUARD = 20.0


class HeldEditor(AllowingEditor):
    """Allows every call, but holds each permission dialog open until ``release`` is set."""

    def __init__(self) -> None:
        self.dialog_open = asyncio.Event()
        self.release = asyncio.Event()

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        self.dialog_open.set()
        await self.release.wait()
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow_once")
        )


async def steer(connection: Any, session: str, text: str, **steering: str) -> str:
    """Steer ``text`` into ``session``; the answer's outcome (its shape checked)."""
    params: dict[str, Any] = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
    if steering:
        params["_meta"] = {"steering": steering}
    answer = await connection.ext_method("session/steering", params)
    check_steering_answer(answer)
    return str(answer["outcome"])


async def turns_ended(updates: list[dict[str, Any]], count: int) -> None:
    """Wait until ``count`` turns have ended (each sends one ``session_info_update``)."""

    async def ended() -> None:
        while sum(u["sessionUpdate"] == "session_info_update" for u in updates) < count:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(ended(), HANG_GUARD)


def stored(store: Path, session: str) -> list[tuple[str, str | None]]:
    """The session's prompts and turn ends, in log order: (text or ``end``, message id)."""
    with SessionStore(store).open_log(session) as log:
        return [
            (record.content[0]["text"], record.message_id)
            if isinstance(record, UserMessageRecord)
            else ("end", None)
            for record in log
            if isinstance(record, UserMessageRecord | TurnEndRecord)
        ]


async def replayed(store: Path, cwd: Path, session: str) -> list[tuple[str, str, str]]:
    async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
        await connection.load_session(cwd=str(cwd), session_id=session, mcp_servers=[])
        return messages(wire.updates)


async def test_steering_during_streaming_joins_after_the_response(tmp_path: Path) -> None:
    store = tmp_path / "store"
    pause = Pause()
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(
            Reply([*say("Working "), pause, *say("on it."), stop()]), answer("Noted: blue.")
        )
        async with sdk_served(AllowingEditor(), *model(endpoint), store=store, env=ENV) as (
            connection,
            wire,
        ):
            check_steering_advertised(acp_result(wire.initialized))
            session = await new_session(connection, tmp_path)
            turn = asyncio.create_task(prompt(connection, session, "paint it"))
            await asyncio.wait_for(pause.reached.wait(), HANG_GUARD)
            assert await steer(connection, session, "make it blue") == "injected"
            pause.release.set()
            assert await turn == "end_turn"
            live = messages(wire.updates)
    assert [(kind, text) for kind, _, text in live] == [
        ("user_message_chunk", "paint it"),
        ("agent_message_chunk", "Working on it."),
        ("user_message_chunk", "make it blue"),  # at the boundary: after the whole response
        ("agent_message_chunk", "Noted: blue."),
    ]
    assert len({key for _, key, _ in live}) == 4
    # The model read the steered prompt after its own response, in the same turn.
    assert endpoint.requests[1].messages[-3:] == [
        {"role": "user", "content": "paint it"},
        {"role": "assistant", "content": "Working on it."},
        {"role": "user", "content": "make it blue"},
    ]
    ids = [key for kind, key, _ in live if kind == "user_message_chunk"]
    assert stored(store, session) == [("paint it", ids[0]), ("make it blue", ids[1]), ("end", None)]
    assert await replayed(store, tmp_path, session) == live


async def test_steering_during_a_tool_call_joins_after_the_tool_batch(tmp_path: Path) -> None:
    store = tmp_path / "store"
    editor = HeldEditor()
    write = '{"path": "a.txt", "content": "x"}'
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(
            calling(model_call(0, "call_1", "write", write), text="Writing."), answer("Done.")
        )
        async with sdk_served(editor, *model(endpoint), store=store, env=ENV) as (
            connection,
            wire,
        ):
            session = await new_session(connection, tmp_path)
            turn = asyncio.create_task(prompt(connection, session, "write a.txt"))
            await asyncio.wait_for(editor.dialog_open.wait(), HANG_GUARD)  # the call runs
            assert await steer(connection, session, "then stop") == "injected"
            echoes = [u for u in wire.updates if u["sessionUpdate"] == "user_message_chunk"]
            assert len(echoes) == 1  # the prompt's own: the steer is not echoed yet
            editor.release.set()
            assert await turn == "end_turn"
            live = messages(wire.updates)
            statuses = [u.get("status") for u in wire.updates if "toolCallId" in u]
    assert [(kind, text) for kind, _, text in live] == [
        ("user_message_chunk", "write a.txt"),
        ("agent_message_chunk", "Writing."),
        ("tool_call", "write"),
        ("user_message_chunk", "then stop"),
        ("agent_message_chunk", "Done."),
    ]
    assert statuses[-1] == "completed"  # the card completed before the steered prompt
    assert (tmp_path / "a.txt").read_text() == "x"
    second = endpoint.requests[1].messages
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert second[-1] == {"role": "user", "content": "then stop"}
    assert await replayed(store, tmp_path, session) == live


class ClosesThenWaits(DriverBase):
    """Ends its first turn past its last step boundary, then waits for ``finish``."""

    steers = True
    prompt_capabilities = PromptCapabilities()

    def __init__(self) -> None:
        self.closed = asyncio.Event()
        self.finish = asyncio.Event()
        self.turns: list[str] = []

    async def run_turn(self, turn: Turn) -> StopReason:
        assert turn.steered is not None
        self.turns.append(getattr(turn.prompt[0], "text", ""))
        assert await turn.steered(True) == ()  # the last boundary: nothing joins after
        if len(self.turns) == 1:
            self.closed.set()
            await self.finish.wait()
        return "end_turn"


async def test_steering_after_the_last_step_starts_a_turn_once_it_ends() -> None:
    driver = ClosesThenWaits()
    async with served(AcpServer(lambda: driver, cancel_grace=0.3)) as (client, server):
        await client.initialize()
        session = await client.new_session()
        first = await client.start_prompt(session, "one")
        await asyncio.wait_for(driver.closed.wait(), HANG_GUARD)
        steering = await client.send_request(
            "_session/steering",
            {"sessionId": session, "prompt": [{"type": "text", "text": "two"}]},
        )
        # The steer waits for the turn, which still runs (past its last boundary).
        await asyncio.wait_for(_until(server.sessions[session].steering.locked), HANG_GUARD)
        assert server.sessions[session].running is not None
        driver.finish.set()
        answered = await client.next_response(first)
        assert answered["result"] == {"stopReason": "end_turn"}
        assert (await client.next_response(steering))["result"] == {"outcome": "startedNewTurn"}
        await asyncio.wait_for(_until(lambda: len(driver.turns) == 2), HANG_GUARD)
        assert driver.turns == ["one", "two"]


async def _until(done: Any) -> None:
    while not done():
        await asyncio.sleep(0.01)


async def test_an_idle_session_starts_a_turn_streamed_and_recorded(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(answer("Hello."))
        async with sdk_served(AllowingEditor(), *model(endpoint), store=store, env=ENV) as (
            connection,
            wire,
        ):
            session = await new_session(connection, tmp_path)
            assert await steer(connection, session, "hi") == "startedNewTurn"
            await turns_ended(wire.updates, 1)
            live = messages(wire.updates)
    assert [(kind, text) for kind, _, text in live] == [
        ("user_message_chunk", "hi"),
        ("agent_message_chunk", "Hello."),
    ]
    assert [text for text, _ in stored(store, session)] == ["hi", "end"]
    assert await replayed(store, tmp_path, session) == live


async def test_prompt_required_leaves_an_idle_session_alone(tmp_path: Path) -> None:
    async with (
        ScriptedOpenAI() as endpoint,
        sdk_served(AllowingEditor(), *model(endpoint), env=ENV) as (connection, wire),
    ):
        session = await new_session(connection, tmp_path)
        outcome = await steer(connection, session, "hi", idleBehavior="promptRequired")
        assert outcome == "promptRequired"
        assert not any(u["sessionUpdate"] == "user_message_chunk" for u in wire.updates)
    assert endpoint.requests == []


async def test_an_unknown_session_is_invalid_params(tmp_path: Path) -> None:
    async with sdk_served(AllowingEditor()) as (connection, _wire):
        with pytest.raises(acp.RequestError) as refused:
            await steer(connection, "no-such-session", "hi")
    assert refused.value.code == -32602


async def test_the_console_runs_a_prompt_steered_during_a_command_right_after_it(
    tmp_path: Path,
) -> None:
    editor = HeldEditor()
    async with sdk_served(editor) as (connection, wire):
        session = await new_session(connection, tmp_path)
        turn = asyncio.create_task(
            prompt(connection, session, command("write", path="a.txt", content="x"))
        )
        await asyncio.wait_for(editor.dialog_open.wait(), HANG_GUARD)
        steered = asyncio.create_task(steer(connection, session, command("read", path="a.txt")))
        await asyncio.sleep(0)  # it waits for the command: nothing is answered yet
        assert not steered.done()
        editor.release.set()
        assert await turn == "end_turn"
        assert await asyncio.wait_for(steered, HANG_GUARD) == "startedNewTurn"
        await turns_ended(wire.updates, 2)
        kinds = [u["sessionUpdate"] for u in wire.updates]
    echoes = [i for i, kind in enumerate(kinds) if kind == "user_message_chunk"]
    ends = [i for i, kind in enumerate(kinds) if kind == "session_info_update"]
    assert echoes[0] < ends[0] < echoes[1] < ends[1]  # a turn of its own, after the first
    cards = [u for u in wire.updates if u["sessionUpdate"] == "tool_call"]
    assert [card["name"] for card in cards] == ["write", "read"]


def acp_result(initialized: Any) -> dict[str, Any]:
    """The ``initialize`` answer as wire JSON."""
    return dict(initialized.model_dump(by_alias=True, exclude_none=True))


def test_the_extension_shapes_are_pinned() -> None:
    """The shapes the schema does not define, as the leading agents speak them."""
    from acp_sidecar.protocol import from_wire, to_wire
    from acp_sidecar.protocol.methods import EXTENSION_TYPES, METHOD_TO_TYPES
    from acp_sidecar.protocol.steering import SessionSteeringRequest, SessionSteeringResponse

    assert set(EXTENSION_TYPES) == {"_session/steering"}
    assert not set(EXTENSION_TYPES) & set(METHOD_TO_TYPES)
    wire = {
        "sessionId": "s",
        "prompt": [{"type": "text", "text": "hi"}],
        "_meta": {"steering": {"idleBehavior": "promptRequired"}},
    }
    request = from_wire(wire, SessionSteeringRequest)
    assert request.prompt_required
    assert to_wire(request) == wire
    assert not from_wire({"sessionId": "s", "prompt": []}, SessionSteeringRequest).prompt_required
    for outcome in ("injected", "startedNewTurn", "promptRequired", "failed"):
        answer = to_wire(SessionSteeringResponse(outcome=outcome))  # type: ignore[arg-type]
        assert answer == {"outcome": outcome}
        check_steering_answer(answer)
    for bad in ({"outcome": "queued"}, {}, {"outcome": "injected", "extra": 1}):
        with pytest.raises(AssertionError):
            check_steering_answer(bad)


def test_each_extension_handler_takes_the_connection_and_its_types() -> None:
    import inspect
    import typing

    from acp_sidecar.protocol.methods import EXTENSION_TYPES
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.handlers import EXTENSION_HANDLERS

    assert set(EXTENSION_HANDLERS) == set(EXTENSION_TYPES)
    for method, handler in EXTENSION_HANDLERS.items():
        hints = typing.get_type_hints(handler, localns={"Connection": Connection})
        assert inspect.iscoroutinefunction(handler), method
        assert hints["params"] is EXTENSION_TYPES[method].params, method
        assert hints["return"] is EXTENSION_TYPES[method].result, method
