"""The authentication methods ``initialize`` offers, and the ids ``authenticate`` accepts.

There is no account: ``acp-sidecar configure``, run in a terminal, sets up the endpoint, and
``authenticate`` only re-reads the configuration; nothing here gates ``session/new``. The
``terminal`` method is offered only to a client that set ``clientCapabilities.auth.terminal``
(the schema forbids it otherwise); ``authenticate`` accepts every id, offered or not.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

from acp_sidecar.protocol.initialize import (
    AuthMethod,
    AuthMethodAgent,
    AuthMethodTerminal,
    ClientCapabilities,
)
from acp_sidecar.values import Value

if TYPE_CHECKING:
    from acp_sidecar.server.settings import ServeSettings

SCRIPT: Final = "acp-sidecar"
"""The console script's name (``[project.scripts]``)."""
CONFIGURE: Final = "configure"
"""The subcommand that sets up a model endpoint."""
CONFIGURE_ID: Final = "configure"
"""The ``agent`` method: always offered."""
CONFIGURE_TERMINAL_ID: Final = "configure-terminal"
"""The ``terminal`` method: offered to clients that run terminal methods."""
METHOD_IDS: Final = (CONFIGURE_ID, CONFIGURE_TERMINAL_ID)
"""Every id ``authenticate`` accepts."""
LABEL: Final = f"{SCRIPT} {CONFIGURE}"
"""The title a client gives the terminal it runs ``configure`` in."""

AGENT_NAME = "Configure a model endpoint"
AGENT_DESCRIPTION = (
    f"Run `{LABEL}` in a terminal to choose a model endpoint, store its key and check that "
    "it answers; new sessions pick it up without a restart. The slash-command console works "
    "without a model."
)
TERMINAL_NAME = "Configure a model endpoint in a terminal"
TERMINAL_DESCRIPTION = (
    f"Runs `{LABEL}` in a terminal: choose a provider and models, store the key, check the "
    "endpoint. The slash-command console works without a model."
)


@attrs.frozen(repr=False, eq=False)
class LaunchCommand(Value):
    """A command line that starts this sidecar: ``command`` then ``args``."""

    command: str
    """The program: an absolute path, or a name looked up on ``PATH``."""
    args: tuple[str, ...] = ()
    """Its arguments before the subcommand's (``-m acp_sidecar`` for an interpreter)."""


def launch_command(argv0: str, executable: str) -> LaunchCommand:
    """How to start this sidecar again from a terminal, given ``sys.argv[0]`` and
    ``sys.executable``.

    Started as the ``acp-sidecar`` console script (pip, pipx, uvx): that script, made absolute
    but with symlinks kept (a pipx link outlives upgrades of the venv behind it). Otherwise
    (``python -m acp_sidecar``, a test, an embedding): this interpreter with
    ``-m acp_sidecar``. With neither known, the script name, for ``PATH`` to find.
    """
    script = Path(argv0)
    if script.stem == SCRIPT and os.path.isfile(argv0):
        return LaunchCommand(os.path.abspath(argv0))
    if executable:
        return LaunchCommand(executable, ("-m", "acp_sidecar"))
    return LaunchCommand(SCRIPT)


def this_program() -> LaunchCommand:
    """:func:`launch_command` for the running process."""
    return launch_command(sys.argv[0], sys.executable)


def terminal_auth_meta(program: LaunchCommand, config: str | None = None) -> dict[str, object]:
    """The legacy ``_meta`` that makes a client run ``configure`` in a terminal.

    ``config``: the config file this server was told to use (``--config`` or
    ``ACP_SIDECAR_CONFIG``), passed on so that ``configure`` writes the file this server
    re-reads — the client's terminal has neither this process's arguments nor its environment.
    """
    chosen = ("--config", config) if config is not None else ()
    return {
        "terminal-auth": {
            "command": program.command,
            "args": [*program.args, *chosen, CONFIGURE],
            "label": LABEL,
        }
    }


def auth_methods(
    capabilities: ClientCapabilities, program: LaunchCommand, config: str | None = None
) -> list[AuthMethod]:
    """The methods to offer a client with these capabilities (see the module docstring)."""
    # Both carry the legacy ``terminal-auth`` ``_meta`` ({command, args, label}) that clients
    # read from before terminal methods were in the schema: Zed runs it (it requires
    # ``command`` and ``label``), the ACP registry's CI counts a method carrying it as a
    # terminal method, and some clients that know ``type: "terminal"`` run only the legacy form.
    methods: list[AuthMethod] = [
        AuthMethodAgent(
            id=CONFIGURE_ID,
            name=AGENT_NAME,
            description=AGENT_DESCRIPTION,
            meta=terminal_auth_meta(program, config),
        )
    ]
    if capabilities.auth.terminal:
        methods.append(
            AuthMethodTerminal(
                id=CONFIGURE_TERMINAL_ID,
                name=TERMINAL_NAME,
                description=TERMINAL_DESCRIPTION,
                args=[CONFIGURE],
                meta=terminal_auth_meta(program, config),
            )
        )
    return methods


def named_config(settings: ServeSettings | None) -> str | None:
    """The config file the server was told to use (``--config`` / ``ACP_SIDECAR_CONFIG``), for
    ``configure`` run from the client's terminal to write that same file; ``None``: the
    default location, which ``configure`` finds by itself."""
    if settings is None or not settings.location.explicit:
        return None
    return str(settings.location.path)


def is_our_method(method_id: str) -> bool:
    """Whether ``method_id`` is one of the methods this agent offers."""
    return method_id in METHOD_IDS
