"""The official TypeScript ACP SDK, installed with ``npm`` for the peers that run on it (the
wire benchmark's agent, the subagent test's client): one installation, kept between runs."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

TS_SDK_VERSION = "2.4.0"
TS_SDK_DIR = Path(tempfile.gettempdir()) / f"acp-sidecar-bench-ts-sdk-{TS_SDK_VERSION}"
"""Where the TypeScript SDK is installed (kept between runs: a cache, not a result)."""


def install_ts_sdk() -> tuple[str, Path] | str:
    """``(node, the directory whose node_modules holds the SDK)``, installing it first if
    needed; else why it cannot be (node or npm missing, the install failed)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "node or npm is not on PATH"
    package = TS_SDK_DIR / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
    if not package.exists():
        TS_SDK_DIR.mkdir(parents=True, exist_ok=True)
        (TS_SDK_DIR / "package.json").write_text('{"private": true, "type": "module"}\n')
        try:
            subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--silent",
                 f"@agentclientprotocol/sdk@{TS_SDK_VERSION}"],
                cwd=TS_SDK_DIR, check=True, capture_output=True, timeout=300,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", b"") or b""
            reason = detail.decode(errors="replace").strip().splitlines()[-1:] or [str(exc)]
            return f"npm install failed: {reason[0]}"
    return node, TS_SDK_DIR
