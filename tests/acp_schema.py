"""Validate ACP JSON-RPC messages against the vendored official schemas.

The schema (``tests/fixtures/acp/v1/schema.json``, see ``SOURCE.md`` there) is the judge of
what the agent writes; its unstable sibling (``schema.unstable.json``, from the same package)
judges the features ACP has not stabilized yet (``unstable=True`` on every function here).
``version=2`` on every function judges by the v2 files (``tests/fixtures/acp/v2/``) instead,
with the same envelope and method checks.
Use :func:`validate_agent_message` on every message the agent emits:

    validate_agent_message({"jsonrpc": "2.0", "method": "session/update", "params": {...}})
    validate_agent_message(response, request_method="session/prompt")

Two things the schema cannot say on its own are checked here too:

- the JSON-RPC envelope: ``jsonrpc == "2.0"``; a request has a string or integer ``id``; a
  response has an ``id`` (``null`` only on an error) and exactly one of ``result``/``error``;
  no members besides ``jsonrpc``/``id``/``method``/``params``/``result``/``error``;
- the method: the schema's unions accept any object through their extension (``Ext*``)
  branches, so params and results are checked against the *specific* type of the method
  (looked up by the schema's ``x-method``/``x-side`` annotations); a non-extension method the
  schema does not define for that direction is an error.

Validators are built once per schema type and cached.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Literal, NoReturn

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from jsonschema.validators import validator_for

SCHEMA_PATH = Path(__file__).parent / "fixtures" / "acp" / "v1" / "schema.json"
"""The vendored ``@agentclientprotocol/sdk`` 2.4.0 ``schema/v1/schema.json``."""
UNSTABLE_SCHEMA_PATH = SCHEMA_PATH.with_name("schema.unstable.json")
"""The vendored ``@agentclientprotocol/sdk`` 2.4.0 ``schema/v1/schema.unstable.json``."""
V2_SCHEMA_PATH = SCHEMA_PATH.parent.parent / "v2" / "schema.json"
"""The vendored ``@agentclientprotocol/sdk`` 2.4.0 ``schema/v2/schema.json``."""
V2_UNSTABLE_SCHEMA_PATH = V2_SCHEMA_PATH.with_name("schema.unstable.json")
"""The vendored ``@agentclientprotocol/sdk`` 2.4.0 ``schema/v2/schema.unstable.json``."""

Version = Literal[1, 2]
_PATHS: dict[tuple[Version, bool], Path] = {
    (1, False): SCHEMA_PATH,
    (1, True): UNSTABLE_SCHEMA_PATH,
    (2, False): V2_SCHEMA_PATH,
    (2, True): V2_UNSTABLE_SCHEMA_PATH,
}

Side = Literal["agent", "client"]
_ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params", "result", "error"})
_OTHER: dict[Side, Side] = {"agent": "client", "client": "agent"}


class SchemaViolation(AssertionError):
    """A message is not valid ACP (of the version judged); the message says where and why."""


@functools.cache
def load_schema(unstable: bool = False, version: Version = 1) -> dict[str, Any]:
    """The vendored schema of ``version`` (the unstable one when ``unstable``), parsed."""
    path = _PATHS[(version, unstable)]
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


@functools.cache
def _validator(unstable: bool, version: Version, *def_names: str) -> Draft202012Validator:
    """A validator for one ``$defs`` type, or for any of several."""
    root = load_schema(unstable, version)
    refs = [{"$ref": f"#/$defs/{name}"} for name in def_names]
    body: dict[str, Any] = refs[0] if len(refs) == 1 else {"anyOf": refs}
    schema = {"$schema": root["$schema"], "$defs": root["$defs"], **body}
    cls = validator_for(root, default=Draft202012Validator)
    validator: Draft202012Validator = cls(schema)
    return validator


@functools.cache
def _method_defs(unstable: bool = False, version: Version = 1) -> dict[tuple[str, str, str], str]:
    """``(x-side, method, "Request" | "Response" | "Notification")`` → ``$defs`` name.

    ``x-side`` is the side that *handles* the method: ``agent`` for ``session/prompt``,
    ``client`` for ``session/update``, ``protocol`` for ``$/cancel_request``.
    """
    table: dict[tuple[str, str, str], str] = {}
    for name, definition in load_schema(unstable, version)["$defs"].items():
        method, side = definition.get("x-method"), definition.get("x-side")
        if method is None or side is None:
            continue
        for kind in ("Request", "Response", "Notification"):
            if name.endswith(kind):
                table[(side, method, kind)] = name
    return table


def schema_def_for(
    side: str, method: str, kind: str, *, unstable: bool = False, version: Version = 1
) -> str | None:
    """The ``$defs`` name of a method's ``Request``/``Response``/``Notification`` type.

    ``side`` is the side that handles the method (``"agent"``, ``"client"``, ``"protocol"``).
    """
    return _method_defs(unstable, version).get((side, method, kind))


def schema_methods(
    side: str, kind: str, *, unstable: bool = False, version: Version = 1
) -> frozenset[str]:
    """Every method the schema defines for ``side`` (the handler) and ``kind``."""
    table = _method_defs(unstable, version)
    return frozenset(m for (s, m, k) in table if s == side and k == kind)


def _describe(instance: Any) -> str:
    text = json.dumps(instance, sort_keys=True, default=repr)
    return text if len(text) <= 600 else text[:600] + "…"


def _most_specific(error: ValidationError) -> ValidationError:
    """Descend through ``oneOf``/``anyOf`` into the one branch whose tag matched, if any.

    A tagged union fails as "not valid under any of the given schemas"; the useful complaint
    is inside the branch whose ``const`` discriminator did not fail.
    """
    while error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        viable = [errs for errs in branches.values() if all(e.validator != "const" for e in errs)]
        if len(viable) != 1:
            break
        found = best_match(viable[0])
        if found is None:
            break
        error = found
    return error


def validate_instance(
    instance: Any,
    *def_names: str,
    context: str = "value",
    unstable: bool = False,
    version: Version = 1,
) -> None:
    """Validate ``instance`` against the schema's ``$defs`` type (or any of several).

    Raises :class:`SchemaViolation` naming the failing location, the schema's complaint
    and the offending value.
    """
    error = best_match(_validator(unstable, version, *def_names).iter_errors(instance))
    if error is not None:
        error = _most_specific(error)
        where = error.json_path
        raise SchemaViolation(
            f"{context} is not a valid {' | '.join(def_names)}: at {where}: {error.message}\n"
            f"  value: {_describe(instance)}"
        )


def _fail(message: Any, problem: str) -> NoReturn:
    raise SchemaViolation(f"{problem}\n  message: {_describe(message)}")


def _check_id(message: dict[str, Any], *, allow_null: bool) -> None:
    msg_id = message["id"]
    if msg_id is None and allow_null:
        return
    if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
        _fail(message, f"invalid JSON-RPC id {msg_id!r}: must be a string or an integer")


def _validate_message(
    message: Any, sender: Side, request_method: str | None, unstable: bool, version: Version
) -> None:
    receiver = _OTHER[sender]
    if not isinstance(message, dict):
        _fail(message, "a JSON-RPC message must be an object")
    if message.get("jsonrpc") != "2.0":
        _fail(message, 'missing or wrong "jsonrpc": must be "2.0"')
    extra = set(message) - _ENVELOPE_KEYS
    if extra:
        _fail(message, f"unexpected top-level members {sorted(extra)}")
    envelope_def = sender.capitalize()

    if "method" in message:
        method = message["method"]
        if not isinstance(method, str):
            _fail(message, f'"method" must be a string, got {method!r}')
        if "result" in message or "error" in message:
            _fail(message, "a request or notification must not carry result or error")
        kind = "Request" if "id" in message else "Notification"
        if kind == "Request":
            _check_id(message, allow_null=False)
        validate_instance(
            message,
            f"{envelope_def}{kind}",
            context=f"{sender} {kind.lower()}",
            unstable=unstable,
            version=version,
        )
        if method.startswith("_"):
            return  # Extension method: any params.
        def_name = schema_def_for(receiver, method, kind, unstable=unstable, version=version)
        if def_name is None and kind == "Notification":
            def_name = schema_def_for("protocol", method, kind, unstable=unstable, version=version)
        if def_name is None:
            _fail(
                message,
                f"{method!r} is not a {kind.lower()} the {sender} may send (ACP v{version})",
            )
        if "params" not in message:
            _fail(message, f"{method!r} requires params ({def_name})")
        validate_instance(
            message["params"],
            def_name,
            context=f"params of {method!r}",
            unstable=unstable,
            version=version,
        )
        return

    if "id" not in message:
        _fail(message, "neither a request, a response nor a notification (no method, no id)")
    if ("result" in message) == ("error" in message):
        _fail(message, "a response must carry exactly one of result and error")
    _check_id(message, allow_null="error" in message)
    validate_instance(
        message,
        f"{envelope_def}Response",
        context=f"{sender} response",
        unstable=unstable,
        version=version,
    )
    if "error" in message:
        validate_instance(
            message["error"], "Error", context="error", unstable=unstable, version=version
        )
        return
    if request_method is None:
        # Every non-extension response type (the union's Ext branch accepts anything).
        names = sorted(
            name
            for (side, _, kind), name in _method_defs(unstable, version).items()
            if side == sender and kind == "Response"
        )
        validate_instance(
            message["result"], *names, context="result", unstable=unstable, version=version
        )
        return
    if request_method.startswith("_"):
        from tests.extensions import EXTENSION_RESULTS

        check = EXTENSION_RESULTS.get(request_method)
        if check is not None:  # the extension's pinned shape (the schema has none)
            check(message["result"])
        return
    def_name = schema_def_for(
        sender, request_method, "Response", unstable=unstable, version=version
    )
    if def_name is None:
        raise ValueError(
            f"{request_method!r} is not a method the {sender} answers (ACP v{version})"
        )
    validate_instance(
        message["result"],
        def_name,
        context=f"result of {request_method!r}",
        unstable=unstable,
        version=version,
    )


def only_unstable(message: dict[str, Any], request_method: str | None = None) -> bool:
    """Whether the agent's ``message`` is one the stable schema has no type for but the
    unstable one may: the answer to a method only the unstable schema defines
    (``session/fork``), or an update of a kind only it defines (``plan_update``,
    ``plan_removed``). What the stable schema defines stays judged by it."""
    if "method" not in message:
        return (
            request_method is not None
            and not request_method.startswith("_")
            and schema_def_for("agent", request_method, "Response") is None
        )
    if message["method"] != "session/update" or not isinstance(message.get("params"), dict):
        return False
    update = message["params"].get("update")
    return isinstance(update, dict) and update.get("sessionUpdate") not in _update_kinds()


@functools.cache
def _update_kinds(unstable: bool = False, version: Version = 1) -> frozenset[str]:
    """The ``sessionUpdate`` tags the schema's ``SessionUpdate`` union defines."""
    union = load_schema(unstable, version)["$defs"]["SessionUpdate"]
    variants = union.get("oneOf", union.get("anyOf", []))  # v2 lists them under anyOf
    return frozenset(
        v["properties"]["sessionUpdate"]["const"]
        for v in variants
        if "const" in v["properties"]["sessionUpdate"]  # v2's open "other" branch has none
    )


def update_kinds(*, unstable: bool = False, version: Version = 1) -> frozenset[str]:
    """The ``sessionUpdate`` kinds the schema of ``version`` names (not its open branch)."""
    return _update_kinds(unstable, version)


def validate_agent_message(
    message: dict[str, Any],
    *,
    request_method: str | None = None,
    unstable: bool = False,
    version: Version = 1,
) -> None:
    """Validate one JSON-RPC message the **agent** writes.

    A response is checked against the result type of ``request_method`` (the method of the
    request it answers) when given, else against every agent result type. Raises
    :class:`SchemaViolation`; :class:`ValueError` if ``request_method`` is not one the agent
    answers. ``unstable``: judge by the unstable schema (features not stabilized yet);
    ``version``: which protocol's files judge.
    """
    _validate_message(message, "agent", request_method, unstable, version)


def validate_client_message(
    message: dict[str, Any],
    *,
    request_method: str | None = None,
    unstable: bool = False,
    version: Version = 1,
) -> None:
    """Validate one JSON-RPC message the **client** writes (test fixtures, fakes).

    Mirror of :func:`validate_agent_message`: ``request_method`` is the method of the agent's
    request a response answers (``session/request_permission``, ``fs/read_text_file``).
    """
    _validate_message(message, "client", request_method, unstable, version)
