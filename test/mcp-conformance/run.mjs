// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// package.json) against `airlock mcp --http`, every active server scenario, with the
// suite's own baseline of the ones that do not apply (expected-failures.yml). Run by
// scripts/mcp-e2e.sh, with airlockd running, `airlock` on PATH and AIRLOCK_E2E_WORKSPACE set.
//
// The suite needs Node 22 (it imports fs.globSync), so it runs on the Node binary
// pinned beside it; its client sends no headers of its own, so it connects through
// auth-proxy.mjs, which adds only the bearer token.
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import path from "node:path";
import { startAuthProxy } from "./auth-proxy.mjs";

const here = import.meta.dirname;
const WS = process.env.AIRLOCK_E2E_WORKSPACE;
if (!WS) throw new Error("run through scripts/mcp-e2e.sh (AIRLOCK_E2E_WORKSPACE is unset)");

const { stdout: tokenOut } = await promisify(execFile)("airlock", ["mcp", "token"]);
const token = tokenOut.trim();

const server = spawn("airlock", ["mcp", "--http", "127.0.0.1:0"], { cwd: WS, stdio: ["ignore", "ignore", "pipe"] });
let serverErr = "";
const url = await new Promise((resolve, reject) => {
  server.stderr.on("data", (d) => {
    serverErr += d;
    const m = serverErr.match(/serving MCP \(streamable HTTP\) at (http:\/\/\S+);/);
    if (m) resolve(new URL(m[1]));
  });
  server.on("exit", (code) => reject(new Error(`airlock mcp --http exited ${code}: ${serverErr}`)));
});
const proxy = await startAuthProxy(url.origin, token);

// The pinned Node 22 (npm ci installs the one for this machine: Linux x64 or arm64), else
// this node when it is new enough.
let node = path.join(here, "node_modules", ".bin", "node");
if (!fs.existsSync(node)) {
  if (Number(process.versions.node.split(".")[0]) < 22) {
    throw new Error(`the conformance suite needs Node 22 or later: npm ci in ${here} installs it on Linux x64 and arm64; ` +
      `elsewhere run this with Node 22 (this is ${process.version})`);
  }
  node = process.execPath;
}
const suite = spawn(node,
  [path.join(here, "node_modules", ".bin", "conformance"), "server", "--url", proxy.origin + url.pathname,
    "--expected-failures", path.join(here, "expected-failures.yml")],
  { cwd: here, stdio: "inherit" });
const code = await new Promise((resolve) => suite.on("exit", (c, sig) => resolve(c ?? (sig ? 1 : 0))));

await proxy.close();
server.kill("SIGTERM");
if (code !== 0) console.error("airlock mcp --http stderr:\n" + serverErr);
process.exit(code);
