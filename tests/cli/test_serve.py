"""``acp-sidecar serve`` and its options."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.in_process import run_cli

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
    done = run_cli("serve", "--help")
    assert done.returncode == 0
    for option in ("--log-file", "--log-level", "--driver", "MODULE:ATTR"):
        assert option in done.stdout


@pytest.mark.process
def test_the_command_line_module_imports_nothing_heavy() -> None:
    code = (
        "import sys; import acp_sidecar.cli; "
        "heavy = [m for m in ('argparse', 'pygls', 'cattrs', 'asyncio', 'acp_sidecar.server.app') "
        "if m in sys.modules]; print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"


def printed(code: str) -> str:
    """What ``code`` prints, run in a Python process of its own (which must succeed)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


NOT_AT_START = (
    "tomllib",  # only when there is a config file
    "secrets",  # at a tool's first shell call
    "acp_sidecar.agent.model.config",  # only when a model is named
    "acp_sidecar.store",  # after session/new is answered
    "acp_sidecar.tools.registry",  # the tools: with the first commands, after the answer
    "acp_sidecar.mcp",
    "importlib.metadata",
    "openai",
    "httpx",
    "rich",
    "msgspec",  # the store's reads (orjson writes the wire from its first message)
    "regex",
    "pathspec",
    "acp_sidecar.server.commands",  # the session's commands: with the first prompt
    "shlex",  # /undo's arguments
    "acp_sidecar.store.records",  # the job recovery at start finds the store's directory only
    "acp_sidecar.tools.builtin.shell.job_records",  # and there, no records to read
)
"""Modules a first ``session/new`` does not need, so the start must not import them."""


@pytest.mark.process
def test_serves_start_leaves_what_a_first_session_does_not_need_unimported() -> None:
    # The start as ``serve`` runs it (parse, config file, hardening, the server built), in a
    # process of its own: what it imports is a property of the process. What the interpreter
    # loaded before (coverage's start-up hook reads its TOML settings) is not the start's.
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from acp_sidecar.cli import build_parser, build_server, with_config_file\n"
        "import acp_sidecar.server.hardening, acp_sidecar.server.stdio\n"
        "parser = build_parser()\n"
        "build_server(parser, with_config_file(parser.parse_args(['serve'])))\n"
        f"print(sorted(m for m in {NOT_AT_START!r} if m in sys.modules and m not in before))"
    )
    assert printed(code) == "[]"


ANSWERED_NEW = """
import asyncio, os, sys
from acp_sidecar.cli import build_parser, build_server, with_config_file
from acp_sidecar.server.stdio import serve
from acp_sidecar.server.transport import AcpJsonRpcProtocol

seen = []
answer = AcpJsonRpcProtocol.write_answer

def write_answer(self, line):
    if b'"id":2' in line:
        seen.append(sorted(m for m in NOT_AT_START if m in sys.modules))
    answer(self, line)

AcpJsonRpcProtocol.write_answer = write_answer
parser = build_parser()
server = build_server(parser, with_config_file(parser.parse_args(["serve", "--store", STORE])))
to_server_r, to_server_w = os.pipe()
to_client_r, to_client_w = os.pipe()
os.write(to_server_w, b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\\n')
os.write(to_server_w, b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":'
         b'{"cwd":"/","mcpServers":[]}}\\n')
os.close(to_server_w)
assert asyncio.run(serve(server, to_server_r, to_client_w, handle_signals=False)) == 0
print(seen)
"""


@pytest.mark.process
def test_a_first_session_new_is_answered_before_what_it_does_not_need_is_imported(
    tmp_path: Path,
) -> None:
    # Its log is created after the answer, its tools listed with its commands after it too.
    code = f"NOT_AT_START = {NOT_AT_START!r}\nSTORE = {str(tmp_path)!r}\n{ANSWERED_NEW}"
    assert printed(code) == "[[]]"


@pytest.mark.process
def test_log_file_and_level(tmp_path: Path) -> None:
    log = tmp_path / "sidecar.log"
    done = run("serve", "--log-level", "info", "--log-file", str(log))
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr == ""
    assert "INFO acp_sidecar.server.stdio: shutting down" in log.read_text()


def test_an_unknown_log_level_is_a_usage_error() -> None:
    done = run_cli("serve", "--log-level", "chatty")
    assert done.returncode == 2
    assert "--log-level" in done.stderr


def test_the_mcp_start_timeout_must_be_a_positive_number() -> None:
    done = run_cli("--mcp-start-timeout", "0")
    assert done.returncode == 2
    assert "--mcp-start-timeout: expected a positive number of seconds, got '0'" in done.stderr


def test_started_from_a_terminal_it_says_on_stderr_what_it_waits_for_and_keeps_serving(
    tmp_path: Path,
) -> None:
    stderr = tmp_path / "stderr.txt"
    command = f"exec {shlex.quote(sys.executable)} -m acp_sidecar 2>{shlex.quote(str(stderr))}"
    child = pexpect.spawn(
        "/bin/sh", ["-c", command], cwd=str(ROOT), encoding="utf-8", timeout=30, echo=False
    )
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    child.sendline(json.dumps(request))
    child.expect_exact('"agentCapabilities"')  # stdout (the terminal) carries the answer
    child.sendeof()
    child.expect(pexpect.EOF)
    assert child.wait() == 0  # not close(): that hangs up on a sidecar still shutting down
    said = stderr.read_text().splitlines()
    assert said[0].startswith("acp-sidecar: waiting for an editor")
    assert "acp-sidecar demo" in said[0] and "acp-sidecar --help" in said[0]
    assert "waiting for an editor" not in (child.before or "")


@pytest.mark.process
def test_started_by_a_client_it_writes_nothing_to_stderr() -> None:
    done = run()  # stdin is /dev/null, not a terminal
    assert done.returncode == 0
    assert done.stderr == "" and done.stdout == ""


RECOVERED = """
import asyncio, sys
from acp_sidecar.cli import build_parser, build_server, with_config_file
parser = build_parser()
server = build_server(parser, with_config_file(parser.parse_args(["serve", "--store", STORE])))
asyncio.run(server.recover_jobs())
print(sorted(m for m in sys.modules if m.startswith("acp_sidecar.tools.builtin.shell.")))
"""


@pytest.mark.process
def test_the_job_recovery_of_a_store_without_job_records_imports_none_of_their_code(
    tmp_path: Path,
) -> None:
    # It runs between initialize and a first session/new: a stat, nothing else, when no
    # sidecar ever kept a job in this store.
    code = f"STORE = {str(tmp_path)!r}\n{RECOVERED}"
    assert printed(code) == "[]"


BUILT_TOOLS = """
import sys
from acp_sidecar.agent.toolset import ToolsProvider
names = [definition.name for definition in ToolsProvider().registry.visible()]
assert "grep" in names and "glob" in names, names
print(sorted(m for m in ("regex", "pathspec") if m in sys.modules))
"""


@pytest.mark.process
def test_the_built_tools_leave_the_search_libraries_to_a_first_search() -> None:
    # The registry is built just after the first session/new is answered, before a prompt.
    assert printed(BUILT_TOOLS) == "[]"
