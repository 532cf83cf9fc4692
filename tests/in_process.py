"""The sidecar and its command line in this process, for tests of what they do (not of a process).

:func:`cli_server` builds the server ``acp-sidecar ARGS`` would serve (the command line's own
parser, config layering and :func:`acp_sidecar.cli.build_server`); :func:`serving` serves it
on :func:`tests.server.wire.served`; :func:`sdk_served` puts the official SDK client on it and
yields what :func:`tests.sdk.sdk_sidecar` yields. :func:`run_cli` runs ``acp-sidecar ARGS`` as
a call of its ``main`` with stdio captured. Each puts back the process-wide state the command
line sets (logging, the child-environment rules, ``sys.path``, modules imported from ``cwd``).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import attrs
from acp.connection import StreamEvent
from acp.schema import ClientCapabilities

import acp_sidecar.tools.environment as child_environment
from acp_sidecar.cli import build_parser, build_server, main, with_config_file
from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.stdio import configure_logging
from tests.sdk import Wire
from tests.server.wire import WireClient, served


@contextlib.contextmanager
def kept_process_state(
    cwd: Path | None = None, env: Mapping[str, str | None] | None = None
) -> Iterator[None]:
    """Put back what the command line changes process-wide; inside, ``cwd`` is the current
    directory and ``env`` is added to the environment (a name given ``None`` is removed)."""
    root, pygls = logging.getLogger(), logging.getLogger("pygls")
    handlers, levels = list(root.handlers), (root.level, pygls.level)
    # The rules ``build_server`` sets once per process; there is no public way to read them.
    rules = child_environment._configured
    path = list(sys.path)
    modules = set(sys.modules)
    here, variables = os.getcwd(), dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(variables)
        root.handlers[:] = handlers
        root.setLevel(levels[0])
        pygls.setLevel(levels[1])
        child_environment._configured = rules
        sys.path[:] = path
        if cwd is not None:  # a ``--tools`` module found in cwd is not there for the next test
            for name in set(sys.modules) - modules:
                file = getattr(sys.modules[name], "__file__", None) or ""
                if file.startswith(str(cwd)):
                    del sys.modules[name]


def cli_server(*args: str, stderr: io.StringIO | None = None) -> AcpServer:
    """The server ``acp-sidecar ARGS`` serves, its logging set up as ``serve`` sets it up
    (``stderr`` stands for the process's; call inside :func:`kept_process_state`)."""
    parser = build_parser()
    options = with_config_file(parser.parse_args(list(args)))
    streams = sys.stderr
    sys.stderr = stderr or io.StringIO()
    try:
        configure_logging(options.log_level, options.log_file)
    finally:
        sys.stderr = streams
    return build_server(parser, options)


@asynccontextmanager
async def serving(
    *args: str, env: Mapping[str, str] | None = None, stderr: io.StringIO | None = None
) -> AsyncIterator[tuple[WireClient, AcpServer]]:
    """``acp-sidecar ARGS`` served in process with ``env`` added to the environment, and the
    raw client end of its wire; what it logs goes to ``stderr``."""
    with kept_process_state(env=env):
        async with served(cli_server(*args, stderr=stderr)) as pair:
            yield pair


@asynccontextmanager
async def sdk_served(
    client: Any,
    *args: str,
    store: Path | None = None,
    capabilities: ClientCapabilities | None = None,
    observers: Sequence[Callable[[StreamEvent], None]] = (),
    unstable: bool = False,
    env: Mapping[str, str] | None = None,
    stderr: io.StringIO | None = None,
) -> AsyncIterator[tuple[Any, Wire]]:
    """:func:`tests.sdk.sdk_sidecar` with the sidecar in process: ``acp-sidecar ARGS``
    answered by the SDK client ``client``, initialized; the server must shut down cleanly
    when the connection closes (``unstable``: as there)."""
    wire = Wire(unstable)
    options = (*args, *(("--store", str(store)) if store is not None else ()))
    with kept_process_state(env=env):
        async with served(cli_server(*options, stderr=stderr)) as (raw, _server):
            connection = acp.connect_to_agent(
                client,
                raw.writer,
                raw.reader,
                observers=[wire, *observers],
                use_unstable_protocol=unstable,
            )
            try:
                wire.initialized = await connection.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=capabilities or ClientCapabilities(),
                )
                yield connection, wire
            finally:
                await connection.close()
    wire.check_clean()


@attrs.frozen
class Ran:
    """What a command line run in process returned and wrote."""

    returncode: int
    stdout_bytes: bytes
    stderr: str

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", errors="replace")


class _Stdin(io.StringIO):
    def isatty(self) -> bool:
        return False


class _Captured(io.BytesIO):
    """A pipe's far end: what was written stays readable after a writer closes it."""

    def close(self) -> None:
        self.flush()  # not closed: ``getvalue`` must still answer


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str | None] | None = None,
    stdin: str = "",
) -> Ran:
    """``acp-sidecar ARGS`` as a call of the command line's ``main`` in ``cwd``, with
    ``env`` added to the environment, ``stdin`` as its input (not a terminal) and stdout and
    stderr captured (pipes, as for a subprocess)."""
    out, err = _Captured(), _Captured()
    streams = sys.stdin, sys.stdout, sys.stderr
    with kept_process_state(cwd, env):
        sys.stdin = _Stdin(stdin)
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
        sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
        try:
            # ``serve`` would take over this process's stdio: that is what :func:`serving` is for.
            assert build_parser().parse_args(list(args)).command not in (None, "serve"), args
            status = main(list(args))
        except SystemExit as exc:  # argparse's usage errors, --help, --version
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.stdin, sys.stdout, sys.stderr = streams
    return Ran(status, out.getvalue(), err.getvalue().decode("utf-8", errors="replace"))
