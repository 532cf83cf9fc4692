"""``acp-sidecar serve`` and its options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acp_sidecar", *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
    )


def test_serve_help_documents_its_options() -> None:
    done = run("serve", "--help")
    assert done.returncode == 0
    for option in ("--log-file", "--log-level", "--driver", "MODULE:ATTR"):
        assert option in done.stdout


def test_the_command_line_module_imports_nothing_heavy() -> None:
    code = (
        "import sys; import acp_sidecar.cli; "
        "heavy = [m for m in ('argparse', 'pygls', 'cattrs', 'asyncio', 'acp_sidecar.server.app') "
        "if m in sys.modules]; print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"


def test_log_file_and_level(tmp_path: Path) -> None:
    log = tmp_path / "sidecar.log"
    done = run("serve", "--log-level", "info", "--log-file", str(log))
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr == ""
    assert "INFO acp_sidecar.server.stdio: shutting down" in log.read_text()


def test_an_unknown_log_level_is_a_usage_error() -> None:
    done = run("serve", "--log-level", "chatty")
    assert done.returncode == 2
    assert "--log-level" in done.stderr


def test_the_mcp_start_timeout_must_be_a_positive_number() -> None:
    done = run("--mcp-start-timeout", "0")
    assert done.returncode == 2
    assert "--mcp-start-timeout: expected a positive number of seconds, got '0'" in done.stderr
