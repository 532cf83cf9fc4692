"""The model driver: an OpenAI-compatible streaming agent loop.

``ModelDriver(ModelConfig.from_env(...), lambda: registry)`` answers each prompt with a model that
streams text and reasoning, calls the registry's tools through the guarded pipeline, reads
their results and carries on until it is done.

Importing this package does not import ``openai`` (it loads when the first turn runs).
"""

from acp_sidecar.agent.model.config import ModelConfig
from acp_sidecar.agent.model.driver import ModelDriver

__all__ = ["ModelConfig", "ModelDriver"]
