"""Fixtures for the model driver: a scripted endpoint, a registry of test tools, real turns
whose editor checks every update it is sent against the ACP schema and keeps it, and
sessions logged the way the server logs them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from acp_sidecar.agent.driver import Turn
from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.modes import SessionPolicy
from acp_sidecar.bridge.policy import CallScope, install_policy
from acp_sidecar.bridge.runner import EventSink
from acp_sidecar.protocol import (
    AgentMessageChunk,
    ClientCapabilities,
    ContentBlock,
    SessionNotification,
    SessionUpdate,
    StopReason,
    TextContentBlock,
    to_wire,
)
from acp_sidecar.server.recording import SessionRecorder
from acp_sidecar.store import HistoryItem, SessionStore
from acp_sidecar.store.records import ToolCallRecord
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.execution import ToolExecutionResult
from acp_sidecar.tools.registry import ToolRegistry
from tests.acp_schema import validate_agent_message
from tests.agent.model.fake_openai import ScriptedOpenAI
from tests.tooling import LOOK, NOTE, STREAM

CWD = "/work"
SESSION = "sess_model"


class Editor:
    """The client end of a turn: every ``session/update`` it was sent, as wire JSON, each
    checked against the official ACP schema as the ``session/update`` notification it
    travels in."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self._changed = asyncio.Event()

    async def send(self, update: SessionUpdate) -> None:
        params = to_wire(SessionNotification(session_id=SESSION, update=update))
        validate_agent_message({"jsonrpc": "2.0", "method": "session/update", "params": params})
        self.updates.append(params["update"])
        self._changed.set()

    def kinds(self) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates]

    def text(self) -> str:
        return "".join(
            u["content"]["text"]
            for u in self.updates
            if u["sessionUpdate"] == "agent_message_chunk"
        )

    def thoughts(self) -> str:
        return "".join(
            u["content"]["text"]
            for u in self.updates
            if u["sessionUpdate"] == "agent_thought_chunk"
        )

    def cards(self, call_id: str | None = None) -> list[dict[str, Any]]:
        """``tool_call`` and ``tool_call_update`` updates (of one call)."""
        return [
            u
            for u in self.updates
            if u["sessionUpdate"] in ("tool_call", "tool_call_update")
            and (call_id is None or u["toolCallId"] == call_id)
        ]

    async def wait_for(self, check: Callable[[Editor], bool], timeout: float = 5) -> None:
        async with asyncio.timeout(timeout):
            while not check(self):
                self._changed.clear()
                await self._changed.wait()


class NoClient:
    """The editor's requests: none are expected (the session runs in ``auto`` mode)."""

    capabilities = ClientCapabilities()

    async def request_permission(self, *_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("no permission dialog expected")

    async def read_text_file(self, *_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("no fs request expected")

    async def write_text_file(self, *_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("no fs request expected")


@attrs.define
class Recording:
    """``turn.record``: every call event and result, in order."""

    events: list[tuple[ToolCallRecord, ToolExecutionResult | None]] = attrs.field(factory=list)

    async def __call__(self, event: ToolCallRecord, result: ToolExecutionResult | None) -> None:
        self.events.append((event, result))

    def results(self) -> list[ToolExecutionResult]:
        return [result for _event, result in self.events if result is not None]


def make_turn(
    editor: Editor,
    prompt: str | Sequence[ContentBlock] = "hello",
    *,
    history: Sequence[HistoryItem] = (),
    signal: CancelSignal | None = None,
    record: EventSink | None = None,
    send: Callable[[SessionUpdate], Awaitable[None]] | None = None,
    notice: Callable[[str], Awaitable[None]] | None = None,
) -> Turn:
    """A turn as the server makes one (``auto`` mode, so no permission dialog); updates go
    to ``send`` (default: the editor)."""
    signal = signal or CancelSignal()
    send = send or editor.send
    blocks = (TextContentBlock(text=prompt),) if isinstance(prompt, str) else tuple(prompt)
    client = NoClient()
    scope = CallScope(
        session_id=SESSION,
        cards=CardContext(cwd=CWD),
        policy=SessionPolicy(mode="auto"),
        send=send,
        asker=client,
        signal=signal,
    )
    return Turn(
        session_id=SESSION,
        cwd=CWD,
        prompt=blocks,
        signal=signal,
        send=send,
        client=client,
        scope=scope,
        record=record,
        history=tuple(history),
        notice=notice,
    )


class RecordedSession:
    """A session whose turns are logged by the server's own recorder into a real session
    log; each turn's history is read back from that log, as the server does."""

    def __init__(self, directory: Path) -> None:
        store = SessionStore(directory)
        self.recorder = SessionRecorder(lambda: store, SESSION, CWD, "auto")

    async def run(
        self,
        driver: ModelDriver,
        prompt: str | Sequence[ContentBlock],
        *,
        editor: Editor | None = None,
        signal: CancelSignal | None = None,
    ) -> StopReason:
        """One turn: the prompt, every update and call recorded, then the turn's end."""
        shown = editor or Editor()

        async def send(update: SessionUpdate) -> None:
            self.recorder.update(update)
            await shown.send(update)

        async def notice(text: str) -> None:
            self.recorder.notice(text)
            await shown.send(AgentMessageChunk(content=TextContentBlock(text=text)))

        turn = make_turn(
            shown,
            prompt,
            history=self.recorder.history(),  # before this prompt
            signal=signal,
            send=send,
            record=self.recorder.record_call_event,
            notice=notice,
        )
        self.recorder.prompt(turn.prompt)
        stop = await driver.run_turn(turn)
        self.recorder.end_turn(stop)
        return stop


def assert_well_formed(messages: Sequence[dict[str, Any]]) -> None:
    """The chat-completions shape every provider checks: one system message first; each
    assistant message's ``tool_calls`` answered at once by one ``tool`` message each, in
    call order, with valid JSON arguments; no ``tool`` message answering nothing; every
    message has content (or, for an assistant, calls), a string, never ``null``; no two user
    or two assistant messages next to each other (templates that require alternating roles
    refuse that)."""
    assert messages and messages[0]["role"] == "system"
    waiting: list[str] = []
    for index, message in enumerate(messages[1:], 1):
        role = message["role"]
        where = f"message {index}: {message}"
        assert isinstance(message["content"], str), f"{where}: content is not a string"
        assert role not in ("user", "assistant") or messages[index - 1]["role"] != role, (
            f"{where} follows another {role} message"
        )
        if waiting:
            assert role == "tool", f"{where} comes before the results of {waiting}"
            assert message["tool_call_id"] == waiting.pop(0), where
            assert isinstance(message["content"], str) and message["content"], where
            continue
        assert role in ("user", "assistant"), where
        if role == "user":
            assert isinstance(message["content"], str) and message["content"], where
            continue
        calls = message.get("tool_calls") or []
        assert message["content"] or calls, f"{where} says nothing"
        for entry in calls:
            assert entry["type"] == "function", where
            json.loads(entry["function"]["arguments"])
        waiting = [entry["id"] for entry in calls]
    assert not waiting, f"calls {waiting} are never answered"


def tool_registry() -> ToolRegistry:
    """``note`` (diff card), ``stream`` (terminal card), ``look`` (read card), with the
    bridge's policy installed."""
    registry = ToolRegistry()
    for tool in (NOTE, STREAM, LOOK):
        registry.register(tool)
    install_policy(registry)
    return registry


@pytest.fixture
async def endpoint() -> AsyncIterator[ScriptedOpenAI]:
    async with ScriptedOpenAI() as server:
        yield server


@pytest.fixture
def registry() -> ToolRegistry:
    return tool_registry()


@pytest.fixture
def editor() -> Editor:
    return Editor()


@pytest.fixture
async def make_driver(
    endpoint: ScriptedOpenAI, registry: ToolRegistry
) -> AsyncIterator[Callable[..., ModelDriver]]:
    """Makes drivers against the scripted endpoint (closed after the test)."""
    drivers: list[ModelDriver] = []

    def make(**overrides: Any) -> ModelDriver:
        settings: dict[str, Any] = {
            "model": "test-model",
            "base_url": endpoint.base_url,
            "api_key": "sk-test",
            "max_retries": 1,
            "request_timeout": 10.0,
        } | overrides
        driver = ModelDriver(ModelConfig(**settings), lambda: registry)
        drivers.append(driver)
        return driver

    yield make
    for driver in drivers:
        await driver.aclose()


@pytest.fixture
def driver(make_driver: Callable[..., ModelDriver]) -> ModelDriver:
    return make_driver()
