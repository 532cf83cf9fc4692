"""What the user is shown of the endpoint's secrets: none of them (:func:`redacted` is the one
pass every endpoint text goes through), and where the key comes from.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote, urlsplit

from acp_sidecar.agent.model.config import ModelConfig
from acp_sidecar.tools.environment import MIN_SECRET_CHARS

NAME_A_KEY: Final = (
    'The config file names this endpoint but no key: add api_key_env = "NAME" (the variable '
    "that holds it), or store one with `acp-sidecar configure`."
)


def key_fix(config: ModelConfig) -> str:
    """The sentence that follows "needs an API key" (no key) or "rejected the API key"."""
    variable = config.key_variable
    if config.api_key is None:
        if variable is None:
            return NAME_A_KEY
        return f"Set {variable} in the environment acp-sidecar runs in."
    if variable is None:
        return "Check the key stored in the config file (`acp-sidecar configure` replaces it)."
    return f"Check {variable}."


def key_check_fix(config: ModelConfig) -> str:
    """The fix under a failed key check (``configure``, ``doctor``)."""
    variable = config.key_variable
    if config.api_key is None:
        if variable is None:
            return NAME_A_KEY
        return (
            f"Set {variable} to the endpoint's key in the environment your editor starts "
            "acp-sidecar in."
        )
    if variable is None:
        return "Store the right key: `acp-sidecar configure` replaces it."
    return f"Check the value of ${variable}: the endpoint refused it."


def redact(text: str, secret: str | None, placeholder: str = "[API key]") -> str:
    """``text`` with ``secret`` replaced, should a server have echoed it (a placeholder
    shorter than :data:`MIN_SECRET_CHARS`, such as ``none``, is no secret)."""
    if not secret or len(secret) < MIN_SECRET_CHARS:
        return text
    return text.replace(secret, placeholder)


def credentials(url: str) -> tuple[str, str] | None:
    """The user name and password ``url`` carries, decoded (``None``: none)."""
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return None
    if user is None and password is None:
        return None
    return unquote(user or ""), unquote(password or "")


def redacted(text: str, config: ModelConfig) -> str:
    """``text`` as it may be shown or logged (see the module invariants)."""
    url, shown = config.endpoint_url, config.shown_url
    if url != shown:
        text = text.replace(url, shown)
        start = url.find("//") + 2 if "//" in url else 0
        userinfo = url[start : start + len(url) - len(shown) - 1]  # as written, encoded
        _user, password = credentials(url) or ("", "")
        for secret in {password, userinfo.partition(":")[2]}:
            text = redact(text, secret, "[password]")
    return redact(text, config.api_key)
