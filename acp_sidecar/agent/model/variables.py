"""The environment variables that name a model: each one set makes ``serve`` drive a model.

Apart from :mod:`.config` so that a start without a model reads them without building it.
"""

from __future__ import annotations

from typing import Final

MODEL_ENV: Final = "ACP_SIDECAR_MODEL"
MODELS_ENV: Final = "ACP_SIDECAR_MODELS"
"""The models offered in the picker, names separated by commas (as ``--models``)."""
MODEL_INFO_ENV: Final = "ACP_SIDECAR_MODEL_INFO"
"""What is known of each model, one ``--model-info`` value each, separated by semicolons."""
