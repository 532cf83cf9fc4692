"""No custom fields at the root of a type the specification defines.

ACP v1, Extensibility (https://agentclientprotocol.com/protocol/extensibility, "The `_meta`
Field"): "Implementations MUST NOT add any custom fields at the root of a type that's part of
the specification. All possible names are reserved for future protocol versions." Custom data
goes under ``_meta``.

The vendored schema cannot say this on its own: its object types leave
``additionalProperties`` open. :func:`strict_schema` derives a closed copy of it, in which
every object type that lists its ``properties`` refuses any other member
(``unevaluatedProperties: false``, JSON Schema 2020-12). Objects the schema leaves open on
purpose (``_meta``, ``rawInput``, maps) stay open.

One subtlety: a tagged-union branch adds its tag beside a shared type
(``{"properties": {"type": {"const": "text"}}, "allOf": [{"$ref": "#/$defs/TextContent"}]}``).
There the branch is the closed object and the shared type is referenced in an open copy
(``TextContent__open``); anywhere else the shared type is used closed.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from tests.acp_schema import SchemaViolation, load_schema, schema_def_for

_OPEN = "__open"
_IN_PLACE = ("allOf", "anyOf", "oneOf")
"""Keywords whose subschemas apply to the same instance location."""


def _close(node: Any, extended: bool, opened: set[str]) -> None:
    """Close every object type below ``node``.

    ``extended``: ``node`` applies in place below a schema that lists properties of its own,
    so the enclosing schema is the one that must be closed (and named types are opened).
    """
    if isinstance(node, list):
        for item in node:
            _close(item, extended, opened)
        return
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if extended and isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        opened.add(name)
        node["$ref"] = f"#/$defs/{name}{_OPEN}"
    lists_properties = "properties" in node
    if (
        lists_properties
        and not extended
        and "additionalProperties" not in node
        and "unevaluatedProperties" not in node
    ):
        node["unevaluatedProperties"] = False
    for key, value in node.items():
        if key in _IN_PLACE:
            _close(value, extended or lists_properties, opened)
        elif key in ("properties", "$defs", "patternProperties"):
            for sub in value.values():
                _close(sub, False, opened)
        elif key in ("items", "additionalProperties", "prefixItems", "not", "if", "then", "else"):
            _close(value, False, opened)


UNSTABLE_MEMBERS = frozenset({("SessionCapabilities", "fork")})
"""Members the agent sends that only ACP's unstable schema defines: any value is let through
here (tests/server/test_fork.py validates them against the unstable schema)."""


@functools.cache
def strict_schema() -> dict[str, Any]:
    """The vendored schema with every specified object type closed to custom members (but
    :data:`UNSTABLE_MEMBERS`)."""
    original: dict[str, Any] = load_schema()["$defs"]
    root = copy.deepcopy(load_schema())
    defs: dict[str, Any] = root["$defs"]
    for name, member in UNSTABLE_MEMBERS:
        defs[name]["properties"].setdefault(member, {})
    opened: set[str] = set()
    for definition in defs.values():
        _close(definition, False, opened)
    while opened:  # an open copy may itself extend other named types
        name = opened.pop()
        if f"{name}{_OPEN}" in defs:
            continue
        open_copy = copy.deepcopy(original[name])
        _close(open_copy, True, opened)
        defs[f"{name}{_OPEN}"] = open_copy
    return root


@functools.cache
def _validator(def_name: str) -> Draft202012Validator:
    root = strict_schema()
    return Draft202012Validator(
        {"$schema": root["$schema"], "$defs": root["$defs"], "$ref": f"#/$defs/{def_name}"}
    )


def check_no_custom_fields(message: dict[str, Any], *, request_method: str | None) -> None:
    """Raise :class:`SchemaViolation` if a message the agent wrote carries a member the
    specification does not define outside ``_meta``.

    ``request_method`` names the request a response answers. The envelope itself is checked
    by :func:`tests.acp_schema.validate_agent_message`; this checks ``params`` and ``result``.
    Extension methods (``_``-prefixed) and error objects' ``data`` are free-form.
    """
    method = message.get("method", request_method)
    if not isinstance(method, str) or method.startswith("_"):
        return
    if "method" in message:
        kind = "Request" if "id" in message else "Notification"
        def_name = schema_def_for("client", method, kind) or schema_def_for(
            "protocol", method, kind
        )
        body, where = message.get("params"), f"params of {method!r}"
    elif "result" in message:
        def_name = schema_def_for("agent", method, "Response")
        body, where = message["result"], f"result of {method!r}"
    else:
        return
    if def_name is None:
        return
    errors = list(_validator(def_name).iter_errors(body))
    if errors:
        error = _deepest_custom_member(errors)
        raise SchemaViolation(
            f"{where} has a member ACP v1 does not define (custom data belongs in _meta): "
            f"at {error.json_path}: {error.message}"
        )


def _deepest_custom_member(errors: list[ValidationError]) -> ValidationError:
    """The innermost complaint about an undefined member, looking into the union branches
    whose tag matched (a branch with a failing ``const`` is another variant, not this one)."""
    found: list[ValidationError] = []
    stack = list(errors)
    while stack:
        error = stack.pop()
        if error.validator == "unevaluatedProperties":
            found.append(error)
        branches: dict[object, list[ValidationError]] = {}
        for sub in error.context or ():
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        for branch in branches.values():
            if all(sub.validator != "const" for sub in branch):
                stack.extend(branch)
    return max(found, key=lambda e: len(e.absolute_path), default=errors[0])
