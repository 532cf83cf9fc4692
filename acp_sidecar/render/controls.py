"""Control characters made harmless wherever a transcript is drawn for people.

Invariants:
- :func:`visible` keeps tab and line endings and replaces every other C0 control and DEL by
  its Unicode control picture (``\\x1b`` → ``␛``) and every C1 control by ``�``, one character
  for one (so styles laid over the text keep their offsets).
- :func:`visible_update` applies it to every string of an update, keys included, but a
  terminal card's output (``_meta.terminal_output.data``): that is decoded as a terminal
  would decode it, and made harmless there (:func:`~acp_sidecar.render.draw.terminal_text`).
  A terminal, or a file read raw in one, so never sees an escape sequence from a transcript.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

_VISIBLE: Final = {
    **{code: 0x2400 + code for code in range(0x20) if code not in (0x09, 0x0A, 0x0D)},
    0x7F: 0x2421,
    **dict.fromkeys(range(0x80, 0xA0), 0xFFFD),
}

_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""The characters :data:`_VISIBLE` replaces (searched first: most text has none)."""


def visible(text: str) -> str:
    """``text`` with its control characters (but tab and line endings) made harmless."""
    return text.translate(_VISIBLE) if _CONTROL.search(text) else text


def visible_json(value: object) -> Any:
    """A copy of wire JSON with every string, keys included, made :func:`visible`."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, Mapping):
        return {visible(str(key)): visible_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [visible_json(item) for item in value]
    return value


def visible_update(params: object) -> Any:
    """``session/update`` params (or a bare update) with every string made :func:`visible`,
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
