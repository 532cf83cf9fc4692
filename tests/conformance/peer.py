"""The client end of the conformance suite: the server ``acp-sidecar`` builds, in this process on
a pair of pipes (:func:`sidecar`) or as a real subprocess on its stdio (:func:`sidecar_process`,
for what is a property of the process), and a scripted ACP client on the other end.

Every message the agent writes is checked as it is read: it is one JSON-RPC 2.0 object on one
line, valid against the official v1 schema for its method (:class:`tests.server.wire.WireClient`),
with no member the specification does not define (:mod:`tests.conformance.strict`).

The client answers what the agent asks the way an editor would — the permission dialog picks
:attr:`Agent.permission`; ``fs/read_text_file`` and ``fs/write_text_file`` read and write the
real files — and keeps every agent→client request, so a test can say exactly which client
methods the agent used. A method a client does not implement is answered ``-32601``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conformance.strict import check_no_custom_fields
from tests.server.wire import WireClient, cli_served, start_sidecar

TOOLS = ("--tools", "tests.tooling:TOOLS")
"""The console driver (the default, no model) with the built-in tools and the test tools
(``stream``: a terminal card that prints lines with a pause; ``look``: a read card)."""

SCRIPT_DRIVER = ("--driver", "tests.drivers:ScriptDriver")
"""The scripted test driver (see ``tests/drivers.py``)."""

EXIT_TIMEOUT = 5.0
"""How long the agent may take to exit once its input ends (a generous bound)."""

Message = dict[str, Any]


class ConformanceWire(WireClient):
    """:class:`WireClient` that also refuses members the specification does not define."""

    def check(self, message: Any) -> None:
        super().check(message)
        is_response = "id" in message and "method" not in message
        method = self.sent_methods.get(message["id"]) if is_response else None
        check_no_custom_fields(message, request_method=method)


@dataclass
class Turn:
    """One ``session/prompt`` as the client saw it."""

    response: Message
    """The agent's answer to the prompt."""
    updates: list[Message]
    """The ``update`` of every ``session/update`` for the session, in order, up to the answer."""
    requests: list[Message]
    """Every agent→client request made while the turn ran, in order."""

    @property
    def stop_reason(self) -> str:
        assert "result" in self.response, self.response
        reason: str = self.response["result"]["stopReason"]
        return reason

    def of_kind(self, *kinds: str) -> list[Message]:
        """The updates whose ``sessionUpdate`` is one of ``kinds``."""
        return [u for u in self.updates if u["sessionUpdate"] in kinds]

    def methods(self) -> list[str]:
        """The methods of the agent→client requests, in order."""
        return [r["method"] for r in self.requests]

    def final_status(self, tool_call_id: str) -> str | None:
        """The last status reported for a tool call."""
        status = None
        for update in self.of_kind("tool_call", "tool_call_update"):
            if update["toolCallId"] == tool_call_id and update.get("status") is not None:
                status = update["status"]
        return status


@dataclass
class Agent:
    """A running sidecar and the scripted client talking to it."""

    wire: ConformanceWire
    process: asyncio.subprocess.Process | None
    """The agent's process; ``None`` when it is served in this process."""
    permission: str = "allow_once"
    """What the user answers a permission request with: an ``optionId``, or ``"cancelled"``."""
    write_answer: Any = field(default_factory=dict)
    """The result ``fs/write_text_file`` is answered with after writing the file."""
    extra: Message = field(default_factory=dict)
    """Members added to the result (and outcome) of every permission and read answer."""
    buffers: dict[str, str] = field(default_factory=dict)
    """Unsaved editor text by absolute path: ``fs/read_text_file`` returns it, not the disk's."""
    updates: list[Message] = field(default_factory=list)
    """The params of every ``session/update`` received."""
    requests: list[Message] = field(default_factory=list)
    """Every agent→client request received."""

    # ---- connection ----

    async def initialize(self, **capabilities: Any) -> Message:
        """``initialize`` with protocol version 1 and these client capabilities."""
        result: Message = await self.result(
            "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
        )
        return result

    async def request(self, method: str, params: Any = None, msg_id: Any = None) -> Message:
        """Send a request and read until its response (answering the agent meanwhile)."""
        msg_id = await self.wire.send_request(method, params, msg_id)
        return await self.response_to(msg_id)

    async def result(self, method: str, params: Any = None) -> Any:
        response = await self.request(method, params)
        assert "result" in response, response
        return response["result"]

    async def notify(self, method: str, params: Any) -> None:
        await self.wire.notify(method, params)

    # ---- sessions and turns ----

    async def new_session(self, cwd: Path | str, mode: str | None = "auto") -> str:
        """A session working in ``cwd``; ``mode`` is set unless ``None`` (the default mode).

        The suite runs tools in ``auto`` unless a test is about permission.
        """
        result = await self.result("session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id: str = result["sessionId"]
        if mode is not None:
            await self.result("session/set_mode", {"sessionId": session_id, "modeId": mode})
            if mode != result["modes"]["currentModeId"]:
                # Clients following the mode config option are told, after the answer.
                update = await self.update_where(
                    lambda u: u["sessionUpdate"] == "config_option_update"
                )
                assert update["configOptions"][0]["currentValue"] == mode
        return session_id

    async def start(self, session_id: str, *blocks: str | Message) -> Any:
        """Send ``session/prompt`` (strings become text blocks); the request id."""
        prompt = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
        return await self.wire.send_request(
            "session/prompt", {"sessionId": session_id, "prompt": prompt}
        )

    async def finish(self, msg_id: Any, session_id: str) -> Turn:
        """Read until the answer to prompt ``msg_id``; the turn as the client saw it."""
        first_update, first_request = len(self.updates), len(self.requests)
        response = await self.response_to(msg_id)
        return Turn(
            response=response,
            updates=[
                u["update"] for u in self.updates[first_update:] if u["sessionId"] == session_id
            ],
            requests=self.requests[first_request:],
        )

    async def prompt(self, session_id: str, *blocks: str | Message) -> Turn:
        """One whole prompt turn."""
        return await self.finish(await self.start(session_id, *blocks), session_id)

    async def cancel(self, session_id: str) -> None:
        await self.notify("session/cancel", {"sessionId": session_id})

    async def later_updates(self, session_id: str) -> list[Message]:
        """The updates for ``session_id`` that arrive before the answer to one more request.

        The agent answers requests in order of arrival once it is idle, so whatever it still
        had to say about an ended turn arrives before this round trip completes.
        """
        first = len(self.updates)
        await self.request("_conformance/probe", {})
        return [u["update"] for u in self.updates[first:] if u["sessionId"] == session_id]

    # ---- reading ----

    async def response_to(self, msg_id: Any) -> Message:
        """Read until the response to ``msg_id``."""
        return await self.read_until(lambda m: "method" not in m and m.get("id") == msg_id)

    async def agent_request(self, method: str) -> Message:
        """Read until the agent sends a ``method`` request; it is left for the caller to answer."""
        return await self.read_until(lambda m: m.get("method") == method and "id" in m)

    async def update_where(self, test: Callable[[Message], bool]) -> Message:
        """Read until a ``session/update`` whose ``update`` passes ``test``; that update."""
        message = await self.read_until(
            lambda m: m.get("method") == "session/update" and test(m["params"]["update"])
        )
        update: Message = message["params"]["update"]
        return update

    async def read_until(self, wanted: Callable[[Message], bool]) -> Message:
        """Read messages, keeping them and answering the agent's requests, until one is
        ``wanted`` (a wanted request is left for the caller to answer)."""
        while True:
            message = await self.wire.receive()
            method = message.get("method")
            if method == "session/update":
                self.updates.append(message["params"])
            elif method is not None and "id" in message:
                self.requests.append(message)
            if wanted(message):
                return message
            if method is not None and "id" in message:
                await self.answer(message)
            elif method not in ("session/update", "$/cancel_request"):
                # $/cancel_request: the agent withdrew a request of its own; nothing to do.
                raise AssertionError(f"unexpected message {message}")

    async def answer(self, request: Message) -> None:
        """Answer an agent→client request as an editor would."""
        method, params, msg_id = request["method"], request["params"], request["id"]
        if method == "session/request_permission":
            if self.permission == "cancelled":
                outcome: Message = {"outcome": "cancelled"}
            else:
                offered = [o["optionId"] for o in params["options"]]
                assert self.permission in offered, offered
                outcome = {"outcome": "selected", "optionId": self.permission}
            await self.wire.respond(msg_id, {"outcome": {**outcome, **self.extra}, **self.extra})
        elif method == "fs/read_text_file":
            text = self.buffers.get(params["path"])
            if text is None:
                text = Path(params["path"]).read_text(encoding="utf-8")
            await self.wire.respond(msg_id, {"content": select_lines(text, params), **self.extra})
        elif method == "fs/write_text_file":
            Path(params["path"]).write_text(params["content"], encoding="utf-8")
            await self.wire.respond(msg_id, self.write_answer)
        else:
            await self.wire.send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "error": {"code": -32601, "message": f"Method not found: {method}"},
                }
            )

    # ---- ending ----

    async def close(self) -> int:
        """End the agent's input; wait for it to exit; check what it still wrote. (Served in
        this process, the exit status is :func:`served`'s to check: 0 here.)"""
        self.wire.close()
        rest = await asyncio.wait_for(self.wire.reader.read(), EXIT_TIMEOUT)
        status = 0
        if self.process is not None:
            status = await asyncio.wait_for(self.process.wait(), EXIT_TIMEOUT)
        for line in rest.splitlines():
            message = json.loads(line)
            self.wire.check(message)
            self.wire.received.append(message)
        return status


def select_lines(text: str, params: Message) -> str:
    """What ``fs/read_text_file`` returns of ``text``: from ``line`` (1-based), at most
    ``limit`` lines."""
    line, limit = params.get("line"), params.get("limit")
    if line is None and limit is None:
        return text
    lines = text.splitlines(keepends=True)
    start = (line or 1) - 1
    return "".join(lines[start : None if limit is None else start + limit])


@asynccontextmanager
async def sidecar(*args: str) -> AsyncIterator[Agent]:
    """The server ``acp-sidecar ARGS`` builds, served in this process, and a client on its
    pipes. On the way out the agent's input is closed; it must end serving with status 0."""
    async with cli_served(*args) as (wire, _server):
        agent = Agent(ConformanceWire(wire.reader, wire.writer), None)
        yield agent
        await agent.close()


@asynccontextmanager
async def sidecar_process(*args: str, env: dict[str, str] | None = None) -> AsyncIterator[Agent]:
    """``acp-sidecar ARGS`` as a subprocess and a client on its stdio.

    On the way out the agent's input is closed and it must exit 0 within
    :data:`EXIT_TIMEOUT`; if the body failed, it is killed instead.
    """
    _, process = await start_sidecar(*args, env=env)
    assert process.stdout is not None and process.stdin is not None
    agent = Agent(ConformanceWire(process.stdout, process.stdin), process)
    try:
        yield agent
    except BaseException:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    status = await agent.close()
    assert status == 0, f"the agent exited with {status}"


def is_tool_update(tool_call_id: str) -> Callable[[Message], bool]:
    """Matches the ``tool_call`` / ``tool_call_update`` updates of one tool call."""
    return lambda u: (
        u["sessionUpdate"] in ("tool_call", "tool_call_update") and u["toolCallId"] == tool_call_id
    )
