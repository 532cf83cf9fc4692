"""Stored sessions for the resume tests, recorded through the wire over v1 or v2 with the
console driver (its ``/tool {args}`` prompts run a tool, auto mode asks nothing), and the
clients that resume them: a v1 one (``session/load``) and a v2 one (``session/resume``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from tests.acp_schema import validate_agent_message
from tests.conformance.v2.test_prompt_lifecycle import CLIENT_INFO, prompt, until_idle
from tests.server.wire import WireClient, served

V1_CAPABILITIES: dict[str, Any] = {"_meta": {"terminal_output": True}, "plan": {}}
"""A v1 client that draws terminals and plan operations, as every v2 client does (plan
operations are in v1's unstable schema, which judges what it is sent)."""


def sidecar(store: Path) -> AcpServer:
    """A console-driven sidecar (tools run from ``/name {args}``) on ``store``, v2 on."""
    return AcpServer(None, cancel_grace=0.3, acp_v2=True, store=lambda: SessionStore(store))


@asynccontextmanager
async def v1_client(store: Path, **capabilities: Any) -> AsyncIterator[WireClient]:
    """A v1 connection to a sidecar on ``store``."""
    async with served(sidecar(store)) as (client, _):

        def check(message: Any) -> None:
            assert isinstance(message, dict)
            is_response = "id" in message and "method" not in message
            method = client.sent_methods.get(message["id"]) if is_response else None
            validate_agent_message(message, request_method=method, unstable=True)

        client.check = check  # type: ignore[method-assign]
        await client.initialize(**(capabilities or V1_CAPABILITIES))
        yield client


@asynccontextmanager
async def v2_client(
    store: Path, **capabilities: Any
) -> AsyncIterator[tuple[WireClient, AcpServer]]:
    """A v2 connection to a sidecar on ``store``, every message judged by the v2 schema."""
    async with served(sidecar(store)) as (client, server):
        client.version = 2
        params = {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": capabilities}
        await client.result("initialize", params)
        client.initialized = True
        yield client, server


async def record_v1(store: Path, cwd: Path, prompts: Sequence[str]) -> str:
    """A session in ``cwd`` that ran ``prompts`` over v1 in auto mode; its id."""
    async with v1_client(store) as client:
        session_id = await client.new_session(str(cwd))
        await client.result("session/set_mode", {"sessionId": session_id, "modeId": "auto"})
        for text in prompts:
            answer = await client.next_response(await client.start_prompt(session_id, text))
            assert answer["result"]["stopReason"] == "end_turn", answer
    return session_id


async def record_v2(store: Path, cwd: Path, prompts: Sequence[str]) -> str:
    """A session in ``cwd`` that ran ``prompts`` over v2 in auto mode; its id."""
    async with v2_client(store) as (client, _):
        session_id = (await client.result("session/new", {"cwd": str(cwd)}))["sessionId"]
        auto = {"sessionId": session_id, "configId": "mode", "type": "id", "value": "auto"}
        await client.result("session/set_config_option", auto)
        for text in prompts:
            await client.result("session/prompt", prompt(session_id, text))
            updates = await until_idle(client, session_id)
            assert updates[-1].get("stopReason") == "end_turn", updates[-1]
    return session_id


async def until_answer(client: WireClient, msg_id: Any) -> tuple[list[dict[str, Any]], Any]:
    """The updates sent before the answer to ``msg_id`` (kept ones first), and the answer."""
    client.updates.clear()
    answer = await client.next_response(msg_id)
    updates = [message["params"]["update"] for message in client.updates]
    client.updates.clear()
    return updates, answer


def resume_params(session_id: str, cwd: Path, **more: Any) -> dict[str, Any]:
    return {"sessionId": session_id, "cwd": str(cwd), **more}
