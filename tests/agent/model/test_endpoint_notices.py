"""What the user is told while the model endpoint fails or keeps them waiting, over the wire
(an in-process server, every message checked against the ACP schema): a ``notice`` where the
client takes notices, else agent text in which each of the sidecar's messages is a paragraph
of its own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from acp_sidecar.tools.registry import ToolRegistry
from tests.agent.model.fake_openai import Reply, ScriptedOpenAI, answer
from tests.server.wire import WireClient, served

NOTICES = {"session": {"notices": {}}}


def unavailable(status: int = 503) -> Reply:
    """An overloaded server's answer, retried at once (the test stays fast)."""
    return Reply(
        status=status,
        body={"error": {"message": "overloaded", "type": "unavailable_error"}},
        headers={"retry-after-ms": "10"},
    )


@pytest.fixture
async def serve(endpoint: ScriptedOpenAI, tmp_path: Path) -> Callable[..., Any]:
    """Serve a model driver against the scripted endpoint (``settings``: the config's)."""

    def make(**settings: Any) -> Any:
        config = ModelConfig(
            **{
                "model": "test-model",
                "base_url": endpoint.base_url,
                "api_key": "sk-test",
                "max_retries": 2,
            }
            | settings
        )
        server = AcpServer(
            lambda: ModelDriver(config, ToolRegistry),
            tools=ToolsProvider(builtins=False, entry_points=False),
            store=lambda: SessionStore(tmp_path / "store"),
        )
        return served(server)

    return make


async def prompt(wire: WireClient, cwd: Path, capabilities: dict[str, Any]) -> list[Any]:
    """Initialize, open a session, send one prompt; the updates it brought."""
    await wire.initialize(**capabilities)
    session = await wire.new_session(str(cwd))
    response = await wire.next_response(await wire.start_prompt(session, "hi"))
    assert response["result"]["stopReason"] == "end_turn"
    return [u["params"]["update"] for u in wire.updates]


def notices(updates: list[Any]) -> list[Any]:
    return [u for u in updates if u["sessionUpdate"] == "notice"]


def text(updates: list[Any]) -> str:
    return "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )


async def test_each_retry_says_what_the_attempt_before_ran_into(
    serve: Callable[..., Any], endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    endpoint.script(unavailable(500), unavailable(503), answer("Hello."))

    async with serve() as (wire, _server):
        updates = await prompt(wire, tmp_path, NOTICES)

    first, second = notices(updates)
    assert first["title"] == "The model request failed; retrying (1 of 2)."
    assert first["description"].endswith(
        f"The model endpoint {endpoint.base_url} answered HTTP 500 Internal Server Error; "
        "the request is sent again."
    )
    assert second["description"].endswith(
        f"The model endpoint {endpoint.base_url} answered HTTP 503 Service Unavailable; "
        "the request is sent again."
    )
    assert text(updates) == "Hello."
