// A client on the official TypeScript ACP SDK (its unstable entrypoint): it spawns the
// sidecar named by SIDECAR_ARGV (a JSON array), opts in to subagents, prompts once, answers
// permission requests with allow_once, and prints what it received as one JSON object.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";

const [command, ...args] = JSON.parse(process.env.SIDECAR_ARGV);
const sidecar = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(sidecar.stdin), Readable.toWeb(sidecar.stdout));
const updates = [];
const permissions = [];
const result = await acp
  .client({ name: "ts-subagent-client" })
  .onNotification("session/update", ({ params }) => {
    updates.push(params);
  })
  .onRequest("session/request_permission", ({ params }) => {
    permissions.push(params);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .connectWith(stream, async (context) => {
    await context.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { subagents: {} },
    });
    const { sessionId } = await context.request("session/new", {
      cwd: process.env.SESSION_CWD,
      mcpServers: [],
    });
    const answer = await context.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: process.env.PROMPT_TEXT }],
    });
    let refused = null;
    try {
      await context.request("session/prompt", {
        sessionId: `${sessionId}~task~call_a`,
        prompt: [{ type: "text", text: "hi" }],
      });
    } catch (error) {
      refused = { code: error.code, message: error.message };
    }
    return { sessionId, stopReason: answer.stopReason, refused };
  });
sidecar.stdin.end();
process.stdout.write(JSON.stringify({ ...result, updates, permissions }) + "\n");
await new Promise((resolve) => sidecar.on("close", resolve));
