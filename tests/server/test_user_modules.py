"""Issue 11 §15: user modules named on the command line cannot write onto the wire.

Found: a ``--driver`` module that printed at import reached stdout, because it was imported
before the wire took fd 1 over. Driven as found: ``acp-sidecar serve --driver M:A --tools
M:A`` as a subprocess, both modules printing (and writing to fd 1) at import; every line on
stdout is an ACP message and the noise is on stderr.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.server.wire import ROOT, spawned

pytestmark = pytest.mark.process  # fd 1 taken over before user modules are imported

NOISY = """
import os
import sys

print("{name} print at import")
sys.stdout.flush()
os.write(1, b"{name} fd 1 at import\\n")
"""


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (("--driver", "noisy_module:ScriptDriver"), "driver"),
        # The console driver lists the tools for a new session: the tools module loads then.
        (("--tools", "noisy_module:tools"), "tools"),
    ],
)
async def test_modules_printing_at_import_do_not_reach_the_wire(
    tmp_path: Path, args: tuple[str, ...], name: str
) -> None:
    (tmp_path / "noisy_module.py").write_text(
        NOISY.format(name=name)
        + "from tests.drivers import ScriptDriver\n\n\ndef tools():\n    return []\n"
    )
    env = {"PYTHONPATH": f"{ROOT}:{tmp_path}"}
    async with spawned("serve", *args, env=env) as (client, process):
        await client.initialize()
        session = await client.new_session()
        response = await client.next_response(await client.start_prompt(session, "echo hi"))
        assert "result" in response, response
        client.close()
        assert process.stderr is not None
        rest, stderr = await asyncio.gather(client.reader.read(), process.stderr.read())
        assert await process.wait() == 0
    for line in rest.splitlines():  # what came after the last answer: ACP messages only
        client.check(json.loads(line))
    assert f"{name} print at import".encode() in stderr
    assert f"{name} fd 1 at import".encode() in stderr
