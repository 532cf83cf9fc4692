"""The model driver: an OpenAI-compatible streaming agent loop.

Importing this package does not import ``openai`` (it loads when the first turn runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp_sidecar.agent.model.config import ModelConfig
    from acp_sidecar.agent.model.driver import ModelDriver


def __getattr__(name: str) -> Any:
    # Both load on first use: a start without a model reads only ``.variables``.
    value: Any
    if name == "ModelDriver":
        from acp_sidecar.agent.model.driver import ModelDriver

        value = ModelDriver
    elif name == "ModelConfig":
        from acp_sidecar.agent.model.config import ModelConfig

        value = ModelConfig
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = ["ModelConfig", "ModelDriver"]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})  # the lazy names too, before they are loaded
