"""The model driver: each prompt turn is a loop of streamed model requests and tool calls.

Invariants:
- A call is started only once complete; the last call of a response that did not end whole
  (no finish reason, ``length``, a cancel…) is never started: it may be cut off.
- A turn waits for every call it started before it returns; only a response that ended whole
  sends its results back to the model.
- Tool call ids are unique within the session (ACP requires it): a reused id is replaced.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from acp_sidecar.agent.driver import DriverBase, Turn, new_call_id, send_notice
from acp_sidecar.agent.model.calls import StepCalls
from acp_sidecar.agent.model.catalog import ListedModel, ModelCatalog
from acp_sidecar.agent.model.config import ModelConfig, ModelProfile
from acp_sidecar.agent.model.context import TurnContext, Unanswered
from acp_sidecar.agent.model.endings import cut_off, length_stop
from acp_sidecar.agent.model.instructions import InstructionsReader
from acp_sidecar.agent.model.mentioned import open_mentions
from acp_sidecar.agent.model.messages import (
    Message,
    SentCall,
    add_user_message,
    assistant_message,
    step_messages,
    system_message,
    tool_specs,
    user_message,
)
from acp_sidecar.agent.model.shown import redacted
from acp_sidecar.agent.model.stream import StreamAssembly
from acp_sidecar.agent.model.waiting import Sleep, told_wait
from acp_sidecar.protocol import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ImageContentBlock,
    PromptCapabilities,
    StopReason,
    TextContentBlock,
    to_wire,
)
from acp_sidecar.store.history import HistoryItem
from acp_sidecar.store.records import ToolCallRecord
from acp_sidecar.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from acp_sidecar.agent.delegation import Delegate, Delegated, Delegation
    from acp_sidecar.agent.model.endpoint import Endpoint

logger = logging.getLogger(__name__)

CLOSE_GRACE_S: Final = 2.0
"""How long closing an abandoned HTTP response may take before the turn stops waiting."""


def with_task(registry: ToolRegistry, delegate: Delegate) -> ToolRegistry:
    """``registry`` with the ``task`` tool of a turn that can delegate (a tool of that name
    already there stays)."""
    from acp_sidecar.agent.model.task import task_tool
    from acp_sidecar.agent.toolset import narrowed

    return narrowed(registry, extra=(task_tool(delegate),))


def counted(delegate: Delegate, context: TurnContext) -> Delegate:
    """``delegate``, whose children's spending counts toward the turn's session."""

    async def delegate_counted(job: Delegation) -> Delegated:
        done = await delegate(job)
        await context.account_child(done.usage)
        return done

    return delegate_counted


def _endpoint_class() -> type[Endpoint]:
    from acp_sidecar.agent.model.endpoint import Endpoint

    return Endpoint


class CallIds:
    """Hands out tool call ids unique within a session."""

    def __init__(self, history: Iterable[HistoryItem]) -> None:
        self._used = {item.call_id for item in history if isinstance(item, ToolCallRecord)}

    def claim(self, wanted: str) -> str:
        """``wanted`` if the session has not used it yet, else a fresh id."""
        call_id = wanted if wanted and wanted not in self._used else new_call_id()
        self._used.add(call_id)
        return call_id


class ModelDriver(DriverBase):
    """Answers prompts with an OpenAI-compatible model that calls the registry's tools."""

    wants_history = True
    """The server reads the session's history from its log before each turn."""
    steers = True
    """A prompt steered in joins the turn at its next step boundary (:func:`join_steered`)."""

    def __init__(self, config: ModelConfig, registry: Callable[[], ToolRegistry]) -> None:
        self.config = config
        self.prompt_capabilities = PromptCapabilities(
            embedded_context=True, image=any(profile.images for profile in config.models)
        )
        """Images are advertised when any configured model takes them; a prompt with one for
        a model that does not is answered with a notice (see :meth:`run_turn`)."""
        self._registry = registry
        self._instructions = InstructionsReader()
        self._endpoint: Endpoint | None = None
        self._reasoning_field: str | None = None
        """The delta field the endpoint streams reasoning in, once it has (to send it back)."""
        self.catalog: ModelCatalog = ModelCatalog(config, self._list_models)
        """The models offered (the server asks it to list the endpoint's, once)."""
        self.wait_sleep: Sleep = asyncio.sleep
        """The clock a wait for the model is told on (a test's own, in tests)."""

    @property
    def registry(self) -> ToolRegistry:
        """The registry, asked for each time it is used: the server's tool set builds it on the
        first call, so making the driver (while ``initialize`` is answered) stays cheap."""
        return self._registry()

    def profile(self, name: str | None = None) -> ModelProfile:
        """What is known of the model ``name`` (``None``: the configured default): what is
        configured, completed by the endpoint's ``/models`` once it has answered."""
        return self.catalog.profile(name)

    async def _list_models(self, timeout: float) -> Sequence[ListedModel]:
        """The endpoint's models (the catalog's lister; ``openai`` loads off the loop)."""
        endpoint_class = await asyncio.to_thread(_endpoint_class)
        if self._endpoint is None:
            self._endpoint = endpoint_class(self.config)
        return await self._endpoint.list_models(timeout)

    async def aclose(self) -> None:
        """Close the connections to the endpoint (the driver can still be used after)."""
        self.catalog.cancel()  # first: its failure on a closed client is no news
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is not None:
            await endpoint.aclose()

    async def run_turn(self, turn: Turn) -> StopReason:
        images = self.profile(turn.model).images
        if not images and any(isinstance(block, ImageContentBlock) for block in turn.prompt):
            await send_notice(turn, self._no_images(turn.model))
            return "end_turn"
        if turn.budget is not None and (over := turn.budget.stop()) is not None:
            await send_notice(turn, over[0])  # before any request: nothing more is spent
            return "end_turn"
        endpoint = await self._connect(turn)
        if endpoint is None:
            return "end_turn"
        registry = self.registry if turn.tools is None else turn.tools
        instructions = await asyncio.to_thread(self._instructions.read, turn.cwd)
        context = TurnContext(
            turn,
            self.config,
            self.profile(turn.model),
            system_message(turn.cwd, instructions=instructions),
            user_message((to_wire(block) for block in turn.prompt), images),
            self._reasoning_field,
            on_retry=retry_teller(turn, endpoint),
            wait_sleep=self.wait_sleep,
        )
        if turn.delegate is not None:
            registry = with_task(registry, counted(turn.delegate, context))
        tools = tool_specs(registry.schemas())
        ids = CallIds(turn.history)
        cap = self.config.max_parallel_tools
        named = {spec["function"]["name"] for spec in tools}
        context.steps.extend(await open_mentions(turn, registry, ids.claim, named))
        if turn.signal.cancelled:
            return "cancelled"
        for _ in range(self.config.max_turn_requests):
            fitted = await context.fit(endpoint, tools)
            if fitted == "cancelled":
                return "cancelled"
            if isinstance(fitted, Unanswered):
                await send_notice(turn, fitted.explained)
                return "end_turn"
            step = StepCalls(registry, turn, ids.claim, cap)
            try:
                response = await self._request(turn, endpoint, context, tools, step)
                if isinstance(response, StreamAssembly) and stop_reason(turn, response) is None:
                    response.close_calls()  # it ended whole: its last call is complete too
                results = await step.results()
            finally:
                step.abandon()  # only if this turn itself is torn down: calls are done
            stop = stop_reason(turn, response)  # also cancelled while the tools ran
            if stop == "max_tokens":
                assert isinstance(response, StreamAssembly)
                window = context.profile.context_window
                await send_notice(turn, length_stop(response, self.config.max_tokens, window))
            if stop is not None:
                return stop
            assert isinstance(response, StreamAssembly)
            budget_stop = await at_step_boundary(turn)
            if budget_stop is not None:
                return budget_stop
            if not step.calls:
                if await join_steered(turn, context, images, last=response.text):
                    continue  # steered in after its last step: the turn goes on
                return "end_turn"
            field = response.reasoning_field
            if field is not None:
                self._reasoning_field = field
            context.steps.append(
                assistant_message(
                    response.text,
                    [SentCall(c.call_id, c.name, c.sent_arguments) for c in step.calls],
                    None if field is None else (field, response.thoughts),
                )
            )
            context.steps.extend(step_messages(results))
            await join_steered(turn, context, images)
        return "max_turn_requests"

    async def _connect(self, turn: Turn) -> Endpoint | None:
        """The endpoint (made on first use); ``None`` after telling the user why not."""
        if self._endpoint is not None:
            return self._endpoint
        try:
            endpoint_class = await asyncio.to_thread(_endpoint_class)
        except ImportError as error:
            await send_notice(
                turn,
                f"The model driver needs the `openai` package, which could not be imported "
                f"({error}). Install it into acp-sidecar's environment.",
            )
            return None
        try:
            endpoint = endpoint_class(self.config)
        except Exception as error:
            logger.exception("the model client could not be made")
            await send_notice(turn, f"The model client could not be made: {error}")
            return None
        if self._endpoint is None:  # another session's first turn may have won the race
            self._endpoint = endpoint
        return self._endpoint

    async def _request(
        self,
        turn: Turn,
        endpoint: Endpoint,
        context: TurnContext,
        tools: Sequence[Mapping[str, Any]],
        step: StepCalls,
    ) -> StreamAssembly | StopReason:
        """One streamed request, raced against the turn's signal; its calls go to ``step``
        as they complete. A request refused for its length is compacted and sent again, once
        (nothing of it was shown)."""
        while True:
            # Per attempt: a compaction between two attempts charges its own time.
            started = None if turn.budget is None else turn.budget.clock()
            messages = context.messages()
            assembly = StreamAssembly(step.start)
            streaming = asyncio.ensure_future(
                stream_response(turn, endpoint, messages, tools, assembly, self.wait_sleep)
            )
            cancelled = asyncio.ensure_future(turn.signal.wait())
            try:
                await asyncio.wait((streaming, cancelled), return_when=asyncio.FIRST_COMPLETED)
            finally:
                cancelled.cancel()
                if not streaming.done():
                    streaming.cancel()  # closes the response: the server sees the client go
                    await asyncio.wait((streaming,), timeout=CLOSE_GRACE_S)
            if turn.signal.cancelled:
                return "cancelled"
            error = streaming.exception()
            if error is not None and endpoint.context_exceeded(error) and not assembly.text_parts:
                cap = endpoint.refuses_cap(error)
                retry = await context.overflowed(endpoint, tools, cap=cap)
                if retry == "cancelled":
                    return "cancelled"
                if isinstance(retry, Unanswered):
                    await send_notice(turn, retry.explained)
                    return "end_turn"
                if retry:
                    continue
            break
        if error is not None and assembly.opened and endpoint.failure_kind(error) == "unreachable":
            # It answered, then the connection broke: the answer is cut off, not unreached.
            await send_notice(turn, cut_off(assembly, self.config, error))
            return "end_turn"
        if error is not None:
            explained = endpoint.explain(error, turn.model)
            await send_notice(turn, f"\n\n{explained}" if assembly.text_parts else explained)
            return "end_turn"
        if assembly.finish_reason is None:
            await send_notice(turn, cut_off(assembly, self.config))
            return "end_turn"
        seconds = None if turn.budget is None or started is None else turn.budget.clock() - started
        await context.account(assembly.usage, len(messages), seconds)
        self.catalog.answered(turn.model)  # a router's model is loaded now: its window listed
        return assembly

    def _no_images(self, model: str | None) -> str:
        """Why a prompt with an image was not sent to ``model``, and what the user can do.

        A notice in the thread, under the prompt, rather than an error answer: the user reads
        it where they look for the answer, in every client, and can switch the model and send
        the prompt again; the log keeps the prompt (with the image) and the notice.
        """
        name = self.profile(model).name
        takers = [profile.name for profile in self.config.models if profile.images]
        choice = (
            f"Choose a model that does ({', '.join(f'`{n}`' for n in takers)}) and send it "
            "again, or send it without the image."
            if takers
            else "Send it without the image."
        )
        return f"The model `{name}` does not accept images, so this prompt was not sent. {choice}"


async def at_step_boundary(turn: Turn) -> StopReason | None:
    """After a step: the 80 % notice once, and the turn's end once the budget is reached."""
    budget = turn.budget
    if budget is None:
        return None
    warning = budget.warn()
    over = budget.stop()
    if warning is not None and over is None:
        await send_notice(turn, warning)
    if over is None:
        return None
    await send_notice(turn, over[0])
    return over[1]


async def join_steered(
    turn: Turn, context: TurnContext, images: bool, last: str | None = None
) -> bool:
    """Add the prompts steered in since the last boundary to the context as user messages;
    whether there were any. ``last``: the text of a response that would end the turn, which
    then goes into the context before them (with none, no prompt joins the turn after)."""
    if turn.steered is None:
        return False
    taken = await turn.steered(last is not None)
    if not taken:
        return False
    if last is not None:
        context.steps.append(assistant_message(last))
    for blocks in taken:
        add_user_message(context.steps, user_message((to_wire(b) for b in blocks), images))
    return True


def stop_reason(turn: Turn, response: StreamAssembly | StopReason) -> StopReason | None:
    """Why the turn ends after a request (and the calls it started); ``None``: it goes on."""
    if turn.signal.cancelled:
        return "cancelled"
    if isinstance(response, str):
        return response
    if response.finish_reason == "length":
        return "max_tokens"
    if response.refused or response.finish_reason == "content_filter":
        return "refusal"
    return None


async def stream_response(
    turn: Turn,
    endpoint: Endpoint,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]],
    assembly: StreamAssembly,
    sleep: Sleep = asyncio.sleep,
) -> None:
    """Stream one response into ``assembly``, sending its text and reasoning as they come;
    until its first chunk, the user is told the wait (on ``sleep``'s clock)."""
    send = turn.send
    feed = assembly.feed
    async with (
        told_wait(turn.waiting, sleep) as wait,
        endpoint.stream(
            messages,
            tools,
            model=turn.model,
            reasoning_effort=turn.reasoning_effort,
            on_retry=retry_teller(turn, endpoint),
        ) as chunks,
    ):
        assembly.opened = True
        async for chunk in chunks:
            if wait.waiting:
                wait.stop()
            thought, text = feed(chunk)
            if thought:
                await send(AgentThoughtChunk(content=TextContentBlock(text=thought)))
            if text:
                await send(AgentMessageChunk(content=TextContentBlock(text=text)))


def retry_teller(turn: Turn, endpoint: Endpoint) -> Callable[[int, str], None] | None:
    """What tells the turn's user that the model request is being retried, and what the
    attempt before ran into (``None``: the turn has nobody to tell)."""
    inform = turn.inform
    if inform is None:
        return None
    retries = endpoint.config.max_retries

    def tell(attempt: int, what: str) -> None:
        told = (
            f"The model request failed; retrying ({attempt} of {retries}).\n\n"
            f"The model endpoint {endpoint.config.shown_url} {what}; the request is sent "
            "again."
        )
        inform(redacted(told, endpoint.config))  # ``what`` may quote the server

    return tell
