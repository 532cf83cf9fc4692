"""The server's one seam with pygls: its handler table, its server and protocol classes.

pygls registers the handlers (``fm.feature``, which also hands each its server) and is the
base of the server and protocol objects; reading lines, dispatching, answering and writing are
the transport's own. Invariant: everything of pygls the package relies on is listed in
:data:`PYGLS_MEMBERS` (checked against the installed pygls by
``tests/server/test_pygls_contract.py``; pyproject pins the minor versions it passed on), and
the transport overrides no pygls member but those in :data:`OVERRIDDEN`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from pygls.exceptions import (
    FeatureNotificationError,
    FeatureRequestError,
    JsonRpcException,
    JsonRpcMethodNotFound,
)
from pygls.feature_manager import FeatureManager
from pygls.protocol.json_rpc import JsonRPCProtocol, MsgId
from pygls.server import JsonRPCServer

from acp_sidecar.values import Value

TESTED_WITH = ("2.0", "2.1")
"""The pygls minor versions the transport's tests passed on."""


@attrs.frozen(repr=False, eq=False)
class Member(Value):
    """A pygls member the package relies on, and the parameters it is called or overridden
    with (``None``: an attribute or property, not called)."""

    owner: type[Any]
    name: str
    params: tuple[str, ...] | None

    @property
    def qualname(self) -> str:
        return f"{self.owner.__name__}.{self.name}"


PYGLS_MEMBERS = (
    Member(JsonRPCServer, "__init__", ("self", "protocol_cls", "converter_factory")),
    Member(JsonRPCServer, "protocol", None),
    Member(JsonRPCServer, "report_server_error", ("self", "error", "source")),
    Member(JsonRPCProtocol, "__init__", ("self", "server", "converter")),
    Member(JsonRPCProtocol, "fm", None),
    Member(JsonRPCProtocol, "notify", ("self", "method", "params")),
    Member(JsonRPCProtocol, "send_request", ("self", "method", "params", "callback", "msg_id")),
    Member(FeatureManager, "feature", ("self", "feature_name", "options")),
    Member(FeatureManager, "features", None),
    Member(FeatureManager, "builtin_features", None),
    Member(JsonRpcException, "__init__", ("self", "message", "code", "data")),
    Member(JsonRpcMethodNotFound, "of", ("method",)),
)

OVERRIDDEN = frozenset({"__init__", "notify", "send_request"})
"""The :class:`JsonRPCProtocol` members :class:`PyglsProtocol` and its subclasses replace:
pygls's own would write LSP-framed messages."""


class PyglsProtocol(JsonRPCProtocol):
    """pygls's protocol as the transport uses it: the handler table and the server."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.served: JsonRPCServer = server

    def handler(self, method: str) -> Callable[..., Any] | None:
        """The handler registered for ``method`` (its server already bound), if any."""
        found: Callable[..., Any] | None = self.fm.builtin_features.get(method)
        return found if found is not None else self.fm.features.get(method)

    def report_request_error(self, error: Exception) -> None:
        """Tell the server (``report_server_error``) about a request that failed unanswered by
        its handler (an unknown method), as pygls reports it."""
        self.served.report_server_error(error, FeatureRequestError)

    def report_notification_error(self, error: Exception) -> None:
        """Tell the server about a notification handler that raised (it has no answer)."""
        self.served.report_server_error(error, FeatureNotificationError)


def method_not_found(method: str) -> JsonRpcException:
    """pygls's ``-32601`` for ``method``."""
    error: JsonRpcException = JsonRpcMethodNotFound.of(method)
    return error


__all__ = [
    "OVERRIDDEN",
    "PYGLS_MEMBERS",
    "TESTED_WITH",
    "JsonRpcException",
    "Member",
    "MsgId",
    "PyglsProtocol",
    "method_not_found",
]
