"""A connection's wire mapping: which handler serves each method, the types its params decode
to, and how a core update is encoded, for the one protocol version negotiated.

Nothing here imports a handler: :mod:`acp_sidecar.server.app` builds the v1 mapping from its
table, and the v2 one is built from it (:mod:`acp_sidecar.server.v2.mapping`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol.methods import MethodTypes
from acp_sidecar.protocol.updates import SessionUpdate
from acp_sidecar.values import Value

Version: TypeAlias = Literal[1, 2]
"""An ACP major version this agent speaks."""

UpdateEncoder: TypeAlias = Callable[
    [SessionUpdate], "dict[str, Any] | tuple[dict[str, Any], ...] | None"
]
"""A core update → its wire dict for the connection's version, or several to send in order
(v2 draws a terminal card as its terminal and its card), or ``None``: not sent."""


@attrs.frozen(repr=False, eq=False)
class WireMapping(Value):
    """Everything a connection does differently by protocol version."""

    version: Version
    """The version this mapping speaks."""
    handlers: Mapping[str, Callable[..., Any]]
    """Each served method's ``handler(connection, params)``; a method missing is ``-32601``."""
    method_types: Mapping[str, MethodTypes]
    """Each served method's params (and result) types."""
    encode_update: UpdateEncoder
    """How :meth:`~acp_sidecar.server.connection.Connection.send_update` encodes."""
