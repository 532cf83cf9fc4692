"""The peers ``bench_wire.py`` measures acp-sidecar against, and its benchmark driver.

Each peer answers the same three requests the same way: ``initialize``, ``session/new``, and
``session/prompt`` whose first text block is either ``ping`` (answer ``end_turn`` at once) or
``flood N`` (emit N ``agent_message_chunk`` updates with the text ``chunk``, then answer).

- :class:`FloodDriver`: acp-sidecar's driver (``--driver benchmarks.wire_peers:FloodDriver``).
- :data:`SDK_AGENT`: a minimal agent on the official ACP Python SDK (``acp.run_agent``).
- :data:`SDK_AGENT_ECHO`: that agent sending the two updates every acp-sidecar turn sends.
- :data:`TS_SDK_AGENT`: the same agent on the official TypeScript SDK
  (``@agentclientprotocol/sdk``), an ES module run by ``node`` from the folder the SDK is
  installed in.
- :data:`BARE_RESPONDER`: ``asyncio`` + ``json`` answering NDJSON by hand, no ACP library.
- :data:`PYGLS_FLOOR`: the bare responder that first imports ``pygls.server``: the cold-start
  floor acp-sidecar is held to (its JSON-RPC machinery is pygls's).
"""

from __future__ import annotations

from acp_sidecar.agent.driver import DriverBase, Turn
from acp_sidecar.protocol.content import TextContentBlock
from acp_sidecar.protocol.initialize import PromptCapabilities
from acp_sidecar.protocol.session import StopReason
from acp_sidecar.protocol.updates import AgentMessageChunk


class FloodDriver(DriverBase):
    """``ping`` ends the turn at once; ``flood N`` streams N chunks first."""

    prompt_capabilities = PromptCapabilities()

    async def run_turn(self, turn: Turn) -> StopReason:
        first = turn.prompt[0] if turn.prompt else None
        text = first.text if isinstance(first, TextContentBlock) else ""
        if text.startswith("flood "):
            update = AgentMessageChunk(content=TextContentBlock(text="chunk"))
            send = turn.send
            for _ in range(int(text[6:])):
                await send(update)
        return "end_turn"


SDK_AGENT = """
import asyncio, uuid
import acp
from acp import schema

class BenchAgent:
    def on_connect(self, conn):
        self.conn = conn

    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kw):
        return schema.InitializeResponse(
            protocol_version=1,
            agent_capabilities=schema.AgentCapabilities(),
            agent_info=schema.Implementation(name="sdk-agent", version="0"),
        )

    async def authenticate(self, method_id, **kw):
        return schema.AuthenticateResponse()

    async def new_session(self, cwd, mcp_servers=None, **kw):
        return schema.NewSessionResponse(session_id=uuid.uuid4().hex)

    async def prompt(self, session_id, prompt, **kw):
        text = getattr(prompt[0], "text", "")
        if text.startswith("flood "):
            update = acp.update_agent_message_text("chunk")
            for _ in range(int(text[6:])):
                await self.conn.session_update(session_id, update)
        return schema.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id, **kw):
        return None

asyncio.run(acp.run_agent(BenchAgent()))
"""

SDK_AGENT_ECHO = SDK_AGENT.replace(
    '        return schema.PromptResponse(stop_reason="end_turn")',
    """        await self.conn.session_update(session_id, schema.UserMessageChunk(
            session_update="user_message_chunk", content=prompt[0], message_id=uuid.uuid4().hex[:16]))
        now = datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")
        await self.conn.session_update(session_id, schema.SessionInfoUpdate(
            session_update="session_info_update", updated_at=now))
        return schema.PromptResponse(stop_reason="end_turn")""",
).replace("import asyncio, uuid", "import asyncio, datetime, uuid")
""":data:`SDK_AGENT` sending what each acp-sidecar turn sends besides its answer: the prompt
echoed under a message id, then a ``session_info_update`` with the session's ``updatedAt``
(the messages ACP's message ids and session info ask for): the round trip of the same work."""

TS_SDK_AGENT = """\
import { Readable, Writable } from "node:stream";
import { randomUUID } from "node:crypto";
import * as acp from "@agentclientprotocol/sdk";

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const app = acp
  .agent({ name: "ts-sdk-agent" })
  .onRequest("initialize", () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {},
    authMethods: [],
  }))
  .onRequest("session/new", () => ({ sessionId: randomUUID() }))
  .onRequest("session/prompt", async ({ params, client }) => {
    const first = params.prompt[0];
    const text = first && first.type === "text" ? first.text : "";
    if (text.startsWith("flood ")) {
      const update = {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: "chunk" },
      };
      for (let left = Number(text.slice(6)); left > 0; left--) {
        await client.notify("session/update", { sessionId: params.sessionId, update });
      }
    }
    return { stopReason: "end_turn" };
  })
  .onNotification("session/cancel", () => {});
await app.connect(stream).closed;
"""
"""The TypeScript SDK agent (SDK 2.x's ``agent()`` app builder); ``await client.notify``
is how an SDK agent streams, as the Python one awaits ``session_update``."""

BARE_RESPONDER = """
import asyncio, json, sys, uuid

async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout.buffer
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    while line := await reader.readline():
        if not line.strip():
            continue
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        elif method == "session/new":
            result = {"sessionId": uuid.uuid4().hex}
        elif method == "session/prompt":
            text = params["prompt"][0].get("text", "")
            if text.startswith("flood "):
                update = {"sessionUpdate": "agent_message_chunk",
                          "content": {"type": "text", "text": "chunk"}}
                for _ in range(int(text[6:])):
                    out.write(dumps({"jsonrpc": "2.0", "method": "session/update",
                                     "params": {"sessionId": params["sessionId"],
                                                "update": update}}).encode() + b"\\n")
            result = {"stopReason": "end_turn"}
        elif "id" not in message:
            continue
        else:
            result = None
        out.write(dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                  + b"\\n")
        out.flush()

asyncio.run(main())
"""

PYGLS_FLOOR = "import pygls.server\n" + BARE_RESPONDER
