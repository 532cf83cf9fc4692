"""What a real model server did to a session, replayed against the sidecar (in process).

Each test runs ``acp-sidecar --model … --base-url …`` over the wire against the scripted
OpenAI-compatible server, most of them in its strict mode: it answers HTTP 500, as a popular
local server does, to any request its chat template refuses (an assistant message with
``null`` content, two user messages in a row). A session must survive whatever one request
met: the next prompt is answered.
"""

from __future__ import annotations

import asyncio
import io
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.agent.model.fake_openai import (
    TEMPLATE_TRACE,
    Pause,
    Reply,
    ScriptedOpenAI,
    answer,
    call,
    calling,
    say,
    stop,
    template_error,
    tool_call,
)
from tests.agent.model.harness import assert_well_formed
from tests.in_process import serving
from tests.server.wire import WireClient

LOADING = Reply(
    status=503,
    body={"error": {"message": "Loading model", "type": "unavailable_error"}},
    headers={"x-should-retry": "false"},
)
"""What a local server answers while it loads the model (not retried, to keep tests fast)."""


@asynccontextmanager
async def model_sidecar(
    endpoint: ScriptedOpenAI,
    store: Path,
    *args: str,
    env: dict[str, str] | None = None,
    stderr: list[bytes] | None = None,
) -> AsyncIterator[WireClient]:
    """An initialized sidecar answering with the scripted endpoint; it must shut down
    cleanly. With ``stderr``, what the sidecar logged is appended to it once it has."""
    logged = io.StringIO()
    async with serving(
        "--model",
        "test-model",
        "--base-url",
        endpoint.base_url,
        "--store",
        str(store),
        "--tools",
        "tests.tooling:TOOLS",
        *args,
        env={"OPENAI_API_KEY": "sk-test", **(env or {})},
        stderr=logged,
    ) as (wire, _server):
        await wire.initialize()
        yield wire
    if stderr is not None:
        stderr.append(logged.getvalue().encode())


async def prompt(wire: WireClient, session: str, text: str) -> tuple[str, str]:
    """Run a prompt; its stop reason and the agent text it showed."""
    shown = len(wire.texts())
    response = await wire.next_response(await wire.start_prompt(session, text))
    return response["result"]["stopReason"], "".join(wire.texts()[shown:])


def kinds(wire: WireClient) -> list[str]:
    return [u["params"]["update"]["sessionUpdate"] for u in wire.updates]


def contents(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(message.get("content")) for message in messages)


async def test_an_endpoint_failure_is_shown_and_replayed_but_never_sent_to_the_model(
    tmp_path: Path,
) -> None:
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(LOADING, answer("Hello."))
        async with model_sidecar(endpoint, tmp_path) as wire:
            session = await wire.new_session(str(tmp_path))
            stop_reason, shown = await prompt(wire, session, "hi")
            assert stop_reason == "end_turn"
            assert f"The model endpoint {endpoint.base_url} failed with HTTP 503" in shown
            assert "Loading model" in shown
            assert await prompt(wire, session, "again") == ("end_turn", "Hello.")
        async with model_sidecar(endpoint, tmp_path) as reloaded:
            await reloaded.result(
                "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
            )
            replayed = "".join(reloaded.texts())
    # The user saw it, live and on reload; the model was never told it had said it.
    assert replayed == shown + "Hello."
    sent = endpoint.requests[-1].messages
    assert "Loading model" not in contents(sent)
    assert "assistant" not in [message["role"] for message in sent]


async def test_assistant_messages_with_tool_calls_send_empty_content_not_null(
    tmp_path: Path,
) -> None:
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(
            calling(tool_call(0, "call_1", "look", '{"path": "README.md"}')),
            answer("It is a README."),
            answer("Still a README."),
        )
        async with model_sidecar(endpoint, tmp_path) as wire:
            session = await wire.new_session(str(tmp_path))
            assert await prompt(wire, session, "what is this?") == ("end_turn", "It is a README.")
            # The second prompt rebuilds the first turn's messages from the session log.
            assert await prompt(wire, session, "and now?") == ("end_turn", "Still a README.")
    assert endpoint.refused == []
    assistant = endpoint.requests[-1].messages[2]
    assert assistant["content"] == "" and assistant["tool_calls"][0]["id"] == "call_1"


async def test_a_refused_request_does_not_poison_the_rest_of_the_session(
    tmp_path: Path,
) -> None:
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(LOADING, answer("Hello."), answer("Bye."))
        async with model_sidecar(endpoint, tmp_path) as wire:
            session = await wire.new_session(str(tmp_path))
            stop_reason, shown = await prompt(wire, session, "hi")
            assert stop_reason == "end_turn" and "Loading model" in shown
            assert await prompt(wire, session, "are you there?") == ("end_turn", "Hello.")
            assert await prompt(wire, session, "bye") == ("end_turn", "Bye.")
    assert endpoint.refused == []
    sent = endpoint.requests[-1].messages
    assert_well_formed(sent)
    assert sent[1:] == [
        {"role": "user", "content": "hi\n\nare you there?"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "bye"},
    ]


async def test_a_server_error_body_is_bounded_for_the_user_and_logged_in_full(
    tmp_path: Path,
) -> None:
    key = f"sk-test-{secrets.token_hex(12)}"
    refusal = template_error("Value is not callable: null")
    error = refusal.body["error"]
    # A server that echoes the request's credentials in its error body.
    error["message"] = error["message"].replace(
        "Traceback", f"request: authorization=Bearer {key}\nTraceback"
    )
    assert len(error["message"]) > 1900
    logged: list[bytes] = []
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(refusal)
        async with model_sidecar(
            endpoint, tmp_path, env={"OPENAI_API_KEY": key}, stderr=logged
        ) as wire:
            session = await wire.new_session(str(tmp_path))
            stop_reason, shown = await prompt(wire, session, "hi")
    assert stop_reason == "end_turn"
    assert shown.startswith(
        f"The model endpoint {endpoint.base_url} failed with HTTP 500: "
        "Value is not callable: null at row 1, column 30"
    )
    assert len(shown) < 500
    assert TEMPLATE_TRACE not in shown and "{%-" not in shown and key not in shown
    log = logged[0].decode()
    assert TEMPLATE_TRACE in log and "Value is not callable: null" in log
    assert key not in log
    assert key not in (tmp_path / f"{session}.jsonl").read_text()


async def test_a_stream_that_ends_without_a_finish_reason_is_incomplete(
    tmp_path: Path,
) -> None:
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(
            # The stream closes cleanly mid-answer: the call may be cut off.
            Reply(
                [*say("Let me look."), tool_call(0, "call_cut", "look", '{"path": "a"}')],
                done=False,
            ),
            Reply([], done=False),  # an empty 200
            # The connection drops mid-answer.
            Reply([*say("Half"), call(0, call_id="call_torn", name="look")], drop=True),
            answer("Whole."),
        )
        async with model_sidecar(endpoint, tmp_path) as wire:
            session = await wire.new_session(str(tmp_path))
            stop_reason, shown = await prompt(wire, session, "look at a")
            assert stop_reason == "end_turn"
            assert shown.startswith("Let me look.\n\nThe model's answer was cut off")
            stop_reason, shown = await prompt(wire, session, "say something")
            assert stop_reason == "end_turn"
            assert shown.startswith("The model's answer was cut off")
            stop_reason, shown = await prompt(wire, session, "try again")
            assert stop_reason == "end_turn"
            assert shown == (
                f"Half\n\nThe model's answer was cut off: the endpoint {endpoint.base_url} "
                "ended the stream without finishing it. The tool call it was still sending "
                "(`look`) was not run."
            )
            assert await prompt(wire, session, "once more") == ("end_turn", "Whole.")
    assert "tool_call" not in kinds(wire)  # no call of a cut-off answer was started
    assert len(endpoint.requests) == 4 and endpoint.refused == []
    assert_well_formed(endpoint.requests[-1].messages)


async def test_a_turn_cancelled_before_any_output_leaves_a_well_formed_history(
    tmp_path: Path,
) -> None:
    pause = Pause()
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(Reply([pause, *say("never shown"), stop()]), answer("Fine."))
        async with model_sidecar(endpoint, tmp_path) as wire:
            session = await wire.new_session(str(tmp_path))
            started = await wire.start_prompt(session, "think hard")
            await asyncio.wait_for(pause.reached.wait(), 5)
            await wire.notify("session/cancel", {"sessionId": session})
            response = await wire.next_response(started)
            assert response["result"]["stopReason"] == "cancelled"
            assert await prompt(wire, session, "never mind") == ("end_turn", "Fine.")
    assert endpoint.refused == []
    sent = endpoint.requests[-1].messages
    assert_well_formed(sent)
    assert sent[1:] == [{"role": "user", "content": "think hard\n\nnever mind"}]


async def test_max_tokens_caps_every_request_and_ends_the_turn_with_max_tokens(
    tmp_path: Path,
) -> None:
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(Reply([*say(*["loop "] * 20), stop("length")]), answer("Done."))
        async with model_sidecar(endpoint, tmp_path, "--max-tokens", "20") as wire:
            session = await wire.new_session(str(tmp_path))
            stop_reason, shown = await prompt(wire, session, "go")
            assert stop_reason == "max_tokens"
            assert shown.startswith("loop " * 20)
            assert "20-token limit" in shown and "--max-tokens" in shown
            assert await prompt(wire, session, "go on") == ("end_turn", "Done.")
    assert [request.body["max_tokens"] for request in endpoint.requests] == [20, 20]
    assert "max_completion_tokens" not in endpoint.requests[0].body
    assert "token limit" not in contents(endpoint.requests[-1].messages)
