"""``parse_mcp_servers``: ACP ``mcpServers`` entries -> configs, or one clear refusal each."""

from __future__ import annotations

from typing import Any

from acp_sidecar.mcp.config import (
    SSE_SUPPORTED,
    HttpServerConfig,
    SseServerConfig,
    StdioServerConfig,
    parse_mcp_servers,
)


def test_the_three_acp_shapes_become_configs() -> None:
    raw: list[dict[str, Any]] = [
        {
            "name": "fs",
            "command": "/usr/bin/mcp-fs",
            "args": ["--root", "/w"],
            "env": [{"name": "TOKEN", "value": "abc"}],
        },
        {"type": "stdio", "name": "nulls", "command": "/bin/x", "args": None, "env": None},
        {
            "type": "http",
            "name": "web",
            "url": "https://h.example/mcp",
            "headers": [{"name": "Authorization", "value": "Bearer t"}],
        },
        {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []},
    ]
    configs, problems = parse_mcp_servers(raw)
    assert problems == ()
    assert configs == (
        StdioServerConfig(
            name="fs", command="/usr/bin/mcp-fs", args=("--root", "/w"), env=(("TOKEN", "abc"),)
        ),
        StdioServerConfig(name="nulls", command="/bin/x"),
        HttpServerConfig(
            name="web", url="https://h.example/mcp", headers=(("Authorization", "Bearer t"),)
        ),
        SseServerConfig(name="old", url="http://127.0.0.1:9/sse"),
    )
    assert SSE_SUPPORTED is True


def test_bad_entries_are_refused_one_message_each_and_the_good_ones_kept() -> None:
    raw: list[Any] = [
        {"name": "ok", "command": "/bin/ok", "args": [], "env": []},
        {"name": "rel", "command": "node", "args": [], "env": []},
        {"name": "", "command": "/bin/x", "args": [], "env": []},
        {"name": "   ", "command": "/bin/x", "args": [], "env": []},
        {"command": "/bin/x", "args": [], "env": []},
        {"name": "ok", "command": "/bin/other", "args": [], "env": []},
        {"name": "bad\nname", "command": "/bin/x"},
        {"name": "x" * 65, "command": "/bin/x"},
        "not an object",
        {"name": "ws", "type": "websocket", "url": "ws://h"},
        {"name": "nourl", "type": "http", "headers": []},
        {"name": "ftp", "type": "http", "url": "ftp://h/x", "headers": []},
        {"name": "args", "command": "/bin/x", "args": [1]},
        {"name": "noenvname", "command": "/bin/x", "env": [{"value": "v"}]},
        {"name": "envname", "command": "/bin/x", "env": [{"name": "A=B", "value": "v"}]},
    ]
    configs, problems = parse_mcp_servers(raw)
    assert configs == (StdioServerConfig(name="ok", command="/bin/ok"),)
    assert problems == (
        "MCP server 'rel' was not started: it has a relative command (the ACP schema asks for an absolute path)",
        "MCP server #3 was not started: it has an empty name",
        "MCP server #4 was not started: it has an empty name",
        "MCP server #5 was not started: it has no name",
        "MCP server 'ok' was not started: it has the same name as an earlier server",
        "MCP server #7 was not started: it has a name with control characters",
        "MCP server #8 was not started: it has a name longer than 64 characters",
        "MCP server #9 was not started: it is not an object",
        "MCP server 'ws' was not started: it uses an unknown transport 'websocket'",
        "MCP server 'nourl' was not started: it has no url",
        "MCP server 'ftp' was not started: it has a url that is not http(s)://host/...",
        "MCP server 'args' was not started: it has args that are not an array of strings",
        "MCP server 'noenvname' was not started: it has an entry in env without a string name and value",
        "MCP server 'envname' was not started: it has an invalid variable name 'A=B' in env",
    )


def test_a_refusal_never_shows_a_header_or_env_value() -> None:
    secret = "sk-very-secret-value"
    raw: list[dict[str, Any]] = [
        {
            "type": "http",
            "name": "h",
            "url": "http://h/",
            "headers": [{"name": "Authorization", "value": secret + "\r\nX: y"}],
        },
        {"name": "e", "command": "/bin/x", "env": [{"name": "KEY", "value": secret + "\x00"}]},
    ]
    configs, problems = parse_mcp_servers(raw)
    assert configs == ()
    assert problems == (
        "MCP server 'h' was not started: it has an invalid value for header 'Authorization' in headers",
        "MCP server 'e' was not started: it has an invalid value for variable 'KEY' in env",
    )
    assert all(secret not in p for p in problems)


def test_duplicate_names_keep_the_first() -> None:
    configs, problems = parse_mcp_servers(
        [
            {"name": "a", "command": "/bin/one"},
            {"type": "http", "name": "a", "url": "http://h/", "headers": []},
        ]
    )
    assert [c.command for c in configs if isinstance(c, StdioServerConfig)] == ["/bin/one"]
    assert problems == (
        "MCP server 'a' was not started: it has the same name as an earlier server",
    )


def test_a_url_with_an_invalid_port_is_refused_not_left_to_crash_later() -> None:
    raw: list[dict[str, Any]] = [
        {"type": "http", "name": "big", "url": "http://h:99999/x", "headers": []},
        {"type": "sse", "name": "word", "url": "http://u:s3cret@h:abc/x", "headers": []},
        {"type": "http", "name": "ok", "url": "http://h:8080/x", "headers": []},
    ]
    configs, problems = parse_mcp_servers(raw)
    assert [c.name for c in configs] == ["ok"]
    assert problems == (
        "MCP server 'big' was not started: it has a url with an invalid port",
        "MCP server 'word' was not started: it has a url with an invalid port",
    )
