"""The probe's one chat request (a tool, two messages), and the checks its streamed answer earns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from acp_sidecar.agent.model.calls import parse_arguments
from acp_sidecar.agent.model.report import MODEL_ANSWERS, REASONING, STREAMING, TOOL_CALLS
from acp_sidecar.agent.model.stream import StreamAssembly
from acp_sidecar.checks import Check
from acp_sidecar.text import shorten
from acp_sidecar.tools.errors import ToolArgsError

PROBE_MAX_TOKENS: Final = 512
"""The probe's cap on the answer: a call to ``get_time`` takes some 20 tokens, and a
reasoning model thinks a few hundred before it (its reasoning counts against the cap)."""
QUOTED_CHARS: Final = 120
"""How much of the model's text or arguments a detail quotes."""


TOOL_NAME: Final = "get_time"
TOOL: Final[Mapping[str, Any]] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Get the current time in a time zone.",
        "parameters": {
            "type": "object",
            "properties": {
                "timezone": {"type": "string", "description": "An IANA time zone, e.g. UTC."}
            },
            "required": ["timezone"],
        },
    },
}
"""The one trivial tool the chat request offers (with one required argument, so that the
arguments' streaming is checked too)."""
MESSAGES: Final[Sequence[Mapping[str, str]]] = (
    {
        "role": "system",
        "content": "You check that tool calls work. Answer by calling the get_time tool.",
    },
    {"role": "user", "content": "What time is it in UTC? Call get_time."},
)

TOOL_FIX: Final = (
    "acp-sidecar offers tools without tool_choice, as agents do. Some servers ignore tools "
    "unless tool_choice is set: such an endpoint cannot drive the tools. llama.cpp's server "
    "needs --jinja; Ollama needs a model with tool support (ollama.com/search?c=tools); vLLM "
    "needs --enable-auto-tool-choice and the --tool-call-parser of the model's family. "
    "Else choose another model."
)


@attrs.define
class Answer:
    """The chat request's stream, read to its end."""

    assembly: StreamAssembly
    chunks: int
    """Chunks that carried a choice."""
    first_chunk_s: float | None
    done_s: float
    began_s: float


def answer_checks(answer: Answer, model: str) -> tuple[Check, Check]:
    """Whether ``model`` answered, and whether it streamed (both ``failed`` if no chunk came)."""
    if answer.chunks == 0:
        return (
            Check(
                MODEL_ANSWERS,
                "failed",
                f"{model!r} answered, but not as a stream: no chunk came.",
                "The endpoint must stream chat completions (stream: true, server-sent events).",
            ),
            Check(STREAMING, "failed", "No chunk came."),
        )
    first = answer.first_chunk_s or 0.0
    timing = f"first chunk after {first:.1f} s, done after {answer.done_s:.1f} s"
    if answer.assembly.finish_reason is None:
        answered = Check(
            MODEL_ANSWERS,
            "warning",
            f"{model!r} answered ({timing}), but the stream ended without a finish reason: "
            "it may have been cut off.",
        )
    else:
        answered = Check(MODEL_ANSWERS, "ok", f"{model!r} answered ({timing}).")
    if answer.chunks == 1:
        streamed = Check(
            STREAMING,
            "warning",
            "The whole answer came in one chunk: answers will show only when complete.",
        )
    else:
        streamed = Check(STREAMING, "ok", f"The answer came in {answer.chunks} chunks.")
    return answered, streamed


def tool_call_check(assembly: StreamAssembly) -> Check:
    """What the answer shows of the model's tool calling."""
    calls = assembly.calls()
    if calls:
        call = calls[0]
        quoted = shorten(call.arguments, QUOTED_CHARS)
        try:
            arguments = parse_arguments(call.arguments)
        except ToolArgsError:
            return Check(
                TOOL_CALLS,
                "failed",
                f"The model called {call.name}, but its arguments are not JSON: {quoted}",
                TOOL_FIX,
            )
        if not isinstance(arguments, dict):
            return Check(
                TOOL_CALLS,
                "failed",
                f"The model called {call.name} with arguments that are not an object: {quoted}",
                TOOL_FIX,
            )
        if call.name != TOOL_NAME:
            return Check(
                TOOL_CALLS,
                "warning",
                f"The model called {call.name!r}, a tool it was not offered (it was offered "
                f"{TOOL_NAME}).",
                "The model may not follow tool definitions well: consider another model.",
            )
        return Check(TOOL_CALLS, "ok", f"The model called {call.name} with {quoted}.")
    text = assembly.text
    if assembly.finish_reason == "length":
        return Check(
            TOOL_CALLS,
            "warning",
            f"The answer reached the probe's cap of {PROBE_MAX_TOKENS} tokens before any "
            "tool call (a reasoning model may think that long).",
            "Run the check again; if it stays so, the model thinks long before it acts.",
        )
    if TOOL_NAME in text or "<tool_call>" in text:
        return Check(
            TOOL_CALLS,
            "failed",
            "The model wrote the call as text, and the server did not parse it into a "
            f"tool call: {shorten(text, QUOTED_CHARS)}",
            TOOL_FIX,
        )
    said = f": {shorten(text, QUOTED_CHARS)}" if text.strip() else " (an empty answer)."
    return Check(
        TOOL_CALLS,
        "failed",
        f"The model answered in text instead of calling the tool{said}",
        TOOL_FIX,
    )


def reasoning_check(assembly: StreamAssembly) -> Check:
    """What the answer shows of the model's reasoning (``skipped`` when it streamed none)."""
    if assembly.thoughts:
        return Check(
            REASONING,
            "ok",
            f"{len(assembly.thoughts)} characters of reasoning streamed in "
            f"{assembly.reasoning_field}.",
        )
    if "<think>" in assembly.text:
        return Check(
            REASONING,
            "warning",
            "The reasoning came inside the answer's text (<think> tags): the editor shows "
            "it as the answer.",
            "Have the server split it out: llama.cpp --reasoning-format deepseek, vLLM "
            "--reasoning-parser.",
        )
    return Check(
        REASONING,
        "skipped",
        "No reasoning was streamed (the model does not reason aloud, or the server "
        "does not send it).",
    )
