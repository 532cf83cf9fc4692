"""What the subagent tests share: an endpoint that answers each conversation from its own
script (parallel children ask in any order), a raw-wire client judged by the unstable schema
with the page's ``session`` card content pinned, and the steps of a session with children."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp_sidecar.server.app import AcpServer
from tests.acp_schema import validate_agent_message
from tests.agent.model.fake_openai import Reply, Request, ScriptedOpenAI, calling
from tests.agent.model.fake_openai import tool_call as model_call
from tests.in_process import cli_server, kept_process_state
from tests.server.wire import WireClient, served

ENV = {"OPENAI_API_KEY": "sk-test"}
HANG_GUARD = 20.0
SUBAGENTS = {"subagents": {}}
"""The client capability that opts in to child sessions."""


def last_prompt(request: Request) -> str:
    """The text of the last user message of a request: which conversation (and turn) asks."""
    for message in reversed(request.messages):
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            return "".join(part.get("text", "") for part in content)
    return ""


class RoutedOpenAI(ScriptedOpenAI):
    """Answers each conversation (by its latest prompt) from its own script, in order."""

    def __init__(self) -> None:
        super().__init__(strict=True)
        self.routes: dict[str, deque[Reply]] = defaultdict(deque)
        self.asked: list[str] = []
        """The conversation of each request, in arrival order."""

    def route(self, prompt: str, *replies: Reply) -> None:
        self.routes[prompt].extend(replies)

    def reply_to(self, request: Request) -> Reply:
        key = last_prompt(request)
        self.asked.append(key)
        queue = self.routes.get(key)
        if queue:
            self.replies.appendleft(queue.popleft())
        return super().reply_to(request)


def task_call(index: int, call_id: str, description: str, prompt: str, **more: Any) -> Any:
    """A ``task`` call delta."""
    arguments = json.dumps({"description": description, "prompt": prompt, **more})
    return model_call(index, call_id, "task", arguments)


def tasks(*calls: Any) -> Reply:
    return calling(*calls)


def session_links(update: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``session`` content items of a tool card update."""
    content = update.get("content")
    if not isinstance(content, list):
        return []
    return [item for item in content if item.get("type") == "session"]


def check_message(message: dict[str, Any], request_method: str | None = None) -> None:
    """One message the sidecar wrote, judged by the unstable schema, where the stabilized
    page's ``session`` tool-call content (which that schema does not define yet) is checked
    for its pinned shape, ``{type: "session", sessionId, _meta?}``, and judged without it."""
    update = message.get("params", {}).get("update") if "method" in message else None
    if isinstance(update, dict) and update.get("sessionUpdate") in (
        "tool_call",
        "tool_call_update",
    ):
        links = session_links(update)
        for link in links:
            assert {"type", "sessionId"} <= set(link) <= {"type", "sessionId", "_meta"}, link
            assert isinstance(link["sessionId"], str) and link["sessionId"], link
        if links:
            content = [item for item in update["content"] if item.get("type") != "session"]
            message = {
                **message,
                "params": {**message["params"], "update": {**update, "content": content}},
            }
    validate_agent_message(message, request_method=request_method, unstable=True)


def unstable_checked(client: WireClient) -> WireClient:
    def check(message: Any) -> None:
        assert isinstance(message, dict)
        method = None
        if "id" in message and "method" not in message:
            method = client.sent_methods.get(message["id"])
        check_message(message, method)

    client.check = check  # type: ignore[method-assign]
    return client


def model_server(endpoint: ScriptedOpenAI, store: Path, *more: str) -> AcpServer:
    return cli_server(
        "--model", "test-model", "--base-url", endpoint.base_url, "--store", str(store), *more
    )


@asynccontextmanager
async def sidecar(
    endpoint: ScriptedOpenAI, store: Path, *more: str
) -> AsyncIterator[tuple[WireClient, AcpServer]]:
    """The sidecar in process on the model driver, its client judged by the unstable schema."""
    with kept_process_state(env=ENV):
        async with served(model_server(endpoint, store, *more)) as (client, server):
            yield unstable_checked(client), server


def updates_of(client: WireClient, start: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """(session id, update) of every update read since ``start``."""
    return [(u["params"]["sessionId"], u["params"]["update"]) for u in client.updates[start:]]


def of_kind(pairs: Iterable[tuple[str, dict[str, Any]]], *kinds: str) -> list[tuple[str, Any]]:
    return [(s, u) for s, u in pairs if u["sessionUpdate"] in kinds]


async def answer_permissions(client: WireClient, prompt_id: Any, option: str) -> dict[str, Any]:
    """Read until the prompt's answer, answering each permission request with ``option``."""
    while True:
        message = await client.receive(HANG_GUARD)
        if message.get("method") == "session/update":
            client.updates.append(message)
        elif message.get("method") == "session/request_permission":
            client.agent_requests.append(message)
            await client.respond(
                message["id"], {"outcome": {"outcome": "selected", "optionId": option}}
            )
        elif message.get("id") == prompt_id:
            return message
        else:
            raise AssertionError(f"unexpected message {message}")


async def wait_for(condition: Any, timeout: float = HANG_GUARD) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


LIVE_ONLY = frozenset(
    {
        "usage_update",
        "session_info_update",
        "current_mode_update",
        "available_commands_update",
        "config_option_update",
    }
)
CHUNK_KINDS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")


def threads(pairs: Iterable[tuple[str, dict[str, Any]]]) -> dict[tuple[str, str], list[Any]]:
    """The updates a session with children drew, as a load must draw them again: for each
    session, its own updates, and on the parent each task's (its card, its child's states and
    answer) apart, in order; a message's chunks joined (the log keeps a message whole), the
    live-only meter, titles and ``in_progress`` marks left out."""
    drawn: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for session, update in pairs:
        kind = update["sessionUpdate"]
        if kind in LIVE_ONLY or (
            kind == "tool_call_update" and set(update) == {"sessionUpdate", "toolCallId", "status"}
        ):
            continue
        if kind == "subagent_update":
            concern = update["sessionId"]
        elif kind in ("session_message", "session_message_chunk"):
            concern = update["messageId"].removesuffix("~answer")
        else:
            concern = update.get("toolCallId", "")
        concern = concern.rpartition("~task~")[2]  # a child's: its task call's
        key = (session, concern if session_is_parent(session) else "")
        thread = drawn[key]
        if (
            kind in CHUNK_KINDS
            and thread
            and thread[-1]["sessionUpdate"] == kind
            and (thread[-1]["messageId"] == update["messageId"])
        ):
            joined = thread[-1]["content"]["text"] + update["content"]["text"]
            thread[-1] = {**update, "content": {"type": "text", "text": joined}}
            continue
        thread.append(update)
    return dict(drawn)


def session_is_parent(session: str) -> bool:
    return "~task~" not in session
