"""An MCP tool's ``inputSchema``: checked before the tool is offered to the model.

Usable only when a lossless-JSON object schema, valid draft 2020-12, every ``$ref`` local and
resolving. Pure, thread-safe, never raises; verdicts cached by digest.
"""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.parse
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, Final

import jsonschema
import mcp.types

from acp_sidecar.tools.json_values import FrozenDict, JsonValueError, freeze_json

SHOWN_MAX: Final = 80
"""The longest server-given text (a schema error, a reference) a reason quotes."""
CACHED_VERDICTS: Final = 4096
"""How many schemas' verdicts are kept (a digest and ``None`` or a reason each)."""


def _shown(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SHOWN_MAX else line[: SHOWN_MAX - 1] + "…"


def usable_schema(tool: mcp.types.Tool) -> FrozenDict | str:
    """The tool's input schema deep-frozen, or why it cannot be used (see the module)."""
    try:
        return _checked(tool.input_schema)
    except RecursionError:
        return "its inputSchema is nested too deeply to be checked"


def _checked(schema: object) -> FrozenDict | str:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return 'its inputSchema is not a JSON Schema object with "type": "object"'
    try:
        frozen = freeze_json(schema)
    except JsonValueError as exc:
        return "its inputSchema is not lossless JSON: " + "; ".join(
            f"inputSchema{violation}" for violation in exc.violations
        )
    assert isinstance(frozen, FrozenDict)
    reason = _VERDICTS.verdict(schema)
    return frozen if reason is None else reason


def _verdict(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` (lossless JSON, ``type: object``) is no usable JSON Schema, or None."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "".join(f"/{part}" for part in exc.path)
        return (
            f"its inputSchema is not a valid JSON Schema: {_shown(exc.message)} "
            f"(at inputSchema{where})"
        )
    for where, ref in _refs(schema, ""):
        if not ref.startswith("#"):
            return (
                f"its inputSchema has a $ref that is not local ({_shown(ref)!r} "
                f"at inputSchema{where}); only references inside the schema are followed"
            )
        if not _resolves(schema, ref[1:]):
            return (
                f"its inputSchema has a $ref that does not resolve "
                f"({_shown(ref)!r} at inputSchema{where})"
            )
    return None


class _Verdicts:
    """The last :data:`CACHED_VERDICTS` verdicts, by digest (the least recently used goes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[bytes, str | None] = OrderedDict()

    def verdict(self, schema: dict[str, Any]) -> str | None:
        # Keys in their order (a reason can name the first fault found); 1, 1.0 and true
        # stay apart, as they are different JSON.
        canonical = json.dumps(schema, separators=(",", ":"))
        key = hashlib.blake2b(canonical.encode(), digest_size=16).digest()
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        reason = _verdict(schema)
        with self._lock:
            self._kept[key] = reason
            while len(self._kept) > CACHED_VERDICTS:
                self._kept.popitem(last=False)
        return reason


_VERDICTS: Final = _Verdicts()


_VALUE_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose values are data, not schemas: a ``$ref`` key inside them is no reference."""
_SCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
"""Keywords whose values map arbitrary names (``const`` included) to schemas."""


def _refs(schema: object, path: str) -> Iterator[tuple[str, str]]:
    """``(where, reference)`` for every ``$ref`` in ``schema`` (data values skipped)."""
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from _refs(item, f"{path}/{index}")
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        where = f"{path}/{key}"
        if key == "$ref" and isinstance(value, str):
            yield where, value
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            for name, subschema in value.items():
                yield from _refs(subschema, f"{where}/{name}")
        elif key not in _VALUE_KEYWORDS:
            yield from _refs(value, where)


def _resolves(schema: dict[str, Any], fragment: str) -> bool:
    """Whether a local reference's fragment (a JSON pointer, or a plain-name ``$anchor``)
    names a part of ``schema``."""
    fragment = urllib.parse.unquote(fragment)
    if not fragment.startswith("/"):
        return fragment == "" or _has_anchor(schema, fragment)
    node: object = schema
    for token in fragment[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return True


def _has_anchor(node: object, anchor: str) -> bool:
    if isinstance(node, dict):
        if node.get("$anchor") == anchor:
            return True
        return any(_has_anchor(value, anchor) for value in node.values())
    if isinstance(node, list):
        return any(_has_anchor(item, anchor) for item in node)
    return False
