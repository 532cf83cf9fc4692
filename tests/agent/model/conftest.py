"""Fixtures for the model driver: a scripted endpoint, a registry of test tools, an editor,
and drivers against the endpoint (the harness they use is in :mod:`tests.agent.model.harness`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.tools.registry import ToolRegistry
from tests.agent.model.fake_openai import ScriptedOpenAI
from tests.agent.model.harness import tool_registry
from tests.fakes import Editor


@pytest.fixture
async def endpoint() -> AsyncIterator[ScriptedOpenAI]:
    async with ScriptedOpenAI() as server:
        yield server


@pytest.fixture
def registry() -> ToolRegistry:
    return tool_registry()


@pytest.fixture
def editor() -> Editor:
    return Editor()


@pytest.fixture
async def make_driver(
    endpoint: ScriptedOpenAI, registry: ToolRegistry
) -> AsyncIterator[Callable[..., ModelDriver]]:
    """Makes drivers against the scripted endpoint (closed after the test)."""
    drivers: list[ModelDriver] = []

    def make(**overrides: Any) -> ModelDriver:
        settings: dict[str, Any] = {
            "model": "test-model",
            "base_url": endpoint.base_url,
            "api_key": "sk-test",
            "max_retries": 1,
            "request_timeout": 10.0,
        } | overrides
        driver = ModelDriver(ModelConfig(**settings), lambda: registry)
        drivers.append(driver)
        return driver

    yield make
    for driver in drivers:
        await driver.aclose()


@pytest.fixture
def driver(make_driver: Callable[..., ModelDriver]) -> ModelDriver:
    return make_driver()
