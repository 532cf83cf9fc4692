"""The command line answers ``--version`` and ``--help`` without serving."""

import subprocess
import sys

from acp_sidecar import __version__


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acp_sidecar", *args], capture_output=True, text=True, timeout=30
    )


def test_version() -> None:
    done = run_cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"acp-sidecar {__version__}"


def test_help_describes_the_program() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    assert "Agent Client Protocol" in done.stdout
