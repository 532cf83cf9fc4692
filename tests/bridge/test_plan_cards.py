"""A plan result view on the wire: the card completes with a title and no content, and the
``plan`` update follows it — from the one translator live and replay share; a presenter that
fails sends no plan (the raw result instead), and so does a failed call."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from acp_sidecar.bridge.cards import plan_update, result_update
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.translate import translate_call, translate_result
from acp_sidecar.protocol import Plan, ToolCallProgress
from acp_sidecar.tools import GenericCallView, PlanItem, PlanResultView, ToolResult, define_tool
from acp_sidecar.tools.builtin import plan_tool
from acp_sidecar.tools.execution import ToolCallRecord
from acp_sidecar.tools.result import ToolErrorInfo, ToolExecutionResult
from tests.bridge.test_cards import notification

CTX = CardContext(cwd="/w")
ENTRIES = [
    {"content": "Find it", "priority": "high", "status": "completed"},
    {"content": "Fix it", "priority": "medium", "status": "in_progress"},
]
VIEW = PlanResultView(title="Plan: 2", entries=[PlanItem(**entry) for entry in ENTRIES])


def test_the_card_completes_without_content_and_the_plan_is_its_own_update() -> None:
    done = ToolResult((), False)
    card = notification(result_update("c1", GenericCallView(title="Update plan"), VIEW, done, CTX))
    assert card == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "completed",
        "title": "Plan: 2",
        "content": [],
    }
    assert notification(plan_update(VIEW)) == {"sessionUpdate": "plan", "entries": ENTRIES}
    assert notification(plan_update(PlanResultView(entries=()))) == {
        "sessionUpdate": "plan",
        "entries": [],
    }


def lookup(name: str) -> Any:
    return plan_tool if name == "plan" else None


def test_the_translator_sends_the_card_then_the_plan() -> None:
    call = ToolCallRecord(call_id="c1", name="plan", arguments={"entries": ENTRIES})
    start, view = translate_call(lookup, call, CTX)
    assert notification(start)["title"] == "Update plan"
    result = ToolExecutionResult(call_id="c1", content=(), is_error=False)
    card, plan = translate_result(lookup, call, view, result, CTX)
    assert isinstance(card, ToolCallProgress) and card.status == "completed"
    assert card.title == "Plan: 2 entries, 1 in progress, 1 completed"
    assert isinstance(plan, Plan)
    assert notification(plan)["entries"] == ENTRIES


def test_a_failed_call_sends_no_plan() -> None:
    call = ToolCallRecord(call_id="c1", name="plan", arguments={"entries": ENTRIES})
    _start, view = translate_call(lookup, call, CTX)
    failed = ToolExecutionResult(
        call_id="c1", content=(), is_error=True, error=ToolErrorInfo("plan", "EXECUTION_FAILED")
    )
    [card] = translate_result(lookup, call, view, failed, CTX)
    assert isinstance(card, ToolCallProgress) and card.status == "failed"


def test_a_presenter_that_raises_sends_the_raw_result_and_no_plan(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def execute(args: Any, execution: Any) -> str:
        return "ok"

    def broken(args: Any, result: ToolResult) -> PlanResultView:
        raise RuntimeError("presenter bug")

    tool = define_tool(
        name="broken",
        description="d",
        parameters={},
        execute=execute,
        present_result=broken,
        read_only=True,
    )
    call = ToolCallRecord(call_id="c1", name="broken", arguments={})
    _start, view = translate_call(lambda _name: tool, call, CTX)
    result = ToolExecutionResult(call_id="c1", content=(), is_error=False)
    with caplog.at_level(logging.ERROR):
        [card] = translate_result(lambda _name: tool, call, view, result, CTX)
    assert isinstance(card, ToolCallProgress) and card.status == "completed"
    assert "present_result of broken raised" in caplog.text
