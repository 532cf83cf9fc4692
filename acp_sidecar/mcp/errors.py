"""The errors an MCP connection raises to its callers: never an SDK or transport exception, and
never a header or environment value in a message.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from acp_sidecar.mcp.config import HttpServerConfig, McpServerConfig, SseServerConfig


class McpError(Exception):
    """Something went wrong with an MCP server."""


class McpServerGone(McpError):
    """The server exited, or its connection is closed: no request can reach it any more."""


class McpCallError(McpError):
    """The server answered a request with a JSON-RPC error, or with a result that is unusable."""


def innermost(error: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(error, BaseExceptionGroup):
        inner = [e for e in error.exceptions if not isinstance(e, asyncio.CancelledError)]
        error = (inner or list(error.exceptions))[0]
    return error


def describe_failure(error: BaseException, config: McpServerConfig) -> str:
    """One line saying why, without header values, env values or URL credentials."""
    match error:
        case MCPError() if error.code == types.CONNECTION_CLOSED:
            return "it exited or closed its connection before answering"
        case MCPError():
            return f"it answered an error: {one_line(error.message)} (code {error.code})"
        case FileNotFoundError():
            return "its command does not exist"
        case PermissionError():
            return "its command cannot be executed (permission denied)"
        case OSError() if error.strerror:
            return f"it could not be started: {error.strerror}"
        case ValidationError():
            return "it sent an answer that does not follow the MCP schema"
        case httpx2.ConnectError():
            return "nothing answered at its URL (connection failed)"
        case httpx2.HTTPStatusError():
            return f"its URL answered HTTP {error.response.status_code}"
    text = f"{type(error).__name__}: {error}"
    if isinstance(config, HttpServerConfig | SseServerConfig):
        text = text.replace(config.url, _safe_url(config.url))
        for _, value in config.headers:
            if value:
                text = text.replace(value, "***")
    return one_line(text)


def _safe_url(url: str) -> str:
    """``url`` without credentials, query or fragment. Never raises: a URL that does not
    parse (an invalid port, a broken IPv6 host) becomes a placeholder instead."""
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError:
        return "<its url>"
    return f"{parts.scheme}://{host}{f':{port}' if port else ''}{parts.path}"


def one_line(error: object) -> str:
    """``str(error)`` on one line (runs of whitespace become one space), at most 300
    characters: what a server or a library says is shown, never unbounded."""
    text = " ".join(str(error).split())
    return text if len(text) <= 300 else text[:299] + "…"
