"""Initialization: version negotiation, and every capability the agent advertises works.

Spec: https://agentclientprotocol.com/protocol/initialization
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.conformance.peer import SCRIPT_DRIVER, TOOLS, Agent, sidecar

pytestmark = pytest.mark.asyncio(loop_scope="module")

LATEST = 1
"""The latest (and only) ACP version this agent speaks."""


@pytest.mark.parametrize("asked", [2, 65535, 0])
async def test_a_version_the_agent_does_not_support_is_answered_with_its_latest(
    asked: int,
) -> None:
    """Initialization, "Version Negotiation": "If the Agent supports the requested version,
    it MUST respond with the same version. Otherwise, the Agent MUST respond with the latest
    version it supports." A newer version (2, the largest 65535) and an older one (0) both
    get version 1."""
    async with sidecar() as agent:
        result = await agent.result(
            "initialize", {"protocolVersion": asked, "clientCapabilities": {}}
        )
    assert result["protocolVersion"] == LATEST


async def test_a_supported_version_is_answered_with_the_same_version() -> None:
    """Initialization: "The Agent MUST respond with the chosen protocol version and the
    capabilities it supports. It SHOULD also provide a name and version" — asked for 1, the
    agent answers 1, its capabilities and its implementation information."""
    async with sidecar() as agent:
        result = await agent.result(
            "initialize",
            {
                "protocolVersion": LATEST,
                "clientCapabilities": {},
                "clientInfo": {"name": "conformance", "version": "1.0"},
            },
        )
    assert result["protocolVersion"] == LATEST
    assert isinstance(result["agentCapabilities"], dict)
    assert result["agentInfo"]["name"] and result["agentInfo"]["version"]


@pytest.mark.parametrize("terminal", [False, True], ids=["no-terminal-auth", "terminal-auth"])
async def test_auth_methods_are_offered_as_the_client_allows_and_gate_nothing(
    terminal: bool, workspace: Path
) -> None:
    """Initialization, ``authMethods`` (schema ``AuthMethod``, ``AuthCapabilities``): a
    ``terminal`` method is offered only to a client whose ``clientCapabilities.auth.terminal``
    is true ("Agents MUST advertise this method only when the client enabled its terminal
    authentication capability"), and is never passed to ``authenticate`` ("The client MUST NOT
    pass this method to ``authenticate``"); every other method's id ("Must be one of the
    methods advertised") is accepted by ``authenticate``. The ACP registry lists only agents
    offering at least one ``agent`` or ``terminal`` method. This agent needs no login, so
    ``session/new`` works before any ``authenticate``, and after it."""
    async with sidecar() as agent:
        result = await agent.initialize(auth={"terminal": terminal})
        methods = result["authMethods"]
        kinds = [method.get("type", "agent") for method in methods]
        assert "agent" in kinds
        assert ("terminal" in kinds) == terminal
        await agent.new_session(workspace, mode=None)
        for method in methods:
            if method.get("type") is None:
                assert await agent.result("authenticate", {"methodId": method["id"]}) == {}
        await agent.new_session(workspace, mode=None)


@pytest_asyncio.fixture(
    scope="module", loop_scope="module", params=["console", "script"], ids=["console", "script"]
)
async def advertised(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Agent, Any]]:
    """An initialized agent (the console driver, or the scripted test driver that accepts
    images and embedded context) and the capabilities it advertised."""
    args = TOOLS if request.param == "console" else SCRIPT_DRIVER
    async with sidecar(*args) as agent:
        result = await agent.initialize()
        yield agent, result["agentCapabilities"]


async def test_text_and_resource_links_are_accepted_in_prompts(
    advertised: tuple[Agent, Any], workspace: Path
) -> None:
    """Initialization, "Prompt capabilities": "As a baseline, all Agents MUST support
    ContentBlock::Text and ContentBlock::ResourceLink in session/prompt requests." A prompt of
    text, of a resource link alone, and of both, each ends with a stop reason."""
    agent, _ = advertised
    session = await agent.new_session(workspace)
    link = {
        "type": "resource_link",
        "uri": (workspace / "notes.txt").as_uri(),
        "name": "notes.txt",
        "mimeType": "text/plain",
    }
    for blocks in (["hello"], [link], ["look at ", link]):
        turn = await agent.prompt(session, *blocks)
        assert turn.stop_reason == "end_turn", blocks


PROMPT_BLOCKS: dict[str, dict[str, Any]] = {
    "image": {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    "audio": {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    "embeddedContext": {
        "type": "resource",
        "resource": {"uri": "file:///tmp/notes.txt", "mimeType": "text/plain", "text": "alpha"},
    },
}


async def test_every_advertised_prompt_capability_is_accepted(
    advertised: tuple[Agent, Any], workspace: Path
) -> None:
    """Initialization, "Prompt capabilities": ``image``, ``audio`` and ``embeddedContext``
    say "the prompt may include" that content: each one the agent advertises, a prompt
    carrying it is answered with a stop reason, not an error."""
    agent, capabilities = advertised
    prompt_capabilities = capabilities["promptCapabilities"]
    assert set(prompt_capabilities) >= set(PROMPT_BLOCKS)
    session = await agent.new_session(workspace)
    for name, block in PROMPT_BLOCKS.items():
        if prompt_capabilities[name]:
            turn = await agent.prompt(session, "hello", block)
            assert turn.stop_reason == "end_turn", name


async def test_advertised_load_session_works(
    advertised: tuple[Agent, Any], workspace: Path
) -> None:
    """Initialization, "Agent Capabilities": ``loadSession`` — "The session/load method is
    available." (Session Setup, "Loading Sessions".) This agent keeps sessions, so it
    advertises it, and loading a session that had a turn answers with a result."""
    agent, capabilities = advertised
    assert capabilities["loadSession"] is True
    session = await agent.new_session(workspace)
    await agent.prompt(session, "hello")
    result = await agent.result(
        "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
    )
    assert isinstance(result, dict)


async def test_advertised_session_list_works(
    advertised: tuple[Agent, Any], workspace: Path
) -> None:
    """Initialization, "Session Capabilities": agents "MAY support other session methods ...
    by specifying additional capabilities"; ``sessionCapabilities.list`` advertises
    ``session/list`` (Session List). This agent advertises it, and the list holds a session
    that had a turn in this working directory."""
    agent, capabilities = advertised
    assert "list" in capabilities["sessionCapabilities"]
    session = await agent.new_session(workspace)
    await agent.prompt(session, "hello")
    result = await agent.result("session/list", {"cwd": str(workspace)})
    assert session in [info["sessionId"] for info in result["sessions"]]
