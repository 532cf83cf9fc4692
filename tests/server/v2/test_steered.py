"""A v2 prompt steered into a running turn (``server.v2.prompting.steered``): withdrawn when its
request is cancelled before the driver took it; once taken it is the turn's, so even a
cancelled request is answered with the id it went in under; and a turn already cancelled takes
no prompt (it only winds down: the prompt runs as a turn of its own)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from acp_sidecar.protocol.content import TextContentBlock
from acp_sidecar.server.inbox import SteeringInbox
from acp_sidecar.server.v2.prompting import steered
from acp_sidecar.tools.cancel import CancelSignal

PROMPT = [TextContentBlock(text="also this")]


def running_session(inbox: SteeringInbox, signal: CancelSignal | None = None) -> Any:
    return SimpleNamespace(inbox=inbox, running=CancelSignal() if signal is None else signal)


async def test_a_request_cancelled_before_the_take_withdraws_its_prompt() -> None:
    inbox = SteeringInbox()
    request = asyncio.ensure_future(steered(running_session(inbox), PROMPT))
    await asyncio.sleep(0)
    request.cancel()
    assert (await asyncio.gather(request, return_exceptions=True))[0].__class__ is (
        asyncio.CancelledError
    )
    assert inbox.take(last=False) == ()


async def test_a_request_cancelled_after_the_take_is_answered_with_the_prompts_id() -> None:
    inbox = SteeringInbox()
    request = asyncio.ensure_future(steered(running_session(inbox), PROMPT))
    await asyncio.sleep(0)
    (taken,) = inbox.take(last=False)  # the driver takes it at a step boundary ...
    request.cancel()  # ... and the cancel arrives while its echo is written
    await asyncio.sleep(0)
    taken.place("m2")  # echoed and logged: the model reads it
    assert await asyncio.gather(request, return_exceptions=True) == ["m2"]


async def test_a_cancelled_turn_takes_no_prompt() -> None:
    inbox, signal = SteeringInbox(), CancelSignal()
    signal.cancel("session/cancel")
    assert await steered(running_session(inbox, signal), PROMPT) is None
    assert inbox.take(last=False) == ()
