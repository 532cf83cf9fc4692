"""The config file re-read on a live connection: the settings a running server can change
(:mod:`acp_sidecar.server.settings`) applied, the driver replaced, the user told what is wrong.

Invariant: those settings change only in :func:`refresh_settings`, which never fails the
request that calls it. A driver pinned at start (``--driver``) is never replaced.
"""

from __future__ import annotations

import logging

from acp_sidecar.agent.driver import DriverFactory
from acp_sidecar.server.config_options import announce_changed_options, config_options
from acp_sidecar.server.connection import Connection

logger = logging.getLogger(__name__)


def refresh_settings(connection: Connection) -> None:
    """Read the config file again if it changed, and apply what a running server can: called
    on ``authenticate`` and before each ``session/new`` (``load``, ``resume``) makes its
    session."""
    settings = connection.settings
    if settings is None:
        return
    try:
        changed = settings.refresh()
    except Exception:  # a bug here must not cost the user the session
        logger.exception("re-reading the config file failed")
        return
    if changed is None:
        return
    live = changed.after
    connection.default_mode = live.default_mode
    connection.allow_outside_workspace = live.allow_outside_workspace
    connection.mcp_start_timeout = live.mcp_start_timeout
    connection.budget = live.budget
    if changed.before.secret_variable != live.secret_variable:
        from acp_sidecar.tools.environment import configure_child_environment

        configure_child_environment(settings.child_environment())
    if changed.model and not settings.driver_pinned:
        replace_driver(connection, settings.driver_factory(connection.tools))


def replace_driver(connection: Connection, factory: DriverFactory | None) -> None:
    """Serve later turns and new sessions with ``factory``'s driver (``None``: the console);
    the open sessions whose config options change (the model picker) are sent them, and the
    old driver is closed once the turns running on it have ended."""
    drivers = connection.drivers
    sessions = connection.sessions.items() if drivers.made else ()
    before = {session_id: config_options(connection, s) for session_id, s in sessions}
    running = [s.idle for s in connection.sessions.values() if s.running is not None]
    drivers.replace(factory or connection.console_driver, running, connection.spawn)
    announce_changed_options(connection, before)


def tell_settings(connection: Connection, session_id: str) -> None:
    """After the answer, show the user of ``session_id`` what is wrong with the settings
    (every time) and the warnings not shown yet on this connection."""
    settings = connection.settings
    if settings is None:
        return
    problems = settings.problems()
    warned = connection.settings_warned
    warnings = [m for m in settings.warning_messages() if m.text not in warned]
    if not problems and not warnings:
        return
    warned.update(m.text for m in warnings)
    told = (*problems, *warnings)

    async def tell() -> None:
        connection.tell(session_id, *told)

    connection.after_answer(tell())
