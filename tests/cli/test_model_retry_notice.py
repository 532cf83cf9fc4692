"""A model request the client retries is told to the user while the turn goes on: a
``notice`` where the client advertises ``session.notices``, else an agent message. Over the raw
wire (the pinned SDK does not know notices), the sidecar in process, against the scripted OpenAI-compatible server;
every message the sidecar writes is checked against the official schema by the wire client.
The retry is the ``openai`` client's own: the sidecar only observes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.model.fake_openai import Reply, ScriptedOpenAI, answer
from tests.in_process import serving

OVERLOADED = Reply(
    status=503,
    body={"error": {"message": "overloaded", "type": "unavailable_error"}},
    headers={"retry-after-ms": "10"},  # retried at once: the test stays fast
)


@pytest.mark.parametrize("capable", [True, False], ids=["notices", "no-notices"])
async def test_a_retried_model_request_is_told_and_the_turn_goes_on(
    tmp_path: Path, capable: bool
) -> None:
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(OVERLOADED, answer("Hello."))
        async with serving(
            "--model",
            "test-model",
            "--base-url",
            endpoint.base_url,
            "--store",
            str(tmp_path / "store"),
            env={"OPENAI_API_KEY": "sk-test"},
        ) as (wire, _server):
            await wire.initialize(**({"session": {"notices": {}}} if capable else {}))
            session = await wire.new_session(str(tmp_path))
            response = await wire.next_response(await wire.start_prompt(session, "hi"))
            assert response["result"]["stopReason"] == "end_turn"
            updates = [u["params"]["update"] for u in wire.updates]
    assert len(endpoint.requests) == 2  # the client retried once, then got its answer
    notices = [u for u in updates if u["sessionUpdate"] == "notice"]
    texts = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    if capable:
        [notice] = notices
        assert notice["severity"] == "info"
        assert notice["title"] == "The model request failed; retrying (1 of 2)."
        assert endpoint.base_url in notice["description"]
        assert texts == "Hello."
    else:
        assert notices == []
        assert texts.startswith("The model request failed; retrying (1 of 2).")
        assert texts.endswith("Hello.")
