"""Subagents (``protocol/v1/subagents``): the model's ``task`` calls run child conversations
on the scripted endpoint, in process, on the raw wire. A client that advertised
``clientCapabilities.subagents`` sees each child as a session of its own (announced on the
parent before anything carries its id, its job and answer as session messages, the task card
linked to it); any other client sees one task card whose progress is the child's step.
Every message is judged by the unstable schema (``tests.server.subagent_harness``)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

import acp_sidecar.protocol as p
from acp_sidecar.agent.model.task import with_task_cards
from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.bridge.subagents import child_session_id
from acp_sidecar.export.markdown import write_markdown
from acp_sidecar.export.source import StoredSession
from acp_sidecar.protocol import to_wire
from acp_sidecar.store import ChildRecord, SessionStore, UsageRecord
from benchmarks.ts_sdk import install_ts_sdk
from tests.acp_schema import SchemaViolation, load_schema, validate_instance
from tests.agent.model.fake_openai import Pause, Reply, answer, say, stop, usage
from tests.agent.model.fake_openai import tool_call as model_call
from tests.protocol.samples import SUBAGENT_UPDATES, sample_id
from tests.server.subagent_harness import (
    ENV,
    HANG_GUARD,
    SUBAGENTS,
    RoutedOpenAI,
    answer_permissions,
    check_message,
    last_prompt,
    of_kind,
    session_links,
    sidecar,
    task_call,
    tasks,
    threads,
    unstable_checked,
    updates_of,
)
from tests.server.wire import ROOT, spawned

PROMPT = "look into both"


def parallel_script(endpoint: RoutedOpenAI) -> None:
    endpoint.route(
        PROMPT,
        tasks(
            task_call(0, "call_a", "Read a", "Report what a.txt says."),
            task_call(1, "call_b", "Read b", "Report what b.txt says."),
        ),
        answer("Both read."),
    )
    endpoint.route("Report what a.txt says.", answer("a says 1."))
    endpoint.route("Report what b.txt says.", answer("b says 2."))


def tool_results(endpoint: RoutedOpenAI) -> dict[str, str]:
    """The tool results the parent's model read back, by call id."""
    last = [r for r in endpoint.requests if last_prompt(r) == PROMPT][-1]
    return {m["tool_call_id"]: m["content"] for m in last.messages if m["role"] == "tool"}


async def test_parallel_children_are_sessions_of_their_own(tmp_path: Path) -> None:
    endpoint = RoutedOpenAI()
    parallel_script(endpoint)
    async with endpoint, sidecar(endpoint, tmp_path / "store") as (client, server):
        await client.initialize(**SUBAGENTS)
        parent = await client.new_session(str(tmp_path))
        response = await client.next_response(await client.start_prompt(parent, PROMPT))
        assert response["result"]["stopReason"] == "end_turn"
        live = updates_of(client)
    child_a, child_b = (child_session_id(parent, c) for c in ("call_a", "call_b"))
    # The parent read each child's answer as its task's result.
    results = tool_results(endpoint)
    assert "a says 1." in results["call_a"] and "b says 2." in results["call_b"]
    # Each child announced on the parent before anything carries its id.
    for child, job, said in (
        (child_a, "Report what a.txt says.", "a says 1."),
        (child_b, "Report what b.txt says.", "b says 2."),
    ):
        first = next(i for i, (s, u) in enumerate(live) if s == child or _names(u, child))
        sid, update = live[first]
        assert sid == parent and update["sessionUpdate"] == "subagent_update", update
        assert update["sessionId"] == child and update["state"] == {"state": "running"}
        assert update["capabilities"] == {"cancel": {}}
        mine = [u for s, u in live if s == child]
        assert mine[0]["sessionUpdate"] == "session_message"
        assert mine[0]["senderSessionId"] == parent and mine[0]["recipientSessionId"] == child
        assert mine[1] == {
            "sessionUpdate": "session_message_chunk",
            "messageId": mine[0]["messageId"],
            "content": {"type": "text", "text": job},
        }
        assert (
            "".join(
                u["content"]["text"] for u in mine if u["sessionUpdate"] == "agent_message_chunk"
            )
            == said
        )
        states = [
            u["state"]
            for s, u in live
            if u["sessionUpdate"] == "subagent_update" and u["sessionId"] == child
        ]
        assert states == [{"state": "running"}, {"state": "idle", "stopReason": "end_turn"}]
        # The answer went to the parent as a message from the child.
        answer_ids = [
            u["messageId"]
            for s, u in live
            if s == parent
            and u["sessionUpdate"] == "session_message"
            and u["senderSessionId"] == child
        ]
        assert len(answer_ids) == 1
    # The task cards link their children, also in the completed card.
    for call, child in (("call_a", child_a), ("call_b", child_b)):
        cards = [u for s, u in live if s == parent and u.get("toolCallId") == call]
        assert cards[0]["sessionUpdate"] == "tool_call" and cards[0]["name"] == "task"
        completed = [u for u in cards if u.get("status") == "completed"]
        assert len(completed) == 1 and session_links(completed[0]) == [
            {"type": "session", "sessionId": child}
        ]
    # The parent's text is its own; no child text leaks into it.
    assert [
        u["content"]["text"] for s, u in of_kind(live, "agent_message_chunk") if s == parent
    ] == ["Both read."]


def _names(update: dict[str, Any], child: str) -> bool:
    """Whether an update on another session names ``child``."""
    return (
        update.get("sessionId") == child
        or any(link["sessionId"] == child for link in session_links(update))
        or child in (update.get("senderSessionId"), update.get("recipientSessionId"))
    )


def test_the_unstable_schema_has_no_session_content_the_page_defines() -> None:
    """The pinned difference: the stabilized page's ``session`` tool-call content is not in
    the vendored unstable schema, which refuses it; the suite judges it by the page."""
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_a",
        "content": [{"type": "session", "sessionId": "s~task~call_a"}],
    }
    with pytest.raises(SchemaViolation):
        validate_instance(update, "SessionUpdate", unstable=True)
    validate_instance({**update, "content": []}, "SessionUpdate", unstable=True)


async def test_a_client_without_subagents_sees_one_task_card_with_the_childs_step(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    endpoint = RoutedOpenAI()
    job = "Report what a.txt says."
    endpoint.route(PROMPT, tasks(task_call(0, "call_a", "Read a", job)), answer("It says one."))
    endpoint.route(
        job,
        Reply([model_call(0, "call_r", "read", '{"path": "a.txt"}'), stop("tool_calls")]),
        answer("a says one."),
    )
    store = tmp_path / "store"
    async with endpoint, sidecar(endpoint, store) as (client, _server):
        await client.initialize()
        parent = await client.new_session(str(tmp_path))
        response = await client.next_response(await client.start_prompt(parent, PROMPT))
        assert response["result"]["stopReason"] == "end_turn"
        live = updates_of(client)
    assert {s for s, _ in live} == {parent}
    kinds = {u["sessionUpdate"] for _, u in live}
    assert not kinds & {"subagent_update", "session_message", "session_message_chunk"}
    cards = [u for _, u in live if u.get("toolCallId") == "call_a"]
    progress = [
        item["content"]["text"]
        for u in cards
        if u.get("status") is None
        for item in u.get("content") or ()
    ]
    assert any(text.startswith("Subagent: Read") for text in progress), progress
    completed = [u for u in cards if u.get("status") == "completed"]
    assert len(completed) == 1 and not session_links(completed[0])
    assert "a says one." in completed[0]["content"][0]["content"]["text"]
    # The child's own call never reached this client; it is in the parent's log, tagged.
    assert not [u for _, u in live if u.get("toolCallId") == "call_r"]
    child = child_session_id(parent, "call_a")
    with SessionStore(store).open_log(parent) as log:
        tagged = [r for r in log if isinstance(r, ChildRecord)]
    assert {r.session_id for r in tagged} == {child}
    assert [type(r.record).__name__ for r in tagged] == [
        "UserMessageRecord",
        "UsageRecord",  # the time of a response that reported no tokens
        "ToolCallRecord",
        "ToolResultRecord",
        "AgentMessageRecord",
        "UsageRecord",
        "TurnEndRecord",
    ]
    timed = [r.record for r in tagged if isinstance(r.record, UsageRecord)]
    assert all(not r.counted and r.seconds for r in timed)


async def test_a_child_that_fails_is_a_failed_task_the_parent_reads(tmp_path: Path) -> None:
    endpoint = RoutedOpenAI()
    job = "Report what a.txt says."
    endpoint.route(PROMPT, tasks(task_call(0, "call_a", "Read a", job)), answer("It failed."))
    endpoint.route(job, Reply(status=400, body={"error": {"message": "no such model"}}))
    async with endpoint, sidecar(endpoint, tmp_path / "store") as (client, _server):
        await client.initialize(**SUBAGENTS)
        parent = await client.new_session(str(tmp_path))
        response = await client.next_response(await client.start_prompt(parent, PROMPT))
        assert response["result"]["stopReason"] == "end_turn"
        live = updates_of(client)
    child = child_session_id(parent, "call_a")
    failed = [u for s, u in live if u.get("toolCallId") == "call_a" and u.get("status")]
    assert failed[-1]["status"] == "failed"
    assert session_links(failed[-1]) == [{"type": "session", "sessionId": child}]
    result = tool_results(endpoint)["call_a"]
    assert "the subagent ended without an answer (end_turn)" in result and "400" in result
    # The child told why in its own session, and no answer came back.
    assert any(
        u["sessionUpdate"] == "agent_message_chunk" and "400" in u["content"]["text"]
        for s, u in live
        if s == child
    )
    assert not [u for s, u in live if s == parent and u["sessionUpdate"] == "session_message"]
    assert [u["state"] for s, u in live if u["sessionUpdate"] == "subagent_update"][-1] == {
        "state": "idle",
        "stopReason": "end_turn",
    }


def paused_script(endpoint: RoutedOpenAI, pause: Pause, then: str = "Went on.") -> None:
    job = "Report what a.txt says."
    endpoint.route(PROMPT, tasks(task_call(0, "call_a", "Read a", job)), answer(then))
    endpoint.route(job, Reply([*say("Reading "), pause, *say("more."), stop()]))


async def test_cancel_of_a_child_stops_it_alone(tmp_path: Path) -> None:
    endpoint, pause = RoutedOpenAI(), Pause()
    paused_script(endpoint, pause)
    async with endpoint, sidecar(endpoint, tmp_path / "store") as (client, _server):
        await client.initialize(**SUBAGENTS)
        parent = await client.new_session(str(tmp_path))
        child = child_session_id(parent, "call_a")
        prompt_id = await client.start_prompt(parent, PROMPT)
        await asyncio.wait_for(pause.reached.wait(), HANG_GUARD)
        await client.notify("session/cancel", {"sessionId": child})
        response = await client.next_response(prompt_id)
        assert response["result"]["stopReason"] == "end_turn"  # the parent went on
        live = updates_of(client)
    states = [u["state"] for s, u in live if u["sessionUpdate"] == "subagent_update"]
    assert states == [{"state": "running"}, {"state": "idle", "stopReason": "cancelled"}]
    assert "cancelled" in tool_results(endpoint)["call_a"]
    parent_text = [
        u["content"]["text"]
        for s, u in live
        if s == parent and "content" in u and u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert parent_text == ["Went on."]


async def test_cancel_of_the_parent_stops_the_child_too(tmp_path: Path) -> None:
    endpoint, pause = RoutedOpenAI(), Pause()
    paused_script(endpoint, pause)
    async with endpoint, sidecar(endpoint, tmp_path / "store") as (client, _server):
        await client.initialize(**SUBAGENTS)
        parent = await client.new_session(str(tmp_path))
        prompt_id = await client.start_prompt(parent, PROMPT)
        await asyncio.wait_for(pause.reached.wait(), HANG_GUARD)
        await client.notify("session/cancel", {"sessionId": parent})
        response = await client.next_response(prompt_id)
        assert response["result"]["stopReason"] == "cancelled"
        live = updates_of(client)
    states = [u["state"] for s, u in live if u["sessionUpdate"] == "subagent_update"]
    assert states[-1] == {"state": "idle", "stopReason": "cancelled"}
    # The parent's model was never asked again.
    assert endpoint.asked.count(PROMPT) == 1


async def test_a_child_asks_permission_under_its_own_id(tmp_path: Path) -> None:
    endpoint = RoutedOpenAI()
    job = "Write done into out.txt."
    endpoint.route(
        PROMPT, tasks(task_call(0, "call_a", "Write out", job, write=True)), answer("Written.")
    )
    endpoint.route(
        job,
        Reply(
            [
                model_call(0, "call_w", "write", '{"path": "out.txt", "content": "done"}'),
                stop("tool_calls"),
            ]
        ),
        answer("Wrote it."),
    )
    async with endpoint, sidecar(endpoint, tmp_path / "store") as (client, _server):
        await client.initialize(**SUBAGENTS)
        parent = await client.new_session(str(tmp_path))
        child = child_session_id(parent, "call_a")
        prompt_id = await client.start_prompt(parent, PROMPT)
        response = await answer_permissions(client, prompt_id, "allow_once")
        assert response["result"]["stopReason"] == "end_turn"
        live = updates_of(client)
        received = list(client.received)
    assert (tmp_path / "out.txt").read_text() == "done"
    [asked] = client.agent_requests
    assert asked["params"]["sessionId"] == child
    assert asked["params"]["toolCall"]["title"].startswith("Subagent “Write out”: ")
    # requires_action on the parent before the request, running again after its answer.
    at = next(i for i, m in enumerate(received) if m.get("method") == "session/request_permission")
    before = [m["params"]["update"] for m in received[:at] if m.get("method") == "session/update"]
    after = [m["params"]["update"] for m in received[at:] if m.get("method") == "session/update"]
    assert [u["state"] for u in before if u["sessionUpdate"] == "subagent_update"][-1] == {
        "state": "requires_action"
    }
    assert [u["state"] for u in after if u["sessionUpdate"] == "subagent_update"] == [
        {"state": "running"},
        {"state": "idle", "stopReason": "end_turn"},
    ]
    assert [s for s, u in live if u.get("toolCallId") == "call_w"] == [child] * len(
        [u for _, u in live if u.get("toolCallId") == "call_w"]
    )


async def test_a_child_is_read_only_unless_the_task_asks_and_the_mode_allows(
    tmp_path: Path,
) -> None:
    endpoint = RoutedOpenAI()
    job = "Write done into out.txt."
    endpoint.route(PROMPT, tasks(task_call(0, "call_a", "Write out", job)), answer("No."))
    endpoint.route(job, answer("I cannot write."))
    async with endpoint, sidecar(endpoint, tmp_path / "store") as (client, _server):
        await client.initialize(**SUBAGENTS)
        parent = await client.new_session(str(tmp_path))
        response = await client.next_response(await client.start_prompt(parent, PROMPT))
        assert response["result"]["stopReason"] == "end_turn"
    offered = {
        last_prompt(r): sorted(t["function"]["name"] for t in r.body.get("tools", []))
        for r in endpoint.requests
    }
    assert "task" in offered[PROMPT] and "write" in offered[PROMPT]
    # The child: read-only tools, and no task of its own (the depth limit is 1).
    assert "write" not in offered[job] and "bash" not in offered[job]
    assert "read" in offered[job] and "task" not in offered[job]


async def test_methods_restricted_on_a_child_are_refused_and_it_is_not_listed(
    tmp_path: Path,
) -> None:
    endpoint, pause = RoutedOpenAI(), Pause()
    paused_script(endpoint, pause)
    async with endpoint, sidecar(endpoint, tmp_path / "store") as (client, _server):
        await client.initialize(**SUBAGENTS)
        parent = await client.new_session(str(tmp_path))
        child = child_session_id(parent, "call_a")
        prompt_id = await client.start_prompt(parent, PROMPT)
        await asyncio.wait_for(pause.reached.wait(), HANG_GUARD)
        cwd = str(tmp_path)
        refused = {
            "session/prompt": {"sessionId": child, "prompt": [{"type": "text", "text": "hi"}]},
            "session/set_config_option": {"sessionId": child, "configId": "mode", "value": "auto"},
            "session/set_mode": {"sessionId": child, "modeId": "auto"},
            "session/close": {"sessionId": child},
            "session/delete": {"sessionId": child},
            "session/load": {"sessionId": child, "cwd": cwd, "mcpServers": []},
            "session/resume": {"sessionId": child, "cwd": cwd, "mcpServers": []},
            "session/fork": {"sessionId": child, "cwd": cwd, "mcpServers": []},
        }
        for method, params in refused.items():
            error = await client.error(method, params)
            assert error["code"] == -32600, (method, error)
            assert "subagent session" in error["message"] and parent in error["message"]
        listed = await client.result("session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [parent]
        pause.release.set()
        response = await client.next_response(prompt_id)
        assert response["result"]["stopReason"] == "end_turn"
        listed = await client.result("session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [parent]


async def load_updates(
    endpoint: RoutedOpenAI, store: Path, cwd: Path, session: str
) -> list[tuple[str, dict[str, Any]]]:
    """What ``session/load`` draws for an opted-in client of a fresh server."""
    async with sidecar(endpoint, store) as (client, _server):
        await client.initialize(**SUBAGENTS)
        await client.result(
            "session/load", {"sessionId": session, "cwd": str(cwd), "mcpServers": []}
        )
        return updates_of(client)


async def test_a_load_draws_the_children_as_they_were_drawn_live(tmp_path: Path) -> None:
    endpoint = RoutedOpenAI()
    parallel_script(endpoint)
    store = tmp_path / "store"
    async with endpoint:
        async with sidecar(endpoint, store) as (client, _server):
            await client.initialize(**SUBAGENTS)
            parent = await client.new_session(str(tmp_path))
            await client.next_response(await client.start_prompt(parent, PROMPT))
            live = updates_of(client)
        loaded = await load_updates(endpoint, store, tmp_path, parent)
    drawn = threads(live)
    assert threads(loaded) == drawn
    child_a = child_session_id(parent, "call_a")
    assert [u["sessionUpdate"] for u in drawn[(parent, "call_a")]] == [
        "tool_call",
        "subagent_update",  # running
        "tool_call_update",  # the link
        "subagent_update",  # idle
        "session_message",  # the answer, from the child
        "session_message_chunk",
        "tool_call_update",  # completed, still linked
    ]
    assert [u["sessionUpdate"] for u in drawn[(child_a, "")]] == [
        "session_message",  # the job, from the parent
        "session_message_chunk",
        "agent_message_chunk",
    ]
    assert {s for s, _ in loaded} == {
        parent,
        *(child_session_id(parent, c) for c in ("call_a", "call_b")),
    }


async def test_a_child_cut_off_mid_task_loads_idle_with_its_parents_stop(tmp_path: Path) -> None:
    """The log as a crash leaves it while a child runs: the child's records, then no end of
    the child's turn (the load closes the parent's turn as cancelled)."""
    endpoint, pause = RoutedOpenAI(), Pause()
    paused_script(endpoint, pause)
    store, crashed = tmp_path / "store", tmp_path / "crashed"
    async with endpoint:
        async with sidecar(endpoint, store) as (client, _server):
            await client.initialize(**SUBAGENTS)
            parent = await client.new_session(str(tmp_path))
            prompt_id = await client.start_prompt(parent, PROMPT)
            await asyncio.wait_for(pause.reached.wait(), HANG_GUARD)
            log = (store / f"{parent}.jsonl").read_bytes()
            await client.notify("session/cancel", {"sessionId": parent})
            await client.next_response(prompt_id)
        crashed.mkdir()
        (crashed / f"{parent}.jsonl").write_bytes(log)
        assert b"Report what a.txt says." in log  # the child had started
        loaded = await load_updates(endpoint, crashed, tmp_path, parent)
    states = [u["state"] for _s, u in loaded if u["sessionUpdate"] == "subagent_update"]
    assert states == [{"state": "running"}, {"state": "idle", "stopReason": "cancelled"}]


async def test_a_load_without_subagents_draws_only_the_task_cards(tmp_path: Path) -> None:
    endpoint = RoutedOpenAI()
    parallel_script(endpoint)
    store = tmp_path / "store"
    async with endpoint:
        async with sidecar(endpoint, store) as (client, _server):
            await client.initialize()
            parent = await client.new_session(str(tmp_path))
            await client.next_response(await client.start_prompt(parent, PROMPT))
            live = updates_of(client)
        async with sidecar(endpoint, store) as (client, _server):
            await client.initialize()
            await client.result(
                "session/load", {"sessionId": parent, "cwd": str(tmp_path), "mcpServers": []}
            )
            loaded = updates_of(client)
    assert {s for s, _ in loaded} == {parent}
    completed = lambda pairs: [  # noqa: E731
        u
        for _, u in pairs
        if u.get("status") == "completed" and u.get("toolCallId") in ("call_a", "call_b")
    ]
    assert completed(loaded) == completed(live)
    assert [
        u["content"]["text"] for _, u in loaded if u["sessionUpdate"] == "agent_message_chunk"
    ] == ["Both read."]


@pytest.mark.process  # a fresh sidecar loads what the in-process one stored
async def test_a_fresh_process_loads_children_as_they_were_drawn_live(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    endpoint = RoutedOpenAI()
    read_a, read_b, write = "Report what a.txt says.", "Say hello.", "Write done into out.txt."
    endpoint.route(
        PROMPT,
        tasks(task_call(0, "call_a", "Read a", read_a), task_call(1, "call_b", "Greet", read_b)),
        answer("Both done."),
    )
    endpoint.route(
        read_a,
        Reply([model_call(0, "call_r", "read", '{"path": "a.txt"}'), stop("tool_calls")]),
        answer("a says one."),
    )
    endpoint.route(read_b, answer("hello"))
    endpoint.route(
        "now write",
        tasks(task_call(0, "call_c", "Write out", write, write=True)),
        answer("Written."),
    )
    endpoint.route(
        write,
        Reply(
            [
                model_call(0, "call_w", "write", '{"path": "out.txt", "content": "done"}'),
                stop("tool_calls"),
            ]
        ),
        answer("Wrote it."),
    )
    store = tmp_path / "store"
    async with endpoint, sidecar(endpoint, store) as (client, _server):
        await client.initialize(**SUBAGENTS)
        parent = await client.new_session(str(tmp_path))
        await client.next_response(await client.start_prompt(parent, PROMPT))
        answered = await answer_permissions(
            client, await client.start_prompt(parent, "now write"), "allow_once"
        )
        assert answered["result"]["stopReason"] == "end_turn"
        live = updates_of(client)
    async with spawned("--store", str(store)) as (loader, _process):
        unstable_checked(loader)
        await loader.initialize(**SUBAGENTS)
        await loader.result(
            "session/load", {"sessionId": parent, "cwd": str(tmp_path), "mcpServers": []}
        )
        loaded = updates_of(loader)
    drawn = threads(live)
    assert threads(loaded) == drawn
    states = [
        u.get("state") for u in drawn[(parent, "call_c")] if u["sessionUpdate"] == "subagent_update"
    ]
    assert states == [
        {"state": "running"},
        {"state": "requires_action"},
        {"state": "running"},
        {"state": "idle", "stopReason": "end_turn"},
    ]
    child_a = child_session_id(parent, "call_a")
    assert [u.get("toolCallId") for u in drawn[(child_a, "")] if "toolCallId" in u] == [
        "call_r",
        "call_r",
    ]


def test_the_subagent_types_carry_meta_as_the_unstable_schema_does() -> None:
    """Each modelled subagent type has ``meta`` exactly when its unstable schema type has
    ``_meta`` (``ToolCallSession``, which no schema has yet, carries it as every content does)."""
    defs = load_schema(unstable=True)["$defs"]
    names = {
        p.SubagentUpdate: "SubagentUpdate",
        p.SubagentState: "RunningStateUpdate",
        p.SubagentSessionCapabilities: "SubagentSessionCapabilities",
        p.SessionCancelCapabilities: "SessionCancelCapabilities",
        p.SessionMessage: "SessionMessage",
        p.SessionMessageChunk: "SessionMessageChunk",
        p.TokenUsage: "Usage",
    }
    for cls, name in names.items():
        has_meta = any(a.name == "meta" for a in attrs.fields(cls))
        assert ("_meta" in defs[name]["properties"]) == has_meta, cls
    assert "subagents" in defs["ClientCapabilities"]["properties"]


@pytest.mark.parametrize("sample", SUBAGENT_UPDATES, ids=sample_id)
def test_each_subagent_update_is_the_unstable_schemas(sample: Any) -> None:
    check_message({"jsonrpc": "2.0", "method": "session/update", "params": to_wire(sample.value)})


async def test_a_childs_spending_counts_toward_its_parents_cost(tmp_path: Path) -> None:
    endpoint = RoutedOpenAI()
    job = "Report what a.txt says."
    endpoint.route(
        PROMPT,
        Reply([task_call(0, "call_a", "Read a", job), stop("tool_calls")], usage=usage(100, 5)),
        Reply([*say("Done."), stop()], usage=usage(200, 3)),
    )
    endpoint.route(job, Reply([*say("a says 1."), stop()], usage=usage(10, 2)))
    dollar_a_token = "test-model:context=8000,input=1000000,output=1000000,currency=USD"
    async with (
        endpoint,
        sidecar(endpoint, tmp_path / "store", "--model-info", dollar_a_token) as (
            client,
            _server,
        ),
    ):
        await client.initialize(**SUBAGENTS)
        parent = await client.new_session(str(tmp_path))
        await client.next_response(await client.start_prompt(parent, PROMPT))
        live = updates_of(client)
    child = child_session_id(parent, "call_a")
    meters = [(s, u["cost"]["amount"]) for s, u in of_kind(live, "usage_update")]
    # The parent's first response, the child's own meter, the parent's total with the
    # child's spending, then the parent's last response on top.
    assert meters == [(parent, 105.0), (child, 12.0), (parent, 117.0), (parent, 320.0)]
    states = [u["state"] for _s, u in of_kind(live, "subagent_update") if "state" in u]
    assert states[-1] == {
        "state": "idle",
        "stopReason": "end_turn",
        "usage": {"totalTokens": 12, "inputTokens": 10, "outputTokens": 2},
    }
    loaded = await load_updates(endpoint, tmp_path / "store", tmp_path, parent)
    assert [u for _s, u in of_kind(loaded, "subagent_update")][-1]["state"] == states[-1]


TS_CLIENT = Path(__file__).with_name("ts_subagent_client.mjs")


@pytest.mark.process  # node runs the official TypeScript SDK's client, which spawns the sidecar
async def test_the_typescript_sdk_client_takes_the_children(tmp_path: Path) -> None:
    """The official TS SDK 2.4.0 client (its unstable entrypoint, which knows subagents; the
    Python SDK 0.12.1 does not) against a spawned sidecar: parallel children and a child's
    permission request arrive as it parses them, and a prompt to a child is refused."""
    installed = install_ts_sdk()
    if isinstance(installed, str):
        pytest.skip(f"the TypeScript SDK is not available: {installed}")
    node, directory = installed
    script = directory / TS_CLIENT.name
    script.write_text(TS_CLIENT.read_text())
    endpoint = RoutedOpenAI()
    write = "Write done into out.txt."
    endpoint.route(
        PROMPT,
        tasks(
            task_call(0, "call_a", "Read a", "Report what a.txt says."),
            task_call(1, "call_b", "Write out", write, write=True),
        ),
        answer("Both done."),
    )
    endpoint.route("Report what a.txt says.", answer("a says 1."))
    endpoint.route(
        write,
        Reply(
            [
                model_call(0, "call_w", "write", '{"path": "out.txt", "content": "done"}'),
                stop("tool_calls"),
            ]
        ),
        answer("Wrote it."),
    )
    async with endpoint:
        sidecar = [
            sys.executable, "-m", "acp_sidecar", "--model", "test-model",
            "--base-url", endpoint.base_url, "--store", str(tmp_path / "store"),
        ]  # fmt: skip
        env = {
            **os.environ,
            **ENV,
            "PYTHONPATH": str(ROOT),
            "SIDECAR_ARGV": json.dumps(sidecar),
            "SESSION_CWD": str(tmp_path),
            "PROMPT_TEXT": PROMPT,
        }
        process = await asyncio.create_subprocess_exec(
            node, str(script), cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE
        )
        out, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0
    seen = json.loads(out)
    parent = seen["sessionId"]
    assert seen["stopReason"] == "end_turn"
    assert seen["refused"]["code"] == -32600 and "subagent session" in seen["refused"]["message"]
    pairs = [(n["sessionId"], n["update"]) for n in seen["updates"]]
    for notification in seen["updates"]:
        check_message({"jsonrpc": "2.0", "method": "session/update", "params": notification})
    children = {child_session_id(parent, c) for c in ("call_a", "call_b")}
    assert {s for s, _ in pairs} == {parent, *children}
    announced = [u["sessionId"] for s, u in pairs if u["sessionUpdate"] == "subagent_update"]
    for child in children:
        first = next(i for i, (s, _) in enumerate(pairs) if s == child)
        assert child in announced[: first + 1]
    [asked] = seen["permissions"]
    assert asked["sessionId"] == child_session_id(parent, "call_b")
    assert (tmp_path / "out.txt").read_text() == "done"


async def test_the_export_draws_each_child_inside_its_task_card(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    endpoint = RoutedOpenAI()
    job = "Report what a.txt says."
    endpoint.route(PROMPT, tasks(task_call(0, "call_a", "Read a", job)), answer("It says one."))
    endpoint.route(
        job,
        Reply(
            [model_call(0, "call_r", "read", '{"path": "a.txt"}'), stop("tool_calls")],
            usage=usage(1200, 34),
        ),
        answer("a says one."),
    )
    store = tmp_path / "store"
    async with endpoint, sidecar(endpoint, store) as (client, _server):
        await client.initialize()
        parent = await client.new_session(str(tmp_path))
        await client.next_response(await client.start_prompt(parent, PROMPT))
    out = io.StringIO()
    lookup = with_task_cards(ToolsProvider().registry.get)
    with StoredSession(SessionStore(store).locate(parent), lookup) as session:
        write_markdown(session, out, generator="test")
    text = out.getvalue()
    card = text.index("Task: Read a")
    transcript = text.index("Subagent's job:", card)
    assert text.index("> Report what a.txt says.", transcript) < text.index(
        "a says one.", transcript
    )
    assert "- Read a.txt (lines 1–1 of 1) (completed)" in text[transcript:]
    assert text.count("Subagent's job:") == 1
    assert "It used 1,234 tokens (1,200 in, 34 out)." in text[transcript:]
