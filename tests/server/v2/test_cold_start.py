"""The v2 modules stay off a v1 start, and a v2 start is as light as v1's: its first
``session/new`` is answered before anything a first session does not need is imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_serve import NOT_AT_START
from tests.server.wire import ROOT

V2_MODULES = ("acp_sidecar.protocol.v2", "acp_sidecar.bridge.v2", "acp_sidecar.server.v2")

STARTED = """
import asyncio, json, os, sys
from acp_sidecar.cli import build_parser, build_server, with_config_file
from acp_sidecar.server.stdio import serve
from acp_sidecar.server.transport import AcpJsonRpcProtocol

seen = []
answer = AcpJsonRpcProtocol.write_answer

def write_answer(self, line):
    if b'"id":2' in line:
        seen.append(json.loads(line))
        seen.append(sorted(m for m in WATCHED if m in sys.modules))
    answer(self, line)

AcpJsonRpcProtocol.write_answer = write_answer
parser = build_parser()
server = build_server(parser, with_config_file(parser.parse_args(["serve", *ARGS])))
to_server_r, to_server_w = os.pipe()
to_client_r, to_client_w = os.pipe()
os.write(to_server_w, INITIALIZE + b"\\n")
os.write(to_server_w, b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/"}}\\n')
os.close(to_server_w)
assert asyncio.run(serve(server, to_server_r, to_client_w, handle_signals=False)) == 0
print(json.dumps(seen))
"""


def started(tmp_path: Path, *args: str, version: int) -> tuple[dict[str, object], list[str]]:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "info": {"name": "t", "version": "0"}},
    }
    code = (
        f"WATCHED = {(*NOT_AT_START, *V2_MODULES)!r}\n"
        f"ARGS = {['--store', str(tmp_path), *args]!r}\n"
        f"INITIALIZE = {json.dumps(initialize, separators=(',', ':')).encode()!r}\n{STARTED}"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    answer, imported = json.loads(done.stdout)
    return answer, imported


@pytest.mark.process
def test_a_v1_start_never_imports_v2(tmp_path: Path) -> None:
    answer, imported = started(tmp_path, "--acp-v2", version=1)
    assert "modes" in answer["result"]  # a v1 answer
    assert imported == []


@pytest.mark.process
def test_a_v2_first_session_new_is_answered_before_what_it_does_not_need(tmp_path: Path) -> None:
    answer, imported = started(tmp_path, "--acp-v2", version=2)
    assert "modes" not in answer["result"] and answer["result"]["configOptions"]
    assert imported == sorted(V2_MODULES)
