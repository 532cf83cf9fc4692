"""Agent→client requests as real clients answer them: ``null`` results and error answers.

Found with real clients: one widely used terminal client always answers
``fs/write_text_file`` with ``"result": null``, and so does the official SDK client whose
handler returns ``None``; the sidecar treated it as an error after the file was written, so
the card said "failed" while the write happened. And when a client's handler failed, the SDK
answered ``Internal error`` with the reason in ``data``; the card showed only "Internal
error". Driven as found: the official ACP SDK client, with ``fs`` capabilities, spawns
``acp-sidecar`` with its built-in tools.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp.schema import ClientCapabilities, FileSystemCapabilities

from acp_sidecar.server.client import CLIENT_ERROR_SHOWN, client_error
from tests.fakes import DiskEditor
from tests.in_process import sdk_served
from tests.sdk import Wire, command, new_session, prompt


@asynccontextmanager
async def sidecar(editor: DiskEditor, workspace: Path) -> AsyncIterator[tuple[Any, Wire, str]]:
    fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
    capabilities = ClientCapabilities(fs=fs)
    async with sdk_served(editor, store=workspace / ".store", capabilities=capabilities) as (
        connection,
        wire,
    ):
        yield connection, wire, await new_session(connection, workspace, mode="auto")


async def final_card(connection: Any, wire: Wire, session: str, text: str) -> dict[str, Any]:
    wire.cards()
    assert await prompt(connection, session, text) == "end_turn"
    return wire.cards()[-1]


async def test_a_null_answer_to_fs_write_text_file_is_a_successful_write(tmp_path: Path) -> None:
    editor = DiskEditor()
    async with sidecar(editor, tmp_path) as (connection, wire, session):
        card = await final_card(
            connection, wire, session, command("write", path="new.txt", content="hello\n")
        )
        assert card["status"] == "completed", card
        assert editor.writes == [str(tmp_path / "new.txt")]
        (tmp_path / "old.txt").write_text("one\ntwo\n")
        card = await final_card(
            connection,
            wire,
            session,
            command("edit", path="old.txt", old_string="two", new_string="TWO"),
        )
        assert card["status"] == "completed", card
    assert (tmp_path / "new.txt").read_text() == "hello\n"
    assert (tmp_path / "old.txt").read_text() == "one\nTWO\n"


async def test_the_card_shows_the_clients_own_error(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("as it was\n")
    async with sidecar(DiskEditor(refuse=True), tmp_path) as (connection, wire, session):
        card = await final_card(
            connection, wire, session, command("write", path="new.txt", content="x")
        )
        assert card["status"] == "failed"
        text = card["content"][0]["content"]["text"]
        assert text == (
            "The editor could not write new.txt: Internal error: "
            "Permission denied for fs/write_text_file"
        )
        card = await final_card(connection, wire, session, command("read", path="kept.txt"))
        assert card["status"] == "failed"
        text = card["content"][0]["content"]["text"]
        assert "Internal error: Permission denied for fs/read_text_file" in text
        assert "\n" not in text  # the client's traceback-like tail stays in the log
    assert (tmp_path / "kept.txt").read_text() == "as it was\n"
    assert not (tmp_path / "new.txt").exists()


def test_a_clients_error_message_is_bounded_to_one_line() -> None:
    long = "x" * 5000
    error = client_error("fs/write_text_file", -32603, "Internal error", {"details": long})
    assert len(error.message) == CLIENT_ERROR_SHOWN and error.message.endswith("…")
    assert error.data == {"details": long}  # kept whole for whoever handles it
    plain = client_error("fs/read_text_file", -32002, "Resource not found: /a", None)
    assert plain.message == "Resource not found: /a"
    odd = client_error("fs/read_text_file", 1, None, ["not", "text"])
    assert odd.message == "error 1"
