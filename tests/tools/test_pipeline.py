"""The guarded execution pipeline: order, seams, failures as results, cancellation, timeouts."""

from __future__ import annotations

import asyncio
import json
import math
import os
from typing import Any

import attrs
import pytest

from acp_sidecar.tools import (
    Accept,
    Allow,
    Ask,
    Block,
    CancelSignal,
    Deny,
    ImageContent,
    TextContent,
    ToolArgsError,
    ToolErrorInfo,
    ToolExecution,
    ToolExecutionResult,
    ToolExecutionToken,
    ToolOutput,
    ToolRegistry,
    tool_context,
)
from acp_sidecar.tools import cancel as cancel_module
from acp_sidecar.tools.result import result_from_json, result_to_json
from tests.fakes import RecordingSink
from tests.results import error_of, text

from .helpers import Asking, call, raw_tool


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(raw_tool())
    return reg


async def test_a_plain_call_returns_the_tools_text(registry: ToolRegistry) -> None:
    result = await registry.execute(call(arguments={"x": 7}))
    assert result == ToolExecutionResult(
        call_id="c1", content=(TextContent("echo 7"),), is_error=False
    )


@pytest.mark.parametrize(
    ("output", "content", "meta"),
    [
        ("hi", (TextContent("hi"),), None),
        (
            [TextContent("a"), ImageContent("AAAA", "image/png")],
            (TextContent("a"), ImageContent("AAAA", "image/png")),
            None,
        ),
        (ToolOutput("done", meta={"lines": [1, 2]}), (TextContent("done"),), {"lines": (1, 2)}),
        (ToolOutput([TextContent("x")]), (TextContent("x"),), None),
    ],
)
async def test_each_return_form_is_normalized(output: Any, content: Any, meta: Any) -> None:
    async def execute(args: Any, execution: ToolExecution) -> Any:
        return output

    reg = ToolRegistry()
    reg.register(raw_tool(execute=execute))
    result = await reg.execute(call())
    assert (result.content, result.is_error, result.meta) == (content, False, meta)


@pytest.mark.parametrize(
    ("arguments", "violation"),
    [
        ({"x": math.nan}, "arguments/x: nan is not a JSON number"),
        ({"x": math.inf}, "arguments/x: inf is not a JSON number"),
        ({1: "a"}, "arguments/: key 1 is not a string"),
        ({"x": {1, 2}}, "arguments/x: set is not JSON"),
        ({"x": b"raw"}, "arguments/x: bytes is not JSON"),
        ({"x": object()}, "arguments/x: object is not JSON"),
    ],
)
async def test_arguments_that_are_not_lossless_json_are_refused_before_policy(
    arguments: Any, violation: str
) -> None:
    reg = ToolRegistry()
    reg.register(raw_tool())
    seen: list[str] = []
    reg.on_pre_execute(lambda execution, next_: seen.append("pre") or next_())
    result = await reg.execute(call(arguments=arguments))
    assert error_of(result) == ("ToolInputError", "INVALID_INPUT")
    assert violation in text(result)
    assert seen == []


async def test_a_cycle_in_the_arguments_is_refused(registry: ToolRegistry) -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    result = await registry.execute(call(arguments=cyclic))
    assert error_of(result) == ("ToolInputError", "INVALID_INPUT")
    assert "arguments/self: cycle" in text(result)


async def test_arguments_are_a_detached_deep_frozen_snapshot() -> None:
    seen: list[Any] = []

    async def execute(args: Any, execution: ToolExecution) -> str:
        seen.append(args)
        with pytest.raises(TypeError):
            args["list"] = []
        assert isinstance(args["list"], tuple)
        return "ok"

    reg = ToolRegistry()
    reg.register(raw_tool(execute=execute))
    arguments: dict[str, Any] = {"list": [1, {"y": 2}]}
    result = await reg.execute(call(arguments=arguments))
    assert not result.is_error, text(result)
    arguments["list"].append(3)
    assert seen[0]["list"] == (1, {"y": 2})
    assert json.loads(json.dumps(seen[0])) == {"list": [1, {"y": 2}]}


async def test_every_call_gets_a_fresh_opaque_token(registry: ToolRegistry) -> None:
    tokens: list[ToolExecutionToken] = []
    registry.on_result(lambda execution, result: tokens.append(execution.token))
    await registry.execute(call())
    await registry.execute(call())
    assert tokens[0] is not tokens[1]
    assert tokens[0] != tokens[1]
    with pytest.raises(AttributeError):
        tokens[0].x = 1  # type: ignore[attr-defined]


async def test_unknown_tool_is_a_structured_error(registry: ToolRegistry) -> None:
    result = await registry.execute(call("nope"))
    assert error_of(result) == ("ToolNotFoundError", "UNKNOWN_TOOL")
    assert text(result) == "Unknown tool 'nope'. Available tools: echo"


async def test_a_tool_that_raises_becomes_an_error_result() -> None:
    async def boom(args: Any, execution: ToolExecution) -> str:
        raise ValueError("bad thing")

    async def bad_args(args: Any, execution: ToolExecution) -> str:
        raise ToolArgsError(["/x: expected string, got number"])

    reg = ToolRegistry()
    reg.register(raw_tool("boom", boom))
    reg.register(raw_tool("args", bad_args))
    boom_result = await reg.execute(call("boom"))
    assert error_of(boom_result) == ("ValueError", "EXECUTION_FAILED")
    assert text(boom_result) == "ValueError: bad thing"
    args_result = await reg.execute(call("args"))
    assert error_of(args_result) == ("ToolArgsError", "INVALID_ARGS")
    assert "/x: expected string, got number" in text(args_result)


async def test_execution_fields_are_read_only_outside_execute_wrappers() -> None:
    reg = ToolRegistry()
    reg.register(raw_tool())
    problems: list[str] = []

    def pre(execution: ToolExecution, next_: Any) -> Any:
        for name, value in (
            ("name", "other"),
            ("call_id", "x"),
            ("arguments", {}),
            ("token", None),
            ("agent", None),
            ("context", None),
            ("parent", None),
            ("signal", CancelSignal()),
        ):
            try:
                setattr(execution, name, value)
                problems.append(f"{name} was writable")
            except AttributeError:
                pass
        return next_()

    reg.on_pre_execute(pre)
    result = await reg.execute(call())
    assert not result.is_error
    assert problems == []


async def test_the_context_reaches_every_seam_as_given_and_the_agent_stays_apart() -> None:
    asker = Asking(lambda execution, ask: Allow())
    seen: list[tuple[str, object, object, str]] = []

    async def execute(args: Any, execution: ToolExecution) -> str:
        seen.append(("tool", execution.context, execution.agent, tool_context(execution).cwd))
        return "ok"

    def pre(execution: ToolExecution, next_: Any) -> Any:
        seen.append(("pre", execution.context, execution.agent, tool_context(execution).cwd))
        return next_()

    reg = ToolRegistry()
    reg.register(raw_tool(execute=execute))
    reg.on_pre_execute(pre)
    agent = object()
    assert not (await reg.execute(call(context=asker, agent=agent))).is_error
    assert seen == [("pre", asker, agent, asker.cwd), ("tool", asker, agent, asker.cwd)]
    seen.clear()
    assert not (await reg.execute(call())).is_error  # no context: the process's cwd
    assert seen == [("pre", None, None, os.getcwd()), ("tool", None, None, os.getcwd())]


async def test_execute_wrappers_may_set_replace_or_remove_only_the_signal() -> None:
    replacement = CancelSignal()
    seen: list[object] = []

    async def execute(args: Any, execution: ToolExecution) -> str:
        seen.append(execution.signal)
        with pytest.raises(AttributeError):
            execution.signal = None  # the tool itself cannot change it
        return "ok"

    async def wrapper(execution: ToolExecution, next_: Any) -> ToolExecutionResult:
        execution.signal = replacement
        with pytest.raises(AttributeError):
            execution.name = "x"  # type: ignore[misc]
        result: ToolExecutionResult = await next_()
        del execution.signal
        return result

    reg = ToolRegistry()
    reg.register(raw_tool(execute=execute))
    reg.on_execute(wrapper)
    observed: list[ToolExecution] = []
    reg.on_result(lambda execution, result: observed.append(execution))
    result = await reg.execute(call(signal=CancelSignal()))
    assert not result.is_error, text(result)
    assert seen == [replacement]
    assert observed[0].signal is None
    assert observed[0].sealed
    with pytest.raises(AttributeError):
        observed[0].signal = replacement


async def test_seams_run_in_order_and_prepend_reorders(registry: ToolRegistry) -> None:
    order: list[str] = []

    def pre(tag: str) -> Any:
        def listener(execution: ToolExecution, next_: Any) -> Any:
            order.append(tag)
            return next_()

        return listener

    async def wrap(execution: ToolExecution, next_: Any) -> ToolExecutionResult:
        order.append("wrap>")
        result: ToolExecutionResult = await next_()
        order.append("<wrap")
        return result

    async def post(execution: ToolExecution, result: ToolExecutionResult, next_: Any) -> Any:
        order.append("post")
        return await next_()

    registry.on_pre_execute(pre("pre-b"))
    registry.on_pre_execute(pre("pre-a"), prepend=True)
    registry.add_guard(lambda execution: order.append("guard") and None)
    registry.on_execute(wrap)
    registry.on_post_execute(post)
    registry.on_result(lambda execution, result: order.append("result") and None)
    result = await registry.execute(call())
    assert not result.is_error
    assert order == ["pre-a", "pre-b", "guard", "wrap>", "<wrap", "post", "result"]


async def test_removers_take_a_listener_out(registry: ToolRegistry) -> None:
    remove = registry.on_pre_execute(lambda execution, next_: Deny("no"))
    assert (await registry.execute(call())).is_error
    remove()
    remove()  # idempotent
    assert not (await registry.execute(call())).is_error


async def test_deny_skips_dispatch() -> None:
    calls: list[int] = []

    async def execute(args: Any, execution: ToolExecution) -> str:
        calls.append(1)
        return "ran"

    reg = ToolRegistry()
    reg.register(raw_tool(execute=execute))
    reg.on_pre_execute(lambda execution, next_: Deny("not today"))
    result = await reg.execute(call())
    assert error_of(result) == ("ToolDeniedError", "DENIED")
    assert text(result) == "echo was denied: not today"
    assert calls == []


class FilesOnly:
    """A tool context as written before contexts carried permissions: no ``permissions``."""

    cwd = "/w"
    allow_outside_workspace = False
    files = None


async def test_ask_with_a_context_that_has_no_permissions_degrades_to_deny(
    registry: ToolRegistry,
) -> None:
    registry.on_pre_execute(lambda execution, next_: Ask("edits files"))
    result = await registry.execute(call(context=FilesOnly()))
    assert error_of(result) == ("ToolDeniedError", "DENIED")
    assert text(result).endswith("there is no one to ask")


async def test_a_later_listener_sees_an_earlier_short_circuit_never(registry: ToolRegistry) -> None:
    later: list[str] = []
    registry.on_pre_execute(lambda execution, next_: Allow())
    registry.on_pre_execute(lambda execution, next_: later.append("x") or Deny("late"))
    assert not (await registry.execute(call())).is_error
    assert later == []


async def test_ask_without_a_permission_handler_degrades_to_deny(registry: ToolRegistry) -> None:
    registry.on_pre_execute(lambda execution, next_: Ask("edits files"))
    result = await registry.execute(call())
    assert error_of(result) == ("ToolDeniedError", "DENIED")
    assert (
        text(result)
        == "echo was denied: it needs permission (edits files) and there is no one to ask"
    )


@pytest.mark.parametrize(("answer", "denied"), [(Allow(), False), (Deny("user said no"), True)])
async def test_ask_goes_to_the_permission_handler(answer: Any, denied: bool) -> None:
    asked: list[tuple[str, str | None]] = []

    async def handler(execution: ToolExecution, ask: Ask) -> Any:
        asked.append((execution.name, ask.reason))
        return answer

    reg = ToolRegistry()
    reg.register(raw_tool())
    reg.on_pre_execute(lambda execution, next_: Ask("why"))
    result = await reg.execute(call(context=Asking(handler)))
    assert asked == [("echo", "why")]
    assert result.is_error is denied
    if denied:
        assert text(result) == "echo was denied: user said no"


async def test_a_guard_can_only_reduce_permission(registry: ToolRegistry) -> None:
    registry.on_pre_execute(lambda execution, next_: Allow())
    registry.add_guard(lambda execution: None)
    registry.add_guard(lambda execution: "outside the workspace")
    result = await registry.execute(call())
    assert error_of(result) == ("ToolDeniedError", "DENIED")
    assert text(result) == "echo was denied: outside the workspace"


@pytest.mark.parametrize("seam", ["pre", "guard", "wrapper", "post", "permission"])
async def test_a_listener_that_raises_becomes_its_own_error(seam: str) -> None:
    def explode(*args: Any) -> Any:
        raise RuntimeError("listener broke")

    reg = ToolRegistry()
    reg.register(raw_tool())
    match seam:
        case "pre":
            reg.on_pre_execute(explode)
        case "guard":
            reg.add_guard(explode)
        case "wrapper":
            reg.on_execute(explode)
        case "post":
            reg.on_post_execute(explode)
        case "permission":
            reg.on_pre_execute(lambda execution, next_: Ask())
    result = await reg.execute(call(context=Asking(explode) if seam == "permission" else None))
    assert error_of(result) == ("ToolListenerError", "LISTENER_FAILED")
    assert "explode raised RuntimeError: listener broke" in text(result)


@pytest.mark.parametrize("seam", ["pre", "wrapper", "post", "permission"])
async def test_a_listener_returning_the_wrong_type_is_an_error(seam: str) -> None:
    def junk(*args: Any) -> Any:
        return "yes"

    reg = ToolRegistry()
    reg.register(raw_tool())
    match seam:
        case "pre":
            reg.on_pre_execute(junk)
        case "wrapper":
            reg.on_execute(junk)
        case "post":
            reg.on_post_execute(junk)
        case "permission":
            reg.on_pre_execute(lambda execution, next_: Ask())
    result = await reg.execute(call(context=Asking(junk) if seam == "permission" else None))
    assert error_of(result) == ("ToolListenerError", "LISTENER_FAILED")
    assert "returned str" in text(result)


async def test_a_wrapper_sees_a_tool_failure_as_a_result_and_may_short_circuit() -> None:
    async def boom(args: Any, execution: ToolExecution) -> str:
        raise KeyError("k")

    seen: list[ToolExecutionResult] = []

    async def observe(execution: ToolExecution, next_: Any) -> ToolExecutionResult:
        result: ToolExecutionResult = await next_()
        seen.append(result)
        return result

    reg = ToolRegistry()
    reg.register(raw_tool("boom", boom))
    reg.register(raw_tool("cached"))
    reg.on_execute(observe)
    await reg.execute(call("boom"))
    assert error_of(seen[0]) == ("KeyError", "EXECUTION_FAILED")

    def cached(execution: ToolExecution, next_: Any) -> ToolExecutionResult:
        return ToolExecutionResult(
            call_id=execution.call_id, content=[TextContent("cached")], is_error=False
        )

    reg.on_execute(cached, prepend=True)
    assert text(await reg.execute(call("cached"))) == "cached"


async def test_post_execute_accept_replaces_content_and_carries_context(
    registry: ToolRegistry,
) -> None:
    registry.on_post_execute(
        lambda execution, result, next_: Accept("rewritten", additional_context="note")
    )
    result = await registry.execute(call())
    assert text(result) == "rewritten"
    assert result.additional_context == "note"
    assert not result.is_error


async def test_post_execute_block_turns_the_call_into_an_error(registry: ToolRegistry) -> None:
    registry.on_post_execute(lambda execution, result, next_: Block("do it differently"))
    result = await registry.execute(call())
    assert error_of(result) == ("ToolBlockedError", "BLOCKED")
    assert text(result) == "do it differently"


async def test_post_execute_listeners_compose_through_next(registry: ToolRegistry) -> None:
    async def outer(execution: ToolExecution, result: ToolExecutionResult, next_: Any) -> Any:
        inner = await next_()
        assert isinstance(inner, Accept)
        return Accept(f"outer saw {inner.content[0].text}")

    registry.on_post_execute(outer)
    registry.on_post_execute(lambda execution, result, next_: Accept("inner"))
    assert text(await registry.execute(call())) == "outer saw inner"


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (42, "echo returned int; expected str, a list of content blocks, or ToolOutput"),
        ([TextContent("ok"), "plain"], "echo returned list; expected str"),
        (ToolOutput("x", meta={"when": object()}), "echo returned meta that is not lossless JSON"),
        (ToolOutput("x", meta=math.nan), "echo returned meta that is not lossless JSON"),
    ],
)
async def test_a_malformed_return_becomes_a_json_safe_error(output: Any, message: str) -> None:
    async def execute(args: Any, execution: ToolExecution) -> Any:
        return output

    reg = ToolRegistry()
    reg.register(raw_tool(execute=execute))
    result = await reg.execute(call())
    assert error_of(result) == ("ToolResultError", "INVALID_RESULT")
    assert message in text(result)
    assert result_from_json(json.loads(json.dumps(result_to_json(result)))) == result


async def test_a_wrapper_returning_another_calls_result_is_malformed(
    registry: ToolRegistry,
) -> None:
    registry.on_execute(
        lambda execution, next_: ToolExecutionResult(call_id="other", content=[], is_error=False)
    )
    result = await registry.execute(call())
    assert error_of(result) == ("ToolResultError", "INVALID_RESULT")
    assert "callId 'other' is not the call's 'c1'" in text(result)


async def test_a_bogus_content_block_smuggled_past_the_constructor_is_caught(
    registry: ToolRegistry,
) -> None:
    def smuggle(execution: ToolExecution, next_: Any) -> ToolExecutionResult:
        result = ToolExecutionResult(call_id=execution.call_id, content=[], is_error=False)
        object.__setattr__(result, "content", ("not a block",))
        return result

    registry.on_execute(smuggle)
    result = await registry.execute(call())
    assert error_of(result) == ("ToolResultError", "INVALID_RESULT")
    assert "content/0: str is not a content block" in text(result)


async def test_observers_see_the_final_frozen_outcome_and_cannot_change_it(
    registry: ToolRegistry,
) -> None:
    seen: list[tuple[ToolExecution, ToolExecutionResult]] = []

    def mutate(execution: ToolExecution, result: ToolExecutionResult) -> None:
        result.is_error = True  # type: ignore[misc]

    registry.on_result(mutate)
    registry.on_result(lambda execution, result: seen.append((execution, result)))

    async def failing(execution: ToolExecution, result: ToolExecutionResult) -> None:
        raise RuntimeError("observer broke")

    registry.on_result(failing)
    registry.on_result(lambda execution, result: seen.append((execution, result)))
    result = await registry.execute(call())
    assert not result.is_error
    assert len(seen) == 2
    assert all(r is result and e.sealed for e, r in seen)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        result.content = ()  # type: ignore[misc]


async def test_observers_hear_rejected_and_unknown_calls_too(registry: ToolRegistry) -> None:
    codes: list[str | None] = []
    registry.on_result(lambda execution, result: codes.append(result.error and result.error.code))
    await registry.execute(call("nope"))
    await registry.execute(call(arguments={"x": math.nan}))
    assert codes == ["UNKNOWN_TOOL", "INVALID_INPUT"]


async def test_sync_and_async_listeners_mix(registry: ToolRegistry) -> None:
    async def async_pre(execution: ToolExecution, next_: Any) -> Any:
        return await next_()

    registry.on_pre_execute(async_pre)
    registry.on_pre_execute(lambda execution, next_: next_())
    registry.add_guard(lambda execution: None)

    async def async_guard(execution: ToolExecution) -> str | None:
        return None

    registry.add_guard(async_guard)
    assert not (await registry.execute(call())).is_error


async def test_timeout_cancels_the_signal_and_reports_timeout() -> None:
    cancelled: list[str | None] = []

    async def slow(args: Any, execution: ToolExecution) -> str:
        assert execution.signal is not None
        await execution.signal.wait()
        cancelled.append(execution.signal.reason)
        return "partial"

    reg = ToolRegistry()
    reg.register(raw_tool("slow", slow, timeout_ms=20))
    turn = CancelSignal()
    result = await reg.execute(call("slow", signal=turn))
    assert error_of(result) == ("ToolTimeoutError", "TIMEOUT")
    assert text(result) == "slow timed out after 20 ms"
    assert cancelled == ["timeout"]
    assert not turn.cancelled  # a per-call deadline never cancels the turn


async def test_timeout_without_an_outer_signal() -> None:
    async def slow(args: Any, execution: ToolExecution) -> str:
        assert execution.signal is not None
        await execution.signal.wait()
        return "late"

    reg = ToolRegistry()
    reg.register(raw_tool("slow", slow, timeout_ms=10))
    assert error_of(await reg.execute(call("slow"))) == ("ToolTimeoutError", "TIMEOUT")


async def test_a_tool_that_ignores_its_signal_is_abandoned_after_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cancel_module, "CANCEL_GRACE_S", 0.05)
    finished: list[str] = []

    async def stubborn(args: Any, execution: ToolExecution) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            finished.append("cancelled")
            raise
        return "never"

    reg = ToolRegistry()
    reg.register(raw_tool("stubborn", stubborn, timeout_ms=10))
    result = await asyncio.wait_for(reg.execute(call("stubborn")), 5)
    assert error_of(result) == ("ToolTimeoutError", "TIMEOUT")
    assert finished == ["cancelled"]


async def test_external_cancellation() -> None:
    async def cooperative(args: Any, execution: ToolExecution) -> str:
        assert execution.signal is not None
        await execution.signal.wait()
        return "stopped early, output so far"

    async def raising(args: Any, execution: ToolExecution) -> str:
        assert execution.signal is not None
        await execution.signal.wait()
        execution.signal.raise_if_cancelled()
        return "unreachable"

    reg = ToolRegistry()
    reg.register(raw_tool("coop", cooperative))
    reg.register(raw_tool("raising", raising))
    for name, expected in (("coop", None), ("raising", ("ToolCancelledError", "CANCELLED"))):
        signal = CancelSignal()
        asyncio.get_running_loop().call_later(0.01, signal.cancel, "session/cancel")
        result = await reg.execute(call(name, signal=signal))
        if expected is None:
            assert not result.is_error
            assert text(result) == "stopped early, output so far"
        else:
            assert error_of(result) == expected
            assert text(result) == "cancelled: session/cancel"


async def test_an_already_cancelled_signal_never_dispatches() -> None:
    ran: list[int] = []

    async def execute(args: Any, execution: ToolExecution) -> str:
        ran.append(1)
        return "ran"

    reg = ToolRegistry()
    reg.register(raw_tool(execute=execute))
    signal = CancelSignal()
    signal.cancel("stop")
    result = await reg.execute(call(signal=signal))
    assert error_of(result) == ("ToolCancelledError", "CANCELLED")
    assert ran == []


async def test_results_round_trip_through_json(registry: ToolRegistry) -> None:
    registry.on_post_execute(
        lambda execution, result, next_: Accept(additional_context={"k": [1, "a"]})
    )
    result = await registry.execute(call())
    again = result_from_json(json.loads(json.dumps(result_to_json(result))))
    assert again == result
    assert again.error is None
    failed = ToolExecutionResult(
        call_id="c",
        content=[ImageContent("AA", "image/png")],
        is_error=True,
        error=ToolErrorInfo("X", "Y"),
        meta={"m": None},
    )
    assert result_from_json(json.loads(json.dumps(result_to_json(failed)))) == failed


async def test_progress_reaches_the_sink_in_order_while_the_call_runs() -> None:
    kept: list[ToolExecution] = []

    async def chatty(args: Any, execution: ToolExecution) -> str:
        await execution.report_progress("starting")
        await execution.write_output("line 1\n")
        await execution.write_output("")  # nothing to send
        await execution.write_output("line 2\n")
        kept.append(execution)
        return "done"

    reg = ToolRegistry()
    reg.register(raw_tool("chatty", chatty))
    sink = RecordingSink()
    result = await reg.execute(call("chatty", progress=sink))
    assert text(result) == "done"
    assert sink.events == [("text", "starting"), ("output", "line 1\n"), ("output", "line 2\n")]
    await kept[0].write_output("after the result")  # sealed: dropped
    assert len(sink.events) == 3


async def test_a_failing_progress_sink_never_breaks_the_call() -> None:
    async def chatty(args: Any, execution: ToolExecution) -> str:
        await execution.report_progress("one")
        await execution.write_output("two")
        return "still fine"

    reg = ToolRegistry()
    reg.register(raw_tool("chatty", chatty))
    result = await reg.execute(call("chatty", progress=RecordingSink(fail=True)))
    assert not result.is_error
    assert text(result) == "still fine"
