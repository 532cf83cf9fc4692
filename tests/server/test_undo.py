"""Undo and rewind through the official SDK client in process: write, edit, create and
delete over several turns, then ``/undo``, ``/undo 2``, ``/rewind``, ``/redo``, the
workspace checked byte for byte after each; a file changed since (nothing reverted, the
answer names it), ``--force``; ``read-only`` refuses and ``ask`` asks; a binary file, a file
too big to keep, an unreadable one; a session loaded again; a shell command's changes listed
as not undoable; the blobs removed with the session.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.store import SessionStore
from tests.fakes import AllowingEditor, AnsweringEditor
from tests.in_process import sdk_served
from tests.sdk import command, new_session, prompt
from tests.tools.builtin.helpers import deny_access, tree_bytes

TOOLS = ("--tools", "tests.server.undo_tools:TOOLS")
BINARY = bytes(range(256)) * 3


def answer_of(wire: Any, session: str, text: str) -> str:
    """The agent text the turn of prompt ``text`` (its last one) answered with."""
    updates = wire.updates(session) if callable(wire.updates) else wire.updates
    starts = [
        i
        for i, u in enumerate(updates)
        if u["sessionUpdate"] == "user_message_chunk" and u["content"].get("text") == text
    ]
    assert starts, f"no turn of {text!r}"
    chunks = []
    for update in updates[starts[-1] + 1 :]:
        if update["sessionUpdate"] == "user_message_chunk":
            break
        if update["sessionUpdate"] == "agent_message_chunk":
            chunks.append(update["content"].get("text", ""))
    return "".join(chunks)


def cards_of(wire: Any, session: str, text: str) -> list[dict[str, Any]]:
    """The tool cards opened in the turn of prompt ``text`` (its last one)."""
    updates = wire.updates(session) if callable(wire.updates) else wire.updates
    start = max(
        i
        for i, u in enumerate(updates)
        if u["sessionUpdate"] == "user_message_chunk" and u["content"].get("text") == text
    )
    found = []
    for update in updates[start + 1 :]:
        if update["sessionUpdate"] == "user_message_chunk":
            break
        if update["sessionUpdate"] == "tool_call":
            found.append(update)
    return found


async def run(connection: Any, wire: Any, session: str, text: str) -> str:
    assert await prompt(connection, session, text) == "end_turn"
    return answer_of(wire, session, text)


def records(store: Path, session: str) -> list[dict[str, Any]]:
    lines = (store / f"{session}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


async def test_turns_undone_redone_and_rewound_leave_the_workspace_byte_for_byte(
    tmp_path: Path,
) -> None:
    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    (work / "keep.txt").write_bytes(b"kept from before\r\n")
    states = [tree_bytes(str(work))]
    steps = [
        command("write", path="a.txt", content="one\n"),
        command("edit", path="a.txt", old_string="one", new_string="two"),
        command("put_bytes", path="bin.dat", data=base64.b64encode(BINARY).decode()),
        command("remove", path="keep.txt"),
        command("write", path="sub/c.txt", content="sea\n"),
    ]
    async with sdk_served(AllowingEditor(), *TOOLS, store=store) as (connection, wire):
        session = await new_session(connection, work, mode="auto")
        for step in steps:
            assert await prompt(connection, session, step) == "end_turn"
            states.append(tree_bytes(str(work)))
        assert (work / "bin.dat").read_bytes() == BINARY

        said = await run(connection, wire, session, "/undo")
        assert tree_bytes(str(work)) == states[4]
        assert said.startswith("Undid turn 5: `sub/c.txt`.")
        [card] = cards_of(wire, session, "/undo")
        assert card["title"] == "Undo sub/c.txt (remove it)"
        assert card["content"][0]["type"] == "diff"

        said = await run(connection, wire, session, "/undo 2")
        assert tree_bytes(str(work)) == states[2]
        assert said.startswith("Undid turns 3, 4: ")
        assert "`keep.txt`" in said and "`bin.dat`" in said

        said = await run(connection, wire, session, "/redo")
        assert tree_bytes(str(work)) == states[4]
        assert said.startswith("Redid turns 3, 4")

        listing = await run(connection, wire, session, "/rewind")
        lines = listing.splitlines()
        assert any(
            line.startswith("1. ") and "`" + str(work / "a.txt") + "`" in line for line in lines
        )
        assert any(line.startswith("5. ") and "(undone)" in line for line in lines)
        assert tree_bytes(str(work)) == states[4]  # a listing changes nothing

        said = await run(connection, wire, session, "/rewind 1")
        assert tree_bytes(str(work)) == states[1]
        assert said.startswith("Undid turns 2, 3, 4: ")

        await run(connection, wire, session, "/redo")
        assert tree_bytes(str(work)) == states[4]
        said = await run(connection, wire, session, "/redo")
        assert tree_bytes(str(work)) == states[5]
        assert said.startswith("Redid turn 5")
        assert await run(connection, wire, session, "/redo") == "There is no undo to redo."

    logged = records(store, session)
    undos = [r for r in logged if r["type"] == "undo"]
    assert [(u["turns"], u.get("redo", False)) for u in undos] == [
        ([5], False),
        ([3, 4], False),
        ([3, 4], True),
        ([2, 3, 4], False),
        ([2, 3, 4], True),
        ([5], True),
    ]
    changes = [r for r in logged if r["type"] == "file_change"]
    assert all(
        set(r) <= {"v", "type", "callId", "path", "before", "after", "kept", "t"} for r in changes
    )
    blobs = store / f"{session}.blobs"
    assert {c["before"] for c in changes if c["before"]} <= {p.name for p in blobs.iterdir()}

    SessionStore(store).delete(session)
    assert not blobs.exists()


async def test_a_file_changed_since_stops_the_undo_and_force_takes_it(tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
        session = await new_session(connection, work, mode="auto")
        await prompt(connection, session, command("write", path="a.txt", content="mine\n"))
        await prompt(connection, session, command("write", path="b.txt", content="bee\n"))
        await prompt(connection, session, command("write", path="d.txt", content="dee\n"))
        (work / "a.txt").write_text("the user's\n")
        (work / "d.txt").unlink()
        (work / "d.txt").mkdir()
        before = tree_bytes(str(work))

        said = await run(connection, wire, session, "/undo 3")
        assert said.startswith(
            "Nothing was reverted: these files are no longer what turns 1, 2, 3 left:"
        )
        assert "- `a.txt`: changed since" in said
        assert "- `d.txt`: now a directory" in said
        assert "`b.txt`" not in said.split("\n\n")[0]
        assert tree_bytes(str(work)) == before and (work / "d.txt").is_dir()
        assert cards_of(wire, session, "/undo 3") == []

        (work / "d.txt").rmdir()
        said = await run(connection, wire, session, "/undo 3")
        assert "- `d.txt`: deleted since" in said and "- `a.txt`: changed since" in said
        assert tree_bytes(str(work)) == {"a.txt": b"the user's\n", "b.txt": b"bee\n"}

        said = await run(connection, wire, session, "/undo 3 --force a.txt d.txt")
        assert said.startswith("Undid turns 1, 2, 3: ")
        assert tree_bytes(str(work)) == {}


async def test_read_only_refuses_the_undo_and_ask_asks_for_each_file(tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    (work / "a.txt").write_text("first\n")
    editor = AnsweringEditor("allow_once", "allow_once", "reject_once", "allow_once", "allow_once")
    async with sdk_served(editor, store=store) as (connection, wire):
        session = await new_session(connection, work)  # ask: the default
        await prompt(
            connection,
            session,
            command("edit", path="a.txt", old_string="first", new_string="second"),
        )
        await prompt(connection, session, command("write", path="b.txt", content="bee\n"))
        assert editor.asked == ["Edit a.txt", "Write b.txt"]
        after = tree_bytes(str(work))

        said = await run(connection, wire, session, "/undo 2")
        assert said == "Nothing was reverted: the user rejected it."
        assert tree_bytes(str(work)) == after
        assert editor.asked[2] == "Undo a.txt"

        said = await run(connection, wire, session, "/undo 2")
        assert said.startswith("Undid turns 1, 2: `a.txt`, `b.txt`.")
        assert editor.asked[3:] == ["Undo a.txt", "Undo b.txt (remove it)"]
        assert tree_bytes(str(work)) == {"a.txt": b"first\n"}

        await connection.set_session_mode(session_id=session, mode_id="read-only")
        said = await run(connection, wire, session, "/redo")
        assert said.startswith("Nothing was reverted: the session is in read-only mode")
        assert tree_bytes(str(work)) == {"a.txt": b"first\n"}
        assert len(editor.asked) == 5  # read-only never asks


async def test_a_big_file_is_not_undoable_and_its_card_says_so(tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    big = b"x" * (8 * 1024 * 1024) + b"\nend\n"
    (work / "big.txt").write_bytes(big)
    async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
        session = await new_session(connection, work, mode="auto")
        typed = command("edit", path="big.txt", old_string="end", new_string="END")
        await prompt(connection, session, typed)
        await prompt(connection, session, command("write", path="small.txt", content="s\n"))
        updates = wire.updates(session) if callable(wire.updates) else wire.updates
        done = [
            u
            for u in updates
            if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "completed"
        ]
        texts = [
            c["content"]["text"]
            for u in done
            for c in u.get("content") or []
            if c["type"] == "content"
        ]
        assert (
            "Not undoable: big.txt is bigger than 8 MiB, so its earlier content was not kept."
            in texts
        )

        said = await run(connection, wire, session, "/undo 2")
        assert said.startswith("Undid turns 1, 2: `small.txt`.")
        assert "- `big.txt`: it was bigger than 8 MiB: not kept" in said
        assert (work / "big.txt").read_bytes() == big.replace(b"end", b"END")
        assert not (work / "small.txt").exists()
    assert not any(p.stat().st_size > 1024 for p in (store / f"{session}.blobs").iterdir())


async def test_an_unreadable_file_stops_the_undo_until_it_can_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
        session = await new_session(connection, work, mode="auto")
        await prompt(connection, session, command("write", path="a.txt", content="one\n"))
        await prompt(
            connection, session, command("edit", path="a.txt", old_string="one", new_string="two")
        )
        deny_access(monkeypatch, str(work / "a.txt"))
        said = await run(connection, wire, session, "/undo")
        assert "- `a.txt`: unreadable now" in said and said.startswith("Nothing was reverted")
        monkeypatch.undo()
        os.chmod(work / "a.txt", 0o644)
        assert (work / "a.txt").read_bytes() == b"two\n"
        said = await run(connection, wire, session, "/undo")
        assert said.startswith("Undid turn 2: `a.txt`.")
        assert (work / "a.txt").read_bytes() == b"one\n"


async def test_a_shell_command_is_listed_as_not_undoable(tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
        session = await new_session(connection, work, mode="auto")
        await prompt(connection, session, command("write", path="a.txt", content="one\n"))
        await prompt(connection, session, command("bash", command="echo made > b.txt"))
        said = await run(connection, wire, session, "/undo 2")
        assert said.startswith("Undid turns 1, 2: `a.txt`.")
        assert "- `turn 2: bash`: declares no file changes" in said
        assert (work / "b.txt").read_text() == "made\n"  # not guessed at
        assert not (work / "a.txt").exists()


async def test_undo_works_on_a_session_loaded_again(tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    async with sdk_served(AllowingEditor(), store=store) as (connection, _wire):
        session = await new_session(connection, work, mode="auto")
        await prompt(connection, session, command("write", path="a.txt", content="one\n"))
        await prompt(connection, session, command("write", path="a.txt", content="two\n"))
    async with sdk_served(AllowingEditor(), store=store) as (connection, wire):
        await connection.load_session(cwd=str(work), session_id=session, mcp_servers=[])
        await connection.set_session_mode(session_id=session, mode_id="auto")
        said = await run(connection, wire, session, "/undo")
        assert said.startswith("Undid turn 2: `a.txt`.")
        assert (work / "a.txt").read_bytes() == b"one\n"


async def test_in_model_mode_an_undone_turn_leaves_the_models_history(tmp_path: Path) -> None:
    from tests.agent.model.fake_openai import ScriptedOpenAI, answer, calling, tool_call
    from tests.server.test_message_ids import model

    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    write = json.dumps({"path": "a.txt", "content": "one\n"})
    edit = json.dumps({"path": "a.txt", "old_string": "one", "new_string": "two"})
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(
            calling(tool_call(0, "call_1", "write", write)),
            answer("Wrote it."),
            calling(tool_call(0, "call_2", "edit", edit)),
            answer("Edited it."),
            answer("Here again."),
        )
        env = {"OPENAI_API_KEY": "sk-test"}
        async with sdk_served(AllowingEditor(), *model(endpoint), store=store, env=env) as (
            connection,
            wire,
        ):
            session = await new_session(connection, work, mode="auto")
            assert await prompt(connection, session, "make a") == "end_turn"
            assert await prompt(connection, session, "change a") == "end_turn"
            assert (work / "a.txt").read_text() == "two\n"
            said = await run(connection, wire, session, "/undo")
            assert said.startswith("Undid turn 2: `a.txt`.")
            assert (work / "a.txt").read_text() == "one\n"
            assert len(endpoint.requests) == 4  # the command asked the model nothing
            assert await prompt(connection, session, "again") == "end_turn"
    sent = endpoint.requests[4].messages
    users = [m["content"] for m in sent if m["role"] == "user"]
    assert users == ["make a", "again"]
    assert not any("Edited it." in str(m.get("content")) for m in sent)


@pytest.mark.process
async def test_a_fresh_sidecar_process_undoes_a_turn_of_a_loaded_session(tmp_path: Path) -> None:
    """The one spawned test of the family: the before-images outlive the process that kept
    them (the workspace is no git repository)."""
    from tests.sdk import sdk_sidecar

    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    (work / "a.txt").write_bytes(b"before\r\n")
    async with sdk_sidecar(AllowingEditor(), store=store) as (connection, _wire):
        session = await new_session(connection, work, mode="auto")
        typed = command("edit", path="a.txt", old_string="before", new_string="after")
        assert await prompt(connection, session, typed) == "end_turn"
    assert (work / "a.txt").read_bytes() == b"after\r\n"
    async with sdk_sidecar(AllowingEditor(), store=store) as (connection, wire):
        await connection.load_session(cwd=str(work), session_id=session, mcp_servers=[])
        await connection.set_session_mode(session_id=session, mode_id="auto")
        said = await run(connection, wire, session, "/undo")
    assert said.startswith("Undid turn 1: `a.txt`.")
    assert tree_bytes(str(work)) == {"a.txt": b"before\r\n"}
    assert not (work / ".git").exists()
