"""``AcpError``: codes, constructors and the wire ``error`` object."""

from __future__ import annotations

from typing import Any

import pytest

from acp_sidecar import protocol as p


@pytest.mark.parametrize(
    ("error", "code", "message", "data"),
    [
        (p.AcpError.parse_error("bad json"), -32700, "bad json", None),
        (p.AcpError.invalid_request("no method"), -32600, "no method", None),
        (
            p.AcpError.method_not_found("session/fly"),
            -32601,
            "Method not found: session/fly",
            {"method": "session/fly"},
        ),
        (
            p.AcpError.invalid_params("cwd: required field missing"),
            -32602,
            "cwd: required field missing",
            None,
        ),
        (p.AcpError.internal_error("boom"), -32603, "boom", None),
        (p.AcpError.request_cancelled(), -32800, "Request cancelled", None),
        (p.AcpError.auth_required("log in first"), -32000, "log in first", None),
        (p.AcpError.resource_not_found("no session s1"), -32002, "no session s1", None),
    ],
)
def test_constructors(error: p.AcpError, code: int, message: str, data: Any) -> None:
    assert (error.code, error.message, error.data) == (code, message, data)
    assert str(error) == message
    expected = {"code": code, "message": message}
    if data is not None:
        expected["data"] = data
    assert error.to_json() == expected


def test_codes_match_the_constants() -> None:
    assert (p.PARSE_ERROR, p.INVALID_REQUEST, p.METHOD_NOT_FOUND) == (-32700, -32600, -32601)
    assert (p.INVALID_PARAMS, p.INTERNAL_ERROR, p.REQUEST_CANCELLED) == (-32602, -32603, -32800)
    assert (p.AUTH_REQUIRED, p.RESOURCE_NOT_FOUND) == (-32000, -32002)


def test_data_is_sent_verbatim_when_set() -> None:
    error = p.AcpError(-32099, "custom", data={"retry_after": 3})
    assert error.to_json() == {"code": -32099, "message": "custom", "data": {"retry_after": 3}}
    assert repr(error) == "AcpError(code=-32099, message='custom', data={'retry_after': 3})"
    with pytest.raises(p.AcpError) as raised:
        raise error
    assert raised.value is error


def test_protocol_params_error_carries_the_field() -> None:
    error = p.ProtocolParamsError("prompt/0/type", "unknown content block type 'foo'")
    assert isinstance(error, ValueError)
    assert (error.field, error.reason) == ("prompt/0/type", "unknown content block type 'foo'")
    assert str(error) == "prompt/0/type: unknown content block type 'foo'"
    assert str(p.ProtocolParamsError("", "expected object, got array")) == (
        "expected object, got array"
    )
