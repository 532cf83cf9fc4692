// A client on the official TypeScript ACP SDK's experimental v2 API: it spawns the sidecar
// named by SIDECAR_ARGV (a JSON array), initializes over v2, starts a session in SESSION_CWD,
// sends one prompt that writes a file (allowing the dialog it asks) and reads until idle, sets
// the session's mode, lists and closes it, resumes it with its history replayed (keeping the
// updates the SDK handed over meanwhile), and prints one JSON object: what the SDK handed
// back, and every line the sidecar wrote (for the Python side to judge by the v2 schema).
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { spawnSidecar } from "./sidecar.mjs";

const { stream, finish } = spawnSidecar(acp.ndJsonStream);
const cwd = process.env.SESSION_CWD;
const asked = [];
const replayed = [];
let resuming = false;
const isSnapshot = (update) => update.sessionUpdate === "state_update";
const result = await acp
  .client({ name: "ts-v2-peer" })
  .onRequest("session/request_permission", ({ params }) => {
    asked.push(params);
    const allow = params.options.find((option) => option.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onNotification("session/update", ({ params }) => {
    if (resuming) replayed.push(params.update);
  })
  .connectWith(stream, async (context) => {
    const initialized = await context.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "ts-v2-peer", version: "0" },
      capabilities: {},
    });
    const session = await context.buildSession(cwd).start();
    const write = JSON.stringify({ path: "from-peer.txt", content: "written by the peer\n" });
    const prompted = await session.prompt(`/write ${write}`);
    const text = await session.readTextUntilIdle();
    const set = await session.setConfigOption({ configId: "mode", type: "id", value: "auto" });
    const listed = await context.request("session/list", { cwd });
    const closed = await context.request("session/close", { sessionId: session.sessionId });
    session.dispose();
    resuming = true;
    const resumed = await context.request("session/resume", {
      sessionId: session.sessionId,
      cwd,
      replayFrom: { type: "start" },
    });
    // The SDK may hand over the last notifications after the answer: wait for the snapshot.
    for (let waited = 0; !replayed.some(isSnapshot) && waited < 100; waited++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    resuming = false;
    return {
      initialized,
      sessionId: session.sessionId,
      newSession: session.newSessionResponse,
      prompted,
      text,
      asked,
      set,
      options: session.configOptions,
      listed,
      closed,
      resumed,
      replayed,
    };
  });
await finish(result);
