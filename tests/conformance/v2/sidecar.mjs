// What every v2 peer shares: the sidecar named by SIDECAR_ARGV (a JSON array) spawned, its
// NDJSON stream for the SDK with every byte it writes kept, and the end: its stdin closed, its
// exit awaited, then one JSON line printed (what the peer gathered, and every line the sidecar
// wrote, for the Python side to judge by the v2 schema).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

export function spawnSidecar(ndJsonStream) {
  const [command, ...args] = JSON.parse(process.env.SIDECAR_ARGV);
  const sidecar = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  const decoder = new TextDecoder();
  let written = "";
  const tee = new TransformStream({
    transform(chunk, controller) {
      written += decoder.decode(chunk, { stream: true });
      controller.enqueue(chunk);
    },
  });
  const stream = ndJsonStream(
    Writable.toWeb(sidecar.stdin),
    Readable.toWeb(sidecar.stdout).pipeThrough(tee),
  );
  const exited = new Promise((resolve) => sidecar.on("close", resolve));
  async function finish(result) {
    sidecar.stdin.end();
    await exited;
    process.stdout.write(JSON.stringify({ ...result, written }) + "\n");
  }
  return { stream, finish };
}
