"""JSON-RPC / ACP error codes, the error value the agent answers with, and the decode error.
:class:`ProtocolParamsError` names the field by its wire path, never a Python attribute name.
"""

from typing import Any, Final

PARSE_ERROR: Final = -32700
"""The message was not valid JSON."""
INVALID_REQUEST: Final = -32600
"""The JSON was not a valid JSON-RPC request."""
METHOD_NOT_FOUND: Final = -32601
"""The method does not exist or is not available."""
INVALID_PARAMS: Final = -32602
"""The method's parameters were invalid."""
INTERNAL_ERROR: Final = -32603
"""An internal error in the agent."""
REQUEST_CANCELLED: Final = -32800
"""The request was cancelled (answer to ``$/cancel_request``)."""
AUTH_REQUIRED: Final = -32000
"""The agent requires authentication first."""
RESOURCE_NOT_FOUND: Final = -32002
"""A referenced resource (such as a session or file) does not exist."""


class AcpError(Exception):
    """A JSON-RPC error the agent answers a request with (the schema's ``Error``)."""

    code: int
    """The JSON-RPC error code (one of this module's constants, or an agent-specific one)."""
    message: str
    """A short, human-readable description of the error."""
    data: Any
    """Optional JSON detail; omitted from the wire when ``None``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"AcpError(code={self.code}, message={self.message!r}, data={self.data!r})"

    def to_json(self) -> dict[str, Any]:
        """The wire ``error`` object: ``{"code", "message"}`` plus ``"data"`` when set."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def parse_error(cls, msg: str = "Parse error") -> "AcpError":
        """The message was not valid JSON (-32700)."""
        return cls(PARSE_ERROR, msg)

    @classmethod
    def invalid_request(cls, msg: str = "Invalid request") -> "AcpError":
        """The message was not a valid JSON-RPC request (-32600)."""
        return cls(INVALID_REQUEST, msg)

    @classmethod
    def method_not_found(cls, method: str) -> "AcpError":
        """No handler for ``method`` (-32601); the method is repeated in ``data``."""
        return cls(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})

    @classmethod
    def invalid_params(cls, msg: str) -> "AcpError":
        """The parameters were invalid (-32602)."""
        return cls(INVALID_PARAMS, msg)

    @classmethod
    def internal_error(cls, msg: str = "Internal error") -> "AcpError":
        """The agent failed internally (-32603)."""
        return cls(INTERNAL_ERROR, msg)

    @classmethod
    def request_cancelled(cls, msg: str = "Request cancelled") -> "AcpError":
        """The request was cancelled by ``$/cancel_request`` (-32800)."""
        return cls(REQUEST_CANCELLED, msg)

    @classmethod
    def auth_required(cls, msg: str = "Authentication required") -> "AcpError":
        """Authentication is required before this request (-32000)."""
        return cls(AUTH_REQUIRED, msg)

    @classmethod
    def resource_not_found(cls, msg: str) -> "AcpError":
        """A referenced resource does not exist (-32002)."""
        return cls(RESOURCE_NOT_FOUND, msg)


class ProtocolParamsError(ValueError):
    """Incoming params did not decode into the expected ACP type.

    ``str(error)`` is ``"<field>: <reason>"`` (``"cwd: required field missing"``); a server
    answers it with :meth:`AcpError.invalid_params`.
    """

    field: str
    """The wire path of the offending value, segments joined by ``/`` (``""`` for the root)."""
    reason: str
    """What is wrong with it."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason
