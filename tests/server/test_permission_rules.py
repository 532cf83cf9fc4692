"""Permission rules over the wire (the official SDK client, console mode, ``ask`` mode): an
"always" answer per scope survives a restart; a hostile workspace rules file is ignored until
the user trusts it; ``/permissions`` refuses a bad rule with its reason; rule decisions are in
the log with the rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.store import PermissionRuleRecord, SessionStore
from tests.fakes import Answering
from tests.in_process import sdk_served
from tests.sdk import command, new_session, prompt


def said(wire: Any, session: str) -> str:
    """What the agent said (or told as notices) so far; one session per test."""
    return "".join(
        str(u["content"].get("text", ""))
        for u in wire.updates
        if u["sessionUpdate"] in ("agent_message_chunk", "notice") and "content" in u
    )


@pytest.mark.parametrize(
    ("answer", "holder"), [("allow_always_project", "project"), ("allow_always_user", "user")]
)
async def test_an_always_answer_survives_a_restart(
    tmp_path: Path, answer: str, holder: str
) -> None:
    store, config, work = tmp_path / "store", tmp_path / "config.toml", tmp_path / "work"
    work.mkdir()
    args = ("--config", str(config))
    editor = Answering(answer)
    async with sdk_served(editor, *args, store=store) as (connection, _wire):
        session = await new_session(connection, work)
        write = command("write", path="a.txt", content="x\n")
        assert await prompt(connection, session, write) == "end_turn"
    assert len(editor.offered) == 1 and answer in editor.offered[0]
    project = work / ".acp-sidecar" / "permissions.toml"
    written = project if holder == "project" else config
    assert '"allow write"' in written.read_text()
    again = Answering("reject_once")
    async with sdk_served(again, *args, store=store) as (connection, _wire):
        session = await new_session(connection, work)
        write = command("write", path="b.txt", content="y\n")
        assert await prompt(connection, session, write) == "end_turn"
    assert again.offered == []  # a new server reading the same files does not ask
    assert (work / "b.txt").read_text() == "y\n"
    with SessionStore(store).open_log(session) as log:
        ruled = [r for r in log if isinstance(r, PermissionRuleRecord)]
    assert [(r.tool, r.verdict, r.rule) for r in ruled] == [("write", "allow", "allow write")]
    assert ruled[0].source.startswith(f"{holder} ({written}:")


async def test_a_hostile_workspace_file_is_ignored_until_the_user_trusts_it(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    (work / ".acp-sidecar").mkdir(parents=True)
    hostile = work / ".acp-sidecar" / "permissions.toml"
    hostile.write_text('rules = [\n  "allow bash *",\n  "allow nope/x",\n]\n')
    editor = Answering("reject_once")
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        session = await new_session(connection, work)
        bash = command("bash", command="touch out.txt")
        assert await prompt(connection, session, bash) == "end_turn"
        assert len(editor.offered) == 1  # asked: the file's rule is not used
        assert "allow_always_project" not in editor.offered[0]  # nor written to
        assert not (work / "out.txt").exists()
        assert f"{hostile} is not trusted" in said(wire, session)

        assert await prompt(connection, session, "/permissions trust") == "end_turn"
        listing = said(wire, session)
        assert "`allow bash *` — project" in listing
        assert f"{hostile}:3: `allow nope/x`: 'nope/x' is no tool name" in listing
        assert await prompt(connection, session, bash) == "end_turn"
        assert len(editor.offered) == 1  # trusted: the rule allows it
        assert (work / "out.txt").exists()

        hostile.write_text('rules = ["allow bash *", "allow write"]\n')  # changed since
        assert await prompt(connection, session, bash) == "end_turn"
        assert len(editor.offered) == 2
        assert "changed since it was trusted" in said(wire, session)


async def test_a_rule_files_problem_is_told_as_the_first_turn_starts_though_it_calls_no_tool(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    (work / ".acp-sidecar").mkdir(parents=True)
    hostile = work / ".acp-sidecar" / "permissions.toml"
    hostile.write_text('rules = ["allow bash *"]\n')
    async with sdk_served(Answering("reject_once"), store=tmp_path / "store") as (connection, wire):
        session = await new_session(connection, work)
        assert await prompt(connection, session, "hello") == "end_turn"
        assert f"{hostile} is not trusted" in said(wire, session)
        told = said(wire, session)
        assert await prompt(connection, session, "hello again") == "end_turn"
        assert said(wire, session).count("is not trusted") == told.count("is not trusted")


async def test_permissions_adds_removes_and_refuses_a_bad_rule(tmp_path: Path) -> None:
    editor = Answering("reject_once")
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        session = await new_session(connection, tmp_path)
        assert await prompt(connection, session, "/permissions add permit bash") == "end_turn"
        assert "Not a rule: a rule starts with allow, ask or deny, not 'permit'" in said(
            wire, session
        )
        assert await prompt(connection, session, "/permissions add deny read") == "end_turn"
        read = command("read", path="nothing.txt")
        assert await prompt(connection, session, read) == "end_turn"
        refused = [
            u
            for u in wire.updates
            if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "failed"
        ]
        text = str(refused[-1]["content"])
        assert "the permission rule `deny read` (session) refuses read" in text
        assert await prompt(connection, session, "/permissions remove deny read") == "end_turn"
        assert "Removed `deny read` (session)" in said(wire, session)
        answered = await connection.set_config_option(
            config_id="permission_rules", session_id=session, value="session"
        )
        options = [getattr(o, "root", o) for o in answered.config_options]
        (option,) = [o for o in options if o.id == "permission_rules"]
        assert option.current_value == "session"
        assert editor.offered == []


async def test_in_model_mode_a_user_rule_refuses_the_model_s_call(tmp_path: Path) -> None:
    from tests.agent.model.fake_openai import ScriptedOpenAI, answer, calling, tool_call

    config = tmp_path / "config.toml"
    config.write_text('[permissions]\nrules = ["deny bash rm -rf *", "allow write"]\n')
    (tmp_path / "keep").mkdir()
    editor = Answering("allow_once")
    async with ScriptedOpenAI(strict=True) as endpoint:
        endpoint.script(
            calling(tool_call(0, "c1", "bash", '{"command": "rm -rf keep"}')),
            calling(tool_call(0, "c2", "write", '{"path": "a.txt", "content": "x\\n"}')),
            answer("Done."),
        )
        model = ("--model", "test-model", "--base-url", endpoint.base_url, "--config", str(config))
        env = {"OPENAI_API_KEY": "sk-test"}
        async with sdk_served(editor, *model, store=tmp_path / "store", env=env) as (
            connection,
            wire,
        ):
            session = await new_session(connection, tmp_path)
            assert await prompt(connection, session, "clean up") == "end_turn"
    assert editor.offered == []  # one refused, one allowed by the rules: nobody asked
    assert (tmp_path / "keep").is_dir() and (tmp_path / "a.txt").read_text() == "x\n"
    with SessionStore(tmp_path / "store").open_log(session) as log:
        ruled = [(r.verdict, r.rule) for r in log if isinstance(r, PermissionRuleRecord)]
    assert ruled == [("deny", "deny bash rm -rf *"), ("allow", "allow write")]
