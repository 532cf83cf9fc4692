"""A session's own permission rules are kept in its log: a fresh server loading, resuming or
forking the session has them again (an "always … in this session" answer, ``/permissions add``),
a removal too; the log's rule records replay in order and show in an export."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.export.markdown import write_markdown
from acp_sidecar.export.source import StoredSession
from acp_sidecar.server.loading import StoredState
from acp_sidecar.store import (
    HeaderRecord,
    PermissionRuleRecord,
    SessionRuleRecord,
    SessionStore,
)
from acp_sidecar.store.records import utc_now
from tests.fakes import Answering
from tests.in_process import sdk_served
from tests.sdk import Transcript, command, new_session, prompt


def said(seen: Transcript, session: str) -> str:
    """What the agent said in ``session`` so far."""
    return "".join(
        str(u["content"].get("text", ""))
        for u in seen.updates(session)
        if u["sessionUpdate"] == "agent_message_chunk"
    )


def session_rules(store: Path, session: str) -> list[tuple[str, tuple[bool, bool] | None, bool]]:
    with SessionStore(store).open_log(session) as log:
        return [(r.rule, r.risk, r.removed) for r in log if isinstance(r, SessionRuleRecord)]


async def test_a_session_rule_the_dialog_wrote_survives_a_load_and_so_does_its_removal(
    tmp_path: Path,
) -> None:
    store, work = tmp_path / "store", tmp_path / "work"
    work.mkdir()
    args = ("--config", str(tmp_path / "config.toml"))
    first = Answering("allow_always")
    async with sdk_served(first, *args, store=store) as (connection, _wire):
        session = await new_session(connection, work)
        write = command("write", path="a.txt", content="a\n")
        assert await prompt(connection, session, write) == "end_turn"
    assert len(first.offered) == 1 and "allow_always" in first.offered[0]

    loaded, seen = Answering("reject_once"), Transcript()
    async with sdk_served(loaded, *args, store=store, observers=[seen]) as (connection, _wire):
        await connection.load_session(cwd=str(work), session_id=session, mcp_servers=[])
        write = command("write", path="b.txt", content="b\n")
        assert await prompt(connection, session, write) == "end_turn"
        assert loaded.offered == []  # the rule came back with the session's log
        assert (work / "b.txt").read_text() == "b\n"
        assert await prompt(connection, session, "/permissions") == "end_turn"
        assert "1. `allow write` — session (while the tool declares what it did)" in said(
            seen, session
        )
        assert await prompt(connection, session, "/permissions remove allow write") == "end_turn"

    resumed = Answering("reject_once")
    async with sdk_served(resumed, *args, store=store) as (connection, _wire):
        await connection.resume_session(cwd=str(work), session_id=session)
        write = command("write", path="c.txt", content="c\n")
        assert await prompt(connection, session, write) == "end_turn"
    assert len(resumed.offered) == 1  # the removal came back too: asked, and rejected
    assert not (work / "c.txt").exists()
    assert session_rules(store, session) == [
        ("allow write", (True, False), False),  # what `write` declares: it changes things
        ("allow write", None, True),
    ]
    with SessionStore(store).open_log(session) as log:
        ruled = [(r.rule, r.source) for r in log if isinstance(r, PermissionRuleRecord)]
    assert ruled == [("allow write", "session")]

    out = io.StringIO()
    with StoredSession(SessionStore(store).path_of(session), ToolsProvider(()).registry.get) as s:
        write_markdown(s, out, generator="test")
    transcript = out.getvalue()
    assert "session rule set to* `added: allow write`" in transcript
    assert "allowed by the rule allow write (session)" in transcript
    assert "session rule set to* `removed: allow write`" in transcript


async def test_a_fork_carries_the_parents_session_rules_as_they_are_when_it_is_taken(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    editor, seen = Answering("allow_once"), Transcript()
    args = ("--config", str(tmp_path / "config.toml"))
    served = sdk_served(editor, *args, store=tmp_path / "store", unstable=True, observers=[seen])
    async with served as (connection, _wire):
        parent = await new_session(connection, work)
        assert await prompt(connection, parent, "/permissions add deny bash touch *") == "end_turn"
        fork = (await connection.fork_session(session_id=parent, cwd=str(work))).session_id
        touch = command("bash", command="touch forked")
        assert await prompt(connection, fork, touch) == "end_turn"
        assert editor.offered == [] and not (work / "forked").exists()
        refusals = [
            str(u.get("content"))
            for u in seen.updates(fork)
            if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "failed"
        ]
        assert any("the permission rule `deny bash touch *` (session)" in r for r in refusals)

        assert await prompt(connection, parent, "/permissions remove deny bash touch *") == (
            "end_turn"
        )
        later = (await connection.fork_session(session_id=parent, cwd=str(work))).session_id
        touch = command("bash", command="touch later")
        assert await prompt(connection, later, touch) == "end_turn"
        assert len(editor.offered) == 1 and (work / "later").exists()  # asked; allowed once
        touch = command("bash", command="touch again")
        assert await prompt(connection, fork, touch) == "end_turn"
        assert not (work / "again").exists()  # the first fork keeps its own rule


@pytest.mark.parametrize(
    ("records", "kept"),
    [
        ([], []),  # a log written before session rules were kept: none, as then
        (
            [
                SessionRuleRecord(rule="permit bash"),  # no rule: left out, the rest applies
                SessionRuleRecord(rule="deny read secrets/**"),
                SessionRuleRecord(rule="allow write", risk=(True, False)),
                SessionRuleRecord(rule="allow write", risk=(True, False)),  # once only
                SessionRuleRecord(rule="ask bash git push*"),
                SessionRuleRecord(rule="allow write", removed=True),
            ],
            [("deny read secrets/**", None), ("ask bash git push*", None)],
        ),
        (
            [
                SessionRuleRecord(rule="allow edit", risk=(True, False)),
                SessionRuleRecord(rule="allow edit", removed=True),
                SessionRuleRecord(rule="allow edit"),
            ],
            [("allow edit", None)],
        ),
    ],
)
def test_the_logs_session_rules_apply_in_order(
    records: list[SessionRuleRecord], kept: list[tuple[str, tuple[bool, bool] | None]]
) -> None:
    state = StoredState(HeaderRecord(session_id="s", cwd="/w", created_at=utc_now()))
    assert list(state.watch(records)) == records  # passed through unchanged
    assert [(rule.text, rule.risk) for rule in state.rules] == kept
