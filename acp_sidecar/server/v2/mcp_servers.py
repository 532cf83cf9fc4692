"""The MCP server entries of a v2 ``session/new`` or ``session/resume``: the transports v2
offers (``session.mcp``: ``stdio`` and ``http``), or ``-32602``.

Invariant: checked before anything is started or attached, so a refused request leaves nothing
behind; an entry that passes is handed to the core as sent (:mod:`acp_sidecar.mcp.config` reads
v1's and v2's entries alike, and tells the user of one it cannot start).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from acp_sidecar.protocol.errors import AcpError

TRANSPORTS: Final = ("stdio", "http")
"""What ``initialize`` advertises in ``session.mcp``; v2 names no other transport we serve."""


def check_transports(servers: Sequence[Mapping[str, Any]]) -> None:
    """``-32602`` for the first entry whose ``type`` is not one of :data:`TRANSPORTS` (v2:
    "Agents MUST reject a request with a transport they do not support")."""
    for index, entry in enumerate(servers):
        kind = entry.get("type")
        if kind in TRANSPORTS:
            continue
        shown = repr(kind[:40]) if isinstance(kind, str) else "missing"
        raise AcpError.invalid_params(
            f"Invalid params: mcpServers[{index}].type: {shown} is not a transport this agent "
            f"serves ({', '.join(TRANSPORTS)})"
        )
