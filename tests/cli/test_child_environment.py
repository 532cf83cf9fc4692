"""The sidecar's own API key never reaches a command it runs, over the wire.

``acp-sidecar`` runs with ``OPENAI_API_KEY`` in its environment (a subprocess once, else in
process with the key in this process's environment while it serves); a console
``!printenv …; env`` prompt (or a model running ``env``) must not put the key into a card,
an update, the session log or the model's next request — unless the user passed it through
with ``--pass-env``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from pathlib import Path
from typing import Any

import pytest

from tests.agent.model.fake_openai import ScriptedOpenAI, answer, calling, tool_call
from tests.in_process import serving
from tests.server.wire import WireClient, spawned

SHOW_ENV = "printenv OPENAI_API_KEY; printenv DEEPSEEK_API_KEY; env"


async def run_console(
    store: Path, key: str, *args: str, subprocess: bool = False
) -> tuple[list[dict[str, Any]], str]:
    """Run ``!SHOW_ENV`` in the console of a sidecar whose environment holds ``key`` (a
    subprocess, or in process); everything the sidecar wrote, and the command's output as
    its card showed it."""
    env = {"OPENAI_API_KEY": key, "DEEPSEEK_API_KEY": key, "ACP_SIDECAR_TEST_MARK": "seen"}
    async with contextlib.AsyncExitStack() as stack:
        if subprocess:
            wire, process = await stack.enter_async_context(
                spawned("--store", str(store), *args, env=env, stderr=asyncio.subprocess.DEVNULL)
            )
        else:
            wire, _server = await stack.enter_async_context(
                serving("--store", str(store), *args, env=env)
            )
        await wire.initialize()
        session = await wire.new_session(str(store))
        await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        response = await wire.next_response(await wire.start_prompt(session, f"!{SHOW_ENV}"))
        assert response["result"]["stopReason"] == "end_turn"
        if subprocess:
            wire.close()
            assert await asyncio.wait_for(process.wait(), 10) == 0
    return wire.received, card_output(wire)


def card_output(wire: WireClient) -> str:
    """The text of the console fallback of the command's terminal card (its ``console``
    fences: the card also shows the command itself)."""
    texts = [
        block["content"]["text"]
        for message in wire.updates
        if message["params"]["update"]["sessionUpdate"] == "tool_call_update"
        for block in message["params"]["update"].get("content") or []
        if block.get("type") == "content"
        and block["content"]["text"].lstrip("`").startswith("console")
    ]
    return "\n".join(texts)


@pytest.mark.process
async def test_a_command_never_sees_the_sidecars_api_key(tmp_path: Path) -> None:
    key = f"sk-test-{secrets.token_hex(16)}"
    received, output = await run_console(tmp_path, key, subprocess=True)
    assert "ACP_SIDECAR_TEST_MARK=seen" in output  # the command ran and printed its env
    assert "OPENAI_API_KEY" not in output and "DEEPSEEK_API_KEY" not in output
    assert key not in json.dumps(received)  # no card, no update, no message at all
    [log] = tmp_path.glob("*.jsonl")
    assert "ACP_SIDECAR_TEST_MARK=seen" in log.read_text()
    assert key not in log.read_text()


async def test_a_secret_passed_through_is_seen(tmp_path: Path) -> None:
    key = f"sk-test-{secrets.token_hex(16)}"
    _received, output = await run_console(tmp_path, key, "--pass-env", "OPENAI_API_KEY")
    assert f"OPENAI_API_KEY={key}" in output
    [log] = tmp_path.glob("*.jsonl")
    assert key in log.read_text()


async def test_a_model_running_env_never_reads_the_key(tmp_path: Path) -> None:
    key = f"sk-test-{secrets.token_hex(16)}"
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(
            calling(tool_call(0, "call_env", "bash", json.dumps({"command": SHOW_ENV}))),
            answer("Done."),
        )
        async with serving(
            "--model",
            "test-model",
            "--base-url",
            endpoint.base_url,
            "--store",
            str(tmp_path),
            env={"OPENAI_API_KEY": key, "ACP_SIDECAR_TEST_MARK": "seen"},
        ) as (wire, _server):
            await wire.initialize()
            session = await wire.new_session(str(tmp_path))
            await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
            response = await wire.next_response(await wire.start_prompt(session, "show env"))
            assert response["result"]["stopReason"] == "end_turn"
    first, second = endpoint.requests
    assert first.headers["authorization"] == f"Bearer {key}"  # the sidecar still uses it
    result = second.messages[-1]
    assert result["role"] == "tool" and "ACP_SIDECAR_TEST_MARK=seen" in result["content"]
    assert key not in json.dumps(second.body)
    assert key not in json.dumps(wire.received)
