"""A model driver whose model profile (context window, prices) comes from the environment,
loadable in a subprocess with ``--driver tests.agent.model.configured:driver``: the wire tests
of usage and compaction configure the model in-process, not through command-line options.

``TEST_MODEL_BASE_URL``: the scripted endpoint; ``TEST_MODEL_WINDOW``: the context window
(unset: unknown); ``TEST_MODEL_PRICES``: ``INPUT,OUTPUT,CURRENCY`` per million tokens
(unset: none); ``TEST_MODEL_MAX_TOKENS``: the cap on a response.
"""

from __future__ import annotations

import os

from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.agent.model.config import ModelProfile, Prices
from tests.agent.model.harness import tool_registry


def driver() -> ModelDriver:
    env = os.environ
    window = env.get("TEST_MODEL_WINDOW")
    prices = None
    if env.get("TEST_MODEL_PRICES"):
        given, taken, currency = env["TEST_MODEL_PRICES"].split(",")
        prices = Prices(float(given), float(taken), currency)
    profile = ModelProfile(
        name="test-model", context_window=int(window) if window else None, prices=prices
    )
    config = ModelConfig(
        model="test-model",
        base_url=env["TEST_MODEL_BASE_URL"],
        api_key="sk-test",
        max_retries=0,
        request_timeout=10.0,
        max_tokens=int(env.get("TEST_MODEL_MAX_TOKENS", "1000")),
        models=(profile,),
    )
    registry = tool_registry()
    return ModelDriver(config, lambda: registry)
