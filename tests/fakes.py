"""The one home of the suite's fake editors: the client end of ACP, faked for tests.

Two kinds, because the sidecar meets its editor at two levels:

Editors the official ACP SDK client runs (hand one to :func:`tests.sdk.sdk_sidecar` or
``acp.spawn_agent_process``; the sidecar is a subprocess and these answer its requests):

- :class:`AllowingEditor`: allows every call once, ignores updates. The default.
- :class:`WalkedAway`: opens the permission dialog and never answers (cancel mid-dialog).
- :class:`AnsweringEditor`: answers each dialog from a script of option ids, asserting the
  four options offered; for permission round trips.
- :class:`DiskEditor`: serves ``fs/*`` from disk, answering a write with ``null`` as real
  clients do; ``refuse`` makes both handlers raise.
- :class:`ScriptDriverEditor`: for ``--driver tests.drivers:ScriptDriver``; collects the
  texts the driver sends, allows the first option, serves made-up file contents.
- :class:`MenuEditor`: records the slash-command menu and the agent's messages; a dialog
  fails the test.
- :class:`CommandsEditor`: records each slash-command list as it arrives, to compare the
  lists across ``session/new`` and ``session/load``.

They are kept apart where they differ in what they answer (``null`` versus a response,
made-up versus real file contents, no dialog handler versus one that fails the test):
each test relies on exactly its editor's answers.

The session's view of its editor, in process (no wire, no subprocess):

- :class:`Editor`: ``send`` for a turn or a call scope, keeping every update as
  schema-checked wire JSON; also the permission asker, answering from a script.
- :class:`NoClient`: the client's requests when none may come (``auto`` mode).
- :class:`Recording`: a turn's ``record``, keeping every call event and result.
- :class:`FakeEditorFiles`: the editor's file system (``EditorFiles``) for the built-in
  tools: unsaved buffers, reads and writes kept, a failure to inject.
- :class:`RecordingSink`: a call's progress sink, keeping what it streamed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from acp_sidecar.protocol import (
    CancelledPermissionOutcome,
    ClientCapabilities,
    RequestPermissionRequest,
    SelectedPermissionOutcome,
    SessionNotification,
    SessionUpdate,
    to_wire,
)
from acp_sidecar.protocol import RequestPermissionResponse as SidecarPermissionResponse
from acp_sidecar.store.records import ToolCallRecord
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.result import ToolExecutionResult
from tests.acp_schema import validate_agent_message

# -- Run by the official ACP SDK client: the editor of a sidecar subprocess -------------------


class AllowingEditor:
    """A client that allows every call once and ignores updates."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow_once")
        )


class Answering(AllowingEditor):
    """Answers every dialog with ``answer``, keeping the options offered each time."""

    def __init__(self, answer: str = "allow_once") -> None:
        self.answer = answer
        self.offered: list[list[str]] = []

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        self.offered.append([option.option_id for option in kwargs["options"]])
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )


class WalkedAway(AllowingEditor):
    """Opens the permission dialog and never answers it."""

    def __init__(self) -> None:
        self.asked = 0
        self.dialog_open = asyncio.Event()

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        self.asked += 1
        self.dialog_open.set()
        await asyncio.Event().wait()  # the user never clicks
        raise AssertionError("unreachable")


class DiskEditor:
    """Serves ``fs/*`` from disk; ``refuse`` makes its handlers raise, as a denied write does."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.writes: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> None:
        if self.refuse:
            raise PermissionError("Permission denied for fs/write_text_file")
        Path(path).write_text(content)
        self.writes.append(path)
        return None  # the SDK answers {"result": null}

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        if self.refuse:
            raise PermissionError(f"Permission denied for fs/read_text_file\n  at {path}")
        return ReadTextFileResponse(content=Path(path).read_text())


class ScriptDriverEditor:
    """The peer of :class:`tests.drivers.ScriptDriver`: collects every text it is sent (sets
    ``started`` on ``started``), allows each dialog's first option, serves made-up file
    contents and accepts writes."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.started = asyncio.Event()
        self.permission_requests = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        text = getattr(getattr(update, "content", None), "text", None)
        if text is not None:
            self.texts.append(text)
            if text == "started":
                self.started.set()

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.permission_requests += 1
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=options[0].option_id)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=f"contents of {path}")

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        return WriteTextFileResponse()


class MenuEditor:
    """Records the menu and the agent's messages; a permission dialog fails the test."""

    def __init__(self) -> None:
        self.menu: dict[str, str] = {}
        self.menu_arrived = asyncio.Event()
        self.said: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AvailableCommandsUpdate):
            self.menu = {c.name: c.description for c in update.available_commands}
            self.menu_arrived.set()
        elif isinstance(update, AgentMessageChunk):
            self.said.append(update.content.text)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("reading a mention never asks")


class CommandsEditor:
    """Notes when the slash commands arrive (no dialog handler: it expects none)."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []
        self.got_commands = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AvailableCommandsUpdate):
            self.commands.append([c.name for c in update.available_commands])
            self.got_commands.set()

    async def commands_after(self, request: Any) -> tuple[Any, list[str]]:
        self.got_commands.clear()
        answer = await request
        await asyncio.wait_for(self.got_commands.wait(), 10)
        return answer, self.commands[-1]


class AnsweringEditor:
    """Answers permission requests from a script (checking the options offered) and
    keeps the title of each call it was asked about; ``streaming`` is set by the test's
    observer when live terminal output arrives."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []
        self.streaming = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        kinds = [o.kind for o in options]
        # once, then "always" per scope offered (the session's first), for allow and reject
        assert kinds[0] == "allow_once" and kinds[1] == "allow_always", kinds
        rejecting = kinds.index("reject_once")
        assert set(kinds[1:rejecting]) == {"allow_always"}, kinds
        assert kinds[rejecting + 1 :] == ["reject_always"] * (rejecting - 1), kinds
        answer = self.answers.pop(0)
        assert answer in [o.option_id for o in options], (answer, options)
        self.asked.append(tool_call.title or "")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )


# -- In process: the session's view of its editor --------------------------------------------


class Editor:
    """The editor end of a turn, in process: every ``session/update`` it was sent (its
    ``send``), as wire JSON, each checked against the official ACP schema as the
    ``session/update`` notification it travels in, with the loop time it arrived; as the
    permission asker, answers each dialog from ``answers`` in order (an option id, or ``None``
    for a dialog the user dismissed), checking each request against the schema too."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.asked: list[RequestPermissionRequest] = []
        self.updates: list[dict[str, Any]] = []
        self.times: list[float] = []
        self._changed = asyncio.Event()

    async def request_permission(
        self, request: RequestPermissionRequest, *, signal: CancelSignal | None = None
    ) -> SidecarPermissionResponse:
        wire = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/request_permission",
            "params": to_wire(request),
        }
        validate_agent_message(wire)
        self.asked.append(request)
        answer = self.answers.pop(0)
        outcome: Any = (
            CancelledPermissionOutcome()
            if answer is None
            else SelectedPermissionOutcome(option_id=answer)
        )
        return SidecarPermissionResponse(outcome=outcome)

    async def send(self, update: SessionUpdate) -> None:
        # The time it was sent, not the time after checking it: the first check compiles the
        # schema, which would make the gap before the next update look short.
        self.times.append(asyncio.get_running_loop().time())
        params = to_wire(SessionNotification(session_id="s", update=update))
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
    """The editor's requests when none are expected (a session in ``auto`` mode): each one
    fails the test."""

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


class FakeEditorFiles:
    """The editor's files: ``buffers`` hold unsaved text; other paths read from disk."""

    def __init__(
        self,
        buffers: dict[str, str] | None = None,
        *,
        can_read: bool = True,
        can_write: bool = True,
    ) -> None:
        self.buffers = dict(buffers or {})
        self._can_read = can_read
        self._can_write = can_write
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.fail: Exception | None = None

    @property
    def can_read(self) -> bool:
        return self._can_read

    @property
    def can_write(self) -> bool:
        return self._can_write

    async def read_text_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> str:
        self.reads.append(path)
        if self.fail is not None:
            raise self.fail
        if path in self.buffers:
            return self.buffers[path]
        with open(path, encoding="utf-8") as f:
            return f.read()

    async def write_text_file(self, path: str, content: str) -> None:
        if self.fail is not None:
            raise self.fail
        self.writes.append((path, content))
        self.buffers[path] = content


class RecordingSink:
    """A call's progress sink: what it streamed, in order, as ``("text", ...)`` and
    ``("output", ...)`` events; ``fail`` makes every delivery raise, as a broken sink does."""

    def __init__(self, fail: bool = False) -> None:
        self.events: list[tuple[str, str]] = []
        self.fail = fail

    async def text(self, text: str) -> None:
        if self.fail:
            raise RuntimeError("sink broke")
        self.events.append(("text", text))

    async def output(self, data: str) -> None:
        if self.fail:
            raise RuntimeError("sink broke")
        self.events.append(("output", data))

    @property
    def texts(self) -> list[str]:
        return [text for kind, text in self.events if kind == "text"]

    @property
    def chunks(self) -> list[str]:
        return [data for kind, data in self.events if kind == "output"]

    @property
    def streamed(self) -> str:
        return "".join(self.chunks)
