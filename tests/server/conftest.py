"""Fixtures for server tests: an in-process sidecar on pipes, and its client end."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from acp_sidecar.server.app import AcpServer
from tests.server.wire import WireClient, served


@pytest.fixture
async def connection() -> AsyncIterator[tuple[WireClient, AcpServer]]:
    """A fresh sidecar (``ScriptDriver``) and the raw client end of its wire."""
    async with served() as pair:
        yield pair


@pytest.fixture
async def wire(connection: tuple[WireClient, AcpServer]) -> WireClient:
    """The raw client end of a fresh, not yet initialized sidecar."""
    return connection[0]


@pytest.fixture
async def ready(wire: WireClient) -> WireClient:
    """A client that has initialized the sidecar."""
    await wire.initialize(fs={"readTextFile": True, "writeTextFile": True})
    return wire
