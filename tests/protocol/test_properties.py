"""Property tests: what is encoded decodes to the same value; unknown keys are ignored;
``_meta`` passes through; what the agent emits is accepted by the official schema."""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, Literal, get_args, get_origin

import attrs
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from acp_sidecar import protocol as p
from acp_sidecar.protocol import from_wire, to_wire, wire_name
from tests.acp_schema import validate_agent_message

WIRE_CLASSES = sorted(
    (
        value
        for value in vars(p).values()
        if isinstance(value, type) and issubclass(value, p.WireType) and value is not p.WireType
    ),
    key=lambda cl: cl.__name__,
)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=3)


def _strategy(t: Any) -> st.SearchStrategy[Any]:
    """A strategy for one field type of the wire classes."""
    origin = get_origin(t)
    if origin in (types.UnionType, typing.Union):
        return st.one_of(*(_strategy(arg) for arg in get_args(t)))
    if t is type(None):
        return st.none()
    if origin is Literal:
        return st.sampled_from(get_args(t))
    if origin is list:
        return st.lists(_strategy(get_args(t)[0]), max_size=3)
    if t == dict[str, Any]:
        return json_objects
    if t == dict[str, str]:
        return st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3)
    if t is Any:
        return json_values
    if t is str:
        return st.text(max_size=10)
    if t is int:
        return st.integers(0, 65535)  # The schema's integers are unsigned (uint16 / uint32).
    if t is float:
        return st.floats(0, 1)
    if t is bool:
        return st.booleans()
    if isinstance(t, type) and issubclass(t, p.WireType):
        return st.deferred(lambda: instances(t))
    raise TypeError(f"no strategy for {t!r}")


NON_EMPTY: dict[tuple[type[Any], str], st.SearchStrategy[Any]] = {
    (p.NoticeUpdate, "title"): st.text(min_size=1, max_size=10),
}
"""Fields the schema requires to be non-empty (``minLength: 1``)."""


@functools.cache
def instances(cls: type[Any]) -> st.SearchStrategy[Any]:
    """Arbitrary values of a wire class (tags keep their only value)."""
    attrs.resolve_types(cls)
    fields = {
        a.name: NON_EMPTY[cls, a.name] if (cls, a.name) in NON_EMPTY else _strategy(a.type)
        for a in attrs.fields(cls)
        if not a.kw_only
    }
    return st.builds(cls, **fields)


def _with_unknown_keys(value: Any, wire: Any, extra: dict[str, Any]) -> Any:
    """``wire`` with ``extra`` added to every object that is a wire value (not to ``_meta``)."""
    if isinstance(value, list):
        return [_with_unknown_keys(v, w, extra) for v, w in zip(value, wire, strict=True)]
    if not isinstance(value, p.WireType):
        return wire
    out = {**extra, **wire}
    for field in attrs.fields(type(value)):
        key = wire_name(field.name)
        if key in wire and field.name != "meta":
            out[key] = _with_unknown_keys(getattr(value, field.name), wire[key], extra)
    return out


unknown_keys = st.dictionaries(
    st.text(min_size=1, max_size=8).map(lambda k: f"x-unknown-{k}"), json_values, max_size=3
)


any_value = st.one_of([instances(cl) for cl in WIRE_CLASSES])
values_with_meta = st.one_of(
    [instances(cl) for cl in WIRE_CLASSES if "meta" in attrs.fields_dict(cl)]
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(value=any_value)
def test_round_trip(value: Any) -> None:
    assert from_wire(to_wire(value), type(value)) == value


@SETTINGS
@given(value=any_value, extra=unknown_keys)
def test_unknown_incoming_keys_are_ignored(value: Any, extra: dict[str, Any]) -> None:
    wire = _with_unknown_keys(value, to_wire(value), extra)
    assert from_wire(wire, type(value)) == value


@SETTINGS
@given(value=values_with_meta, meta=json_objects)
def test_meta_passes_through_verbatim(value: Any, meta: dict[str, Any]) -> None:
    value = attrs.evolve(value, meta=meta)
    wire = to_wire(value)
    assert wire["_meta"] is meta
    assert "meta" not in wire
    assert from_wire(wire, type(value)).meta == meta


AGENT_EMITS = [
    (p.SessionNotification, p.SESSION_UPDATE, "notification"),
    (p.RequestPermissionRequest, p.SESSION_REQUEST_PERMISSION, "request"),
    (p.ReadTextFileRequest, p.FS_READ_TEXT_FILE, "request"),
    (p.WriteTextFileRequest, p.FS_WRITE_TEXT_FILE, "request"),
    (p.InitializeResponse, p.INITIALIZE, "result"),
    (p.AuthenticateResponse, p.AUTHENTICATE, "result"),
    (p.NewSessionResponse, p.SESSION_NEW, "result"),
    (p.LoadSessionResponse, p.SESSION_LOAD, "result"),
    (p.ListSessionsResponse, p.SESSION_LIST, "result"),
    (p.SetSessionModeResponse, p.SESSION_SET_MODE, "result"),
    (p.PromptResponse, p.SESSION_PROMPT, "result"),
]


def _links_a_session(wire: Any) -> bool:
    """Whether a wire value holds ``session`` tool-call content anywhere."""
    if isinstance(wire, dict):
        return wire.get("type") == "session" or any(_links_a_session(v) for v in wire.values())
    if isinstance(wire, list):
        return any(_links_a_session(v) for v in wire)
    return False


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), emitted=st.sampled_from(AGENT_EMITS))
def test_whatever_the_agent_emits_validates(
    data: st.DataObject, emitted: tuple[type[Any], str, str]
) -> None:
    cls, method, kind = emitted
    value = data.draw(instances(cls))
    # Plan operations are only in the unstable schema (tests/agent/test_plan_operations.py).
    assume(not isinstance(getattr(value, "update", None), (p.PlanUpdate, p.PlanRemoved)))
    # So are subagents' updates, and the page's ``session`` card content is in neither
    # (tests/server/test_subagents.py).
    update = getattr(value, "update", None)
    assume(not isinstance(update, (p.SubagentUpdate, p.SessionMessage, p.SessionMessageChunk)))
    assume(not _links_a_session(to_wire(value)))
    wire = to_wire(value)
    if kind == "notification":
        validate_agent_message({"jsonrpc": "2.0", "method": method, "params": wire})
    elif kind == "request":
        validate_agent_message({"jsonrpc": "2.0", "id": 1, "method": method, "params": wire})
    else:
        validate_agent_message({"jsonrpc": "2.0", "id": 1, "result": wire}, request_method=method)
