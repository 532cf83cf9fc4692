"""What the model is sent: system prompt, history and prompt as chat messages; schemas as tools.

Invariants:
- Pure: the same history always gives the same messages (a reloaded session continues).
- The chat-completions shape every provider checks: ``content`` a string, each ``tool_calls``
  entry answered by one tool message in call order, ``arguments`` valid JSON, roles alternate.
- The sidecar's own notices are never in the history.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, TypeAlias, assert_never

import attrs

from acp_sidecar.agent.mentions import join_words
from acp_sidecar.agent.model.instructions import ProjectInstructions
from acp_sidecar.store.history import HistoryItem
from acp_sidecar.store.records import (
    AgentMessageRecord,
    AgentThoughtRecord,
    CompactionRecord,
    ToolCallRecord,
    ToolResultRecord,
    UsageRecord,
    UserMessageRecord,
)
from acp_sidecar.tools.content import (
    AudioContent,
    EmbeddedResourceContent,
    ImageContent,
    ResourceLinkContent,
    TextContent,
    content_to_json,
)
from acp_sidecar.tools.json_values import FrozenJson, thaw
from acp_sidecar.tools.result import ToolExecutionResult

Message: TypeAlias = dict[str, Any]
"""One chat-completions message as it is sent (``{"role": …, "content": …}``)."""

EMPTY_ARGUMENTS: Final = "{}"


def system_message(
    cwd: str, system: str | None = None, instructions: ProjectInstructions | None = None
) -> Message:
    """The system prompt: the workspace, the platform, how to use the tools, and the
    workspace's own instructions (its ``AGENTS.md`` or kin) when it has them."""
    name = system if system is not None else platform.system() or "unknown"
    message = {
        "role": "system",
        "content": (
            "You are a coding agent working inside the user's editor.\n"
            f"The workspace is {cwd}; relative paths resolve against it. "
            f"The platform is {name}.\n"
            "Use the tools to look at the workspace, change files and run commands, rather "
            "than guessing or asking the user to do it. The user sees every tool call and may "
            "be asked to approve it. Make independent calls in one response so they run "
            "together. When a call fails, read its error and correct the call. When the task "
            "is done, answer briefly."
        ),
    }
    if instructions is not None:
        message["content"] += (
            f"\n\nThe project's instructions, from {instructions.name} in the workspace. "
            "Follow them unless the user says otherwise:\n"
            f'<instructions file="{instructions.name}">\n{instructions.text.rstrip()}\n'
            "</instructions>"
        )
    return message


def tool_specs(schemas: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``tools`` for the request from ``ToolRegistry.schemas()``."""
    return [
        {
            "type": "function",
            "function": {
                "name": schema["name"],
                "description": schema["description"],
                "parameters": schema["parameters"],
            },
        }
        for schema in schemas
    ]


# -- prompts ------------------------------------------------------------------------------


def prompt_text(blocks: Iterable[Mapping[str, Any]]) -> str:
    """The text of a prompt given as ACP content-block JSON objects, joined as words."""
    return join_words(_block_text(block) for block in blocks)


def _block_text(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource_link":
        label = block.get("title") or block.get("name") or block.get("uri", "")
        return f"[@{label}]({block.get('uri', '')})"
    if kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, Mapping):
            return ""
        uri = resource.get("uri", "")
        text = resource.get("text")
        if isinstance(text, str):
            body = text if text.endswith("\n") or not text else text + "\n"
            return f'\n<context uri="{uri}">\n{body}</context>\n'
        mime = resource.get("mimeType") or "binary"
        return f"\n[{uri}: {mime} content, not included]\n"
    if kind == "image":
        return f"[{block.get('mimeType') or 'an'} image, not sent: the model does not take images]"
    if kind == "audio":
        return "[audio not included]"
    return ""


def user_message(blocks: Iterable[Mapping[str, Any]], images: bool = False) -> Message:
    """A prompt (ACP content-block JSON objects) as a user message.

    With ``images`` (the model takes image input) a prompt that holds an image is sent as
    content parts: its text as ``text`` parts and each image as an ``image_url`` part (a
    ``data:`` URL of the block's bytes, or its ``uri`` when it has no bytes and the URI is
    http(s)). Any other prompt — and every prompt for a model without image input, where an
    image becomes a short note — is one string, which every server accepts.
    """
    listed = list(blocks)
    if not images or not any(block.get("type") == "image" for block in listed):
        return {"role": "user", "content": prompt_text(listed)}
    parts: list[dict[str, Any]] = []
    for block in listed:
        if block.get("type") == "image":
            url = _image_url(block)
            if url is not None:
                parts.append({"type": "image_url", "image_url": {"url": url}})
                continue
            text = f"[{block.get('mimeType') or 'an'} image, not sent: no data or web address]"
        else:
            text = _block_text(block)
        if not text:
            continue
        if parts and parts[-1]["type"] == "text":
            parts[-1] = {"type": "text", "text": join_words([parts[-1]["text"], text])}
        else:
            parts.append({"type": "text", "text": text})
    return {"role": "user", "content": parts}


def _image_url(block: Mapping[str, Any]) -> str | None:
    """Where the endpoint finds an image block's picture (``None``: nowhere it can reach)."""
    data, mime, uri = block.get("data"), block.get("mimeType"), block.get("uri")
    if isinstance(data, str) and data and isinstance(mime, str) and mime:
        return f"data:{mime};base64,{data}"
    if isinstance(uri, str) and uri.startswith(("http://", "https://")):
        return uri
    return None


def _parts(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def add_user_message(messages: list[Message], message: Message) -> None:
    """Append a user message; one that would follow another user message joins it instead.

    A turn that got no answer (cancelled, or its request failed, before the model said
    anything) leaves its prompt unanswered in the log, and chat templates that require
    alternating roles refuse two user messages in a row: the session would fail on every
    later prompt. Joined, the model still reads both prompts, in order (as one string, or as
    content parts when either holds an image).
    """
    last = messages[-1] if messages else None
    if last is None or last["role"] != "user":
        messages.append(message)
    elif isinstance(last["content"], str) and isinstance(message["content"], str):
        messages[-1] = {**last, "content": f"{last['content']}\n\n{message['content']}"}
    else:
        joined = [*_parts(last["content"]), {"type": "text", "text": "\n\n"}]
        messages[-1] = {**last, "content": joined + _parts(message["content"])}


# -- assistant turns ----------------------------------------------------------------------


@attrs.frozen
class SentCall:
    """A tool call as the model is told it made it."""

    call_id: str
    name: str
    arguments: str
    """The arguments' JSON text."""


def arguments_text(arguments: FrozenJson) -> str:
    """A recorded call's arguments as JSON text (``{}`` when the log kept none)."""
    if arguments is None:
        return EMPTY_ARGUMENTS
    return json.dumps(thaw(arguments), ensure_ascii=False)


def assistant_message(
    text: str,
    calls: Sequence[SentCall] = (),
    reasoning: tuple[str, str] | None = None,
) -> Message:
    """An assistant message; ``reasoning`` is ``(field, text)`` echoed back with tool calls.

    ``content`` is always a string, ``""`` when the model only called tools: ``null`` is valid
    for OpenAI, but a chat template that reads it as text fails (a popular local server
    answers HTTP 500), and the message is rebuilt from the log on every later request.
    """
    message: Message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
        ]
        if reasoning is not None and reasoning[1]:
            message[reasoning[0]] = reasoning[1]
    return message


def result_text(result: ToolExecutionResult) -> str:
    """What the model reads of a result: its content, marked as an error when it failed."""
    parts: list[str] = []
    for block in result.content:
        match block:
            case TextContent(text=text):
                parts.append(text)
            case ImageContent(mime_type=mime_type):
                parts.append(f"[{mime_type} image not shown]")
            case AudioContent(mime_type=mime_type):
                parts.append(f"[{mime_type} audio not shown]")
            case ResourceLinkContent() | EmbeddedResourceContent():
                # As in a prompt: a link, or a text resource inside a <context> element.
                parts.append(_block_text(content_to_json(block)))
            case _:
                assert_never(block)
    text = "".join(parts) or "(no output)"
    if not result.is_error:
        return text
    code = result.error.code if result.error is not None else "ERROR"
    return f"Error ({code}): {text}"


def tool_message(result: ToolExecutionResult) -> Message:
    """A result as the ``role: tool`` message that answers its call."""
    return {"role": "tool", "tool_call_id": result.call_id, "content": result_text(result)}


def context_message(results: Iterable[ToolExecutionResult]) -> Message | None:
    """The results' additional context as one user message (``None`` when there is none)."""
    parts = [
        context if isinstance(context, str) else json.dumps(thaw(context), ensure_ascii=False)
        for context in (result.additional_context for result in results)
        if context is not None
    ]
    if not parts:
        return None
    return {"role": "user", "content": "\n\n".join(parts)}


def step_messages(results: Sequence[ToolExecutionResult]) -> list[Message]:
    """The messages that follow a step's tool calls: one per result, then any context."""
    messages = [tool_message(result) for result in results]
    context = context_message(results)
    if context is not None:
        messages.append(context)
    return messages


# -- history ------------------------------------------------------------------------------


class _Conversation:
    """Builds messages from history items, keeping the invariants of the module."""

    def __init__(self, reasoning_field: str | None, images: bool) -> None:
        self.messages: list[Message] = []
        self._reasoning_field = reasoning_field
        self._images = images
        self._assistant: Message | None = None
        """The last assistant message, while text or calls may still join it."""
        self._calls: list[SentCall] = []
        self._open: set[str] = set()
        self._results: list[ToolExecutionResult] = []
        self._held_text: list[str] = []
        self._thoughts: list[str] = []

    def user(self, record: UserMessageRecord) -> None:
        self._close_step()
        self._assistant = None
        self._thoughts.clear()
        add_user_message(self.messages, user_message(record.content, self._images))

    def thought(self, text: str) -> None:
        self._thoughts.append(text)

    def text(self, text: str) -> None:
        if self._open:
            self._held_text.append(text)
            return
        self._close_step()
        if self._assistant is None or self._calls:
            self._start_assistant()
        assert self._assistant is not None
        self._assistant["content"] += text

    def call(self, record: ToolCallRecord) -> None:
        if not self._open:
            self._close_step()
            if self._assistant is None or self._calls:
                self._start_assistant()
        assert self._assistant is not None
        self._calls.append(SentCall(record.call_id, record.name, arguments_text(record.arguments)))
        self._open.add(record.call_id)
        reasoning = None
        if self._reasoning_field is not None and self._thoughts:
            reasoning = (self._reasoning_field, "".join(self._thoughts))
        rebuilt = assistant_message(self._assistant["content"], self._calls, reasoning)
        self._assistant.clear()
        self._assistant.update(rebuilt)

    def result(self, record: ToolResultRecord) -> None:
        self._open.discard(record.call_id)
        self._results.append(record.result)
        if not self._open:
            self._close_step()

    def finish(self) -> list[Message]:
        self._close_step()
        return self.messages

    def _start_assistant(self) -> None:
        self._assistant = {"role": "assistant", "content": ""}
        self._calls = []
        self.messages.append(self._assistant)

    def _close_step(self) -> None:
        """After a step's last result: the results in call order (parallel calls finish in
        any order), their context, then any text the log holds from meanwhile."""
        if self._open:
            return
        if self._results:
            order = {call.call_id: index for index, call in enumerate(self._calls)}
            results = sorted(self._results, key=lambda result: order.get(result.call_id, 0))
            self.messages.extend(step_messages(results))
            self._results = []
            self._thoughts.clear()
        if self._held_text:
            held, self._held_text = "".join(self._held_text), []
            self._start_assistant()
            assert self._assistant is not None
            self._assistant["content"] = held


HistoryInput: TypeAlias = HistoryItem | AgentThoughtRecord
"""What :func:`history_messages` reads: history items, and thoughts when the log gives them."""


def history_messages(
    history: Iterable[HistoryInput], reasoning_field: str | None = None, images: bool = False
) -> list[Message]:
    """The session's earlier conversation as chat messages.

    With ``reasoning_field`` (the delta field the endpoint streams its reasoning in, e.g.
    ``reasoning_content``), the thoughts before a step's tool calls are sent back on its
    assistant message under that name — DeepSeek's thinking mode requires it. Without one,
    thoughts are left out. ``images``: the model takes images (see :func:`user_message`).
    """
    conversation = _Conversation(reasoning_field, images)
    for item in history:
        match item:
            case UserMessageRecord():
                conversation.user(item)
            case AgentMessageRecord(text=text):
                conversation.text(text)
            case AgentThoughtRecord(text=text):
                conversation.thought(text)
            case ToolCallRecord():
                conversation.call(item)
            case ToolResultRecord():
                conversation.result(item)
            case UsageRecord() | CompactionRecord():
                pass  # bookkeeping: the driver reads them (compaction, cost), the model not
            case _:
                assert_never(item)
    return conversation.finish()
