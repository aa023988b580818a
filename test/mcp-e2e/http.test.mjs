// End-to-end test of `airlock mcp --http` with the official TypeScript MCP SDK client
// over streamable HTTP, configured as the README's URL configurations (config/mcp-http.json,
// config/codex-http-config.toml). Run by scripts/mcp-e2e.sh like mcp.test.mjs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const run = promisify(execFile);
const BIN = process.env.AIRLOCK_BIN;
const WS = process.env.AIRLOCK_E2E_WORKSPACE;
assert.ok(BIN && WS && process.env.AIRLOCK_HOME, "run through scripts/mcp-e2e.sh");

const CONFIG = path.join(import.meta.dirname, "config");
const claude = JSON.parse(fs.readFileSync(path.join(CONFIG, "mcp-http.json"), "utf8")).mcpServers.airlock;
const codex = fs.readFileSync(path.join(CONFIG, "codex-http-config.toml"), "utf8");

let server; // the `airlock mcp --http` process
let serverErr = "";
let url; // the URL it announced
let token;

// startHTTP starts `airlock mcp --http addr` in the workspace and resolves with the URL
// it announces on stderr (port 0: the kernel picks one, so parallel runs never collide).
function startHTTP(addr) {
  return new Promise((resolve, reject) => {
    const child = spawn("airlock", ["mcp", "--http", addr], { cwd: WS, env: process.env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
      const m = err.match(/serving MCP \(streamable HTTP\) at (http:\/\/\S+);/);
      if (m) resolve({ child, url: m[1], err: () => err });
    });
    child.on("exit", (code) => reject(Object.assign(new Error(`airlock mcp --http ${addr} exited ${code}: ${err}`), { code, stderr: err })));
  });
}

// headersFor expands the README's Claude Code headers (${AIRLOCK_MCP_TOKEN}) with tok.
function headersFor(tok) {
  return Object.fromEntries(Object.entries(claude.headers).map(([k, v]) => [k, v.replace("${AIRLOCK_MCP_TOKEN}", tok)]));
}

async function connect(headers) {
  const c = new Client({ name: "airlock-e2e-http", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return c;
}

before(async () => {
  fs.writeFileSync(path.join(WS, "hello-http.txt"), "over http\n");
  ({ stdout: token } = await run("airlock", ["mcp", "token"]));
  token = token.trim();
  const started = await startHTTP("127.0.0.1:0");
  server = started.child;
  url = started.url;
  serverErr = started.err;
});

after(() => {
  server?.kill("SIGTERM");
});

test("the README's URL configurations for Claude Code and Codex name the same endpoint and token", () => {
  assert.equal(claude.type, "http");
  assert.deepEqual(Object.keys(claude.headers), ["Authorization"]);
  assert.equal(codex.match(/^url = (.*)$/m) && JSON.parse(codex.match(/^url = (.*)$/m)[1]), claude.url);
  assert.match(codex, /^bearer_token_env_var = "AIRLOCK_MCP_TOKEN"$/m);
  const readme = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "README.md"), "utf8");
  assert.ok(readme.includes(codex), "the README's Codex URL configuration is config/codex-http-config.toml");
  assert.ok(readme.includes(fs.readFileSync(path.join(CONFIG, "mcp-http.json"), "utf8").trim()),
    "the README's Claude Code .mcp.json is config/mcp-http.json");
  // The configured URL differs from the test's only in the port the test let the kernel pick.
  const want = new URL(claude.url);
  const got = new URL(url);
  assert.equal(got.hostname, want.hostname);
  assert.equal(got.pathname, want.pathname);
});

test("airlock mcp token prints the same token every time (kept in the keyring)", async () => {
  assert.ok(token.length >= 32, `token ${token}`);
  const { stdout } = await run("airlock", ["mcp", "token"]);
  assert.equal(stdout.trim(), token);
});

test("over HTTP with the token: the governed tools, and a P0 read in the workspace runs", async () => {
  const c = await connect(headersFor(token));
  try {
    const { tools } = await c.listTools();
    for (const name of ["read_file", "write_file", "bash", "web_fetch", "ops_plan", "ops_apply"]) {
      assert.ok(tools.some((t) => t.name === name), `tool ${name} is listed`);
    }
    const res = await c.callTool({ name: "read_file", arguments: { path: "hello-http.txt" } });
    assert.ok(!res.isError, JSON.stringify(res));
    assert.match(res.content[0].text, /^over http\n/);
  } finally {
    await c.close();
  }
});

test("each client gets its own session", async () => {
  const [a, b] = [new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: headersFor(token) } }),
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: headersFor(token) } })];
  const ca = new Client({ name: "a", version: "1" });
  const cb = new Client({ name: "b", version: "1" });
  await ca.connect(a);
  await cb.connect(b);
  try {
    assert.ok(a.sessionId && b.sessionId);
    assert.notEqual(a.sessionId, b.sessionId);
    await ca.listTools();
    await cb.listTools();
  } finally {
    await ca.close();
    await cb.close();
  }
});

async function pendingWrite(file, ms = 20000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const { stdout } = await run(BIN, ["approvals", "list", "--json"]);
    const p = (JSON.parse(stdout || "[]") ?? []).find((x) => {
      const req = typeof x.request === "string" ? JSON.parse(x.request) : x.request;
      return req?.tool === "write_file" && JSON.stringify(req.params ?? {}).includes(file);
    });
    if (p) return p;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no pending write_file of ${file} after ${ms} ms`);
}

test("each HTTP session is its own broker session: a grant for one does not reach the other", async () => {
  const a = await connect(headersFor(token));
  const b = await connect(headersFor(token));
  try {
    const file = "http-session.txt";
    const first = a.callTool({ name: "write_file", arguments: { path: file, content: "a\n" } });
    const p = await pendingWrite(file);
    await run(BIN, ["approvals", "allow", p.id, "--session"]);
    assert.ok(!(await first).isError);
    const again = await a.callTool({ name: "write_file", arguments: { path: file, content: "a again\n" } });
    assert.ok(!again.isError, "the session's grant covers its second write");
    assert.equal(fs.readFileSync(path.join(WS, file), "utf8"), "a again\n");

    const other = b.callTool({ name: "write_file", arguments: { path: file, content: "b\n" } });
    const q = await pendingWrite(file);
    assert.notEqual(q.id, p.id);
    await run(BIN, ["approvals", "deny", q.id, "--reason", "another session"]);
    const res = await other;
    assert.ok(res.isError, "the other session was asked, and denied");
    assert.equal(fs.readFileSync(path.join(WS, file), "utf8"), "a again\n");
  } finally {
    await a.close();
    await b.close();
  }
});

// post sends one initialize request by hand, so the test sets any header it likes.
async function post(headers) {
  return fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
  });
}

test("a missing or wrong token is 401, saying where the token is", async () => {
  for (const headers of [{}, headersFor("not-the-token-" + "x".repeat(30)), { Authorization: token }]) {
    await assert.rejects(connect(headers), (e) => e.code === 401 && /bad_token/.test(e.message));
    const res = await post(headers);
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer /);
    const body = await res.json();
    assert.equal(body.code, "bad_token");
    assert.match(body.hint, /airlock mcp token/);
  }
});

test("a foreign Origin is 403 even with the token; a loopback Origin is served", async () => {
  await assert.rejects(connect({ ...headersFor(token), Origin: "https://evil.example" }),
    (e) => e.code === 403 && /foreign_origin/.test(e.message));
  const res = await post({ ...headersFor(token), Origin: "https://evil.example" });
  assert.equal(res.status, 403);
  assert.equal((await res.json()).code, "foreign_origin");
  const local = await post({ ...headersFor(token), Origin: "http://localhost:5173" });
  assert.equal(local.status, 200);
  await local.body?.cancel();
});

test("a Host that is not loopback (DNS rebinding) is 403 even with the token", async () => {
  // fetch will not set Host, so this request goes through node:http.
  const { request } = await import("node:http");
  const u = new URL(url);
  const status = await new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST",
      headers: { Host: `rebind.example:${u.port}`, Authorization: `Bearer ${token}`, "Content-Type": "application/json" } },
    (res) => { res.resume(); resolve(res.statusCode); });
    req.on("error", reject);
    req.end("{}");
  });
  assert.equal(status, 403);
});

test("a non-loopback address is refused before listening, naming the way out", async () => {
  for (const addr of ["0.0.0.0:0", "[::]:0", ":0", "example.com:8765"]) {
    const err = await startHTTP(addr).then(
      ({ child }) => { child.kill(); throw new Error(`airlock mcp --http ${addr} started`); },
      (e) => e);
    assert.notEqual(err.code, 0, `${addr}: exit code`);
    assert.match(err.stderr, /refusing to listen on .*not a loopback address; use a loopback address such as 127\.0\.0\.1:/, addr);
  }
  assert.match(serverErr(), /serving MCP/);
});
