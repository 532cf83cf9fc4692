"""Control characters made harmless wherever a transcript is drawn: one character for one (so
styles keep their offsets); a terminal's output is decoded as a terminal would, then made so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_sidecar.text import harmless


def visible_json(value: object) -> Any:
    """A copy of wire JSON with every string, keys included, made harmless."""
    if isinstance(value, str):
        return harmless(value)
    if isinstance(value, Mapping):
        return {harmless(str(key)): visible_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [visible_json(item) for item in value]
    return value


def visible_update(params: object) -> Any:
    """``session/update`` params (or a bare update) with every string made harmless,
    but for the terminal output it carries (see the module invariants)."""
    cleaned = visible_json(params)
    if not isinstance(params, Mapping) or not isinstance(cleaned, dict):
        return cleaned
    update, shown = params, cleaned
    if isinstance(params.get("update"), Mapping):
        update, shown = params["update"], cleaned["update"]
    meta = update.get("_meta")
    output = meta.get("terminal_output") if isinstance(meta, Mapping) else None
    data = output.get("data") if isinstance(output, Mapping) else None
    if isinstance(data, str):
        shown["_meta"]["terminal_output"]["data"] = data
    return cleaned
