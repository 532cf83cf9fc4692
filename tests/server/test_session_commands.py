"""The session's own slash commands, through the official SDK client in process: advertised in
the console and in model mode, run before any driver (the scripted endpoint is never asked, and
no later request holds the command's turn), a ``/word`` that names none reaching the model
unchanged, ``/export`` (HTML and Markdown: the file the command line's export writes, linked
with a ``resource_link``), a tool named like a command, and a command turn replayed.

Every message the sidecar writes is checked against the schema (:class:`tests.sdk.Wire`).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from acp_sidecar.store.records import NoticeRecord, UserMessageRecord
from acp_sidecar.tools import ToolOutput, define_tool
from tests.agent.model.fake_openai import Pause, Reply, ScriptedOpenAI, answer, say, stop
from tests.fakes import AllowingEditor
from tests.in_process import run_cli, sdk_served
from tests.sdk import command, new_session, prompt, sdk_sidecar
from tests.server.test_message_ids import model
from tests.server.test_steering import steer, turns_ended
from tests.server.wire import served
from tests.session_commands import CONSOLE_TOOLS, SESSION_COMMANDS

ENV = {"OPENAI_API_KEY": "sk-test"}


def advertised(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last ``available_commands_update``'s commands."""
    lists = [u for u in updates if u["sessionUpdate"] == "available_commands_update"]
    assert lists, "no commands were advertised"
    commands: list[dict[str, Any]] = lists[-1]["availableCommands"]
    return commands


async def commands_of(wire: Any) -> list[dict[str, Any]]:
    """The commands advertised after ``session/new``, waited for (they follow its answer)."""

    async def arrived() -> None:
        while not any(u["sessionUpdate"] == "available_commands_update" for u in wire.updates):
            await asyncio.sleep(0.01)

    await asyncio.wait_for(arrived(), 20)
    return advertised(wire.updates)


def turn_of(updates: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """The chunks of the turn whose prompt is ``text``: its echo up to the next prompt's."""
    start = next(
        i
        for i, u in enumerate(updates)
        if u["sessionUpdate"] == "user_message_chunk" and u["content"].get("text") == text
    )
    rest = updates[start + 1 :]
    end = next(
        (i for i, u in enumerate(rest) if u["sessionUpdate"] == "user_message_chunk"), len(rest)
    )
    kinds = ("user_message_chunk", "agent_message_chunk")
    return [u for u in [updates[start], *rest[:end]] if u["sessionUpdate"] in kinds]


def link_of(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The one ``resource_link`` among an answer's chunks."""
    [link] = [c["content"] for c in chunks if c["content"]["type"] == "resource_link"]
    return link


def exported_at_the_command(store: Path, session: str, prompt_text: str, fmt: str) -> bytes:
    """What ``acp-sidecar replay SESSION --html|--markdown OUT`` writes for the session's log
    as it stood when the command with ``prompt_text`` ran: up to and including its prompt."""
    lines = (store / f"{session}.jsonl").read_bytes().splitlines(keepends=True)
    cut = next(
        i
        for i, line in enumerate(lines)
        if (record := json.loads(line))["type"] == "user_message"
        and record["content"] == [{"type": "text", "text": prompt_text}]
    )
    copy = store.parent / f"copy-{fmt}"
    copy.mkdir()
    (copy / f"{session}.jsonl").write_bytes(b"".join(lines[: cut + 1]))
    out = store.parent / f"expected-{fmt}"
    ran = run_cli("replay", session, f"--{fmt}", str(out), "--store", str(copy))
    assert ran.returncode == 0, ran.stderr
    return out.read_bytes()


def check_link(link: dict[str, Any], path: Path, mime_type: str) -> None:
    assert link["uri"] == path.as_uri() and link["uri"].startswith("file:///")
    assert link["name"] == path.name
    assert link["mimeType"] == mime_type
    assert link["size"] == path.stat().st_size


# -- advertised ----------------------------------------------------------------------------


async def test_the_console_advertises_its_tools_then_the_session_commands(tmp_path: Path) -> None:
    async with sdk_served(AllowingEditor(), store=tmp_path / "store") as (connection, wire):
        await new_session(connection, tmp_path)
        commands = await commands_of(wire)
    assert [c["name"] for c in commands] == [*CONSOLE_TOOLS, *SESSION_COMMANDS]
    export = commands[len(CONSOLE_TOOLS)]
    assert export["description"].startswith("Write this session's transcript")
    assert export["input"] == {"hint": "md for Markdown (default: HTML)"}


async def test_model_mode_advertises_the_session_commands(tmp_path: Path) -> None:
    async with (
        ScriptedOpenAI(strict=True) as endpoint,
        sdk_served(AllowingEditor(), *model(endpoint), store=tmp_path / "store", env=ENV) as (
            connection,
            wire,
        ),
    ):
        await new_session(connection, tmp_path)
        commands = await commands_of(wire)
    assert [c["name"] for c in commands] == SESSION_COMMANDS
    assert endpoint.requests == []


# -- before the model ----------------------------------------------------------------------


async def test_a_command_runs_before_the_model_and_no_request_holds_its_turn(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(answer("Hello there."), answer("Again."))
        async with sdk_served(AllowingEditor(), *model(endpoint), store=store, env=ENV) as (
            connection,
            wire,
        ):
            session = await new_session(connection, tmp_path)
            assert await prompt(connection, session, "hello") == "end_turn"
            assert await prompt(connection, session, "  /export md") == "end_turn"
            assert len(endpoint.requests) == 1  # the command asked the model nothing
            assert await prompt(connection, session, "again") == "end_turn"
            exported = turn_of(wire.updates, "  /export md")
    # The next request holds the turns before and after, never the command or its answer.
    assert endpoint.requests[1].messages[1:] == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "Hello there."},
        {"role": "user", "content": "again"},
    ]
    echo, text, link = exported
    assert echo["messageId"] not in (text["messageId"], None)
    assert text["messageId"] == link["messageId"]  # one answer, one message
    assert text["content"]["text"].startswith("Exported this session as Markdown to ")
    target = store / f"{session}.md"
    check_link(link["content"], target, "text/markdown")
    with SessionStore(store).open_log(session) as log:
        records = list(log)
    prompts = [r for r in records if isinstance(r, UserMessageRecord)]
    assert [p.command for p in prompts] == [None, "export", None]
    [notice] = [r for r in records if isinstance(r, NoticeRecord)]
    assert notice.message_id == text["messageId"]
    assert [dict(block) for block in notice.content] == [link["content"]]


async def test_a_word_that_is_no_command_reaches_the_model_unchanged(tmp_path: Path) -> None:
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(answer("No such thing."))
        async with sdk_served(
            AllowingEditor(), *model(endpoint), store=tmp_path / "store", env=ENV
        ) as (connection, _wire):
            session = await new_session(connection, tmp_path)
            assert await prompt(connection, session, "/exports now, please") == "end_turn"
    assert endpoint.requests[0].messages[-1] == {
        "role": "user",
        "content": "/exports now, please",
    }


async def test_a_command_steered_into_a_model_turn_waits_for_a_turn_of_its_own(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    pause = Pause()
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(Reply([*say("Working "), pause, *say("on it."), stop()]), answer("Ok."))
        async with sdk_served(AllowingEditor(), *model(endpoint), store=store, env=ENV) as (
            connection,
            wire,
        ):
            session = await new_session(connection, tmp_path)
            turn = asyncio.create_task(prompt(connection, session, "paint it"))
            await asyncio.wait_for(pause.reached.wait(), 20)
            steered = asyncio.create_task(steer(connection, session, "/export"))
            pause.release.set()
            assert await turn == "end_turn"
            assert await steered == "startedNewTurn"  # not injected: the model went on alone
            await turns_ended(wire.updates, 2)
            assert len(endpoint.requests) == 1
            assert await prompt(connection, session, "go on") == "end_turn"
    assert (store / f"{session}.html").is_file()
    assert endpoint.requests[1].messages[1:] == [
        {"role": "user", "content": "paint it"},
        {"role": "assistant", "content": "Working on it."},
        {"role": "user", "content": "go on"},
    ]


# -- /export ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "fmt", "suffix", "mime_type"),
    [
        ("", "html", ".html", "text/html"),
        ("md", "markdown", ".md", "text/markdown"),
    ],
)
async def test_export_writes_what_the_command_line_export_writes(
    tmp_path: Path, argument: str, fmt: str, suffix: str, mime_type: str
) -> None:
    store = tmp_path / "store"
    typed = f"/export {argument}".strip()
    async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
        session = await new_session(connection, tmp_path, mode="auto")
        assert await prompt(connection, session, "!echo shared <b>thread</b>") == "end_turn"
        assert await prompt(connection, session, command("read", path="nowhere.txt"))
        assert await prompt(connection, session, typed) == "end_turn"
        answer_chunks = turn_of(wire.updates, typed)
    target = store / f"{session}{suffix}"
    check_link(link_of(answer_chunks), target, mime_type)
    assert target.stat().st_mode & 0o777 == 0o600  # as private as the log beside it
    written = target.read_bytes()
    assert written == exported_at_the_command(store, session, typed, fmt)
    assert b"shared" in written and typed.encode() in written  # this turn's prompt too
    assert sorted(p.name for p in store.iterdir() if p.name.startswith(".")) == [
        ".session-locks"
    ]  # no temporary file left


async def test_a_second_export_replaces_the_first_and_a_first_turn_exports_its_prompt(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    async with sdk_served(AllowingEditor(), store=store) as (connection, _wire):
        session = await new_session(connection, tmp_path)
        assert await prompt(connection, session, "/export") == "end_turn"
        target = store / f"{session}.html"
        first = target.read_bytes()
        assert first == exported_at_the_command(store, session, "/export", "html")
        inode = target.stat().st_ino
        assert await prompt(connection, session, "/export  html") == "end_turn"
    second = target.read_bytes()
    assert second != first and b"/export  html" in second
    assert target.stat().st_ino != inode  # replaced whole, not written over in place


async def test_an_export_that_cannot_be_written_is_the_answer_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
        session = await new_session(connection, tmp_path)
        (store / f"{session}.md").mkdir(parents=True)  # not a file the session may replace
        assert await prompt(connection, session, "/export md") == "end_turn"
        refused = turn_of(wire.updates, "/export md")
        assert await prompt(connection, session, "/export") == "end_turn"
        earlier = (store / f"{session}.html").read_bytes()

        def full(source: Any, target: Any) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr("acp_sidecar.export.command.os.replace", full)
        assert await prompt(connection, session, "/export html") == "end_turn"
        failed = turn_of(wire.updates, "/export html")
    for chunks in (refused, failed):
        [_echo, said] = chunks  # text only: no link
        assert said["content"]["text"].startswith("The transcript could not be written (")
        assert said["content"]["text"].endswith("); nothing was written.")
    assert "No space left on device" in failed[1]["content"]["text"]
    assert list((store / f"{session}.md").iterdir()) == []
    assert (store / f"{session}.html").read_bytes() == earlier  # the earlier export intact
    assert not [p for p in store.iterdir() if p.name.endswith(".tmp")]


async def test_export_names_what_it_takes_and_needs_a_store(tmp_path: Path) -> None:
    async with sdk_served(AllowingEditor(), store=tmp_path / "store") as (connection, wire):
        session = await new_session(connection, tmp_path)
        assert await prompt(connection, session, "/export pdf") == "end_turn"
        [_echo, said] = turn_of(wire.updates, "/export pdf")
    assert said["content"]["text"] == (
        "`/export` writes HTML, or Markdown with `/export md`; it does not know `pdf`."
    )
    async with served(AcpServer(cancel_grace=0.3)) as (client, _server):  # nothing stored
        await client.initialize()
        session = await client.new_session(str(tmp_path))
        await client.next_response(await client.start_prompt(session, "/export"))
        assert client.texts()[-1].startswith("This session is not stored")


async def test_deleting_a_session_removes_its_exports(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with sdk_served(AllowingEditor(), store=store) as (connection, _wire):
        session = await new_session(connection, tmp_path)
        assert await prompt(connection, session, "/export") == "end_turn"
        assert await prompt(connection, session, "/export md") == "end_turn"
    assert {p.name for p in store.iterdir()} >= {f"{session}.html", f"{session}.md"}
    SessionStore(store).delete(session)
    assert not [p for p in store.iterdir() if p.name.startswith(session)]


# -- a tool of the same name ---------------------------------------------------------------


@attrs.frozen
class Nothing:
    pass


CALLED: list[str] = []


async def _export_tool(args: Nothing, execution: Any) -> ToolOutput:
    CALLED.append("export")
    return ToolOutput("the tool ran")


EXPORT_TOOL = define_tool(
    name="export", description="A tool that exports.", parameters=Nothing, execute=_export_tool
)


@pytest.fixture
def called() -> Iterator[list[str]]:
    CALLED.clear()
    yield CALLED
    CALLED.clear()


async def test_the_session_command_wins_over_a_console_tool_of_its_name(
    tmp_path: Path, called: list[str]
) -> None:
    store = tmp_path / "store"
    tools = ToolsProvider(builtins=False, entry_points=False, extra=[EXPORT_TOOL])
    server = AcpServer(tools=tools, store=lambda: SessionStore(store), cancel_grace=0.3)
    async with served(server) as (client, _server):
        await client.initialize()
        session = await client.new_session(str(tmp_path))
        update = (await client.next_update())["params"]["update"]
        first = update["availableCommands"][0]
        assert (first["name"], first["description"]) == (
            "export",
            "Write this session's transcript beside its log (HTML; `md`: Markdown).",
        )
        await client.next_response(await client.start_prompt(session, "/export"))
        await client.next_response(await client.start_prompt(session, "help"))
        await client.next_response(await client.start_prompt(session, "/nothing"))
    assert called == []  # the tool never ran
    assert (store / f"{session}.html").is_file()
    updates = [u["params"]["update"] for u in client.updates]
    said = [u["content"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    help_text, unknown = [c["text"] for c in said if c["type"] == "text"][-2:]
    assert help_text.count("`/export`") == 1 and "Write this session" in help_text
    assert (
        "Available commands: /budget, /export, /jobs, /keep, /kill, /permissions, /redo, /rewind,"
        " /undo." in unknown
    )


# -- replay --------------------------------------------------------------------------------


async def test_a_command_turn_replays_as_it_was_shown(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
        session = await new_session(connection, tmp_path)
        assert await prompt(connection, session, "/export md") == "end_turn"
        live = turn_of(wire.updates, "/export md")
    async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
        await connection.load_session(cwd=str(tmp_path), session_id=session, mcp_servers=[])
        replayed = turn_of(wire.updates, "/export md")
    assert replayed == live
    assert [c["content"]["type"] for c in replayed] == ["text", "text", "resource_link"]
    ran = run_cli("replay", session, "--json", "--store", str(store))
    assert ran.returncode == 0, ran.stderr
    assert link_of(live)["uri"] in ran.stdout
    assert os.path.isfile(store / f"{session}.md")


# -- a process -----------------------------------------------------------------------------


@pytest.mark.process
async def test_export_over_stdio_from_the_official_sdk_client(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with sdk_sidecar(AllowingEditor(), store=store) as (connection, wire):
        session = await new_session(connection, tmp_path)
        commands = await commands_of(wire)
        assert [c["name"] for c in commands] == [*CONSOLE_TOOLS, *SESSION_COMMANDS]
        assert await prompt(connection, session, "what is this?") == "end_turn"
        assert await prompt(connection, session, "/export") == "end_turn"
        chunks = turn_of(wire.updates, "/export")
    target = store / f"{session}.html"
    check_link(link_of(chunks), target, "text/html")
    assert target.read_bytes() == exported_at_the_command(store, session, "/export", "html")
