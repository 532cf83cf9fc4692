"""The model driver: an OpenAI-compatible streaming agent loop.

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


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})  # the lazy names too, before they are loaded
