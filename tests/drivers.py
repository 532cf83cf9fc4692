"""Test drivers, loadable in a subprocess with ``--driver tests.drivers:ScriptDriver``.

:class:`ScriptDriver` reads its behaviour from the prompt's first text block, so a single
driver serves every server test:

- ``echo TEXT``: one ``agent_message_chunk`` with TEXT, then ``end_turn``;
- ``wait``: one chunk ``started``, then wait for cancellation (honours the signal);
- ``ignore-cancel``: one chunk ``started``, then sleep without looking at the signal;
- ``raise``: raise ``RuntimeError("driver exploded")``;
- ``flood N``: N chunks ``chunk``, then ``end_turn``;
- ``noise``: ``print()``, a raw write to fd 1 and a child process writing to fd 1, then one
  chunk ``quiet``;
- ``permission``: ask ``session/request_permission`` and report the outcome as a chunk;
- ``read PATH`` / ``write PATH TEXT``: go through the client's file system and report;
- ``gc``: one chunk saying whether the cyclic collector runs and objects are frozen;
- anything else: ``end_turn`` with no update.
"""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys

from acp_sidecar.agent.driver import DriverBase, Turn
from acp_sidecar.protocol import (
    AgentMessageChunk,
    PermissionOption,
    PromptCapabilities,
    ReadTextFileRequest,
    RequestPermissionRequest,
    StopReason,
    TextContentBlock,
    ToolCallUpdate,
    WriteTextFileRequest,
)


def chunk(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(content=TextContentBlock(text=text))


class ScriptDriver(DriverBase):
    """Does what the prompt's first text block says (see the module docstring)."""

    prompt_capabilities = PromptCapabilities(image=True, embedded_context=True)

    async def run_turn(self, turn: Turn) -> StopReason:
        text = next((b.text for b in turn.prompt if isinstance(b, TextContentBlock)), "")
        command, _, rest = text.partition(" ")
        if command == "echo":
            await turn.send(chunk(rest))
        elif command == "wait":
            await turn.send(chunk("started"))
            await turn.signal.wait()
        elif command == "ignore-cancel":
            await turn.send(chunk("started"))
            await asyncio.sleep(3600)
        elif command == "raise":
            raise RuntimeError("driver exploded")
        elif command == "flood":
            update = chunk("chunk")
            send = turn.send
            for _ in range(int(rest)):
                await send(update)
        elif command == "gc":
            await turn.send(chunk(f"enabled={gc.isenabled()} frozen={gc.get_freeze_count() > 0}"))
        elif command == "noise":
            make_noise()
            await turn.send(chunk("quiet"))
        elif command == "permission":
            await self._ask_permission(turn)
        elif command == "read":
            answer = await turn.client.read_text_file(
                ReadTextFileRequest(session_id=turn.session_id, path=rest), signal=turn.signal
            )
            await turn.send(chunk(f"read: {answer.content}"))
        elif command == "write":
            path, _, content = rest.partition(" ")
            await turn.client.write_text_file(
                WriteTextFileRequest(session_id=turn.session_id, path=path, content=content),
                signal=turn.signal,
            )
            await turn.send(chunk("written"))
        return "end_turn"

    async def _ask_permission(self, turn: Turn) -> None:
        request = RequestPermissionRequest(
            session_id=turn.session_id,
            tool_call=ToolCallUpdate(tool_call_id="call-1", title="touch a file"),
            options=[
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        answer = await turn.client.request_permission(request, signal=turn.signal)
        outcome = answer.outcome
        picked = getattr(outcome, "option_id", None)
        await turn.send(chunk(f"permission: {outcome.outcome} {picked or ''}".strip()))


def make_noise() -> None:
    """Everything that would corrupt a naive stdout wire."""
    print("print() noise")  # the point of the test
    sys.stdout.flush()
    os.write(1, b"raw fd 1 noise\n")
    subprocess.run([sys.executable, "-c", "print('child noise')"], check=True)
    subprocess.run(["sh", "-c", "echo shell noise; echo to-stderr >&2"], check=True)
