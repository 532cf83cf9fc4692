"""JSON-RPC 2.0 messages as NDJSON lines: strict decoding, compact encoding, bounded errors.

Decoding is strict JSON (``NaN``, an overflowing number, an integer past :data:`MAX_INT_DIGITS`
digits are parse errors); an encoded message is valid UTF-8 with no raw newline. What echoes the
client's input — an error's message and ``data``, a log line's ids and methods — is bounded, and
log warnings are rate-limited (:func:`throttled`).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcException

from acp_sidecar.jsonfast import stdlib_bytes
from acp_sidecar.protocol.errors import INTERNAL_ERROR, AcpError
from acp_sidecar.protocol.methods import SESSION_UPDATE
from acp_sidecar.text import shorten
from acp_sidecar.throttle import Throttle

logger = logging.getLogger(__name__)

JSONRPC = "2.0"

MAX_INT_DIGITS = 4300
"""The longest integer read from the wire, in characters (Python's own conversion limit);
a longer one is a parse error rather than an error text about interpreter settings."""
MAX_ERROR_MESSAGE = 1000
"""The most characters of an error message sent (messages quote what the client sent)."""
MAX_ERROR_DATA = 8 * 1024
"""The most bytes of an error's encoded ``data``; larger ``data`` is left out."""
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""The largest response sent (16 MiB); a larger answer becomes ``-32603``."""
INT64 = range(-(2**63), 2**63)
"""What an integer request id may be (the schema's ``RequestId`` is ``int64``)."""

# Messages are trees built by ``to_wire`` and the handlers: no cycles to look for (a cycle
# would still fail, with RecursionError, which callers catch like ValueError).
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)
_ASCII_ENCODER = json.JSONEncoder(
    ensure_ascii=True, separators=(",", ":"), allow_nan=False, check_circular=False
)


def _made_once(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode``, the same text, with its C encoder made once: the stdlib makes it
    anew at every ``encode`` (a third of the cost of a streamed update). Where there is no
    C encoder, ``encoder.encode`` itself."""
    try:
        from _json import encode_basestring, encode_basestring_ascii, make_encoder
    except ImportError:  # pragma: no cover - CPython has it
        return encoder.encode
    strings = encode_basestring_ascii if encoder.ensure_ascii else encode_basestring
    made = make_encoder(None, encoder.default, strings, None, ":", ",", False, False, False)

    def encode(value: Any) -> str:
        return "".join(made(value, 0))

    return encode


_encode = _made_once(_ENCODER)
_encode_ascii = _made_once(_ASCII_ENCODER)


class _NotJson(ValueError):
    """A number JSON does not have (``NaN``, ``Infinity``, an overflowing float) or one too
    long to read; ``str()`` is the parse error shown to the client."""


def _parse_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not a JSON value")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson(f"the number {shorten(text, 40)} is out of range")
    return value


def _parse_int(text: str) -> int:
    too_long = _NotJson(
        f"an integer of {len(text)} characters is longer than the {MAX_INT_DIGITS} read"
    )
    if len(text) > MAX_INT_DIGITS:
        raise too_long
    try:
        return int(text)
    except ValueError:  # a lower limit set for this interpreter (PYTHONINTMAXSTRDIGITS)
        raise too_long from None


def decode_line(line: bytes | bytearray) -> Any:
    """The JSON value of one line; strict JSON (no ``NaN``/``Infinity``, bounded integers).

    Raises ``UnicodeDecodeError``, ``ValueError`` (``json.JSONDecodeError``, :class:`_NotJson`)
    or ``RecursionError``.
    """
    return _DECODER.decode(line.decode("utf-8"))


# Made once: ``json.loads`` given hooks makes a decoder (and its scanner) at every call.
_DECODER = json.JSONDecoder(
    parse_constant=_parse_constant, parse_float=_parse_float, parse_int=_parse_int
)


def encode_message(message: dict[str, Any]) -> bytes:
    """One NDJSON line: compact JSON, UTF-8, newline-terminated.

    Raises ``ValueError``/``TypeError``/``RecursionError`` for what JSON cannot carry (NaN,
    objects, cycles).
    """
    return encode_value(message) + b"\n"


def encode_value(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON (what :func:`encode_message` puts on a line): the
    stdlib's bytes, written by orjson where they are sure to be the same."""
    data = stdlib_bytes(value)
    return _stdlib_encoded(value) if data is None else data


def _stdlib_encoded(value: Any) -> bytes:
    """``value`` written by the stdlib, as :func:`encode_value` writes what orjson cannot."""
    text = _encode(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (echoed from a ``\\ud800`` escape) is not UTF-8: escape it.
        return _encode_ascii(value).encode("ascii")


class UpdateLines:
    """Encodes ``session/update`` notifications, each session's envelope encoded once: a
    streamed update costs the encoding of its ``update`` alone. A line means what
    :func:`encode_message` makes of the whole notification, byte for byte but where the
    update holds a lone surrogate (then only the update is written in ASCII)."""

    __slots__ = ("_prefixes",)

    BOUND = 64
    """Sessions whose envelope is kept (more are encoded again, not lost)."""

    def __init__(self) -> None:
        self._prefixes: dict[str, bytes] = {}

    def line(self, session_id: str, update: dict[str, Any]) -> bytes:
        """The NDJSON line of ``{"sessionId": session_id, "update": update}``'s notification."""
        prefix = self._prefixes.get(session_id)
        if prefix is None:
            if len(self._prefixes) >= self.BOUND:
                self._prefixes.clear()
            envelope = (encode_value(JSONRPC), encode_value(SESSION_UPDATE))
            prefix = b'{"jsonrpc":%s,"method":%s,"params":{"sessionId":%s,"update":' % (
                *envelope,
                encode_value(session_id),
            )
            self._prefixes[session_id] = prefix
        data = stdlib_bytes(update)  # encode_value, inlined: a call fewer per update
        return b"".join((prefix, _stdlib_encoded(update) if data is None else data, b"}}\n"))


def error_object(exc: BaseException) -> dict[str, Any]:
    """The wire ``error`` object a handler's exception answers with."""
    if isinstance(exc, AcpError):
        return exc.to_json()
    if isinstance(exc, JsonRpcException):
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        return error
    return {"code": INTERNAL_ERROR, "message": f"Internal error: {type(exc).__name__}: {exc}"}


def bounded_error(error: dict[str, Any]) -> dict[str, Any]:
    """``error`` with its message cut to :data:`MAX_ERROR_MESSAGE` characters and its
    ``data`` left out when it encodes to more than :data:`MAX_ERROR_DATA` bytes (or not at
    all)."""
    message = error.get("message")
    bounded = dict(error)
    if isinstance(message, str) and len(message) > MAX_ERROR_MESSAGE:
        bounded["message"] = shorten(message, MAX_ERROR_MESSAGE)
    if "data" in bounded:
        try:
            size = len(_encode_ascii(bounded["data"]))
        except (ValueError, TypeError, RecursionError):
            size = MAX_ERROR_DATA + 1
        if size > MAX_ERROR_DATA:
            del bounded["data"]
    return bounded


NULL_ID = (
    '"id" must not be null (JSON-RPC answers a request whose id is unknown with a null id, so '
    "the answer could not be told from that); send a string or a number, or no id for a "
    "notification"
)
"""Why a request with ``id: null`` is refused unrun: JSON-RPC 2.0 and ACP's ``RequestId``
allow it but discourage it, as its answer would carry the id of "id unknown"."""


def is_request_id(value: object) -> bool:
    """Whether ``value`` can be a JSON-RPC request id: a string, a 64-bit integer or null."""
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool) and value in INT64)
    )


def shown_id(msg_id: object) -> str:
    """A request id as a log line shows it (ids can be long)."""
    return shorten(repr(msg_id), 80)


def shown_method(method: str) -> str:
    """A method name the client sent, as a log line shows it (it can be megabytes long)."""
    return shorten(repr(method), 80)


_THROTTLE = Throttle()


def throttled(level: int, kind: str, message: str, *args: object) -> None:
    """Log a line the client's input causes, at most at :mod:`~acp_sidecar.throttle`'s
    rate for its ``kind``."""
    _THROTTLE.log(logger, level, kind, message, *args)


def short_error(exc: BaseException, limit: int = 200) -> str:
    """``str(exc)`` cut to ``limit`` characters (an error text shown to the client)."""
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "…"


def response_line(
    msg_id: object, *, result: Any = None, error: dict[str, Any] | None = None
) -> bytes:
    """The encoded answer to request ``msg_id``: ``error`` (an error object, bounded here) when
    given, else ``result``. An answer that cannot be encoded, or is over
    :data:`MAX_RESPONSE_BYTES`, becomes a ``-32603`` answer saying why (and is logged)."""
    if error is not None:
        message: dict[str, Any] = {"jsonrpc": JSONRPC, "id": msg_id, "error": bounded_error(error)}
    else:
        message = {"jsonrpc": JSONRPC, "id": msg_id, "result": result}
    try:
        line = encode_message(message)
    except (ValueError, TypeError, RecursionError) as exc:
        logger.error("the answer to request %s cannot be encoded: %s", shown_id(msg_id), exc)
        return _internal_error_line(
            msg_id, f"Internal error: the result cannot be encoded: {short_error(exc)}"
        )
    if len(line) > MAX_RESPONSE_BYTES:
        logger.error("the answer to request %s is %d bytes; refused", shown_id(msg_id), len(line))
        return _internal_error_line(
            msg_id,
            f"Internal error: the answer is {len(line)} bytes, over the limit of "
            f"{MAX_RESPONSE_BYTES} bytes for one message",
        )
    return line


def _internal_error_line(msg_id: object, text: str) -> bytes:
    error = {"code": INTERNAL_ERROR, "message": text}
    return encode_message({"jsonrpc": JSONRPC, "id": msg_id, "error": error})


class MalformedAnswerError(Exception):
    """The client answered one of our requests with something that is not a response (both
    ``result`` and ``error``, neither, or an ``error`` that is not an error object)."""


def read_answer(message: dict[str, Any]) -> Any:
    """The ``result`` of the client's answer ``message`` to one of our requests.

    Raises :class:`JsonRpcException` for an error answer and :class:`MalformedAnswerError`
    (saying why) for what is not a response. Some JSON-RPC libraries always send both
    members, the unused one null: a null error beside a result, or a null result beside a
    proper error, counts as absent."""
    error = message.get("error")
    has_error = error is not None
    if message.get("jsonrpc") != JSONRPC:
        raise MalformedAnswerError('"jsonrpc" is not "2.0"')
    if "result" in message and has_error and message["result"] is not None:
        raise MalformedAnswerError("it carries both a result and an error")
    if "result" in message and not has_error:
        return message["result"]
    if "error" not in message:
        raise MalformedAnswerError("it carries neither a result nor an error")
    if (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message"), str)
    ):
        raise JsonRpcException(error["message"], error["code"], error.get("data"))
    raise MalformedAnswerError(
        "its error is not an object with an integer code and a string message"
    )


__all__ = [
    "INT64",
    "JSONRPC",
    "MAX_ERROR_DATA",
    "MAX_ERROR_MESSAGE",
    "MAX_INT_DIGITS",
    "MAX_RESPONSE_BYTES",
    "MalformedAnswerError",
    "UpdateLines",
    "bounded_error",
    "decode_line",
    "encode_message",
    "encode_value",
    "error_object",
    "is_request_id",
    "read_answer",
    "response_line",
    "short_error",
    "shown_id",
    "shown_method",
    "throttled",
]
