"""session/resume, session/close and session/delete across two sidecar processes on one store,
driven by the official ACP SDK client (every message checked against the schema by
:mod:`tests.sdk`). The pinned SDK has no ``delete_session`` yet: ``session/delete`` goes out
raw on the SDK's own connection."""

from __future__ import annotations

import resource
from pathlib import Path
from typing import Any

import acp
import pytest

from acp_sidecar.protocol.errors import INTERNAL_ERROR, RESOURCE_NOT_FOUND
from acp_sidecar.store import LOCK_FILE
from tests.cli.test_session_commands import cli
from tests.fakes import AllowingEditor
from tests.sdk import prompt, sdk_sidecar
from tests.server.test_store_hardening import (
    NOT_RECORDED,
    finish,
    limit,
    records,
    sidecar,
    texts_of,
)
from tests.server.test_store_hardening import prompt as hardening_prompt

pytestmark = pytest.mark.process  # two sidecar processes on one store


async def delete(connection: Any, session_id: str) -> Any:
    """``session/delete`` on the SDK's connection (the SDK does not model it yet)."""
    return await connection._conn.send_request("session/delete", {"sessionId": session_id})


def user_prompts(updates: list[dict[str, Any]]) -> list[str]:
    return [u["content"]["text"] for u in updates if u["sessionUpdate"] == "user_message_chunk"]


async def test_one_store_two_processes(tmp_path: Path) -> None:
    store, workspace = tmp_path / "store", tmp_path / "ws"
    workspace.mkdir()
    cwd = str(workspace)
    async with sdk_sidecar(AllowingEditor(), "--store", str(store)) as (a, wire_a):
        capabilities = wire_a.initialized.agent_capabilities.session_capabilities
        assert capabilities.resume is not None and capabilities.close is not None
        assert capabilities.delete is not None and capabilities.additional_directories is not None
        session = (await a.new_session(cwd=cwd, mcp_servers=[])).session_id
        assert await prompt(a, session, "first words") == "end_turn"
        async with sdk_sidecar(AllowingEditor(), "--store", str(store)) as (b, wire_b):
            # A holds the session: B can neither take it over nor delete it, and says why.
            for attempt in (
                b.resume_session(cwd=cwd, session_id=session),
                b.load_session(cwd=cwd, session_id=session),
                delete(b, session),
            ):
                with pytest.raises(acp.RequestError) as refused:
                    await attempt
                assert refused.value.code == INTERNAL_ERROR
                assert "another acp-sidecar process" in str(refused.value)
            assert wire_b.updates == []
            # A closes it: B resumes it, without its history, and goes on in the same log.
            assert await a.close_session(session_id=session) is not None
            resumed = await b.resume_session(cwd=cwd, session_id=session)
            assert resumed.modes is not None and resumed.modes.current_mode_id == "ask"
            assert user_prompts(wire_b.updates) == []
            assert await prompt(b, session, "second words") == "end_turn"
            # Now B holds it: A is refused in turn.
            with pytest.raises(acp.RequestError) as refused:
                await a.resume_session(cwd=cwd, session_id=session)
            assert refused.value.code == INTERNAL_ERROR
            await b.close_session(session_id=session)
            # A loads it: the whole history, both processes' turns.
            wire_a.updates.clear()
            await a.load_session(cwd=cwd, session_id=session)
            assert user_prompts(wire_a.updates) == ["first words", "second words"]
            with pytest.raises(acp.RequestError):
                await delete(b, session)  # A holds it again
            # B deletes it once A let go; both see it gone.
            await a.close_session(session_id=session)
            assert await delete(b, session) == {}
            for connection in (a, b):
                listed = await connection.list_sessions(cwd=cwd)
                assert [s.session_id for s in listed.sessions] == []
                with pytest.raises(acp.RequestError) as gone:
                    await connection.resume_session(cwd=cwd, session_id=session)
                assert gone.value.code == RESOURCE_NOT_FOUND
    # The log went, and nothing of the session was left: the store's lock file is empty.
    assert list(store.iterdir()) == [store / LOCK_FILE]
    assert (store / LOCK_FILE).stat().st_size == 0
    listing = cli("sessions", store=store)
    assert listing.returncode == 0, listing.stderr
    assert session not in listing.stdout and "No stored sessions" in listing.stdout


async def test_a_session_whose_log_was_released_is_refused_to_another_process(
    tmp_path: Path,
) -> None:
    # At 32 descriptors a sidecar holds 8 logs open: the first session's log is closed, and
    # its flock with it, once ten more sessions were used. The session is still A's.
    store, cwd = tmp_path / "store", str(tmp_path)
    (tmp_path / "f.txt").write_text("hello\n")
    nofile = limit(resource.RLIMIT_NOFILE, 32)
    async with sidecar("--store", str(store), preexec=nofile) as (a, process_a):
        await a.initialize()
        first = await a.new_session(cwd)
        await hardening_prompt(a, first, "/read f.txt")
        for _ in range(10):
            await hardening_prompt(a, await a.new_session(cwd), "/read f.txt")
        async with sidecar("--store", str(store), preexec=nofile) as (b, process_b):
            await b.initialize()
            params = {"sessionId": first, "cwd": cwd, "mcpServers": []}
            for method, asked in (
                ("session/resume", params),
                ("session/load", params),
                ("session/delete", {"sessionId": first}),
            ):
                error = await b.error(method, asked)
                assert error["code"] == INTERNAL_ERROR, (method, error)
                assert "another acp-sidecar process" in error["message"], (method, error)
            assert b.updates == []
            await finish(b, process_b)
        a.updates.clear()
        await hardening_prompt(a, first, "/read f.txt")  # A goes on recording it
        assert NOT_RECORDED not in texts_of(a.updates)
        await a.result("session/close", {"sessionId": first})
        async with sidecar("--store", str(store), preexec=nofile) as (b, process_b):
            await b.initialize()  # closed in A: B may take it now
            assert "result" in await b.request("session/resume", params)
            await finish(b, process_b)
        await finish(a, process_a)
    kinds = [r["type"] for r in records(store / f"{first}.jsonl")]
    assert kinds.count("user_message") == 2 and "gap" not in kinds and kinds[-1] == "turn_end"
