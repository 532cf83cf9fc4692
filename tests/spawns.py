"""The check that keeps the ``process`` mark true (the markers are in ``pyproject.toml``).

A test is marked ``process`` when it starts an interpreter (a sidecar, an MCP server, any
Python or Node program); :func:`watch` sees every child this process starts, and a test that
started one without the mark fails, naming the command — so ``-m "not process"`` starts none.
The mark comes from the test's module (``pytestmark``), a decorator, or a fixture in
:data:`PROCESS_FIXTURES`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

PROCESS_FIXTURES: Final = frozenset(
    {
        "sandbox",
        "built",
        "dists",
        "venv_bin",
        # MCP peers (tests/mcp/conftest.py); the session-scoped ones start in whichever test
        # uses them first, so every user is marked.
        "http_peer",
        "sse_peer",
        "guarded_http_peer",
        "everything",
        # Chromium, started through a small Python shim (tests/browser.py).
        "browser",
    }
)
"""Fixtures that start processes themselves: a test using one is marked ``process``."""

INTERPRETERS: Final = ("python", "node", "npx", "npm", "uv", "uvx", "acp-sidecar")
"""Names (or name prefixes, as ``python3.11``) of executables that start an interpreter."""

LIST_VARIABLE: Final = "ACP_TESTS_LIST_SPAWNS"  # not ACP_SIDECAR_*: the isolation drops those
"""Names a file: an unmarked test that starts an interpreter is listed there instead of failing
(to find the tests a change must mark)."""

background: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
"""Threads a fixture of marked tests runs beside the tests (the packaging venv's install): what
they start belongs to that fixture, not to whichever test runs meanwhile on the same worker."""

started: list[str] = []
"""The interpreter commands started since the current test began (reset by the conftest)."""


def is_interpreter(program: str, path: str | None = None) -> bool:
    """Whether running ``program`` starts an interpreter: by its name, its real name, or the
    ``#!`` line of the script it names."""
    found = shutil.which(program, path=path) or program
    names = {Path(program).name, Path(found).name, Path(os.path.realpath(found)).name}
    if any(name.startswith(INTERPRETERS) for name in names) or found == sys.executable:
        return True
    try:
        with open(found, "rb") as script:
            first = script.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and any(n.encode() in first for n in ("python", "node"))


def _program(args: Any, executable: Any) -> str:
    if executable is not None:
        return os.fsdecode(executable)
    if isinstance(args, (str, bytes, os.PathLike)):
        return os.fsdecode(args).split()[0] if isinstance(args, (str, bytes)) else str(args)
    first = next(iter(args), "")
    return os.fsdecode(first)


def _command(args: Any) -> str:
    if isinstance(args, (str, bytes, os.PathLike)):
        return os.fsdecode(args)
    return " ".join(os.fsdecode(a) for a in args)


def watch() -> None:
    """Record in :data:`started` every interpreter this process starts from now on (through
    :mod:`subprocess`, which :mod:`asyncio` uses too, or a pseudo-terminal for pexpect)."""
    original: Callable[..., Any] = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def execute_child(self: subprocess.Popen[Any], args: Any, executable: Any, *rest: Any) -> Any:
        env = rest[
            4
        ]  # _execute_child(args, executable, preexec_fn, close_fds, pass_fds, cwd, env, …)
        path = (env if isinstance(env, dict) else os.environ).get("PATH")
        if threading.current_thread() not in background and is_interpreter(
            _program(args, executable), path
        ):
            started.append(_command(args))
        return original(self, args, executable, *rest)

    subprocess.Popen._execute_child = execute_child  # type: ignore[attr-defined]
    try:
        from ptyprocess import PtyProcess
    except ImportError:
        return
    spawn = PtyProcess.spawn.__func__  # type: ignore[attr-defined]

    def pty_spawn(cls: type[PtyProcess], argv: Sequence[str], *args: Any, **kwargs: Any) -> Any:
        if is_interpreter(os.fsdecode(argv[0])):  # pexpect hands the argv over as bytes
            started.append(_command(argv))
        return spawn(cls, argv, *args, **kwargs)

    PtyProcess.spawn = classmethod(pty_spawn)  # type: ignore[assignment]
