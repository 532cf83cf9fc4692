"""The ``acp-sidecar`` command line.

Invariants: this module imports nothing heavy at module level; each subcommand imports what
it needs when it runs, so ``--version`` and ``--help`` answer at once. The way editors spawn
the agent — no arguments, or just ``serve`` — does not even build the argument parser: every
millisecond of a cold start is one the editor waits for. The serve options are accepted with
or without the word ``serve``. Only ``serve`` owns stdout as the ACP wire; the other
subcommands write their reports to stdout.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp_sidecar import __version__

if TYPE_CHECKING:
    import argparse

    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.server.app import AcpServer

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

DRIVER_HELP = (
    "load the driver from MODULE:ATTR, a callable that returns a driver: an object with a "
    "`prompt_capabilities` attribute and `async run_turn(turn) -> stop reason` (see "
    "acp_sidecar.agent.driver). MODULE must be importable (on PYTHONPATH). Meant for tests, "
    "benchmarks and experiments; the default driver is the slash-command console for the tools"
)

TOOLS_HELP = (
    "also offer the tools at MODULE:ATTR: a ToolDefinition, a list of them, or a callable "
    "returning either (repeatable). Installed packages can offer tools through the "
    "`acp_sidecar.tools` entry-point group. A module that fails to load is reported on "
    "stderr and skipped"
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    import argparse

    # Options are accepted before and after the subcommand. The subcommand's copies default
    # to SUPPRESS so that they cannot overwrite a value given before it.
    common, common_sub = (argparse.ArgumentParser(add_help=False) for _ in range(2))
    serving, serving_sub = (argparse.ArgumentParser(add_help=False) for _ in range(2))
    add_tool_options(common)
    add_tool_options(common_sub, suppress=True)
    add_serve_options(serving)
    add_serve_options(serving_sub, suppress=True)
    parser = argparse.ArgumentParser(
        prog="acp-sidecar",
        description=(
            "An Agent Client Protocol (ACP v1) agent for editors. Spawn it as a subprocess "
            "and speak ACP (JSON-RPC 2.0, one JSON object per line) on its stdin/stdout."
        ),
        epilog="With no command, acp-sidecar serves ACP on stdio (the same as `serve`).",
        parents=[common, serving],
    )
    parser.add_argument("--version", action="version", version=f"acp-sidecar {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser(
        "serve",
        help="serve ACP on stdin/stdout (the default)",
        description=(
            "Serve ACP v1 on stdin/stdout: one JSON-RPC message per line. Stdout carries "
            "only protocol messages; logs go to stderr or --log-file."
        ),
        parents=[common_sub, serving_sub],
    )
    listing = commands.add_parser(
        "tools",
        help="list every registered tool with its JSON Schema",
        description="List the tools a session offers (built-in and loaded) with their schemas.",
        parents=[common_sub],
    )
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    return parser


def _default(value: object, suppress: bool) -> object:
    import argparse

    return argparse.SUPPRESS if suppress else value


def add_tool_options(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """Options that decide which tools are offered (``serve`` and ``tools``)."""
    parser.add_argument(
        "--tools",
        metavar="MODULE:ATTR",
        action="append",
        default=_default(None, suppress),
        help=TOOLS_HELP,
    )


def add_serve_options(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """The options of ``serve``."""
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        default=_default(None, suppress),
        help="write logs to PATH instead of stderr",
    )
    parser.add_argument(
        "--log-level",
        default=_default("WARNING", suppress),
        type=str.upper,
        choices=LOG_LEVELS,
        help="the least severe log level written (default: WARNING)",
    )
    parser.add_argument(
        "--driver", metavar="MODULE:ATTR", default=_default(None, suppress), help=DRIVER_HELP
    )
    parser.add_argument(
        "--allow-outside-workspace",
        action="store_true",
        default=_default(False, suppress),
        help="let tools read, write and run outside the session's working directory",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments in ([], ["serve"]):
        from acp_sidecar.server.stdio import run_stdio

        return run_stdio()
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.command == "tools":
        return run_tools(args)
    return run_serve(parser, args)


def tools_provider(args: argparse.Namespace) -> ToolsProvider:
    """The tool set the options ask for."""
    from acp_sidecar.agent.toolset import ToolsProvider

    return ToolsProvider(args.tools or ())


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

    def make_server() -> AcpServer:
        from acp_sidecar.server.app import AcpServer

        return AcpServer(
            driver_factory,
            tools=tools_provider(args),
            allow_outside_workspace=args.allow_outside_workspace,
        )

    return run_stdio(make_server, log_level=args.log_level, log_file=args.log_file)


def run_tools(args: argparse.Namespace) -> int:
    """``acp-sidecar tools``: every registered tool with its JSON Schema."""
    import json
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")
    schemas = tools_provider(args).registry.schemas()
    if args.json:
        sys.stdout.write(json.dumps(schemas, indent=2) + "\n")
        return 0
    for schema in schemas:
        sys.stdout.write(f"{schema['name']}\n")
        for line in schema["description"].strip().splitlines():
            sys.stdout.write(f"  {line}\n")
        parameters = json.dumps(schema["parameters"], indent=2).splitlines()
        sys.stdout.write("  parameters:\n" + "".join(f"    {line}\n" for line in parameters))
        sys.stdout.write("\n")
    return 0
