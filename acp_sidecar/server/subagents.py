"""Running a child conversation (a subagent) for a turn's ``task`` call: the same driver and
endpoint, a fresh context, the tools the parent allows.

Invariants:
- A client that advertised ``subagents`` sees the child as a session of its own
  (:mod:`acp_sidecar.bridge.subagents`): announced before anything carries its id, asked
  about the child's calls under its id with the parent's state ``requires_action`` meanwhile,
  told ``idle`` when it ends. Any other client sees only the task card, whose progress is the
  child's current step.
- The child's records go to the parent's log tagged with its id, whatever the client, so a
  later load by either kind of client draws it; the parent's model never reads them.
- The parent's cancel stops the child; the child's own cancel stops it alone.
- A child is offered ``task`` only while it is shallower than :data:`MAX_DEPTH`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from acp_sidecar.agent.delegation import Delegate, Delegated, Delegation
from acp_sidecar.agent.driver import Driver, Turn, with_delegate
from acp_sidecar.bridge import subagents
from acp_sidecar.bridge.message_ids import MessageIds
from acp_sidecar.protocol.client import RequestPermissionRequest, RequestPermissionResponse
from acp_sidecar.protocol.content import ContentBlock, TextContentBlock
from acp_sidecar.protocol.session import StopReason
from acp_sidecar.protocol.tool_call import ToolCallStart
from acp_sidecar.protocol.updates import AgentMessageChunk, AgentThoughtChunk, SessionUpdate
from acp_sidecar.server.child_recording import ChildRecorder
from acp_sidecar.server.children import ChildSession
from acp_sidecar.store.records import CompactionRecord, UsageRecord
from acp_sidecar.tools.cancel import CancelSignal

if TYPE_CHECKING:
    from acp_sidecar.bridge.policy import CallScope
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.session import Session
    from acp_sidecar.tools.registry import ToolRegistry

MAX_DEPTH: Final = 1
"""How deep children nest: a session's own turn is depth 0, its children depth 1, which are
not offered ``task``."""


def delegate_for(
    server: Connection,
    session: Session,
    driver: Driver,
    parent: Callable[[], Turn],
    links: dict[str, str],
    depth: int = 0,
) -> Delegate | None:
    """What runs the ``task`` calls of the turn ``parent()`` makes (at ``depth``); ``None`` at
    the limit. ``links`` gets each task call's child id (for its card) when the client takes
    children."""
    if depth >= MAX_DEPTH:
        return None

    async def delegate(job: Delegation) -> Delegated:
        return await run_child(server, session, driver, parent(), links, depth + 1, job)

    return delegate


class _Answer:
    """The child's last message: what it answers with (a tool call starts it anew)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.step = "Starting"
        """The child's current step, for a card that shows it."""

    def hear(self, update: SessionUpdate) -> str | None:
        """Note ``update``; the new step to show, if it changed."""
        match update:
            case AgentMessageChunk(content=TextContentBlock(text=text)):
                self.parts.append(text)
                step = "Writing its answer"
            case AgentThoughtChunk():
                step = "Thinking"
            case ToolCallStart(title=title):
                self.parts.clear()
                step = title
            case _:
                return None
        if step == self.step:
            return None
        self.step = step
        return step

    @property
    def text(self) -> str | None:
        text = "".join(self.parts).strip()
        return text or None


async def run_child(
    server: Connection,
    session: Session,
    driver: Driver,
    parent: Turn,
    links: dict[str, str],
    depth: int,
    job: Delegation,
) -> Delegated:
    """Run ``job`` in a child conversation to its end (see the module invariants)."""
    parent_id = parent.session_id
    child_id = subagents.child_session_id(parent_id, job.call_id)
    opted = server.client_capabilities.takes_subagents
    signal = CancelSignal()
    removers = [parent.signal.add_callback(signal.cancel)]
    if job.signal is not None:
        removers.append(job.signal.add_callback(signal.cancel))
    known = server.children[child_id] = ChildSession(parent_id, signal)
    recorder = None if session.recorder is None else ChildRecorder(session.recorder, child_id)
    ids = MessageIds()
    answer = _Answer()
    told: list[str] = []
    used: list[UsageRecord] = []
    prompt = (TextContentBlock(text=job.prompt),)
    job_id = ids.user_message()
    if recorder is not None:
        recorder.prompt(prompt, job_id)

    async def show(update: SessionUpdate) -> None:
        if opted:
            await server.send_update(child_id, update)
            return
        step = answer.hear(update)
        if step is not None:
            await job.progress(f"Subagent: {step}")

    async def send(update: SessionUpdate) -> None:
        update = ids.stamp(update)
        if recorder is not None:
            recorder.update(update)
        if opted:
            answer.hear(update)
        await show(update)

    async def notice(text: str, blocks: Sequence[ContentBlock] = ()) -> None:
        message_id = ids.agent_text()
        told.append(text)
        if recorder is not None:
            recorder.notice(text, message_id=message_id, blocks=blocks)
        await show(AgentMessageChunk(content=TextContentBlock(text=text), message_id=message_id))
        for block in blocks:
            await show(AgentMessageChunk(content=block, message_id=message_id))

    if opted:
        await parent.send(subagents.announce(child_id, job.description))
        await parent.send(subagents.link(job.call_id, child_id))
        links[job.call_id] = child_id  # its later updates keep the link (not this one)
        for update in subagents.message(job_id, parent_id, child_id, prompt):
            await server.send_update(child_id, update)

    def keep(record: UsageRecord | CompactionRecord) -> None:
        if isinstance(record, UsageRecord):
            used.append(record)
        if recorder is not None:
            recorder.keep(record)

    allowed = job.write and session.policy.mode != "read-only"
    registry = parent.tools if parent.tools is not None else server.tools.registry
    asker = _ChildAsker(server, parent.scope, child_id, job.description, opted)
    scope = attrs.evolve(
        parent.scope,  # the parent's mode, rules, workspace and files
        session_id=child_id if opted else parent_id,
        send=send,
        signal=signal,
        asker=asker,
        pending={},
        decisions=recorder,
    )
    child = Turn(
        session_id=child_id,
        cwd=parent.cwd,
        prompt=prompt,
        signal=signal,
        send=send,
        client=parent.client,
        scope=scope,
        record=None if recorder is None else recorder.record_call_event,
        notice=notice,
        tools=child_tools(registry, allowed),
        model=parent.model,
        reasoning_effort=parent.reasoning_effort,
        budget=None if parent.budget is None else parent.budget.for_child(),
        inform=parent.inform,
        keep=keep,
    )
    made = child
    child = with_delegate(child, delegate_for(server, session, driver, lambda: made, links, depth))
    stop: StopReason = "cancelled"
    try:
        stop = await driver.run_turn(child)
        if signal.cancelled:
            stop = "cancelled"
    finally:
        for remove in removers:
            remove()
        known.running = None
        if recorder is not None:
            recorder.end(stop)
    if opted:
        await parent.send(subagents.state(child_id, "idle", stop, subagents.tokens_used(used)))
    explained = told[-1] if told else None
    return Delegated(child_id, stop, answer.text, explained, tuple(used))


def child_tools(registry: ToolRegistry, write: bool) -> ToolRegistry:
    """The tools a child is offered: the read-only ones, and with ``write`` the rest (never
    the parent's ``task``: the child's own, if any, is added for its turn)."""
    from acp_sidecar.agent.model.task import TASK_TOOL
    from acp_sidecar.agent.toolset import narrowed

    return narrowed(registry, keep=lambda d: d.name != TASK_TOOL and (write or d.read_only))


@attrs.frozen
class _ChildAsker:
    """Asks the user about a child's call, through the connection's asker (its version's
    dialog): the card's title names the child; a client that takes children is asked under
    the child's id, the parent's state ``requires_action`` while it answers."""

    server: Connection
    parent: CallScope
    child_id: str
    description: str
    opted: bool

    async def request_permission(
        self, request: RequestPermissionRequest, *, signal: CancelSignal | None = None
    ) -> RequestPermissionResponse:
        card = request.tool_call
        title = f"Subagent “{self.description}”: {card.title or 'a tool call'}"
        named = attrs.evolve(request, tool_call=attrs.evolve(card, title=title))
        if not self.opted:
            return await self.server.asker.request_permission(named, signal=signal)
        await self.parent.send(subagents.state(self.child_id, "requires_action"))
        try:
            return await self.server.asker.request_permission(named, signal=signal)
        finally:
            await self.parent.send(subagents.state(self.child_id, "running"))
