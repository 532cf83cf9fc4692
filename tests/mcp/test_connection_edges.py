"""Edges of the connection layer: URLs the parser never saw, long server errors, a
cancelled ``aclose``, and ``tools/list_changed`` that changes nothing."""

from __future__ import annotations

import pytest

from acp_sidecar.mcp.config import HttpServerConfig, SseServerConfig
from acp_sidecar.mcp.errors import describe_failure

LIMIT = 300
"""The longest failure line a server's text may make (errors.one_line)."""


@pytest.mark.parametrize(
    "url", ["http://u:pw@h:99999/x", "http://u:pw@h:abc/x", "http://u:pw@[::1/x", "http://h:-1/"]
)
def test_a_failure_line_for_an_unparsable_url_neither_raises_nor_shows_it(url: str) -> None:
    # Configs made without parse_mcp_servers (or by a future parser) must not crash here.
    for config in (
        HttpServerConfig(name="h", url=url, headers=(("Authorization", "Bearer s3cret"),)),
        SseServerConfig(name="h", url=url, headers=(("Authorization", "Bearer s3cret"),)),
    ):
        line = describe_failure(RuntimeError(f"POST {url} failed, sent Bearer s3cret"), config)
        assert line.startswith("RuntimeError: POST ")
        assert "pw" not in line and "s3cret" not in line
