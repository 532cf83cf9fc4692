"""``logout``: forget the endpoint's key stored in the config file.

Invariants: only a key the settings in force read from the config file is removed (with
``configure``'s writer: comments and other keys stay); a key from the environment is left, and
the answer names its variable; the key's value is never in an answer, a message or a log line.
After a removal the sessions answer as the console until a key is found again
(:meth:`~acp_sidecar.server.settings.ServeSettings.log_out`). What happened is said in the
answer's ``_meta`` and told to every open session.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final, Literal

import attrs

from acp_sidecar.bridge.notices import UserMessage
from acp_sidecar.protocol.errors import INTERNAL_ERROR, AcpError
from acp_sidecar.protocol.initialize import LogoutRequest, LogoutResponse
from acp_sidecar.protocol.methods import LOGOUT
from acp_sidecar.server.refresh import refresh_settings
from acp_sidecar.values import Value

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.settings import ServeSettings

logger = logging.getLogger(__name__)

META_KEY: Final = "acp-sidecar/logout"
"""The answer's ``_meta`` entry: ``{"outcome", "message", "configFile"}``."""

Outcome = Literal["removed", "environment", "nothing"]
"""What ``logout`` did: removed the stored key; left a key that comes from the environment;
found no key to forget."""


@attrs.frozen(repr=False, eq=False)
class Forgotten(Value):
    """What a ``logout`` did, and the text that tells the user."""

    outcome: Outcome
    message: str


def _shared(path: str) -> str:
    return (
        f"This affects every editor that runs acp-sidecar with this config file ({path}), "
        "not only this one."
    )


def forget_key(settings: ServeSettings) -> Forgotten:
    """Remove the key the settings in force read from the config file (module invariants).

    Raises:
        AcpError: the file could not be rewritten (``-32603``; it is left as it was).
    """
    key = settings.endpoint_key
    path = str(settings.location.path)
    endpoint = settings.endpoint
    if key is None or key.value is None:
        unset = "" if key is None or key.variable is None else f" (nor is ${key.variable} set)"
        return Forgotten(
            "nothing",
            f"Nothing to forget: no API key for {endpoint} is stored in the config file "
            f"{path}{unset}.",
        )
    if key.variable is not None:
        return Forgotten(
            "environment",
            f"Nothing was removed: the API key for {endpoint} comes from the environment "
            f"variable ${key.variable}, which logging out cannot change.\n\n"
            f"It is set in the environment acp-sidecar was started with (the editor's settings "
            f"for this agent, or the shell the editor was started from): remove it there and "
            f"restart the agent.",
        )
    from acp_sidecar.settings.reading import ConfigError
    from acp_sidecar.settings.writing import save_settings

    try:
        save_settings(settings.location.path, {"api_key": None})
    except ConfigError as exc:
        raise AcpError(
            INTERNAL_ERROR,
            f"Cannot log out: the config file {path} cannot be used ({exc.problems[0]}), so "
            "the key stored in it was not removed; fix the file (`acp-sidecar doctor` checks "
            "it) or remove its api_key line",
        ) from None
    except (OSError, ValueError) as exc:  # tomlkit's parse errors are ValueErrors
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise AcpError(
            INTERNAL_ERROR,
            f"Cannot log out: the config file {path} could not be rewritten ({reason}); the "
            "key stored in it was not removed",
        ) from None
    settings.log_out()
    return Forgotten(
        "removed",
        f"Logged out: the API key for {endpoint} was removed from the config file.\n\n"
        f"{_shared(path)}",
    )


def _after(settings: ServeSettings, forgotten: Forgotten) -> str:
    """The message, completed with what serves the sessions now the file was read again."""
    if forgotten.outcome != "removed":
        return forgotten.message
    key = settings.endpoint_key
    if not settings.logged_out and key is not None and key.variable is not None:
        return (
            f"{forgotten.message} The key from ${key.variable} is used from now on: it comes "
            "from the environment, which logging out cannot change."
        )
    return (
        f"{forgotten.message} Until a key is available again (`acp-sidecar configure` stores "
        "one), prompts are answered by the slash-command console."
    )


async def logout(server: Connection, params: LogoutRequest) -> LogoutResponse:
    """Forget the stored key (module invariants); ``-32601`` for a server without settings
    (it does not advertise ``logout``)."""
    settings = server.settings
    if settings is None:
        raise AcpError.method_not_found(LOGOUT)
    refresh_settings(server)  # decide on the file as it is now
    forgotten = forget_key(settings)
    refresh_settings(server)  # read back: the driver is replaced, the pickers told
    message = _after(settings, forgotten)
    logger.info("logout: %s (config file %s)", forgotten.outcome, settings.location.path)
    told = UserMessage("warning" if forgotten.outcome == "environment" else "info", message)

    async def tell() -> None:
        for session_id in list(server.sessions):
            server.tell(session_id, told)

    server.after_answer(tell())
    meta = {
        META_KEY: {
            "outcome": forgotten.outcome,
            "message": message,
            "configFile": str(settings.location.path),
        }
    }
    return LogoutResponse(meta=meta)
