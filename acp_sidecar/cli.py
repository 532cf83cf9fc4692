"""The ``acp-sidecar`` command: parse, layer the config file under the options, dispatch.

Imports nothing heavy at module level (``--version`` answers at once). Only ``serve`` owns
stdout as the ACP wire; the other commands write their reports there.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp_sidecar.command_line.parser import build_parser
from acp_sidecar.command_line.reports import report, run_replay, run_sessions, run_tools
from acp_sidecar.command_line.serving import (
    build_server,
    model_driver_factory,
    run_serve,
    tools_provider,
)

if TYPE_CHECKING:
    import argparse

__all__ = [
    "build_parser",
    "build_server",
    "main",
    "model_driver_factory",
    "tools_provider",
    "with_config_file",
]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status.

    The cyclic collector is paused for the start and resumed on return (``serve`` resumes it
    once its server is built): a start makes tens of thousands of lasting objects (pygls's
    types, ours, the converter) and next to no garbage, and each collection meanwhile only
    rescans them -- a fifth of a cold start.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return run_command(argv)
    finally:
        if collecting:
            gc.enable()


def run_command(argv: Sequence[str] | None) -> int:
    """:func:`main`'s work, with the collector paused."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command not in (None, "serve"):
        # doctor reports a failed request itself, redacted: the endpoint's warnings would
        # repeat it whole.
        log_to_stderr(args, "ERROR" if args.command == "doctor" else "WARNING")
    if args.command == "configure":
        # Before the layering: configure edits the file itself, not the file under the
        # environment, and must not refuse to fix a file the others cannot use.
        from acp_sidecar.configure.command import run_configure

        return run_configure(args)
    try:
        args = with_config_file(args)
    except ValueError as exc:
        return report(str(exc), status=2)
    match args.command:
        case "tools":
            return run_tools(args)
        case "sessions":
            return run_sessions(args)
        case "replay":
            return run_replay(args)
        case "demo":
            from acp_sidecar.demo import run_demo

            return run_demo(tools=args.tools or (), store=args.store)
        case "doctor":
            from acp_sidecar.doctor import run_doctor

            return run_doctor(args)
        case _:
            return run_serve(parser, args)


def log_to_stderr(args: argparse.Namespace, default: str) -> None:
    """Logging for a command other than ``serve``: at ``--log-level`` (else ``default``), to
    stderr or ``--log-file``. The config file's logging settings are ``serve``'s."""
    import logging

    handler: logging.Handler = logging.StreamHandler(sys.stderr)
    unopened: OSError | None = None
    if args.log_file:
        try:
            handler = logging.FileHandler(args.log_file, encoding="utf-8")
        except OSError as exc:
            unopened = exc
    shown = "%(levelname)s %(name)s: %(message)s" if args.log_level else "%(message)s"
    handler.setFormatter(logging.Formatter(shown))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(args.log_level or default)
    if unopened is not None:
        root.error(
            "--log-file %s cannot be opened (%s): logging to stderr", args.log_file, unopened
        )


def with_config_file(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` completed from the environment and the config file (``acp_sidecar.settings``).

    ``serve`` does not stop for a config file it cannot use, nor for a variable with a bad
    value: it goes on without them and keeps the file's problems in ``args.config_problems``,
    for the editor to show after ``session/new`` (an editor shows nothing of stderr; see
    :mod:`acp_sidecar.server.settings`, which also re-reads the file); ``doctor`` goes on too,
    and reports them. Every other command refuses. ``args.command_line`` keeps the options as
    given (``doctor`` says where each setting came from; ``serve`` layers the file under them
    again when it changes) and ``args.config_stamp`` the file's stamp taken before it was read.

    Raises:
        ValueError: the file cannot be used (outside ``serve``: the message names the file,
            line and key), or an environment variable read here has a bad value.
    """
    import os

    from acp_sidecar.settings import (
        ConfigError,
        FileSettings,
        config_path,
        file_stamp,
        read_settings,
    )
    from acp_sidecar.settings.layering import layered

    serving = args.command in (None, "serve")
    location = config_path(getattr(args, "config", None))
    stamp = file_stamp(location.path)
    problems: tuple[object, ...] = ()
    try:
        file = read_settings(location)
    except ConfigError as exc:
        if args.command not in (None, "serve", "doctor"):
            raise ValueError(f"the config file cannot be used:\n{exc}") from None
        file = FileSettings(location)
        problems = exc.problems
    if serving:
        from acp_sidecar.server.settings import layered_leniently

        # A bad variable is left out here; the server's settings tell the editor about it.
        result, _problems = layered_leniently(args, file, os.environ)
    else:
        result = layered(args, file)
    result.command_line = args
    result.config_file = file
    result.config_problems = problems
    result.config_stamp = stamp
    return result
