"""A session recorded live in one sidecar process — the model on the scripted endpoint: text,
a tool call, a prompt steered in mid-turn, a plan — and its fork, loaded in a fresh process:
the replay is the updates sent live, ids included, but for what replay legitimately sends
otherwise (each exception is named where it is made). The official SDK client is the peer;
every message is checked against the schema (the fork's answer and the plan operations
against the unstable one)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp.schema import ClientCapabilities, PlanCapabilities

from tests.agent.model.fake_openai import (
    Pause,
    Reply,
    ScriptedOpenAI,
    answer,
    calling,
    say,
    stop,
    think,
)
from tests.agent.model.fake_openai import tool_call as model_call
from tests.fakes import AllowingEditor
from tests.sdk import Transcript, new_session, prompt, sdk_sidecar
from tests.server.test_steering import HANG_GUARD, steer

pytestmark = pytest.mark.process  # two sidecar processes, one after the other, on one store

ENTRIES = [
    {"content": "Read a.txt", "priority": "high", "status": "completed"},
    {"content": "Say what it holds", "priority": "medium", "status": "in_progress"},
]
PLANS = ClientCapabilities(plan=PlanCapabilities())


def sidecar(endpoint: ScriptedOpenAI, store: Path, transcript: Transcript) -> Any:
    """A model sidecar on ``endpoint`` for a client that takes plan operations."""
    return sdk_sidecar(
        AllowingEditor(),
        *("--model", "test-model", "--base-url", endpoint.base_url),
        store=store,
        capabilities=PLANS,
        observers=[transcript],
        unstable=True,
        env={"OPENAI_API_KEY": "sk-test"},
    )


async def test_a_steered_session_and_its_fork_replay_as_sent_live(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    store, cwd = tmp_path / "store", str(tmp_path)
    pause = Pause()
    live = Transcript()
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(
            Reply(
                [
                    *think("Read ", "it first."),
                    *say("Reading ", "first."),
                    pause,
                    model_call(0, "call_read", "read", '{"path": "a.txt"}'),
                    stop("tool_calls"),
                ]
            ),
            calling(model_call(0, "call_plan", "plan", json.dumps({"entries": ENTRIES}))),
            answer("It holds ", "alpha."),
            answer("Forked ", "reply."),
        )
        async with sidecar(endpoint, store, live) as (connection, _wire):
            parent = await new_session(connection, tmp_path)
            turn = asyncio.create_task(prompt(connection, parent, "read a.txt"))
            await asyncio.wait_for(pause.reached.wait(), HANG_GUARD)
            assert await steer(connection, parent, "and keep a plan") == "injected"
            pause.release.set()
            assert await turn == "end_turn"
            forked = await connection.fork_session(session_id=parent, cwd=cwd, mcp_servers=[])
            child = forked.session_id
            assert await prompt(connection, child, "and in the fork?") == "end_turn"
        # The live process has exited (cleanly: ``sdk_sidecar`` checks it); a fresh one loads.
        fresh = Transcript()
        async with sidecar(endpoint, store, fresh) as (connection, _wire):
            for session in (parent, child):
                await connection.load_session(cwd=cwd, session_id=session, mcp_servers=[])
        assert endpoint.refused == [] and len(endpoint.requests) == 4  # none for the loads
    sent = {parent: live.updates(parent), child: live.updates(child)}
    replayed = {parent: fresh.updates(parent), child: fresh.updates(child)}

    history = redrawn(sent[parent])
    assert [(u["sessionUpdate"], u.get("messageId") or u.get("toolCallId")) for u in history] == [
        ("user_message_chunk", ids_of(history)[0]),
        ("agent_thought_chunk", ids_of(history)[1]),
        ("agent_message_chunk", ids_of(history)[2]),
        ("tool_call", "call_read"),
        ("tool_call_update", "call_read"),
        ("user_message_chunk", ids_of(history)[3]),  # steered in: after the step's tool batch
        ("tool_call", "call_plan"),
        ("tool_call_update", "call_plan"),
        ("plan_update", None),
        ("agent_message_chunk", ids_of(history)[4]),
    ]
    assert len(set(ids_of(history))) == 5
    assert [u["name"] for u in history if u["sessionUpdate"] == "tool_call"] == ["read", "plan"]
    assert redrawn(replayed[parent]) == history
    # The fork holds the parent's history under the parent's ids, then its own turn.
    assert redrawn(replayed[child]) == history + redrawn(sent[child])
    assert [u["content"]["text"] for u in redrawn(sent[child])] == [
        "and in the fork?",
        "Forked reply.",
    ]
    # What a load ends with: the session's mode and what session/list shows of it.
    for session, title in ((parent, "read a.txt"), (child, "Fork: read a.txt")):
        ended = [u for u in replayed[session] if u["sessionUpdate"] != "available_commands_update"]
        mode, info = ended[-2:]
        assert mode == {"sessionUpdate": "current_mode_update", "currentModeId": "ask"}
        assert info["sessionUpdate"] == "session_info_update" and info["title"] == title


CHUNKS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")


def ids_of(updates: list[dict[str, Any]]) -> list[str]:
    return [u["messageId"] for u in updates if u["sessionUpdate"] in CHUNKS]


def redrawn(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``updates`` as a replay must redraw them, live or replayed: the same updates in the
    same order, with these exceptions, each legitimate:

    - a message's chunks as one chunk: live, the model's text streams in deltas; the log keeps
      each message whole, so replay sends it in one chunk (same kind, same ``messageId``);
    - no ``tool_call_update`` that only says ``in_progress``: live progress of a running call;
      replay draws each card from its stored call and result (``pending``, then the end);
    - no ``current_mode_update``: live, one comes when the mode is set (the fork's answer is
      followed by one); a load ends with one, the session's mode now (checked on its own);
    - no ``session_info_update``: live, each turn's end says its time; a load ends with one
      saying what ``session/list`` shows — the title and the last activity (checked on its own);
    - no ``available_commands_update``: the session's slash commands, sent after it opens
      (``session/new`` and a load alike), not part of its history.
    """
    kept: list[dict[str, Any]] = []
    for update in updates:
        kind = update["sessionUpdate"]
        if kind in ("current_mode_update", "session_info_update", "available_commands_update"):
            continue
        if update == {
            "sessionUpdate": "tool_call_update",
            "toolCallId": update.get("toolCallId"),
            "status": "in_progress",
        }:
            continue
        last = kept[-1] if kept else None
        if (
            kind in CHUNKS
            and last is not None
            and last["sessionUpdate"] == kind
            and last["messageId"] == update["messageId"]
        ):
            text = last["content"]["text"] + update["content"]["text"]
            kept[-1] = {**last, "content": {"type": "text", "text": text}}
        else:
            kept.append(update)
    return kept
