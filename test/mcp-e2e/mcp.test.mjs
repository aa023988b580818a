// End-to-end test of `airlock mcp` with the official TypeScript MCP SDK client.
// Run by scripts/mcp-e2e.sh, which starts airlockd with its own AIRLOCK_HOME and sets
// AIRLOCK_BIN, AIRLOCK_E2E_WORKSPACE (not under /tmp) and AIRLOCK_E2E_OUTSIDE.
// The person is played by `airlock approvals allow|deny`, and for P2, interactive-only
// requests and always grants by the login password typed on a pseudo-terminal (script(1)),
// as a person would (scripts/mcp-e2e.sh gives the core a PAM service that accepts
// AIRLOCK_E2E_PASSWORD).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const run = promisify(execFile);
const BIN = process.env.AIRLOCK_BIN;
const WS = process.env.AIRLOCK_E2E_WORKSPACE;
const OUTSIDE = process.env.AIRLOCK_E2E_OUTSIDE;
assert.ok(BIN && WS && OUTSIDE && process.env.AIRLOCK_HOME, "run through scripts/mcp-e2e.sh");

let client;
let stderr = "";

// The configuration the README gives, read from the files it is copied from
// (config/): command `airlock` (on PATH: scripts/mcp-e2e.sh puts build/bin first), args
// ["mcp"], started in the workspace as an agent starts it in its project.
const CONFIG = path.join(import.meta.dirname, "config");
const server = JSON.parse(fs.readFileSync(path.join(CONFIG, "mcp.json"), "utf8")).mcpServers.airlock;
const claudeSettings = JSON.parse(fs.readFileSync(path.join(CONFIG, "claude-settings.json"), "utf8"));

test("the README's configurations for Codex, opencode and Claude Code start the same server", () => {
  const codex = fs.readFileSync(path.join(CONFIG, "codex-config.toml"), "utf8");
  assert.match(codex, /^\[mcp_servers\.airlock\]$/m);
  // Without it Codex refuses bash, write_file, edit_file and the ops write tools itself.
  assert.match(codex, /^default_tools_approval_mode = "approve"$/m);
  const readme = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "README.md"), "utf8");
  const start = readme.indexOf("[mcp_servers.airlock]");
  assert.equal(readme.slice(start, readme.indexOf("```", start)), codex, "the README's Codex configuration is config/codex-config.toml");
  assert.equal(JSON.parse(codex.match(/^command = (.*)$/m)[1]), server.command);
  assert.deepEqual(JSON.parse(codex.match(/^args = (.*)$/m)[1]), server.args);
  const opencode = JSON.parse(fs.readFileSync(path.join(CONFIG, "opencode.json"), "utf8")).mcp.airlock;
  assert.deepEqual(opencode.command, [server.command, ...server.args]);
  assert.equal(opencode.type, "local");
  const hookCmd = claudeSettings.hooks.PreToolUse[0].hooks[0].command;
  assert.equal(hookCmd, "airlock hook claude");
  for (const t of ["Bash", "Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "WebFetch", "WebSearch", "mcp__airlock__bash"]) {
    assert.match(t, new RegExp(`^(${claudeSettings.hooks.PreToolUse[0].matcher})$`), `the hook matcher covers ${t}`);
  }
});

before(async () => {
  fs.writeFileSync(path.join(WS, "hello.txt"), "line one\nline two\nline three\n");
  const transport = new StdioClientTransport({
    command: server.command, args: server.args, cwd: WS,
    env: { ...process.env }, stderr: "pipe",
  });
  transport.stderr?.on("data", (d) => { stderr += d; });
  client = new Client({ name: "airlock-e2e", version: "1.0.0" });
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  if (stderr) console.error("airlock mcp stderr:\n" + stderr);
});

async function approvals() {
  const { stdout } = await run(BIN, ["approvals", "list", "--json"]);
  return JSON.parse(stdout || "[]") ?? [];
}

function toolOf(p) {
  const req = typeof p.request === "string" ? JSON.parse(p.request) : p.request;
  return req?.tool;
}

// waitPending polls until a request for tool is pending, and returns it.
async function waitPending(tool, ms = 20000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const p = (await approvals()).find((x) => toolOf(x) === tool);
    if (p) return p;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no pending ${tool} request after ${ms} ms; stderr: ${stderr}`);
}

// silently runs a call that must not wait for anyone.
async function silently(name, args) {
  let timer;
  const timeout = new Promise((_, rej) => {
    timer = setTimeout(async () => rej(new Error(`${name} waited for a person: ${JSON.stringify(await approvals())}`)), 10000);
  });
  try {
    return await Promise.race([client.callTool({ name, arguments: args }), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// typeOnTTY answers like a person at a terminal: `airlock approvals allow ID [flags]`
// under a pseudo-terminal, typing the login password when asked.
function typeOnTTY(id, flags = "", password = process.env.AIRLOCK_E2E_PASSWORD) {
  return onTTY(`${BIN} approvals allow ${id} ${flags}`, password);
}

// onTTY runs an airlock command line under a pseudo-terminal, typing the login password
// when it asks for it.
function onTTY(cmdline, password = process.env.AIRLOCK_E2E_PASSWORD) {
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qec", cmdline, "/dev/null"], { env: process.env });
    let out = "";
    let typed = false;
    child.stdout.on("data", (d) => {
      out += d;
      if (!typed && out.includes("Type your login password")) {
        typed = true;
        child.stdin.write(password + "\n");
      }
    });
    child.on("exit", (code) => {
      child.stdin.destroy();
      code === 0 ? resolve(out) : reject(new Error(`${cmdline} on a TTY exited ${code}: ${out}`));
    });
  });
}

const text = (res) => res.content.map((c) => c.text ?? "").join("\n");

test("lists the governed tools with their schemas", async () => {
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const name of ["read_file", "list_dir", "search_files", "write_file", "edit_file", "bash", "web_fetch",
    "ops_plan", "ops_diff", "ops_approve", "ops_apply", "ops_verify", "ops_journal"]) {
    assert.ok(byName[name], `tool ${name} is listed`);
    assert.equal(byName[name].inputSchema.type, "object", `${name} takes an object`);
    assert.ok(byName[name].description.length > 40, `${name} has a description a model can act on`);
  }
  const req = (n) => byName[n].inputSchema.required ?? [];
  assert.deepEqual(req("read_file"), ["path"]);
  assert.ok(byName.read_file.inputSchema.properties.offset && byName.read_file.inputSchema.properties.limit);
  assert.deepEqual([...req("edit_file")].sort(), ["new_string", "old_string", "path"]);
  assert.ok(byName.edit_file.inputSchema.properties.replace_all);
  assert.deepEqual(req("bash"), ["command"]);
  assert.ok(byName.bash.inputSchema.properties.timeout_seconds);
  assert.deepEqual(req("web_fetch"), ["url"]);
  assert.ok(byName.search_files.inputSchema.properties.glob && byName.search_files.inputSchema.properties.regex);
  assert.deepEqual([...req("ops_apply")].sort(), ["plan_id", "token"]);
});

test("read_file in the workspace runs silently (P0)", async () => {
  const res = await silently("read_file", { path: "hello.txt", offset: 2, limit: 1 });
  assert.ok(!res.isError, text(res));
  assert.match(text(res), /^line two\n/);
  assert.match(text(res), /lines 2–2 of 3/);
  assert.deepEqual(await approvals(), []);
});

test("write_file asks (P1); allowed always, the second write is silent", async () => {
  const progress = [];
  const call = client.callTool({ name: "write_file", arguments: { path: "notes/a.txt", content: "first\n" } }, undefined,
    { onprogress: (p) => progress.push(p) });
  const p = await waitPending("write_file");
  assert.equal(p.tier, "P1");
  await new Promise((r) => setTimeout(r, 2500)); // long enough for a progress notification
  await typeOnTTY(p.id, "--always");
  const res = await call;
  assert.ok(!res.isError, text(res));
  assert.equal(fs.readFileSync(path.join(WS, "notes/a.txt"), "utf8"), "first\n");
  assert.ok(progress.length > 0, "progress notifications while waiting for the person");
  assert.match(progress[0].message ?? "", /waiting for the person/);

  const again = await silently("write_file", { path: "notes/a.txt", content: "second\n" });
  assert.ok(!again.isError, text(again));
  assert.equal(fs.readFileSync(path.join(WS, "notes/a.txt"), "utf8"), "second\n");
});

test("edit_file says clearly when the text is not found or not unique", async () => {
  fs.writeFileSync(path.join(WS, "notes/a.txt"), "x\nx\n");
  // edit_file is P1 too: allow it always for this file first.
  const call = client.callTool({ name: "edit_file", arguments: { path: "notes/a.txt", old_string: "x", new_string: "y" } });
  const p = await waitPending("edit_file");
  await typeOnTTY(p.id, "--always");
  const res = await call;
  assert.ok(res.isError);
  assert.match(text(res), /occurs 2 times \(lines 1, 2\)/);
  const missing = await silently("edit_file", { path: "notes/a.txt", old_string: "zzz", new_string: "y" });
  assert.ok(missing.isError);
  assert.match(text(missing), /was not found/);
});

test("bash with rm -rf ~ is P2 and refused without a person", async () => {
  const call = client.callTool({ name: "bash", arguments: { command: "rm -rf ~" } });
  let settled = false;
  call.then(() => { settled = true; }, () => { settled = true; });
  const p = await waitPending("bash");
  assert.equal(p.tier, "P2");
  assert.ok(p.interactive_only, "a destructive command needs a person");
  // Without a terminal, an allow is refused: no script answers for a person.
  await assert.rejects(run(BIN, ["approvals", "allow", p.id], { stdio: ["ignore", "pipe", "pipe"] }));
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(settled, false, "the call still waits for a person");
  await run(BIN, ["approvals", "deny", p.id, "--reason", "not my home"]);
  const res = await call;
  assert.ok(res.isError);
  assert.match(text(res), /Airlock blocked bash \(rm -rf ~\)/);
  assert.match(text(res), /What can change it/);
  assert.ok(fs.existsSync(process.env.HOME), "home is still there");
});

test("bash runs in the sandbox with exit code and separate streams", async () => {
  const call = client.callTool({ name: "bash", arguments: { command: "echo out; echo err >&2; touch made-here; exit 3" } });
  const p = await waitPending("bash");
  assert.equal(p.tier, "P1");
  await run(BIN, ["approvals", "allow", p.id]);
  const res = await call;
  assert.ok(res.isError, "a non-zero exit is a tool error");
  assert.equal(res.structuredContent.exit_code, 3);
  assert.equal(res.structuredContent.stdout, "out\n");
  assert.equal(res.structuredContent.stderr, "err\n");
  assert.ok(fs.existsSync(path.join(WS, "made-here")));
  assert.doesNotMatch(stderr, /could not register the sandbox/);
});

test("bash is killed at its timeout, with everything it started", async () => {
  const call = client.callTool({ name: "bash", arguments: { command: "sleep 37.25 & sleep 37.25; echo never", timeout_seconds: 1 } });
  const p = await waitPending("bash");
  await run(BIN, ["approvals", "allow", p.id]);
  const res = await call;
  assert.ok(res.isError);
  assert.equal(res.structuredContent.timed_out, true);
  assert.match(text(res), /ran past its 1s timeout/);
  const { stdout } = await run("ps", ["-eo", "args"]);
  assert.ok(!stdout.split("\n").some((l) => l.trim() === "sleep 37.25"), "nothing it started is left running");
});

test("bash cannot reach Airlock's socket from inside the sandbox", async () => {
  const sock = path.join(process.env.AIRLOCK_HOME, "run", "airlock.sock");
  assert.ok(fs.existsSync(sock), "the socket exists outside");
  const call = client.callTool({ name: "bash", arguments: { command: `test -S ${sock} && echo reachable || echo hidden` } });
  const p = await waitPending("bash");
  await run(BIN, ["approvals", "allow", p.id]);
  const res = await call;
  assert.equal(res.structuredContent.stdout, "hidden\n", JSON.stringify(res));
});

test("a write outside the workspace asks for exactly that escalation; denied, nothing is written", async () => {
  const target = path.join(OUTSIDE, "escape.txt");
  for (const p of [target, "../outside/escape.txt"]) {
    const call = client.callTool({ name: "write_file", arguments: { path: p, content: "no" } });
    const req = await waitPending("write_file");
    assert.equal(req.kind, "isolation_escalation");
    assert.match(req.reasons.join(" "), /allowing it once gives .*outside writable, for this one call/);
    assert.deepEqual(req.scopes, ["once"], "an escalation is never remembered");
    await run(BIN, ["approvals", "deny", req.id, "--reason", "stay in the workspace"]);
    const res = await call;
    assert.ok(res.isError);
    assert.match(text(res), /stay in the workspace/);
    assert.ok(!fs.existsSync(target));
  }
  // A protected path: no escalation can allow it, so it is refused without asking.
  const git = await silently("write_file", { path: ".git/config", content: "no" });
  assert.ok(git.isError);
  assert.match(text(git), /isolation error.*protected path/s);
});

test("web_fetch with the network off asks for the network for that one call; denied, it is refused", async () => {
  const call = client.callTool({ name: "web_fetch", arguments: { url: "https://example.com/" } });
  const req = await waitPending("web_fetch");
  assert.equal(req.kind, "isolation_escalation");
  assert.match(req.reasons.join(" "), /the network on, for this one call/);
  await run(BIN, ["approvals", "deny", req.id]);
  const res = await call;
  assert.ok(res.isError);
  assert.match(text(res), /Airlock blocked web_fetch/);
});

test("the ops tools walk a plan to apply with a token a person approved on a TTY", async () => {
  fs.writeFileSync(path.join(WS, "current.txt"), "v1\n");
  fs.writeFileSync(path.join(WS, "new.txt"), "v2\n");
  const plan = {
    target: { provider: "file", device: "current.txt" },
    intent: "replace current.txt with new.txt",
    workdir: ".",
    apply: { argv: ["cp", "new.txt", "current.txt"] },
    inputs: ["new.txt"],
    diff: { argv: ["diff", "-u", "current.txt", "new.txt"] },
    steps: [{ description: "cp new.txt current.txt", effect: "replace file", reversibility: "reversible", blast_radius: "low", rollback: "git checkout current.txt" }],
    verify: [{ name: "current is v2", command: "cat current.txt", expect_text: "v2" }],
  };
  const planned = await silently("ops_plan", { plan });
  assert.ok(!planned.isError, text(planned));
  const id = planned.structuredContent.id;
  assert.match(id, /^op-/);

  const diffed = await silently("ops_diff", { plan_id: id, run: true });
  assert.ok(!diffed.isError, text(diffed));
  assert.equal(diffed.structuredContent.status, "diffed");

  const approving = client.callTool({ name: "ops_approve", arguments: { plan_id: id } });
  const ap = await waitPending("ops_approve");
  assert.ok(ap.interactive_only, "ops_approve needs a person");
  await assert.rejects(run(BIN, ["approvals", "allow", ap.id]), "no script approves a plan");
  // Nor one that fakes a terminal and types what `approvals list` shows.
  await assert.rejects(typeOnTTY(ap.id, "", ap.id.slice(0, 8)), /not accepted/, "a fake terminal approves a plan");
  await typeOnTTY(ap.id);
  const approved = await approving;
  assert.ok(!approved.isError, text(approved));
  const token = approved.structuredContent.token;
  assert.ok(token && token.length >= 40, "a token is returned once");

  const applying = client.callTool({ name: "ops_apply", arguments: { plan_id: id, token } });
  const pp = await waitPending("ops_apply");
  assert.equal(pp.tier, "P2");
  await typeOnTTY(pp.id);
  const applied = await applying;
  assert.ok(!applied.isError, text(applied));
  assert.equal(applied.structuredContent.status, "applied");
  assert.equal(fs.readFileSync(path.join(WS, "current.txt"), "utf8"), "v2\n");

  const verified = await silently("ops_verify", { plan_id: id });
  assert.ok(!verified.isError, text(verified));
  assert.equal(verified.structuredContent.status, "verified");

  const journal = await silently("ops_journal", { plan_id: id, verify: true });
  assert.ok(!journal.isError, text(journal));
  const events = journal.structuredContent.entries.map((e) => e.event);
  for (const ev of ["planned", "diff_attached", "approved", "apply_started", "apply_finished", "verified"]) {
    assert.ok(events.includes(ev), `journal has ${ev}: ${events}`);
  }
  assert.equal(journal.structuredContent.entries.find((e) => e.event === "approved").actor, "cli-os-proof");
});

const PROVIDERS = ["aws", "cloudflare", "digitalocean", "gcp", "junos", "runpod", "vyos"];

test("the Cloud Ops posture and each provider's runbook are listed and read as prompts and resources", async () => {
  const { prompts } = await client.listPrompts();
  const names = prompts.map((p) => p.name);
  assert.ok(names.includes("cloudops") && names.includes("runbook"), `prompts: ${names}`);
  const posture = await client.getPrompt({ name: "cloudops" });
  const postureText = posture.messages[0].content.text;
  assert.match(postureText, /^# Cloud Ops posture/);
  assert.match(postureText, /Apply only with `ops_apply`/);
  for (const provider of PROVIDERS) {
    const rb = await client.getPrompt({ name: "runbook", arguments: { provider } });
    assert.match(rb.messages[0].content.text, /## What is irreversible/, `runbook ${provider}`);
  }
  await assert.rejects(client.getPrompt({ name: "runbook", arguments: { provider: "azure" } }), /no runbook for "azure"/);

  const { resources } = await client.listResources();
  const uris = resources.map((r) => r.uri);
  assert.deepEqual(uris, ["airlock://cloudops/posture", ...PROVIDERS.map((p) => `airlock://runbooks/${p}`)]);
  for (const uri of uris) {
    const { contents } = await client.readResource({ uri });
    assert.equal(contents[0].uri, uri);
    assert.equal(contents[0].mimeType, "text/markdown");
    assert.match(contents[0].text, /^# /);
  }
  const read = await client.readResource({ uri: "airlock://cloudops/posture" });
  assert.equal(read.contents[0].text, postureText, "the prompt and the resource are one text");
});

// session starts `airlock mcp` with extra arguments in cwd, as an agent configured so would.
async function session(args, cwd) {
  const transport = new StdioClientTransport({ command: server.command, args: [...server.args, ...args], cwd, env: { ...process.env }, stderr: "pipe" });
  const c = new Client({ name: "airlock-e2e-cloudops", version: "1.0.0" });
  await c.connect(transport);
  return c;
}

test("a cloudops department's session receives the posture, by --department or by its directory; a standard one does not", async () => {
  const infra = path.join(WS, "infra");
  const web = path.join(WS, "web");
  fs.mkdirSync(infra, { recursive: true });
  fs.mkdirSync(web, { recursive: true });
  // A department in a directory that is not a known place yet is a person's act.
  await onTTY(`${BIN} dept add infra ${infra} --posture cloudops`);
  await onTTY(`${BIN} dept add web ${web}`);
  const posture = /This session works under the Cloud Ops posture[\s\S]*Apply only with `ops_apply`/;

  assert.doesNotMatch(client.getInstructions(), posture, "the workspace's session is standard");
  assert.match(client.getInstructions(), /ops_plan → ops_diff → ops_approve → ops_apply → ops_verify/);
  for (const [args, cwd, want] of [[["--department", "infra"], WS, true], [[], infra, true], [["--department", "web"], WS, false], [[], web, false]]) {
    const c = await session(args, cwd);
    try {
      const got = c.getInstructions();
      want ? assert.match(got, posture, `${args} in ${cwd}`) : assert.doesNotMatch(got, posture, `${args} in ${cwd}`);
      if (want && args.length === 0) {
        // The posture is the session's: bash is P2 there.
        const calling = c.callTool({ name: "bash", arguments: { command: "true" } });
        const p = await waitPending("bash");
        assert.equal(p.tier, "P2");
        await run(BIN, ["approvals", "deny", p.id]);
        assert.ok((await calling).isError);
      }
    } finally {
      await c.close();
    }
  }
  await assert.rejects(run(BIN, ["mcp", "--department", "nosuch"], { cwd: WS }),
    (err) => /there is no department "nosuch": `airlock dept list` shows them/.test(err.stderr));
});

// The hook adapter, against the same daemon, with Claude Code's documented event shapes.
// hook runs the command of claude-settings.json the way Claude Code does (a shell command line).
function hook(event, args = [], env = process.env) {
  const command = [claudeSettings.hooks.PreToolUse[0].hooks[0].command, ...args].join(" ");
  return new Promise((resolve, reject) => {
    const child = execFile("/bin/sh", ["-c", command], { env, cwd: WS }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`hook exited ${err.code}: ${stderr}`));
      resolve(stdout.trim() ? JSON.parse(stdout) : null);
    });
    child.stdin.end(JSON.stringify(event));
  });
}

const pre = (tool_name, tool_input) => ({ session_id: "e2e-claude", transcript_path: "/dev/null", cwd: WS,
  permission_mode: "default", hook_event_name: "PreToolUse", tool_name, tool_input, tool_use_id: "toolu_01" });

test("airlock hook claude: P0 reads are allowed, with the documented output", async () => {
  for (const [name, input] of [["Read", { file_path: path.join(WS, "hello.txt") }], ["Glob", { pattern: "**/*.txt" }],
    ["Grep", { pattern: "line", path: WS }], ["LS", { path: WS }]]) {
    const out = await hook(pre(name, input));
    assert.equal(out.hookSpecificOutput.hookEventName, "PreToolUse");
    assert.equal(out.hookSpecificOutput.permissionDecision, "allow", `${name}: ${JSON.stringify(out)}`);
    assert.match(out.hookSpecificOutput.permissionDecisionReason, /P0/);
  }
});

// watchApprovals is a person following the approvals at a terminal (`airlock approvals
// watch`): while it runs, the hook waits for them instead of handing over at once.
async function watchApprovals() {
  const child = spawn(BIN, ["approvals", "watch"], { env: process.env });
  await new Promise((resolve, reject) => {
    child.stdout.once("data", resolve);
    child.once("exit", (code) => reject(new Error(`approvals watch exited ${code}`)));
  });
  return child;
}

test("airlock hook claude: with nobody at Airlock a call that needs a person is handed over at once, audited", async () => {
  const out = await hook(pre("Write", { file_path: path.join(WS, "claude.txt"), content: "x" }), ["--wait", "60s"]);
  assert.equal(out.hookSpecificOutput.permissionDecision, "ask", JSON.stringify(out));
  assert.match(out.hookSpecificOutput.permissionDecisionReason, /nothing can answer in Airlock now.*handed over/);
  // Claude Code's own prompt allowed it and it ran: PostToolUse says so, and the audit too.
  await hook({ ...pre("Write", { file_path: path.join(WS, "claude.txt"), content: "x" }), hook_event_name: "PostToolUse",
    tool_response: { success: true } });
  const { stdout } = await run(BIN, ["audit", "--json", "--tool", "write_file"]);
  const row = JSON.parse(stdout).find((r) => r.call_id === "toolu_01");
  assert.equal(row?.answered_by, "handed-over", stdout);
  assert.equal(row?.ran, "ran", stdout);
  const rm = await hook(pre("Bash", { command: "rm -rf ~", description: "clean" }), ["--wait", "60s"]);
  assert.equal(rm.hookSpecificOutput.permissionDecision, "ask", JSON.stringify(rm));
  // --wait-unattended waits the whole --wait.
  const waited = await hook(pre("Write", { file_path: path.join(WS, "claude.txt"), content: "y" }), ["--wait", "1s", "--wait-unattended"]);
  assert.equal(waited.hookSpecificOutput.permissionDecision, "ask", JSON.stringify(waited));
  assert.match(waited.hookSpecificOutput.permissionDecisionReason, /nobody answered in Airlock within 1s/);
});

test("airlock hook claude: a denial in Airlock is a deny with the reason", async () => {
  const watcher = await watchApprovals();
  try {
    const waiting = hook(pre("WebFetch", { url: "https://example.com/", prompt: "summarize" }), ["--wait", "30s"]);
    const p = await waitPending("web_fetch");
    await run(BIN, ["approvals", "deny", p.id, "--reason", "no web today"]);
    const out = await waiting;
    assert.equal(out.hookSpecificOutput.permissionDecision, "deny", JSON.stringify(out));
    assert.match(out.hookSpecificOutput.permissionDecisionReason, /Airlock blocked web_fetch/);
  } finally {
    watcher.kill();
  }
});

test("airlock hook claude: no Airlock running answers ask, never allow", async () => {
  const env = { ...process.env, AIRLOCK_HOME: path.join(OUTSIDE, "no-airlock-here") };
  const out = await hook(pre("Read", { file_path: path.join(WS, "hello.txt") }), [], env);
  assert.equal(out.hookSpecificOutput.permissionDecision, "ask");
  assert.match(out.hookSpecificOutput.permissionDecisionReason, /no Airlock app or daemon is running/);
});

test("airlock hook claude: PostToolUse is reported quietly", async () => {
  const out = await hook({ ...pre("Bash", { command: "ls" }), hook_event_name: "PostToolUse", tool_response: { stdout: "a", stderr: "" } });
  assert.equal(out, null);
});

test("with no Airlock running, airlock mcp starts the headless core and says so", async () => {
  const home = path.join(OUTSIDE, "fresh-home");
  const env = { ...process.env, AIRLOCK_HOME: home };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  const transport = new StdioClientTransport({ command: server.command, args: server.args, cwd: WS, env, stderr: "pipe" });
  let err = "";
  transport.stderr?.on("data", (d) => { err += d; });
  const c = new Client({ name: "airlock-e2e-fresh", version: "1.0.0" });
  await c.connect(transport);
  let pid;
  try {
    assert.match(err, /no Airlock core was running; started the headless core \(airlockd\) \(pid (\d+), log /);
    pid = Number(err.match(/\(pid (\d+)/)[1]);
    const res = await c.callTool({ name: "read_file", arguments: { path: "hello.txt" } });
    assert.ok(!res.isError, JSON.stringify(res));
    const { stdout } = await run(BIN, ["status", "--json"], { env });
    assert.equal(JSON.parse(stdout).pid, pid);
  } finally {
    await c.close();
    if (pid) process.kill(pid, "SIGTERM");
  }
});
