package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	ws, err := os.MkdirTemp("/var/tmp", "airlock-hook-run-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	bin := filepath.Join(ws, "bin")
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	os.MkdirAll(bin, 0o755)
	for _, name := range []string{"airlock", "airlock-agent"} { // inside the sandbox /tmp is its own
		b, err := os.ReadFile(filepath.Join(filepath.Dir(withAgent), name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(bin, name), b, 0o755)
	}
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("notes\n"), 0o644)
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), fmt.Sprintf("[workspace]\nroots = [%q]\n", ws))
	in.startDaemon()

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
	if _, stderr, code := in.run("task", "add", "--name", "agent", "--cwd", ws, "--", "sh", "agent.sh"); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", "agent"); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	pending := in.waitPending(1)
	req := pending[0]["request"].(map[string]any)
	ctx := req["context"].(map[string]any)
	if req["tool"] != "bash" || ctx["task"] != "agent" || ctx["run"] == nil || ctx["session"] != nil {
		t.Errorf("the pending request is not the run's: %v", req)
	}
	if _, stderr, code := in.run("approvals", "deny", pending[0]["id"].(string), "--reason", "not at night"); code != 0 {
		t.Fatalf("deny: %s", stderr)
	}
	deadline := time.Now().Add(30 * time.Second)
	var log string
	for {
		out, _, _ := in.run("runs", "list", "--json", "--task", "agent")
		var runs []map[string]any
		json.Unmarshal([]byte(out), &runs)
		if len(runs) == 1 && runs[0]["status"] == "succeeded" {
			log, _, _ = in.run("runs", "logs", fmt.Sprint(runs[0]["id"]))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never ended: %s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("run log:\n%s", log)
	for _, want := range []string{"socket 127.0.0.1:3129", "core socket hidden", `"permissionDecision":"allow"`, `"permissionDecision":"deny"`, "not at night"} {
		if !strings.Contains(log, want) {
			t.Errorf("the run's log lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "build")); err != nil {
		t.Errorf("the workspace directory is gone: %v", err)
	}
}
