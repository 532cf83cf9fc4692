"""The model driver: an OpenAI-compatible streaming agent loop.

Importing this package does not import ``openai`` (it loads when the first turn runs).
"""

from acp_sidecar.agent.model.config import ModelConfig
from acp_sidecar.agent.model.driver import ModelDriver

__all__ = ["ModelConfig", "ModelDriver"]
