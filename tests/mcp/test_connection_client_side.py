"""The client side of MCP: roots from the session, elicitation through the hook or declined,
sampling refused — each answered to a real server's request (our stdio peer)."""

from __future__ import annotations

import json

import pytest

from acp_sidecar.mcp.client_requests import roots_result
from acp_sidecar.mcp.client_side import (
    ClientSideHooks,
    ElicitationAnswer,
    ElicitationRequest,
    FormElicitation,
)
from acp_sidecar.mcp.errors import McpCallError
from acp_sidecar.mcp.servers import McpServers
from tests.mcp.conftest import Problems, peer
from tests.mcp.test_connection import text_of


@pytest.mark.process
async def test_roots_list_answers_the_sessions_directories_now_as_file_uris(
    problems: Problems,
) -> None:
    directories = ["/work/project"]
    hooks = ClientSideHooks(roots=lambda: list(directories))
    servers = await McpServers.start([peer("p", "serve")], hooks=hooks, on_problem=problems)
    try:
        connection = servers.connections["p"]
        assert json.loads(text_of(await connection.call_tool("roots", {}))) == [
            "file:///work/project"
        ]
        directories[:] = ["/work/other dir", "relative/ignored", "/"]
        assert json.loads(text_of(await connection.call_tool("roots", {}))) == [
            "file:///work/other%20dir",
            "file:///",
        ]
    finally:
        await servers.aclose()


def test_roots_result_names_each_root() -> None:
    result = roots_result(ClientSideHooks(roots=lambda: ["/a/b", "/"]))
    assert [(str(r.uri), r.name) for r in result.roots] == [("file:///a/b", "b"), ("file:///", "/")]


@pytest.mark.process
async def test_an_elicitation_goes_to_the_hook(problems: Problems) -> None:
    asked: list[ElicitationRequest] = []

    async def elicit(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer(action="accept", content={"name": "Ada"})

    hooks = ClientSideHooks(roots=list, elicit=elicit)
    servers = await McpServers.start([peer("p", "serve")], hooks=hooks, on_problem=problems)
    try:
        assert text_of(await servers.connections["p"].call_tool("elicit", {})) == "accept:Ada"
    finally:
        await servers.aclose()
    assert len(asked) == 1
    assert isinstance(asked[0], FormElicitation)
    assert asked[0].message == "Your name?"
    assert "name" in asked[0].requested_schema["properties"]


@pytest.mark.process
async def test_without_a_hook_or_with_a_failing_one_elicitation_is_declined(
    problems: Problems,
) -> None:
    async def broken(request: ElicitationRequest) -> ElicitationAnswer:
        raise RuntimeError("the editor went away")

    async def unsendable(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer(action="accept", content={"name": {"nested": "object"}})

    for hooks in (
        ClientSideHooks(roots=list),
        ClientSideHooks(roots=list, elicit=broken),
        ClientSideHooks(roots=list, elicit=unsendable),
    ):
        servers = await McpServers.start([peer("p", "serve")], hooks=hooks, on_problem=problems)
        try:
            assert text_of(await servers.connections["p"].call_tool("elicit", {})) == "decline:"
        finally:
            await servers.aclose()


@pytest.mark.process
async def test_sampling_is_refused_with_a_clear_error(problems: Problems) -> None:
    servers = await McpServers.start(
        [peer("p", "serve")], hooks=ClientSideHooks(roots=list), on_problem=problems
    )
    try:
        # The peer lets the refusal propagate, so its tool call fails with our error.
        with pytest.raises(
            McpCallError, match=r"'p' answered an error: Sampling not supported \(code -32600\)"
        ):
            await servers.connections["p"].call_tool("sample", {})
        # The server was told, not crashed: it still answers.
        assert text_of(await servers.connections["p"].call_tool("noop", {})) == "ok"
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_roots_and_elicitation_are_advertised_sampling_is_not(problems: Problems) -> None:
    servers = await McpServers.start(
        [peer("p", "serve")], hooks=ClientSideHooks(roots=list), on_problem=problems
    )
    try:
        advertised = json.loads(
            text_of(await servers.connections["p"].call_tool("capabilities", {}))
        )
    finally:
        await servers.aclose()
    assert "roots" in advertised and "elicitation" in advertised
    assert "sampling" not in advertised
