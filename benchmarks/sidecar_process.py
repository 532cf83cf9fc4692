"""What the soaks share: a sidecar subprocess on pipes, a minimal client's base, its memory.

- :func:`start_sidecar`: ``python -m acp_sidecar ARGS`` (or another program, e.g. ``-c`` code
  that patches the sidecar for a baseline) with the ``acp_sidecar`` of a chosen checkout first
  on ``PYTHONPATH``, its stdin and stdout on pipes, its stderr discarded.
- :class:`Pipes`: the base of the soaks' small NDJSON clients: the process, its pipes, the
  request ids, and writing one message (or a request) as one line.
- :func:`peak_rss`: a process's peak resident memory (``VmHWM``).
- :func:`export_revision`: another git revision's ``acp_sidecar``, for a baseline beside this
  tree's figures.

Only the standard library, and nothing of ``acp_sidecar``: a baseline runs another checkout's
package, which this module must not have imported first. Scripts import it as
``benchmarks.sidecar_process`` with the repository on ``sys.path`` (as ``bench_wire.py`` does
``benchmarks.wire_peers``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MiB = 1024 * 1024
READ_LIMIT = 256 * MiB
"""The longest line a client reads from the sidecar (a soak's answers can be large)."""


async def start_sidecar(
    *args: str,
    code: Path | str = ROOT,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    program: Sequence[str] = ("-m", "acp_sidecar"),
    preexec_fn: Callable[[], None] | None = None,
) -> asyncio.subprocess.Process:
    """``python PROGRAM ARGS`` with ``code``'s ``acp_sidecar`` importable, in ``cwd`` (``code``
    when not given: ``-m`` puts the working directory first on ``sys.path``), with ``env``
    added to this process's environment and ``preexec_fn`` run in the child first."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        *program,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=code if cwd is None else cwd,
        env={**os.environ, "PYTHONPATH": str(code), **(env or {})},
        limit=READ_LIMIT,
        preexec_fn=preexec_fn,
    )


class Pipes:
    """A sidecar subprocess's stdin and stdout, and the ids for the requests sent on them."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.ids = itertools.count(1)

    async def write_message(self, message: dict[str, Any]) -> None:
        """Send ``message`` as one NDJSON line."""
        self.stdin.write(json.dumps(message).encode() + b"\n")
        await self.stdin.drain()

    async def send_request(self, method: str, params: Any) -> int:
        """Send a request for ``method``; its id."""
        msg_id = next(self.ids)
        await self.write_message(
            {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        )
        return msg_id


def peak_rss(pid: int) -> int:
    """The peak resident memory of process ``pid``, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def export_revision(revision: str, into: str) -> str:
    """The ``acp_sidecar`` package of git ``revision``, exported below ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "acp_sidecar"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into
