"""Interop with the official ACP Python SDK (``agent-client-protocol``): its pydantic models
accept what we emit, and we decode what it emits."""

from __future__ import annotations

from typing import Any

import pytest

from acp_sidecar.protocol import ProtocolParamsError, from_wire, to_wire
from tests.protocol.samples import ALL_SAMPLES, Sample, sample_id

sdk_schema = pytest.importorskip("acp.schema")

# The SDK (0.12) is older than the vendored schema (2.4.0) in some respects, and its
# ``exclude_none`` dump cannot express a required ``null``.
SDK_LACKS = {
    **{
        name: "the SDK predates the notice session update"
        for name in ("notice/info", "notice/warning", "notice/error", "notice/full")
    },
    **{
        f"compaction_update/{status}": "the SDK predates compaction updates"
        for status in ("in_progress", "completed", "failed", "cancelled", "full")
    },
    "compaction_summary_chunk": "the SDK predates compaction updates",
    **{
        f"session/set_config_option{form}/request": "the SDK has no "
        "SetSessionConfigOptionRequest model"
        for form in ("", "/boolean", "/id")
    },
}
"""Samples the SDK refuses outright: pinned, so an entry goes once the SDK catches up."""

SDK_DIFFERS = {
    "initialize/full/request": "the SDK predates ClientCapabilities.session and drops it",
    "tool_call/full": "the SDK predates ToolCall.name and drops it",
    "tool_call_update/full": "the SDK predates ToolCallUpdate.name and drops it",
    "cancel_request/null_id": "exclude_none drops the required null requestId",
    "session/set_config_option/boolean": "the SDK's boolean option drops its category",
}


def _key(sample: Sample) -> str:
    """The sample's name, told apart from an agent sample of the same name."""
    return f"{sample.name}/request" if sample.kind == "client_request" else sample.name


def _model(sample: Sample) -> Any:
    model = getattr(sdk_schema, type(sample.value).__name__)
    if isinstance(model, type):
        return model
    return _UnionModel(model)  # the SDK spells some types as a Union of models


class _UnionModel:
    """A Union of the SDK's models, validated and dumped like one model."""

    def __init__(self, union: Any) -> None:
        from pydantic import TypeAdapter

        self._adapter = TypeAdapter(union)

    def model_validate(self, wire: Any) -> Any:
        return _Dumped(self._adapter, self._adapter.validate_python(wire))


class _Dumped:
    def __init__(self, adapter: Any, value: Any) -> None:
        self._adapter = adapter
        self._value = value

    def model_dump(self, **kwargs: Any) -> Any:
        return self._adapter.dump_python(self._value, **kwargs)


@pytest.mark.parametrize("sample", ALL_SAMPLES, ids=sample_id)
def test_the_sdk_accepts_our_wire_form(sample: Sample) -> None:
    if _key(sample) in SDK_LACKS:
        with pytest.raises((AttributeError, ValueError)):
            _model(sample).model_validate(to_wire(sample.value))
        return
    _model(sample).model_validate(to_wire(sample.value))


@pytest.mark.parametrize(
    "sample", [s for s in ALL_SAMPLES if _key(s) not in SDK_LACKS], ids=sample_id
)
def test_we_decode_the_sdk_wire_form(sample: Sample) -> None:
    model = _model(sample).model_validate(to_wire(sample.value))
    sdk_wire = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    if _key(sample) in SDK_DIFFERS:
        # A known SDK limitation: pin it, so the entry goes once the SDK catches up.
        with pytest.raises((AssertionError, ProtocolParamsError)):
            assert from_wire(sdk_wire, type(sample.value)) == sample.value, SDK_DIFFERS[
                _key(sample)
            ]
        return
    assert from_wire(sdk_wire, type(sample.value)) == sample.value
