"""What the user is asked about is what will happen: the permission dialog of ``write`` and
``edit`` shows the file as it is when asked, and a call that would fail is not asked about.

Found with real clients: overwriting a file asked with ``oldText: null`` (drawn as a new file,
"+1 −0"), and ``edit`` asked with only the replaced fragments. Driven the same way here: the
official ACP SDK client drives ``acp-sidecar`` (in process) with its built-in tools, in the default ``ask``
mode, and records every permission request and update (each validated against the schema).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.fakes import AllowingEditor
from tests.in_process import sdk_served
from tests.sdk import Wire, command, new_session, prompt


@asynccontextmanager
async def sidecar(workspace: Path) -> AsyncIterator[tuple[Any, Wire, str]]:
    async with sdk_served(AllowingEditor()) as (connection, wire):
        yield connection, wire, await new_session(connection, workspace)


async def run(connection: Any, session: str, text: str) -> None:
    assert await prompt(connection, session, text) == "end_turn"


async def test_overwriting_a_file_asks_with_its_real_old_content(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("first\nsecond\n")
    async with sidecar(tmp_path) as (connection, editor, session):
        editor.cards()
        await run(connection, session, command("write", path="notes.txt", content="replaced\n"))
        diff = {
            "type": "diff",
            "path": str(target),
            "oldText": "first\nsecond\n",
            "newText": "replaced\n",
        }
        [asked] = editor.asked
        assert asked["content"] == [diff]
        assert asked["status"] == "pending"
        start, *rest, final = editor.cards()
        assert start["content"] == [diff]  # the first card already (tests/agent/test_first_card)
        assert all(card.get("content", [diff]) == [diff] for card in rest)  # never redrawn
        assert final["status"] == "completed"
        assert final["content"] == [diff]
        assert target.read_text() == "replaced\n"

        editor.asked.clear()
        await run(connection, session, command("write", path="fresh.txt", content="new\n"))
        assert editor.asked[0]["content"][0]["oldText"] is None  # a new file is shown as one


async def test_an_edit_asks_with_whole_lines_and_context(tmp_path: Path) -> None:
    target = tmp_path / "lines.txt"
    target.write_text("".join(f"line {n}\n" for n in range(1, 21)))
    async with sidecar(tmp_path) as (connection, editor, session):
        editor.cards()
        await run(
            connection,
            session,
            command("edit", path="lines.txt", old_string="ne 10", new_string="NE TEN"),
        )
        [asked] = editor.asked
        old = "".join(f"line {n}\n" for n in range(7, 14))
        assert asked["content"] == [
            {
                "type": "diff",
                "path": str(target),
                "oldText": old,
                "newText": old.replace("line 10", "liNE TEN"),
            }
        ]
        final = editor.cards()[-1]
        assert final["status"] == "completed"
        assert final["content"] == asked["content"]  # asked about exactly what was done


async def test_calls_that_would_fail_are_not_asked_about(tmp_path: Path) -> None:
    target = tmp_path / "lines.txt"
    target.write_text("alpha\nbeta\nalpha\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01binary")
    async with sidecar(tmp_path) as (connection, editor, session):
        failing = [
            (command("edit", path="lines.txt", old_string="gamma", new_string="x"), "not found"),
            (command("edit", path="lines.txt", old_string="alpha", new_string="x"), "occurs 2"),
            (command("edit", path="lines.txt", old_string="beta", new_string="beta"), "identical"),
            (command("edit", path="missing.txt", old_string="a", new_string="b"), "does not exist"),
            (command("write", path="blob.bin", content="text"), "binary"),
            (command("write", path="../outside.txt", content="x"), "outside"),
        ]
        for text, expected in failing:
            editor.cards()
            await run(connection, session, text)
            final = editor.cards()[-1]
            assert final["status"] == "failed", text
            assert expected in final["content"][0]["content"]["text"], (text, final)
        assert editor.asked == []
        assert target.read_text() == "alpha\nbeta\nalpha\n"
        assert not (tmp_path.parent / "outside.txt").exists()
