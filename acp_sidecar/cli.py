"""The ``acp-sidecar`` command line: parse (:mod:`acp_sidecar.command_line`), layer the config
file under the options, run the subcommand.

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

from acp_sidecar.command_line.parser import build_parser

if TYPE_CHECKING:
    import argparse

    from acp_sidecar.agent.driver import DriverFactory
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.bridge.translate import ToolLookup
    from acp_sidecar.server.app import AcpServer
    from acp_sidecar.store import SessionStore

TERMINAL_HINT = (
    "acp-sidecar: waiting for an editor to speak ACP (JSON-RPC, one message per line) on "
    "stdin/stdout. To watch it work, run `acp-sidecar demo`; `acp-sidecar --help` lists the "
    "commands; Ctrl-D ends it."
)
"""The one line ``serve`` writes on stderr when its stdin is a terminal."""

__all__ = [
    "build_parser",
    "build_server",
    "main",
    "model_driver_factory",
    "tools_provider",
    "with_config_file",
]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
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
        lambda: build_server(parser, args), log_level=args.log_level, log_file=args.log_file
    )


def build_server(parser: argparse.ArgumentParser, args: argparse.Namespace) -> AcpServer:
    """The server ``serve`` runs for ``args`` (completed by :func:`with_config_file`); it also
    sets the rules the tools' child processes get their environment from."""
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


def run_tools(args: argparse.Namespace) -> int:
    """``acp-sidecar tools``: every registered tool with its JSON Schema; the exit status is 1
    when a tool module failed to load (the tools that loaded are still listed)."""
    import json

    provider = tools_provider(args)
    schemas = provider.registry.schemas()
    status = 1 if provider.problems else 0
    if args.json:
        sys.stdout.write(json.dumps(schemas, indent=2) + "\n")
        return status
    for schema in schemas:
        sys.stdout.write(f"{schema['name']}\n")
        for line in schema["description"].strip().splitlines():
            sys.stdout.write(f"  {line}\n")
        parameters = json.dumps(schema["parameters"], indent=2).splitlines()
        sys.stdout.write("  parameters:\n" + "".join(f"    {line}\n" for line in parameters))
        sys.stdout.write("\n")
    return status


def _report(message: str, status: int = 1) -> int:
    sys.stderr.write(f"acp-sidecar: {message}\n")
    return status


def run_sessions(args: argparse.Namespace) -> int:
    """``acp-sidecar sessions``: the stored sessions in a table."""
    import os

    from acp_sidecar.console import output_console
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
    console = output_console(frames=True)
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
        with StoredSession(
            path,
            lookup,
            terminal_output=args.terminal_output,
            notices=args.notices,
            compaction=args.compaction,
        ) as session:
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
    from acp_sidecar.console import output_console
    from acp_sidecar.export.replaying import replay_session
    from acp_sidecar.store import SessionStore, StoreError

    store = SessionStore(args.store)
    lookup = tools_provider(args).registry.get
    if args.html is not None or args.markdown is not None:
        return run_export(args, store, lookup)
    try:
        path = store.locate(args.session)
        return replay_session(
            path,
            lookup,
            as_json=args.json,
            terminal_output=args.terminal_output,
            notices=args.notices,
            compaction=args.compaction,
            console=output_console(frames=True),
        )
    except StoreError as exc:
        return _report(str(exc))
