"""``session/fork`` over the wire: answers checked against the unstable ACP schema, the fork's
log against its parent's, the fork used as any session, a fork taken mid-turn, a fork undoing
its parent's turns (their before-images shared with it)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest

from acp_sidecar.agent.driver import DriverBase, Turn
from acp_sidecar.protocol import (
    ForkSessionRequest,
    PromptCapabilities,
    StopReason,
    TextContentBlock,
    from_wire,
    to_wire,
)
from acp_sidecar.protocol.errors import INVALID_PARAMS
from acp_sidecar.protocol.methods import UNSTABLE_METHODS
from acp_sidecar.protocol.shapes import wire_name
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import (
    CompactionRecord,
    HistoryItem,
    SessionStore,
    ToolCallRecord,
)
from acp_sidecar.tools.content import TextContent
from acp_sidecar.tools.json_values import freeze_json
from acp_sidecar.tools.result import ToolExecutionResult
from tests.acp_schema import load_schema, validate_agent_message, validate_instance
from tests.drivers import chunk
from tests.protocol.samples import UNSTABLE_SAMPLES, UNSTABLE_TYPES, Sample, sample_id
from tests.sdk import command
from tests.server.wire import WireClient, served


def validate_unstable(instance: Any, name: str) -> None:
    """Raise unless ``instance`` is a valid ``name`` of the vendored unstable schema."""
    validate_instance(instance, name, unstable=True)


@asynccontextmanager
async def fork_served(server: AcpServer) -> AsyncIterator[tuple[WireClient, AcpServer]]:
    """:func:`served`, the answers to unstable methods checked against the unstable schema
    (the stable one has no such method)."""
    async with served(server) as (wire, _server):
        stable = wire.check

        def check(message: Any) -> None:
            method = wire.sent_methods.get(message.get("id")) if "method" not in message else None
            if method in UNSTABLE_METHODS:
                validate_agent_message(message, request_method=method, unstable=True)
            else:
                stable(message)

        wire.check = check  # type: ignore[method-assign]
        yield wire, _server


@pytest.mark.parametrize("sample", UNSTABLE_SAMPLES, ids=sample_id)
def test_unstable_samples_validate_against_the_unstable_schema(sample: Sample) -> None:
    kind = {"client_request": "Request", "agent_result": "Response"}[sample.kind]
    validate_unstable(to_wire(sample.value), type(sample.value).__name__)
    assert kind in type(sample.value).__name__


def test_unstable_types_carry_meta_as_the_unstable_schema_says() -> None:
    defs = load_schema(unstable=True)["$defs"]
    for cl in UNSTABLE_TYPES:
        has_meta = any(a.name == "meta" for a in attrs.fields(cl))
        assert ("_meta" in defs[cl.__name__]["properties"]) == has_meta, cl
        wire = {wire_name(a.name) for a in attrs.fields(cl)}
        assert wire == set(defs[cl.__name__]["properties"]), cl


def test_a_system_prompt_is_decoded_to_be_refused() -> None:
    prompt = {"mode": "append", "content": [{"type": "text", "text": "Be brief."}]}
    wire = {"sessionId": "s", "cwd": "/w", "systemPrompt": prompt}
    validate_unstable(wire, "ForkSessionRequest")
    assert from_wire(wire, ForkSessionRequest).system_prompt == prompt


def test_fork_is_unstable_only() -> None:
    assert "ForkSessionRequest" not in load_schema()["$defs"]  # stabilized: move it over


class Script:
    """What :class:`StepDriver` saw and the gate its ``step`` turn waits at."""

    def __init__(self) -> None:
        self.histories: dict[str, list[tuple[HistoryItem, ...]]] = {}
        self.gate = asyncio.Event()


class StepDriver(DriverBase):
    """``say TEXT``: one chunk; ``compact``: keeps a summary; ``step``: a batch of two tool
    calls answered, a second batch with one of two answered, then waits for
    :attr:`Script.gate`."""

    wants_history = True
    prompt_capabilities = PromptCapabilities()

    def __init__(self, script: Script) -> None:
        self.script = script

    async def run_turn(self, turn: Turn) -> StopReason:
        self.script.histories.setdefault(turn.session_id, []).append(turn.history)
        text = next((b.text for b in turn.prompt if isinstance(b, TextContentBlock)), "")
        command, _, rest = text.partition(" ")
        if command == "say":
            await turn.send(chunk(rest))
        elif command == "compact" and turn.keep is not None:
            turn.keep(CompactionRecord(summary="the summary", turns=1))
        elif command == "step":
            assert turn.record is not None
            await turn.send(chunk("looking"))
            for batch, ended in ((("one", "two"), 2), (("three", "four"), 1)):
                for name in batch:
                    await turn.record(call(f"call_{name}"), None)
                for name in batch[:ended]:  # the second batch waits for its second call
                    await turn.record(call(f"call_{name}"), result(f"call_{name}"))
                await turn.send(chunk("then" if ended == 2 else "waiting"))
            await self.script.gate.wait()
            await turn.record(call("call_four"), result("call_four"))
        return "end_turn"


def call(call_id: str) -> ToolCallRecord:
    return ToolCallRecord(call_id=call_id, name="look", arguments=freeze_json({"path": "a"}))


def result(call_id: str) -> ToolExecutionResult:
    return ToolExecutionResult(call_id=call_id, content=[TextContent("found")], is_error=False)


def step_server(store: Path, script: Script) -> AcpServer:
    return AcpServer(
        lambda: StepDriver(script), store=lambda: SessionStore(store), cancel_grace=0.3
    )


@pytest.fixture
def cwd(tmp_path: Path) -> str:
    (tmp_path / "ws").mkdir()
    return str(tmp_path / "ws")


def log_of(store: Path, session: str) -> bytes:
    return (store / f"{session}.jsonl").read_bytes()


def records_of(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


async def say(wire: WireClient, session: str, text: str) -> None:
    response = await wire.next_response(await wire.start_prompt(session, text))
    assert response["result"]["stopReason"] == "end_turn", response


async def fork(wire: WireClient, parent: str, cwd: str, **more: Any) -> dict[str, Any]:
    params = {"sessionId": parent, "cwd": cwd, "mcpServers": [], **more}
    validate_unstable(params, "ForkSessionRequest")
    return await wire.request("session/fork", params)


async def forked(wire: WireClient, parent: str, cwd: str, **more: Any) -> str:
    response = await fork(wire, parent, cwd, **more)
    assert "result" in response, response
    session: str = response["result"]["sessionId"]
    return session


def conversation(history: tuple[HistoryItem, ...]) -> list[str]:
    """A history's items by kind (and text where there is one), to compare in a line."""
    return [
        f"{type(item).__name__}:{getattr(item, 'text', getattr(item, 'call_id', ''))}"
        for item in history
    ]


async def test_fork_is_advertised(tmp_path: Path) -> None:
    async with fork_served(step_server(tmp_path, Script())) as (wire, _server):
        answer = await wire.initialize()
        validate_unstable(answer, "InitializeResponse")
        assert answer["agentCapabilities"]["sessionCapabilities"]["fork"] == {}
        assert "systemPrompt" not in answer["agentCapabilities"]["sessionCapabilities"]


async def test_without_a_store_fork_is_neither_advertised_nor_served() -> None:
    async with fork_served(AcpServer(lambda: StepDriver(Script()))) as (wire, _server):
        answer = await wire.initialize()
        assert "fork" not in answer["agentCapabilities"]["sessionCapabilities"]
        error = await wire.error("session/fork", {"sessionId": "x", "cwd": "/tmp"})
        assert error["code"] == -32601


async def test_a_fork_holds_the_parents_history_and_goes_its_own_way(
    tmp_path: Path, cwd: str
) -> None:
    script = Script()
    async with fork_served(step_server(tmp_path, script)) as (wire, _server):
        await wire.initialize()
        parent = await wire.new_session(cwd)
        for text in ("say hello", "compact", "say two"):
            await say(wire, parent, text)
        before = log_of(tmp_path, parent)
        response = await fork(wire, parent, cwd)
        child = response["result"]["sessionId"]
        assert child != parent
        assert response["result"]["modes"]["currentModeId"] == "ask"
        assert log_of(tmp_path, parent) == before  # byte for byte
        copied = log_of(tmp_path, child)
        # Every record after the header is the parent's line, byte for byte.
        assert copied.split(b"\n", 1)[1] == before.split(b"\n", 1)[1]
        header = records_of(copied)[0]
        assert header["sessionId"] == child and header["cwd"] == cwd
        assert header["title"] == "Fork: say hello"

        await say(wire, child, "say in the fork")
        await say(wire, parent, "say in the parent")
        fork_history, parent_history = script.histories[child][-1], script.histories[parent][-1]
        assert conversation(fork_history) == conversation(parent_history[: len(fork_history)])
        assert conversation(fork_history) == [
            "UserMessageRecord:",
            "AgentMessageRecord:hello",
            "UserMessageRecord:",
            "CompactionRecord:",  # the model's context starts from the summary too
            "UserMessageRecord:",
            "AgentMessageRecord:two",
        ]
        assert b"in the parent" not in log_of(tmp_path, child)
        assert b"in the fork" not in log_of(tmp_path, parent)
        assert log_of(tmp_path, parent).startswith(before)


async def test_a_fork_is_listed_loaded_resumed_and_deleted(tmp_path: Path, cwd: str) -> None:
    async with fork_served(step_server(tmp_path, Script())) as (wire, _server):
        await wire.initialize()
        parent = await wire.new_session(cwd)
        await say(wire, parent, "say hello")
        child = await forked(wire, parent, cwd)
        listed = await wire.result("session/list", {})
        titles = {s["sessionId"]: s["title"] for s in listed["sessions"]}
        assert titles == {parent: "say hello", child: "Fork: say hello"}
    async with fork_served(step_server(tmp_path, Script())) as (wire, _server):
        await wire.initialize()
        await wire.result("session/load", {"sessionId": child, "cwd": cwd, "mcpServers": []})
        replayed = [u["params"] for u in wire.updates if u["params"]["sessionId"] == child]
        kinds = [p["update"]["sessionUpdate"] for p in replayed]
        assert "user_message_chunk" in kinds and "agent_message_chunk" in kinds
        info = [
            p["update"] for p in replayed if p["update"]["sessionUpdate"] == "session_info_update"
        ]
        assert info[-1]["title"] == "Fork: say hello"
        await say(wire, child, "say more")
        await wire.result("session/close", {"sessionId": child})
        await wire.result("session/resume", {"sessionId": child, "cwd": cwd, "mcpServers": []})
        await wire.result("session/delete", {"sessionId": child})
        listed = await wire.result("session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [parent]
        assert not (tmp_path / f"{child}.jsonl").exists()


async def test_a_fork_works_in_the_requests_cwd_and_roots(tmp_path: Path, cwd: str) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "root").mkdir()
    other, root = str(tmp_path / "other"), str(tmp_path / "root")
    async with fork_served(step_server(tmp_path, Script())) as (wire, server):
        await wire.initialize()
        parent = await wire.new_session(cwd)
        await say(wire, parent, "say hello")
        child = await forked(wire, parent, other, additionalDirectories=[root])
        session = server.sessions[child]
        assert session.cwd == other  # its MCP servers start here (session.cwd)
        assert session.additional_directories == (root,)
        assert server.sessions[parent].cwd == cwd
        header = records_of(log_of(tmp_path, child))[0]
        assert header["cwd"] == other and header["additionalDirectories"] == [root]


async def test_a_fork_taken_mid_turn_copies_up_to_the_last_completed_step(
    tmp_path: Path, cwd: str
) -> None:
    script = Script()
    async with fork_served(step_server(tmp_path, script)) as (wire, _server):
        await wire.initialize()
        parent = await wire.new_session(cwd)
        await say(wire, parent, "say hello")
        running = await wire.start_prompt(parent, "step")
        while "waiting" not in wire.texts():
            await wire.next_update()
        during = log_of(tmp_path, parent)
        child = await forked(wire, parent, cwd)
        assert log_of(tmp_path, parent) == during  # the running turn's log is not touched
        copied = records_of(log_of(tmp_path, child))[1:]
        kinds = [(r["type"], r.get("text") or r.get("stopReason") or _call_of(r)) for r in copied]
        assert [(k, v) for k, v in kinds if k != "usage"] == [
            ("user_message", None),
            ("agent_message", "hello"),
            ("turn_end", "end_turn"),
            ("user_message", None),
            ("agent_message", "looking"),
            ("tool_call", "call_one"),
            ("tool_call", "call_two"),
            ("tool_result", "call_one"),
            ("tool_result", "call_two"),
            ("turn_end", "cancelled"),  # the fork's copy of the running turn ends there
        ], kinds
        script.gate.set()
        response = await wire.next_response(running)
        assert response["result"]["stopReason"] == "end_turn"
        await say(wire, child, "say after")
        assert conversation(script.histories[child][-1])[-5:] == [
            "AgentMessageRecord:looking",
            "ToolCallRecord:call_one",
            "ToolCallRecord:call_two",
            "ToolResultRecord:call_one",
            "ToolResultRecord:call_two",
        ]
        assert b"call_three" in log_of(tmp_path, parent)
        assert b"call_three" not in log_of(tmp_path, child)
        assert b'"then"' not in log_of(tmp_path, child)


def _call_of(record: dict[str, Any]) -> str | None:
    call_id = record.get("callId") or record.get("result", {}).get("callId")
    return call_id if isinstance(call_id, str) else None


async def test_a_session_held_elsewhere_forks_and_stays_held(tmp_path: Path, cwd: str) -> None:
    async with fork_served(step_server(tmp_path, Script())) as (wire, _server):
        await wire.initialize()
        parent = await wire.new_session(cwd)
        await say(wire, parent, "say hello")
        await wire.result("session/close", {"sessionId": parent})
        before = log_of(tmp_path, parent)
        with SessionStore(tmp_path).claim(parent) as claim:  # as another sidecar holds it
            child = await forked(wire, parent, cwd)
            assert not claim.released
            error = await wire.error(
                "session/load", {"sessionId": parent, "cwd": cwd, "mcpServers": []}
            )
            assert "another" in error["message"], error
        assert log_of(tmp_path, parent) == before
        await say(wire, child, "say more")


async def test_a_fork_of_an_unknown_session_is_invalid_params(tmp_path: Path, cwd: str) -> None:
    async with fork_served(step_server(tmp_path, Script())) as (wire, _server):
        await wire.initialize()
        for unknown in ("0123456789abcdef0123456789abcdef", "../escape", ""):
            error = (await fork(wire, unknown, cwd))["error"]
            assert error["code"] == INVALID_PARAMS, error
            assert "no session" in error["message"]
        parent = await wire.new_session(cwd)
        prompt = {"mode": "append", "content": [{"type": "text", "text": "be brief"}]}
        error = (await fork(wire, parent, cwd, systemPrompt=prompt))["error"]
        assert error["code"] == INVALID_PARAMS and "systemPrompt" in error["message"]
        error = (await fork(wire, parent, "relative"))["error"]
        assert error["code"] == INVALID_PARAMS
        await asyncio.sleep(0)
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".jsonl") == [f"{parent}.jsonl"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".fork")]


async def test_a_never_prompted_session_open_here_forks(tmp_path: Path, cwd: str) -> None:
    async with fork_served(step_server(tmp_path, Script())) as (wire, _server):
        await wire.initialize()
        parent = await wire.new_session(cwd)
        child = await forked(wire, parent, cwd)  # its log may not have been created yet
        assert records_of(log_of(tmp_path, child))[1:] == []
        await say(wire, child, "say first")
        listed = await wire.result("session/list", {})
        assert {s["sessionId"]: s.get("title") for s in listed["sessions"]} == {child: "say first"}


async def test_a_fork_undoes_the_parents_turns_after_the_parent_is_deleted(
    tmp_path: Path, cwd: str
) -> None:
    store = tmp_path / "store"
    async with fork_served(AcpServer(store=lambda: SessionStore(store))) as (wire, _server):
        await wire.initialize()
        parent = await wire.new_session(cwd)
        await wire.result("session/set_mode", {"sessionId": parent, "modeId": "auto"})
        for content in ("one\n", "two\n"):
            await say(wire, parent, command("write", path="a.txt", content=content))
        child = await forked(wire, parent, cwd)
        await wire.result("session/set_mode", {"sessionId": child, "modeId": "auto"})
        await wire.result("session/delete", {"sessionId": parent})
        assert not (store / f"{parent}.blobs").exists()
        await say(wire, child, "/undo")
        assert Path(cwd, "a.txt").read_bytes() == b"one\n"
        await say(wire, child, "/undo")
        assert not Path(cwd, "a.txt").exists()
