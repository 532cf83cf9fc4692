"""A tool's declarations: ``read_only`` and the call-time ``preview_call`` shown when asking."""

from __future__ import annotations

from typing import Any

import pytest

from acp_sidecar.tools import (
    Allow,
    Ask,
    DiffCallView,
    FileDiff,
    ToolArgsError,
    ToolDefinition,
    ToolError,
    ToolExecution,
    ToolExecutionInput,
    ToolRegistrationError,
    ToolRegistry,
    define_tool,
)

from .helpers import Asking


class Gone(ToolError):
    code = "GONE"


async def body(args: Any, execution: ToolExecution) -> str:
    ran.append(execution.call_id)
    return "ran"


ran: list[str] = []


def tool(preview: Any = None, **extra: Any) -> ToolDefinition:
    return define_tool(
        name="change",
        description="changes a file",
        parameters={"path": {"type": "string", "required": True}},
        execute=body,
        preview_call=preview,
        **extra,
    )


def asking(answers: list[Ask]) -> tuple[ToolRegistry, Asking]:
    async def handler(execution: ToolExecution, ask: Ask) -> Allow:
        answers.append(ask)
        return Allow()

    reg = ToolRegistry()
    reg.on_pre_execute(lambda execution, next_: Ask("changes things"))
    return reg, Asking(handler)


def call(context: Asking | None = None, **arguments: Any) -> ToolExecutionInput:
    return ToolExecutionInput(
        call_id="c1", name="change", arguments=arguments or {"path": "f"}, context=context
    )


async def test_read_only_is_declared_and_undeclared_means_it_may_change_things() -> None:
    reg = ToolRegistry()
    assert reg.register(tool()).read_only is False
    reg.unregister("change")
    assert reg.register(tool(read_only=True)).read_only is True
    with pytest.raises(ToolRegistrationError, match="read_only: expected True or False"):
        ToolRegistry().register(ToolDefinition("x", "d", tool().parameters, body, read_only=1))  # type: ignore[arg-type]


async def test_the_handler_is_asked_with_the_tools_preview() -> None:
    async def preview(args: Any, execution: ToolExecution) -> DiffCallView:
        return DiffCallView(card="diff", title="Change", diffs=[FileDiff(args["path"], "a", "b")])

    answers: list[Ask] = []
    reg, asker = asking(answers)
    reg.register(tool(preview))
    result = await reg.execute(call(asker))
    assert not result.is_error
    [ask] = answers
    assert ask.reason == "changes things"
    assert ask.preview == DiffCallView(card="diff", title="Change", diffs=[FileDiff("f", "a", "b")])


@pytest.mark.parametrize(
    ("error", "code"),
    [(Gone("f is gone"), "GONE"), (ToolArgsError(["/path: bad"]), "INVALID_ARGS")],
)
async def test_a_preview_that_raises_a_tool_error_refuses_the_call_unasked(
    error: ToolError, code: str
) -> None:
    async def preview(args: Any, execution: ToolExecution) -> DiffCallView:
        raise error

    answers: list[Ask] = []
    reg, asker = asking(answers)
    reg.register(tool(preview))
    ran.clear()
    result = await reg.execute(call(asker))
    assert result.is_error and result.error is not None and result.error.code == code
    assert answers == [] and ran == []


async def test_invalid_arguments_fail_in_the_preview_before_anyone_is_asked() -> None:
    async def preview(args: Any, execution: ToolExecution) -> None:
        return None

    answers: list[Ask] = []
    reg, asker = asking(answers)
    reg.register(tool(preview))
    result = await reg.execute(call(asker, path=3))
    assert result.error is not None and result.error.code == "INVALID_ARGS"
    assert answers == []


@pytest.mark.parametrize("outcome", ["raise", "junk", "none"])
async def test_a_broken_preview_falls_back_to_asking_without_one(outcome: str) -> None:
    async def preview(args: Any, execution: ToolExecution) -> Any:
        if outcome == "raise":
            raise RuntimeError("preview bug")
        return "not a view" if outcome == "junk" else None

    answers: list[Ask] = []
    reg, asker = asking(answers)
    reg.register(tool(preview))
    ran.clear()
    result = await reg.execute(call(asker))
    assert not result.is_error and ran == ["c1"]
    assert [a.preview for a in answers] == [None]


async def test_the_preview_runs_only_when_someone_is_asked() -> None:
    previews: list[str] = []

    async def preview(args: Any, execution: ToolExecution) -> None:
        previews.append(execution.call_id)

    allowed = ToolRegistry()
    allowed.register(tool(preview))
    assert not (
        await allowed.execute(call(Asking(lambda execution, ask: Allow())))
    ).is_error  # no Ask: no preview
    unasked = ToolRegistry()
    unasked.register(tool(preview))
    unasked.on_pre_execute(lambda execution, next_: Ask())
    assert (await unasked.execute(call())).is_error  # no one to ask: denied, no preview
    assert previews == []
