// A client on the official TypeScript ACP SDK's experimental v2 unstable entrypoint: it
// spawns the sidecar named by SIDECAR_ARGV (a JSON array), initializes over v2, starts a
// session in SESSION_CWD, sends PLAN_TEXT and then TASK_TEXT (allowing any dialog), reading
// each turn's updates until idle as the SDK hands them back, forks the session and lists
// both, and prints one JSON object: what the SDK returned, and every line the sidecar wrote.
import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { spawnSidecar } from "./sidecar.mjs";

const { stream, finish } = spawnSidecar(acp.ndJsonStream);
const cwd = process.env.SESSION_CWD;
const asked = [];

async function untilIdle(session) {
  const updates = [];
  for (;;) {
    const message = await session.nextUpdate();
    updates.push(message.update);
    if (message.kind === "stop") return updates;
  }
}

const result = await acp
  .client({ name: "ts-v2-unstable-peer" })
  .onRequest("session/request_permission", ({ params }) => {
    asked.push(params);
    const allow = params.options.find((option) => option.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .connectWith(stream, async (context) => {
    const initialized = await context.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "ts-v2-unstable-peer", version: "0" },
      capabilities: {},
    });
    const session = await context.buildSession(cwd).start();
    await session.prompt(process.env.PLAN_TEXT);
    const planned = await untilIdle(session);
    await session.prompt(process.env.TASK_TEXT);
    const delegated = await untilIdle(session);
    const forked = await context.request("session/fork", { sessionId: session.sessionId, cwd });
    const listed = await context.request("session/list", { cwd });
    session.dispose();
    return { initialized, sessionId: session.sessionId, planned, delegated, forked, listed, asked };
  });
await finish(result);
