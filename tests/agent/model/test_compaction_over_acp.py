"""Compaction and the context meter end to end: ``acp-sidecar`` (in process) with a model
whose window is small, a client on the raw wire (the pinned SDK does not know compaction
updates) that advertised ``session.compaction``; every message it reads is checked against
the ACP schema. Loading the session afterwards replays every turn and the meter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent.model.fake_openai import Reply, ScriptedOpenAI, answer, say, stop, usage
from tests.in_process import serving
from tests.server.wire import WireClient


def prompt(n: int) -> str:
    return f"PROMPT-{n} " + "lorem ipsum dolor sit amet " * 110


def kinds(wire: WireClient) -> list[str]:
    return [u["params"]["update"]["sessionUpdate"] for u in wire.updates]


async def run(wire: WireClient, session: str, text: str) -> None:
    response = await wire.next_response(await wire.start_prompt(session, text))
    assert response["result"]["stopReason"] == "end_turn", response


async def test_compaction_and_the_meter_over_the_wire(tmp_path: Path) -> None:
    async with ScriptedOpenAI() as endpoint:
        replies = [answer(f"Answer {n}.") for n in range(1, 5)]
        for n, reply in enumerate(replies, 1):
            reply.usage = usage(1000 * n, 10)
        summary = Reply([*say("Prompts 1-3 were lorem ipsum."), stop()], usage=usage(3000, 9))
        fifth = Reply([*say("Answer 5."), stop()], usage=usage(2100, 10))
        endpoint.script(*replies, summary, fifth)
        env = {
            "TEST_MODEL_BASE_URL": endpoint.base_url,
            "TEST_MODEL_WINDOW": "6000",
            "TEST_MODEL_MAX_TOKENS": "500",
            "TEST_MODEL_PRICES": "1,2,USD",
        }
        args = ("--driver", "tests.agent.model.configured:driver", "--store", str(tmp_path))
        async with serving(*args, env=env) as (wire, _server):
            await wire.initialize(session={"compaction": {}})
            session = await wire.new_session(str(tmp_path))
            for n in range(1, 5):
                await run(wire, session, prompt(n))
            assert "compaction_update" not in kinds(wire)
            wire.updates.clear()
            await run(wire, session, prompt(5))
            updates = [u["params"]["update"] for u in wire.updates]
            statuses = [u["status"] for u in updates if u["sessionUpdate"] == "compaction_update"]
            assert statuses == ["in_progress", "completed"]
            meter = [u for u in updates if u["sessionUpdate"] == "usage_update"]
            # the summary's tokens are no reading of the conversation's context; its cost counts
            assert [m["used"] for m in meter] == [2110]
            spent = sum(1000 * n + 2 * 10 for n in range(1, 5)) + 3000 + 18 + 2100 + 20
            assert abs(meter[0]["cost"]["amount"] - spent / 1e6) < 1e-12
        assert "PROMPT-1 " not in str(endpoint.requests[-1].messages)

        # loaded again by another server: every prompt is replayed, and the meter
        async with serving(*args, env=env) as (wire, _server):
            await wire.initialize(session={"compaction": {}})
            await wire.result(
                "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
            )
            replayed = [u["params"]["update"] for u in wire.updates]
            prompts = [
                u["content"]["text"].split()[0]
                for u in replayed
                if u["sessionUpdate"] == "user_message_chunk"
            ]
            assert prompts == [f"PROMPT-{n}" for n in range(1, 6)]
            meters: list[Any] = [u for u in replayed if u["sessionUpdate"] == "usage_update"]
            assert [m["used"] for m in meters] == [1010, 2010, 3010, 4010, 2110]
            # the compaction too, once, as it ended, for this client that shows them
            compactions = [u for u in replayed if u["sessionUpdate"] == "compaction_update"]
            assert [u["status"] for u in compactions] == ["completed"]
