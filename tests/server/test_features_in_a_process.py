"""The December ACP v1 features, each family driven once through a real ``acp-sidecar``
process over its stdio by the official SDK client: message ids, tool-call names, plan
operations, ``session/fork``, steering (``_session/steering``), boolean config options and
``usage_update`` after ``session/resume`` on one model sidecar (the scripted endpoint, a
client that opted into plan operations and boolean options), ``logout`` on a second one whose
key is in its user-wide config file (a client that opted into neither).

Each test works in sessions of its own, so the families stay independent while two sidecars
serve them all. Every message the sidecars write is checked against the schema: the answer to
``session/fork`` and the plan operations against the unstable one (``tests/sdk.py``), the
steering answers against their pinned shape. The in-process tests of each feature are beside
it (``test_message_ids.py``, ``test_steering.py``, ``test_fork.py``, ``test_logout.py``,
``test_boolean_options.py``, ``test_session_lifecycle.py``, ``tests/agent/``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import acp
import pytest
import pytest_asyncio
from acp.schema import (
    BooleanConfigOptionCapabilities,
    ClientCapabilities,
    ClientSessionCapabilities,
    PlanCapabilities,
    SessionConfigOptionsCapabilities,
)

from acp_sidecar.protocol.errors import INVALID_PARAMS
from acp_sidecar.server.logout import META_KEY
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
from tests.agent.model.test_usage import with_usage
from tests.extensions import check_steering_advertised
from tests.fakes import AllowingEditor
from tests.sdk import Transcript, Wire, new_session, prompt, sdk_sidecar
from tests.server.test_message_ids import messages
from tests.server.test_serve_settings import write
from tests.server.test_steering import HANG_GUARD, acp_result, steer

# One sidecar of each kind serves the module's tests, a session (or more) each.
pytestmark = [pytest.mark.process, pytest.mark.asyncio(loop_scope="module")]

WINDOW = 32000
OPTION = "allow_outside_workspace"
SECRET = "sk-feature-runs-4711"
OPTED_IN = ClientCapabilities(
    plan=PlanCapabilities(),
    session=ClientSessionCapabilities(
        config_options=SessionConfigOptionsCapabilities(boolean=BooleanConfigOptionCapabilities())
    ),
)


class Sidecar:
    """One sidecar process and the SDK connection to it."""

    def __init__(self, connection: Any, wire: Wire, transcript: Transcript, root: Path) -> None:
        self.connection = connection
        self.wire = wire
        self.transcript = transcript
        self.root = root
        """Its store (``store``) and config directory (``config``) are under here."""

    def updates(self, session: str, since: int = 0) -> list[dict[str, Any]]:
        return self.transcript.updates(session, since)

    def log(self, session: str) -> bytes:
        return (self.root / "store" / f"{session}.jsonl").read_bytes()

    async def logout(self) -> dict[str, Any]:
        """``logout`` on the SDK's connection (the pinned SDK does not model it); what it
        said."""
        result = await self.connection._conn.send_request("logout", {})
        said: dict[str, Any] = result["_meta"][META_KEY]
        return said


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def scripted() -> AsyncIterator[ScriptedOpenAI]:
    async with ScriptedOpenAI(strict=True) as endpoint:
        yield endpoint


@pytest.fixture
def endpoint(scripted: ScriptedOpenAI) -> Iterator[ScriptedOpenAI]:
    """The module's endpoint, its script and requests cleared; every reply a test scripts
    must have been asked for, and none refused, when it ends."""
    scripted.replies.clear()
    scripted.requests.clear()
    scripted.refused.clear()
    yield scripted
    assert not scripted.replies, "a scripted reply was never asked for"
    assert scripted.refused == []


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def model_process(
    scripted: ScriptedOpenAI, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Sidecar]:
    """``acp-sidecar --model test-model`` on the scripted endpoint, its window known (so it
    meters), for a client that takes plan operations and boolean options (and the unstable
    ``session/fork``)."""
    root = tmp_path_factory.mktemp("modelled")
    transcript = Transcript()
    async with sdk_sidecar(
        AllowingEditor(),
        *("--model", "test-model", "--base-url", scripted.base_url),
        *("--model-info", f"test-model:context={WINDOW}"),
        store=root / "store",
        capabilities=OPTED_IN,
        observers=[transcript],
        unstable=True,
        env={"OPENAI_API_KEY": "sk-test"},
    ) as (connection, wire):
        yield Sidecar(connection, wire, transcript, root)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def keyed_process(
    scripted: ScriptedOpenAI, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Sidecar]:
    """``acp-sidecar`` whose model, endpoint and key come from its user-wide config file,
    for a client that advertises nothing."""
    root = tmp_path_factory.mktemp("keyed")
    config = root / "config" / "acp-sidecar" / "config.toml"
    config.parent.mkdir(parents=True)
    write(config, stored_config(scripted.base_url) + f'api_key = "{SECRET}"\n')
    transcript = Transcript()
    async with sdk_sidecar(
        AllowingEditor(),
        store=root / "store",
        observers=[transcript],
        env={"XDG_CONFIG_HOME": str(root / "config")},
    ) as (connection, wire):
        yield Sidecar(connection, wire, transcript, root)


@pytest.fixture
def modelled(model_process: Sidecar) -> Iterator[Sidecar]:
    """The model sidecar; every message it wrote during the test was valid."""
    since = len(model_process.wire.violations)
    yield model_process
    model_process.wire.check_clean(since)


@pytest.fixture
def keyed(keyed_process: Sidecar) -> Iterator[Sidecar]:
    """The sidecar keyed by its config file; every message it wrote during the test was
    valid."""
    since = len(keyed_process.wire.violations)
    yield keyed_process
    keyed_process.wire.check_clean(since)


def stored_config(base_url: str) -> str:
    return f'# mine\nmodel = "test-model"\nbase_url = "{base_url}"\n'


async def until(condition: Callable[[], bool]) -> None:
    """Wait until ``condition`` holds (a hang guard bounds it)."""

    async def polled() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(polled(), HANG_GUARD)


def of_kind(updates: list[dict[str, Any]], *kinds: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] in kinds]


async def test_message_ids_per_message_live_and_on_load(
    modelled: Sidecar, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    endpoint.script(
        Reply(
            [
                *think("Let me ", "look."),
                *say("I will ", "read it."),
                model_call(0, "call_ids", "read", '{"path": "a.txt"}'),
                stop("tool_calls"),
            ]
        ),
        answer("It says ", "hello."),
    )
    connection = modelled.connection
    session = await new_session(connection, tmp_path)
    assert await prompt(connection, session, "read a.txt") == "end_turn"
    live = messages(modelled.updates(session))
    assert [(kind, text) for kind, _, text in live] == [
        ("user_message_chunk", "read a.txt"),
        ("agent_thought_chunk", "Let me look."),
        ("agent_message_chunk", "I will read it."),
        ("tool_call", "read"),
        ("agent_message_chunk", "It says hello."),  # after the call: a new message
    ]
    assert len({key for kind, key, _ in live if kind != "tool_call"}) == 4
    # Streamed two chunks each: grouped above, the chunks of a message share its one id.
    assert len(of_kind(modelled.updates(session), "agent_thought_chunk")) == 2
    assert len(of_kind(modelled.updates(session), "agent_message_chunk")) == 4

    await connection.close_session(session_id=session)
    since = len(modelled.transcript.messages)
    await connection.load_session(cwd=str(tmp_path), session_id=session, mcp_servers=[])
    assert messages(modelled.updates(session, since)) == live


async def test_tool_calls_carry_their_registry_names_live_and_on_load(
    modelled: Sidecar, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("needle\n")
    endpoint.script(
        calling(
            model_call(0, "call_r", "read", '{"path": "a.txt"}'),
            model_call(1, "call_g", "grep", '{"pattern": "needle"}'),
        ),
        answer("Found it."),
    )
    connection = modelled.connection
    session = await new_session(connection, tmp_path)
    assert await prompt(connection, session, "find the needle") == "end_turn"
    cards = of_kind(modelled.updates(session), "tool_call")
    assert [(c["toolCallId"], c["name"], c["kind"]) for c in cards] == [
        ("call_r", "read", "read"),
        ("call_g", "grep", "search"),
    ]
    await connection.close_session(session_id=session)
    since = len(modelled.transcript.messages)
    await connection.load_session(cwd=str(tmp_path), session_id=session, mcp_servers=[])
    assert of_kind(modelled.updates(session, since), "tool_call") == cards


async def test_plan_operations_reach_the_client_that_opted_in(
    modelled: Sidecar, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    entries = [{"content": "Read the parser", "priority": "high", "status": "in_progress"}]
    document, path = "# Plan\n\n1. Fix the off-by-one.\n", str(tmp_path / "PLAN.md")
    endpoint.script(
        calling(model_call(0, "call_1", "plan", json.dumps({"entries": entries}))),
        calling(model_call(0, "call_2", "plan", json.dumps({"markdown": document, "path": path}))),
        calling(model_call(0, "call_3", "plan", json.dumps({"entries": []}))),
        answer("Planned."),
    )
    session = await new_session(modelled.connection, tmp_path)
    assert await prompt(modelled.connection, session, "plan it") == "end_turn"
    plans = of_kind(modelled.updates(session), "plan", "plan_update", "plan_removed")
    assert plans == [  # each checked against the unstable schema as it came
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "checklist", "entries": entries},
        },
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": "markdown", "content": document, "path": path},
        },
        {"sessionUpdate": "plan_removed", "planId": "checklist"},
    ]
    cards = of_kind(modelled.updates(session), "tool_call")
    assert [c["name"] for c in cards] == ["plan"] * 3


async def test_a_fork_holds_the_parents_history_and_goes_its_own_way(
    modelled: Sidecar, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    capabilities = modelled.wire.initialized.agent_capabilities.session_capabilities
    assert capabilities.fork is not None
    connection, cwd = modelled.connection, str(tmp_path)
    endpoint.script(answer("Hello from the parent."), answer("Hello from the fork."))
    parent = await new_session(connection, tmp_path)
    assert await prompt(connection, parent, "say hello") == "end_turn"
    before = modelled.log(parent)

    forked = await connection.fork_session(session_id=parent, cwd=cwd, mcp_servers=[])
    child = forked.session_id
    assert child != parent
    assert forked.modes is not None and forked.modes.current_mode_id == "ask"
    assert await prompt(connection, child, "and now?") == "end_turn"
    assert endpoint.requests[-1].messages[-3:] == [  # the model reads the parent's history
        {"role": "user", "content": "say hello"},
        {"role": "assistant", "content": "Hello from the parent."},
        {"role": "user", "content": "and now?"},
    ]
    assert modelled.log(parent) == before  # the parent is untouched
    listed = await connection.list_sessions(cwd=cwd)
    assert {s.session_id: s.title for s in listed.sessions} == {
        parent: "say hello",
        child: "Fork: say hello",
    }
    with pytest.raises(acp.RequestError) as refused:
        await connection.fork_session(session_id="0" * 32, cwd=cwd, mcp_servers=[])
    assert refused.value.code == INVALID_PARAMS


async def test_steering_joins_a_running_turn_or_starts_one(
    modelled: Sidecar, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    check_steering_advertised(acp_result(modelled.wire.initialized))
    pause = Pause()
    endpoint.script(
        Reply([*say("Working "), pause, *say("on it."), stop()]),
        answer("Noted: blue."),
        answer("Green it is."),
    )
    connection = modelled.connection
    session = await new_session(connection, tmp_path)
    turn = asyncio.create_task(prompt(connection, session, "paint it"))
    await asyncio.wait_for(pause.reached.wait(), HANG_GUARD)
    assert await steer(connection, session, "make it blue") == "injected"
    pause.release.set()
    assert await turn == "end_turn"
    # Idle: a turn of its own (it ends with its session_info_update).
    assert await steer(connection, session, "now green") == "startedNewTurn"
    await until(lambda: len(of_kind(modelled.updates(session), "session_info_update")) == 2)
    outcome = await steer(connection, session, "and red", idleBehavior="promptRequired")
    assert outcome == "promptRequired"
    with pytest.raises(acp.RequestError) as refused:
        await steer(connection, "no-such-session", "hi")
    assert refused.value.code == INVALID_PARAMS

    said = messages(modelled.updates(session))
    assert [(kind, text) for kind, _, text in said] == [
        ("user_message_chunk", "paint it"),
        ("agent_message_chunk", "Working on it."),
        ("user_message_chunk", "make it blue"),  # at the boundary: after the whole response
        ("agent_message_chunk", "Noted: blue."),
        ("user_message_chunk", "now green"),
        ("agent_message_chunk", "Green it is."),
    ]
    assert len({key for _, key, _ in said}) == 6
    assert endpoint.requests[1].messages[-3:] == [  # the steered prompt, in the same turn
        {"role": "user", "content": "paint it"},
        {"role": "assistant", "content": "Working on it."},
        {"role": "user", "content": "make it blue"},
    ]


async def test_boolean_options_only_for_the_client_that_opted_in(
    modelled: Sidecar, keyed: Sidecar, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("beside the workspace\n")
    read = json.dumps({"path": str(secret)})
    endpoint.script(
        calling(model_call(0, "call_out_1", "read", read)),
        answer("Not allowed."),
        calling(model_call(0, "call_out_2", "read", read)),
        answer("Read it."),
    )
    connection = modelled.connection
    new = await connection.new_session(cwd=str(tmp_path / "ws"), mcp_servers=[])
    session = new.session_id
    [option] = [o for o in new.config_options or () if o.type == "boolean"]
    assert (option.id, option.current_value) == (OPTION, False)
    await connection.set_session_mode(session_id=session, mode_id="auto")
    assert await prompt(connection, session, "read the secret") == "end_turn"

    changed = await connection.set_config_option(config_id=OPTION, session_id=session, value=True)
    [option] = [o for o in changed.config_options if o.type == "boolean"]
    assert option.current_value is True
    assert await prompt(connection, session, "read the secret again") == "end_turn"
    ends = [
        (u["toolCallId"], u["status"])
        for u in of_kind(modelled.updates(session), "tool_call_update")
        if u.get("status") in ("completed", "failed")
    ]
    assert ends == [("call_out_1", "failed"), ("call_out_2", "completed")]

    # A client that did not opt in never sees a boolean option.
    plain = await keyed.connection.new_session(cwd=str(tmp_path / "ws"), mcp_servers=[])
    assert [o.type for o in plain.config_options or ()] == ["select"] * len(
        plain.config_options or ()
    )
    with pytest.raises(acp.RequestError) as refused:
        await keyed.connection.set_config_option(
            config_id=OPTION, session_id=plain.session_id, value=True
        )
    assert refused.value.code == INVALID_PARAMS


async def test_resume_sends_the_context_meter(
    modelled: Sidecar, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    endpoint.script(with_usage(answer("Metered."), 1000, 100))
    connection = modelled.connection
    session = await new_session(connection, tmp_path)
    assert await prompt(connection, session, "meter it") == "end_turn"
    meter = {"sessionUpdate": "usage_update", "used": 1100, "size": WINDOW}
    assert of_kind(modelled.updates(session), "usage_update") == [meter]
    await connection.close_session(session_id=session)

    since = len(modelled.transcript.messages)
    await connection.resume_session(cwd=str(tmp_path), session_id=session, mcp_servers=[])
    await until(lambda: bool(of_kind(modelled.updates(session, since), "usage_update")))
    after = modelled.transcript.messages[since:]
    answered = next(
        i for i, m in enumerate(after) if modelled.wire.methods.get(m.get("id")) == "session/resume"
    )
    metered = next(
        i
        for i, m in enumerate(after)
        if m.get("method") == "session/update" and m["params"]["update"] == meter
    )
    assert answered < metered  # the meter the log left, right after the answer
    assert of_kind(modelled.updates(session, since), "usage_update") == [meter]


async def test_logout_forgets_the_stored_key_and_the_console_answers(
    keyed: Sidecar, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    assert keyed.wire.initialized.agent_capabilities.auth.logout is not None
    (tmp_path / "a.txt").write_text("alpha\n")
    config = keyed.root / "config" / "acp-sidecar" / "config.toml"
    connection = keyed.connection
    endpoint.script(answer("From the model."))
    session = await new_session(connection, tmp_path)
    assert await prompt(connection, session, "hello") == "end_turn"
    assert endpoint.requests[-1].headers["authorization"] == f"Bearer {SECRET}"

    said = await keyed.logout()
    assert (said["outcome"], said["configFile"]) == ("removed", str(config))
    assert (
        f"every editor that runs acp-sidecar with this config file ({config})" in (said["message"])
    )
    assert config.read_text() == stored_config(endpoint.base_url)  # the key alone went
    await until(lambda: "Logged out" in json.dumps(keyed.updates(session)))
    asked = len(endpoint.requests)
    assert await prompt(connection, session, "/read a.txt") == "end_turn"  # the console's
    assert [c["name"] for c in of_kind(keyed.updates(session), "tool_call")] == ["read"]
    assert len(endpoint.requests) == asked
    assert (await keyed.logout())["outcome"] == "nothing"
    assert SECRET not in json.dumps(keyed.transcript.messages)
