"""The console as an editor meets it: ``@``-mentions, the slash-command menu, the help reply.

Found with real clients: an ``@file`` mention (a resource link, or an embedded resource when
the client embeds context) was refused with an error; the menu showed the full model-facing
descriptions (up to ~540 characters, two or three per screen); the help reply was ~3 KB and
its ``*`` characters were eaten by Markdown. Driven as found: the official ACP SDK client
drives ``acp-sidecar`` in process (no model: the console) with its built-in tools.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp

from tests.fakes import MenuEditor
from tests.in_process import sdk_served
from tests.sdk import Wire, new_session, prompt
from tests.session_commands import CONSOLE_TOOLS, SESSION_COMMANDS


@asynccontextmanager
async def console(workspace: Path) -> AsyncIterator[tuple[Any, MenuEditor, Wire, str, Any]]:
    editor = MenuEditor()
    async with sdk_served(editor, store=workspace / ".store") as (connection, wire):
        session = await new_session(connection, workspace)
        yield connection, editor, wire, session, wire.initialized


async def test_a_mention_alone_reads_the_file(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('hi')\n")
    uri = (tmp_path / "notes.md").as_uri()
    async with console(tmp_path) as (connection, _editor, wire, session, init):
        assert init.agent_capabilities.prompt_capabilities.embedded_context is True

        async def cards(*blocks: Any) -> list[dict[str, Any]]:
            wire.cards()
            assert await prompt(connection, session, *blocks) == "end_turn"
            return wire.cards()

        link = acp.resource_link_block("notes.md", uri)
        start, *_rest, final = await cards(link)
        assert start["rawInput"] == {"path": str(tmp_path / "notes.md")}
        assert final["status"] == "completed"
        assert "line 30" in final["content"][0]["content"]["text"]

        selection = acp.resource_link_block("notes.md", uri + "#L10:12")
        start, *_rest, final = await cards(selection)
        assert start["rawInput"] == {"path": str(tmp_path / "notes.md"), "offset": 10, "limit": 3}
        shown = final["content"][0]["content"]["text"]
        assert "line 10" in shown and "line 12" in shown and "line 13" not in shown

        embedded = acp.resource_block(acp.embedded_text_resource(uri, "the editor's copy"))
        final = (await cards(embedded))[-1]  # accepted: no -32602
        assert final["status"] == "completed"

        start, *_rest, final = await cards(acp.text_block("/read "), link)
        assert start["rawInput"]["path"] == str(tmp_path / "notes.md")

        folder = acp.resource_link_block("src", (tmp_path / "src").as_uri() + "/")
        final = (await cards(folder))[-1]
        assert "app.py" in final["content"][0]["content"]["text"]


async def test_a_mention_in_a_shell_command_is_quoted(tmp_path: Path) -> None:
    spaced = tmp_path / "a file; rm -rf x.txt"
    spaced.write_text("safe\n")
    (tmp_path / "x.txt").write_text("still here\n")
    async with console(tmp_path) as (connection, _editor, wire, session, _init):
        await connection.set_session_mode(session_id=session, mode_id="auto")
        wire.cards()
        await prompt(connection, session, "!cat ", acp.resource_link_block("f", spaced.as_uri()))
        final = wire.cards()[-1]
        assert final["status"] == "completed"
        assert "safe" in final["content"][0]["content"]["text"]
    assert (tmp_path / "x.txt").exists()


async def test_the_menu_is_short_and_the_help_is_short_and_escaped(tmp_path: Path) -> None:
    async with console(tmp_path) as (connection, editor, _wire, session, _init):
        await asyncio.wait_for(editor.menu_arrived.wait(), 10)
        assert set(editor.menu) == {*CONSOLE_TOOLS, *SESSION_COMMANDS}
        for name, description in editor.menu.items():
            assert 0 < len(description) <= 100, (name, description)
            assert "\n" not in description
        await prompt(connection, session, "help")
        reply = "".join(editor.said)
        assert len(reply.encode()) < 1400  # the nine session commands included, a line each
        outside_code = re.sub(r"`[^`]*`", "", reply)
        assert re.search(r"(?<!\\)[*_]", outside_code) is None, reply
    # The console's reply is the sidecar's own word: a notice in the log, which a model that
    # later continues the session never reads as something it said.
    [log] = (tmp_path / ".store").glob("*.jsonl")
    types = [json.loads(line)["type"] for line in log.read_text().splitlines()]
    assert "notice" in types and "agent_message" not in types
