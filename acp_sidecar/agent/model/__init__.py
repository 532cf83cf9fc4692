"""The model driver: an OpenAI-compatible streaming agent loop.

``ModelDriver(ModelConfig.from_env(...), lambda: registry)`` answers each prompt with a model that
streams text and reasoning, calls the registry's tools through the guarded pipeline, reads
their results and carries on until it is done.

Importing this package does not import ``openai`` (it loads when the first turn runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_sidecar.agent.model.config import ModelConfig

if TYPE_CHECKING:
    from acp_sidecar.agent.model.driver import ModelDriver


def __getattr__(name: str) -> Any:
    # The driver loads on first use: the settings read ``.config`` at every start.
    if name != "ModelDriver":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from acp_sidecar.agent.model.driver import ModelDriver

    globals()["ModelDriver"] = ModelDriver
    return ModelDriver


__all__ = ["ModelConfig", "ModelDriver"]
