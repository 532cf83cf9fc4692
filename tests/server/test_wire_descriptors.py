"""A command cannot reach the wire through ``/proc/<sidecar pid>/fd``, over the wire.

The sidecar and the command it runs are the same unprivileged user (``nobody``: root would
open anything). The command looks for the sidecar's private wire descriptors — the pipes
above fd 2 — through ``/proc/$PPID`` and writes into them: bytes that are not JSON into the
one the sidecar writes (the editor would read them), and a ``session/set_mode auto`` request
into the one it reads (after which nothing would be asked any more). The sidecar is not
dumpable, so none of this can be opened: the wire carries only the sidecar's own messages,
and the next command is still asked about.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests import unprivileged
from tests.server.wire import WireClient, open_pipe_streams

pytestmark = pytest.mark.process  # the process's descriptors under /proc

BOUND = 20.0

# The sidecar's pipes above fd 2 whose flags end in the given access mode (1: written,
# 0: read), each written with PAYLOAD; "wrote N" for each one reached.
ATTACK = """\
for f in /proc/$PPID/fd/*; do
  n=${f##*/}
  [ "$n" -gt 2 ] 2>/dev/null || continue
  case $(readlink "$f") in pipe:*) ;; *) continue ;; esac
  grep -q '^flags:.*MODE$' /proc/$PPID/fdinfo/$n || continue
  printf '%s\\n' 'PAYLOAD' > "$f" && echo "wrote $n"
done
echo "attacker uid $(id -u), sidecar uid $(stat -c %u /proc/$PPID)"
"""


def attack(mode: int, payload: str) -> str:
    assert "'" not in payload
    return ATTACK.replace("MODE", str(mode)).replace("PAYLOAD", payload)


class RawTurns:
    """Reads the wire line by line, keeping what is not JSON, answering permission requests."""

    def __init__(self, client: WireClient) -> None:
        self.client = client
        self.foreign: list[bytes] = []
        """Lines that are not one JSON object: injected bytes."""
        self.messages: list[dict[str, Any]] = []

    async def turn(self, session: str, text: str) -> tuple[int, str]:
        """Run a prompt, allowing each call once; how many permission requests it made, and
        the text of its cards."""
        prompt = await self.client.start_prompt(session, text)
        asked = 0
        while True:
            line = await asyncio.wait_for(self.client.reader.readline(), BOUND)
            assert line, "the sidecar closed its output"
            try:
                message = json.loads(line)
            except ValueError:
                self.foreign.append(line)
                continue
            if not isinstance(message, dict):
                self.foreign.append(line)
                continue
            self.messages.append(message)
            if message.get("method") == "session/request_permission":
                asked += 1
                answer = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
                await self.client.respond(message["id"], answer)
            elif message.get("id") == prompt and "method" not in message:
                assert message["result"]["stopReason"] == "end_turn", message
                return asked, json.dumps(self.messages)


def nobodys_pipe() -> tuple[int, int]:
    """A pipe owned by ``nobody``, as an editor running as that user would create it (a pipe
    is its creator's, mode 0600: root's would hold against ``nobody`` by itself)."""
    read_end, write_end = os.pipe()
    os.fchown(read_end, unprivileged.NOBODY, unprivileged.NOBODY)
    return read_end, write_end


@asynccontextmanager
async def unprivileged_sidecar() -> AsyncIterator[tuple[RawTurns, str, Path]]:
    """The sidecar as ``nobody`` on raw pipes, initialized, with a session in ``ask`` mode."""
    unprivileged.require()
    with unprivileged.shared_directory() as shared:
        to_sidecar = nobodys_pipe()
        from_sidecar = nobodys_pipe()
        process = await asyncio.create_subprocess_exec(
            *unprivileged.command("--store", str(shared / "store")),
            stdin=to_sidecar[0],
            stdout=from_sidecar[1],
            stderr=asyncio.subprocess.DEVNULL,
            cwd=shared,
            env=unprivileged.environment(),
        )
        os.close(to_sidecar[0])
        os.close(from_sidecar[1])
        reader, writer = await open_pipe_streams(from_sidecar[0], to_sidecar[1])
        try:
            client = WireClient(reader, writer)
            await client.initialize()
            session = await client.new_session(str(shared))
            yield RawTurns(client), session, shared
            client.close()
            assert await asyncio.wait_for(process.wait(), BOUND) == 0
        finally:
            writer.close()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def test_a_command_cannot_write_bytes_into_the_wire() -> None:
    async with unprivileged_sidecar() as (turns, session, _shared):
        asked, cards = await turns.turn(session, "!" + attack(1, "garbage"))
        assert asked == 1
        assert "attacker uid 65534, sidecar uid 65534" in cards  # same user, not root
        assert turns.foreign == []
        assert not re.search(r"wrote \d", cards)  # not even opened


async def test_a_command_cannot_send_requests_as_the_editor() -> None:
    async with unprivileged_sidecar() as (turns, session, _shared):
        request = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": "injected",
                "method": "session/set_mode",
                "params": {"sessionId": session, "modeId": "auto"},
            }
        )
        asked, cards = await turns.turn(session, "!" + attack(0, request))
        assert asked == 1
        assert "attacker uid 65534, sidecar uid 65534" in cards
        # The next command is still asked about: the mode did not change.
        asked, _ = await turns.turn(session, "!echo next")
        assert asked == 1
        assert not [m for m in turns.messages if m.get("id") == "injected"]
        updates = [m["params"] for m in turns.messages if m.get("method") == "session/update"]
        assert not [u for u in updates if u["update"]["sessionUpdate"] == "current_mode_update"]
        assert turns.foreign == []
        assert not re.search(r"wrote \d", cards)  # not even opened
