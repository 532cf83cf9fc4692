"""``session/prompt`` over v2 while the session runs a turn, in process, every message judged by
the v2 schema: into a console turn the prompt waits and runs next (answered once inserted,
after the first turn's ``idle``), several in arrival order; into a model turn it is steered and
answered with the id of the echo the model then reads; ``session/cancel`` ends the running
turn only (an untaken steer is inserted as it ends, a waiting prompt still runs);
``$/cancel_request`` withdraws a waiting prompt.

Spec: the vendored ``tests/fixtures/acp/v2/schema.json`` (``PromptRequest``,
``PromptResponse``, ``StateUpdate``, ``UserMessageChunk``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from acp_sidecar.agent.driver import DriverBase, Turn
from acp_sidecar.protocol.content import TextContentBlock
from acp_sidecar.protocol.initialize import PromptCapabilities
from acp_sidecar.protocol.session import StopReason
from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.drivers import DriverFactory
from acp_sidecar.server.v2 import prompting
from tests.agent.model.fake_openai import Pause, Reply, ScriptedOpenAI, answer, say, stop
from tests.conformance.v2.test_prompt_lifecycle import CLIENT_INFO, prompt
from tests.drivers import ScriptDriver
from tests.in_process import cli_server, kept_process_state
from tests.server.wire import WireClient, served

HANG_GUARD = 20.0


async def v2_client(client: WireClient, cwd: Path) -> str:
    """Initialize ``client`` in v2 and open a session in ``cwd``."""
    client.version = 2
    params = {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": {}}
    await client.result("initialize", params)
    client.initialized = True
    created = await client.result("session/new", {"cwd": str(cwd)})
    session_id: str = created["sessionId"]
    return session_id


@asynccontextmanager
async def scripted(
    cwd: Path, driver: DriverFactory | None
) -> AsyncIterator[tuple[WireClient, AcpServer, str]]:
    """A v2 connection to a server on ``driver`` (``None``: the console), one session."""
    async with served(AcpServer(driver, cancel_grace=0.3, acp_v2=True)) as (client, server):
        yield client, server, await v2_client(client, cwd)


@asynccontextmanager
async def on_model(
    cwd: Path, endpoint: ScriptedOpenAI
) -> AsyncIterator[tuple[WireClient, AcpServer, str]]:
    """A v2 connection to ``acp-sidecar --acp-v2`` on the scripted model, one session."""
    args = ("--acp-v2", "--model", "test-model", "--base-url", endpoint.base_url)
    with kept_process_state(env={"OPENAI_API_KEY": "sk-test"}):
        async with served(cli_server(*args)) as (client, server):
            yield client, server, await v2_client(client, cwd)


@asynccontextmanager
async def painting(
    cwd: Path, *more: Reply
) -> AsyncIterator[tuple[ScriptedOpenAI, Pause, WireClient, str, str]]:
    """A model turn on "paint it" held mid-response (``more``: the endpoint's later replies):
    the endpoint, its pause, the client, the session and the prompt's message id."""
    pause = Pause()
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(Reply([*say("Working "), pause, *say("on it."), stop()]), *more)
        async with on_model(cwd, endpoint) as (client, _server, session_id):
            started = await client.result("session/prompt", prompt(session_id, "paint it"))
            await asyncio.wait_for(pause.reached.wait(), HANG_GUARD)
            yield endpoint, pause, client, session_id, started["messageId"]


async def read(client: WireClient, done: Callable[[], bool]) -> None:
    """Read what the sidecar writes until ``done`` (everything kept in ``client.received``)."""

    async def reading() -> None:
        while not done():
            await client.receive()

    await asyncio.wait_for(reading(), HANG_GUARD)


async def settled(client: WireClient) -> None:
    """A round trip: every request sent before has run its first step (read in order, each
    handler starts before the next line's), so a prompt sent before waits or was offered."""
    await client.send_request("session/list", {})
    await read(client, lambda: any("sessions" in m.get("result", {}) for m in client.received))


def answer_of(client: WireClient, msg_id: int) -> int | None:
    """Where the answer to ``msg_id`` is in ``client.received`` (``None``: not yet)."""
    return next(
        (i for i, m in enumerate(client.received) if m.get("id") == msg_id and "method" not in m),
        None,
    )


def timeline(client: WireClient, *prompts: int) -> list[tuple[str, str]]:
    """What the session went through, in order: states, echoes (their text), agent text and
    the answers to ``prompts`` (their message ids)."""
    shown: list[tuple[str, str]] = []
    for message in client.received:
        if message.get("id") in prompts and "method" not in message:
            shown.append(("answer", message["result"]["messageId"]))
            continue
        if message.get("method") != "session/update":
            continue
        update = message["params"]["update"]
        match update["sessionUpdate"]:
            case "state_update":
                shown.append((update["state"], update.get("stopReason", "")))
            case "user_message_chunk":
                shown.append(("user", update["messageId"]))
            case "agent_message_chunk" if update["content"].get("text") not in (None, ""):
                if shown and shown[-1][0] == "agent":
                    shown[-1] = ("agent", shown[-1][1] + update["content"]["text"])
                else:
                    shown.append(("agent", update["content"]["text"]))
    return shown


def idles(client: WireClient) -> int:
    return sum(kind == "idle" for kind, _ in timeline(client))


def echoed(client: WireClient, message_id: str) -> list[str]:
    """The text of the echo under ``message_id``."""
    return [
        m["params"]["update"]["content"]["text"]
        for m in client.received
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "user_message_chunk"
        and m["params"]["update"]["messageId"] == message_id
    ]


async def test_prompts_into_a_console_turn_wait_and_run_next_in_arrival_order(
    tmp_path: Path,
) -> None:
    write = "/write " + json.dumps({"path": "new.txt", "content": "x\n"})
    read_back = "/read " + json.dumps({"path": "new.txt"})
    async with scripted(tmp_path, None) as (client, server, session_id):
        first = (await client.result("session/prompt", prompt(session_id, write)))["messageId"]
        dialog = await client.next_agent_request()  # the turn runs, waiting for the user
        assert dialog["method"] == "session/request_permission"
        second = await client.send_request("session/prompt", prompt(session_id, read_back))
        third = await client.send_request("session/prompt", prompt(session_id, "/jobs"))
        await settled(client)
        session = server.sessions[session_id]
        assert session.steering.locked() and session.running is not None  # both wait
        assert answer_of(client, second) is None and answer_of(client, third) is None
        allow = next(o for o in dialog["params"]["options"] if o["kind"] == "allow_once")
        await client.respond(
            dialog["id"], {"outcome": {"outcome": "selected", "optionId": allow["optionId"]}}
        )
        await read(client, lambda: idles(client) == 3)
        shown = timeline(client, second, third)
    ids = [value for kind, value in shown if kind == "answer"]
    assert len(ids) == 2 and len({first, *ids}) == 3
    states = [kind for kind, _ in shown if kind in ("running", "requires_action", "idle")]
    assert states == ["running", "requires_action", "running", "idle", *["running", "idle"] * 2]
    order = [(kind, value) for kind, value in shown if kind in ("user", "answer", "idle")]
    assert order == [
        ("user", first),
        ("idle", "end_turn"),  # the first turn's idle comes before the next is answered
        ("user", ids[0]),
        ("answer", ids[0]),
        ("idle", "end_turn"),
        ("user", ids[1]),
        ("answer", ids[1]),
        ("idle", "end_turn"),
    ]
    assert echoed(client, ids[0]) == [read_back] and echoed(client, ids[1]) == ["/jobs"]
    cards = [
        m["params"]["update"]
        for m in client.received
        if m.get("method") == "session/update" and m["params"]["update"].get("name")
    ]
    assert [card["name"] for card in cards] == ["write", "read"]  # /read ran after /write
    assert (tmp_path / "new.txt").read_text() == "x\n"


async def test_a_prompt_steered_into_a_model_turn_is_answered_with_the_echo_the_model_reads(
    tmp_path: Path,
) -> None:
    held = painting(tmp_path, answer("Noted: blue."))
    async with held as (endpoint, pause, client, session_id, painted):
        steered = await client.send_request("session/prompt", prompt(session_id, "blue"))
        await settled(client)
        assert answer_of(client, steered) is None  # offered: the driver has not taken it
        pause.release.set()
        await read(client, lambda: idles(client) == 1)
        shown = timeline(client, steered)
    (message_id,) = [value for kind, value in shown if kind == "answer"]
    assert [entry for entry in shown if entry[0] != "answer"] == [
        ("running", ""),
        ("user", painted),
        ("agent", "Working on it."),
        ("user", message_id),  # at the boundary: after the whole response
        ("agent", "Noted: blue."),
        ("idle", "end_turn"),
    ]
    assert shown.index(("user", message_id)) < shown.index(("answer", message_id))
    assert echoed(client, message_id) == ["blue"]
    # The model read the steered prompt after its own response, in the same turn.
    assert endpoint.requests[1].messages[-3:] == [
        {"role": "user", "content": "paint it"},
        {"role": "assistant", "content": "Working on it."},
        {"role": "user", "content": "blue"},
    ]


async def test_cancel_ends_the_running_turn_and_the_waiting_prompts_still_go_in(
    tmp_path: Path,
) -> None:
    async with painting(tmp_path) as (endpoint, pause, client, session_id, painted):
        steered = await client.send_request("session/prompt", prompt(session_id, "blue"))
        # A session command (an immediate one, which v1 runs beside the turn) waits.
        waiting = await client.send_request("session/prompt", prompt(session_id, "/jobs"))
        await settled(client)
        assert answer_of(client, steered) is None and answer_of(client, waiting) is None
        await client.notify("session/cancel", {"sessionId": session_id})
        await read(client, lambda: idles(client) == 2)
        pause.release.set()
        shown = timeline(client, steered, waiting)
    answers = [value for kind, value in shown if kind == "answer"]
    assert len(answers) == 2
    steered_id, waiting_id = answers if echoed(client, answers[0]) == ["blue"] else answers[::-1]
    assert echoed(client, steered_id) == ["blue"] and echoed(client, waiting_id) == ["/jobs"]
    order = [(kind, value) for kind, value in shown if kind in ("user", "running", "idle")]
    assert order == [
        ("running", ""),
        ("user", painted),
        ("user", steered_id),  # never taken: inserted as the cancelled turn ends (v1's rule)
        ("idle", "cancelled"),
        ("running", ""),
        ("user", waiting_id),  # the waiting prompt runs a turn of its own
        ("idle", "end_turn"),
    ]
    assert len(endpoint.requests) == 1  # no model read the steered prompt in the cancelled turn


async def test_a_cancelled_request_withdraws_its_waiting_prompt(tmp_path: Path) -> None:
    async with scripted(tmp_path, ScriptDriver) as (client, _server, session_id):
        await client.result("session/prompt", prompt(session_id, "wait"))
        withdrawn = await client.send_request("session/prompt", prompt(session_id, "echo two"))
        await settled(client)
        await client.notify("$/cancel_request", {"requestId": withdrawn})
        await read(client, lambda: answer_of(client, withdrawn) is not None)
        refused = client.received[answer_of(client, withdrawn) or 0]
        await client.notify("session/cancel", {"sessionId": session_id})
        await read(client, lambda: idles(client) == 1)
        after = await client.send_request("session/prompt", prompt(session_id, "echo three"))
        await read(client, lambda: idles(client) == 2)
        shown = timeline(client, after)
    assert refused["error"]["code"] == -32800
    said = [text for kind, text in shown if kind == "agent"]
    assert said == ["started", "three"]  # "two" never ran
    echoes = [value for kind, value in shown if kind == "user"]
    assert len(echoes) == 2


async def test_the_next_prompt_waits_for_the_idle_of_a_turn_that_ends_telling_of_a_job(
    tmp_path: Path,
) -> None:
    # A turn that leaves a job running awaits the job's view after the session is idle, to
    # tell the user of it: the next turn must still start only after that turn's idle.
    keep = "/bash " + json.dumps(
        {"command": f"while [ ! -e {tmp_path / 'stop'} ]; do sleep 0.02; done", "background": True}
    )
    async with scripted(tmp_path, None) as (client, _server, session_id):
        await client.result("session/prompt", prompt(session_id, keep))
        dialog = await client.next_agent_request()
        next_one = await client.send_request("session/prompt", prompt(session_id, "/jobs"))
        await settled(client)
        allow = next(o for o in dialog["params"]["options"] if o["kind"] == "allow_once")
        await client.respond(
            dialog["id"], {"outcome": {"outcome": "selected", "optionId": allow["optionId"]}}
        )
        await read(client, lambda: idles(client) == 2)
        (tmp_path / "stop").touch()
        shown = timeline(client, next_one)
    states = [kind for kind, _ in shown if kind in ("running", "idle", "answer")]
    assert states[states.index("idle") :] == ["idle", "running", "answer", "idle"]


async def test_a_cancelled_request_withdraws_its_steered_prompt_before_the_driver_takes_it(
    tmp_path: Path,
) -> None:
    async with painting(tmp_path) as (endpoint, pause, client, session_id, _painted):
        steered = await client.send_request("session/prompt", prompt(session_id, "blue"))
        await settled(client)
        await client.notify("$/cancel_request", {"requestId": steered})
        await read(client, lambda: answer_of(client, steered) is not None)
        refused = client.received[answer_of(client, steered) or 0]
        pause.release.set()
        await read(client, lambda: idles(client) == 1)
        shown = timeline(client)
    assert refused["error"]["code"] == -32800
    assert [kind for kind, _ in shown] == ["running", "user", "agent", "idle"]
    assert shown[-1] == ("idle", "end_turn")
    assert len(endpoint.requests) == 1  # the turn ended: nothing was steered into it


class WindsDownSlowly(DriverBase):
    """Steers; its first turn, once cancelled, takes a while to wind down (a command being
    stopped); later turns end at once."""

    steers = True
    prompt_capabilities = PromptCapabilities()

    def __init__(self) -> None:
        self.wound_down = asyncio.Event()
        self.prompts: list[str] = []

    async def run_turn(self, turn: Turn) -> StopReason:
        block = turn.prompt[0]
        self.prompts.append(block.text if isinstance(block, TextContentBlock) else "")
        if len(self.prompts) > 1:
            return "end_turn"
        await turn.signal.wait()
        await self.wound_down.wait()
        return "cancelled"


async def test_a_prompt_sent_after_cancel_runs_as_a_turn_of_its_own(tmp_path: Path) -> None:
    driver = WindsDownSlowly()
    async with scripted(tmp_path, lambda: driver) as (client, _server, session_id):
        await client.result("session/prompt", prompt(session_id, "one"))
        await client.notify("session/cancel", {"sessionId": session_id})
        instead = await client.send_request("session/prompt", prompt(session_id, "instead"))
        await settled(client)
        driver.wound_down.set()  # the cancelled turn's inbox was open all along
        await read(client, lambda: idles(client) == 2)
        shown = timeline(client, instead)
    assert driver.prompts == ["one", "instead"]  # a driver read it, in a turn of its own
    states = [entry for entry in shown if entry[0] in ("running", "idle")]
    assert states == [("running", ""), ("idle", "cancelled"), ("running", ""), ("idle", "end_turn")]


async def test_a_turn_cancelled_before_its_prompt_went_in_still_ends_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reported = asyncio.Event()

    async def running_then_held(*_: object, started: Callable[[], None], **__: object) -> None:
        started()  # running is reported; the echo would come next, and waits on the client
        reported.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(prompting, "run_prompt_turn", running_then_held)
    async with scripted(tmp_path, ScriptDriver) as (client, _server, session_id):
        request = await client.send_request("session/prompt", prompt(session_id, "one"))
        await asyncio.wait_for(reported.wait(), HANG_GUARD)
        await client.notify("$/cancel_request", {"requestId": request})
        await read(client, lambda: answer_of(client, request) is not None)
        await settled(client)
    states = [kind for kind, _ in timeline(client) if kind in ("running", "idle")]
    assert states == ["running", "idle"]  # the running it reported is ended, with no stop
