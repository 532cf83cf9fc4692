"""The ``acp-sidecar`` command line.

Invariants: this module imports nothing heavy at module level; each subcommand imports what
it needs when it runs, so ``--version`` and ``--help`` answer at once. Every invocation, the
editor's plain ``acp-sidecar`` included, goes through the one argument parser (building it
costs about 2 ms of a start of over half a second). The serve options are accepted with or
without the word ``serve``. Only ``serve`` owns stdout as the ACP wire; the other
subcommands write their reports to stdout.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp_sidecar import __version__

if TYPE_CHECKING:
    import argparse

    from acp_sidecar.agent.driver import DriverFactory
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.bridge.translate import ToolLookup
    from acp_sidecar.server.app import AcpServer
    from acp_sidecar.store import SessionStore

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
PROVIDER_CHOICES = ("openai", "deepseek", "openrouter", "ollama", "llama.cpp", "vllm", "custom")
"""The presets of ``configure`` (:data:`acp_sidecar.configure.presets.PRESETS`, kept here for
a light start: that table imports ``attrs``, some 25 ms; a test keeps the two equal)."""
CONFIG_HINT = "~/.config/acp-sidecar/config.toml on Linux (the user config directory)"

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
        epilog="With no command, acp-sidecar serves ACP on stdio (the same as `serve`). "
        + CONFIG_EPILOG,
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
    sessions = commands.add_parser(
        "sessions",
        help="list stored sessions, newest first",
        description="List the stored sessions, newest first.",
        parents=[common_sub],
    )
    sessions.add_argument("--cwd", metavar="DIR", help="only sessions that work in DIR")
    replay = commands.add_parser(
        "replay",
        help="show a stored session's transcript as the editor drew it",
        description=(
            "Render a stored session in the terminal: messages, and each tool card as the "
            "editor showed it (diffs, terminals with their exit status, text). With --html "
            "or --markdown, write it as a page or a Markdown file to share instead: "
            "acp-sidecar replay SESSION --html transcript.html"
        ),
        parents=[common_sub],
    )
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
    commands.add_parser(
        "demo",
        help="watch a scripted session: the sidecar under a small built-in ACP client",
        description=(
            "Run acp-sidecar as a subprocess under a small built-in ACP client, in a "
            "temporary workspace, and drive its slash-command console through a short "
            "session (write a file, edit it, read it, run a command, search), rendering "
            "what the client receives. With --store, the demo's session is kept there (replay "
            "it later); otherwise it lives in a temporary directory."
        ),
        parents=[common_sub],
    )
    doctor = commands.add_parser(
        "doctor",
        help="check the set-up: config file, model endpoint, key, ripgrep, session store",
        description=(
            "Check what acp-sidecar would use, with the same options, environment and config "
            "file as `serve`: the config file, the model and its key (never shown), the "
            "endpoint (reachable, models listed, the model streams, calls a tool, reasons), "
            "ripgrep, and the session store. Each finding that fails comes with a fix; the "
            "exit status is 1 when one failed, else 0."
        ),
        parents=[common_sub, serving_sub],
    )
    doctor.add_argument("--json", action="store_true", help="print the checks as a JSON list")
    doctor.add_argument(
        "--offline",
        action="store_true",
        help="make no request to the model endpoint (check only what is local)",
    )
    doctor.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_seconds,
        default=20.0,
        help="give each request to the endpoint this long (default: 20)",
    )
    add_configure_parser(commands)
    return parser


CONFIGURE_DESCRIPTION = (
    "Choose a model endpoint, check it and write the config file (--config PATH, else "
    "$ACP_SIDECAR_CONFIG, else the user config directory's acp-sidecar/config.toml). In a "
    "terminal it asks, step by step: the provider, the base URL, where the API key comes from, "
    "the models; it checks the endpoint (lists its models, sends one small request with a tool) "
    "and shows the file before writing it. An existing file's values are the defaults; its "
    "other keys and comments are kept. With --yes, or when standard input is not a terminal, "
    "it asks nothing: the flags, the existing file (for the same endpoint) and the provider's "
    "preset give the values, and a missing one is an error."
)
CONFIGURE_EPILOG = (
    "Exit status: 0 the file was written; 1 nothing was written (the check failed, the "
    "existing file is malformed, the answer was no, input ended); 2 bad or missing flags; 130 "
    "interrupted. Without --yes a failed check asks whether to write anyway; with --yes it "
    "writes nothing (pass --no-check to write without checking). The key is never taken from "
    "the command line: name its variable, or pipe it with --api-key-stdin (stored in the file, "
    'mode 0600). Example: printf %s "$KEY" | acp-sidecar configure --provider deepseek '
    "--api-key-stdin --model deepseek-v4-flash --yes"
)


def add_configure_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``configure`` subcommand and its script flags."""
    import argparse

    configure = commands.add_parser(
        "configure",
        help="choose a model endpoint, check it and write the config file",
        description=CONFIGURE_DESCRIPTION,
        epilog=CONFIGURE_EPILOG,
    )
    configure.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help=f"write this file (default: $ACP_SIDECAR_CONFIG, else {CONFIG_HINT})",
    )
    configure.add_argument(
        "--provider",
        choices=PROVIDER_CHOICES,
        help="a provider preset: its base URL, the variable that usually holds its key "
        "(OPENAI_API_KEY, DEEPSEEK_API_KEY, OPENROUTER_API_KEY; the local servers need none) "
        "and a suggested model; custom needs --base-url",
    )
    configure.add_argument(
        "--base-url", metavar="URL", default=argparse.SUPPRESS, help="the endpoint's base URL"
    )
    key = configure.add_mutually_exclusive_group()
    key.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="the sidecar reads the key from the environment variable NAME",
    )
    key.add_argument(
        "--api-key-stdin",
        action="store_true",
        help="read the key from standard input and store it in the file (mode 0600); asks nothing",
    )
    key.add_argument(
        "--no-api-key", action="store_true", help="the endpoint needs no key (a local server)"
    )
    configure.add_argument(
        "--model", metavar="NAME", default=argparse.SUPPRESS, help="the default model"
    )
    configure.add_argument(
        "--models",
        metavar="NAME[,NAME...]",
        action="append",
        default=argparse.SUPPRESS,
        help="other models offered in the picker (repeatable)",
    )
    configure.add_argument(
        "--no-check",
        dest="check",
        action="store_false",
        help="write without checking the endpoint",
    )
    configure.add_argument(
        "-y",
        "--yes",
        "--non-interactive",
        dest="non_interactive",
        action="store_true",
        help="ask nothing: take the values from the flags, the existing file and the preset",
    )


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (an ``argparse`` type)."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _default(value: object, suppress: bool) -> object:
    import argparse

    return argparse.SUPPRESS if suppress else value


def add_tool_options(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """Options every subcommand takes: the config file, which tools are offered, where
    sessions are kept."""
    parser.add_argument(
        "--config",
        metavar="PATH",
        default=_default(None, suppress),
        help="read settings from the TOML file PATH (default: $ACP_SIDECAR_CONFIG, else "
        f"{CONFIG_HINT}); options and environment variables win over it",
    )
    parser.add_argument(
        "--store",
        metavar="DIR",
        default=_default(None, suppress),
        help="keep session logs in DIR (default: $ACP_SIDECAR_STORE, else the user data "
        "directory's acp-sidecar/sessions)",
    )
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
        default=_default(None, suppress),
        type=str.upper,
        choices=LOG_LEVELS,
        help="the least severe log level written (default: WARNING)",
    )
    parser.add_argument(
        "--driver", metavar="MODULE:ATTR", default=_default(None, suppress), help=DRIVER_HELP
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        default=_default(None, suppress),
        help="answer prompts with this model on an OpenAI-compatible endpoint (default: "
        "$ACP_SIDECAR_MODEL; without a model, prompts are slash commands for the tools)",
    )
    parser.add_argument(
        "--models",
        metavar="NAME[,NAME...]",
        action="append",
        default=_default(None, suppress),
        help="offer these models in the editor's model picker (repeatable; default: "
        "$ACP_SIDECAR_MODELS, names separated by commas). The default model is --model, else "
        "the first named; the endpoint's GET /models, when it has one, adds its models",
    )
    parser.add_argument(
        "--model-info",
        metavar="NAME:SETTING[,SETTING...]",
        action="append",
        default=_default(None, suppress),
        help="what is known of the model NAME (repeatable; a model described is offered too; "
        "default: $ACP_SIDECAR_MODEL_INFO, entries separated by ';'). Settings: "
        "context=TOKENS (its context window), images (it takes image input), reasoning (it "
        "takes reasoning_effort: the picker offers an effort), and its prices per million "
        "tokens with their currency, all three or none: input=PRICE,output=PRICE,currency=CODE. "
        "Example: --model-info gpt-4.1:context=1047576,images,input=2,output=8,currency=USD",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        default=_default(None, suppress),
        help="the endpoint's base URL, e.g. http://localhost:11434/v1 for Ollama (default: "
        "$OPENAI_BASE_URL, else OpenAI's); the key comes from $OPENAI_API_KEY",
    )
    parser.add_argument(
        "--max-turn-requests",
        metavar="N",
        type=int,
        default=_default(None, suppress),
        help="with a model: end a turn with max_turn_requests after N model requests "
        "(default: $ACP_SIDECAR_MAX_TURN_REQUESTS, else 25)",
    )
    parser.add_argument(
        "--max-parallel-tools",
        metavar="N",
        type=int,
        default=_default(None, suppress),
        help="with a model: run at most N of its tool calls at once (default: "
        "$ACP_SIDECAR_MAX_PARALLEL_TOOLS, else 4)",
    )
    parser.add_argument(
        "--max-tokens",
        metavar="N",
        type=int,
        default=_default(None, suppress),
        help="with a model: cap each response at N tokens, ending the turn with max_tokens "
        "when it is reached; 0 sends no cap (default: $ACP_SIDECAR_MAX_TOKENS, else 8192)",
    )
    parser.add_argument(
        "--pass-env",
        metavar="NAME",
        action="append",
        default=_default(None, suppress),
        help="let commands the tools run see the secret variable NAME (repeatable; also "
        "$ACP_SIDECAR_PASS_ENV, names separated by commas). By default the sidecar's own "
        "secrets (OPENAI_API_KEY, and any variable holding its value) are removed from the "
        "environment of every process it starts",
    )
    parser.add_argument(
        "--mode",
        choices=("ask", "auto", "read-only"),  # settings.keys.MODE_CHOICES, kept light
        default=_default(None, suppress),
        help="the mode new sessions start in: ask (the default: ask before changing "
        "anything), auto (run without asking) or read-only (default: $ACP_SIDECAR_MODE)",
    )
    parser.add_argument(
        "--fsync",
        choices=("turn", "record", "never"),
        default=_default(None, suppress),
        help="when session logs are synced to disk: at the end of each turn (default; a turn "
        "with nothing but its prompt is synced later, with the next turn that does something "
        "or on close), after every record, or never (the OS decides)",
    )
    parser.add_argument(
        "--allow-outside-workspace",
        action="store_true",
        default=_default(None, suppress),
        help="let tools read, write and run outside the session's working directory",
    )
    parser.add_argument(
        "--mcp-start-timeout",
        metavar="SECONDS",
        type=_seconds,
        default=_default(None, suppress),
        help="give each MCP server a session names this long to start; one that takes longer "
        "is left out and the user is told (default: 10)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "configure":
        # Before the layering: configure edits the file itself, not the file under the
        # environment, and must not refuse to fix a file the others cannot use.
        from acp_sidecar.configure.command import run_configure

        return run_configure(args)
    try:
        args = with_config_file(args)
    except ValueError as exc:
        return _report(str(exc), status=2)
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

    from acp_sidecar.server.hardening import harden_process
    from acp_sidecar.server.stdio import run_stdio

    harden_process()  # first: before any code of a driver or a tool runs (see the module)

    def make_server() -> AcpServer:
        # Called once the wire is taken: what user modules (--driver, --tools) print at
        # import goes to stderr, never onto the wire.
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
        return AcpServer(
            factory,
            tools=tools,
            store=make_store,
            allow_outside_workspace=live.allow_outside_workspace,
            mcp_start_timeout=live.mcp_start_timeout,
            default_mode=live.default_mode,
            settings=settings,
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


def _report(message: str, status: int = 1) -> int:
    sys.stderr.write(f"acp-sidecar: {message}\n")
    return status


def run_sessions(args: argparse.Namespace) -> int:
    """``acp-sidecar sessions``: the stored sessions in a table."""
    import os

    from rich.console import Console

    from acp_sidecar.render.sessions import sessions_table
    from acp_sidecar.store import SessionStore, SessionSummary, StoreError

    store = SessionStore(args.store)
    cwd = os.path.abspath(args.cwd) if args.cwd else None
    summaries: list[SessionSummary] = []
    cursor = None
    try:
        while True:
            page = store.list(cwd=cwd, cursor=cursor)
            summaries.extend(page.sessions)
            cursor = page.next_cursor
            if cursor is None:
                break
    except StoreError as exc:
        return _report(str(exc))
    console = Console()
    if not summaries:
        where = f" for {cwd}" if cwd else ""
        console.print(f"No stored sessions{where} in {store.directory}.")
        return 0
    console.print(sessions_table(summaries))
    return 0


def run_export(args: argparse.Namespace, store: SessionStore, lookup: ToolLookup) -> int:
    """``acp-sidecar replay SESSION --html|--markdown [OUT]``: a transcript to share."""
    from acp_sidecar.export.command import Format, write_export
    from acp_sidecar.export.source import StoredSession
    from acp_sidecar.store import StoreError

    fmt: Format = "html" if args.html is not None else "markdown"
    out: str = args.html if args.html is not None else args.markdown
    try:
        path = store.locate(args.session)
        with StoredSession(path, lookup, terminal_output=args.terminal_output) as session:
            written = write_export(session, fmt, out)
    except StoreError as exc:
        return _report(str(exc))
    except BrokenPipeError:
        return 0  # the reader of stdout went away (``| head``): nothing more to say
    except OSError as exc:
        return _report(f"cannot write the {fmt} export: {exc}")
    if written is not None:
        sys.stderr.write(f"wrote {written}\n")
    return 0


def run_replay(args: argparse.Namespace) -> int:
    """``acp-sidecar replay``: a stored session as the editor drew it (or its NDJSON)."""
    import json

    from acp_sidecar.bridge.context import CardContext
    from acp_sidecar.server.replay import load_notifications, session_info
    from acp_sidecar.store import SessionLog, SessionStore, StoreError, read_summary

    store = SessionStore(args.store)
    lookup = tools_provider(args).registry.get
    if args.html is not None or args.markdown is not None:
        return run_export(args, store, lookup)
    try:
        path = store.locate(args.session)
        with SessionLog(path) as log:
            header = log.header
            ctx = CardContext(cwd=header.cwd, terminal_output=args.terminal_output)
            summary = read_summary(path, header.session_id)
            info = session_info(summary.title, summary.updated_at)
            messages = load_notifications(header.session_id, header, log, lookup, ctx, info)
            if args.json:
                for message in messages:
                    sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
                return 0
            from rich.console import Console

            from acp_sidecar.render import render_transcript

            render_transcript((m["params"] for m in messages), Console(), cwd=header.cwd)
    except StoreError as exc:
        return _report(str(exc))
    return 0
