"""The parent a turn's delegate is given: the turn's own fields but the delegate, as they were
when the turn started, and made without a cycle that would keep the turn alive."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from acp_sidecar.agent.delegation import Delegated, Delegation
from acp_sidecar.agent.driver import DriverBase, Turn
from acp_sidecar.protocol.content import TextContentBlock
from acp_sidecar.protocol.initialize import PromptCapabilities
from acp_sidecar.protocol.session import StopReason
from acp_sidecar.protocol.updates import SessionUpdate
from acp_sidecar.server.session import Session


class Capturing(DriverBase):
    prompt_capabilities = PromptCapabilities()

    def __init__(self) -> None:
        self.turns: list[Turn] = []

    async def run_turn(self, turn: Turn) -> StopReason:
        self.turns.append(turn)
        return "end_turn"


async def send(session_id: str, update: SessionUpdate) -> None:
    return None


@pytest.fixture
def no_gc() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def run(session: Session, driver: Capturing, parents: list[Any]) -> None:
    """Run a turn, keeping in ``parents`` what made its parent and its delegate (which holds
    that, as the server's does)."""

    def delegating(parent: Callable[[], Turn], links: dict[str, str]) -> Any:
        async def delegate(job: Delegation) -> Delegated:
            raise AssertionError(f"not called (the parent is {parent()})")

        parents.append((parent, delegate))
        return delegate

    await session.run_turn(
        driver,
        [TextContentBlock(text="hi")],
        send,
        client=None,  # type: ignore[arg-type]
        make_scope=lambda *args: None,  # type: ignore[arg-type,return-value]
        inform=lambda text: None,
        waiting=lambda text, first: None,
        delegating=delegating,
    )


async def test_the_parent_is_the_turn_but_its_delegate_as_the_turn_began() -> None:
    session = Session(session_id="s", cwd="/", model="first", reasoning_effort="low")
    driver, parents = Capturing(), []
    await run(session, driver, parents)
    (turn,), ((parent_of, delegate),) = driver.turns, parents
    session.model, session.reasoning_effort, session.tools = "second", "high", object()  # type: ignore[assignment]
    parent = parent_of()
    assert turn.delegate is delegate
    assert parent.delegate is None
    for field in attrs.fields(Turn):
        if field.name != "delegate":
            assert getattr(parent, field.name) is getattr(turn, field.name), field.name
    assert (parent.model, parent.reasoning_effort) == ("first", "low")


async def test_the_delegate_does_not_keep_the_turn_alive(no_gc: None) -> None:
    session = Session(session_id="s", cwd="/")
    driver, parents = Capturing(), []
    await run(session, driver, parents)
    turn = weakref.ref(driver.turns.pop())
    assert parents  # the delegate's parent is still held
    assert turn() is None
