"""What a review of the pipeline against the spec found, kept fixed.

- Each waterfall runs the listeners registered when it started: removing or adding one while
  a call is inside the chain (calls run concurrently) neither skips a listener nor runs one
  twice.
- A finished execution and its token can be weak-map keys, and stay read-only.
- Non-JSON ``additional_context`` from a post-execute listener is the listener's fault.
- ``parent`` is an opaque token: anything else (a live execution above all) is refused
  before policy.
- A permission dialog abandoned because the turn was cancelled ends the call as cancelled.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from acp_sidecar.tools import (
    Accept,
    Ask,
    Block,
    ToolCancelledError,
    ToolExecution,
    ToolExecutionResult,
    ToolExecutionToken,
    ToolRegistry,
)
from acp_sidecar.tools.result import result_from_json, result_to_json
from tests.results import error_of, text

from .helpers import Asking, call, raw_tool

SEAMS = ["pre", "wrapper", "post"]

Body = Callable[[ToolExecution], Awaitable[None]]


def add(reg: ToolRegistry, seam: str, body: Body, *, prepend: bool = False) -> Callable[[], None]:
    """Add a listener to ``seam`` that runs ``body`` and then delegates to the rest."""
    if seam == "pre":

        async def pre(execution: ToolExecution, next_: Any) -> Any:
            await body(execution)
            return await next_()

        return reg.on_pre_execute(pre, prepend=prepend)
    if seam == "wrapper":

        async def wrap(execution: ToolExecution, next_: Any) -> ToolExecutionResult:
            await body(execution)
            result: ToolExecutionResult = await next_()
            return result

        return reg.on_execute(wrap, prepend=prepend)
    assert seam == "post"

    async def post(execution: ToolExecution, result: ToolExecutionResult, next_: Any) -> Any:
        await body(execution)
        return await next_()

    return reg.on_post_execute(post, prepend=prepend)


class Log:
    """Which listener ran in which call, in order."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = []

    def tagged(self, tag: str) -> Body:
        async def body(execution: ToolExecution) -> None:
            self.entries.append((execution.call_id, tag))

        return body

    def of(self, call_id: str) -> list[str]:
        return [tag for cid, tag in self.entries if cid == call_id]


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(raw_tool())
    return reg


# -- listener snapshots ---------------------------------------------------------------------


@pytest.mark.parametrize("seam", SEAMS)
async def test_a_listener_that_removes_itself_does_not_skip_the_next(
    registry: ToolRegistry, seam: str
) -> None:
    log = Log()
    removers: list[Callable[[], None]] = []

    async def once(execution: ToolExecution) -> None:
        log.entries.append((execution.call_id, "once"))
        removers[0]()

    removers.append(add(registry, seam, once))
    add(registry, seam, log.tagged("next"))
    assert not (await registry.execute(call(call_id="c1"))).is_error
    assert not (await registry.execute(call(call_id="c2"))).is_error
    assert log.of("c1") == ["once", "next"]
    assert log.of("c2") == ["next"]


@pytest.mark.parametrize("seam", SEAMS)
async def test_a_listener_added_mid_chain_waits_for_the_next_call(
    registry: ToolRegistry, seam: str
) -> None:
    log = Log()
    inside = asyncio.Event()
    release = asyncio.Event()

    async def holder(execution: ToolExecution) -> None:
        log.entries.append((execution.call_id, "holder"))
        if execution.call_id == "c1":
            inside.set()
            await release.wait()

    add(registry, seam, holder)
    add(registry, seam, log.tagged("tail"))
    first = asyncio.create_task(registry.execute(call(call_id="c1")))
    await asyncio.wait_for(inside.wait(), 30)  # hang guards
    add(registry, seam, log.tagged("front"), prepend=True)
    add(registry, seam, log.tagged("back"))
    release.set()
    assert not (await asyncio.wait_for(first, 30)).is_error
    assert log.of("c1") == ["holder", "tail"]  # nothing twice, nothing new
    assert not (await registry.execute(call(call_id="c2"))).is_error
    assert log.of("c2") == ["front", "holder", "tail", "back"]  # each exactly once


@pytest.mark.parametrize("seam", SEAMS)
async def test_concurrent_calls_each_run_the_chain_they_started_with(
    registry: ToolRegistry, seam: str
) -> None:
    log = Log()
    release = asyncio.Event()
    inside: dict[str, asyncio.Event] = {f"c{k}": asyncio.Event() for k in range(6)}

    async def holder(execution: ToolExecution) -> None:
        log.entries.append((execution.call_id, "holder"))
        inside[execution.call_id].set()
        await release.wait()

    add(registry, seam, holder)
    present = ["holder"]
    removers: dict[str, Callable[[], None]] = {}
    expected: dict[str, list[str]] = {}
    calls = []
    for k in range(6):
        call_id = f"c{k}"
        expected[call_id] = list(present)
        calls.append(asyncio.create_task(registry.execute(call(call_id=call_id))))
        await asyncio.wait_for(inside[call_id].wait(), 5)
        # Every call so far is parked inside the chain while the lists change under it.
        tag = f"added{k}"
        if k % 2:
            removers[tag] = add(registry, seam, log.tagged(tag), prepend=True)
            present.insert(0, tag)
        else:
            removers[tag] = add(registry, seam, log.tagged(tag))
            present.append(tag)
        if k == 3:
            removers["added0"]()
            present.remove("added0")
    release.set()
    results = await asyncio.wait_for(asyncio.gather(*calls), 5)
    assert not any(result.is_error for result in results)
    for call_id, tags in expected.items():
        assert log.of(call_id) == tags, call_id


# -- weak-map keys --------------------------------------------------------------------------


async def test_a_finished_execution_and_its_token_are_weak_map_keys(
    registry: ToolRegistry,
) -> None:
    outcomes: weakref.WeakKeyDictionary[ToolExecution, ToolExecutionResult] = (
        weakref.WeakKeyDictionary()
    )
    by_token: weakref.WeakKeyDictionary[ToolExecutionToken, str] = weakref.WeakKeyDictionary()
    by_call: weakref.WeakValueDictionary[str, ToolExecution] = weakref.WeakValueDictionary()
    kept: list[ToolExecution] = []

    def observe(execution: ToolExecution, result: ToolExecutionResult) -> None:
        outcomes[execution] = result
        by_token[execution.token] = text(result)
        by_call[execution.call_id] = execution
        kept.append(execution)

    registry.on_result(observe)
    result = await registry.execute(call())
    assert len(kept) == 1, "the observer failed"
    execution = kept[0]
    assert outcomes[execution] is result
    assert by_token[execution.token] == "echo 1"
    assert by_call["c1"] is execution
    # Weak: once nobody else holds the execution, every entry goes with it.
    del execution
    kept.clear()
    gc.collect()
    assert (len(outcomes), len(by_token), len(by_call)) == (0, 0, 0)


async def test_weak_referenceability_adds_nothing_writable(registry: ToolRegistry) -> None:
    kept: list[ToolExecution] = []
    registry.on_result(lambda execution, result: kept.append(execution))
    await registry.execute(call())
    execution, token = kept[0], kept[0].token
    for value in (execution, token):
        assert not hasattr(value, "__dict__")
        with pytest.raises(AttributeError):
            value.__weakref__ = None
        with pytest.raises(AttributeError):
            object.__setattr__(value, "extra", 1)
        with pytest.raises(AttributeError):
            object.__setattr__(value, "__weakref__", None)
    assert weakref.ref(execution)() is execution
    assert weakref.ref(token)() is token


# -- listener-supplied additional context --------------------------------------------------


@pytest.mark.parametrize("kind", ["accept", "block"])
@pytest.mark.parametrize(
    ("context", "violation"),
    [
        ({1, 2}, "additional_context/: set is not JSON"),
        (math.nan, "additional_context/: nan is not a JSON number"),
        ({"why": object()}, "additional_context/why: object is not JSON"),
    ],
)
async def test_non_json_additional_context_is_the_post_listeners_fault(
    registry: ToolRegistry, kind: str, context: Any, violation: str
) -> None:
    def careless(execution: ToolExecution, result: ToolExecutionResult, next_: Any) -> Any:
        if kind == "accept":
            return Accept(additional_context=context)
        return Block("try again", additional_context=context)

    async def passes_through(
        execution: ToolExecution, result: ToolExecutionResult, next_: Any
    ) -> Any:
        return await next_()

    registry.on_post_execute(passes_through)
    registry.on_post_execute(careless)
    result = await registry.execute(call())
    assert error_of(result) == ("ToolResultError", "INVALID_RESULT")
    message = text(result)
    assert message.startswith(
        "post-execute listener "
        "test_non_json_additional_context_is_the_post_listeners_fault.<locals>.careless "
        f"returned {kind.capitalize()} with additional_context that is not lossless JSON"
    )
    assert violation in message
    assert result.additional_context is None
    assert result_from_json(json.loads(json.dumps(result_to_json(result)))) == result


@pytest.mark.parametrize("field", ["additional_context", "meta"])
async def test_non_json_smuggled_into_a_result_is_caught_by_the_rebuild(
    registry: ToolRegistry, field: str
) -> None:
    def smuggle(execution: ToolExecution, next_: Any) -> ToolExecutionResult:
        result = ToolExecutionResult(call_id=execution.call_id, content=[], is_error=False)
        object.__setattr__(result, field, {1, 2})
        return result

    registry.on_execute(smuggle)
    result = await registry.execute(call())
    assert error_of(result) == ("ToolResultError", "INVALID_RESULT")
    assert text(result) == f"the tool result is malformed: {field}/: set is not JSON"


# -- the parent token -----------------------------------------------------------------------


class Branded(ToolExecutionToken):
    """A token subclass: it could carry a reference to the live execution."""

    __slots__ = ("live",)


@pytest.mark.parametrize("bad", ["live execution", "string", "object", "subclass"])
async def test_a_parent_that_is_not_a_token_is_refused_before_policy(bad: str) -> None:
    nested: list[ToolExecutionResult] = []

    async def outer(args: Any, execution: ToolExecution) -> str:
        parent: object = {
            "live execution": execution,
            "string": "c-outer",
            "object": object(),
            "subclass": Branded(),
        }[bad]
        nested.append(await reg.execute(call(call_id="c-inner", parent=parent)))
        return "outer done"

    reg = ToolRegistry()
    reg.register(raw_tool())
    reg.register(raw_tool("outer", outer))
    policed: list[str] = []
    reg.on_pre_execute(lambda execution, next_: policed.append(execution.call_id) or next_())
    heard: list[ToolExecution] = []
    reg.on_result(lambda execution, result: heard.append(execution))
    assert not (await reg.execute(call("outer", call_id="c-outer"))).is_error
    assert error_of(nested[0]) == ("ToolInputError", "INVALID_INPUT")
    assert text(nested[0]).startswith("parent must be a ToolExecutionToken or None, got ")
    assert policed == ["c-outer"]
    inner = next(e for e in heard if e.call_id == "c-inner")
    assert inner.parent is None  # observers never receive what was refused


async def test_a_nested_call_carries_its_parents_token(registry: ToolRegistry) -> None:
    seen: list[ToolExecution] = []

    async def outer(args: Any, execution: ToolExecution) -> str:
        result = await registry.execute(call(call_id="c-inner", parent=execution.token))
        return text(result)

    registry.register(raw_tool("outer", outer))
    registry.on_pre_execute(lambda execution, next_: seen.append(execution) or next_())
    result = await registry.execute(call("outer", call_id="c-outer"))
    assert text(result) == "echo 1"
    outer_execution, inner_execution = seen
    assert inner_execution.parent is outer_execution.token


# -- a permission dialog abandoned by cancellation ------------------------------------------


async def test_a_cancelled_permission_dialog_ends_the_call_as_cancelled() -> None:
    ran: list[str] = []

    async def execute(args: Any, execution: ToolExecution) -> str:
        ran.append(execution.call_id)
        return "ran"

    async def dialog(execution: ToolExecution, ask: Ask) -> Any:
        raise ToolCancelledError("session/request_permission abandoned: session/cancel")

    reg = ToolRegistry()
    reg.register(raw_tool(execute=execute))
    reg.on_pre_execute(lambda execution, next_: Ask("it writes files"))
    result = await reg.execute(call(context=Asking(dialog)))
    assert error_of(result) == ("ToolCancelledError", "CANCELLED")
    assert text(result) == "Cancelled before permission was given"
    assert ran == []
