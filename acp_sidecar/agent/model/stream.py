"""One streamed model response, assembled from its chunks (read by attribute: no ``openai``).

Invariants: tool calls are assembled by ``index``; each named call is handed to ``on_call``
exactly once, when complete, in index order. Only the first choice counts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import attrs

from acp_sidecar.agent.model.usage import Usage, usage_of

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk
    from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall

REASONING_FIELDS: Final = ("reasoning_content", "reasoning", "thinking")
"""Delta fields that carry reasoning: DeepSeek (and vLLM, LM Studio…) send
``reasoning_content``; OpenRouter, Ollama, Groq and newer vLLM send ``reasoning``."""

NOTHING: Final = ("", "")

logger = logging.getLogger(__name__)


@attrs.define
class CallDraft:
    """A tool call while its fragments arrive."""

    index: int
    call_id: str = ""
    name: str = ""
    parts: list[str] = attrs.field(factory=list)
    complete: bool = False
    """No more fragments will join it (it has been handed to ``on_call``, if named)."""

    @property
    def arguments(self) -> str:
        """The arguments' text as streamed so far."""
        return "".join(self.parts)


class StreamAssembly:
    """Everything one streamed response said, assembled as its chunks are fed in."""

    def __init__(self, on_call: Callable[[CallDraft], None] | None = None) -> None:
        self.on_call = on_call
        """Hears each named tool call as soon as it is complete (see the invariants)."""
        self.text_parts: list[str] = []
        """The answer's text (refusal text included)."""
        self.thought_parts: list[str] = []
        """The reasoning's text."""
        self.reasoning_field: str | None = None
        """The delta field the reasoning came in (the first one seen)."""
        self.refused = False
        """The model sent a ``refusal``."""
        self.finish_reason: str | None = None
        """The last finish reason of the stream (``None`` if it sent none: the answer is
        incomplete, whatever else the stream said)."""
        self.usage: Usage | None = None
        """The response's usage, if the endpoint reported it."""
        self.opened = False
        """The endpoint answered: the stream began (whatever became of it)."""
        self._calls: dict[int, CallDraft] = {}
        self._last: CallDraft | None = None

    @property
    def text(self) -> str:
        """The answer's text."""
        return "".join(self.text_parts)

    @property
    def thoughts(self) -> str:
        """The reasoning's text."""
        return "".join(self.thought_parts)

    def calls(self) -> list[CallDraft]:
        """The streamed tool calls in index order (fragments without a name dropped)."""
        return [self._calls[index] for index in sorted(self._calls) if self._calls[index].name]

    def cut_calls(self) -> list[CallDraft]:
        """The named calls still open: never handed to ``on_call`` (they may be cut off)."""
        return [draft for draft in self.calls() if not draft.complete]

    def close_calls(self) -> None:
        """The stream ended whole: complete the calls still open (``on_call`` hears them)."""
        self._complete_below(None)

    def feed(self, chunk: ChatCompletionChunk) -> tuple[str, str]:
        """Take one chunk; return the ``(thought, text)`` it adds (``""`` for none)."""
        if chunk.usage is not None:
            self.usage = usage_of(chunk.usage) or self.usage
        choices = chunk.choices
        if not choices:
            return NOTHING  # e.g. a usage-only chunk
        choice = choices[0]
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason
        delta: ChoiceDelta | None = choice.delta  # None when a server leaves it out
        if delta is None:
            return NOTHING
        thought = self._reasoning(delta) if delta.model_extra else ""
        text = delta.content or ""
        if delta.refusal:
            self.refused = True
            text += delta.refusal
        if text:
            self.text_parts.append(text)
        if delta.tool_calls:
            for fragment in delta.tool_calls:
                self._add_fragment(fragment)
        return thought, text

    def _reasoning(self, delta: ChoiceDelta) -> str:
        extra = delta.model_extra or {}
        for field in REASONING_FIELDS:
            value = extra.get(field)
            if isinstance(value, str) and value:
                if self.reasoning_field is None:
                    self.reasoning_field = field
                self.thought_parts.append(value)
                return value
        return ""

    def _add_fragment(self, fragment: ChoiceDeltaToolCall) -> None:
        index: int | None = fragment.index  # None when a server leaves it out
        draft = self._calls.get(index) if index is not None else self._unindexed(fragment)
        if draft is None:
            draft = CallDraft(
                index=index if index is not None else max(self._calls, default=-1) + 1
            )
            self._complete_below(draft.index)
            self._calls[draft.index] = draft
        elif draft.complete:
            logger.warning(
                "a fragment for tool call %d arrived after a later call opened; it is dropped",
                draft.index,
            )
            return
        self._last = draft
        if fragment.id and not draft.call_id:
            draft.call_id = fragment.id
        function = fragment.function
        if function is None:
            return
        if function.name and function.name != draft.name:
            draft.name += function.name
        if function.arguments:
            draft.parts.append(function.arguments)

    def _complete_below(self, index: int | None) -> None:
        """Complete the open calls before ``index`` (all of them for ``None``)."""
        for at in sorted(self._calls):
            if index is not None and at >= index:
                break
            draft = self._calls[at]
            if draft.complete:
                continue
            draft.complete = True
            if draft.name and self.on_call is not None:
                self.on_call(draft)

    def _unindexed(self, fragment: ChoiceDeltaToolCall) -> CallDraft | None:
        last = self._last
        if last is None or (fragment.id and last.call_id and fragment.id != last.call_id):
            return None
        return last
