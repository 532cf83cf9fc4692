"""Keeping a request inside the context window: the estimate, which turns a summary replaces.

Pure. The estimate reads no tokenizer and errs high (:data:`BYTES_PER_TOKEN`). The past is cut
only between turns, so a tool call is never separated from its result.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from acp_sidecar.agent.model.messages import (
    Message,
    add_user_message,
    history_messages,
)
from acp_sidecar.store.history import HistoryItem
from acp_sidecar.store.records import CompactionRecord, UserMessageRecord

BYTES_PER_TOKEN: Final = 3
"""UTF-8 bytes of request JSON counted as one token (see the invariants)."""
MESSAGE_OVERHEAD: Final = 4
"""Tokens a chat template adds around each message (role markers, separators)."""
MARGIN_FRACTION: Final = 0.05
"""Of the window, kept free for the estimate's error."""
KEEP_FRACTION: Final = 0.5
"""Of the room left for history, what the recent turns kept whole after a compaction may
fill: the rest is headroom, so the next prompts do not compact again at once."""
SUMMARY_TOKENS: Final = 2048
"""The most tokens a summary may have (fewer in a small window)."""
MIN_SUMMARY_TOKENS: Final = 64
"""The fewest: where the request has less room than this for history, none is asked for."""
ENTRY_CHARS: Final = 2000
"""The most characters of one message a summary request quotes (tool output runs long)."""

SUMMARY_INSTRUCTIONS: Final = (
    "You compress the earlier part of a coding session between a user and an AI coding agent "
    "into a summary that replaces it in the agent's context. Keep what the agent needs to "
    "continue: the user's goals and requests, decisions and their reasons, facts learned "
    "about the workspace (file paths, commands, errors and their fixes), what was done and "
    "what remains to do. Leave out pleasantries and raw tool output. Write plain, concise "
    "text; no preamble."
)


def estimate_tokens(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] = ()) -> int:
    """The estimated tokens of ``messages`` (and ``tools``) sent in one request."""
    size = len(json.dumps([messages, tools], ensure_ascii=False).encode("utf-8"))
    return -(-size // BYTES_PER_TOKEN) + MESSAGE_OVERHEAD * len(messages)


@attrs.frozen
class Known:
    """An earlier request of the turn whose tokens the endpoint reported."""

    messages: int
    """How many messages it sent."""
    tokens: int
    """Its prompt tokens plus its response's completion tokens (the response is the message
    appended after those it sent)."""


def estimate_request(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Any], known: Known | None
) -> int:
    """The estimated tokens of a request: the reported count for what an earlier request
    sent (and its response) and the byte estimate for what was added since; the byte
    estimate of everything without one."""
    if known is None or known.messages >= len(messages):
        return estimate_tokens(messages, tools)
    added = messages[known.messages + 1 :]
    return known.tokens + (estimate_tokens(added) if added else 0)


def answer_reserve(window: int, max_tokens: int | None) -> int:
    """How many tokens of ``window`` are kept for the response: the cap (a quarter of the
    window without one), at most half of it."""
    reserve = max_tokens if max_tokens is not None else window // 4
    return min(reserve, window // 2)


def request_budget(window: int, max_tokens: int | None) -> int:
    """How many tokens a request may have in ``window``: the rest is for the response
    (:func:`answer_reserve`) and the margin."""
    return window - answer_reserve(window, max_tokens) - int(window * MARGIN_FRACTION)


def summary_tokens(room: int) -> int:
    """The cap on a summary's tokens when the history has ``room`` tokens."""
    return max(MIN_SUMMARY_TOKENS, min(SUMMARY_TOKENS, room // 4))


# -- the past, in turns -------------------------------------------------------------------


@attrs.frozen
class Past:
    """The session's history before this prompt, as the model is sent it."""

    summary: str | None
    """The summary standing for the first :attr:`covered` turns (``None``: none)."""
    covered: int
    """How many turns, from the session's first, the summary covers (or were dropped)."""
    turns: tuple[tuple[HistoryItem, ...], ...]
    """The turns after those, each a prompt and what answered it, oldest first."""

    def messages(self, reasoning_field: str | None, images: bool = False) -> list[Message]:
        """The history as chat messages: the summary first (as context), then the turns
        (``images``: the model takes the prompts' images as image parts)."""
        messages: list[Message] = []
        if self.summary is not None:
            messages.append(summary_message(self.summary))
        for message in history_messages(
            (item for turn in self.turns for item in turn), reasoning_field, images
        ):
            if message["role"] == "user":
                add_user_message(messages, message)
            else:
                messages.append(message)
        return messages

    def after(self, count: int, summary: str | None) -> Past:
        """The past with its first ``count`` turns replaced by ``summary``."""
        return Past(summary, self.covered + count, self.turns[count:])


def split_turns(history: Iterable[HistoryItem]) -> list[tuple[HistoryItem, ...]]:
    """``history`` cut before each prompt (anything before the first prompt is a turn too)."""
    turns: list[list[HistoryItem]] = []
    for item in history:
        if isinstance(item, UserMessageRecord) or not turns:
            turns.append([])
        turns[-1].append(item)
    return [tuple(turn) for turn in turns]


def past_of(history: Sequence[HistoryItem]) -> Past:
    """The past a session's history gives: its latest summary and the turns after it."""
    turns = split_turns(history)
    latest: CompactionRecord | None = None
    for item in history:
        if isinstance(item, CompactionRecord):
            latest = item
    if latest is None:
        return Past(None, 0, tuple(turns))
    covered = min(latest.turns, len(turns))
    return Past(latest.summary, covered, tuple(turns[covered:]))


def summary_message(summary: str) -> Message:
    """The summary as the context the first user message carries."""
    return {
        "role": "user",
        "content": (
            "<conversation-summary>\nThe earlier part of this conversation was compacted "
            f"into this summary:\n{summary.strip()}\n</conversation-summary>"
        ),
    }


def turn_tokens(turn: Sequence[HistoryItem], reasoning_field: str | None) -> int:
    """The estimated tokens of one past turn's messages."""
    return estimate_tokens(history_messages(turn, reasoning_field))


def turns_to_keep(past: Past, room: int, reasoning_field: str | None) -> int:
    """How many of the newest turns stay whole when the past must fit in ``room`` tokens:
    as many as fit in :data:`KEEP_FRACTION` of it."""
    allowed = int(room * KEEP_FRACTION)
    kept = 0
    used = 0
    for turn in reversed(past.turns):
        used += turn_tokens(turn, reasoning_field)
        if used > allowed:
            break
        kept += 1
    return kept


# -- the summary request ------------------------------------------------------------------


def _quote(text: str) -> str:
    text = text.strip()
    if len(text) <= ENTRY_CHARS:
        return text
    return text[:ENTRY_CHARS] + f" … [{len(text) - ENTRY_CHARS} more characters]"


def transcript(turns: Iterable[Sequence[HistoryItem]]) -> str:
    """Past turns as plain text for a summary request (long entries cut short)."""
    lines: list[str] = []
    for message in history_messages(item for turn in turns for item in turn):
        role = message["role"]
        content = str(message.get("content") or "")
        if role == "user":
            lines.append(f"User: {_quote(content)}")
        elif role == "assistant":
            if content:
                lines.append(f"Agent: {_quote(content)}")
            for call in message.get("tool_calls") or ():
                function = call["function"]
                lines.append(f"Agent called {function['name']}({_quote(function['arguments'])})")
        elif role == "tool":
            lines.append(f"Result: {_quote(content)}")
    return "\n\n".join(lines)


def summary_request(previous: str | None, turns: Sequence[Sequence[HistoryItem]]) -> list[Message]:
    """The messages asking the model to summarise ``turns`` (after ``previous``, a summary
    of what came before them): no tools, one user message."""
    parts = []
    if previous is not None:
        parts.append(f"<earlier-summary>\n{previous.strip()}\n</earlier-summary>")
    parts.append(f"<conversation>\n{transcript(turns)}\n</conversation>")
    parts.append(
        "Write the summary of everything above"
        + (" (the earlier summary included)" if previous is not None else "")
        + "."
    )
    return [
        {"role": "system", "content": SUMMARY_INSTRUCTIONS},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def summary_batches(
    previous: str | None, turns: Sequence[Sequence[HistoryItem]], budget: int
) -> list[int]:
    """How many turns each summary request takes, oldest first, so each request (with the
    summary so far, of at most :func:`summary_tokens` tokens) fits ``budget``; a turn too
    long for a request alone goes in one by itself (its entries are cut short anyway)."""
    base = estimate_tokens(summary_request(None, []))
    batches: list[int] = []
    size = 0
    used = base + (SUMMARY_TOKENS if previous is not None else 0)
    for turn in turns:
        cost = estimate_tokens(summary_request(None, [turn])) - base
        if size and used + cost > budget:
            batches.append(size)
            size, used = 0, base + SUMMARY_TOKENS
        size += 1
        used += cost
    if size:
        batches.append(size)
    return batches
