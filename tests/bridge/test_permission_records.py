"""Permission decisions reach the scope's recorder: the question, the answer, and a call
decided by the rule an "always" answer wrote; a failing recorder never fails the call."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import attrs
import pytest

from acp_sidecar.bridge.policy import CallScope, PermissionAnswer, PermissionRecorder
from acp_sidecar.bridge.rules import Rule, Verdict
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.protocol import RequestPermissionRequest
from acp_sidecar.tools import CancelSignal
from tests.bridge.test_policy import registry, scope
from tests.fakes import Editor

OFFERED = ("allow_once", "allow_always", "reject_once", "reject_always")


class Decisions:
    """A recorder keeping what it is told, in order."""

    def __init__(self) -> None:
        self.told: list[tuple[str, str, str, object]] = []

    def permission_asked(self, call_id: str, tool: str, options: Sequence[str]) -> None:
        self.told.append(("asked", call_id, tool, tuple(options)))

    def permission_answered(self, call_id: str, tool: str, answer: PermissionAnswer) -> None:
        self.told.append(("answered", call_id, tool, answer))

    def permission_ruled(self, call_id: str, tool: str, verdict: Verdict, rule: Rule) -> None:
        self.told.append(("ruled", call_id, tool, f"{verdict}: {rule} ({rule.origin})"))


def recording(editor: Editor, decisions: PermissionRecorder, mode: str = "ask") -> CallScope:
    return attrs.evolve(scope(editor, mode), decisions=decisions)


@pytest.mark.parametrize("answer", ["allow_once", "reject_once", None])
async def test_the_question_and_the_answer_are_recorded(answer: str | None) -> None:
    decisions = Decisions()
    result = await run_call(registry(), recording(Editor(answer), decisions), "c1", "change", {})
    assert decisions.told == [
        ("asked", "c1", "change", OFFERED),
        ("answered", "c1", "change", "cancelled" if answer is None else answer),
    ]
    assert result.is_error is (answer != "allow_once")


@pytest.mark.parametrize(
    ("answer", "allowed", "rule"),
    [("allow_always", True, "allow: allow run"), ("reject_always", False, "deny: deny run")],
)
async def test_the_rule_an_always_answer_wrote_is_recorded_when_it_decides_a_call(
    answer: str, allowed: bool, rule: str
) -> None:
    decisions = Decisions()
    editor = Editor(answer)
    call_scope = recording(editor, decisions)
    tools = registry()
    await run_call(tools, call_scope, "c1", "run", {})
    second = await run_call(tools, call_scope, "c2", "run", {})
    assert len(editor.asked) == 1
    assert decisions.told == [
        ("asked", "c1", "run", OFFERED),
        ("answered", "c1", "run", answer),
        ("ruled", "c2", "run", f"{rule} (session)"),
    ]
    assert second.is_error is not allowed


async def test_nothing_is_recorded_when_nobody_is_asked() -> None:
    decisions = Decisions()
    await run_call(registry(), recording(Editor(), decisions, mode="auto"), "c1", "change", {})
    await run_call(registry(), recording(Editor(), decisions), "c2", "look", {})
    assert decisions.told == []


async def test_an_unknown_option_is_recorded_as_the_rejection_it_is_taken_for() -> None:
    decisions = Decisions()
    result = await run_call(registry(), recording(Editor("maybe"), decisions), "c1", "run", {})
    assert result.is_error
    assert decisions.told[-1] == ("answered", "c1", "run", "reject_once")


async def test_a_turn_cancelled_during_the_dialog_is_recorded_as_cancelled() -> None:
    decisions = Decisions()

    class Stalling(Editor):
        async def request_permission(  # type: ignore[override]
            self, request: RequestPermissionRequest, *, signal: CancelSignal | None = None
        ) -> object:
            assert signal is not None
            signal.cancel("the user pressed stop")
            await asyncio.sleep(0)
            signal.raise_if_cancelled()
            raise AssertionError("not reached")

    result = await run_call(registry(), recording(Stalling(), decisions), "c1", "run", {})
    assert result.is_error
    assert decisions.told == [
        ("asked", "c1", "run", OFFERED),
        ("answered", "c1", "run", "cancelled"),
    ]


async def test_a_failing_recorder_never_fails_the_call(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(Decisions):
        def permission_asked(self, call_id: str, tool: str, options: Sequence[str]) -> None:
            raise OSError("disk full")

    result = await run_call(registry(), recording(Editor("allow_once"), Broken()), "c1", "run", {})
    assert not result.is_error and result.content[0].text == "ran"  # type: ignore[union-attr]
    assert "recording a permission decision failed" in caplog.text
