"""The model-driver tests' harness: real turns whose editor (:class:`tests.fakes.Editor`)
checks every update it is sent against the ACP schema and keeps it, sessions logged the way
the server logs them, the registry of test tools, and the chat-completions shape check every
request the driver sends must pass."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from acp_sidecar.agent.driver import Turn
from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.modes import SessionPolicy
from acp_sidecar.bridge.policy import CallScope, install_policy
from acp_sidecar.bridge.runner import EventSink
from acp_sidecar.protocol import (
    AgentMessageChunk,
    ContentBlock,
    SessionUpdate,
    StopReason,
    TextContentBlock,
)
from acp_sidecar.server.recording import SessionRecorder
from acp_sidecar.store import CompactionRecord, HistoryItem, SessionStore, UsageRecord
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.registry import ToolRegistry
from tests.fakes import Editor, NoClient
from tests.tooling import LOOK, NOTE, STREAM

CWD = "/work"
SESSION = "sess_model"


def make_turn(
    editor: Editor,
    prompt: str | Sequence[ContentBlock] = "hello",
    *,
    history: Sequence[HistoryItem] = (),
    signal: CancelSignal | None = None,
    record: EventSink | None = None,
    send: Callable[[SessionUpdate], Awaitable[None]] | None = None,
    notice: Callable[[str], Awaitable[None]] | None = None,
    keep: Callable[[UsageRecord | CompactionRecord], None] | None = None,
    client: NoClient | None = None,
    inform: Callable[[str], None] | None = None,
    waiting: Callable[[str, bool], None] | None = None,
) -> Turn:
    """A turn as the server makes one (``auto`` mode, so no permission dialog); updates go
    to ``send`` (default: the editor); ``client`` advertises the capabilities (default:
    none); ``inform`` hears what is told live and ``waiting`` the waits (default: nobody)."""
    signal = signal or CancelSignal()
    send = send or editor.send
    blocks = (TextContentBlock(text=prompt),) if isinstance(prompt, str) else tuple(prompt)
    client = client or NoClient()
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
        keep=keep,
        inform=inform,
        waiting=waiting,
    )


class RecordedSession:
    """A session whose turns are logged by the server's own recorder into a real session
    log; each turn's history is read back from that log, as the server does."""

    def __init__(self, directory: Path, *, reopen: bool = False) -> None:
        """``reopen``: continue the session a closed one left in ``directory`` (a reload)."""
        store = self.store = SessionStore(directory)
        writer = store.reopen(SESSION) if reopen else None
        self.recorder = SessionRecorder(lambda: store, SESSION, CWD, "auto", writer=writer)

    async def run(
        self,
        driver: ModelDriver,
        prompt: str | Sequence[ContentBlock],
        *,
        editor: Editor | None = None,
        signal: CancelSignal | None = None,
        client: NoClient | None = None,
        inform: Callable[[str], None] | None = None,
        waiting: Callable[[str, bool], None] | None = None,
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
            keep=self.recorder.keep,
            client=client,
            inform=inform,
            waiting=waiting,
        )
        self.recorder.prompt(turn.prompt)
        stop = await driver.run_turn(turn)
        self.recorder.end_turn(stop)
        return stop


def assert_well_formed(messages: Sequence[dict[str, Any]]) -> None:
    """The chat-completions shape every provider checks: one system message first; each
    assistant message's ``tool_calls`` answered at once by one ``tool`` message each, in
    call order, with valid JSON arguments; no ``tool`` message answering nothing; every
    message has content (or, for an assistant, calls), a string, never ``null`` (a user
    message may instead be a list of ``text`` and ``image_url`` parts); no two user
    or two assistant messages next to each other (templates that require alternating roles
    refuse that)."""
    assert messages and messages[0]["role"] == "system"
    waiting: list[str] = []
    for index, message in enumerate(messages[1:], 1):
        role = message["role"]
        where = f"message {index}: {message}"
        if role == "user" and isinstance(message["content"], list):
            assert message["content"], f"{where}: no parts"
            for part in message["content"]:
                assert part["type"] in ("text", "image_url"), where
                assert part.get("text") or part.get("image_url", {}).get("url"), where
        else:
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
            assert message["content"], where
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


class Clock:
    """The wait's clock, run by the test: each tick of the wait passes when the test lets
    one pass (:meth:`tick`); ``asleep`` has one item per time the wait went to sleep, and
    ``stopped`` is set when it stopped sleeping before its tick."""

    def __init__(self) -> None:
        self.passes = asyncio.Semaphore(0)
        self.asleep: asyncio.Queue[float] = asyncio.Queue()
        self.stopped = asyncio.Event()

    def tick(self, count: int = 1) -> None:
        for _ in range(count):
            self.passes.release()

    async def sleep(self, seconds: float) -> None:
        self.asleep.put_nowait(seconds)
        try:
            await self.passes.acquire()
        except asyncio.CancelledError:
            self.stopped.set()
            raise
