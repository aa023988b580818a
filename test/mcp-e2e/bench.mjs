// Round-trip latency through the real stack (run by `MCP_E2E_BENCH=1 scripts/mcp-e2e.sh`):
// a P0 read_file through `airlock mcp` (TypeScript SDK client → stdio → airlock mcp →
// local API → broker → file → back), and an `airlock hook claude` decision (process
// start, event on stdin, broker round trip, decision on stdout).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const BIN = process.env.AIRLOCK_BIN;
const WS = process.env.AIRLOCK_E2E_WORKSPACE;
fs.writeFileSync(path.join(WS, "bench.txt"), "a line of text\n".repeat(100));

const stats = (xs) => {
  xs.sort((a, b) => a - b);
  const q = (p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  return `median ${q(0.5).toFixed(2)} ms, p95 ${q(0.95).toFixed(2)} ms, min ${xs[0].toFixed(2)} ms (n=${xs.length})`;
};

const client = new Client({ name: "airlock-bench", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: BIN, args: ["mcp", "--cwd", WS], cwd: WS, env: { ...process.env } }));
for (let i = 0; i < 50; i++) await client.callTool({ name: "read_file", arguments: { path: "bench.txt" } });
const mcp = [];
for (let i = 0; i < 500; i++) {
  const t0 = performance.now();
  const res = await client.callTool({ name: "read_file", arguments: { path: "bench.txt" } });
  mcp.push(performance.now() - t0);
  if (res.isError) throw new Error(JSON.stringify(res));
}
await client.close();
console.log(`read_file through airlock mcp (P0): ${stats(mcp)}`);

const event = JSON.stringify({ session_id: "bench", cwd: WS, hook_event_name: "PreToolUse", tool_name: "Read",
  tool_input: { file_path: path.join(WS, "bench.txt") } });
const hook = [];
for (let i = 0; i < 110; i++) {
  const t0 = performance.now();
  const r = spawnSync(BIN, ["hook", "claude"], { input: event, encoding: "utf8" });
  const dt = performance.now() - t0;
  if (i >= 10) hook.push(dt);
  if (!r.stdout.includes('"permissionDecision":"allow"')) throw new Error(r.stdout + r.stderr);
}
console.log(`airlock hook claude decision (process start to decision): ${stats(hook)}`);

// The floor: starting the same executable for a command that does nothing.
const floor = [];
for (let i = 0; i < 110; i++) {
  const t0 = performance.now();
  spawnSync(BIN, ["version"], { encoding: "utf8" });
  if (i >= 10) floor.push(performance.now() - t0);
}
console.log(`airlock version (process start floor, same machine): ${stats(floor)}`);
