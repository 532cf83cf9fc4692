"""Comparing cards across live and replay: transient progress folded away."""

from __future__ import annotations

import copy
from typing import Any


def without_progress(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One call's updates as ``[tool_call, final update]``: transient updates dropped, the
    terminal output they streamed folded into the final update (as replay sends it)."""
    start, *middle, final = copy.deepcopy(updates)
    streamed = "".join(
        u["_meta"]["terminal_output"]["data"]
        for u in middle
        if "terminal_output" in u.get("_meta", {})
    )
    if streamed:
        meta = final.setdefault("_meta", {})
        rest = meta.get("terminal_output", {}).get("data", "")
        meta["terminal_output"] = {"terminal_id": start["toolCallId"], "data": streamed + rest}
    return [start, final]


def tool_cards(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every card among ``session/update`` messages, each as :func:`without_progress`."""
    cards: dict[str, list[dict[str, Any]]] = {}
    for message in messages:
        update = message["params"]["update"]
        if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
            cards.setdefault(update["toolCallId"], []).append(update)
    return [update for sequence in cards.values() for update in without_progress(sequence)]
