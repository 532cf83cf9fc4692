"""A real peer: the official ACP Python SDK's client side drives ``acp-sidecar``."""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path

import acp
import pytest
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
)

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.export.markdown import write_markdown
from acp_sidecar.export.source import StoredSession
from acp_sidecar.store import PermissionRuleRecord, SessionRuleRecord, SessionStore
from tests.acp_schema import SchemaViolation
from tests.fakes import Answering, ScriptDriverEditor
from tests.isolation import child_variables
from tests.sdk import SchemaObserver, command, new_session, prompt, sdk_sidecar

pytestmark = pytest.mark.process  # the official SDK's client as the sidecar's peer

ROOT = Path(__file__).resolve().parents[2]


async def test_the_sdk_client_runs_initialize_session_prompt_and_cancel(tmp_path: Path) -> None:
    client = ScriptDriverEditor()
    observer = SchemaObserver()
    async with acp.spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "acp_sidecar",
        "serve",
        "--driver",
        "tests.drivers:ScriptDriver",
        env=child_variables() | {"PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        observers=[observer],
    ) as (connection, process):
        init = await connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
            ),
        )
        assert init.protocol_version == 1
        assert init.agent_info is not None and init.agent_info.name == "acp-sidecar"
        assert init.agent_capabilities is not None
        assert init.agent_capabilities.load_session is True  # sessions are stored

        session = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])

        done = await connection.prompt(
            session_id=session.session_id, prompt=[acp.text_block("echo hello from the SDK")]
        )
        assert done.stop_reason == "end_turn"
        assert client.texts[-1] == "hello from the SDK"

        done = await connection.prompt(
            session_id=session.session_id, prompt=[acp.text_block("permission")]
        )
        assert done.stop_reason == "end_turn"
        assert client.permission_requests == 1
        assert client.texts[-1] == "permission: selected allow"

        done = await connection.prompt(
            session_id=session.session_id, prompt=[acp.text_block("read /etc/hostname")]
        )
        assert client.texts[-1] == "read: contents of /etc/hostname"

        turn = asyncio.create_task(
            connection.prompt(session_id=session.session_id, prompt=[acp.text_block("wait")])
        )
        await asyncio.wait_for(client.started.wait(), 60)  # hang guards
        await connection.cancel(session_id=session.session_id)
        done = await asyncio.wait_for(turn, 60)
        assert done.stop_reason == "cancelled"
    assert process.returncode == 0
    observer.check_clean()
    assert observer.checked >= 12


async def test_always_answers_made_to_a_spawned_sidecar_hold_in_a_fresh_one(tmp_path: Path) -> None:
    """An "always … in this project" and an "always … in this session" answer, made by the SDK
    client: the next sidecar asks about neither (the session's rule in that session only,
    once loaded), and the logs and their export show each decision with its rule."""
    store, work = tmp_path / "store", tmp_path / "work"
    work.mkdir()
    args = ("--config", str(tmp_path / "config.toml"))
    first = Answering("allow_always_project")
    async with sdk_sidecar(first, *args, store=store) as (connection, _wire):
        session = await new_session(connection, work)
        write = command("write", path="a.txt", content="a\n")
        assert await prompt(connection, session, write) == "end_turn"
        first.answer = "allow_always"
        assert await prompt(connection, session, command("bash", command="touch b")) == "end_turn"
    assert ["allow_always_project" in o and "allow_always" in o for o in first.offered] == [
        True,
        True,
    ]

    fresh = Answering("reject_once")
    async with sdk_sidecar(fresh, *args, store=store) as (connection, _wire):
        other = await new_session(connection, work)
        assert await prompt(connection, other, command("bash", command="touch c")) == "end_turn"
        assert len(fresh.offered) == 1  # the session rule is the first session's alone
        write = command("write", path="d.txt", content="d\n")
        assert await prompt(connection, other, write) == "end_turn"
        await connection.load_session(cwd=str(work), session_id=session, mcp_servers=[])
        assert await prompt(connection, session, command("bash", command="touch e")) == "end_turn"
    assert len(fresh.offered) == 1  # neither the project's rule nor the loaded session's asked
    assert sorted(p.name for p in work.iterdir()) == [".acp-sidecar", "a.txt", "b", "d.txt", "e"]

    project = work / ".acp-sidecar" / "permissions.toml"
    line = project.read_text().splitlines().index('    "allow write",') + 1
    logs = SessionStore(store)
    with logs.open_log(session) as log:
        records = list(log)
    kept = [(r.rule, r.removed) for r in records if isinstance(r, SessionRuleRecord)]
    assert kept == [("allow bash", False)]
    ruled = [(r.tool, r.rule, r.source) for r in records if isinstance(r, PermissionRuleRecord)]
    assert ruled == [("bash", "allow bash", "session")]
    with logs.open_log(other) as log:
        ruled = [(r.tool, r.rule, r.source) for r in log if isinstance(r, PermissionRuleRecord)]
    assert ruled == [("write", "allow write", f"project ({project}:{line})")]
    out = io.StringIO()
    with StoredSession(logs.path_of(other), ToolsProvider(()).registry.get) as stored:
        write_markdown(stored, out, generator="test")
    shown = out.getvalue()  # the path's underscores escaped for Markdown
    assert "allowed by the rule allow write (project (" in shown
    assert f"permissions.toml:{line}))" in shown


def test_a_message_off_the_schema_fails_the_test_though_the_sdk_only_logs_it() -> None:
    removed = {"sessionId": "s", "update": {"sessionUpdate": "plan_removed", "planId": "p"}}
    event = StreamEvent(
        StreamDirection.INCOMING, {"jsonrpc": "2.0", "method": "session/update", "params": removed}
    )
    stable = SchemaObserver()
    with pytest.raises(SchemaViolation):
        stable(event)  # what the SDK catches and logs
    with pytest.raises(AssertionError, match="plan_removed"):
        stable.check_clean()  # what fails the test
    stable.check_clean(since=1)
    unstable = SchemaObserver(unstable=True)  # a plan operation: the unstable schema's
    unstable(event)
    unstable.check_clean()
    broken = {"sessionId": "s", "update": {"sessionUpdate": "plan_removed"}}
    with pytest.raises(SchemaViolation):
        unstable(StreamEvent(event.direction, {**event.message, "params": broken}))
