"""The official TypeScript SDK's experimental v2 *unstable* client (2.4.0) drives a spawned
``--acp-v2`` sidecar on the model driver (the scripted endpoint, in this process): a turn whose
model writes a Markdown plan, a turn whose model delegates a ``task`` to a child, then
``session/fork``. The SDK parses every answer and update by its own unstable v2 types; every
line the sidecar wrote is judged here by ``schema.unstable.json`` too."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.acp_schema import update_kinds, validate_agent_message
from tests.agent.model.fake_openai import Reply, answer, stop
from tests.agent.model.fake_openai import tool_call as model_call
from tests.conformance.v2.node_peer import run_peer
from tests.server.subagent_harness import ENV, RoutedOpenAI, task_call

DOCUMENT = "# Plan\n\n1. Read a.txt\n"
PLAN_TEXT = "make a plan"
TASK_TEXT = "delegate it"
JOB = "Report what a.txt says."
METHODS = [
    "initialize",
    "session/new",
    "session/prompt",
    "session/prompt",
    "session/fork",
    "session/list",
]
"""The peer awaits each request before the next: the answers come in this order."""


def script(endpoint: RoutedOpenAI) -> None:
    plan = model_call(0, "call_p", "plan", json.dumps({"markdown": DOCUMENT}))
    endpoint.route(PLAN_TEXT, Reply([plan, stop("tool_calls")]), answer("Planned."))
    task = task_call(0, "call_a", "Read a", JOB)
    endpoint.route(TASK_TEXT, Reply([task, stop("tool_calls")]), answer("Delegated."))
    endpoint.route(JOB, answer("a says 1."))


@pytest.mark.process  # node runs the SDK's client, which spawns the sidecar
async def test_the_typescript_v2_unstable_client_takes_a_plan_a_child_and_a_fork(
    tmp_path: Path,
) -> None:
    endpoint = RoutedOpenAI()
    script(endpoint)
    async with endpoint:
        sidecar = [
            sys.executable, "-m", "acp_sidecar", "--acp-v2", "--model", "test-model",
            "--base-url", endpoint.base_url, "--store", str(tmp_path / "store"),
        ]  # fmt: skip
        seen = await run_peer(
            "peer_unstable.mjs", sidecar, tmp_path, **ENV, PLAN_TEXT=PLAN_TEXT, TASK_TEXT=TASK_TEXT
        )
    parent = seen["sessionId"]
    child = f"{parent}~task~call_a"
    assert seen["initialized"]["capabilities"]["session"]["fork"] == {}
    # What the SDK handed back for the parent session, parsed by its unstable types.
    plans = [u for u in seen["planned"] if u["sessionUpdate"] == "plan_update"]
    assert [p["plan"] for p in plans] == [
        {"type": "markdown", "planId": "markdown", "content": DOCUMENT}
    ]
    subagents = [u for u in seen["delegated"] if u["sessionUpdate"] == "subagent_update"]
    assert subagents[0]["sessionId"] == child and subagents[0]["title"] == "Read a"
    assert subagents[-1]["state"]["state"] == "idle"
    assert seen["delegated"][-1]["state"] == "idle"
    fork = seen["forked"]["sessionId"]
    assert {s["sessionId"] for s in seen["listed"]["sessions"]} == {parent, fork}
    # Every line the sidecar wrote, judged by the unstable v2 schema.
    lines = [json.loads(line) for line in seen["written"].splitlines()]
    answers = [m for m in lines if "id" in m and "method" not in m]
    for message, method in zip(answers, METHODS, strict=True):
        validate_agent_message(message, request_method=method, unstable=True, version=2)
    kinds = set()
    for message in lines:
        if message.get("method") == "session/update":
            validate_agent_message(message, unstable=True, version=2)
            kinds.add(message["params"]["update"]["sessionUpdate"])
    assert kinds <= update_kinds(unstable=True, version=2)
    assert {"plan_update", "subagent_update", "session_message", "session_message_chunk"} <= kinds
    child_kinds = {
        m["params"]["update"]["sessionUpdate"]
        for m in lines
        if m.get("method") == "session/update" and m["params"]["sessionId"] == child
    }
    assert {"session_message", "session_message_chunk", "agent_message_chunk"} <= child_kinds
