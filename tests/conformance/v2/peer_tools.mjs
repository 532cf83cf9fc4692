// A client on the official TypeScript ACP SDK's experimental v2 API that runs tools: it spawns
// the sidecar named by SIDECAR_ARGV (a JSON array), initializes over v2, starts a session in
// SESSION_CWD with the MCP servers of MCP_SERVERS (a JSON array of v2 entries), and sends each
// prompt of PROMPTS (a JSON array of strings) in turn, reading the session's updates through
// the SDK until its idle state. A permission dialog is allowed once, unless what it asks about
// names DENY: then it is rejected once. It prints one JSON object: per prompt, the SDK's answer
// and the updates it handed back, the dialogs asked, and every line the sidecar wrote.
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { spawnSidecar } from "./sidecar.mjs";

const { stream, finish } = spawnSidecar(acp.ndJsonStream);
const asked = [];
const choose = (params) => {
  const kind = JSON.stringify(params.subject).includes("DENY") ? "reject_once" : "allow_once";
  return params.options.find((option) => option.kind === kind);
};
const result = await acp
  .client({ name: "ts-v2-tools-peer" })
  .onRequest("session/request_permission", ({ params }) => {
    asked.push(params);
    return { outcome: { outcome: "selected", optionId: choose(params).optionId } };
  })
  .connectWith(stream, async (context) => {
    await context.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "ts-v2-tools-peer", version: "0" },
      capabilities: {},
    });
    let builder = context.buildSession(process.env.SESSION_CWD);
    for (const server of JSON.parse(process.env.MCP_SERVERS)) {
      builder = builder.withMcpServer(server);
    }
    const session = await builder.start();
    const turns = [];
    for (const text of JSON.parse(process.env.PROMPTS)) {
      const answer = await session.prompt(text);
      const updates = [];
      for (;;) {
        const { update } = await session.nextUpdate();
        updates.push(update);
        if (update.sessionUpdate === "state_update" && update.state === "idle") break;
      }
      turns.push({ answer, updates });
    }
    session.dispose();
    return { turns, asked };
  });
await finish(result);
