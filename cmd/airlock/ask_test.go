package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-app/airlock/sandbox"
)

// TestHookInsideAScheduledRunAsksThePerson: Claude Code's hook, the real `airlock hook
// claude`, run by a scheduled task inside its sandbox (where the core's socket is
// hidden), reaches Airlock through the run's ask-only channel: a Read is allowed at once;
// an rm -rf of a workspace directory waits under the person's approvals, tagged with the
// run; denied from the CLI, the hook tells the agent the person's reason; the directory
// is still there.
func TestHookInsideAScheduledRunAsksThePerson(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	in := newInstance(t)
	ws := agentWorkspace(t, "airlock-hook-run-")
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), fmt.Sprintf("[workspace]\nroots = [%q]\n", ws))
	in.startDaemon()
	in.hookInsideARunAsks(ws, "agent", sandbox.AskAddr, 20*time.Second)
}

// hookInsideARunAsks has a task (named task, in ws as agentWorkspace makes it, with
// taskArgs) run the real `airlock hook claude` on a Read and on an rm -rf: the Read must
// be allowed at once, the rm -rf wait (within limit) under the person's approvals tagged
// with the run, and the CLI's deny reach the agent with its reason; the channel must be
// at channel, the core's socket hidden and the directory still there.
func (in *instance) hookInsideARunAsks(ws, task, channel string, limit time.Duration, taskArgs ...string) {
	t := in.t
	t.Helper()
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("notes\n"), 0o644)
	event := func(tool, input string) string {
		return fmt.Sprintf(`{"session_id":"claude-1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":%s,"tool_use_id":"t1"}`, ws, tool, input)
	}
	script := fmt.Sprintf(`echo "socket ${AIRLOCK_ASK_SOCKET:-none}"
test -S %[1]s && echo "core socket visible" || echo "core socket hidden"
printf '%%s' '%[2]s' | bin/airlock hook claude; echo
printf '%%s' '%[3]s' | bin/airlock hook claude --wait 60s; echo`,
		filepath.Join(in.home, "run", "airlock.sock"),
		event("Read", fmt.Sprintf(`{"file_path":%q}`, filepath.Join(ws, "notes.txt"))),
		event("Bash", `{"command":"rm -rf build"}`))
	// In a file of the workspace, as an agent's steps are: the task's own command is short.
	os.WriteFile(filepath.Join(ws, "agent.sh"), []byte(script), 0o644)
	args := append(append([]string{"task", "add", "--name", task, "--cwd", ws}, taskArgs...), "--", "sh", "agent.sh")
	if _, stderr, code := in.run(args...); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", task); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	defer func() {
		if t.Failed() { // what the run said, when its question never came
			out, _, _ := in.run("runs", "list", "--json", "--task", task)
			var runs []map[string]any
			json.Unmarshal([]byte(out), &runs)
			for _, r := range runs {
				log, _, _ := in.run("runs", "logs", fmt.Sprint(r["id"]))
				t.Logf("run %v (%v):\n%s", r["id"], r["status"], log)
			}
		}
	}()
	pending := in.waitPendingWithin(1, limit)
	req := pending[0]["request"].(map[string]any)
	ctx := req["context"].(map[string]any)
	if req["tool"] != "bash" || ctx["task"] != task || ctx["run"] == nil || ctx["session"] != nil {
		t.Errorf("the pending request is not the run's: %v", req)
	}
	if _, stderr, code := in.run("approvals", "deny", pending[0]["id"].(string), "--reason", "not at night"); code != 0 {
		t.Fatalf("deny: %s", stderr)
	}
	log := in.succeededRunLog(task)
	for _, want := range []string{"socket " + channel, "core socket hidden", `"permissionDecision":"allow"`, `"permissionDecision":"deny"`, "not at night"} {
		if !strings.Contains(log, want) {
			t.Errorf("the run's log lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "build")); err != nil {
		t.Errorf("the workspace directory is gone: %v", err)
	}
}

// TestHookLetsThroughOnlyAirlocksOwnServer: the hook lets a call of the MCP server named
// "airlock" through unasked only when that server is Airlock's own, running beside the
// hook under the same agent (here a shell standing in for Claude Code): the real
// `airlock mcp` is recognised; a stand-in that took the name and the arguments is not.
func TestHookLetsThroughOnlyAirlocksOwnServer(t *testing.T) {
	in := newInstance(t)
	in.startDaemon()
	in.bin = withAgent // airlock mcp and airlock hook are airlock-agent's
	ws := t.TempDir()
	event := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"mcp__airlock__bash","tool_input":{"command":"ls"}}`
	fake := filepath.Join(ws, "airlock-agent") // a program named like Airlock's
	os.WriteFile(fake, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755)
	for _, tt := range []struct {
		name, server string
		governed     bool
	}{
		{"no server beside", "", false},
		{"Airlock's own server beside", "sleep 30 | " + in.bin + " mcp --cwd " + ws + " >/dev/null 2>&1 &", true},
		{"an impostor beside", fake + " mcp >/dev/null 2>&1 &", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			agent := in.cmd("sh", "-c", tt.server+` sleep 1; printf '%s' "$EVENT" | sh -c '"$BIN" hook claude --wait 1s'; kill $(jobs -p) 2>/dev/null; true`)
			agent.Path = "/bin/sh"
			agent.Args = agent.Args[1:]
			agent.Env = append(agent.Env, "EVENT="+event, "BIN="+in.bin)
			out, err := agent.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			let := strings.Contains(string(out), `"permissionDecision":"allow"`) && strings.Contains(string(out), "MCP server asks Airlock itself")
			if let != tt.governed {
				t.Errorf("let through: %v, want %v\n%s", let, tt.governed, out)
			}
		})
	}
}

// execAskProbe asks on the sandbox's ask-only channel, as an agent's hook would, and tries
// to list the approvals there.
const execAskProbe = `
import json, os, urllib.request, urllib.error
addr = os.environ.get("AIRLOCK_ASK_SOCKET", "")
print("channel", addr or "none")
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
def call(method, path, body=None):
    req = urllib.request.Request("http://" + addr + path, data=json.dumps(body).encode() if body else None, method=method, headers={"Content-Type": "application/json"})
    try:
        with opener.open(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
st, d = call("POST", "/v1/permission/await", {"tool": "bash", "params": {"command": "rm -rf build"}, "context": {"session": "lie", "cwd": "/"}})
print("rm", st, d.get("verdict"), "|".join(d.get("reasons") or []))
print("list", call("GET", "/v1/approvals")[0])
`

// TestExecHasAnAskOnlyChannel: a command under `airlock exec` (an agent run in Airlock's
// sandbox by hand) gets an ask-only channel from the running core, like a scheduled run:
// its rm -rf waits for the person, tagged with the sandbox's directory and a session of
// its own whatever it claims, and gets the person's deny; nothing there lists approvals.
func TestExecHasAnAskOnlyChannel(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	in := newInstance(t)
	in.startDaemon()
	ws, err := os.MkdirTemp("/var/tmp", "airlock-exec-ask-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	done := make(chan string, 1)
	go func() {
		out, stderr, code := in.run("exec", "--cwd", ws, "--", "python3", "-c", execAskProbe)
		done <- fmt.Sprintf("exit %d\n%s\n%s", code, out, stderr)
	}()
	pending := in.waitPending(1)
	ctx := pending[0]["request"].(map[string]any)["context"].(map[string]any)
	if ctx["cwd"] != ws || !strings.HasPrefix(fmt.Sprint(ctx["session"]), "exec-") {
		t.Errorf("the request is not tagged with the sandbox's identity: %v", ctx)
	}
	if _, stderr, code := in.run("approvals", "deny", pending[0]["id"].(string), "--reason", "not from exec"); code != 0 {
		t.Fatalf("deny: %s", stderr)
	}
	checkAskProbe(t, "airlock exec", <-done, "not from exec", ws, sandbox.AskAddr)
	// Without a core the command runs without a channel.
	in2 := newInstance(t)
	out2, _, _ := in2.run("exec", "--cwd", ws, "--", "sh", "-c", "echo channel ${AIRLOCK_ASK_SOCKET:-none}")
	if !strings.Contains(out2, "channel none") {
		t.Errorf("without a core: %s", out2)
	}
}

// TestMCPBashHasAnAskOnlyChannel: a command the MCP server's bash tool runs (an agent an
// agent starts, say) gets an ask-only channel too, served by the core for the MCP
// session: its rm -rf waits for the person tagged with the session and the sandbox's
// directory, whatever the command claims, and gets the person's deny; it lists nothing.
func TestMCPBashHasAnAskOnlyChannel(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	in := newInstance(t)
	ws, err := os.MkdirTemp("/var/tmp", "airlock-mcp-ask-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	os.WriteFile(filepath.Join(ws, "probe.py"), []byte(execAskProbe), 0o644)
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), fmt.Sprintf("[workspace]\nroots = [%q]\n", ws))
	in.startDaemon()
	in.bin = withAgent // airlock mcp is airlock-agent's

	cs := in.mcpSession("--cwd", ws)
	in.mcpBashAsks(cs, ws, sandbox.AskAddr, time.Minute)
}

// mcpBashAsks has the MCP session cs's bash tool run execAskProbe (probe.py in ws): the
// command's rm -rf must wait for the person (within limit), tagged with the MCP session
// and the sandbox's directory whatever the command claims; it is denied from the CLI,
// and the probe must have reached its channel at channel and been refused a listing.
func (in *instance) mcpBashAsks(cs *mcp.ClientSession, ws, channel string, limit time.Duration) {
	t := in.t
	t.Helper()
	done := make(chan string, 1)
	go func() { done <- mcpCall(cs, "bash", map[string]any{"command": "python3 probe.py"}) }()
	// The bash call itself may ask first (allow it); then the command's own request.
	var inner map[string]any
	for deadline := time.Now().Add(limit); inner == nil; {
		if time.Now().After(deadline) {
			t.Fatal("the command's request never became pending")
		}
		out, _, _ := in.run("approvals", "list", "--json")
		var list []map[string]any
		json.Unmarshal([]byte(out), &list)
		for _, p := range list {
			req := p["request"].(map[string]any)
			if fmt.Sprint(req["params"].(map[string]any)["command"]) == "rm -rf build" {
				inner = p
			} else if _, stderr, code := in.run("approvals", "allow", p["id"].(string)); code != 0 {
				t.Fatalf("allow the bash call: %s", stderr)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	rc := inner["request"].(map[string]any)["context"].(map[string]any)
	if rc["cwd"] != ws || strings.HasPrefix(fmt.Sprint(rc["session"]), "exec-") || rc["session"] == "lie" || rc["session"] == "" {
		t.Errorf("the request is not tagged with the MCP session and the sandbox's directory: %v", rc)
	}
	if c, _ := rc["caller"].(map[string]any); !strings.HasPrefix(fmt.Sprint(c["description"]), "sandbox of airlock mcp bash") {
		t.Errorf("caller %v", rc["caller"])
	}
	if _, stderr, code := in.run("approvals", "deny", inner["id"].(string), "--reason", "not from a bash call"); code != 0 {
		t.Fatalf("deny: %s", stderr)
	}
	checkAskProbe(t, "the bash call", <-done, "not from a bash call", ws, channel)
}

// TestSandboxNestedInARun: a sandbox started inside a run's (an agent's `airlock exec`,
// or the MCP server's bash inside an agent task) cannot nest bubblewrap, so it nests with
// Landlock: no bwrap failure in its output, the run's egress proxy reaches an allowed host
// (and a direct connection nothing), the run's ask-only channel still asks the person, and
// nothing outside the workspace is writable.
func TestSandboxNestedInARun(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "reached %s\n", r.URL.Path) }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	in := newInstance(t)
	ws, err := os.MkdirTemp("/var/tmp", "airlock-nested-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	bin := filepath.Join(ws, "bin")
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	os.MkdirAll(bin, 0o755)
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bin, "airlock"), b, 0o755) // inside the sandbox /tmp is its own
	os.WriteFile(filepath.Join(ws, "probe.py"), []byte(execAskProbe), 0o644)
	outside, err := os.MkdirTemp("/var/tmp", "airlock-nested-outside-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(outside)
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), fmt.Sprintf(`[workspace]
roots = [%q]
[sandbox_workspace_write]
network_access = "allowlist"
[network]
allowed_domains = ["127.0.0.1"]
ask_unknown = false
allow_local = true
`, ws))
	in.startDaemon()
	script := fmt.Sprintf(`bin/airlock exec --network allowlist -- sh -c '
curl -sS --max-time 20 http://127.0.0.1:%[1]d/nested-proxy
curl -sS --max-time 5 --noproxy "*" http://127.0.0.1:%[1]d/nested-direct; echo "direct rc=$?"
touch %[2]s/escaped 2>/dev/null && echo "wrote outside" || echo "outside refused"
touch build/inside && echo "wrote inside"
python3 probe.py'`, port, outside)
	os.WriteFile(filepath.Join(ws, "agent.sh"), []byte(script), 0o644)
	if _, stderr, code := in.run("task", "add", "--name", "nester", "--cwd", ws, "--", "sh", "agent.sh"); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", "nester"); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	pending := in.waitPending(1)
	rc := pending[0]["request"].(map[string]any)["context"].(map[string]any)
	if rc["task"] != "nester" || rc["cwd"] != ws {
		t.Errorf("the nested request is not the run's: %v", rc)
	}
	if _, stderr, code := in.run("approvals", "deny", pending[0]["id"].(string), "--reason", "nested no"); code != 0 {
		t.Fatalf("deny: %s", stderr)
	}
	log := in.succeededRunLog("nester")
	for _, want := range []string{"reached /nested-proxy", "direct rc=7", "outside refused", "wrote inside", "channel 127.0.0.1:3129", "rm 200 deny", "nested no", "list 403"} {
		if !strings.Contains(log, want) {
			t.Errorf("the run's log lacks %q", want)
		}
	}
	for _, bad := range []string{"reached /nested-direct", "wrote outside", "No permissions to create new namespace"} {
		if strings.Contains(log, bad) {
			t.Errorf("the run's log has %q", bad)
		}
	}
}

// mcpSession starts `airlock mcp ARGS…` (in.bin must be airlock-agent) and connects the
// official Go SDK's client to it over stdio; both end with the test.
func (in *instance) mcpSession(args ...string) *mcp.ClientSession {
	in.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	in.t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: in.cmd(append([]string{"mcp"}, args...)...)}, nil)
	if err != nil {
		in.t.Fatal(err)
	}
	in.t.Cleanup(func() { cs.Close() })
	return cs
}

// mcpCallAllowing is mcpCall with every request it raises meanwhile allowed from the CLI
// (as a person would, for a call whose gate is not what the test is about).
func (in *instance) mcpCallAllowing(cs *mcp.ClientSession, tool string, args map[string]any) string {
	done := make(chan string, 1)
	go func() { done <- mcpCall(cs, tool, args) }()
	for {
		select {
		case out := <-done:
			return out
		case <-time.After(100 * time.Millisecond):
		}
		out, _, _ := in.run("approvals", "list", "--json")
		var list []map[string]any
		json.Unmarshal([]byte(out), &list)
		for _, p := range list {
			in.run("approvals", "allow", p["id"].(string))
		}
	}
}

// mcpCall calls a tool and returns its text, or the call's error in words.
func mcpCall(cs *mcp.ClientSession, tool string, args map[string]any) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// mcpFetchProbe is an MCP client in a few lines (newline-delimited JSON-RPC over stdio):
// it starts `bin/airlock mcp` and calls web_fetch on each URL it is given.
const mcpFetchProbe = `
import json, subprocess, sys
p = subprocess.Popen(["bin/airlock", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(m):
    p.stdin.write(json.dumps(m) + "\n"); p.stdin.flush()
def recv(i):
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i:
            return m
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}})
recv(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
for i, u in enumerate(sys.argv[1:]):
    send({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {"name": "web_fetch", "arguments": {"url": u}}})
    print("FETCH", u, json.dumps(recv(10 + i).get("result")))
p.stdin.close()
`

// TestWebFetchInsideARunGoesThroughItsProxy: Airlock's MCP web_fetch, served by an MCP
// server inside a run under an allowlist (an agent task's), reaches an allowed host through
// the run's egress proxy — a direct dial has no way out of the run's namespace — and a
// denied domain is refused by that proxy, by name.
func TestWebFetchInsideARunGoesThroughItsProxy(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "reached %s\n", r.URL.Path) }))
	defer srv.Close()
	in := newInstance(t)
	ws, err := os.MkdirTemp("/var/tmp", "airlock-run-fetch-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	bin := filepath.Join(ws, "bin")
	os.MkdirAll(bin, 0o755)
	for _, name := range []string{"airlock", "airlock-agent"} { // inside the sandbox /tmp is its own
		b, err := os.ReadFile(filepath.Join(filepath.Dir(withAgent), name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(bin, name), b, 0o755)
	}
	os.WriteFile(filepath.Join(ws, "fetch.py"), []byte(mcpFetchProbe), 0o644)
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), fmt.Sprintf(`[workspace]
roots = [%q]
[sandbox_workspace_write]
network_access = "allowlist"
[network]
allowed_domains = ["127.0.0.1"]
denied_domains = ["denied.test"]
ask_unknown = false
allow_local = true
[permission.tiers]
web_fetch = "P0"
`, ws))
	in.startDaemon()
	if _, stderr, code := in.run("task", "add", "--name", "fetcher", "--cwd", ws, "--", "python3", "fetch.py", srv.URL+"/inside-a-run", "http://denied.test/"); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", "fetcher"); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	log := in.succeededRunLog("fetcher")
	for _, want := range []string{"reached /inside-a-run", "through the run's egress proxy", "Airlock refused the connection to denied.test"} {
		if !strings.Contains(log, want) {
			t.Errorf("the run's log lacks %q", want)
		}
	}
}

// checkAskProbe holds execAskProbe's output (from where) to the ask-only channel's
// promises: it asked there, its rm -rf was denied with the person's reason, it could list
// nothing, and the directory it would have removed is still in ws.
func checkAskProbe(t *testing.T, where, out, reason, ws, channel string) {
	t.Helper()
	t.Log(out)
	for _, want := range []string{"channel " + channel, "rm 200 deny", reason, "list 403"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s's output lacks %q", where, want)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "build")); err != nil {
		t.Error("the directory is gone")
	}
}
