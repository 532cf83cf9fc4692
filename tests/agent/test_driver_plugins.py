"""What ``--driver`` serves: a plain turn driver with the defaults, a full driver as it is."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from acp_sidecar.agent.driver import DriverBase, PlainDriver, Turn, load_driver_factory
from acp_sidecar.protocol import PromptCapabilities, StopReason


class TurnsOnly:
    prompt_capabilities = PromptCapabilities()

    async def run_turn(self, turn: Turn) -> StopReason:
        return "end_turn"


class WantsHistory(DriverBase):
    prompt_capabilities = PromptCapabilities()
    wants_history = True

    async def run_turn(self, turn: Turn) -> StopReason:
        return "end_turn"


@pytest.fixture
def plugin() -> Iterator[str]:
    module = types.ModuleType("driver_plugin_under_test")
    module.TurnsOnly = TurnsOnly  # type: ignore[attr-defined]
    module.WantsHistory = WantsHistory  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    yield module.__name__
    del sys.modules[module.__name__]


def test_a_turn_driver_is_served_with_the_defaults(plugin: str) -> None:
    driver = load_driver_factory(f"{plugin}:TurnsOnly")()
    assert isinstance(driver, PlainDriver)
    assert driver.wants_history is False
    assert isinstance(driver.inner, TurnsOnly)


def test_a_driver_that_declares_the_whole_contract_keeps_it(plugin: str) -> None:
    # The model driver loaded by --driver must keep its history, or it never compacts.
    driver = load_driver_factory(f"{plugin}:WantsHistory")()
    assert isinstance(driver, WantsHistory)
    assert driver.wants_history is True
