"""Runs one of this directory's v2 peers (a client on the official TypeScript SDK, installed by
``benchmarks.ts_sdk``) against a sidecar it spawns, and returns the one JSON object it prints.
The test is skipped, with the reason, where node, npm or the registry is missing.

The peer and ``sidecar.mjs`` are copied beside the SDK's ``node_modules`` (so node resolves the
SDK from there), each copy put in place whole: tests on other workers read the same files.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from benchmarks.ts_sdk import install_ts_sdk
from tests.server.wire import ROOT

HERE = Path(__file__).parent
SHARED = "sidecar.mjs"


def _place(source: Path, directory: Path) -> Path:
    target = directory / source.name
    handle, temporary = tempfile.mkstemp(dir=directory, suffix=".mjs")
    with os.fdopen(handle, "w") as out:
        out.write(source.read_text())
    os.replace(temporary, target)
    return target


async def run_peer(
    name: str, sidecar: list[str], cwd: Path, *, timeout: float = 90, **env: str
) -> dict[str, Any]:
    """What peer ``name`` printed, having driven ``sidecar`` in a session in ``cwd`` (which
    is also the sidecar's home: no user config is read); ``env``: the peer's own settings."""
    installed = install_ts_sdk()
    if isinstance(installed, str):
        pytest.skip(f"the TypeScript SDK is not available: {installed}")
    node, directory = installed
    _place(HERE / SHARED, directory)
    script = _place(HERE / name, directory)
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SIDECAR_ARGV": json.dumps(sidecar),
        "SESSION_CWD": str(cwd),
        "ACP_SIDECAR_CONFIG": str(cwd / "absent.toml"),
        "HOME": str(cwd),
        **env,
    }
    process = await asyncio.create_subprocess_exec(
        node, str(script), cwd=ROOT, env=environment, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode == 0
    seen: dict[str, Any] = json.loads(out)
    return seen
