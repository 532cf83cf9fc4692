"""The errors an MCP connection raises to its callers.

Invariant: a caller of :meth:`acp_sidecar.mcp.connection.McpConnection.call_tool` sees only
these (and ``CancelledError`` when it cancels the call), never an SDK or transport exception.
Their messages name the server and never carry header or environment values.
"""

from __future__ import annotations


class McpError(Exception):
    """Something went wrong with an MCP server."""


class McpServerGone(McpError):
    """The server exited, or its connection is closed: no request can reach it any more."""


class McpCallError(McpError):
    """The server answered a request with a JSON-RPC error, or with a result that is unusable."""
