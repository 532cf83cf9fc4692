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
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

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


class AllowingEditor:
    """A client that allows every call once and ignores updates."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow_once")
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
    """Answers permission requests from a script (checking the four options offered) and
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
        assert [o.kind for o in options] == [
            "allow_once",
            "allow_always",
            "reject_once",
            "reject_always",
        ]
        self.asked.append(tool_call.title or "")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answers.pop(0))
        )
