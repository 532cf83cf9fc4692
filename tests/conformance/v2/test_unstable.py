"""v2's unstable surface, in process on the raw wire: a Markdown plan and its removal, the
tokens of a model turn on its idle ``state_update``, a ``task`` child as a subagent session,
``session/fork``. Every message is judged by ``schema.unstable.json`` (the client's
``unstable``), each unstable value also by that schema with its open ("other") branches taken
out, so it matched the variant it names, and shown *not* to be one of ``schema.json``'s, so
the split between the files is real.

Spec: the vendored ``tests/fixtures/acp/v2/schema.unstable.json`` (``PlanMarkdown``,
``PlanRemoved``, ``Usage``, ``SubagentUpdate``, ``SessionMessage``, ``SessionMessageChunk``,
``ForkSessionRequest``/``Response``, ``SessionForkCapabilities``).
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from acp_sidecar.bridge.replay import replay_updates
from acp_sidecar.bridge.v2.updates import encode_update
from acp_sidecar.protocol.v2.initialize import ClientCapabilities
from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.v2.handlers import core_capabilities
from acp_sidecar.store import SessionStore
from tests.acp_schema import load_schema, schema_def_for, update_kinds
from tests.agent.model.fake_openai import Reply, say, stop, usage
from tests.agent.model.fake_openai import tool_call as model_call
from tests.conformance.v2.recorded import resume_params, until_answer
from tests.conformance.v2.test_prompt_lifecycle import CLIENT_INFO, prompt, until_idle
from tests.in_process import cli_server, kept_process_state
from tests.server.subagent_harness import ENV, RoutedOpenAI, task_call
from tests.server.wire import WireClient, served

DOCUMENT = "# Plan\n\n1. Look at a.txt\n2. Report\n"


@functools.cache
def _named_only(unstable: bool) -> dict[str, Any]:
    """The v2 schema with every open ("other") union branch removed: what it accepts then
    is one of the variants it names."""
    root = copy.deepcopy(load_schema(unstable, 2))

    def prune(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("anyOf"), list):
                node["anyOf"] = [b for b in node["anyOf"] if b.get("title") != "other"]
            for value in node.values():
                prune(value)
        elif isinstance(node, list):
            for item in node:
                prune(item)

    prune(root["$defs"])
    return root


def named_errors(update: dict[str, Any], *, unstable: bool) -> list[str]:
    root = _named_only(unstable)
    validator = Draft202012Validator(
        {"$schema": root["$schema"], "$defs": root["$defs"], "$ref": "#/$defs/SessionUpdate"}
    )
    return [error.message for error in validator.iter_errors(update)]


def only_in_unstable(update: dict[str, Any]) -> None:
    """``update`` is one of the unstable schema's named variants and none of the stable's."""
    assert named_errors(update, unstable=True) == []
    assert named_errors(update, unstable=False), f"the stable schema names it: {update}"


@asynccontextmanager
async def unstable_client(*args: str) -> AsyncIterator[tuple[WireClient, AcpServer, Any]]:
    """``acp-sidecar --acp-v2 ARGS`` in process, an initialized v2 connection to it judged by
    the unstable v2 schema, and the ``initialize`` answer."""
    with kept_process_state(env=ENV):
        async with served(cli_server("--acp-v2", *args)) as (client, server):
            client.version, client.unstable = 2, True
            params = {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": {}}
            initialized = await client.result("initialize", params)
            client.initialized = True
            yield client, server, initialized


async def new_session(client: WireClient, cwd: Path) -> str:
    session_id: str = (await client.result("session/new", {"cwd": str(cwd)}))["sessionId"]
    return session_id


async def turn(client: WireClient, session_id: str, text: str) -> list[dict[str, Any]]:
    await client.result("session/prompt", prompt(session_id, text))
    updates = await until_idle(client, session_id)
    assert updates[-1]["stopReason"] == "end_turn", updates[-1]
    return updates


def plans(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] in ("plan_update", "plan_removed")]


async def test_a_markdown_plan_and_its_removal_live_and_replayed(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with unstable_client("--store", str(store)) as (client, server, _):
        session_id = await new_session(client, tmp_path)
        made = plans(await turn(client, session_id, "/plan " + json.dumps({"markdown": DOCUMENT})))
        gone = plans(await turn(client, session_id, "/plan " + json.dumps({"markdown": ""})))
        emptied = plans(await turn(client, session_id, "/plan " + json.dumps({"entries": []})))
        registry = server.tools.registry
    assert made == [
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": "markdown", "content": DOCUMENT},
        }
    ]
    assert gone == [{"sessionUpdate": "plan_removed", "planId": "markdown"}]
    for update in made + gone:
        only_in_unstable(update)
    # A checklist emptied is the stable surface's: a plan with no entries.
    assert emptied == [
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "checklist", "entries": []},
        }
    ]
    assert named_errors(emptied[0], unstable=False) == []
    # Replayed from the log, the plans are the ones sent live: the encoder is pure.
    with SessionStore(store).open_log(session_id) as log:
        header, records = log.header, list(log)
    client_is = core_capabilities(ClientCapabilities())
    ctx = server.card_context(header.cwd)  # the connection's: a v2 client's
    replayed = [
        encode_update(update)
        for update in replay_updates(header, records, registry.get, ctx, client_is)
    ]
    assert plans([u for u in replayed if isinstance(u, dict)]) == made + gone + emptied
    # And so over the wire: a later connection resumes the session from its start.
    async with unstable_client("--store", str(store)) as (client, _, _):
        params = resume_params(session_id, tmp_path, replayFrom={"type": "start"})
        before, answer = await until_answer(
            client, await client.send_request("session/resume", params)
        )
    assert "result" in answer, answer
    assert plans(before) == made + gone + emptied


def on_model(endpoint: RoutedOpenAI, store: Path) -> tuple[str, ...]:
    return ("--model", "test-model", "--base-url", endpoint.base_url, "--store", str(store))


async def test_a_model_turns_idle_reports_the_tokens_it_used(tmp_path: Path) -> None:
    endpoint = RoutedOpenAI()
    endpoint.route("hi", Reply([*say("Hello."), stop()], usage=usage(120, 7, cached=100)))
    async with endpoint, unstable_client(*on_model(endpoint, tmp_path / "s")) as (client, _, _):
        session_id = await new_session(client, tmp_path)
        idle = (await turn(client, session_id, "hi"))[-1]
    assert idle["usage"] == {
        "totalTokens": 127,
        "inputTokens": 120,
        "outputTokens": 7,
        "cachedReadTokens": 100,
    }
    stable = load_schema(False, 2)["$defs"]["IdleStateUpdate"]["properties"]
    unstable = load_schema(True, 2)["$defs"]["IdleStateUpdate"]["properties"]
    assert "usage" in unstable and "usage" not in stable


async def test_a_console_turns_idle_reports_no_usage(tmp_path: Path) -> None:
    async with unstable_client() as (client, _, _):
        session_id = await new_session(client, tmp_path)
        idle = (await turn(client, session_id, "/grep nothing-matches-this"))[-1]
    assert "usage" not in idle


JOB = "Report what a.txt says."


async def until_parent_idle(client: WireClient, parent: str) -> list[tuple[str, dict[str, Any]]]:
    """(session id, update) of every update, children's too, up to the parent's idle; each
    permission request answered ``allow_once`` and kept as ``("asked", params)`` in place."""
    seen: list[tuple[str, dict[str, Any]]] = []
    while True:
        message = client.updates.pop(0) if client.updates else await client.receive()
        if message.get("method") == "session/request_permission":
            seen.append(("asked", message["params"]))
            selected = {"outcome": "selected", "optionId": "allow_once"}
            await client.respond(message["id"], {"outcome": selected})
        if message.get("method") != "session/update":
            continue
        session_id, update = message["params"]["sessionId"], message["params"]["update"]
        seen.append((session_id, update))
        if session_id == parent and update.get("state") == "idle":
            return seen


async def test_a_task_child_is_a_subagent_session(tmp_path: Path) -> None:
    endpoint = RoutedOpenAI()
    endpoint.route(
        "look",
        Reply([task_call(0, "call_a", "Read a", JOB), stop("tool_calls")], usage=usage(100, 5)),
        Reply([*say("Done."), stop()], usage=usage(200, 3)),
    )
    endpoint.route(JOB, Reply([*say("a says 1."), stop()], usage=usage(10, 2)))
    async with endpoint, unstable_client(*on_model(endpoint, tmp_path / "s")) as (client, _, _):
        parent = await new_session(client, tmp_path)
        await client.result("session/prompt", prompt(parent, "look"))
        seen = await until_parent_idle(client, parent)
    child = f"{parent}~task~call_a"
    first = next(i for i, (s, u) in enumerate(seen) if s == child or child in json.dumps(u))
    announced = seen[first]
    assert announced == (
        parent,
        {
            "sessionUpdate": "subagent_update",
            "sessionId": child,
            "title": "Read a",
            "capabilities": {"cancel": {}},
            "state": {"state": "running"},
        },
    )
    mine = [u for s, u in seen if s == child]
    assert mine[0]["sessionUpdate"] == "session_message"
    assert (mine[0]["senderSessionId"], mine[0]["recipientSessionId"]) == (parent, child)
    assert mine[1] == {
        "sessionUpdate": "session_message_chunk",
        "messageId": mine[0]["messageId"],
        "content": {"type": "text", "text": JOB},
    }
    said = [u["content"]["text"] for u in mine if u["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(said) == "a says 1."
    states = [
        u["state"] for s, u in seen if s == parent and u["sessionUpdate"] == "subagent_update"
    ]
    assert states[-1] == {
        "state": "idle",
        "stopReason": "end_turn",
        "usage": {"totalTokens": 12, "inputTokens": 10, "outputTokens": 2},
    }
    # The child's answer reaches the parent as a message from the child.
    answers = [u for s, u in seen if s == parent and u["sessionUpdate"] == "session_message"]
    assert [(a["senderSessionId"], a["recipientSessionId"]) for a in answers] == [(child, parent)]
    # v2 has no ``session`` card content: the child is linked by its subagent_update alone.
    for _session, update in seen:
        for item in update.get("content", []) if isinstance(update.get("content"), list) else []:
            assert item.get("type") != "session", update
        if update["sessionUpdate"] in (
            "subagent_update",
            "session_message",
            "session_message_chunk",
        ):
            only_in_unstable(update)
    # The parent's idle counts its own responses and the child's.
    assert seen[-1][1]["usage"] == {"totalTokens": 320, "inputTokens": 310, "outputTokens": 10}
    assert {"subagent_update", "session_message"} <= update_kinds(unstable=True, version=2)
    assert not {"subagent_update", "session_message"} & update_kinds(version=2)


async def test_a_child_asks_in_v2s_form_under_its_own_id_blocking_its_parent(
    tmp_path: Path,
) -> None:
    endpoint = RoutedOpenAI()
    job = "Write done into out.txt."
    endpoint.route(
        "write",
        Reply([task_call(0, "call_a", "Write out", job, write=True), stop("tool_calls")]),
        Reply([*say("Written."), stop()]),
    )
    write = model_call(0, "call_w", "write", '{"path": "out.txt", "content": "done"}')
    endpoint.route(job, Reply([write, stop("tool_calls")]), Reply([*say("Wrote it."), stop()]))
    async with endpoint, unstable_client(*on_model(endpoint, tmp_path / "s")) as (client, _, _):
        parent = await new_session(client, tmp_path)
        await client.result("session/prompt", prompt(parent, "write"))
        seen = await until_parent_idle(client, parent)
    child = f"{parent}~task~call_a"
    assert (tmp_path / "out.txt").read_text() == "done"
    at = next(i for i, (s, _) in enumerate(seen) if s == "asked")
    asked = seen[at][1]
    assert asked["sessionId"] == child  # judged by the v2 schema: a v2 dialog, with a subject
    assert asked["title"].startswith("Subagent “Write out”: ")
    assert asked["subject"]["type"] == "tool_call"
    children = [
        (i, u["state"])
        for i, (s, u) in enumerate(seen)
        if s == parent and u["sessionUpdate"] == "subagent_update"
    ]
    assert [state for i, state in children if i < at][-1] == {"state": "requires_action"}
    assert [state["state"] for i, state in children if i > at] == ["running", "idle"]
    # The dialog blocks the parent's foreground (its task call waits): its state says so;
    # the child's own state is its subagent_update, never a state_update under its id.
    assert [u for s, u in seen if s == child and u["sessionUpdate"] == "state_update"] == []
    blocked = [
        (i, u["state"])
        for i, (s, u) in enumerate(seen)
        if s == parent and u["sessionUpdate"] == "state_update"
    ]
    assert [state for i, state in blocked if i < at][-1] == "requires_action"
    assert [state for i, state in blocked if i > at] == ["running", "idle"]


def in_child(endpoint: RoutedOpenAI, first: Any) -> str:
    """A parent that delegates one job (``call_a``, writing allowed) whose child makes the
    call ``first`` and then answers; the parent's prompt."""
    job = "Do the job."
    endpoint.route(
        "delegate",
        Reply([task_call(0, "call_a", "Job", job, write=True), stop("tool_calls")]),
        Reply([*say("Delegated."), stop()]),
    )
    endpoint.route(job, Reply([first, stop("tool_calls")]), Reply([*say("Did it."), stop()]))
    return "delegate"


async def until_seen(
    client: WireClient, wanted: Any, seen: list[tuple[str, dict[str, Any]]]
) -> None:
    """Read (session id, update) pairs into ``seen`` up to the first ``wanted`` one."""
    while True:
        message = client.updates.pop(0) if client.updates else await client.receive()
        if message.get("method") == "session/update":
            pair = (message["params"]["sessionId"], message["params"]["update"])
            seen.append(pair)
            if wanted(*pair):
                return


async def delegated(client: WireClient, cwd: Path, asked: str) -> tuple[str, str]:
    """A session in the auto mode whose turn on ``asked`` delegates ``call_a``: its id and
    its child's."""
    parent = await new_session(client, cwd)
    auto = {"sessionId": parent, "configId": "mode", "type": "id", "value": "auto"}
    await client.result("session/set_config_option", auto)
    await client.result("session/prompt", prompt(parent, asked))
    return parent, f"{parent}~task~call_a"


async def test_a_childs_call_is_advertised_and_cancelled_in_the_childs_session(
    tmp_path: Path,
) -> None:
    endpoint = RoutedOpenAI()
    waits = json.dumps({"command": "while [ ! -e never ]; do sleep 0.02; done"})
    asked = in_child(endpoint, model_call(0, "call_w", "bash", waits))
    async with endpoint, unstable_client(*on_model(endpoint, tmp_path / "s")) as (client, _, _):
        parent, child = await delegated(client, tmp_path, asked)
        seen: list[tuple[str, dict[str, Any]]] = []
        await until_seen(
            client,
            lambda _s, u: (
                u.get("capabilities") == {"cancel": {}} and u.get("toolCallId") == "call_w"
            ),
            seen,
        )
        assert seen[-1][0] == child  # advertised where its card is
        refused = await client.error(
            "tool_call/cancel", {"sessionId": parent, "toolCallId": "call_w"}
        )
        cancel = {"sessionId": child, "toolCallId": "call_w"}
        assert await client.result("tool_call/cancel", cancel) == {}
        seen += await until_parent_idle(client, parent)
    assert refused["code"] == -32602  # not a call of the parent's
    assert seen[-1][1]["stopReason"] == "end_turn"  # the parent's turn went on
    cards = [u for s, u in seen if u["sessionUpdate"] == "tool_call_update"]
    assert not [u for s, u in seen if s == parent and u.get("toolCallId") == "call_w"]
    final = [u for u in cards if u["toolCallId"] == "call_w" and "status" in u][-1]
    assert final["status"] == "cancelled" and final["capabilities"] is None


async def test_a_childs_kept_job_is_listed_by_its_parent_and_ends_in_the_childs_session(
    tmp_path: Path,
) -> None:
    endpoint = RoutedOpenAI()
    kept = json.dumps({"command": "echo up; exec sleep 300", "background": True})
    asked = in_child(endpoint, model_call(0, "call_b", "bash", kept))
    async with endpoint, unstable_client(*on_model(endpoint, tmp_path / "s")) as (client, _, _):
        parent, child = await delegated(client, tmp_path, asked)
        seen = await until_parent_idle(client, parent)
        assert [b["terminalId"] for b in seen[-1][1]["background"]] == ["call_b"]
        cancel = {"sessionId": child, "terminalId": "call_b"}
        assert await client.result("terminal/cancel", cancel) == {}
        after: list[tuple[str, dict[str, Any]]] = []
        await until_seen(client, lambda s, u: s == parent and u.get("state") == "idle", after)
    terminals = {
        s: [u for ss, u in seen + after if ss == s and u["sessionUpdate"] == "terminal_update"]
        for s in (parent, child)
    }
    assert terminals[parent] == []  # the parent never names a terminal it did not draw
    drawn, announced, ended = terminals[child]
    assert drawn["terminalId"] == "call_b" and "cwd" in drawn
    assert announced == {
        "sessionUpdate": "terminal_update",
        "terminalId": "call_b",
        "capabilities": {"cancel": {}},
    }
    assert ended["exitStatus"] == {"signal": "SIGTERM"} and ended["capabilities"] is None
    assert after[-1][1]["background"] == []
    assert [u for s, u in seen + after if s == child and u["sessionUpdate"] == "state_update"] == []


async def test_session_fork_over_v2(tmp_path: Path) -> None:
    async with unstable_client("--store", str(tmp_path / "store")) as (client, _, initialized):
        assert initialized["capabilities"]["session"]["fork"] == {}
        source = await new_session(client, tmp_path)
        await turn(client, source, "/plan " + json.dumps({"markdown": DOCUMENT}))
        forked = await client.result("session/fork", {"sessionId": source, "cwd": str(tmp_path)})
        fork = forked["sessionId"]
        assert fork != source
        assert set(forked) == {"sessionId", "configOptions", "availableCommands"}
        assert "mode" in [o["configId"] for o in forked["configOptions"]]
        listed = await client.result("session/list", {"cwd": str(tmp_path)})
        assert {s["sessionId"] for s in listed["sessions"]} == {source, fork}
        echoed = await turn(client, fork, "/grep nothing-matches-this")  # the fork runs turns
        assert echoed[-1]["state"] == "idle"
        missing = await client.error("session/fork", {"sessionId": "nope", "cwd": str(tmp_path)})
    assert missing["code"] == -32602
    # Only the unstable schema has the method and the capability.
    assert schema_def_for("agent", "session/fork", "Request", version=2) is None
    assert schema_def_for("agent", "session/fork", "Request", unstable=True, version=2)
    stable = load_schema(False, 2)["$defs"]["SessionCapabilities"]["properties"]
    assert "fork" not in stable


async def test_no_fork_is_offered_without_a_store(tmp_path: Path) -> None:
    async with served(AcpServer(None, acp_v2=True)) as (client, _):  # no store
        client.version, client.unstable = 2, True
        params = {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": {}}
        initialized = await client.result("initialize", params)
    assert "fork" not in initialized["capabilities"]["session"]
