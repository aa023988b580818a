package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// standInAgent is a shell script standing in for Claude Code or Codex: it records what
// it was started with (its arguments, the variables Airlock set, the key it got, the
// settings Airlock wrote) in the workspace, reaches its model API and another host,
// and, for claude, runs the hook command of its settings file as Claude Code would on a
// Bash call, then says it resumed.
const standInAgent = `#!/bin/sh
rec="$PWD/record-$(basename "$0")"
for a in "$@"; do printf 'arg %s\n' "$a"; done > "$rec"
for v in HOME CLAUDE_CONFIG_DIR CODEX_HOME OPENCODE_CONFIG ANTHROPIC_BASE_URL IS_SANDBOX AIRLOCK_ASK_SOCKET; do eval "printf 'env %s=%s\n' $v \"\$$v\""; done >> "$rec"
printf '%s' "${ANTHROPIC_API_KEY:-$OPENAI_API_KEY}" > "$PWD/key-$(basename "$0")"
echo "the key is ${ANTHROPIC_API_KEY:-$OPENAI_API_KEY}"
test -e "$HOME/.claude/settings.json" && echo "saw the user's claude settings"
echo state > "$HOME/agent-state" && echo "the agent's home is writable"
curl -sSf --max-time 20 "$MODEL_URL/v1/messages" || echo "model API unreachable"
curl -sSf --max-time 20 "$OTHER_URL/exfil" || echo "other host unreachable"
case "$(basename "$0")" in claude)
	settings=""; prev=""
	for a in "$@"; do [ "$prev" = "--settings" ] && settings="$a"; prev="$a"; done
	cp "$settings" "$PWD/settings-copy.json"
	hook=$(grep -o '"command": "[^"]*"' "$settings" | head -1 | cut -d'"' -f4)
	printf '%s' "$EVENT" | sh -c "$hook"; echo
	echo "agent resumed";;
esac
for f in "$OPENCODE_CONFIG" "$(dirname "$HOME")/claude-settings.json" "$(dirname "$HOME")/mcp.json"; do
	[ -e "$f" ] || continue
	if (echo '{}' > "$f") 2>/dev/null; then echo "TAMPERED $(basename "$f")"; else echo "read-only $(basename "$f")"; fi
done
for d in "$CLAUDE_CONFIG_DIR" "$CODEX_HOME"; do [ -n "$d" ] && echo x > "$d/state" && echo "the agent's state is writable"; done
runs=$(dirname "$(dirname "$HOME")")
cat "$runs/run-sibling/transcript" 2>/dev/null && echo "LEAKED a sibling run" || echo "another run's directory is hidden"
exit 0
`

// TestAgentTaskFromTheCLI: `airlock task add --agent claude --prompt-file F` (and codex,
// opencode)
// creates an agent task that runs, in the real sandbox under network_access =
// "allowlist", the agent found in PATH with the settings Airlock wrote for that run: in
// the run's own directory (writable for the agent, gone when the run ends), not the
// user's ~/.claude or ~/.codex (left as they were);
// the API key from the real keyring, never in the log or the database; its model API
// reachable and another host not; a Bash call its hook asks about waits under Waiting
// for you, and the person's answer resumes the agent.
func TestAgentTaskFromTheCLI(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	needKeyring(t)
	// Not under /tmp: every sandbox has its own, and the agent's run directory is under
	// AIRLOCK_HOME.
	base, err := os.MkdirTemp("/var/tmp", "airlock-agenttask-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	in := newInstance(t)
	in.home = filepath.Join(base, "airlock")
	ws := filepath.Join(base, "ws")
	bin := filepath.Join(base, "bin")
	home := filepath.Join(base, "userhome")
	for _, d := range []string{ws, bin, filepath.Join(ws, "build"), filepath.Join(home, ".claude"), filepath.Join(home, ".codex")} {
		os.MkdirAll(d, 0o755)
	}
	for _, name := range []string{"airlock", "airlock-agent"} { // the hook and the MCP server the agent runs
		b, err := os.ReadFile(filepath.Join(filepath.Dir(withAgent), name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(bin, name), b, 0o755)
	}
	for _, name := range []string{"claude", "codex", "opencode"} {
		os.WriteFile(filepath.Join(bin, name), []byte(standInAgent), 0o755)
	}
	userFiles := map[string]string{filepath.Join(home, ".claude", "settings.json"): `{"permissions":{"allow":["Bash(*)"]}}`,
		filepath.Join(home, ".codex", "config.toml"): "approval_policy = \"on-request\"\n"}
	for f, content := range userFiles {
		os.WriteFile(f, []byte(content), 0o644)
	}

	var modelHits, otherHits atomic.Int32
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		modelHits.Add(1)
		fmt.Fprintf(w, "model API reached %s\n", r.URL.Path)
	}))
	defer model.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	modelURL := "http://" + model.Listener.Addr().String()
	otherURL := "http://" + other.Listener.Addr().String()

	// The model API is a server on loopback, so allow_local; it is allowed by the
	// agent task alone, not by the lists (which list nothing).
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), fmt.Sprintf(
		"[workspace]\nroots = [%q]\n[sandbox_workspace_write]\nnetwork_access = \"allowlist\"\n[network]\nallowed_domains = []\nask_unknown = false\nallow_local = true\n", ws))
	event := fmt.Sprintf(`{"session_id":"claude-1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf build"},"tool_use_id":"t1"}`, ws)
	in.env = append(in.env, "HOME="+home, "PATH="+bin+":"+os.Getenv("PATH"), "AIRLOCK_CLI="+filepath.Join(bin, "airlock"))
	in.startDaemon()

	secret := fmt.Sprintf("AGENTTEST_KEY_%d", os.Getpid())
	key := fmt.Sprintf("sk-test-%d-do-not-log", time.Now().UnixNano())
	set := in.cmd("secret", "set", secret)
	set.Stdin = strings.NewReader(key)
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("secret set: %v %s", err, out)
	}
	t.Cleanup(func() { in.run("secret", "rm", secret) })
	prompt := filepath.Join(base, "prompt.md")
	os.WriteFile(prompt, []byte("Tidy the build directory.\n"), 0o644)

	// Bad input is refused with the way out.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "gemini", "--prompt-file", prompt}, "use claude, codex or opencode"},
		{[]string{"--agent", "claude"}, "--prompt-file"},
		{[]string{"--agent", "claude", "--prompt-file", filepath.Join(base, "none.md")}, "no such file"},
		{[]string{"--agent", "codex", "--prompt-file", prompt, "--api-base", "api.openai.com"}, "not an http(s) URL"},
		{[]string{"--agent", "claude", "--prompt-file", prompt, "--network=off"}, "--network allowlist"},
		{[]string{"--agent", "claude", "--prompt-file", prompt, "--", "sh"}, "not both"},
	} {
		args := append([]string{"task", "add", "--name", "bad", "--cwd", ws}, tc.args...)
		if _, stderr, code := in.run(args...); code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %s (want an error saying %q)", tc.args, code, stderr, tc.want)
		}
	}

	// Another agent run's directory (its transcript, its state), which no other sandbox
	// may read: a plain run's, airlock exec's, nor another agent's.
	sibling := filepath.Join(in.home, "agent-runs", "run-sibling")
	os.MkdirAll(sibling, 0o700)
	os.WriteFile(filepath.Join(sibling, "transcript"), []byte("SIBLING TRANSCRIPT\n"), 0o600)
	peek := "cat " + filepath.Join(sibling, "transcript") + " 2>/dev/null || echo hidden"
	if out, stderr, _ := in.run("exec", "--cwd", ws, "--", "sh", "-c", peek); !strings.Contains(out, "hidden") || strings.Contains(out, "SIBLING") {
		t.Errorf("ESCAPE: airlock exec read an agent run's directory: %s %s", out, stderr)
	}
	if _, stderr, code := in.run("task", "add", "--name", "peek", "--cwd", ws, "--", "sh", "-c", peek); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", "peek"); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	if log := in.succeededRunLog("peek"); !strings.Contains(log, "hidden") || strings.Contains(log, "SIBLING") {
		t.Errorf("ESCAPE: a scheduled run read an agent run's directory")
	}
	bin0 := in.bin
	in.bin = withAgent // airlock mcp is airlock-agent's
	if out := in.mcpCallAllowing(in.mcpSession("--cwd", ws), "bash", map[string]any{"command": peek}); !strings.Contains(out, "hidden") || strings.Contains(out, "SIBLING") {
		t.Errorf("ESCAPE: the MCP server's bash read an agent run's directory: %s", out)
	}
	in.bin = bin0

	for _, kind := range []string{"claude", "codex", "opencode"} {
		t.Run(kind, func(t *testing.T) {
			in.t = t
			name := "nightly-" + kind
			out, stderr, code := in.run("task", "add", "--name", name, "--cwd", ws, "--agent", kind, "--prompt-file", prompt,
				"--model", "test-model", "--api-base", modelURL, "--api-key-secret", secret, "--env", "MODEL_URL="+modelURL,
				"--env", "OTHER_URL="+otherURL, "--env", "EVENT="+event)
			if code != 0 {
				t.Fatalf("task add: %s", stderr)
			}
			if !strings.Contains(out, "agent      "+kind+", model test-model") || !strings.Contains(out, "Tidy the build directory.") {
				t.Errorf("task add does not show the agent:\n%s", out)
			}
			// The prompt was stored: editing the file changes nothing.
			os.WriteFile(prompt, []byte("Delete everything.\n"), 0o644)
			defer os.WriteFile(prompt, []byte("Tidy the build directory.\n"), 0o644)
			if out, _, _ := in.run("task", "list"); !strings.Contains(out, kind+" (test-model)") {
				t.Errorf("task list does not show the agent:\n%s", out)
			}
			if _, stderr, code := in.run("task", "run-now", name); code != 0 {
				t.Fatalf("run-now: %s", stderr)
			}
			runID := ""
			if kind == "claude" {
				// The hook's question waits under Waiting for you, tagged with the run.
				pending := in.waitPending(1)
				req := pending[0]["request"].(map[string]any)
				if req["tool"] != "bash" || req["context"].(map[string]any)["task"] != name {
					t.Errorf("the pending request is not the run's: %v", req)
				}
				waiting, _, _ := in.run("runs", "list", "--json", "--waiting")
				var runs []map[string]any
				json.Unmarshal([]byte(waiting), &runs)
				if len(runs) != 1 || !strings.Contains(fmt.Sprint(runs[0]["reason"]), "waiting for you") {
					t.Errorf("the run is not listed waiting for you: %s", waiting)
				}
				// rm -rf is P2: allowing it takes a typed confirmation at a terminal;
				// a denial with its reason is answered from here, and resumes the agent too.
				if _, stderr, code := in.run("approvals", "deny", pending[0]["id"].(string), "--reason", "not at night"); code != 0 {
					t.Fatalf("deny: %s", stderr)
				}
			}
			var runs []map[string]any
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				out, _, _ := in.run("runs", "list", "--json", "--task", name)
				json.Unmarshal([]byte(out), &runs)
				if len(runs) == 1 && runs[0]["status"] != "running" && runs[0]["status"] != "queued" && runs[0]["status"] != "waiting_approval" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the run never ended: %s", out)
				}
			}
			runID = fmt.Sprint(runs[0]["id"])
			log, _, _ := in.run("runs", "logs", runID)
			t.Logf("run log:\n%s", log)
			if runs[0]["status"] != "succeeded" {
				t.Fatalf("the run %s: %v", runs[0]["status"], runs[0]["reason"])
			}

			rec, err := os.ReadFile(filepath.Join(ws, "record-"+kind))
			if err != nil {
				t.Fatal(err)
			}
			runDir := filepath.Join(in.home, "agent-runs", "run-"+runID)
			wants := map[string][]string{
				"claude": {"arg -p", "arg --settings", "arg " + filepath.Join(runDir, "claude-settings.json"), "arg --mcp-config", "arg --strict-mcp-config",
					"arg --model", "arg test-model", "arg Tidy the build directory.", "env CLAUDE_CONFIG_DIR=" + filepath.Join(runDir, "claude"),
					"env ANTHROPIC_BASE_URL=" + modelURL, "env IS_SANDBOX=1"},
				"codex": {"arg exec", "arg --skip-git-repo-check", `arg model_providers.airlock.base_url="` + modelURL + `"`, `arg approval_policy="never"`,
					"arg features.shell_tool=false", `arg mcp_servers.airlock.command="` + filepath.Join(bin, "airlock") + `"`, "arg Tidy the build directory.",
					"env CODEX_HOME=" + filepath.Join(runDir, "codex")},
				"opencode": {"arg run", "arg --model", "arg openai/test-model", "arg Tidy the build directory.",
					"env OPENCODE_CONFIG=" + filepath.Join(runDir, "opencode.json")},
			}[kind]
			wants = append(wants, "env HOME="+filepath.Join(runDir, "home"), "env AIRLOCK_ASK_SOCKET=127.0.0.1:3129")
			for _, w := range wants {
				if !strings.Contains(string(rec), w+"\n") {
					t.Errorf("the agent was not started with %q:\n%s", w, rec)
				}
			}
			if _, err := os.Stat(runDir); !os.IsNotExist(err) {
				t.Errorf("the run's directory outlived the run: %v", err)
			}
			if got, _ := os.ReadFile(filepath.Join(ws, "key-"+kind)); string(got) != key {
				t.Errorf("the agent got the key %q, not the keyring's", got)
			}
			for _, w := range []string{"model API reached /v1/messages", "other host unreachable", "the key is [REDACTED", "the agent's home is writable",
				"another run's directory is hidden"} {
				if !strings.Contains(log, w) {
					t.Errorf("the run's log lacks %q", w)
				}
			}
			for _, w := range []string{key, "saw the user's claude settings", "model API unreachable", "SIBLING TRANSCRIPT", "LEAKED"} {
				if strings.Contains(log, w) {
					t.Errorf("the run's log has %q", w)
				}
			}
			// Its home and state are its own; the configuration Airlock wrote is not.
			for _, w := range map[string][]string{"claude": {"read-only claude-settings.json", "read-only mcp.json", "the agent's state is writable"},
				"codex": {"the agent's state is writable"}, "opencode": {"read-only opencode.json"}}[kind] {
				if !strings.Contains(log, w) {
					t.Errorf("the run's log lacks %q", w)
				}
			}
			if strings.Contains(log, "TAMPERED") {
				t.Errorf("ESCAPE: the agent rewrote the configuration Airlock wrote for it")
			}
			if kind == "claude" {
				for _, w := range []string{`"permissionDecision":"deny"`, "not at night", "agent resumed"} {
					if !strings.Contains(log, w) {
						t.Errorf("the run's log lacks %q: the answer did not resume the agent", w)
					}
				}
				if b, _ := os.ReadFile(filepath.Join(ws, "settings-copy.json")); !strings.Contains(string(b), "bypassPermissions") {
					t.Errorf("the run's settings: %s", b)
				}
			}
		})
	}
	in.t = t
	// `task edit --prompt-file` replaces the stored prompt; another flag alone keeps it.
	os.WriteFile(prompt, []byte("Only list the build directory.\n"), 0o644)
	if _, stderr, code := in.run("task", "edit", "nightly-claude", "--prompt-file", prompt); code != 0 {
		t.Fatalf("task edit: %s", stderr)
	}
	if _, stderr, code := in.run("task", "edit", "nightly-claude", "--model", "other-model"); code != 0 {
		t.Fatalf("task edit: %s", stderr)
	}
	shown := in.jsonIn(ws, "task", "show", "nightly-claude")
	if a := shown["agent"].(map[string]any); a["prompt"] != "Only list the build directory.\n" || a["model"] != "other-model" || a["api_base"] != modelURL {
		t.Errorf("after the edits the agent is %v", a)
	}
	// An agent that is not installed fails the run, saying how to install it.
	if _, stderr, code := in.run("task", "add", "--name", "missing", "--cwd", ws, "--agent", "codex", "--prompt-file", prompt,
		"--agent-bin", filepath.Join(base, "none", "codex"), "--api-key-secret", secret); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", "missing"); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _, _ := in.run("runs", "list", "--json", "--task", "missing")
		var runs []map[string]any
		json.Unmarshal([]byte(out), &runs)
		if len(runs) == 1 && runs[0]["status"] == "failed" {
			if r := fmt.Sprint(runs[0]["reason"]); !strings.Contains(r, "npm i -g @openai/codex") {
				t.Errorf("the failed run does not say how to install Codex: %s", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never failed: %s", out)
		}
	}
	if otherHits.Load() != 0 || modelHits.Load() != 3 {
		t.Errorf("the model API saw %d requests (want 3), the other host %d (want 0)", modelHits.Load(), otherHits.Load())
	}
	for f, content := range userFiles {
		if b, _ := os.ReadFile(f); string(b) != content {
			t.Errorf("the user's %s changed: %s", f, b)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(home, ".claude")); len(entries) != 1 {
		t.Errorf("something was written in the user's ~/.claude: %v", entries)
	}
	// The key is in no file of Airlock's state: database, logs.
	filepath.WalkDir(in.home, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), key) {
				t.Errorf("the API key is written in %s", p)
			}
		}
		return nil
	})
}
