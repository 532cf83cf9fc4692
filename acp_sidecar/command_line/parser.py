"""The program and its subcommands, each with the option groups that apply to it.

The program's own options are ``serve``'s (a bare ``acp-sidecar`` serves). Importing this
imports nothing heavy, not even argparse, until :func:`build_parser` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from acp_sidecar import __version__

if TYPE_CHECKING:
    from acp_sidecar.command_line.guidance import CommandParser, Subcommands

CONFIG_EPILOG = (
    "Settings come from, in order: the command line, the environment, the config file "
    "(--config PATH, $ACP_SIDECAR_CONFIG, else the user config directory's "
    "acp-sidecar/config.toml), the defaults. The file's keys are the options' names with "
    "underscores (max_tokens = 8192), plus api_key_env, api_key and [model_info.NAME] "
    "tables; where an option's help gives its default, the file's key comes between the "
    "variable it names and that default. `acp-sidecar configure` writes the file and "
    "`acp-sidecar doctor` checks it; `serve` reads it again when it changes (on authenticate "
    "and on each new session: tools, store, fsync, pass_env and logging need a restart)."
)


def build_parser() -> CommandParser:
    """The argument parser for every subcommand (each subcommand's options are added when it
    is chosen: :class:`~acp_sidecar.command_line.guidance.Subcommands`)."""

    from acp_sidecar.command_line.configure_options import add_configure_parser
    from acp_sidecar.command_line.guidance import CommandParser, Subcommands
    from acp_sidecar.command_line.options import (
        add_command_options,
        add_model_options,
        add_serve_options,
        add_serving_options,
        add_tool_options,
        seconds,
    )

    parser = CommandParser(
        prog="acp-sidecar",
        description=(
            "An Agent Client Protocol (ACP v1) agent for editors. Spawn it as a subprocess "
            "and speak ACP (JSON-RPC 2.0, one JSON object per line) on its stdin/stdout."
        ),
        epilog="With no command, acp-sidecar serves ACP on stdio (the same as `serve`). "
        + CONFIG_EPILOG,
    )
    add_serving_options(parser)
    parser.add_argument("--version", action="version", version=f"acp-sidecar {__version__}")
    commands = cast(
        "Subcommands",
        parser.add_subparsers(dest="command", metavar="COMMAND", action=Subcommands),
    )
    commands.add_command(
        "serve",
        lambda serve: add_serving_options(serve, suppress=True),
        help="serve ACP on stdin/stdout (the default)",
        description=(
            "Serve ACP v1 on stdin/stdout: one JSON-RPC message per line. Stdout carries "
            "only protocol messages; logs go to stderr or --log-file."
        ),
    )

    def fill_tools(listing: CommandParser) -> None:
        add_command_options(listing, tools=True)
        listing.add_argument("--json", action="store_true", help="print the list as JSON")

    commands.add_command(
        "tools",
        fill_tools,
        help="list every registered tool with its JSON Schema",
        description="List the tools a session offers (built-in and loaded) with their schemas. "
        "The exit status is 1 when a tool module failed to load.",
    )

    def fill_sessions(sessions: CommandParser) -> None:
        add_command_options(sessions, store=True)
        sessions.add_argument("--cwd", metavar="DIR", help="only sessions that work in DIR")

    commands.add_command(
        "sessions",
        fill_sessions,
        help="list stored sessions, newest first",
        description="List the stored sessions, newest first.",
    )
    add_replay_parser(commands)
    commands.add_command(
        "demo",
        lambda demo: add_command_options(demo, store=True, tools=True),
        help="watch a scripted session: the sidecar under a small built-in ACP client",
        description=(
            "Run acp-sidecar as a subprocess under a small built-in ACP client, in a "
            "temporary workspace, and drive its slash-command console through a short "
            "session (write a file, edit it, read it, run a command, search), rendering "
            "what the client receives. With --store, the demo's session is kept there (replay "
            "it later); otherwise it lives in a temporary directory."
        ),
    )

    def fill_doctor(doctor: CommandParser) -> None:
        add_command_options(doctor, store=True)
        add_model_options(doctor, suppress=True)
        add_tool_options(doctor, suppress=True, hidden=True)
        add_serve_options(doctor, suppress=True, hidden=True)
        doctor.add_argument("--json", action="store_true", help="print the checks as a JSON list")
        doctor.add_argument(
            "--offline",
            action="store_true",
            help="make no request to the model endpoint (check only what is local)",
        )
        doctor.add_argument(
            "--timeout",
            metavar="SECONDS",
            type=seconds,
            default=20.0,
            help="give each request to the endpoint this long (default: 20)",
        )

    commands.add_command(
        "doctor",
        fill_doctor,
        help="check the set-up: config file, model endpoint, key, ripgrep, session store",
        description=(
            "Check what acp-sidecar would use, with the same options, environment and config "
            "file as `serve`: the config file, the model and its key (never shown), the "
            "endpoint (reachable, models listed, the model streams, calls a tool, reasons), "
            "ripgrep, and the session store. Each section is shown as soon as it is checked; "
            "each finding that fails comes with a fix; the exit status is 1 when one failed, "
            "else 0. The other options of `serve` are accepted too, so that the editor's "
            "command line can be checked as it is."
        ),
    )
    add_configure_parser(commands)
    parser.subcommands = dict(commands.choices)
    return parser


def add_replay_parser(commands: Subcommands) -> None:
    """The ``replay`` subcommand: a stored session in the terminal, or exported."""
    commands.add_command(
        "replay",
        _fill_replay,
        help="show a stored session's transcript as the editor drew it",
        description=(
            "Render a stored session in the terminal: messages, and each tool card as the "
            "editor showed it (diffs, terminals with their exit status, text). With --html "
            "or --markdown, write it as a page or a Markdown file to share instead: "
            "acp-sidecar replay SESSION --html transcript.html"
        ),
    )


def _fill_replay(replay: CommandParser) -> None:
    import argparse

    from acp_sidecar.command_line.options import add_command_options

    add_command_options(replay, store=True, tools=True)
    replay.add_argument("session", metavar="SESSION_ID_OR_PATH", help="a session id or a log file")
    formats = replay.add_mutually_exclusive_group()
    formats.add_argument(
        "--json",
        action="store_true",
        help="print the exact NDJSON session/update stream that session/load sends instead",
    )
    formats.add_argument(
        "--html",
        nargs="?",
        const="",
        metavar="OUT",
        help="write the transcript as one self-contained HTML page to share (OUT: a file or "
        "directory, - for stdout; default SESSION_ID.html here; give the option after SESSION)",
    )
    formats.add_argument(
        "--markdown",
        nargs="?",
        const="",
        metavar="OUT",
        help="write the transcript as GitHub Markdown (OUT as for --html; default "
        "SESSION_ID.md here)",
    )
    replay.add_argument(
        "--terminal-output",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="draw terminal cards as for a client that advertised _meta.terminal_output "
        "(the default); --no-terminal-output gives the console-text fallback other clients get",
    )
    replay.add_argument(
        "--notices",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="replay what the session told outside the conversation as for a client that "
        "advertised session.notices (the default); --no-notices gives agent messages",
    )
    replay.add_argument(
        "--compaction",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="replay compactions as for a client that advertised session.compaction (the "
        "default); --no-compaction leaves them out, as such a client was shown nothing",
    )
