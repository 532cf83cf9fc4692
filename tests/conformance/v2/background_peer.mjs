// A client on the official TypeScript ACP SDK's experimental v2 API, for background work: it
// spawns the sidecar named by SIDECAR_ARGV (a JSON array), starts a session in SESSION_CWD in
// the auto mode, keeps a bash job (background: true), cancels its terminal with
// ActiveSession.cancelTerminal, then runs a foreground bash call and cancels it with
// ActiveSession.cancelToolCall. The SDK refuses either cancel unless the sidecar advertised
// it, so each one sent proves the advertising too. It prints one JSON object: what the SDK
// handed back, and every line the sidecar wrote (for the Python side to judge by the schema).
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { spawnSidecar } from "./sidecar.mjs";

const { stream, finish } = spawnSidecar(acp.ndJsonStream);
const cwd = process.env.SESSION_CWD;
const bash = (command, background) => `/bash ${JSON.stringify({ command, background })}`;

// Read the session's messages until `wanted(message)`; every one read, in order.
async function until(session, wanted) {
  const seen = [];
  for (;;) {
    const message = await session.nextUpdate();
    seen.push(message.update);
    if (wanted(message)) return seen;
  }
}

const result = await acp
  .client({ name: "ts-v2-background-peer" })
  .connectWith(stream, async (context) => {
    await context.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "ts-v2-background-peer", version: "0" },
      capabilities: {},
    });
    const session = await context.buildSession(cwd).start();
    await session.setConfigOption({ configId: "mode", type: "id", value: "auto" });

    await session.prompt(bash("echo up; exec sleep 300", true));
    await until(session, (m) => m.kind === "stop");
    const listed = session.background;
    const terminalId = listed[0].terminalId;
    const advertisedTerminal = session.canCancelTerminal(terminalId);
    let refused = null;
    try {
      await session.cancelTerminal("not-a-terminal");
    } catch (error) {
      refused = `${error.name}: ${error.message}`;
    }
    const terminalCancelled = await session.cancelTerminal(terminalId);
    const afterTerminal = await until(
      session,
      (m) => m.kind === "stop" && session.background.length === 0,
    );
    const terminalStillCancellable = session.canCancelTerminal(terminalId);

    await session.prompt(bash("echo running; while [ ! -e never ]; do sleep 0.02; done", false));
    let toolCallId = null;
    const beforeCancel = await until(session, (m) => {
      const u = m.update;
      if (u.sessionUpdate === "tool_call_update" && session.canCancelToolCall(u.toolCallId)) {
        toolCallId = u.toolCallId;
        return true;
      }
      return false;
    });
    const toolCallCancelled = await session.cancelToolCall(toolCallId);
    const afterToolCall = await until(session, (m) => m.kind === "stop");
    const toolCallStillCancellable = session.canCancelToolCall(toolCallId);
    const closed = await context.request("session/close", { sessionId: session.sessionId });
    session.dispose();
    return {
      listed,
      terminalId,
      advertisedTerminal,
      refused,
      terminalCancelled,
      afterTerminal,
      terminalStillCancellable,
      toolCallId,
      beforeCancel,
      toolCallCancelled,
      afterToolCall,
      toolCallStillCancellable,
      closed,
    };
  });
await finish(result);
