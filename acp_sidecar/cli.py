"""The ``acp-sidecar`` command line.

Invariants: this module imports nothing heavy at module level; each subcommand imports what
it needs when it runs, so ``--version`` and ``--help`` answer at once. The way editors spawn
the agent — no arguments, or just ``serve`` — does not even build the argument parser: every
millisecond of a cold start is one the editor waits for.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp_sidecar import __version__

if TYPE_CHECKING:
    import argparse

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

DRIVER_HELP = (
    "load the driver from MODULE:ATTR, a callable that returns a driver: an object with a "
    "`prompt_capabilities` attribute and `async run_turn(turn) -> stop reason` (see "
    "acp_sidecar.agent.driver). MODULE must be importable (on PYTHONPATH). Meant for tests, "
    "benchmarks and experiments; the default driver is the slash-command console for the tools"
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="acp-sidecar",
        description=(
            "An Agent Client Protocol (ACP v1) agent for editors. Spawn it as a subprocess "
            "and speak ACP (JSON-RPC 2.0, one JSON object per line) on its stdin/stdout."
        ),
        epilog="With no command, acp-sidecar serves ACP on stdio (the same as `serve`).",
    )
    parser.add_argument("--version", action="version", version=f"acp-sidecar {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="serve ACP on stdin/stdout (the default)",
        description=(
            "Serve ACP v1 on stdin/stdout: one JSON-RPC message per line. Stdout carries "
            "only protocol messages; logs go to stderr or --log-file."
        ),
    )
    add_serve_options(serve)
    return parser


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``serve``."""
    parser.add_argument("--log-file", metavar="PATH", help="write logs to PATH instead of stderr")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=LOG_LEVELS,
        help="the least severe log level written (default: WARNING)",
    )
    parser.add_argument("--driver", metavar="MODULE:ATTR", help=DRIVER_HELP)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments in ([], ["serve"]):
        from acp_sidecar.server.stdio import run_stdio

        return run_stdio()
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.command is None:
        args = parser.parse_args(["serve"])
    return run_serve(parser, args)


def run_serve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``acp-sidecar serve``: the ACP agent on stdio until the client goes away."""
    from acp_sidecar.server.stdio import run_stdio

    driver_factory = None
    if args.driver:
        from acp_sidecar.agent.driver import load_driver_factory

        try:
            driver_factory = load_driver_factory(args.driver)
        except (ValueError, ImportError, AttributeError) as exc:
            parser.error(f"--driver {args.driver}: {exc}")
    return run_stdio(driver_factory, log_level=args.log_level, log_file=args.log_file)
