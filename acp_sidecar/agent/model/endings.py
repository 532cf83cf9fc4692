"""What the user is told about an answer that did not end whole: stopped for its length, or cut
off mid-stream.

A ``length`` stop names the cause the usage shows (the cap, the window), neither guessed
without usage. A cut-off stream says so (never "unreachable": it answered) and names the call
it was still sending, which was never run.
"""

from __future__ import annotations

import logging

from acp_sidecar.agent.model.compaction import MARGIN_FRACTION
from acp_sidecar.agent.model.config import MAX_TOKENS_ENV, ModelConfig
from acp_sidecar.agent.model.shown import redacted
from acp_sidecar.agent.model.stream import StreamAssembly

logger = logging.getLogger(__name__)


def _after(assembly: StreamAssembly, text: str) -> str:
    return f"\n\n{text}" if assembly.text_parts else text


def length_stop(assembly: StreamAssembly, cap: int | None, window: int | None) -> str:
    """What the user is told about an answer that stopped for ``length`` (``cap``: the cap
    the request carried; ``window``: the model's, when known)."""
    usage = assembly.usage
    if usage is None:
        if cap is None:
            text = "The model's answer reached the endpoint's limit on its length."
        else:
            text = (
                f"The model's answer was cut off at a limit on its length: {_cap(cap)} or the "
                "model's context window (the endpoint did not report its usage)."
            )
        return _after(assembly, text)
    used, prompt, completion = usage.used, usage.prompt_tokens, usage.completion_tokens
    split = f"{prompt:,} for the request, {completion:,} for the answer"
    if window is not None and used >= window * (1 - MARGIN_FRACTION):
        text = (
            "The model's answer was cut off: the model's context window was full "
            f"({used:,} of its {window:,} tokens: {split})."
        )
    elif cap is not None and completion >= cap:
        text = f"The model's answer reached {_cap(cap)}."
    else:
        short = f", short of the {cap:,}-token limit for one response" if cap is not None else ""
        text = (
            f"The model's answer was cut off after {completion:,} tokens{short}: the server "
            "stopped it, at its own limit on an answer or because the model's context window "
            f"was full ({used:,} tokens: {split})."
        )
    return _after(assembly, text)


def _cap(cap: int) -> str:
    return f"the {cap:,}-token limit for one response (--max-tokens or {MAX_TOKENS_ENV})"


def cut_off(
    assembly: StreamAssembly, config: ModelConfig, broke: BaseException | None = None
) -> str:
    """What the user is told about an answer whose stream ended (or, ``broke``, whose
    connection broke) before the server finished it; the warning is logged here."""
    url = config.shown_url
    shown = len(assembly.text)
    if broke is None:
        logger.warning(
            "the model endpoint %s ended the stream after %d characters of the answer without "
            "finishing it",
            url,
            shown,
        )
        text = (
            f"The model's answer was cut off: the endpoint {url} ended the stream without "
            "finishing it."
        )
    else:
        reason = redacted(str(broke.__cause__ or broke) or type(broke).__name__, config)
        logger.warning(
            "the model endpoint %s broke the stream after %d characters of the answer: %s",
            url,
            shown,
            reason,
        )
        text = (
            f"The model's answer was cut off: the connection to the endpoint {url} broke while "
            f"it was answering ({reason})."
        )
    cut = assembly.cut_calls()
    if cut:
        names = ", ".join(f"`{draft.name}`" for draft in cut)
        text += f" The tool call it was still sending ({names}) was not run."
    return _after(assembly, text)
