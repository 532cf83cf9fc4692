"""Provider presets: where a well-known endpoint lives, which variable holds its key, a model to
start with. Frozen data, suggestions only.
"""

from __future__ import annotations

from typing import Final

import attrs


@attrs.frozen
class Preset:
    """One provider ``configure`` knows."""

    id: str
    """What ``--provider`` and the prompt accept."""
    name: str
    """What the user reads."""
    base_url: str | None
    """Its OpenAI-compatible API root; ``None``: the user gives it (``custom``)."""
    key_env: str | None
    """The environment variable that usually holds its key; ``None``: it needs no key."""
    model: str | None = None
    """A model to suggest as the default; ``None``: pick from the endpoint's listing."""

    @property
    def local(self) -> bool:
        """A server on this machine (it needs no key)."""
        return self.base_url is not None and self.base_url.startswith("http://localhost")


CUSTOM: Final = "custom"

PRESETS: Final[tuple[Preset, ...]] = (
    Preset("openai", "OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-5-mini"),
    # DeepSeek documents https://api.deepseek.com as the base URL (``/v1`` is accepted too).
    Preset(
        "deepseek", "DeepSeek", "https://api.deepseek.com", "DEEPSEEK_API_KEY", "deepseek-v4-flash"
    ),
    Preset("openrouter", "OpenRouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    Preset("ollama", "Ollama (local)", "http://localhost:11434/v1", None),
    Preset("llama.cpp", "llama.cpp server (local)", "http://localhost:8080/v1", None),
    Preset("vllm", "vLLM (local)", "http://localhost:8000/v1", None),
    Preset(CUSTOM, "another OpenAI-compatible URL", None, None),
)
"""Every preset, in the order the prompt lists them."""

PRESETS_BY_ID: Final = {preset.id: preset for preset in PRESETS}


def preset_for_url(base_url: str | None) -> Preset | None:
    """The preset whose URL is ``base_url`` (a trailing ``/`` aside); ``None``: none is."""
    if base_url is None:
        return None
    wanted = base_url.rstrip("/")
    for preset in PRESETS:
        if preset.base_url is not None and preset.base_url.rstrip("/") == wanted:
            return preset
    return None
