"""The command line answers ``--version`` and ``--help`` without serving (in process)."""

from acp_sidecar import __version__
from tests.in_process import run_cli


def test_version() -> None:
    done = run_cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"acp-sidecar {__version__}"


def test_help_describes_the_program() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    assert "Agent Client Protocol" in done.stdout
