package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/internal/vartmp"
)

// hookAnswer is the part of a PreToolUse answer the tests read.
type hookAnswer struct {
	Decision string `json:"permissionDecision"`
	Reason   string `json:"permissionDecisionReason"`
}

// claudeEvent is a Claude Code hook event as Claude Code sends it on stdin.
func claudeEvent(session, event, tool, input, callID, cwd string) string {
	return fmt.Sprintf(`{"session_id":%q,"cwd":%q,"permission_mode":"default","hook_event_name":%q,"tool_name":%q,"tool_input":%s,"tool_use_id":%q}`,
		session, cwd, event, tool, input, callID)
}

// hook runs `airlock hook claude args...` with event on stdin, through a shell as Claude
// Code runs its command hooks; agent, when set, is the program standing in for Claude
// Code that runs that shell (its argument vector is what the hook reads).
func (in *instance) hook(event, agent string, args ...string) hookAnswer {
	in.t.Helper()
	line := in.bin + " hook claude " + strings.Join(args, " ")
	c := in.cmd()
	c.Path, c.Args = "/bin/sh", []string{"sh", "-c", line}
	if agent != "" {
		c.Path, c.Args = agent, []string{agent, "-p", "fix the build"}
	}
	c.Env = append(c.Env, "HOOK="+line)
	c.Stdin = strings.NewReader(event)
	out, err := c.Output()
	if err != nil {
		in.t.Fatalf("hook: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) == "" {
		return hookAnswer{}
	}
	var v struct {
		Out hookAnswer `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		in.t.Fatalf("hook printed %q: %v", out, err)
	}
	return v.Out
}

// auditRows are `airlock audit --json`'s rows.
func (in *instance) auditRows() []map[string]any {
	in.t.Helper()
	out, stderr, code := in.run("audit", "--json")
	if code != 0 {
		in.t.Fatalf("audit: %s", stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		in.t.Fatalf("audit --json printed %q: %v", out, err)
	}
	return rows
}

// auditByCall is `airlock audit --json`'s rows, by the call id of each.
func (in *instance) auditByCall() map[string]map[string]any {
	in.t.Helper()
	by := map[string]map[string]any{}
	for _, r := range in.auditRows() {
		if id, _ := r["call_id"].(string); id != "" {
			by[id] = r
		}
	}
	return by
}

// watch starts `airlock approvals watch`, a person following the approvals at a
// terminal, and returns its output lines once it follows them.
func (in *instance) watch() <-chan string {
	in.t.Helper()
	c := in.cmd("approvals", "watch")
	out, err := c.StdoutPipe()
	if err != nil {
		in.t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		in.t.Fatal(err)
	}
	in.t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	lines := make(chan string, 64)
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "Watching for requests that need you") {
		in.t.Fatalf("approvals watch began with %q", sc.Text())
	}
	go func() {
		defer close(lines)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

// TestHookHandsOverAndTheAuditSaysWhatRan: with nothing in Airlock to answer (a daemon,
// no window, nobody watching), the real hook hands a P1 call to Claude Code's own prompt
// at once instead of waiting out --wait; the audit says it was handed over, and then,
// from PostToolUse and PostToolUseFailure, that it ran or failed. An outcome reported
// from another session marks nothing.
func TestHookHandsOverAndTheAuditSaysWhatRan(t *testing.T) {
	in := newInstance(t)
	in.startDaemon()
	in.bin = withAgent
	ws := t.TempDir()
	for _, id := range []string{"tu-ran", "tu-failed", "tu-other"} {
		got := in.hook(claudeEvent("s1", "PreToolUse", "Bash", `{"command":"touch `+id+`"}`, id, ws), "", "--wait", "60s")
		if got.Decision != "ask" || !strings.Contains(got.Reason, "nothing can answer in Airlock now") ||
			!strings.Contains(got.Reason, "handed over") || !strings.Contains(got.Reason, "Claude Code asks you instead") {
			t.Fatalf("%s: the hook answered %+v, want ask at once, handed over because nothing can answer", id, got)
		}
	}
	in.hook(claudeEvent("s1", "PostToolUse", "Bash", `{"command":"touch tu-ran"}`, "tu-ran", ws), "")
	in.hook(strings.Replace(claudeEvent("s1", "PostToolUseFailure", "Bash", `{"command":"touch tu-failed"}`, "tu-failed", ws),
		`"tool_use_id"`, `"error":"exit status 1: permission denied","tool_use_id"`, 1), "")
	in.hook(claudeEvent("another-session", "PostToolUse", "Bash", `{"command":"touch tu-other"}`, "tu-other", ws), "")

	rows := in.auditByCall()
	for id, want := range map[string]string{"tu-ran": "ran", "tu-failed": "failed", "tu-other": ""} {
		r := rows[id]
		if r == nil {
			t.Fatalf("no audit row for %s: %v", id, rows)
		}
		if r["verdict"] != "ask" || r["answered_by"] != "handed-over" || r["session"] != "claude:s1" {
			t.Errorf("%s: the audit row does not say it was handed over: %v", id, r)
		}
		if got, _ := r["ran"].(string); got != want {
			t.Errorf("%s: the audit says ran %q, want %q: %v", id, got, want, r)
		}
	}
	if e, _ := rows["tu-failed"]["ran_error"].(string); !strings.Contains(e, "permission denied") {
		t.Errorf("the failed call's error is not in the audit: %v", rows["tu-failed"])
	}
	out, _, _ := in.run("audit", "--tool", "bash")
	for _, want := range []string{"RAN", "handed-over", "failed: exit status 1: permission denied", "touch tu-ran"} {
		if !strings.Contains(out, want) {
			t.Errorf("airlock audit lacks %q:\n%s", want, out)
		}
	}
}

// TestHookWaitsForAWatcherAndDeniesHeadless: while a person follows the approvals at a
// terminal (`airlock approvals watch`) the hook waits for them, and their deny reaches
// Claude Code. Under claude -p, where Claude Code has no prompt, nothing is handed over:
// with nobody watching the hook denies at once, and with a watcher who does not answer
// the request expires at --wait; both say so to the model and in the audit. airlock
// status says whether anything follows the approvals.
func TestHookWaitsForAWatcherAndDeniesHeadless(t *testing.T) {
	in := newInstance(t)
	in.startDaemon()
	in.bin = withAgent
	ws := t.TempDir()
	claude := filepath.Join(ws, "claude") // stands in for Claude Code run as `claude -p PROMPT`
	os.WriteFile(claude, []byte("#!/bin/sh\n/bin/sh -c \"$HOOK\"\n"), 0o755)

	got := in.hook(claudeEvent("s2", "PreToolUse", "Bash", `{"command":"touch a"}`, "tu-headless", ws), claude, "--wait", "60s")
	if got.Decision != "deny" || !strings.Contains(got.Reason, "nobody can answer now") || strings.Contains(got.Reason, "Claude Code asks you") {
		t.Errorf("headless with nobody watching: %+v, want deny at once saying nobody can answer", got)
	}

	if st, _ := in.status(); st["attended"] != false {
		t.Errorf("status says attended %v with nothing watching", st["attended"])
	}
	lines := in.watch()
	if st, _ := in.status(); st["attended"] != true {
		t.Errorf("status says attended %v while airlock approvals watch runs", st["attended"])
	}
	done := make(chan hookAnswer, 1)
	go func() {
		done <- in.hook(claudeEvent("s2", "PreToolUse", "Bash", `{"command":"touch b"}`, "tu-watched", ws), "", "--wait", "60s")
	}()
	pending := in.waitPending(1)
	id := pending[0]["id"].(string)
	for seen := false; !seen; {
		select {
		case line := <-lines:
			seen = strings.HasPrefix(line, id)
		case <-time.After(20 * time.Second):
			t.Fatalf("approvals watch never showed %s", id)
		}
	}
	if _, stderr, code := in.run("approvals", "deny", id, "--reason", "not now"); code != 0 {
		t.Fatalf("deny: %s", stderr)
	}
	if got := <-done; got.Decision != "deny" || !strings.Contains(got.Reason, "not now") {
		t.Errorf("with a watcher: %+v, want the person's deny", got)
	}

	got = in.hook(claudeEvent("s2", "PreToolUse", "Bash", `{"command":"touch c"}`, "tu-expired", ws), claude, "--wait", "1s")
	if got.Decision != "deny" || !strings.Contains(got.Reason, "expired") || !strings.Contains(got.Reason, "expired unanswered") {
		t.Errorf("headless, watched, unanswered: %+v, want deny saying it expired unanswered", got)
	}
	rows := in.auditByCall()
	for call, by := range map[string]string{"tu-headless": "unattended", "tu-watched": "", "tu-expired": "expired"} {
		r := rows[call]
		if r == nil || r["verdict"] != "deny" {
			t.Errorf("%s: audit row %v, want a deny", call, r)
			continue
		}
		if call == "tu-watched" {
			by = "api" // the CLI without proof of a person
		}
		if r["answered_by"] != by {
			t.Errorf("%s: answered_by %v, want %q", call, r["answered_by"], by)
		}
	}
}

// agentWorkspace is a workspace for a scheduled run's agent, under /var/tmp (inside the
// sandbox /tmp is its own): airlock and airlock-agent in its bin/, a build/ directory
// for the agent to be refused to delete.
func agentWorkspace(t *testing.T, prefix string) string {
	t.Helper()
	ws := vartmp.Dir(t, prefix)
	bin := filepath.Join(ws, "bin")
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	os.MkdirAll(bin, 0o755)
	for _, name := range []string{"airlock", "airlock-agent"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(withAgent), name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(bin, name), b, 0o755)
	}
	return ws
}

// succeededRunLog waits for task's one run to succeed and returns its log.
func (in *instance) succeededRunLog(task string) string {
	in.t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // a run in the micro-VM boots it first
	for {
		out, _, _ := in.run("runs", "list", "--json", "--task", task)
		var runs []map[string]any
		json.Unmarshal([]byte(out), &runs)
		if len(runs) == 1 && runs[0]["status"] == "succeeded" {
			log, _, _ := in.run("runs", "logs", fmt.Sprint(runs[0]["id"]))
			in.t.Logf("run log:\n%s", log)
			return log
		}
		if time.Now().After(deadline) {
			in.t.Fatalf("the run never ended: %s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRunQuestionExpiresAtTheHoldDeadline: the hook inside a scheduled run's sandbox
// (no --wait) waits for the person until the task's hold deadline; nobody answering, the
// request expires: the agent is told it expired unanswered and what to do, the run goes
// on, and the audit says expired. A call that ran is marked so, as the run's.
func TestRunQuestionExpiresAtTheHoldDeadline(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	in := newInstance(t)
	ws := agentWorkspace(t, "airlock-hook-expire-")
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), fmt.Sprintf("[workspace]\nroots = [%q]\n", ws))
	in.startDaemon()
	read := `{"file_path":"` + filepath.Join(ws, "agent.sh") + `"}`
	script := fmt.Sprintf("printf '%%s' '%s' | bin/airlock hook claude; echo\nprintf '%%s' '%s' | bin/airlock hook claude\nprintf '%%s' '%s' | bin/airlock hook claude\necho done\n",
		claudeEvent("c", "PreToolUse", "Bash", `{"command":"rm -rf build"}`, "tu-run", ws),
		claudeEvent("c", "PreToolUse", "Read", read, "tu-read", ws), claudeEvent("c", "PostToolUse", "Read", read, "tu-read", ws))
	os.WriteFile(filepath.Join(ws, "agent.sh"), []byte(script), 0o644)
	if _, stderr, code := in.run("task", "add", "--name", "agent", "--cwd", ws, "--hold-deadline", "3s", "--", "sh", "agent.sh"); code != 0 {
		t.Fatalf("task add: %s", stderr)
	}
	if _, stderr, code := in.run("task", "run-now", "agent"); code != 0 {
		t.Fatalf("run-now: %s", stderr)
	}
	if p := in.waitPending(1); p[0]["deadline"] == nil {
		t.Errorf("the run's request has no deadline: %v", p[0])
	}
	log := in.succeededRunLog("agent")
	for _, want := range []string{`"permissionDecision":"deny"`, "expired: nobody answered in Airlock within 3s", "expired unanswered", "done"} {
		if !strings.Contains(log, want) {
			t.Errorf("the run's log lacks %q", want)
		}
	}
	rows := in.auditByCall()
	if r := rows["tu-run"]; r == nil || r["verdict"] != "deny" || r["answered_by"] != "expired" || r["run"] == "" {
		t.Errorf("the audit row of the run's request does not say it expired: %v", r)
	}
	// Through the run's ask-only channel the outcome is the run's too, and marks its row.
	if r := rows["tu-read"]; r == nil || r["verdict"] != "allow" || r["ran"] != "ran" || r["run"] != rows["tu-run"]["run"] {
		t.Errorf("the run's read is not marked as ran: %v", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "build")); err != nil {
		t.Error("the directory is gone")
	}
}

// TestHookWaitsUnattendedWhenConfigured: with [approvals] wait_unattended = true the hook
// waits out --wait although nothing can answer, then hands the question over; the audit
// says so.
func TestHookWaitsUnattendedWhenConfigured(t *testing.T) {
	in := newInstance(t)
	in.writeFile(filepath.Join(in.home, "config", "config.toml"), "[approvals]\nwait_unattended = true\n")
	in.startDaemon()
	in.bin = withAgent
	ws := t.TempDir()
	got := in.hook(claudeEvent("s3", "PreToolUse", "Bash", `{"command":"touch a"}`, "tu-waited", ws), "", "--wait", "1s")
	if got.Decision != "ask" || !strings.Contains(got.Reason, "nobody answered in Airlock within 1s") || !strings.Contains(got.Reason, "handed over") {
		t.Errorf("the hook answered %+v, want ask after waiting 1s", got)
	}
	if r := in.auditByCall()["tu-waited"]; r == nil || r["answered_by"] != "handed-over" {
		t.Errorf("audit row %v, want handed over", r)
	}
}
