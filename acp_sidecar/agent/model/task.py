"""``task``: the model hands a self-contained job to a child conversation (a subagent) and
gets its final answer back as the result. Offered only to a model turn that can delegate
(``Turn.delegate``; never in the console, never beyond the depth limit).

Declared ``read_only``: the call itself changes nothing; the child's own calls are judged one
by one, as the parent's are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated

import attrs

from acp_sidecar.agent.delegation import Delegate, Delegated, Delegation
from acp_sidecar.tools.content import ToolOutput
from acp_sidecar.tools.definition import ToolDefinition, define_tool
from acp_sidecar.tools.errors import ToolCancelledError, ToolExecutionError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.presentation import GenericCallView

TASK_TOOL = "task"


@attrs.frozen
class TaskArgs:
    """The parameters of ``task``."""

    description: Annotated[str, "A short title of the job (a few words), shown to the user."]
    prompt: Annotated[
        str,
        "The whole job for the subagent, self-contained: it sees nothing of this conversation, "
        "only this text, and answers with one final message.",
    ]
    write: Annotated[
        bool,
        "Whether the subagent may use the tools that change things (edits, commands), as far "
        "as the session's mode allows; the user is asked about its calls as about yours. "
        "Default false: it only reads and searches.",
    ] = False


def present_task_call(args: TaskArgs) -> GenericCallView:
    """The pending card: the job's title."""
    return GenericCallView(title=f"Task: {args.description}", kind="other")


def task_tool(delegate: Delegate) -> ToolDefinition:
    """The ``task`` tool of one turn, delegating through ``delegate``."""

    async def execute_task(args: TaskArgs, execution: ToolExecution) -> ToolOutput:
        if not args.description.strip() or not args.prompt.strip():
            raise ToolExecutionError("a task needs a description and a prompt")
        done = await delegate(
            Delegation(
                call_id=execution.call_id,
                description=args.description.strip(),
                prompt=args.prompt,
                write=args.write,
                progress=execution.report_progress,
                signal=execution.signal,
            )
        )
        if done.stop_reason == "cancelled":
            raise ToolCancelledError("the subagent was cancelled before it answered")
        if done.answer is None or done.stop_reason != "end_turn":
            why = f": {done.explained}" if done.explained else ""
            raise ToolExecutionError(
                f"the subagent ended without an answer ({done.stop_reason}){why}"
            )
        return ToolOutput(done.answer)

    return define_tool(
        name=TASK_TOOL,
        description=(
            "Hand a self-contained job to a subagent: a fresh conversation with the same model "
            "and the session's tools (read-only unless write is true), which works on it alone "
            "and answers with one final message, returned as this call's result. Use it for "
            "research or a side job whose steps need not fill this conversation; give it "
            "everything it needs in the prompt. Several task calls in one response run in "
            "parallel."
        ),
        parameters=TaskArgs,
        execute=execute_task,
        present_call=present_task_call,
        read_only=True,
    )


async def _not_delegating(job: Delegation) -> Delegated:
    raise RuntimeError("a stored task call is drawn, never run")


@functools.cache
def stored_task_tool() -> ToolDefinition:
    """The ``task`` tool as a stored session's cards are drawn with (its presenters only)."""
    return task_tool(_not_delegating)


def with_task_cards(
    lookup: Callable[[str], ToolDefinition | None],
) -> Callable[[str], ToolDefinition | None]:
    """``lookup``, finding the ``task`` tool too (which no registry holds: each turn that can
    delegate adds its own), so a replayed task card is the one drawn live."""

    def find(name: str) -> ToolDefinition | None:
        found = lookup(name)
        if found is None and name == TASK_TOOL:
            return stored_task_tool()
        return found

    return find
