"""What a server may ask the user: only while one of its calls runs, one open question a
call, ``http(s)`` pages only, and forms in the current schema (legacy ``enumNames`` mapped).

The peer (``peers/asking_peer.py``) sends whatever ``elicitation/create`` a test wants; the
session's hook (the editor, for these tests) records what reaches it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from acp_sidecar.mcp.client_side import (
    ClientSideHooks,
    ElicitationAnswer,
    ElicitationRequest,
    FormElicitation,
    UrlElicitation,
)
from acp_sidecar.mcp.servers import McpServers
from tests.mcp.conftest import Problems, asking_peer
from tests.mcp.test_connection import text_of

pytestmark = pytest.mark.process  # every test here starts an interpreter

FORM: dict[str, Any] = {
    "mode": "form",
    "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}


def url(address: str) -> dict[str, Any]:
    return {"mode": "url", "message": "Sign in", "url": address, "elicitationId": address[:20]}


class Editor:
    """The hook: records each request; answers at once, or holds until ``release``."""

    def __init__(self, hold: bool = False) -> None:
        self.asked: list[ElicitationRequest] = []
        self.arrived = asyncio.Event()
        self.release = asyncio.Event()
        if not hold:
            self.release.set()

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        self.asked.append(request)
        self.arrived.set()
        await self.release.wait()
        if isinstance(request, UrlElicitation):
            return ElicitationAnswer(action="accept")
        return ElicitationAnswer(action="accept", content={"name": "Ada"})

    def hooks(self) -> ClientSideHooks:
        return ClientSideHooks(roots=list, elicit=self.elicit)


async def ask(
    servers: McpServers, *requests: dict[str, Any], answered: asyncio.Queue[float] | None = None
) -> list[dict[str, Any]]:
    """The ``ask`` tool's answers; ``answered`` gets the count each time one came back."""

    async def progress(count: float, total: float | None, message: str | None) -> None:
        if answered is not None:
            answered.put_nowait(count)

    connection = servers.connections["asker"]
    result = await connection.call_tool("ask", {"requests": list(requests)}, progress=progress)
    answers: list[dict[str, Any]] = json.loads(text_of(result))
    return answers


async def test_elicitations_outside_any_call_never_reach_the_editor(problems: Problems) -> None:
    editor = Editor()
    servers = await McpServers.start(
        [asking_peer("asker", "--unprompted", "50")], hooks=editor.hooks(), on_problem=problems
    )
    try:
        connection = servers.connections["asker"]
        while len(answers := json.loads(text_of(await connection.call_tool("answers", {})))) < 50:
            await asyncio.sleep(0.02)
        assert answers == [{"action": "decline"}] * 50
        assert editor.asked == []
        # During a call, the same question reaches the editor.
        assert await ask(servers, FORM) == [{"action": "accept", "content": {"name": "Ada"}}]
        assert len(editor.asked) == 1
    finally:
        await servers.aclose()


async def test_a_call_has_one_question_open_at_a_time(problems: Problems) -> None:
    editor = Editor(hold=True)
    servers = await McpServers.start(
        [asking_peer("asker")], hooks=editor.hooks(), on_problem=problems
    )
    try:
        answered: asyncio.Queue[float] = asyncio.Queue()
        asking = asyncio.ensure_future(ask(servers, *[FORM] * 20, answered=answered))
        # All but the one the editor holds open are answered (declined) meanwhile.
        while await asyncio.wait_for(answered.get(), 30) < 19:
            pass
        assert editor.arrived.is_set()
        editor.release.set()
        answers = await asking
        assert len(editor.asked) == 1
        assert answers.count({"action": "accept", "content": {"name": "Ada"}}) == 1
        assert answers.count({"action": "decline"}) == 19
    finally:
        await servers.aclose()


@pytest.mark.parametrize(
    "address",
    [
        "javascript:alert(1)",
        "JavaScript:alert(document.cookie)",
        "java\tscript:alert(1)",
        " javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "vscode://settings",
        "https://github.com@evil.example/login",
        "https://user:secret@example.com/",
        "https:///no-host",
        "https://example.com/\nhttps://evil.example/",
        "https://exa\u202emple.com/",
        "//example.com/relative",
    ],
)
async def test_only_http_pages_are_forwarded(address: str, problems: Problems) -> None:
    editor = Editor()
    servers = await McpServers.start(
        [asking_peer("asker")], hooks=editor.hooks(), on_problem=problems
    )
    try:
        good = "https://auth.example.com/device?code=1234"
        assert await ask(servers, url(address), url(good)) == [
            {"action": "decline"},
            {"action": "accept"},
        ]
        assert [request.url for request in editor.asked if isinstance(request, UrlElicitation)] == [
            good
        ]
    finally:
        await servers.aclose()


async def test_legacy_enum_names_become_titled_options(problems: Problems) -> None:
    editor = Editor()
    schema = {
        "type": "object",
        "properties": {
            "color": {
                "type": "string",
                "title": "Colour",
                "enum": ["r", "g"],
                "enumNames": ["Red", "Green"],
                "default": "g",
            },
            "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small"]},
            "name": {"type": "string"},
        },
        "required": ["color"],
    }
    servers = await McpServers.start(
        [asking_peer("asker")], hooks=editor.hooks(), on_problem=problems
    )
    try:
        await ask(servers, {"mode": "form", "message": "Pick", "requestedSchema": schema})
    finally:
        await servers.aclose()
    [request] = editor.asked
    assert isinstance(request, FormElicitation)
    assert request.requested_schema == {
        "type": "object",
        "properties": {
            "color": {
                "type": "string",
                "title": "Colour",
                "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
                "default": "g",
            },
            # Names that do not match the values one to one name nothing: dropped.
            "size": {"type": "string", "enum": ["s", "m"]},
            "name": {"type": "string"},
        },
        "required": ["color"],
    }
