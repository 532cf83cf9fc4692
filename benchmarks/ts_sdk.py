"""Node peers installed with ``npm`` at pinned versions (the official TypeScript ACP SDK for the
wire benchmark's agent and the subagent test's client; the acpx terminal client): each in its
own directory under the system's temporary directory, kept between runs."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

TS_SDK_VERSION = "2.4.0"
TS_SDK_DIR = Path(tempfile.gettempdir()) / f"acp-sidecar-bench-ts-sdk-{TS_SDK_VERSION}"
"""Where the TypeScript SDK is installed (kept between runs: a cache, not a result)."""

ACPX_VERSION = "0.19.1"
ACPX_DIR = Path(tempfile.gettempdir()) / f"acp-sidecar-acpx-{ACPX_VERSION}"
"""Where acpx is installed; ``.ci/run`` installs it there before the suite."""


def install_npm_package(package: str, version: str, directory: Path) -> tuple[str, Path] | str:
    """``(node, directory)`` once ``package@version`` is in ``directory/node_modules``,
    installing it first if needed; else why it cannot be (node or npm missing, the install
    failed)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "node or npm is not on PATH"
    if not (directory / "node_modules" / package / "package.json").exists():
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "package.json").write_text('{"private": true, "type": "module"}\n')
        try:
            subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--silent", f"{package}@{version}"],
                cwd=directory, check=True, capture_output=True, timeout=300,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", b"") or b""
            reason = detail.decode(errors="replace").strip().splitlines()[-1:] or [str(exc)]
            return f"npm install failed: {reason[0]}"
    return node, directory


def install_ts_sdk() -> tuple[str, Path] | str:
    """``(node, the directory whose node_modules holds the SDK)``, or why it is missing."""
    return install_npm_package("@agentclientprotocol/sdk", TS_SDK_VERSION, TS_SDK_DIR)


def install_acpx() -> tuple[str, Path] | str:
    """``(node, acpx's executable)``, or why it is missing."""
    installed = install_npm_package("acpx", ACPX_VERSION, ACPX_DIR)
    if isinstance(installed, str):
        return installed
    node, directory = installed
    return node, directory / "node_modules" / ".bin" / "acpx"
