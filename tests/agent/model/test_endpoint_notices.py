"""What the user is told while the model endpoint fails or keeps them waiting, over the wire
(an in-process server, every message checked against the ACP schema): a ``notice`` where the
client takes notices, else agent text in which each of the sidecar's messages is a paragraph
of its own."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.driver import DriverBase, Turn, send_notice
from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.protocol import PromptCapabilities, StopReason
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from acp_sidecar.tools.registry import ToolRegistry
from tests.agent.model.fake_openai import Pause, Reply, ScriptedOpenAI, answer
from tests.agent.model.harness import Clock
from tests.drivers import chunk
from tests.server.wire import WireClient, served

NOTICES = {"session": {"notices": {}}}


def unavailable(status: int = 503) -> Reply:
    """An overloaded server's answer, retried at once (the test stays fast)."""
    return Reply(
        status=status,
        body={"error": {"message": "overloaded", "type": "unavailable_error"}},
        headers={"retry-after-ms": "10"},
    )


@pytest.fixture
async def serve(endpoint: ScriptedOpenAI, tmp_path: Path) -> Callable[..., Any]:
    """Serve a model driver against the scripted endpoint (``settings``: the config's)."""

    def make(**settings: Any) -> Any:
        config = ModelConfig(
            **{
                "model": "test-model",
                "base_url": endpoint.base_url,
                "api_key": "sk-test",
                "max_retries": 2,
            }
            | settings
        )
        server = AcpServer(
            lambda: ModelDriver(config, ToolRegistry),
            tools=ToolsProvider(builtins=False, entry_points=False),
            store=lambda: SessionStore(tmp_path / "store"),
        )
        return served(server)

    return make


async def prompt(wire: WireClient, cwd: Path, capabilities: dict[str, Any]) -> list[Any]:
    """Initialize, open a session, send one prompt; the updates it brought."""
    await wire.initialize(**capabilities)
    session = await wire.new_session(str(cwd))
    response = await wire.next_response(await wire.start_prompt(session, "hi"))
    assert response["result"]["stopReason"] == "end_turn"
    return [u["params"]["update"] for u in wire.updates]


def notices(updates: list[Any]) -> list[Any]:
    return [u for u in updates if u["sessionUpdate"] == "notice"]


def text(updates: list[Any]) -> str:
    return "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )


async def test_each_retry_says_what_the_attempt_before_ran_into(
    serve: Callable[..., Any], endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    endpoint.script(unavailable(500), unavailable(503), answer("Hello."))

    async with serve() as (wire, _server):
        updates = await prompt(wire, tmp_path, NOTICES)

    first, second = notices(updates)
    assert first["title"] == "The model request failed; retrying (1 of 2)."
    assert first["description"].endswith(
        f"The model endpoint {endpoint.base_url} answered HTTP 500 Internal Server Error; "
        "the request is sent again."
    )
    assert second["description"].endswith(
        f"The model endpoint {endpoint.base_url} answered HTTP 503 Service Unavailable; "
        "the request is sent again."
    )
    assert text(updates) == "Hello."


async def test_retry_notices_as_agent_text_each_stand_in_their_own_paragraph(
    serve: Callable[..., Any], endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    endpoint.script(unavailable(), unavailable(), answer("Hel", "lo."))

    async with serve() as (wire, _server):
        updates = await prompt(wire, tmp_path, {})

    url = endpoint.base_url
    assert notices(updates) == []
    assert text(updates) == (
        "The model request failed; retrying (1 of 2).\n\n"
        f"The model endpoint {url} answered HTTP 503 Service Unavailable; the request is sent "
        "again.\n\n"
        "The model request failed; retrying (2 of 2).\n\n"
        f"The model endpoint {url} answered HTTP 503 Service Unavailable; the request is sent "
        "again.\n\n"
        "Hello."
    )


async def test_a_retry_notice_and_the_failure_after_it_are_two_paragraphs(
    serve: Callable[..., Any], endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    endpoint.script(unavailable(), unavailable())

    async with serve(max_retries=1) as (wire, _server):
        updates = await prompt(wire, tmp_path, {})

    url = endpoint.base_url
    assert text(updates) == (
        "The model request failed; retrying (1 of 1).\n\n"
        f"The model endpoint {url} answered HTTP 503 Service Unavailable; the request is sent "
        "again.\n\n"
        f"The model endpoint {url} failed with HTTP 503 after 1 retry: overloaded."
    )


class Talkative(DriverBase):
    """Says some text, two notices, more text, and a notice that ends the turn."""

    prompt_capabilities = PromptCapabilities()

    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.send(chunk("Some"))
        await turn.send(chunk(" text."))
        await send_notice(turn, "The conversation is too long (the session keeps them).")
        await send_notice(turn, "Could not reach the model endpoint.")
        await turn.send(chunk("More text\n"))
        await send_notice(turn, "\n\nThe answer was cut off.")
        return "end_turn"


@pytest.fixture
async def talkative(tmp_path: Path) -> AsyncIterator[tuple[WireClient, AcpServer]]:
    server = AcpServer(
        Talkative,
        tools=ToolsProvider(builtins=False, entry_points=False),
        store=lambda: SessionStore(tmp_path / "store"),
    )
    async with served(server) as pair:
        yield pair


async def test_every_notice_in_a_turn_stands_in_its_own_paragraph(
    talkative: tuple[WireClient, AcpServer], tmp_path: Path
) -> None:
    wire, server = talkative

    updates = await prompt(wire, tmp_path, {})
    again = await wire.next_response(await wire.start_prompt(next(iter(server.sessions)), "x"))

    assert again["result"]["stopReason"] == "end_turn"
    assert text(updates) == (
        "Some text.\n\n"
        "The conversation is too long (the session keeps them).\n\n"
        "Could not reach the model endpoint.\n\n"
        "More text\n\n\n"
        "The answer was cut off."
    )
    # A new prompt starts a new message: its first text starts no paragraph.
    second_turn = [u["params"]["update"] for u in wire.updates][len(updates) :]
    assert text(second_turn).startswith("Some text.\n\nThe conversation")
    # The log keeps each text as it was said, the notices as notices.
    [log] = (tmp_path / "store").glob("*.jsonl")
    said = [
        (record["type"], record.get("text"))
        for record in map(json.loads, log.read_text().splitlines())
        if record["type"] in ("notice", "agent_message")
    ][:4]
    assert said == [
        ("agent_message", "Some text."),
        ("notice", "The conversation is too long (the session keeps them)."),
        ("notice", "Could not reach the model endpoint."),
        ("agent_message", "More text\n"),
    ]


# -- waiting for the model -----------------------------------------------------------------


@pytest.fixture
async def waited(
    endpoint: ScriptedOpenAI, tmp_path: Path
) -> AsyncIterator[tuple[WireClient, Clock]]:
    """A served model driver whose waits run on the test's clock."""
    clock = Clock()
    config = ModelConfig(model="test-model", base_url=endpoint.base_url, max_retries=0)

    def driver() -> ModelDriver:
        made = ModelDriver(config, ToolRegistry)
        made.wait_sleep = clock.sleep
        return made

    server = AcpServer(
        driver,
        tools=ToolsProvider(builtins=False, entry_points=False),
        store=lambda: SessionStore(tmp_path / "store"),
    )
    async with served(server) as (wire, _server):
        yield wire, clock


async def wait_out(
    wire: WireClient, clock: Clock, endpoint: ScriptedOpenAI, cwd: Path, capabilities: Any
) -> tuple[str, list[Any]]:
    """A prompt whose answer begins after three ticks of the wait, and pauses after its
    first chunk until the wait has stopped; the session and the prompt's updates."""
    held, streaming = Pause(), Pause()
    first, *rest = answer("Hel", "lo.").events
    endpoint.script(Reply([first, streaming, *rest], before=held))
    await wire.initialize(**capabilities)
    session = await wire.new_session(str(cwd))
    asked = await wire.start_prompt(session, "hi")
    await held.reached.wait()
    for ticks in range(4):  # the wait sleeps, and again after each of three ticks
        assert await clock.asleep.get() == 10.0
        if ticks < 3:
            clock.tick()
    held.release.set()
    await streaming.reached.wait()
    await clock.stopped.wait()  # the first chunk ended the wait
    streaming.release.set()
    response = await wire.next_response(asked)
    assert response["result"]["stopReason"] == "end_turn"
    return session, [u["params"]["update"] for u in wire.updates]


async def test_a_client_that_takes_notices_is_told_the_wait_every_tick(
    waited: tuple[WireClient, Clock], endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    wire, clock = waited

    _session, updates = await wait_out(wire, clock, endpoint, tmp_path, NOTICES)

    assert [(n["severity"], n["title"]) for n in notices(updates)] == [
        ("info", "Waiting for the model… 10 s"),
        ("info", "Waiting for the model… 20 s"),
        ("info", "Waiting for the model… 30 s"),
    ]
    assert text(updates) == "Hello."
    assert clock.asleep.empty()  # no tick after the answer began


async def test_another_client_is_told_once_when_the_wait_begins_and_nothing_is_kept(
    waited: tuple[WireClient, Clock], endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    wire, clock = waited

    session, updates = await wait_out(wire, clock, endpoint, tmp_path, {})

    assert notices(updates) == []
    assert text(updates) == "Waiting for the model… 10 s\n\nHello."
    # Neither the log nor the model's next request holds the wait.
    endpoint.script(answer("Sure."))
    again = await wire.next_response(await wire.start_prompt(session, "more"))
    assert again["result"]["stopReason"] == "end_turn"
    [log] = (tmp_path / "store").glob("*.jsonl")
    assert "Waiting" not in log.read_text()
    assert endpoint.requests[-1].messages[1:] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "more"},
    ]


async def test_notices_told_as_agent_text_are_part_of_the_reply_live_and_replayed(
    serve: Callable[..., Any], endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    endpoint.script(unavailable(), answer("Hel", "lo."))

    def said(wire: WireClient) -> list[tuple[str, str]]:
        chunks = [u["params"]["update"] for u in wire.updates]
        return [
            (u["messageId"], u["content"]["text"])
            for u in chunks
            if u["sessionUpdate"] == "agent_message_chunk"
        ]

    async with serve() as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        await wire.next_response(await wire.start_prompt(session, "hi"))
        live = said(wire)
        wire.updates.clear()
        load = {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        await wire.next_response(await wire.send_request("session/load", load))
        replayed = said(wire)
    (reply_id,) = {message_id for message_id, _ in live}  # one agent message shown
    assert "".join(text for _, text in live).endswith("\n\nHello.")
    # The retry was told, not kept: the reply replays alone, under the id it was shown with.
    assert replayed == [(reply_id, "Hello.")]
