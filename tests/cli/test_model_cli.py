"""``acp-sidecar --model … --base-url …`` serves prompts with a model, end to end.

The sidecar is driven over the wire (a subprocess for the whole model turn, in process for the
rest); the model is the scripted OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.agent.model.fake_openai import ScriptedOpenAI, answer, calling, think, tool_call
from tests.in_process import run_cli, serving
from tests.server.wire import WireClient, start_sidecar


async def run_sidecar(
    *args: str, env: dict[str, str]
) -> tuple[WireClient, asyncio.subprocess.Process]:
    return await start_sidecar(
        *args, "--tools", "tests.tooling:TOOLS", env=env, stderr=asyncio.subprocess.DEVNULL
    )


async def stop(wire: WireClient, process: asyncio.subprocess.Process) -> None:
    wire.close()
    assert await asyncio.wait_for(process.wait(), 10) == 0


@pytest.mark.process
async def test_a_model_turn_with_a_tool_call_and_history_on_the_next_turn(tmp_path: Path) -> None:
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(
            calling(*think("Look at it."), tool_call(0, "call_1", "look", '{"path": "README.md"}')),
            answer("It is a README."),
            answer("Still a README."),
        )
        wire, process = await run_sidecar(
            "--model",
            "test-model",
            "--base-url",
            endpoint.base_url,
            "--store",
            str(tmp_path),
            env={"OPENAI_API_KEY": "sk-test"},
        )
        try:
            init = await wire.initialize()
            assert init["agentCapabilities"]["promptCapabilities"]["embeddedContext"] is True
            session = await wire.new_session(str(tmp_path))
            response = await wire.next_response(await wire.start_prompt(session, "what is this?"))
            assert response["result"]["stopReason"] == "end_turn"
            updates = [u["params"]["update"] for u in wire.updates]
            kinds = [u["sessionUpdate"] for u in updates]
            assert "agent_thought_chunk" in kinds and "tool_call" in kinds
            assert (
                "".join(
                    u["content"]["text"]
                    for u in updates
                    if u["sessionUpdate"] == "agent_message_chunk"
                )
                == "It is a README."
            )
            await wire.next_response(await wire.start_prompt(session, "and now?"))
        finally:
            await stop(wire, process)
        first, second, third = endpoint.requests
        assert first.body["model"] == "test-model" and first.body["stream"] is True
        assert {t["function"]["name"] for t in first.body["tools"]} >= {"look", "note", "stream"}
        assert (
            second.messages[-1]["role"] == "tool"
            and "looked at README.md" in second.messages[-1]["content"]
        )
        # The second prompt carries the whole first turn, read back from the session log.
        roles = [m["role"] for m in third.messages]
        assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
        assert third.messages[-1]["content"] == "and now?"


async def test_an_unreachable_endpoint_is_a_clear_message_not_a_hang(tmp_path: Path) -> None:
    env = {
        "ACP_SIDECAR_MODEL": "m",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "OPENAI_API_KEY": "k",
    }
    async with serving("--store", str(tmp_path), "--tools", "tests.tooling:TOOLS", env=env) as (
        wire,
        _server,
    ):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        response = await wire.next_response(await wire.start_prompt(session, "hi"), timeout=60)
        assert response["result"]["stopReason"] == "end_turn"
        text = " ".join(wire.texts())
        assert "127.0.0.1:9" in text or "connect" in text.lower()
        assert "Traceback" not in text


async def test_the_request_limit_and_a_bad_cap_from_the_command_line(tmp_path: Path) -> None:
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(
            calling(tool_call(0, "call_1", "look", '{"path": "a"}')), answer("never sent")
        )
        async with serving(
            *("--model", "m", "--base-url", endpoint.base_url, "--store", str(tmp_path)),
            *("--tools", "tests.tooling:TOOLS", "--max-turn-requests", "1"),
            env={"OPENAI_API_KEY": "k"},
        ) as (wire, _server):
            await wire.initialize()
            session = await wire.new_session(str(tmp_path))
            response = await wire.next_response(await wire.start_prompt(session, "look"))
            assert response["result"]["stopReason"] == "max_turn_requests"
            assert len(endpoint.requests) == 1
    async with serving(
        *("--model", "m", "--max-parallel-tools", "0", "--store", str(tmp_path)),
        *("--tools", "tests.tooling:TOOLS"),
    ) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        response = await wire.next_response(await wire.start_prompt(session, "hi"))
        assert response["result"]["stopReason"] == "end_turn"
        assert "cannot use the configured model" in wire.texts()[0]
        assert "parallel" in wire.texts()[0].lower()


def test_help_documents_the_token_cap_and_the_pass_through() -> None:
    done = run_cli("serve", "--help")
    assert done.returncode == 0
    help_text = " ".join(done.stdout.split())
    for documented in (
        "--max-tokens N",
        "$ACP_SIDECAR_MAX_TOKENS, else 8192",
        "0 sends no cap",
        "--pass-env NAME",
        "$ACP_SIDECAR_PASS_ENV",
        "OPENAI_API_KEY",
    ):
        assert documented in help_text
