"""The MCP servers an editor names in ``session/new`` / ``session/load``, as frozen values.

Parsing never raises for a bad entry: it is left out with one line saying why, which never
quotes an environment or header value (they may be secrets).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias
from urllib.parse import urlsplit

import attrs

SSE_SUPPORTED: Final = True
"""The SDK has a clean SSE client transport (``mcp.client.sse.sse_client``), so SSE servers are
connected like HTTP ones; ``initialize`` advertises ``mcpCapabilities.sse`` from this."""

MAX_NAME_CHARS: Final = 64
"""A server name longer than this is refused (it becomes part of every tool name)."""

_NAME = re.compile(r"[^\x00-\x1f\x7f]+")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_ENV_NAME = re.compile(r"[^=\x00]+")
_BAD_VALUE = re.compile(r"[\x00\r\n]")


@attrs.frozen
class StdioServerConfig:
    """A server the sidecar starts as a subprocess and talks to over its stdin/stdout."""

    name: str
    """The editor's name for the server; unique within a session."""
    command: str
    """Absolute path of the executable (ACP schema); a relative one is refused."""
    args: tuple[str, ...] = ()
    """Arguments after the command."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables the editor sets for it (ACP ``[{name, value}]``), over a minimal base."""


@attrs.frozen
class HttpServerConfig:
    """A server reached over MCP's streamable HTTP transport."""

    name: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    """Sent with every request (ACP ``[{name, value}]``); values may be credentials."""


@attrs.frozen
class SseServerConfig:
    """A server reached over MCP's older HTTP+SSE transport."""

    name: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()


McpServerConfig: TypeAlias = StdioServerConfig | HttpServerConfig | SseServerConfig


class _Refused(Exception):
    """One entry cannot be used; the message says why (and holds no secret value)."""


def parse_mcp_servers(
    raw: Sequence[Mapping[str, Any]],
) -> tuple[tuple[McpServerConfig, ...], tuple[str, ...]]:
    """The ACP ``mcpServers`` array as received (camelCase JSON dicts) -> the usable configs and
    one human message per refused entry (bad shape, relative command, empty/invalid or
    duplicate name, unsupported transport). Never raises for bad entries; never echoes env
    values or header values in a message."""
    configs: list[McpServerConfig] = []
    problems: list[str] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        label = f"MCP server #{index + 1}"
        try:
            if not isinstance(entry, Mapping):
                raise _Refused("is not an object")
            name = _name(entry)
            label = f"MCP server {name!r}"
            if name in seen:
                raise _Refused("has the same name as an earlier server")
            config = _config(name, entry)
        except _Refused as refused:
            problems.append(f"{label} was not started: it {refused}")
            continue
        seen.add(name)
        configs.append(config)
    return tuple(configs), tuple(problems)


def _name(entry: Mapping[str, Any]) -> str:
    name = entry.get("name")
    if not isinstance(name, str):
        raise _Refused("has no name")
    if not name.strip():
        raise _Refused("has an empty name")
    if not _NAME.fullmatch(name):
        raise _Refused("has a name with control characters")
    if len(name) > MAX_NAME_CHARS:
        raise _Refused(f"has a name longer than {MAX_NAME_CHARS} characters")
    return name


def _config(name: str, entry: Mapping[str, Any]) -> McpServerConfig:
    kind = entry.get("type", "stdio")
    match kind:
        case "stdio":
            return _stdio(name, entry)
        case "http":
            url, headers = _remote(entry)
            return HttpServerConfig(name=name, url=url, headers=headers)
        case "sse":
            if not SSE_SUPPORTED:
                raise _Refused("uses the SSE transport, which this agent does not support")
            url, headers = _remote(entry)
            return SseServerConfig(name=name, url=url, headers=headers)
        case str():
            raise _Refused(f"uses an unknown transport {kind[:40]!r}")
        case _:
            raise _Refused("has a type that is not a string")


def _stdio(name: str, entry: Mapping[str, Any]) -> StdioServerConfig:
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise _Refused("has no command")
    if "\x00" in command:
        raise _Refused("has a command with a NUL character")
    if not command.startswith("/"):
        raise _Refused("has a relative command (the ACP schema asks for an absolute path)")
    args = entry.get("args")
    if args is None:
        args = []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _Refused("has args that are not an array of strings")
    if any("\x00" in a for a in args):
        raise _Refused("has an argument with a NUL character")
    env = _pairs(entry.get("env"), "env", _ENV_NAME, "variable")
    return StdioServerConfig(name=name, command=command, args=tuple(args), env=env)


def _remote(entry: Mapping[str, Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
    url = entry.get("url")
    if not isinstance(url, str) or not url:
        raise _Refused("has no url")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise _Refused("has a url that cannot be parsed") from None
    if parts.scheme not in ("http", "https") or not host:
        raise _Refused("has a url that is not http(s)://host/...")
    try:
        parts.port  # noqa: B018 - only its check matters: a number in 0..65535, or none
    except ValueError:
        raise _Refused("has a url with an invalid port") from None
    if _BAD_VALUE.search(url):
        raise _Refused("has a url with a line break or NUL")
    return url, _pairs(entry.get("headers"), "headers", _HEADER_NAME, "header")


def _pairs(
    raw: object, field: str, name_pattern: re.Pattern[str], what: str
) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _Refused(f"has {field} that is not an array of {{name, value}}")
    pairs: list[tuple[str, str]] = []
    for item in raw:
        if not isinstance(item, Mapping):
            raise _Refused(f"has an entry in {field} that is not an object")
        key, value = item.get("name"), item.get("value")
        if not isinstance(key, str) or not isinstance(value, str):
            raise _Refused(f"has an entry in {field} without a string name and value")
        if not name_pattern.fullmatch(key):
            raise _Refused(f"has an invalid {what} name {key[:40]!r} in {field}")
        if _BAD_VALUE.search(value) if field == "headers" else "\x00" in value:
            # The value is never shown: it may be a credential.
            raise _Refused(f"has an invalid value for {what} {key!r} in {field}")
        pairs.append((key, value))
    return tuple(pairs)
