"""``acp-sidecar serve``: the server built from the options, once the wire is taken. Nothing
heavy at module level: the server, drivers and tools are imported when ``serve`` runs.
"""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from acp_sidecar.agent.driver import DriverFactory
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.server.app import AcpServer
    from acp_sidecar.store import SessionStore

TERMINAL_HINT = (
    "acp-sidecar: waiting for an editor to speak ACP (JSON-RPC, one message per line) on "
    "stdin/stdout. To watch it work, run `acp-sidecar demo`; `acp-sidecar --help` lists the "
    "commands; Ctrl-D ends it."
)
"""The one line ``serve`` writes on stderr when its stdin is a terminal."""


def tools_provider(args: argparse.Namespace) -> ToolsProvider:
    """The tool set the options ask for.

    ``--tools`` modules are found the way ``python -m`` finds them: in the current directory
    too, not only among installed packages (a console script's ``sys.path`` lacks it).
    """
    import os

    from acp_sidecar.agent.toolset import ToolsProvider

    if args.tools and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    return ToolsProvider(args.tools or ())


def model_driver_factory(args: argparse.Namespace, tools: ToolsProvider) -> DriverFactory | None:
    """The model driver the options and environment ask for, if any.

    A configuration that cannot work (a bad value) does not stop the server: every prompt is
    answered with what is wrong, so the user sees it in the editor.
    """
    import os

    from acp_sidecar.agent.driver import MessageDriver
    from acp_sidecar.agent.model import ModelDriver
    from acp_sidecar.server.settings import model_settings

    config, problem = model_settings(args, os.environ)
    if problem is not None:
        return lambda: MessageDriver(problem)
    if config is None:
        return None
    model = config
    return lambda: ModelDriver(model, lambda: tools.registry)


def run_serve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``acp-sidecar serve``: the ACP agent on stdio until the client goes away."""

    import os

    from acp_sidecar.server.hardening import harden_process
    from acp_sidecar.server.stdio import run_stdio

    harden_process()  # first: before any code of a driver or a tool runs (see the module)
    if os.isatty(0):  # typed in a terminal, not started by an editor: say what it waits for
        sys.stderr.write(TERMINAL_HINT + "\n")

    # Built once the wire is taken: what user modules (--driver, --tools) print at import
    # goes to stderr, never onto the wire.
    return run_stdio(
        lambda: collecting_again(build_server(parser, args)),
        log_level=args.log_level,
        log_file=args.log_file,
    )


def collecting_again(server: AcpServer) -> AcpServer:
    """``server``, with the cyclic collector resumed (``cli.main`` paused it for the start)
    and what the start made frozen out of its reach: it lasts as long as the process, and
    every full collection would rescan it."""
    gc.freeze()
    gc.enable()
    return server


def build_server(parser: argparse.ArgumentParser, args: argparse.Namespace) -> AcpServer:
    """The server ``serve`` runs for ``args`` (completed by ``cli.with_config_file``); it
    also sets the rules the tools' child processes get their environment from."""
    from acp_sidecar.server.settings import ServeSettings
    from acp_sidecar.tools.environment import configure_child_environment

    settings = ServeSettings.from_args(args)
    settings.log_problems()
    driver_factory = None
    if args.driver:
        from acp_sidecar.agent.driver import load_driver_factory

        try:
            driver_factory = load_driver_factory(args.driver)
        except (ValueError, ImportError, AttributeError) as exc:
            parser.error(f"--driver {args.driver}: {exc}")

    configure_child_environment(settings.child_environment())
    tools = tools_provider(args)
    factory = driver_factory if args.driver else settings.driver_factory(tools)

    from acp_sidecar.server.app import AcpServer

    def make_store() -> SessionStore:
        from acp_sidecar.store import SessionStore

        return SessionStore(args.store, fsync=args.fsync)

    live = settings.live

    def job_records() -> Path:
        from acp_sidecar.store.paths import resolve_store_dir
        from acp_sidecar.tools.builtin.shell import RECORDS_DIR

        return resolve_store_dir(args.store) / RECORDS_DIR

    return AcpServer(
        factory,
        tools=tools,
        store=make_store,
        allow_outside_workspace=live.allow_outside_workspace,
        mcp_start_timeout=live.mcp_start_timeout,
        default_mode=live.default_mode,
        settings=settings,
        job_records=job_records,
        budget=live.budget,
        acp_v2=bool(args.acp_v2),
    )
